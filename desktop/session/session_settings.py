"""What a session is set to, recorded in its own journal (design G12).

A session's route (with its account and endpoint), permission mode, fallback for system
updates, declarations policy and compaction thresholds are facts of the session, not of the
window or the command that happens to open it: they decide the bytes of the next request, so
continuing on other values throws the provider's prompt cache away. They are journaled as a
``note`` row (``data.kind == "session-settings"``) whenever they change, with who changed them
and why, and every command and the window restore them from the newest one.

A note, not a new row type: every app since the first reads notes (T7), so an older app shows
the change as a local note and loses nothing; a newer app reads the settings from ``data``.
A history written before these notes existed still names its route in every assistant row;
that route is restored, and the rest comes from the seed (the window's settings for new
sessions, the settings file, the defaults). Whatever is newer wins: an assistant row written
after the last settings note (an older app continued the session) names the route in force.

A recorded permission mode is context, not a grant (S6): a copied or hand-written file could
name ``full-access``. The note therefore carries a MAC made with this installation's activation
key (design A8) over the session's header id and the settings; a recorded mode more permissive
than the seed is restored only when that MAC verifies.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import orjson

from desktop.host.journal.lines import JournalRows
from desktop.host.tools.catalog import canonical_json
from desktop.pi.routes import EMULATOR_FAMILY
from desktop.session.compaction_settings import CompactionSettings

KIND = "session-settings"
VERSION = 1
FALLBACKS = ("folded", "attributed")
DECLARATIONS = ("auto", "on-demand")
THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh")
MODES = ("read-only", "ask", "accept-edits", "full-access")
"""Permission modes from the least to the most permissive."""
_SEAL_PURPOSE = b"pi-desktop session-settings mac v1"


class SessionSettings(NamedTuple):
    """Everything a session is set to. ``route`` is ``[emulator/]provider/model-id``."""

    route: str
    mode: str = "ask"
    fallback: str = "folded"
    declarations: str = "auto"
    compaction: CompactionSettings = CompactionSettings()
    account: str = "default"
    endpoint: str | None = None
    #: The thinking level requests ask for (pi's levels; None: the route's default).
    thinking: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "route": self.route,
            "account": self.account,
            "endpoint": self.endpoint,
            "mode": self.mode,
            "fallback": self.fallback,
            "declarations": self.declarations,
            "compaction": {
                "enabled": self.compaction.enabled,
                "reserveTokens": self.compaction.reserve_tokens,
                "keepRecentTokens": self.compaction.keep_recent_tokens,
            },
            "thinking": self.thinking,
        }

    def describe(self) -> str:
        """One line for the timeline and the command line."""
        where = "" if self.account == "default" else f" (account {self.account})"
        endpoint = f" at {self.endpoint}" if self.endpoint else ""
        compaction = (
            f"automatic compaction {self.compaction.reserve_tokens:,} tokens before the window's end, "
            f"keeping {self.compaction.keep_recent_tokens:,}"
            if self.compaction.enabled
            else f"no automatic compaction (keeping {self.compaction.keep_recent_tokens:,} tokens when compacting)"
        )
        thinking = f", thinking {self.thinking}" if self.thinking else ""
        return (
            f"route {self.route}{where}{endpoint}{thinking}, mode {self.mode}, fallback {self.fallback}, "
            f"declarations {self.declarations}, {compaction}"
        )

    def changed_from(self, other: SessionSettings | None) -> list[str]:
        if other is None:
            return list(self._fields)
        return [name for name in self._fields if getattr(self, name) != getattr(other, name)]


class Recorded(NamedTuple):
    """What a session's journal says it is set to; every field None when it does not say."""

    route: str | None = None
    account: str | None = None
    endpoint: str | None = None
    mode: str | None = None
    fallback: str | None = None
    declarations: str | None = None
    compaction: CompactionSettings | None = None
    thinking: str | None = None
    #: The newest settings note's values and MAC, as written (to verify a permissive mode).
    written: Mapping[str, Any] | None = None
    seal: str | None = None

    def settings(self) -> SessionSettings | None:
        """The complete settings the newest note recorded, with a newer assistant row's route."""
        if self.written is None or self.route is None:
            return None
        return SessionSettings(
            route=self.route,
            mode=self.mode or "ask",
            fallback=self.fallback or "folded",
            declarations=self.declarations or "auto",
            compaction=self.compaction or CompactionSettings(),
            account=self.account or "default",
            endpoint=self.endpoint,
            thinking=self.thinking,
        )


