// Dev-only: writes cases/openai_completions.json and cases/mistral.json (the oracle inputs for the
// Chat Completions family). Model objects are taken from pi-ai's catalog so "patched" bindings
// (e.g. deepseek-flash with supportsMidConvoSystemMessages) differ from the published ones only
// by the flags each case names.
//
// Usage: node gen-chat-cases.mjs && bash regen.sh
import { writeFileSync } from "node:fs";
import { getModel } from "@earendil-works/pi-ai/compat";

const model = (provider, id, patch = {}) => {
  const m = structuredClone(getModel(provider, id));
  if (!m) throw new Error(`unknown model ${provider}/${id}`);
  const { compat, ...rest } = patch;
  Object.assign(m, rest);
  if (compat) m.compat = { ...(m.compat ?? {}), ...compat };
  return m;
};

// ---- transcript building blocks ---------------------------------------------------------
let clock = 1_760_000_000_000;
const ts = () => (clock += 1000);
const usage = (input = 0, output = 0) => ({
  input, output, cacheRead: 0, cacheWrite: 0, totalTokens: input + output,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
});
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

const tools = {
  read: { name: "read", description: "Read a file", parameters: { type: "object", properties: { path: { type: "string" }, offset: { type: "integer" } }, required: ["path"] } },
  bash: { name: "bash", description: "Run a shell command", parameters: { type: "object", properties: { command: { type: "string" }, timeout: { type: "number" } }, required: ["command"] } },
  edit: { name: "edit", description: "Edit a file", parameters: { type: "object", properties: { path: { type: "string" }, old: { type: "string" }, new: { type: "string" } }, required: ["path", "old", "new"] } },
  edit2: { name: "edit", description: "Edit a file (v2: exact match, multiple hunks)", parameters: { type: "object", properties: { path: { type: "string" }, edits: { type: "array", items: { type: "object", properties: { old: { type: "string" }, new: { type: "string" } }, required: ["old", "new"] } } }, required: ["path", "edits"] } },
  grep: { name: "grep", description: "Search files", parameters: { type: "object", properties: { pattern: { type: "string" }, glob: { type: "string" } }, required: ["pattern"] } },
  web: { name: "web_fetch", description: "Fetch a URL", parameters: { type: "object", properties: { url: { type: "string" } }, required: ["url"] } },
  strictPrefer: { name: "todo", description: "Update the todo list", parameters: { type: "object", properties: { items: { type: "array", items: { type: "string" } }, note: { type: "string" } }, required: ["items"] }, constrainedSampling: { type: "json_schema", strict: "prefer" } },
  strictUnsupported: { name: "query", description: "Query with a union", parameters: { type: "object", properties: { q: { oneOf: [{ type: "string" }, { type: "number" }] } }, required: ["q"] }, constrainedSampling: { type: "json_schema", strict: "prefer" } },
  grammar: { name: "apply_patch", description: "Apply a patch", parameters: { type: "object", properties: { input: { type: "string" } }, required: ["input"] }, constrainedSampling: { type: "grammar", variants: { openai_lark: "start: /.+/s" } } },
};

const sys = (content, extra = {}) => ({ role: "system", content, ...extra, timestamp: ts() });
const user = (text) => ({ role: "user", content: text, timestamp: ts() });
const userBlocks = (...blocks) => ({ role: "user", content: blocks, timestamp: ts() });
const text = (t) => ({ type: "text", text: t });
const image = () => ({ type: "image", data: PNG, mimeType: "image/png" });
const call = (id, name, args, extra = {}) => ({ type: "toolCall", id, name, arguments: args, ...extra });
const think = (t, sig) => (sig === undefined ? { type: "thinking", thinking: t } : { type: "thinking", thinking: t, thinkingSignature: sig });
const asst = (m, content, extra = {}) => ({
  role: "assistant", content, api: m.api, provider: m.provider, model: m.id,
  usage: extra.usage ?? usage(), stopReason: extra.stopReason ?? (content.some((b) => b.type === "toolCall") ? "toolUse" : "stop"),
  ...(extra.errorMessage ? { errorMessage: extra.errorMessage } : {}), timestamp: ts(),
});
const result = (id, name, content, isError = false) => ({ role: "toolResult", toolCallId: id, toolName: name, content, isError, timestamp: ts() });

