// Adds to tests/fixtures/wire/partial_json_diff.json what the npm partial-json 0.1.7 parser
// (partial-json's parse(text, Allow.ALL)) and pi-ai's parseStreamingJson make of each input.
// Dev only; run from the repo root after partial_json_inputs.py:
//   PARTIAL_JSON=/path/to/node_modules/partial-json/dist/index.js \
//   PI_AI_DIST=/path/to/node_modules/@earendil-works/pi-ai/dist node scripts/oracle/partial_json_diff.mjs
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const file = path.join(root, "tests/fixtures/wire/partial_json_diff.json");
const { parse, Allow } = await import(process.env.PARTIAL_JSON);
const { parseStreamingJson } = await import(path.join(process.env.PI_AI_DIST, "utils/json-parse.js"));

// JSON cannot hold NaN, the infinities or -0: tag them.
function tag(value) {
	if (typeof value === "number") {
		if (Number.isNaN(value)) return { $number: "NaN" };
		if (!Number.isFinite(value)) return { $number: value > 0 ? "Infinity" : "-Infinity" };
		if (Object.is(value, -0)) return { $number: "-0" };
		return value;
	}
	if (Array.isArray(value)) return value.map(tag);
	if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, tag(v)]));
	return value;
}

const cases = JSON.parse(fs.readFileSync(file, "utf8"));
for (const entry of cases) {
	try {
		entry.partial = { value: tag(parse(entry.input, Allow.ALL)) };
	} catch (error) {
		entry.partial = { error: error.constructor.name };
	}
	entry.streaming = tag(parseStreamingJson(entry.input));
}
fs.writeFileSync(file, JSON.stringify(cases) + "\n");
console.log(`wrote ${cases.length} cases`);
