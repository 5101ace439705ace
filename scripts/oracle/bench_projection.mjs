// Dev-only: time pi-ai 1.0.3 building a request body, for benchmarks/projection_bench.py.
//
// Usage: node bench_projection.mjs runs.json > times.json
// runs.json: { repeat, runs: [{ api, model: ModelObject, options, env, contexts: { "<size>": Context } }] }
// Output: [{ api, size, ms, times, length }] (or { api, size, error }): ms = best of `repeat` warm
// runs, times = every warm run's ms, length = the captured body's length, so the caller can check
// both sides built the same request.
//
// Timed: from the streamSimple call to the moment the request body reaches the (capturing)
// fetch, i.e. option resolution, message conversion and JSON.stringify inside pi-ai and its SDK.
// The fetch answers 400 so nothing leaves the machine; the failed stream is drained untimed.
// Bedrock's SDK takes no fetch: a middleware records the serialized request just before the
// HTTP handler, as capture.mjs does.
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { BedrockRuntimeClient } from "@aws-sdk/client-bedrock-runtime";
import { streamSimple } from "@earendil-works/pi-ai/compat";

for (const level of ["log", "info", "debug", "warn"]) console[level] = (...args) => console.error(...args);

let onCaptured = null;
const bedrockSend = BedrockRuntimeClient.prototype.send;
BedrockRuntimeClient.prototype.send = function (command, ...rest) {
  this.middlewareStack.add((next) => async (args) => {
    const body = args.request.body;
    onCaptured?.(typeof body === "string" ? body.length : body?.length ?? 0);
    throw new Error("bench capture");
  }, { step: "deserialize", name: "benchCapture", priority: "low" });
  return bedrockSend.call(this, command, ...rest);
};

const fetch = async (_input, init = {}) => {
  const body = init.body;
  onCaptured?.(typeof body === "string" ? body.length : 0);
  return new Response('{"error":{"message":"bench capture"}}', {
    status: 400, headers: { "content-type": "application/json" },
  });
};

async function once(model, context, options) {
  let captured;
  const seen = new Promise((resolve) => { captured = resolve; });
  onCaptured = (length) => captured({ at: performance.now(), length });
  const start = performance.now();
  const stream = streamSimple(model, context, { ...options, maxRetries: 0, fetch });
  const result = Promise.resolve(stream.result()).catch(() => undefined);
  const first = await Promise.race([seen, result.then(() => null)]);
  await result;
  onCaptured = null;
  if (!first) {
    const message = await stream.result();
    throw new Error(`no request captured: ${JSON.stringify(message?.errorMessage ?? message).slice(0, 400)}`);
  }
  return { ms: first.at - start, length: first.length };
}

const { repeat, runs } = JSON.parse(readFileSync(process.argv[2], "utf8"));
const globalFetch = globalThis.fetch;
globalThis.fetch = fetch; // the Google adapters only use the global fetch
const out = [];
for (const run of runs) {
  const saved = {};
  for (const [k, v] of Object.entries(run.env ?? {})) { saved[k] = process.env[k]; process.env[k] = v; }
  try {
    for (const [size, context] of Object.entries(run.contexts)) {
      try {
        const { length } = await once(run.model, context, run.options); // warm
        const times = [];
        for (let i = 0; i < repeat; i++) times.push((await once(run.model, context, run.options)).ms);
        out.push({ api: run.api, size: Number(size), ms: Math.min(...times), times, length });
      } catch (error) {
        out.push({ api: run.api, size: Number(size), error: String(error?.stack ?? error) });
      }
    }
  } finally {
    for (const [k, v] of Object.entries(saved)) { if (v === undefined) delete process.env[k]; else process.env[k] = v; }
  }
}
globalThis.fetch = globalFetch;
process.stdout.write(JSON.stringify(out) + "\n");
