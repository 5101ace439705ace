"""Projection benchmark (design P1, P7): time to build the next request for a long transcript.

For each API (one representative catalog model) and each transcript size, measures the time
to project the transcript and encode the body bytes, ``--repeat`` warm runs a round, and, when
Node and the oracle's ``node_modules`` are there, pi-ai 1.0.3 itself on the same transcripts in
the same run (``scripts/oracle/bench_projection.mjs``: a capturing ``fetch`` records the body;
timed from the ``streamSimple`` call to the captured body), a fresh Node process a round,
interleaved round by round with the Python side through ``_bench.compare``. Prints, per size,
min and median of both, the ratio (target <= 1.0) and the linearity of Python (time per message
at each size over the smallest; ~1.0 means linear).

Both sides build the whole request from scratch from decoded messages, warm on both sides (a
run first, uncounted, each round): what ``pi-desktop payload --context`` costs. It is not what the first
request of an open costs: that goes through the journal and the incremental projection, from a
fresh process, and ``first_request_bench.py`` measures it. The body sizes are compared so a
difference in what was built cannot hide.

Transcripts are synthetic but shaped like real sessions: user prompts, assistant text with
tool calls (and some thinking with the API's kind of signature), tool results with file-sized
output, and now and then a system section update or a tool addition.

Run: ``PYTHONPATH=. python benchmarks/projection_bench.py [--sizes 1000,10000,50000]
[--apis anthropic-messages,...] [--rounds 3] [--repeat 3] [--no-node]``.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import compare, report, wall_ms

from desktop.pi.catalog.catalog import bundled_pi
from desktop.pi.projection import RequestOptions, project
from desktop.pi.types import Message, Model

ROOT = Path(__file__).resolve().parent.parent
ORACLE = ROOT / "scripts" / "oracle"
NODE_SCRIPT = ORACLE / "bench_projection.mjs"

#: A ChatGPT-style access token whose JWT payload names an account (Codex needs one).
_CODEX_TOKEN = "h.{}.s".format(
    base64.urlsafe_b64encode(
        json.dumps({"https://api.openai.com/auth": {"chatgpt_account_id": "acct_bench"}}).encode()
    )
    .decode()
    .rstrip("=")
)

#: api -> (provider, model id, pi-ai options, environment)
ROUTES: dict[str, tuple[str, str, dict[str, Any], dict[str, str]]] = {
    "anthropic-messages": ("anthropic", "claude-opus-5", {"reasoning": "medium"}, {}),
    "openai-completions": ("deepseek", "deepseek-v4-pro", {"reasoning": "medium"}, {}),
    "openai-responses": ("openai", "gpt-5.5", {"reasoning": "medium"}, {}),
    "azure-openai-responses": (
        "azure",
        "gpt-5.5",
        {"reasoning": "medium"},
        {"AZURE_OPENAI_BASE_URL": "https://bench.openai.azure.com/openai/v1"},
    ),
    "openai-codex-responses": (
        "openai-codex",
        "gpt-5.5",
        {"reasoning": "medium", "apiKey": _CODEX_TOKEN},
        {},
    ),
    "mistral-conversations": ("mistral", "devstral-latest", {}, {}),
    "google-generative-ai": ("google", "gemini-2.5-flash", {"reasoning": "medium"}, {}),
    "google-vertex": ("google-vertex", "gemini-2.5-pro", {"reasoning": "medium"}, {}),
    "bedrock-converse-stream": (
        "amazon-bedrock",
        "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        {"reasoning": "medium"},
        {"AWS_REGION": "us-east-1"},
    ),
    "pi-messages": ("radius", "balanced", {"reasoning": "medium"}, {}),
}
BENCH_KEY = "sk-bench-key"
SESSION_ID = "bench-session-0001"

_WORDS = [
    "the",
    "module",
    "reads",
    "configuration",
    "from",
    "disk",
    "and",
    "validates",
    "each",
    "field",
    "before",
    "the",
    "server",
    "starts",
    "so",
    "a",
    "bad",
    "value",
    "fails",
    "early",
    "with",
    "a",
    "message",
    "that",
    "names",
    "the",
    "key",
    "and",
    "the",
    "file",
    "it",
    "came",
    "from",
    "while",
    "tests",
    "cover",
    "parsing",
    "defaults",
    "overrides",
    "and",
    "the",
    "error",
    "paths",
    "for",
    "missing",
    "or",
    "malformed",
    "entries",
]
_FILE_LINE = "    def handle(self, request: Request) -> Response:  # routes one request to its handler"


def _signature(api: str, rng: random.Random, n: int) -> str:
    """A thinking signature of the kind the API's own model would have produced."""
    if api in ("openai-responses", "azure-openai-responses", "openai-codex-responses"):
        item = {
            "type": "reasoning",
            "id": f"rs_{n:08x}",
            "summary": [],
            "encrypted_content": "gAAAA" + "x" * 120,
        }
        return json.dumps(item, separators=(",", ":"))
    if api == "openai-completions":
        return "reasoning_content"
    return base64.b64encode(rng.randbytes(96)).decode()


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words))


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "parameters": {"type": "object", "properties": properties, "required": required},
    }