const foreign = { api: "anthropic-messages", provider: "anthropic", id: "claude-sonnet-4-5" };
const responsesSrc = { api: "openai-responses", provider: "openai", id: "gpt-5" };

/** A coding session of `turns` user turns with tool calls, reasoning replay and system updates. */
function longHistory(m, turns, { updates = true, toolChanges = false, withUsage = false, reasoningSig = "reasoning_content" } = {}) {
  const messages = [];
  for (let t = 0; t < turns; t++) {
    messages.push(user(`Step ${t}: look at src/module_${t}.py and fix the failing test ${"é".repeat(t % 3)}`));
    const id = `call_${t.toString(36)}_${"x".repeat(t % 5)}`;
    messages.push(asst(m, [think(`Turn ${t}: I should read the file first.`, reasoningSig), text(t % 4 === 0 ? "" : `Reading module ${t}.`), call(id, "read", { path: `src/module_${t}.py`, offset: t * 10 })], withUsage ? { usage: usage(1000 + t * 50, 40) } : {}));
    if (updates && t % 7 === 3) messages.push(sys("", { sections: { git: `branch: feature-${t}\nstatus: ${t} files changed` } }));
    if (toolChanges && t % 11 === 5) messages.push(sys("", { toolsAdded: [t % 2 ? tools.grep : tools.web] }));
    messages.push(result(id, "read", [text(`def f_${t}():\n    return ${t}\n`)], t % 9 === 8));
    messages.push(asst(m, [text(`Fixed module ${t}.`)], withUsage ? { usage: usage(1100 + t * 50, 20) } : {}));
  }
  return messages;
}

// ---- openai-completions ------------------------------------------------------------------
const dsFlash = model("deepseek", "deepseek-flash");
const dsFlashFlagged = model("deepseek", "deepseek-flash", { compat: { supportsMidConvoSystemMessages: true } });
const dsPro = model("deepseek", "deepseek-v4-pro");
const kimi = model("moonshotai", "kimi-k3");
const orDs = model("openrouter", "deepseek/deepseek-v4-flash");
const orAnthropic = model("openrouter", "anthropic/claude-fable-5:batch");
const gpt41 = {
  id: "gpt-4.1", name: "GPT-4.1 (chat completions)", api: "openai-completions", provider: "openai",
  baseUrl: "https://api.openai.com/v1", reasoning: false, input: ["text", "image"],
  cost: { input: 2, output: 8, cacheRead: 0.5, cacheWrite: 0 }, contextWindow: 1047576, maxTokens: 32768,
};
const o4 = { ...gpt41, id: "o4-mini", name: "o4-mini (chat completions)", reasoning: true, maxTokens: 100000, contextWindow: 200000 };

const base = (extra = {}) => ({ systemPrompt: "You are a careful coding agent.", tools: [tools.read, tools.bash], ...extra });

const completions = [];
const add = (name, m, context, options = {}, env) => completions.push({ name, model: m, context, options, ...(env ? { env } : {}) });

// DeepSeek flash, published (unflagged): everything folds into the leading system message.
add("deepseek-flash/basic-reasoning-high", dsFlash, base({ messages: [user("List the files.")] }), { sessionId: "sess-ds-1", reasoning: "high" });
add("deepseek-flash/unflagged-section-updates-fold", dsFlash, base({ messages: [
  user("Start."), asst(dsFlash, [think("ok", "reasoning_content"), text("Started.")]),
  sys("", { sections: { git: "branch: main", todo: "1. fix tests" } }),
  user("Continue."), asst(dsFlash, [text("Continuing.")]),
  sys("Also: prefer small commits.", { sections: { git: "branch: feature", todo: null } }),
  user("Go on."),
] }), { sessionId: "sess-ds-2" });
add("deepseek-flash/unflagged-tool-changes-full-list", dsFlash, base({ messages: [
  user("Hi."), asst(dsFlash, [call("call_1", "read", { path: "a.py" })]), result("call_1", "read", [text("print(1)")]),
  sys("", { toolsAdded: [tools.grep] }), asst(dsFlash, [text("Read it.")]),
  sys("", { toolsRemoved: [{ name: "bash" }], toolsAdded: [tools.edit2] }), user("Now edit."),
] }), { reasoning: "low" });
add("deepseek-flash/reasoning-replay-thinking-off", dsFlash, base({ messages: [
  user("Why is the test failing?"),
  asst(dsFlash, [think("The assertion compares floats.", "reasoning_content"), think("   ", "reasoning_content"), text("Let me check."), call("call_a", "bash", { command: "pytest -x", timeout: 30.5 })]),
  result("call_a", "bash", [text("1 failed")]),
  asst(dsFlash, [think("Precision issue.", "reasoning_content"), text("Use pytest.approx.")]),
  user("Thanks."),
] }), {});
add("deepseek-flash/long-history-unflagged", dsFlash, base({ messages: longHistory(dsFlash, 50, { toolChanges: true }) }), { sessionId: "sess-ds-long", reasoning: "high" });

