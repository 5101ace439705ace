// Dev-only oracle: ask the real pi-ai 1.0.3 what it would send, without sending it.
//
// Usage: node capture.mjs cases.json > captured.json
// cases.json: [{ "name", "model": "provider/id" | ModelObject, "context": {systemPrompt?, messages, tools?},
//                "options": {sessionId?, reasoning?, cacheRetention?, maxTokens?, temperature?, headers?} }]
// Output: [{ "name", "model", "context", "options", "request": {method, url, headers} | null,
//            "body": <JSON body pi-ai built>, "bodyText": <the exact bytes> }]
//
// A capturing fetch records the outgoing request and answers 400 so nothing leaves the machine;
// onPayload records the body for adapters whose SDK does not take a custom fetch; for Bedrock a
// middleware on the AWS SDK client records the serialized, authenticated request instead (the
// Converse wire body differs from the onPayload object: modelId moves to the URL, blobs become
// base64, members follow the service schema order).
import { readFileSync } from "node:fs";
import { BedrockRuntimeClient } from "@aws-sdk/client-bedrock-runtime";
import { getModel, streamSimple } from "@earendil-works/pi-ai/compat";

let bedrockRequest = null;
const bedrockSend = BedrockRuntimeClient.prototype.send;
BedrockRuntimeClient.prototype.send = function (command, ...rest) {
  // The deserialize step runs after serialization, endpoint resolution and auth, just before
  // the HTTP handler: what we record is exactly what would go on the wire.
  this.middlewareStack.add((next) => async (args) => {
    const r = args.request;
    const port = r.port ? `:${r.port}` : "";
    bedrockRequest = {
      method: r.method,
      url: `${r.protocol}//${r.hostname}${port}${r.path}`,
      headers: headersToObject(r.headers),
      rawBody: typeof r.body === "string" ? r.body : Buffer.from(r.body).toString("utf8"),
    };
    throw new Error("oracle capture");
  }, { step: "deserialize", name: "oracleCapture", priority: "low" });
  return bedrockSend.call(this, command, ...rest);
};

const FAKE_KEY = "sk-oracle-test-key";

// SDKs may log to stdout (e.g. @google/genai's Vertex notices); stdout carries the fixture JSON.
for (const level of ["log", "info", "debug"]) console[level] = (...args) => console.error(...args);

// Vertex with Application Default Credentials: the access token is looked up (network I/O) at
// dispatch, not part of the request projection. Stub the lookup so no credential file or
// metadata server is touched; the captured request then shows everything but that token.
try {
  const { GoogleAuth } = await import("google-auth-library");
  GoogleAuth.prototype.getRequestHeaders = async () => new Headers();
} catch { /* not installed: Vertex ADC cases fail loudly instead */ }

function resolveModel(spec) {
  if (typeof spec !== "string") return spec;
  const slash = spec.indexOf("/");
  const model = getModel(spec.slice(0, slash), spec.slice(slash + 1));
  if (!model) throw new Error(`unknown model ${spec}`);
  return model;
}

function headersToObject(headers) {
  const out = {};
  if (!headers) return out;
  if (typeof headers.forEach === "function") headers.forEach((v, k) => { out[k.toLowerCase()] = v; });
  else for (const [k, v] of Object.entries(headers)) out[k.toLowerCase()] = String(v);
  return out;
}

async function capture(testCase) {
  const model = resolveModel(testCase.model);
  let request = null;
  let payload;
  bedrockRequest = null;
  const fetch = async (input, init = {}) => {
    const url = typeof input === "string" ? input : input.url ?? String(input);
    let body = init.body;
    if (body && typeof body !== "string") body = Buffer.from(await new Response(body).arrayBuffer()).toString();
    request = { method: init.method ?? "GET", url, headers: headersToObject(init.headers), rawBody: body };
    return new Response(JSON.stringify({ error: { message: "oracle capture" } }), {
      status: 400, headers: { "content-type": "application/json" },
    });
  };
  const options = {
    apiKey: FAKE_KEY,
    maxRetries: 0,
    ...(testCase.options ?? {}),
    fetch,
    onPayload: (p) => { payload = JSON.parse(JSON.stringify(p)); return undefined; },
  };
  const env = testCase.env ?? {};
  const saved = {};
  for (const [k, v] of Object.entries(env)) { saved[k] = process.env[k]; process.env[k] = v; }
  // The Google adapters refuse a custom fetch unless it is the global one (their SDK calls the
  // global fetch), so the capturing fetch also stands in for globalThis.fetch during the call.
  const globalFetch = globalThis.fetch;
  globalThis.fetch = fetch;
  try {
    const s = streamSimple(model, testCase.context, options);
    await s.result();
  } finally {
    globalThis.fetch = globalFetch;
    for (const [k, v] of Object.entries(saved)) { if (v === undefined) delete process.env[k]; else process.env[k] = v; }
  }
  if (bedrockRequest) request = bedrockRequest;
  // The wire bytes are the truth where the SDK let us see them; onPayload otherwise.
  let body = payload;
  let bodyText = payload === undefined ? null : JSON.stringify(payload);
  if (request?.rawBody) {
    try { body = JSON.parse(request.rawBody); bodyText = request.rawBody; } catch { /* keep onPayload */ }
  }
  if (request) delete request.rawBody;
  return {
    name: testCase.name,
    model,
    context: testCase.context,
    options: testCase.options ?? {},
    ...(testCase.env ? { env: testCase.env } : {}),
    ...(testCase.meta ? { meta: testCase.meta } : {}),
    request,
    body,
    bodyText,
  };
}

const cases = JSON.parse(readFileSync(process.argv[2], "utf8"));
const results = [];
for (const c of cases) {
  try { results.push(await capture(c)); }
  catch (error) { results.push({ name: c.name, error: String(error?.stack ?? error) }); }
}
process.stdout.write(JSON.stringify(results, null, 1) + "\n");
