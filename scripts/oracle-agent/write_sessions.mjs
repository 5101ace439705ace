// Dev-only oracle: pi-coding-agent's OWN SessionManager writes the pi session fixtures, and pi
// itself says what context each branch gives the model and what pi-ai would send next.
//
// Usage (from this folder, after `npm install` and `bash fetch_legacy.sh`):
//   node write_sessions.mjs ../../tests/fixtures/pi_sessions
//
// Writes <out>/*.jsonl (session files) and <out>/expected.json:
//   { "<file>": { header, leaves: { "<leafId>" | "default": { agentMessages, llmMessages,
//                 thinkingLevel, model, entryIds, llmEntryIds } }, requests: [ { route, model,
//                 options, url, body, bodyText } ] } }
// v3 files come from @earendil-works/pi-coding-agent 1.0.3; v2 from @mariozechner 0.32.3, v1
// from @mariozechner 0.30.2 (the last releases that wrote those versions). Contexts are built
// by the 1.0.3 loader: loadEntriesFromFile, the in-memory migrations, buildSessionProjection,
// convertToLlm. Bodies come from pi-ai 1.0.3's streamSimple with a capturing fetch (nothing
// leaves the machine), called the way pi-agent-core calls it: normalizeContext({ messages }),
// sessionId = the session id, reasoning = the thinking level unless "off".
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { getModel, streamSimple } from "@earendil-works/pi-ai/compat";

const CORE = "./node_modules/@earendil-works/pi-coding-agent/dist/core/";
const sm = await import(CORE + "session-manager.js");
const { convertToLlm } = await import(CORE + "messages.js");

for (const level of ["log", "info", "debug"]) console[level] = (...args) => console.error(...args);

const out = resolve(process.argv[2] ?? "../../tests/fixtures/pi_sessions");
const work = mkdtempSync(join(tmpdir(), "pi-oracle-"));
const CWD = "/home/dev/projects/demo";
const T0 = Date.UTC(2026, 9, 1, 9, 0, 0);
let clock = 0;
const ts = () => T0 + 1000 * ++clock;

// --- message builders (pi-ai 1.0.3 shapes) ------------------------------------------------------

const TOOLS = {
  read: { name: "read", description: "Read a file", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } },
  bash: { name: "bash", description: "Run a shell command", parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] } },
  write: { name: "write", description: "Write a file", parameters: { type: "object", properties: { path: { type: "string" }, content: { type: "string" } }, required: ["path", "content"] } },
  ToolSearch: { name: "ToolSearch", description: "Find deferred tools", parameters: { type: "object", properties: { query: { type: "string" } }, required: ["query"] } },
};