// DeepSeek flash with the product's catalog patch: system updates stay in place.
add("deepseek-flash-flagged/section-updates-in-place", dsFlashFlagged, base({ messages: [
  user("Start."), asst(dsFlashFlagged, [think("ok", "reasoning_content"), text("Started.")]),
  sys("", { sections: { git: "branch: main", todo: "1. fix tests" } }),
  user("Continue."), asst(dsFlashFlagged, [text("Continuing.")]),
  sys("Also: prefer small commits.", { sections: { git: "branch: feature", todo: null } }),
  user("Go on."),
] }), { sessionId: "sess-dsf-1", reasoning: "high" });
add("deepseek-flash-flagged/tool-additions-request-level", dsFlashFlagged, base({ messages: [
  user("Hi."), asst(dsFlashFlagged, [call("call_1", "read", { path: "a.py" })]), result("call_1", "read", [text("print(1)")]),
  asst(dsFlashFlagged, [text("Read it.")]),
  sys("", { toolsAdded: [tools.grep, tools.web] }), user("Search for TODOs."),
] }), { sessionId: "sess-dsf-2" });
add("deepseek-flash-flagged/tool-removal-and-redefinition", dsFlashFlagged, base({ tools: [tools.read, tools.bash, tools.edit], messages: [
  user("Hi."), asst(dsFlashFlagged, [text("Hello.")]),
  sys("Editing is now hunk based.", { toolsRemoved: [{ name: "edit" }, { name: "bash" }], toolsAdded: [tools.edit2] }),
  user("Edit a.py."),
] }), { reasoning: "max" });
add("deepseek-flash-flagged/update-between-call-and-result", dsFlashFlagged, base({ messages: [
  user("Run the tests."), asst(dsFlashFlagged, [think("run them", "reasoning_content"), call("call_t", "bash", { command: "pytest" }), call("call_u", "read", { path: "README.md" })]),
  sys("", { sections: { clock: "It is now 10:05." } }),
  result("call_t", "bash", [text("ok")]),
  asst(dsFlashFlagged, [text("Tests pass.")]),
  user("Good."),
] }), {});
add("deepseek-flash-flagged/long-history-usage-reasoning-replay", dsFlashFlagged, base({ messages: longHistory(dsFlashFlagged, 50, { toolChanges: true, withUsage: true }) }), { sessionId: "sess-dsf-long", reasoning: "high" });
add("deepseek-flash-flagged/long-history-tool-only-additions", dsFlashFlagged, base({ messages: longHistory(dsFlashFlagged, 30, { updates: false, toolChanges: true }) }), { sessionId: "sess-dsf-long2" });
add("deepseek-flash-flagged/images-user-and-tool", dsFlashFlagged, base({ messages: [
  userBlocks(text("What is in this screenshot?"), image(), text("")),
  asst(dsFlashFlagged, [call("call_s", "read", { path: "shot.png" })]),
  result("call_s", "read", [text("binary image"), image()]),
  result("call_extra", "read", [image()]),
  user("And now?"),
] }), {});
add("deepseek-flash-flagged/cross-model-and-failed-turns", dsFlashFlagged, base({ messages: [
  user("Plan the refactor."),
  asst(foreign, [think("Anthropic private reasoning", "sig-anthropic-abc"), text("Plan: split module.")]),
  user("Do it."),
  asst(dsFlashFlagged, [text("Partial")], { stopReason: "aborted" }),
  asst(dsFlashFlagged, [text("")], { stopReason: "error", errorMessage: "overloaded" }),
  sys("", { sections: { mode: "careful" } }),
  user("Retry."),
] }), { cacheRetention: "none", sessionId: "sess-ignored" });
add("deepseek-flash-flagged/max-tokens-clamped-to-context", { ...dsFlashFlagged, contextWindow: 6000 }, base({ messages: [user("x".repeat(4000))] }), { maxTokens: 5000 });
add("deepseek-flash-flagged/temperature-and-tool-choice", dsFlashFlagged, base({ messages: [user("Read a.py")] }), { temperature: 0.3, toolChoice: "required", maxTokens: 2048 });

