"""A session as a document people can read elsewhere: Markdown or one standalone HTML page (design X6).

Any session the window opens exports the same way: a Pi Desktop journal as it is, a pi or
Claude Code session as its current branch (the rows ``foreign.display.row_dict`` shows). The
transcript keeps the conversation in order, folds each tool call and its result under
``<details>`` (both formats: Markdown viewers render the element), shows the usage of every
request and the totals, and leaves out what the model is told outside the conversation
(system rows, reminders, bookkeeping) unless asked for.

The HTML page is one file that needs nothing else: the style is inline, there is no script, no
link to a resource, and every text from the session is escaped, so opening it reads nothing the
session names. Reading only: building a document never writes; the caller decides where it goes.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson

from desktop.pi.money import format_cost
from desktop.session.foreign.display import FORMAT_NAMES, Prices, row_dict

#: Format names as the document's header says them.
SOURCES = {"desktop": "Pi Desktop session", **FORMAT_NAMES}
#: Row kinds that are the conversation (everything else is shown only with ``system``).
_SHOWN_FOREIGN = frozenset(
    {
        "compaction_summary",
        "branch_summary",
        "label",
        "model_change",
        "thinking_level",
        "bash",
        "custom_message",
    }
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _printable(text: object) -> str:
    """Control characters (terminal escapes, NUL) shown as ``\\xNN``: they would drive a terminal
    the Markdown is printed to and make the HTML invalid."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text))


@dataclass(frozen=True)
class Transcript:
    """What a document is made of: where it came from and its rows, in the window's row shape."""

    title: str
    source: str
    path: str
    cwd: str
    rows: Sequence[Mapping[str, Any]]


@dataclass(frozen=True)
class Usage:
    """One request's tokens: ``input`` is every prompt token, cached and uncached beside it."""

    model: str
    input: int
    cached: int
    uncached: int
    output: int
    cost: float

    def line(self) -> str:
        return (
            f"{self.input:,} input tokens ({self.cached:,} cached, {self.uncached:,} uncached) · "
            f"{self.output:,} output · {format_cost(self.cost)}"
        )


def _int(value: object) -> int:
    return int(value) if type(value) is int or type(value) is float else 0


def usage_of(row: Mapping[str, Any]) -> Usage | None:
    """The usage of an assistant row or a compaction's summary request, else None."""
    kind = row.get("type")
    message = row.get("message") if kind == "assistant" else row if kind == "compaction" else None
    usage = message.get("usage") if isinstance(message, Mapping) else None
    if not isinstance(usage, Mapping) or not isinstance(message, Mapping):
        return None
    fresh, read, write = (_int(usage.get(k)) for k in ("input", "cacheRead", "cacheWrite"))
    cost = usage.get("cost")
    total = float(cost.get("total") or 0) if isinstance(cost, Mapping) and _number(cost.get("total")) else 0.0
    model = str(message.get("model") or "") if kind == "assistant" else "compaction summary"
    return Usage(model, fresh + read + write, read, fresh + write, _int(usage.get("output")), total)


def _number(value: object) -> bool:
    return type(value) is int or type(value) is float


def totals(rows: Iterable[Mapping[str, Any]]) -> tuple[int, Usage]:
    """(requests, their summed usage) over the rows."""
    found = _usages(rows)
    summed = Usage(
        "",
        sum(u.input for u in found),
        sum(u.cached for u in found),
        sum(u.uncached for u in found),
        sum(u.output for u in found),
        sum(u.cost for u in found),
    )
    return len(found), summed


def title_of(rows: Iterable[Mapping[str, Any]], fallback: str) -> str:
    """The first user text's first line (cut at 80 characters), else ``fallback``."""
    for row in rows:
        if row.get("type") == "user":
            text = _text(row.get("message")).strip()
            if text:
                first = text.splitlines()[0]
                return first if len(first) <= 80 else first[:79] + "…"
    return fallback


def desktop_transcript(
    path: str, header: Mapping[str, Any] | None, rows: Sequence[Mapping[str, Any]]
) -> Transcript:
    cwd = str((header or {}).get("cwd") or "")
    return Transcript(title_of(rows, "(no messages)"), SOURCES["desktop"], path, cwd, rows)


