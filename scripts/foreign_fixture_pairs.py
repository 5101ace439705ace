"""How many of the real-format fixtures open, and how many tool calls pair with their result.

Every pi, Claude Code and Codex CLI fixture under tests/fixtures is opened read-only; in the
context of every branch (sub-agent lanes included) each tool call must be followed by the
result the file recorded for it, and the next Anthropic body must hold no "No result provided"
placeholder (pi-ai's stand-in for a call without a result). Run::

    PYTHONPATH=$PWD python scripts/foreign_fixture_pairs.py
"""

from __future__ import annotations

from pathlib import Path

from desktop.session.foreign import next_request, open_foreign

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
PATTERNS = (
    "claude_code/*.jsonl",
    "claude_code/subagents/*.jsonl",
    "pi_sessions/*.jsonl",
    "pi_quirks/*.jsonl",
    "codex/*.jsonl",
)


def main() -> int:
    files = sorted(path for pattern in PATTERNS for path in FIXTURES.glob(pattern))
    calls: set[tuple[str, str]] = set()
    paired = placeholders = 0
    for path in files:
        session = open_foreign(path)
        for branch in session.branches():
            messages = session.context(branch.leaf).messages
            for index, message in enumerate(messages):
                if message["role"] != "assistant":
                    continue
                answered = set()
                for after in messages[index + 1 :]:
                    if after["role"] != "toolResult":
                        break
                    answered.add(after["toolCallId"])
                for block in message["content"]:
                    key = (path.name, str(block.get("id")))
                    if block["type"] == "toolCall" and key not in calls:
                        calls.add(key)
                        paired += block["id"] in answered
        placeholders += next_request(session, "anthropic/claude-opus-5-5").body_bytes.count(
            b"No result provided"
        )
    print(
        f"{len(files)} fixtures open; {paired} of {len(calls)} tool calls paired with their recorded result; "
        f"{placeholders} 'No result provided' placeholders in the next Anthropic bodies"
    )
    return 0 if paired == len(calls) and not placeholders else 1


if __name__ == "__main__":
    raise SystemExit(main())