// deepseek-v4-pro is flagged in the published catalog; text-only input.
add("deepseek-v4-pro/images-on-text-only-and-updates", dsPro, base({ messages: [
  userBlocks(text("Look:"), image(), image()),
  asst(dsPro, [think("cannot see", "reasoning_content"), call("call_p", "read", { path: "x.png" })]),
  result("call_p", "read", [image()]),
  sys("Answer tersely.", { sections: { style: "terse" } }),
  user("Summary?"),
] }), { reasoning: "max", sessionId: "sess-pro" });
add("deepseek-v4-pro/reasoning-clamped-minimal", dsPro, base({ messages: [user("hi")] }), { reasoning: "minimal" });

// Kimi K3 accepts tool additions in place.
add("kimi-k3/tool-additions-in-place", kimi, base({ messages: [
  user("Hi."), asst(kimi, [think("greet", "reasoning_content"), text("Hello.")]),
  sys("", { toolsAdded: [tools.grep] }),
  user("Find TODOs."), asst(kimi, [call("call_g", "grep", { pattern: "TODO" })]), result("call_g", "grep", [text("a.py:1")]),
  sys("Web access granted.", { toolsAdded: [tools.web], sections: { net: "online" } }),
  user("Fetch the docs."),
] }), { reasoning: "high", sessionId: "sess-kimi" });
add("kimi-k3/removal-forces-full-list", kimi, base({ messages: [
  user("Hi."), asst(kimi, [text("Hello.")]),
  sys("", { toolsAdded: [tools.grep] }),
  user("Next."), asst(kimi, [text("ok")]),
  sys("", { toolsRemoved: [{ name: "bash" }] }),
  user("Go."),
] }), {});
add("kimi-k3/redefinition-forces-full-list", kimi, base({ tools: [tools.read, tools.edit], messages: [
  user("Hi."), asst(kimi, [text("Hello.")]),
  sys("", { toolsAdded: [tools.edit2] }),
  user("Edit."),
] }), { reasoning: "low" });
add("kimi-k3/no-leading-system-additions", kimi, { messages: [
  user("Hi."), asst(kimi, [text("Hello.")]),
  sys("You may now read files.", { toolsAdded: [tools.read] }),
  user("Read a.py."),
] }, { reasoning: "max" });

// OpenRouter relays.
add("openrouter/deepseek-v4-flash-affinity-and-folding", orDs, base({ messages: [
  user("Start."), asst(orDs, [think("thinking", "reasoning"), text("ok")]),
  sys("", { sections: { git: "main" } }), user("Next."),
] }), { sessionId: "sess-or-1" });
add("openrouter/deepseek-v4-flash-reasoning-details-replay", orDs, base({ messages: [
  user("Q1"),
  asst(orDs, [think("r1", JSON.stringify([{ type: "reasoning.text", text: "r1", signature: "sig1", format: "unknown", index: 0 }])), text("A1")]),
  user("Q2"),
  asst(orDs, [think("", "not-json"), call("call_e", "read", { path: "b" }, { thoughtSignature: JSON.stringify({ type: "reasoning.encrypted", id: "enc_1", data: "QUJD", format: "openai-responses-v1" }) })]),
  result("call_e", "read", [text("B")]),
  user("Q3"),
] }), { reasoning: "xhigh", sessionId: "sess-or-2" });
add("openrouter/anthropic-cache-control-long", orAnthropic, base({ messages: [
  user("First."), asst(orAnthropic, [text("One.")]),
  userBlocks(text("Second with image"), image()),
] }), { cacheRetention: "long", sessionId: "sess-or-3", reasoning: "medium" });
add("openrouter/routing-and-tool-history-without-tools", model("openrouter", "deepseek/deepseek-v4-flash", { compat: { openRouterRouting: { order: ["deepseek"], allow_fallbacks: false } } }), { messages: [
  user("Hi."), asst(orDs, [call("call_z", "read", { path: "z" })]), result("call_z", "read", [text("Z")]), user("ok"),
] }, { sessionId: "sess-or-4" });

