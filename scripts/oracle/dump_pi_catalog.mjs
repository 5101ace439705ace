// Dev-only: dump pi-ai's published chat model catalog to desktop/pi/catalog/data/pi_catalog.json.
//
// The Pi catalog is the only source of the five transcript transport flags (design M1), so the app
// ships a byte-for-byte snapshot of what the pinned pi-ai publishes: every chat model of every
// built-in provider, each object exactly as pi-ai hands it to its request projections (no fields
// renamed, dropped or defaulted). Regenerate after bumping the version in package.json:
//
//   cd scripts/oracle && npm install && node dump_pi_catalog.mjs
//
// Never commit node_modules or package-lock.json.

import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import {
	getBuiltinModelDataGeneratedAt,
	getBuiltinModels,
	getBuiltinProviders,
} from "@earendil-works/pi-ai/providers/all";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "..", "..", "desktop", "pi", "catalog", "data", "pi_catalog.json");

// The package exports no ./package.json, so read it from where npm installed it.
const pkgPath = join(dirname(fileURLToPath(import.meta.resolve("@earendil-works/pi-ai"))), "..", "package.json");
const pkg = JSON.parse(readFileSync(pkgPath, "utf8"));

const models = [];
for (const provider of getBuiltinProviders()) {
	for (const model of getBuiltinModels(provider)) {
		if (model.type !== undefined && model.type !== "chat") continue;
		if (model.provider !== provider) {
			throw new Error(`model ${model.id} is listed under ${provider} but says provider ${model.provider}`);
		}
		// A JSON round trip drops undefined values exactly as JSON.stringify would on the wire.
		models.push(JSON.parse(JSON.stringify(model)));
	}
}

const generatedAtMs = getBuiltinModelDataGeneratedAt();
const snapshot = {
	format: "pi-desktop/pi-catalog",
	v: 1,
	source: { package: pkg.name, version: pkg.version },
	generatedAt: generatedAtMs === undefined ? null : new Date(generatedAtMs).toISOString(),
	models,
};
// One model a line: a start reads only the lines of its route's provider (the app decodes the
// rest only when something walks every model, design D6), and a regenerated file diffs by model.
const { models: listed, ...head } = snapshot;
const text = `${JSON.stringify(head).slice(0, -1)},"models":[\n${listed.map((m) => JSON.stringify(m)).join(",\n")}\n]}\n`;
writeFileSync(out, text);
console.log(`wrote ${models.length} chat models from ${pkg.name}@${pkg.version} to ${out}`);