def _text(value: object, allowed: Sequence[str] | None = None) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    if allowed is not None and value not in allowed:
        return None
    return value


def _count(value: object) -> int | None:
    return value if type(value) is int and 0 <= value < 1 << 40 else None


def _compaction(value: object) -> CompactionSettings | None:
    if not isinstance(value, Mapping):
        return None
    enabled = value.get("enabled")
    reserve, keep = _count(value.get("reserveTokens")), _count(value.get("keepRecentTokens"))
    if type(enabled) is not bool or reserve is None or keep is None:
        return None
    return CompactionSettings(enabled, reserve, keep)


def route_of_assistant(route: object) -> tuple[str, str, str | None] | None:
    """``(route, account, endpoint)`` named by an assistant row's ``route`` object, if any."""

    if not isinstance(route, Mapping) or route.get("imported"):
        return None
    provider, model = route.get("provider"), route.get("model")
    if not isinstance(provider, str) or not isinstance(model, str) or not provider or not model:
        return None
    emulator = bool(route.get("emulator"))
    prefix = f"{EMULATOR_FAMILY}/" if emulator else ""
    account = _text(route.get("account")) or "default"
    # An endpoint override shows as a request URL beside the published one (``journal_route``).
    endpoint = None
    if not emulator and isinstance(route.get("publishedBaseUrl"), str):
        endpoint = _text(route.get("baseUrl"))
    return f"{prefix}{provider}/{model}", account, endpoint


def settings_of_note(row: Mapping[str, Any]) -> Mapping[str, Any] | None:
    data = row.get("data")
    if row.get("type") != "note" or not isinstance(data, Mapping) or data.get("kind") != KIND:
        return None
    settings = data.get("settings")
    return settings if isinstance(settings, Mapping) else None


def recorded_from(rows_newest_first: Iterable[Mapping[str, Any]]) -> Recorded:
    """The recorded settings from rows read newest first (stops at the newest settings note)."""
    route: tuple[str, str, str | None] | None = None
    for row in rows_newest_first:
        kind = row.get("type")
        if kind == "assistant":
            if route is None:
                route = route_of_assistant(row.get("route"))
            continue
        written = settings_of_note(row) if kind == "note" else None
        if written is None:
            continue
        data = row.get("data")
        seal = data.get("seal") if isinstance(data, Mapping) else None
        own = _text(written.get("route"))
        if route is None and own is not None:
            route = (own, _text(written.get("account")) or "default", _text(written.get("endpoint")))
        return Recorded(
            route=route[0] if route else None,
            account=route[1] if route else None,
            endpoint=route[2] if route else None,
            mode=_text(written.get("mode"), MODES),
            fallback=_text(written.get("fallback"), FALLBACKS),
            declarations=_text(written.get("declarations"), DECLARATIONS),
            compaction=_compaction(written.get("compaction")),
            thinking=_text(written.get("thinking"), THINKING_LEVELS),
            written=written,
            seal=seal if isinstance(seal, str) else None,
        )
    if route is None:
        return Recorded()
    return Recorded(route=route[0], account=route[1], endpoint=route[2])


def recorded_settings(rows: Sequence[Mapping[str, Any]]) -> Recorded:
    """The recorded settings of a parsed journal (the window, read-only commands). A journal's
    rows are read by their type bytes and lines: only assistant rows up to the newest one with a
    route and notes whose line names the kind are decoded (a 100,000-row session without any
    settings note is not decoded at open, design G9)."""

    if not isinstance(rows, JournalRows):
        return recorded_from(rows[index] for index in range(len(rows) - 1, -1, -1))
    journal = rows
    marker = KIND.encode()

    def candidates() -> Iterable[Mapping[str, Any]]:
        routed = False
        for index in range(len(journal) - 1, -1, -1):
            kind = journal.type_of(index)
            if kind == "assistant" and not routed:
                row = journal.peek(index)
                routed = route_of_assistant(row.get("route")) is not None
                yield row
            elif kind == "note" and marker in journal.raw(index):
                yield journal.peek(index)

    return recorded_from(candidates())