// Other OpenAI-compatible dialects.
add("groq/llama-strict-tools-temperature", model("groq", "llama-3.3-70b-versatile"), base({ tools: [tools.read, tools.strictPrefer, tools.strictUnsupported], messages: [user("Plan.")] }), { temperature: 0.7, sessionId: "sess-groq" });
add("groq/gpt-oss-reasoning-medium", model("groq", "openai/gpt-oss-120b"), base({ messages: [user("Think.")] }), { reasoning: "medium" });
add("cerebras/gpt-oss-cross-provider-ids", model("cerebras", "gpt-oss-120b"), base({ messages: [
  user("Continue the session from another provider."),
  asst(responsesSrc, [call("call_abc|fc_0123456789abcdef0123456789abcdef0123456789+/=", "read", { path: "a" }), call("call_short|", "bash", { command: "ls" })]),
  result("call_abc|fc_0123456789abcdef0123456789abcdef0123456789+/=", "read", [text("A")]),
  result("call_short|", "bash", [text("")], true),
  user("Next."),
] }), { reasoning: "high" });
add("xai-style/base-url-detection", { ...gpt41, id: "grok-code", name: "Grok via completions", provider: "custom-xai", baseUrl: "https://api.x.ai/v1", reasoning: true }, base({ messages: [user("hi")] }), { reasoning: "high", sessionId: "sess-x" });
add("zai/glm-5.2-thinking-tool-stream", model("zai", "glm-5.2"), base({ messages: [user("Refactor."), asst(model("zai", "glm-5.2"), [think("plan", "reasoning_content"), text("Done.")]), user("More.")] }), { reasoning: "high" });
add("zai/glm-4.7-thinking-off", model("zai", "glm-4.7"), base({ messages: [user("hi")] }), {});
add("openai/gpt-4.1-completions-cache-key", gpt41, base({ messages: [
  user("Hi."),
  asst(responsesSrc, [call("call_" + "9".repeat(50), "read", { path: "a" })]),
  result("call_" + "9".repeat(50), "read", [text("A")]),
  user("Next."),
] }), { sessionId: "s".repeat(80), cacheRetention: "long", maxTokens: 1000 });
add("openai/o4-mini-developer-role", o4, base({ messages: [user("hi"), asst(o4, [text("hello")]), sys("", { sections: { x: "y" } }), user("bye")] }), { reasoning: "high", sessionId: "sess-o4" });
add("github-copilot/kimi-k3-headers", model("github-copilot", "kimi-k3"), base({ messages: [userBlocks(text("see"), image()), asst(model("github-copilot", "kimi-k3"), [call("c1", "read", { path: "p" })]), result("c1", "read", [text("P")])] }), {});
add("opencode-go/deepseek-v4-flash-session-header", model("opencode-go", "deepseek-v4-flash"), base({ messages: [user("hi"), asst(model("opencode-go", "deepseek-v4-flash"), [think("t", "reasoning"), text("a")]), user("again")] }), { sessionId: "sess-oc", reasoning: "low" });
add("qwen/enable-thinking", model("qwen-token-plan", "deepseek-v3.2"), base({ messages: [user("hi")] }), { reasoning: "medium" });
add("together/reasoning-enabled", model("together", "deepseek-ai/DeepSeek-V4-Pro-0813"), base({ messages: [user("hi")] }), { reasoning: "high" });
add("baseten/kimi-chat-template-args", model("baseten", "moonshotai/Kimi-K2.5"), base({ messages: [user("hi")] }), { reasoning: "high" });
add("nvidia/model-headers", model("nvidia", "deepseek-ai/deepseek-v4.1-flash"), base({ messages: [user("hi")] }), { headers: { "X-Trace": "t-1" } });
add("nvidia/null-header-removes-model-header", model("nvidia", "deepseek-ai/deepseek-v4.1-flash"), base({ messages: [user("hi")] }), { headers: { "nvcf-poll-seconds": null, "X-Title": "pi" }, reasoning: "high" });
add("openai/gpt-4.1-org-project-env", gpt41, base({ messages: [user("hi")] }), { sessionId: "sess-org", cacheRetention: "none" }, { OPENAI_ORG_ID: "org-test", OPENAI_PROJECT_ID: "proj-test" });
add("custom/quirks-bridge-name-thinking-text-budget", {
  id: "local-qwen", name: "vLLM local", api: "openai-completions", provider: "vllm", baseUrl: "http://localhost:8000/v1/",
  reasoning: true, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 32768, maxTokens: 8192,
  thinkingLevelMap: { off: "none", high: "deep" },
  samplingParams: { top_p: 0.9, temperature: 0.6 }, samplingParamsByThinkingLevel: { high: { top_k: 20 } },
  compat: { requiresToolResultName: true, requiresAssistantAfterToolResult: true, requiresThinkingAsText: true, supportsUsageInStreaming: false, thinkingTokenBudgetField: "thinking_budget", vllmPriority: 5, thinkingFormat: "chat-template", chatTemplateKwargs: { enable_thinking: { $var: "thinking.enabled" }, effort: { $var: "thinking.effort" }, budget: { $var: "thinking.budget" }, fixed: "yes", maybe: { omitWhenOff: true } }, supportsStrictMode: false },
}, base({ messages: [
  user("Go."), asst({ api: "openai-completions", provider: "vllm", id: "local-qwen" }, [think("a"), think("b"), text("Running."), call("c1", "bash", { command: "ls" })]),
  result("c1", "bash", [text("a.py"), image()]), user("Next."),
] }), { reasoning: "high", thinkingBudgets: { high: 4000 }, headers: { "x-custom": "1", Authorization: "Bearer override" } });
add("custom/grammar-tools", {
  ...gpt41, id: "gpt-5-chat", provider: "openai", reasoning: true, compat: { supportsOpenAIGrammarTools: true, supportsStrictMode: true },
}, base({ tools: [tools.read, tools.grammar, tools.strictPrefer], messages: [
  user("Patch it."), asst({ api: "openai-completions", provider: "openai", id: "gpt-5-chat" }, [call("call_p", "apply_patch", { input: "*** Begin Patch\n*** End Patch" }), call("call_q", "todo", { items: ["a"] })]),
  result("call_p", "apply_patch", [text("applied")]), result("call_q", "todo", [text("ok")]),
] }), { reasoning: "minimal", sessionId: "sess-g" }, { PI_CACHE_RETENTION: "long" });