function usage(input, output, cacheRead = 0, cacheWrite = 0) {
  return { input, output, cacheRead, cacheWrite, totalTokens: input + output + cacheRead + cacheWrite,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
}
const system = (fields) => ({ role: "system", content: "", ...fields, timestamp: ts() });
const user = (content) => ({ role: "user", content, timestamp: ts() });
function assistant(content, extra = {}) {
  const blocks = typeof content === "string" ? [{ type: "text", text: content }] : content;
  const calls = blocks.some((b) => b.type === "toolCall");
  return { role: "assistant", content: blocks, api: "anthropic-messages", provider: "anthropic",
    model: "claude-opus-5-5", usage: usage(1200 + clock, 40 + clock, clock * 100, 50),
    stopReason: calls ? "toolUse" : "stop", timestamp: ts(), ...extra };
}
const call = (id, name, args) => ({ type: "toolCall", id, name, arguments: args });
const result = (id, name, text, extra = {}) => ({ role: "toolResult", toolCallId: id, toolName: name,
  content: [{ type: "text", text }], isError: false, timestamp: ts(), ...extra });
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

function newManager(dir) {
  return sm.SessionManager.create(CWD, dir);
}

// --- v3: branches, labels, custom messages, bash, usage, model/thinking changes -----------------

function writeBranches(dir) {
  const m = newManager(dir);
  m.appendModelChange("anthropic", "claude-opus-5-5");
  m.appendThinkingLevelChange("high");
  m.appendMessage(system({ sections: { preamble: "You are pi, a coding agent.", cwd: `Current directory: ${CWD}` },
    toolsAdded: [TOOLS.read, TOOLS.bash] }));
  const u1 = m.appendMessage(user("List the files and read README.md"));
  m.appendMessage(assistant([{ type: "thinking", thinking: "Start with ls.", thinkingSignature: "c2lnLTE=" },
    call("call_1", "bash", { command: "ls" })]));
  m.appendMessage(result("call_1", "bash", "README.md\nsrc\n", { details: { exitCode: 0 } }));
  const a2 = m.appendMessage(assistant([call("call_2", "read", { path: "README.md" })]));
  m.appendMessage(result("call_2", "read", "# Demo\nA tiny project.\n"));
  m.appendMessage(assistant("The project is a tiny demo with a README and a src folder."));
  m.appendLabelChange(u1, "start");
  m.appendMessage({ role: "bashExecution", command: "git status", output: "nothing to commit", exitCode: 0,
    cancelled: false, truncated: false, timestamp: ts() });
  m.appendMessage({ role: "bashExecution", command: "make secret", output: "hidden", exitCode: 2,
    cancelled: false, truncated: true, fullOutputPath: "/tmp/out.txt", excludeFromContext: true, timestamp: ts() });
  m.appendMessage({ role: "bashExecution", command: "false", output: "", exitCode: 1, cancelled: false,
    truncated: true, fullOutputPath: "/tmp/full.txt", timestamp: ts() });
  m.appendCustomEntry("demo-extension", { count: 1 });
  m.appendCustomMessageEntry("demo-extension", "Injected context: the build is green.", true, { source: "ci" });
  m.appendCustomMessageEntry("demo-images", [{ type: "text", text: "Screenshot:" }, { type: "image", data: PNG, mimeType: "image/png" }], false);
  m.appendMessage(user([{ type: "text", text: "What does this image show?" }, { type: "image", data: PNG, mimeType: "image/png" }]));
  m.appendMessage(assistant("A single pixel."));
  m.appendSessionInfo("Demo branches");
  m.appendUsage("cache_warm", "anthropic", "claude-opus-5-5", usage(0, 0, 5000, 0));
  const firstLeaf = m.getLeafId();
  // Go back to the first tool call and continue differently, with a summary of the left branch.
  m.branchWithSummary(a2, "Explored the README; the project is a tiny demo.", { readFiles: ["README.md"], modifiedFiles: [] });
  m.appendModelChange("openai", "gpt-5.5");
  m.appendThinkingLevelChange("medium");
  m.appendMessage(system({ sections: { cwd: `Current directory: ${CWD}/src`, skills: "<skills>\n- lint\n</skills>" },
    toolsAdded: [TOOLS.write], toolsRemoved: [{ name: "bash" }] }));
  m.appendMessage(user("Now write a CHANGELOG."));
  m.appendMessage(assistant([call("call_3", "write", { path: "CHANGELOG.md", content: "# Changes\n" })],
    { api: "openai-responses", provider: "openai", model: "gpt-5.5" }));
  m.appendMessage(result("call_3", "write", "Wrote CHANGELOG.md"));
  m.appendMessage(assistant("Done.", { api: "openai-responses", provider: "openai", model: "gpt-5.5" }));
  // A third branch from the root's first user message, without a summary.
  m.branch(u1);
  m.appendMessage(assistant("I cannot run tools right now.", { stopReason: "error", errorMessage: "overloaded", content: [] }));
  m.appendMessage(user("Try again"));
  m.appendMessage(assistant("Sure."));
  // Return to the second branch so the file's last entry is its leaf.
  m.branch(firstLeaf);
  m.appendLabelChange(u1, "first question");
  return m;
}

// --- v3: compaction with checkpoint, kept range, context edits, second compaction ---------------

function writeCompaction(dir) {
  const m = newManager(dir);
  m.appendModelChange("anthropic", "claude-opus-5-5");
  m.appendMessage(system({ sections: { preamble: "You are pi.", agents: "AGENTS.md: use tabs." }, toolsAdded: [TOOLS.read, TOOLS.bash, TOOLS.ToolSearch] }));
  m.appendMessage(user("Step one"));
  m.appendMessage(assistant([call("call_s1", "ToolSearch", { query: "select:deploy" })]));
  m.appendMessage(result("call_s1", "ToolSearch", "Activated: deploy", { details: { activated: ["deploy"] } }));
  m.appendMessage(assistant("Step one done."));
  const keep = m.appendMessage(user("Step two: read main.py"));
  m.appendMessage(system({ sections: { agents: "AGENTS.md: use spaces." } }));
  m.appendMessage(assistant([call("call_r1", "read", { path: "main.py" })]));
  const big = m.appendMessage(result("call_r1", "read", "print('hello')\n".repeat(20)));
  m.appendMessage(assistant("main.py prints hello twenty times."));
  m.appendCompaction("Step one searched tools; step two read main.py.", keep, 4200, { readFiles: ["main.py"], modifiedFiles: [] });
  m.appendMessage(system({ sections: { agents: null, env: "OS: linux" }, toolsRemoved: [{ name: "ToolSearch" }] }));
  const u3 = m.appendMessage(user("Step three"));
  const a3 = m.appendMessage(assistant("Step three done, with a long explanation."));
  m.appendContextEdit(big, { content: "[main.py omitted: 20 lines]" });
  m.appendContextEdit(a3, { content: "Step three done." });
  m.appendContextEdit(a3, { content: [{ type: "text", text: "Step three done (edited twice)." }] });
  const cm = m.appendCustomMessageEntry("notes", "A note for the model.", false);
  m.appendContextEdit(cm, null);
  m.appendContextEdit(u3, { content: "Step 3" });
  const branchPoint = m.getLeafId();
  m.appendMessage(user("Step four"));
  const a4 = m.appendMessage(assistant("Step four done."));
  // Second compaction keeps from u3: the first compaction is inside the kept range? No: it is before u3,
  // so it is summarized; the kept range holds u3.. and a system message that must be dropped.
  m.appendCompaction("Steps one to three are done.", u3, 9000);
  m.appendMessage(user("Step five"));
  m.appendMessage(assistant("Step five done."));
  const mainLeaf = m.getLeafId();
  // A branch from before the second compaction: only the first compaction applies there.
  m.branch(branchPoint);
  m.appendMessage(user("Step four, other way"));
  m.appendMessage(assistant("Other way done."));
  // A retain-none compaction on that branch (firstKeptEntryId = its own id).
  m.appendCompaction("Everything so far, other way.", undefined, 3000);
  m.appendMessage(user("After retain-none"));
  m.appendMessage(assistant("Fresh start."));
  m.branch(mainLeaf);
  m.appendSessionInfo("Compaction demo");
  void a4;
  return m;
}

// --- v3: a compaction whose kept range includes an older compaction ------------------------------

function writeNestedCompaction(dir) {
  const m = newManager(dir);
  m.appendMessage(system({ content: "Base prompt.", toolsAdded: [TOOLS.read] }));
  const first = m.appendMessage(user("one"));
  m.appendMessage(assistant("one done"));
  m.appendCompaction("Summary A", first, 100);
  m.appendMessage(user("two"));
  m.appendMessage(assistant("two done"));
  // Keep from the first user message: the older compaction lies inside the kept range.
  m.appendCompaction("Summary B", first, 200);
  m.appendMessage(user("three"));
  m.appendMessage(assistant("three done"));
  return m;
}

// --- legacy writers ------------------------------------------------------------------------------

async function legacy(version) {
  const path = resolve(`legacy/${version}/package/dist/core/session-manager.js`);
  if (!existsSync(path)) throw new Error(`run fetch_legacy.sh first (missing ${path})`);
  return await import(path);
}

async function writeV2(dir) {
  const old = await legacy("0.32.3");
  const m = old.SessionManager.create(CWD, dir);
  m.appendModelChange("anthropic", "claude-opus-5-5");
  m.appendThinkingLevelChange("low");
  const u1 = m.appendMessage(user("Hello from v2"));
  m.appendMessage(assistant([call("c1", "read", { path: "a.txt" })]));
  m.appendMessage(result("c1", "read", "alpha"));
  m.appendMessage(assistant("a.txt says alpha."));
  m.appendMessage({ role: "hookMessage", customType: "old-hook", content: "Hook says hi.", display: true, timestamp: ts() });
  m.appendCustomMessageEntry("old-hook", [{ type: "text", text: "Hook context entry." }], false);
  const keep = m.appendMessage(user("Second question"));
  m.appendMessage(assistant("Second answer."));
  m.appendCompaction("The user said hello; a.txt says alpha.", keep, 1500);
  m.appendMessage(user("After compaction"));
  m.appendMessage(assistant("Still here."));
  m.appendLabelChange(u1, "hello");
  m.branchWithSummary(u1, "Tried reading a.txt.");
  m.appendMessage(user("A different path"));
  m.appendMessage(assistant("Different answer."));
  return m;
}

async function writeV1(dir) {
  const old = await legacy("0.30.2");
  const m = old.SessionManager.create(CWD, dir);
  m.saveModelChange("anthropic", "claude-opus-5-5");
  m.saveThinkingLevelChange("medium");
  m.saveMessage(user("Hello from v1"));
  m.saveMessage(assistant([call("c1", "bash", { command: "pwd" })]));
  m.saveMessage(result("c1", "bash", CWD));
  m.saveMessage(assistant("We are in the demo project."));
  m.saveMessage(user("Summarize please"));
  m.saveMessage(assistant("It is a demo."));
  // v1 compactions point at the first kept entry by its index in the file's parsed lines
  // (header at index 0): keep from "Summarize please" (line 8 -> index 7).
  m.saveCompaction({ type: "compaction", timestamp: new Date(ts()).toISOString(), summary: "Said hello; ran pwd.",
    firstKeptEntryIndex: 7, tokensBefore: 800 });
  m.saveMessage(user("After the v1 compaction"));
  m.saveMessage(assistant("Noted."));
  return m;
}

// --- pi's own view of each file ------------------------------------------------------------------

function leavesOf(entries) {
  const parents = new Set(entries.map((e) => e.parentId).filter(Boolean));
  return entries.filter((e) => !parents.has(e.id)).map((e) => e.id);
}

function contextFor(entries, leafId) {
  const projection = sm.buildSessionProjection(entries, leafId);
  const entryIds = projection.entries.flatMap((p) => p.messages.map(() => p.sourceEntry.id));
  const llmEntryIds = projection.entries.flatMap((p) => convertToLlm(p.messages).map(() => p.sourceEntry.id));
  return {
    agentMessages: projection.messages,
    llmMessages: convertToLlm(projection.messages),
    thinkingLevel: projection.thinkingLevel,
    model: projection.model,
    entryIds,
    llmEntryIds,
  };
}

const ROUTES = ["anthropic/claude-opus-5-5", "openai/gpt-5.5", "deepseek/deepseek-flash", "google/gemini-2.5-flash"];
const FAKE_KEY = "sk-oracle-test-key";

async function capture(route, messages, options) {
  const slash = route.indexOf("/");
  const model = getModel(route.slice(0, slash), route.slice(slash + 1));
  let request = null;
  let payload;
  const fetch = async (input, init = {}) => {
    const url = typeof input === "string" ? input : input.url ?? String(input);
    let body = init.body;
    if (body && typeof body !== "string") body = Buffer.from(await new Response(body).arrayBuffer()).toString();
    request = { url, rawBody: body };
    return new Response(JSON.stringify({ error: { message: "oracle capture" } }), { status: 400, headers: { "content-type": "application/json" } });
  };
  const globalFetch = globalThis.fetch;
  globalThis.fetch = fetch;
  try {
    const s = streamSimple(model, { messages }, { apiKey: FAKE_KEY, maxRetries: 0, ...options, fetch,
      onPayload: (p) => { payload = JSON.parse(JSON.stringify(p)); return undefined; } });
    await s.result();
  } finally {
    globalThis.fetch = globalFetch;
  }
  let bodyText = payload === undefined ? null : JSON.stringify(payload);
  let body = payload;
  if (request?.rawBody) { try { body = JSON.parse(request.rawBody); bodyText = request.rawBody; } catch { /* keep onPayload */ } }
  return { route, model, options, url: request?.url ?? null, body, bodyText };
}

async function describe(file, keyById) {
  const entries = sm.loadEntriesFromFile(file);
  const header = entries[0];
  sm.migrateSessionEntries(entries);
  const body = entries.filter((e) => e.type !== "session");
  const leaves = {};
  leaves.default = contextFor(body, undefined);
  if (keyById) for (const leaf of leavesOf(body)) leaves[leaf] = contextFor(body, leaf);
  // pi draws v1 ids at random on every load; Desktop's are stable, so only v2/v3 ids compare.
  if (!keyById) for (const leaf of Object.values(leaves)) { delete leaf.entryIds; delete leaf.llmEntryIds; }
  const { llmMessages, thinkingLevel } = leaves.default;
  const options = { sessionId: header.id, ...(thinkingLevel && thinkingLevel !== "off" ? { reasoning: thinkingLevel } : {}) };
  const requests = [];
  for (const route of ROUTES) requests.push(await capture(route, llmMessages, options));
  return { header, leaves, requests };
}

const writers = [
  ["v3_branches.jsonl", () => writeBranches(join(work, "a")), true],
  ["v3_compaction.jsonl", () => writeCompaction(join(work, "b")), true],
  ["v3_nested_compaction.jsonl", () => writeNestedCompaction(join(work, "c")), true],
  ["v2_tree.jsonl", () => writeV2(join(work, "d")), true],
  ["v1_linear.jsonl", () => writeV1(join(work, "e")), false],
];
const expected = {};
try {
  for (const [name, write, keyById] of writers) {
    const manager = await write();
    const file = manager.getSessionFile();
    const text = readFileSync(file, "utf8");
    writeFileSync(join(out, name), text);
    expected[name] = await describe(join(out, name), keyById);
    console.error(`wrote ${name} (${text.split("\n").length - 1} lines)`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
writeFileSync(join(out, "expected.json"), JSON.stringify(expected, null, 1) + "\n");
void readdirSync;
