// What pi-ai's parseStreamingJson makes of every prefix of a few tool-argument documents
// (dev-only oracle; output committed as tests/fixtures/wire/partial_json.json).
//   PI_AI_DIST=/path/to/@earendil-works/pi-ai/dist node scripts/oracle/partial_json_cases.mjs
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const { parseStreamingJson } = await import(path.join(process.env.PI_AI_DIST, "utils/json-parse.js"));
const docs = [
	'{"path": "src/main.py", "content": "line 1\\nline \\"2\\"\\t\\u00e9\\\\ end", "n": -12.5e3, "ok": true, "none": null}',
	'{"edits": [{"old": "a", "new": "b"}, {"old": "c\\\\d", "new": ""}], "dry": false, "count": 0}',
	'{"query": "caf\\u00e9 \\ud83d\\ude00", "limit": [1, 2.5, -3], "nested": {"deep": {"x": [true, null]}}}',
	'[1, "two", {"three": 3}]',
];
const extra = ['{"a": tr', '{"a": nu', '{"a": -', '{"a": 1.', '{"a": 1e', '{"a"', '{"a":', '{"a": "x\\', '{"a": "x\\u00', "  ", "nonsense", '{"raw": "tab\there"}', '{"bad": "\\q"}', "{'single': 1}"];
const inputs = [];
for (const doc of docs) for (let i = 0; i <= doc.length; i++) inputs.push(doc.slice(0, i));
inputs.push(...extra);
const cases = inputs.map((input) => ({ input, output: parseStreamingJson(input) }));
fs.writeFileSync(path.join(root, "tests/fixtures/wire/partial_json.json"), JSON.stringify(cases) + "\n");
console.log(`wrote ${cases.length} cases`);