// ---- mistral-conversations ---------------------------------------------------------------
clock = 1_760_100_000_000; // own clock: adding completions cases must not shift these inputs
const devstral = model("mistral", "devstral-latest");
const devstralFlagged = model("mistral", "devstral-latest", { compat: { supportsMidConvoSystemMessages: true } });
const large = model("mistral", "mistral-large-latest");
const medium = model("mistral", "mistral-medium-latest");
const magistral = model("mistral", "magistral-medium-latest");

const mistral = [];
const addM = (name, m, context, options = {}) => mistral.push({ name, model: m, context, options });

addM("devstral/basic-tools-session", devstral, base({ messages: [user("List files.")] }), { sessionId: "sess-m-1" });
addM("devstral/unflagged-updates-fold", devstral, base({ messages: [
  user("Start."), asst(devstral, [text("ok")]), sys("", { sections: { git: "main", todo: "x" } }),
  user("Next."), asst(devstral, [text("ok")]), sys("Be brief.", { sections: { todo: null } }), user("Go."),
] }), {});
addM("devstral-flagged/updates-in-place-and-tools-full-list", devstralFlagged, base({ messages: [
  user("Start."), asst(devstralFlagged, [text("ok")]), sys("", { sections: { git: "main" }, toolsAdded: [tools.grep] }),
  user("Next."), asst(devstralFlagged, [call("abcdefghi", "grep", { pattern: "x" })]),
  sys("", { sections: { clock: "10:05" } }), result("abcdefghi", "grep", [text("none")]),
  sys("", { toolsRemoved: [{ name: "bash" }], sections: { git: null } }), user("Go."),
] }), { sessionId: "sess-m-2" });
addM("devstral/foreign-tool-call-ids", devstral, base({ messages: [
  user("Continue."),
  asst(responsesSrc, [call("call_abc|fc_0123456789", "read", { path: "a" }), call("call_abd|fc_0123456789", "read", { path: "b" }), call("toolu_01ABCDEFGHIJ", "bash", { command: "ls" })]),
  result("call_abc|fc_0123456789", "read", [text("A")]), result("call_abd|fc_0123456789", "read", [text("B")]), result("toolu_01ABCDEFGHIJ", "bash", [text("")], true),
  user("Next."),
] }), {});
addM("devstral/images-on-text-only", devstral, base({ messages: [
  userBlocks(text("see"), image()), asst(devstral, [call("img000001", "read", { path: "a.png" })]),
  result("img000001", "read", [text("pixels"), image()]), result("img000002", "read", [image()], true), userBlocks(image()),
] }), {});
addM("mistral-large/images-supported", large, base({ messages: [
  userBlocks(text("see"), image()), asst(large, [call("img000001", "read", { path: "a.png" })]),
  result("img000001", "read", [image()]), user("ok"),
] }), { temperature: 0.2, maxTokens: 1000 });
addM("mistral-medium/reasoning-effort-and-thinking-history", medium, base({ messages: [
  user("Think."), asst(medium, [think("deep thoughts"), think("  "), text("Answer."), text(" ")]),
  asst(medium, [text("partial")], { stopReason: "aborted" }), user("Again."),
] }), { reasoning: "medium", sessionId: "sess-m-3" });
addM("mistral-medium/reasoning-off-none", medium, base({ messages: [user("hi")] }), {});
addM("magistral/prompt-mode-reasoning", magistral, base({ messages: [user("hi"), asst(foreign, [think("foreign thought", "sig"), text("x")]), user("more")] }), { reasoning: "high" });
addM("devstral/tool-choice-function-and-error-results", devstral, base({ messages: [
  user("Read."), asst(devstral, [call("AAAAAAAAA", "read", { path: "a" })]), result("AAAAAAAAA", "read", [text("  boom  ")], true), user("again"),
] }), { toolChoice: { type: "function", function: { name: "read" } } });
addM("devstral/tool-choice-any-cache-none", devstral, base({ messages: [user("go")] }), { toolChoice: "any", cacheRetention: "none", sessionId: "sess-none" });
addM("devstral/explicit-affinity-header", devstral, base({ messages: [user("go")] }), { sessionId: "sess-h", headers: { "X-Affinity": "mine", "x-extra": "1" } });
addM("devstral/long-history", devstral, base({ messages: longHistory(devstral, 50, { toolChanges: true, reasoningSig: undefined }) }), { sessionId: "sess-m-long" });
addM("devstral-flagged/long-history-in-place", devstralFlagged, base({ messages: longHistory(devstralFlagged, 50, { toolChanges: true, withUsage: true, reasoningSig: undefined }) }), { sessionId: "sess-m-long2" });
addM("mistral-small/strict-tools", model("mistral", "mistral-small-latest"), base({ tools: [tools.read, tools.strictPrefer, tools.strictUnsupported], messages: [user("plan")] }), { reasoning: "high" });

writeFileSync(new URL("./cases/openai_completions.json", import.meta.url), JSON.stringify(completions, null, 1) + "\n");
writeFileSync(new URL("./cases/mistral.json", import.meta.url), JSON.stringify(mistral, null, 1) + "\n");
console.log(`openai_completions: ${completions.length} cases; mistral: ${mistral.length} cases`);
