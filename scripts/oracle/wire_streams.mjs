// Runs pi-ai 1.0.3's own provider adapters over recorded SSE streams (dev-only oracle).
//   PI_AI_DIST=/path/to/@earendil-works/pi-ai/dist node scripts/oracle/wire_streams.mjs
// Reads tests/fixtures/wire/streams.json, serves each stream from a local HTTP server,
// and writes what pi-ai made of it to tests/fixtures/wire/pi_ai_results.json.
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const dist = process.env.PI_AI_DIST;
if (!dist) throw new Error("Set PI_AI_DIST to the dist directory of @earendil-works/pi-ai 1.0.3");
const { normalizeContext } = await import(path.join(dist, "utils/transcript.js"));
const cases = JSON.parse(fs.readFileSync(path.join(root, "tests/fixtures/wire/streams.json"), "utf8"));
const byName = new Map(cases.map((c) => [c.name, c]));

const server = http.createServer((req, res) => {
	req.resume();
	req.on("end", () => {
		const name = decodeURIComponent(req.url.split("/")[2]);
		const found = byName.get(name);
		if (!found) {
			res.writeHead(404);
			res.end();
			return;
		}
		res.writeHead(200, { "content-type": "text/event-stream" });
		res.end(found.sse);
	});
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const port = server.address().port;

const fakeJwt = ["e30", Buffer.from(JSON.stringify({ "https://api.openai.com/auth": { chatgpt_account_id: "acc" } })).toString("base64url"), "sig"].join(".");
const results = {};
for (const c of cases) {
	const mod = await import(path.join(dist, `api/${c.api}.js`));
	const base = `http://127.0.0.1:${port}/case/${encodeURIComponent(c.name)}`;
	const model = {
		id: c.model, name: c.model, api: c.api, provider: c.provider, baseUrl: base,
		input: ["text"], reasoning: false, cost: c.cost, contextWindow: 200000, maxTokens: 8192,
	};
	const context = normalizeContext({ systemPrompt: "s", messages: [{ role: "user", content: "hi", timestamp: 0 }] });
	const apiKey = c.api === "openai-codex-responses" ? fakeJwt : "sk-test";
	const stream = mod.stream(model, context, { apiKey, transport: "sse", maxRetries: 0 });
	const events = [];
	for await (const event of stream) events.push(event.type);
	const message = await stream.result();
	results[c.name] = { events, message: JSON.parse(JSON.stringify(message)) };
}
server.close();
fs.writeFileSync(path.join(root, "tests/fixtures/wire/pi_ai_results.json"), JSON.stringify(results, null, 2) + "\n");
console.log(`wrote ${Object.keys(results).length} results`);