def foreign_transcript(session: Any, leaf: str | None = None) -> Transcript:
    """A pi or Claude Code session's branch (default: the one its app continues from)."""

    leaf = leaf or session.default_leaf
    diffs = session.system_diffs(leaf)
    prices = Prices()
    rows: list[Mapping[str, Any]] = []
    for row in session.timeline(leaf):
        shown = row_dict(row, diffs, prices)
        if row.kind == "user" and row.text is not None:  # the reminders cut out are rows of their own
            shown["ownText"] = row.text
        rows.append(shown)
    source = SOURCES.get(session.format, str(session.format))
    return Transcript(
        str(session.title or "(no messages)"), source, str(session.path), session.cwd or "", rows
    )


# --- pieces shared by both formats ---------------------------------------------------------------


def _text(message: object) -> str:
    """A message's text blocks joined (tool calls, thinking and images are shown apart)."""
    if not isinstance(message, Mapping):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n\n".join(
        str(b.get("text", "")) for b in content or () if isinstance(b, Mapping) and b.get("type") == "text"
    )


def _when(row: Mapping[str, Any]) -> str:
    ts = row.get("ts")
    if not _number(ts):
        return ""
    try:
        return datetime.fromtimestamp(float(ts or 0) / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        return ""


def _arguments(block: Mapping[str, Any]) -> str:
    arguments = block.get("arguments")
    if isinstance(arguments, str):
        return arguments
    return orjson.dumps(arguments, option=orjson.OPT_INDENT_2, default=str).decode()


def _call_summary(block: Mapping[str, Any]) -> str:
    arguments = block.get("arguments")
    args = arguments if isinstance(arguments, Mapping) else {}
    for key in ("path", "file_path", "command", "pattern", "query", "url"):
        value = args.get(key)
        if isinstance(value, str) and value:
            first = value.splitlines()[0] if value.strip() else value
            return first if len(first) <= 100 else first[:99] + "…"
    return ""


def _hidden(row: Mapping[str, Any]) -> bool:
    kind = row.get("type")
    if kind == "system":
        return True
    if kind == "foreign":
        return bool(row.get("hidden")) or row.get("foreign") not in _SHOWN_FOREIGN
    return False


def shown_rows(transcript: Transcript, system: bool) -> list[Mapping[str, Any]]:
    return [row for row in transcript.rows if system or not _hidden(row)]


@dataclass(frozen=True)
class _Part:
    """One piece of a row: prose, a folded block (tool call, result, thinking, section), a note."""

    kind: str  # "text" | "fold" | "note" | "error"
    text: str
    summary: str = ""
    code: bool = False


def _parts(row: Mapping[str, Any], system: bool = False) -> tuple[str, str, list[_Part]]:
    """(title, detail, parts) of one row, the same for both formats; without ``system`` a user
    message shows its own words (Claude Code's reminders inside it are hidden rows)."""
    kind = row.get("type")
    when = _when(row)
    message = row.get("message") if isinstance(row.get("message"), Mapping) else None
    parts: list[_Part] = []
    if kind in ("user", "assistant") and message is not None:
        detail = " · ".join(
            x for x in (when, str(message.get("model") or "") if kind == "assistant" else "") if x
        )
        stop = message.get("stopReason")
        if kind == "assistant" and stop in ("error", "aborted"):
            parts.append(_Part("error", f"{str(stop).capitalize()}: {message.get('errorMessage') or stop}"))
        content = message.get("content")
        own = row.get("ownText")
        if kind == "user" and isinstance(own, str) and not system:
            content = own
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        for block in blocks if isinstance(blocks, list) else ():
            if not isinstance(block, Mapping):
                continue
            what = block.get("type")
            if what == "text" and str(block.get("text", "")).strip():
                parts.append(_Part("text", str(block.get("text", "")).strip("\n")))
            elif what == "thinking" and block.get("thinking"):
                words = len(str(block["thinking"]).split())
                parts.append(_Part("fold", str(block["thinking"]), f"Thinking · {words:,} words"))
            elif what == "toolCall":
                name = str(block.get("name", "?"))
                summary = " ".join(x for x in (f"Tool call: {name}", _call_summary(block)) if x)
                parts.append(_Part("fold", _arguments(block), summary, code=True))
            elif what == "image":
                parts.append(
                    _Part("note", f"[image: {block.get('mimeType') or 'unknown type'}, not exported]")
                )
        usage = usage_of(row)
        if usage is not None:
            parts.append(_Part("note", usage.line()))
        return ("You" if kind == "user" else "Assistant"), detail, parts
    if kind == "toolResult" and message is not None:
        failed = bool(message.get("isError"))
        name = str(message.get("toolName", "?"))
        text = _text(message)
        lines = text.count("\n") + 1 if text else 0
        summary = (
            f"Tool result: {name}{' (failed)' if failed else ''} · {lines:,} line{'s' if lines != 1 else ''}"
        )
        return "", when, [_Part("fold", text or "(no output)", summary, code=True)]
    if kind == "compaction":
        tokens = row.get("tokensBefore")
        detail = " · ".join(
            x for x in (when, f"~{tokens:,} tokens before" if type(tokens) is int else "") if x
        )
        parts = [_Part("text", str(row.get("summary", "")))] if row.get("summary") else []
        usage = usage_of(row)
        if usage is not None:
            parts.append(_Part("note", usage.line()))
        return "Compaction", detail, parts
    if kind == "note":
        level = str(row.get("level", "info"))
        return (
            f"Note ({level})",
            when,
            [_Part("error" if level == "error" else "text", str(row.get("text", "")))],
        )
    if kind == "system":
        meta = row.get("modelSystem")
        body = meta.get("message") if isinstance(meta, Mapping) else None
        sections = body.get("sections") if isinstance(body, Mapping) else None
        for name, value in (sections or {}).items() if isinstance(sections, Mapping) else ():
            if value is None:
                parts.append(_Part("note", f"section {name}: removed"))
            else:
                parts.append(
                    _Part("fold", str(value), f"Section {name} · {len(str(value)):,} characters", code=True)
                )
        if isinstance(body, Mapping):
            for label in ("toolsAdded", "toolsRemoved"):
                tools = body.get(label)
                names = [str(t.get("name", "?")) for t in tools or () if isinstance(t, Mapping)]
                if names and isinstance(tools, list):
                    verb = "added" if label == "toolsAdded" else "removed"
                    parts.append(_Part("note", f"Tools {verb}: {', '.join(names)}"))
        return "System update", when, parts
    foreign = str(row.get("foreign") or kind or "row")
    text = str(row.get("text") or _text(message) or row.get("summary") or "")
    return foreign.replace("_", " ").capitalize(), when, [_Part("text", text)] if text else []


# --- Markdown ------------------------------------------------------------------------------------


def _fence(text: str) -> str:
    """A backtick fence longer than any run of backticks in ``text``."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _md_block(part: _Part) -> str:
    text = _printable(part.text)
    if part.kind == "fold":
        fence = _fence(text)
        inner = f"{fence}\n{text}\n{fence}" if part.code else text
        return f"<details><summary>{html.escape(_printable(part.summary))}</summary>\n\n{inner}\n\n</details>"
    if part.kind == "note":
        return f"*{text}*"
    if part.kind == "error":
        return f"> **{text}**"
    return text


def markdown(transcript: Transcript, *, system: bool = False) -> str:
    """The transcript as Markdown (text as the model or the user wrote it)."""
    count, summed = totals(transcript.rows)
    out = [
        f"# {_printable(transcript.title)}",
        "",
        f"- Source: {transcript.source}, `{_printable(transcript.path)}`",
    ]
    if transcript.cwd:
        out.append(f"- Workspace: `{_printable(transcript.cwd)}`")
    out.append(f"- Requests: {count:,} · {summed.line()}")
    out.append("")
    for row in shown_rows(transcript, system):
        title, detail, parts = _parts(row, system)
        if title:
            out.append(f"## {title}" + (f" · {_printable(detail)}" if detail else ""))
            out.append("")
        for part in parts:
            out.append(_md_block(part))
            out.append("")
    out.append("## Usage")
    out.append("")
    out.append(_md_usage(transcript.rows))
    return "\n".join(out).rstrip("\n") + "\n"


def _md_usage(rows: Sequence[Mapping[str, Any]]) -> str:
    lines = [
        "| # | model | input | cached | uncached | output | cost |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for number, usage in enumerate(_usages(rows), 1):
        model = _printable(usage.model).replace("|", "\\|")
        lines.append(f"| {number} | {model} | {' | '.join(_figures(usage))} |")
    count, summed = totals(rows)
    lines.append(f"| **total** | {count:,} requests | {' | '.join(_figures(summed))} |")
    return "\n".join(lines)


def _usages(rows: Iterable[Mapping[str, Any]]) -> list[Usage]:
    return [usage for row in rows if (usage := usage_of(row)) is not None]


def _figures(usage: Usage) -> list[str]:
    """A usage table's number cells, as text."""
    return [f"{n:,}" for n in (usage.input, usage.cached, usage.uncached, usage.output)] + [
        format_cost(usage.cost)
    ]


# --- HTML ----------------------------------------------------------------------------------------

_STYLE = """
body { font: 15px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem;
       color: #1f2328; background: #ffffff; }
header p { margin: .2rem 0; color: #59636e; }
section.row { border-top: 1px solid #d1d9e0; padding: .6rem 0; }
h2 { font-size: 1rem; margin: .2rem 0; }
h2 .detail { font-weight: normal; color: #59636e; }
.you { color: #2563eb; } .assistant { color: #7c3aed; } .other { color: #59636e; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; }
.note { color: #59636e; font-size: .9em; }
.error { color: #b42318; border: 1px solid #b42318; padding: .3rem .5rem; white-space: pre-wrap; }
details { margin: .3rem 0; } summary { cursor: pointer; color: #0d9488; }
pre { background: #f6f8fa; border: 1px solid #d1d9e0; padding: .5rem; white-space: pre-wrap;
      overflow-wrap: anywhere; margin: .3rem 0; }
table { border-collapse: collapse; margin-top: .5rem; }
th, td { border: 1px solid #d1d9e0; padding: .2rem .5rem; text-align: right; }
th:nth-child(2), td:nth-child(2) { text-align: left; }
"""


def _e(text: object) -> str:
    return html.escape(_printable(text), quote=True)


def _html_part(part: _Part) -> str:
    if part.kind == "fold":
        body = f"<pre>{_e(part.text)}</pre>" if part.code else f'<div class="text">{_e(part.text)}</div>'
        return f"<details><summary>{_e(part.summary)}</summary>{body}</details>"
    if part.kind == "note":
        return f'<p class="note">{_e(part.text)}</p>'
    if part.kind == "error":
        return f'<div class="error">{_e(part.text)}</div>'
    return f'<div class="text">{_e(part.text)}</div>'


def page(transcript: Transcript, *, system: bool = False) -> str:
    """The transcript as one standalone HTML page (no script, no external resource)."""
    count, summed = totals(transcript.rows)
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">",
        f"<title>{_e(transcript.title)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<header><h1>{_e(transcript.title)}</h1>",
        f"<p>Source: {_e(transcript.source)}, <code>{_e(transcript.path)}</code></p>",
    ]
    if transcript.cwd:
        out.append(f"<p>Workspace: <code>{_e(transcript.cwd)}</code></p>")
    out.append(f"<p>Requests: {count:,} · {_e(summed.line())}</p></header><main>")
    for row in shown_rows(transcript, system):
        title, detail, parts = _parts(row, system)
        kind = row.get("type")
        css = "you" if kind == "user" else "assistant" if kind == "assistant" else "other"
        out.append('<section class="row">')
        if title:
            extra = f' <span class="detail">· {_e(detail)}</span>' if detail else ""
            out.append(f'<h2><span class="{css}">{_e(title)}</span>{extra}</h2>')
        out.extend(_html_part(part) for part in parts)
        out.append("</section>")
    out.append("</main><footer><h2>Usage</h2>")
    out.append(_html_usage(transcript.rows))
    out.append("</footer></body></html>")
    return "\n".join(out) + "\n"


def _html_usage(rows: Sequence[Mapping[str, Any]]) -> str:
    head = "".join(
        f"<th>{name}</th>" for name in ("#", "model", "input", "cached", "uncached", "output", "cost")
    )
    body = [
        f"<tr><td>{number}</td><td>{_e(usage.model)}</td>{''.join(f'<td>{c}</td>' for c in _figures(usage))}</tr>"
        for number, usage in enumerate(_usages(rows), 1)
    ]
    count, summed = totals(rows)
    body.append(
        f"<tr><th>total</th><th>{count:,} requests</th>{''.join(f'<th>{c}</th>' for c in _figures(summed))}</tr>"
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def render(transcript: Transcript, fmt: str, *, system: bool = False) -> str:
    """``fmt`` is ``md`` or ``html``."""
    if fmt == "html":
        return page(transcript, system=system)
    if fmt == "md":
        return markdown(transcript, system=system)
    raise ValueError(f"unknown export format {fmt!r} (md or html)")
