"""Slash commands typed where pi users type them: parsed here, never sent to the model (design G8).

A composer text that starts with ``/`` is a command; ``//text`` is the escape for a message
that really starts with a slash (it sends ``/text``). Parsing is plain data and needs no Qt,
so the window, its tests and any later command line share one table of what exists, how it
is spelled and what it does. The window decides how each command is carried out.
"""

from __future__ import annotations

from dataclasses import dataclass

PREFIX = "/"
ESCAPE = "//"


@dataclass(frozen=True)
class CommandSpec:
    name: str
    usage: str
    summary: str
    #: The first word the argument must be, when the command has fixed sub-commands.
    subcommands: tuple[str, ...] = ()
    #: Whether the command needs an argument (``/model`` and ``/mode`` do).
    needs_argument: bool = False


COMMANDS: tuple[CommandSpec, ...] = (
    CommandSpec(
        "capability",
        "/capability status",
        "how system updates reach the current route (native, attributed or folded) and why",
        subcommands=("status",),
    ),
    CommandSpec(
        "payload",
        "/payload next [draft]",
        "open the Payload tab on the exact next request, with the draft message if given",
        subcommands=("next",),
    ),
    CommandSpec(
        "compact", "/compact [focus]", "summarize older turns now, focusing the summary on the text given"
    ),
    CommandSpec(
        "model",
        "/model [PROVIDER/ID]",
        "list the routes with their prices and cache rule; with a route, switch to it, "
        "e.g. /model anthropic/claude-sonnet-5",
    ),
    CommandSpec(
        "mode",
        "/mode NAME",
        "set the permission mode (ask, accept-edits, read-only, full-access)",
        needs_argument=True,
    ),
    CommandSpec("help", "/help", "list these commands"),
)
BY_NAME = {spec.name: spec for spec in COMMANDS}
#: Prefixes pi users type before a command (``/forge payload next`` is ``/payload next``).
ALIASES = frozenset({"forge"})


@dataclass(frozen=True)
class Message:
    """Text for the model (an ordinary message, or ``//text`` unescaped to ``/text``)."""

    text: str


@dataclass(frozen=True)
class Command:
    """A known command; ``argument`` is the rest of the line after its sub-command, stripped."""

    name: str
    argument: str = ""


@dataclass(frozen=True)
class Problem:
    """Typed as a command but not a valid one; ``text`` is the one line to show."""

    text: str


Parsed = Message | Command | Problem


def known_commands() -> str:
    return ", ".join(spec.usage for spec in COMMANDS)


def help_text() -> str:
    lines = [f"{spec.usage} — {spec.summary}" for spec in COMMANDS]
    lines.append("//text — send a message that starts with a slash (sends /text)")
    return "\n".join(lines)


def parse(text: str) -> Parsed:
    """What the composer's ``text`` is: a message for the model, a command, or a mistake."""
    stripped = text.strip()
    if stripped.startswith(ESCAPE):
        return Message(stripped[1:])
    if not stripped.startswith(PREFIX):
        return Message(text)
    line, _newline, rest = stripped.partition("\n")
    word, _space, argument = line[1:].strip().partition(" ")
    name = word.lower()
    argument = argument.strip()
    if name in ALIASES and argument:  # pi's own spelling: /forge payload next
        return parse("/" + argument + ("\n" + rest if rest else ""))
    spec = BY_NAME.get(name)
    if spec is None:
        shown = f"/{word}" if word else "/"
        return Problem(
            f"Unknown command {shown}. Known commands: {known_commands()}. Use //text to send a message starting with /."
        )
    if rest.strip():
        return Problem(f"/{name} is a one-line command; put the message on its own (or start it with //).")
    if spec.subcommands:
        sub, _space, argument = argument.partition(" ")
        if sub.lower() not in spec.subcommands:
            return Problem(f"Usage: {spec.usage}")
        argument = argument.strip()
    if spec.needs_argument and not argument:
        return Problem(f"Usage: {spec.usage}")
    if name == "help" and argument:
        return Problem(f"Usage: {spec.usage}")
    return Command(name, argument)


def completions() -> list[str]:
    """What the composer offers as the user types ``/``: each command as it is typed."""
    words: list[str] = []
    for spec in COMMANDS:
        if spec.subcommands:
            words.extend(f"/{spec.name} {sub}" for sub in spec.subcommands)
        else:
            words.append(f"/{spec.name}")
    return words


def match_route(wanted: str, keys: list[str]) -> str | None:
    """The offered route key ``/model PROVIDER/ID`` means: the key as typed (``openai/gpt-5.5``
    is the real route, ``emulator/openai/gpt-5.5`` the offline stand-in), else the stand-in."""
    lowered = {key.lower(): key for key in keys}
    wanted = wanted.strip().lower()
    return lowered.get(wanted) or lowered.get(f"emulator/{wanted}")
