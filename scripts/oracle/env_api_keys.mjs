// Which environment variables pi-ai reads a provider's key from, in its order
// (dev-only oracle; output committed as tests/fixtures/credentials/pi_ai_env_api_keys.json).
//   PI_AI_DIST=/path/to/@earendil-works/pi-ai/dist node scripts/oracle/env_api_keys.mjs
//
// The provider names are scanned from env-api-keys.js and the model catalog; the variables
// themselves come from pi-ai's own findEnvKeys, called with an environment in which every
// name is set, so the committed order is pi-ai's behaviour, not a reading of its source.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const dist = process.env.PI_AI_DIST;
const { findEnvKeys, getEnvApiKey } = await import(path.join(dist, "env-api-keys.js"));
const source = fs.readFileSync(path.join(dist, "env-api-keys.js"), "utf8");
const candidates = new Set(["anthropic", "github-copilot", "amazon-bedrock", "google-vertex"]);
for (const match of source.matchAll(/^\s+"?([a-z0-9-]+)"?: "[A-Z0-9_]+",$/gm)) candidates.add(match[1]);
const catalog = JSON.parse(fs.readFileSync(path.join(root, "desktop/pi/catalog/data/pi_catalog.json"), "utf8"));
for (const model of catalog.models ?? []) candidates.add(model.provider);
const everything = new Proxy({}, { get: (_target, name) => (typeof name === "string" ? `value-of-${name}` : undefined) });
const providers = {};
for (const provider of [...candidates].sort()) {
	const names = findEnvKeys(provider, everything);
	if (!names) continue;
	// The variable getEnvApiKey actually uses as the key when all are set (pi-ai skips a bearer token).
	const used = getEnvApiKey(provider, everything);
	providers[provider] = { names, key: names.find((name) => `value-of-${name}` === used) ?? null };
}
const out = { package: "@earendil-works/pi-ai@1.0.3", providers };
fs.writeFileSync(path.join(root, "tests/fixtures/credentials/pi_ai_env_api_keys.json"), JSON.stringify(out, null, 1) + "\n");
console.log(`wrote ${Object.keys(providers).length} providers`);
