// Dev-only: pi-ai 1.0.3's first call in a fresh Node process, for benchmarks/first_request_bench.py.
//
// Usage: node first_call.mjs case.json   (case: { model, context, options, env })
// Prints one JSON line: { startMs, cpuMs, importMs, readMs, buildMs, buildCpuMs, length }.
// startMs / cpuMs: wall and process CPU (user + system, every thread) from the process start to
// the moment the body reaches the capturing fetch, module loading and reading the context file
// included: what a user's first call costs. buildMs / buildCpuMs: the streamSimple call to the
// captured body alone (the in-process first call, nothing warmed). The fetch answers 400 so
// nothing leaves the machine.
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";

for (const level of ["log", "info", "debug", "warn"]) console[level] = (...args) => console.error(...args);

const cpu = () => { const { user, system } = process.cpuUsage(); return (user + system) / 1000; };
const imported = performance.now();
const { streamSimple } = await import("@earendil-works/pi-ai/compat");
const afterImport = performance.now();
const testCase = JSON.parse(readFileSync(process.argv[2], "utf8"));
const afterRead = performance.now();
for (const [k, v] of Object.entries(testCase.env ?? {})) process.env[k] = v;

let captured;
const seen = new Promise((resolve) => { captured = resolve; });
const fetch = async (_input, init = {}) => {
  const body = init.body;
  captured({ at: performance.now(), cpu: cpu(), length: typeof body === "string" ? body.length : 0 });
  return new Response('{"error":{"message":"bench capture"}}', {
    status: 400, headers: { "content-type": "application/json" },
  });
};
globalThis.fetch = fetch; // the Google adapters only use the global fetch
const buildStart = performance.now();
const buildCpu = cpu();
const stream = streamSimple(testCase.model, testCase.context, { ...testCase.options, maxRetries: 0, fetch });
const result = Promise.resolve(stream.result()).catch(() => undefined);
const first = await Promise.race([seen, result.then(() => null)]);
if (!first) {
  process.stderr.write("no request captured\n");
  process.exit(1);
}
process.stdout.write(JSON.stringify({
  startMs: first.at,
  cpuMs: first.cpu,
  importMs: afterImport - imported,
  readMs: afterRead - afterImport,
  buildMs: first.at - buildStart,
  buildCpuMs: first.cpu - buildCpu,
  length: first.length,
}) + "\n");
process.exit(0);
