// Runs pi-ai 1.0.3's own Bedrock adapter (and the AWS SDK's event-stream reader) over recorded
// bodies (dev-only oracle).
//   PI_AI_DIST=/path/to/@earendil-works/pi-ai/dist node scripts/oracle/bedrock_streams.mjs
// Reads tests/fixtures/wire/bedrock_streams.json, serves each body from a local HTTP/1.1 server
// as application/vnd.amazon.eventstream, and writes tests/fixtures/wire/bedrock_pi_ai_results.json.
// AWS_BEDROCK_SKIP_AUTH signs with dummy keys, so no credential is read or needed.
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const dist = process.env.PI_AI_DIST;
if (!dist) throw new Error("Set PI_AI_DIST to the dist directory of @earendil-works/pi-ai 1.0.3");
const { normalizeContext } = await import(path.join(dist, "utils/transcript.js"));
const mod = await import(path.join(dist, "api/bedrock-converse-stream.js"));
const cases = JSON.parse(fs.readFileSync(path.join(root, "tests/fixtures/wire/bedrock_streams.json"), "utf8"));
const byName = new Map(cases.map((c) => [c.name, c]));

const server = http.createServer((req, res) => {
	req.resume();
	req.on("end", () => {
		const found = byName.get(decodeURIComponent(req.url.split("/")[2]));
		if (!found) {
			res.writeHead(404);
			res.end();
			return;
		}
		res.writeHead(200, { "content-type": "application/vnd.amazon.eventstream" });
		res.end(Buffer.from(found.body, "base64"));
	});
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const port = server.address().port;
const env = { AWS_BEDROCK_SKIP_AUTH: "1", AWS_BEDROCK_FORCE_HTTP1: "1", AWS_REGION: "us-east-1" };

const results = {};
for (const c of cases) {
	const model = {
		id: c.model, name: c.model, api: c.api, provider: c.provider,
		baseUrl: `http://127.0.0.1:${port}/case/${encodeURIComponent(c.name)}`,
		input: ["text"], reasoning: false, cost: c.cost, contextWindow: 200000, maxTokens: 8192,
	};
	const context = normalizeContext({ systemPrompt: "s", messages: [{ role: "user", content: "hi", timestamp: 0 }] });
	const stream = mod.stream(model, context, { env, maxRetries: 0 });
	const events = [];
	for await (const event of stream) events.push(event.type);
	const message = await stream.result();
	results[c.name] = { events, message: JSON.parse(JSON.stringify(message)) };
}
server.close();
fs.writeFileSync(
	path.join(root, "tests/fixtures/wire/bedrock_pi_ai_results.json"),
	JSON.stringify(results, null, 2) + "\n",
);
console.log(`wrote ${Object.keys(results).length} results`);