def recorded_in_bytes(data: bytes) -> Recorded:
    """The recorded settings read from the end of a session file's bytes, parsing only the
    lines that can hold them: a writing command decides its route (and checks its key) before
    it locks, repairs or appends anything (design D6)."""

    def lines() -> Iterable[Mapping[str, Any]]:
        end = len(data)
        while end > 0:
            start = data.rfind(b"\n", 0, end - 1) + 1
            line = data[start:end]
            end = start
            if b'"assistant"' not in line and KIND.encode() not in line:
                continue
            try:
                row = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if isinstance(row, dict):
                yield row

    return recorded_from(lines())


def more_permissive(mode: str, than: str) -> bool:
    rank = {name: number for number, name in enumerate(MODES)}
    return rank.get(mode, len(MODES)) > rank.get(than, 0)


def _seal_key(key: bytes) -> bytes:
    return hmac.new(key, _SEAL_PURPOSE, hashlib.sha256).digest()


def seal(key: bytes, session_id: str, settings: Mapping[str, Any]) -> str:
    """The MAC of ``settings`` for this session under the installation's activation key."""

    payload = canonical_json({"session": session_id, "settings": dict(settings)})
    return hmac.new(_seal_key(key), payload, hashlib.sha256).hexdigest()


def settings_note_fields(
    settings: SessionSettings,
    previous: SessionSettings | None,
    *,
    by: str,
    why: str,
) -> dict[str, Any]:
    """The fields of the ``note`` row recording ``settings`` (``previous``: what it replaces)."""
    changed = settings.changed_from(previous)
    verb = "set" if previous is None else "changed " + ", ".join(changed)
    data: dict[str, Any] = {
        "kind": KIND,
        "v": VERSION,
        "by": by,
        "why": why,
        "changed": changed,
        "settings": settings.to_json(),
    }
    if previous is not None:
        data["previous"] = previous.to_json()
    return {
        "level": "info",
        "text": f"Session settings {verb} by {by} ({why}): {settings.describe()}.",
        "data": data,
    }


def verified(recorded: Recorded, key: bytes, session_id: str) -> bool:
    """Whether the newest settings note was sealed by this installation for this session."""
    if recorded.written is None or recorded.seal is None:
        return False
    try:
        expected = seal(key, session_id, recorded.written)
    except (TypeError, ValueError):  # a value canonical JSON cannot encode: not ours
        return False
    return hmac.compare_digest(expected, recorded.seal)


def effective_settings(
    recorded: Recorded,
    seed: SessionSettings,
    *,
    route: str | None = None,
    endpoint: str | None = None,
    mode: str | None = None,
    fallback: str | None = None,
    compaction: CompactionSettings | None = None,
    mode_sealed: Callable[[], bool] = lambda: False,
) -> tuple[SessionSettings, str | None]:
    """The session's settings: what the user asked for now (a flag, a choice), else what the
    journal recorded, else the seed; and why a recorded mode was not restored, if it was not.

    A recorded mode more permissive than the seed's is restored only when ``mode_sealed()``
    (the note verifies under this installation's key): a file from elsewhere grants nothing."""
    refused: str | None = None
    chosen_mode = mode
    if chosen_mode is None and recorded.mode is not None:
        if not more_permissive(recorded.mode, seed.mode) or mode_sealed():
            chosen_mode = recorded.mode
        else:
            refused = (
                f"the session records permission mode {recorded.mode}, but that record was not "
                f"written by this installation; continuing in {seed.mode} (choose the mode to change it)"
            )
    if route is not None:
        chosen_route, account, chosen_endpoint = route, "default", endpoint
    elif recorded.route is not None:
        chosen_route = recorded.route
        account = recorded.account or "default"
        chosen_endpoint = endpoint if endpoint is not None else recorded.endpoint
    else:
        chosen_route, account, chosen_endpoint = seed.route, seed.account, endpoint or seed.endpoint
    settings = SessionSettings(
        route=chosen_route,
        mode=chosen_mode or seed.mode,
        fallback=fallback or recorded.fallback or seed.fallback,
        declarations=recorded.declarations or seed.declarations,
        compaction=compaction or recorded.compaction or seed.compaction,
        account=account,
        endpoint=chosen_endpoint,
        thinking=recorded.thinking or seed.thinking,
    )
    return settings, refused