BASE_TOOLS = [
    _tool("read", "Read a file", {"path": {"type": "string"}, "offset": {"type": "integer"}}, ["path"]),
    _tool(
        "write",
        "Write a file",
        {"path": {"type": "string"}, "content": {"type": "string"}},
        ["path", "content"],
    ),
    _tool(
        "edit",
        "Replace text in a file",
        {"path": {"type": "string"}, "old": {"type": "string"}, "new": {"type": "string"}},
        ["path", "old", "new"],
    ),
    _tool(
        "bash",
        "Run a shell command",
        {"command": {"type": "string"}, "timeout": {"type": "number"}},
        ["command"],
    ),
    _tool("grep", "Search files", {"pattern": {"type": "string"}, "path": {"type": "string"}}, ["pattern"]),
    _tool("ls", "List a directory", {"path": {"type": "string"}}, ["path"]),
]


def transcript(model: Model, size: int, seed: int = 7) -> list[Message]:
    """A deterministic session of ``size`` messages, produced by ``model`` itself."""
    rng = random.Random(seed)
    api, provider, model_id = model["api"], model["provider"], model["id"]
    ts = 1_700_000_000_000
    messages: list[dict[str, Any]] = [
        {
            "role": "system",
            "content": "You are a careful coding agent. Work in the repository; explain what you change.\n"
            + _sentence(rng, 120),
            "sections": {"environment": "cwd=/work/project\nos=linux", "skill:review": _sentence(rng, 60)},
            "toolsAdded": [dict(t) for t in BASE_TOOLS],
            "timestamp": ts,
        }
    ]
    turn = 0
    added = 0
    while len(messages) < size:
        turn += 1
        ts += 1000
        if turn % 25 == 0:
            update: dict[str, Any] = {
                "role": "system",
                "content": "",
                "sections": {"environment": f"cwd=/work/project\nbranch=feature-{turn}"},
                "timestamp": ts,
            }
            if turn % 100 == 0:
                added += 1
                update["toolsAdded"] = [
                    _tool(f"mcp_search_{added}", "Search the docs", {"query": {"type": "string"}}, ["query"])
                ]
            messages.append(update)
        messages.append({"role": "user", "content": _sentence(rng, rng.randint(8, 40)), "timestamp": ts})
        content: list[dict[str, Any]] = []
        if rng.random() < 0.3:
            content.append(
                {
                    "type": "thinking",
                    "thinking": _sentence(rng, 40),
                    "thinkingSignature": _signature(api, rng, turn),
                }
            )
        content.append({"type": "text", "text": _sentence(rng, rng.randint(10, 30))})
        calls = []
        for k in range(rng.choice((1, 1, 1, 2))):
            call_id = f"call_{turn}_{k}" if api != "mistral-conversations" else f"c{turn:07d}{k}"[:9]
            calls.append(
                {
                    "type": "toolCall",
                    "id": call_id,
                    "name": "read",
                    "arguments": {"path": f"src/m{turn}_{k}.py"},
                }
            )
        content.extend(calls)
        usage = {
            "input": 1000 + turn,
            "output": 80,
            "cacheRead": 900 + turn,
            "cacheWrite": 0,
            "totalTokens": 1980 + 2 * turn,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        }
        route = {"api": api, "provider": provider, "model": model_id, "usage": usage}
        messages.append(
            {"role": "assistant", "content": content, **route, "stopReason": "toolUse", "timestamp": ts}
        )
        for call in calls:
            lines = rng.randint(5, 40)
            messages.append(
                {
                    "role": "toolResult",
                    "toolCallId": call["id"],
                    "toolName": "read",
                    "content": [
                        {"type": "text", "text": "\n".join(f"{i}: {_FILE_LINE}" for i in range(lines))}
                    ],
                    "isError": rng.random() < 0.05,
                    "timestamp": ts,
                }
            )
        messages.append(
            {
                "role": "assistant",
                "content": [{"type": "text", "text": _sentence(rng, rng.randint(10, 50))}],
                **route,
                "stopReason": "stop",
                "timestamp": ts,
            }
        )
    # End on a user turn: that is when a request is built.
    del messages[size - 1 :]
    messages.append({"role": "user", "content": "Now run the tests.", "timestamp": ts + 1})
    return messages  # type: ignore[return-value]


def _catalog_model(provider: str, model_id: str) -> Model:
    for entry in bundled_pi().models:
        if entry["provider"] == provider and entry["id"] == model_id:
            return dict(entry)  # type: ignore[return-value]
    raise SystemExit(f"model {provider}/{model_id} is not in the bundled pi catalog")


def _options(pi_options: Mapping[str, Any], env: Mapping[str, str]) -> RequestOptions:
    return RequestOptions.from_pi({"apiKey": BENCH_KEY, "sessionId": SESSION_ID, **pi_options}, env=env)


def python_ms(model: Model, messages: list[Message], options: RequestOptions, repeat: int) -> list[float]:
    """``repeat`` warm runs (one more first, uncounted) of project + body bytes, each in ms."""
    project(model, messages, options).body_bytes  # noqa: B018 - warm
    return [wall_ms(lambda: project(model, messages, options).body_bytes) for _ in range(repeat)]


def node_unavailable() -> str | None:
    """Why pi-ai cannot be measured here, or None."""
    if shutil.which("node") is None:
        return "node is not on PATH; pi-ai was not measured"
    if not (ORACLE / "node_modules" / "@earendil-works" / "pi-ai").exists():
        return "scripts/oracle/node_modules is missing (cd scripts/oracle && npm install); pi-ai was not measured"
    return None


def node_times(runs: Path) -> dict[int, tuple[list[float], int]]:
    """One fresh Node process over ``runs`` (one API, every size): pi-ai's warm runs' ms and
    its body length per size."""
    node = shutil.which("node")
    assert node is not None
    done = subprocess.run(
        [node, "--max-old-space-size=8192", str(NODE_SCRIPT), str(runs)],
        cwd=ORACLE,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"bench_projection.mjs failed: {done.stderr.strip()[-500:]}")
    times: dict[int, tuple[list[float], int]] = {}
    for result in json.loads(done.stdout):
        if "error" in result:
            print(f"note: pi-ai failed for {result['api']} at {result['size']}: {result['error'][:300]}")
            continue
        times[result["size"]] = (result["times"], result["length"])
    return times


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument("--apis", default=",".join(ROUTES))
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (a Node process each)")
    parser.add_argument("--repeat", type=int, default=3, help="warm runs per size per round, each side")
    parser.add_argument("--no-node", action="store_true", help="skip the pi-ai (Node) side")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    apis = [a for a in args.apis.split(",") if a]
    unknown = [a for a in apis if a not in ROUTES]
    if unknown:
        parser.error(f"unknown API(s) {unknown}; known: {', '.join(ROUTES)}")
    node_note = "skipped (--no-node)" if args.no_node else node_unavailable()
    if node_note:
        print(f"pi-ai: {node_note}")

    for api in apis:
        provider, model_id, pi_options, env = ROUTES[api]
        model = _catalog_model(provider, model_id)
        options = _options(pi_options, env)
        transcripts = {size: transcript(model, size) for size in sizes}
        lengths = {
            size: len(project(model, messages, options).body_bytes) for size, messages in transcripts.items()
        }

        def ours(
            transcripts: dict[int, list[Message]] = transcripts,
            model: Model = model,
            options: RequestOptions = options,
        ) -> dict[int, list[float]]:
            return {
                size: python_ms(model, messages, options, args.repeat)
                for size, messages in transcripts.items()
            }

        with tempfile.TemporaryDirectory() as folder:
            cases: dict[str, Callable[[], dict[int, list[float]]]] = {"python": ours}
            node_lengths: dict[int, int] = {}
            if not node_note:
                runs = Path(folder) / "runs.json"
                run = {
                    "api": api,
                    "model": model,
                    "options": {"apiKey": BENCH_KEY, "sessionId": SESSION_ID, **pi_options},
                    "env": env,
                    "contexts": {str(size): {"messages": messages} for size, messages in transcripts.items()},
                }
                runs.write_bytes(orjson.dumps({"repeat": args.repeat, "runs": [run]}))

                def theirs(
                    runs: Path = runs, node_lengths: dict[int, int] = node_lengths
                ) -> dict[int, list[float]]:
                    measured = node_times(runs)
                    node_lengths.update({size: length for size, (_, length) in measured.items()})
                    return {size: times for size, (times, _) in measured.items()}

                cases["node"] = theirs
            measured = compare(cases, args.rounds, warm=False)  # each side warms itself
        del transcripts
        flat = {
            side: {size: [t for one in rounds for t in one.get(size, [])] for size in sizes}
            for side, rounds in measured.items()
        }
        smallest = min(flat["python"][sizes[0]]) / sizes[0]
        for size in sizes:
            ours_ms = flat["python"][size]
            theirs_ms = flat.get("node", {}).get(size)
            name = f"{api} {size:,} messages: project + body from scratch, warm"
            if theirs_ms:
                report(
                    name,
                    ours_ms,
                    theirs_ms,
                    anchor_name="pi-ai streamSimple to body (node, warm)",
                    budget=1.0,
                )
            else:
                report(name, ours_ms)
            linearity = (min(ours_ms) / size) / smallest
            print(f"  linearity (ms a message over the smallest size's, at the min): {linearity:.2f}")
            if size in node_lengths and node_lengths[size] != lengths[size]:
                print(
                    f"  note: body sizes differ (python {lengths[size]} bytes, pi-ai {node_lengths[size]} units)"
                )
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    raise SystemExit(main())
