"""Execution activation of deferred tools, kept in the versioned ``tool_activation`` section.

Declarations (which schemas the model can see) and activation (which deferred tools may
run) are separate on purpose: on the fixed-declaration route every schema is declared from
the first request, yet only ToolSearch grants execution. The section the model sees holds
the active deferred names, a SHA-256 identity over the account, route, endpoint, permission
mode, the full catalog declarations and the deferred-name set, and a keyed MAC
(HMAC-SHA256) made with this installation's secret over the version, epoch, identity,
active names and the session's header id (design A4, A8). The identity answers "is this the
same route, account, mode and catalog?"; the MAC answers "did this installation write it,
for this session?". See docs/architecture.md, "Trust model".

Restoration (``restore_activation``) reads neutral messages only:

* the newest ``tool_activation`` section is the baseline, if it parses, has the current
  version, its MAC verifies, its identity is the current one, and its epoch is not lower
  than an earlier verified section's (an older section copied to the end is a replay);
  otherwise it grants nothing at all;
* a successful ToolSearch result newer than that section recovers an activation that was
  interrupted before its section was written (crash between result and update), and only
  the names that result activated, and only if it answers a ToolSearch call of an earlier
  assistant message that really asked for tools (matching id, call before result, first
  answer only) and names the catalog could return for that call (design A8). The result is
  not MAC'd itself; it counts only on top of a verified section, i.e. in a history this
  installation wrote;
* a history without any section keeps the older evidence rule (design A5, "legacy
  evidence"): its successful ToolSearch results activate what they listed, under the same
  checks (they answer a real earlier call, and name only what that call could return from the
  current catalog's deferred tools). Histories with a section keep the rules above: forged or
  foreign evidence on top of a section that does not verify grants nothing;
* ``toolsAdded`` declarations are never read as permission to execute.

Only names that are deferred tools of the current catalog are ever granted.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import os
import re
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, Protocol

import orjson

from desktop.host.tools.catalog import canonical_json
from desktop.host.tools.toolsearch import NAME as TOOLSEARCH
from desktop.host.tools.toolsearch import activated_names
from desktop.session.context_log import could_mention, system_messages_at

SECTION_NAME = "tool_activation"
#: Version 2 carries a MAC; version 1 (before design A8) is read only to say why it grants nothing.
ACTIVATION_VERSION = 2
UNSIGNED_VERSION = 1
SUPPORTED_VERSIONS = frozenset({UNSIGNED_VERSION, ACTIVATION_VERSION})
#: Domain separation: the installation secret is used for nothing but this MAC.
_MAC_PURPOSE = b"pi-desktop tool_activation mac v1"

_BLOCK = re.compile(
    r"\A<tool_activation version=\"(?P<version>[^\"]*)\">\n(?P<body>.*)\n</tool_activation>\Z", re.DOTALL
)
_HEX64 = re.compile(r"[0-9a-f]{64}")


class ActivationSectionError(ValueError):
    """The section text cannot be trusted; ``kind`` says why (shown in the inspector)."""

    def __init__(self, kind: Literal["invalid", "unknown-version"], message: str) -> None:
        super().__init__(message)
        self.kind = kind


class IdentityInputs(NamedTuple):
    """What an activation is bound to. ``declarations`` are full pi-ai Tool dicts."""

    account: str
    model: str
    api: str
    endpoint: str
    declarations: tuple[Mapping[str, Any], ...]
    deferred_names: frozenset[str]
    mode: str = ""
    provider: str = ""

    def payload(self) -> dict[str, Any]:
        return {
            "v": ACTIVATION_VERSION,
            "account": self.account,
            "provider": self.provider,
            "model": self.model,
            "api": self.api,
            "endpoint": self.endpoint.rstrip("/"),
            "mode": self.mode,
            "declarations": sorted((dict(d) for d in self.declarations), key=lambda d: str(d.get("name"))),
            "deferred": sorted(self.deferred_names),
        }

    def digest(self) -> str:
        return hashlib.sha256(canonical_json(self.payload())).hexdigest()


def activation_identity(
    *,
    account: str,
    model: str,
    api: str,
    endpoint: str,
    declarations: Iterable[Mapping[str, Any]],
    deferred_names: Iterable[str],
    mode: str,
    provider: str = "",
) -> str:
    """SHA-256 (hex) over canonical JSON of the identity inputs.

    The permission mode is part of it, so an activation made under ``ask`` is not honoured
    by a later process that runs under ``full-access`` (design A7: a mode change revokes).
    """
    return IdentityInputs(
        account, model, api, endpoint, tuple(declarations), frozenset(deferred_names), mode, provider
    ).digest()


@dataclass(frozen=True, slots=True)
class ActivationState:
    """What a ``tool_activation`` section holds: the identity it is bound to, the active deferred
    names (kept sorted, each once), its epoch, version and MAC. ``replace`` makes a changed copy.
    """

    identity: str
    active: tuple[str, ...] = ()
    epoch: int = 0
    version: int = ACTIVATION_VERSION
    #: HMAC-SHA256 hex of this state (``ActivationSigner.seal``); empty until sealed.
    mac: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "active", tuple(sorted(set(self.active))))

    def replace(self, **changes: Any) -> ActivationState:
        """A copy with ``changes`` (field names as keywords)."""
        return dataclasses.replace(self, **changes)

    def granting(self, names: Iterable[str]) -> ActivationState:
        return self.replace(active=(*self.active, *names), mac="")

    def is_active(self, name: str) -> bool:
        return name in self.active


class ActivationSigner:
    """Seals and verifies sections with this installation's secret, for one session.

    The MAC covers the version, epoch, identity, active names and the session file's header
    id, so a section verifies only in the session (and on the installation) that wrote it.
    Its repr shows no key.
    """

    __slots__ = ("_other", "key", "other_secret", "session_id")

    def __init__(
        self, key: bytes, session_id: str, other_secret: Callable[[], bytes | None] | None = None
    ) -> None:
        self.key = key
        self.session_id = session_id
        #: The installation's other secret, asked only when a section does not verify under
        #: ``key`` (a secret made in the keyring before the file existed, design A8); called at
        #: most once.
        self.other_secret = other_secret
        self._other: list[bytes] = []

    @classmethod
    def from_secret(
        cls, secret: bytes, session_id: str, *, other_secret: Callable[[], bytes | None] | None = None
    ) -> ActivationSigner:
        return cls(_derive(secret), session_id, other_secret)

    @classmethod
    def ephemeral(cls, session_id: str = "") -> ActivationSigner:
        """A throwaway key: everything it seals verifies only in this process (tests, previews).
        ``os.urandom`` is what ``secrets.token_bytes`` returns, without importing ``random``."""
        return cls(os.urandom(32), session_id)

    def mac(self, state: ActivationState, key: bytes | None = None) -> str:
        payload = canonical_json(
            {
                "v": state.version,
                "session": self.session_id,
                "identity": state.identity,
                "epoch": state.epoch,
                "active": list(state.active),
            }
        )
        return hmac.new(self.key if key is None else key, payload, hashlib.sha256).hexdigest()

    def seal(self, state: ActivationState) -> ActivationState:
        unsealed = state.replace(version=ACTIVATION_VERSION)
        return unsealed.replace(mac=self.mac(unsealed))

    def verify(self, state: ActivationState) -> bool:
        """Sealed under this installation's key, or under its other secret (asked only now)."""
        if state.version != ACTIVATION_VERSION or not state.mac:
            return False
        if hmac.compare_digest(state.mac, self.mac(state)):
            return True
        return any(hmac.compare_digest(state.mac, self.mac(state, key)) for key in self._other_keys())

    def _other_keys(self) -> list[bytes]:
        if self.other_secret is not None:
            ask = self.other_secret
            self.other_secret = None  # asked once, whatever it answers
            secret = ask()
            if secret is not None:
                self._other.append(_derive(secret))
        return self._other


def _derive(secret: bytes) -> bytes:
    return hmac.new(secret, _MAC_PURPOSE, hashlib.sha256).digest()


def _state_from_payload(data: Mapping[str, Any], version: int) -> ActivationState:
    identity, active, epoch = data.get("identity"), data.get("active"), data.get("epoch", 0)
    if not isinstance(identity, str) or not _HEX64.fullmatch(identity):
        raise ActivationSectionError("invalid", "tool_activation identity is not a SHA-256 hex digest")
    if not isinstance(active, list) or not all(isinstance(n, str) for n in active):
        raise ActivationSectionError("invalid", "tool_activation active list is not a list of names")
    if not isinstance(epoch, int) or isinstance(epoch, bool) or epoch < 0:
        raise ActivationSectionError("invalid", "tool_activation epoch is not a non-negative integer")
    mac = data.get("mac", "")
    if version >= ACTIVATION_VERSION and (not isinstance(mac, str) or not _HEX64.fullmatch(mac)):
        raise ActivationSectionError("invalid", "tool_activation mac is not an HMAC-SHA256 hex digest")
    return ActivationState(
        identity=identity, active=tuple(active), epoch=epoch, version=version, mac=mac if version > 1 else ""
    )


def render_section(state: ActivationState) -> str:
    """The section text the model sees: a tagged block, a sentence, and the JSON payload."""
    listed = ", ".join(state.active) if state.active else "none"
    data: dict[str, Any] = {
        "v": state.version,
        "epoch": state.epoch,
        "identity": state.identity,
        "active": list(state.active),
    }
    if state.version >= ACTIVATION_VERSION:
        data["mac"] = state.mac
    payload = orjson.dumps(data, option=orjson.OPT_SORT_KEYS).decode()
    return (
        f'<tool_activation version="{state.version}">\n'
        f"Deferred tools activated for execution (via ToolSearch): {listed}.\n"
        f"{payload}\n"
        "</tool_activation>"
    )


def parse_section(text: object) -> ActivationState:
    """Inverse of ``render_section``; raises ``ActivationSectionError`` on anything else.

    Parsing checks the shape only; whether the section is to be trusted is the MAC's and the
    identity's business (``restore_activation``).
    """
    if not isinstance(text, str):
        raise ActivationSectionError("invalid", "tool_activation section is not text")
    match = _BLOCK.match(text)
    if not match:
        raise ActivationSectionError("invalid", "tool_activation section is not a <tool_activation> block")
    version_text = match.group("version")
    if not version_text.isdigit() or int(version_text) not in SUPPORTED_VERSIONS:
        raise ActivationSectionError(
            "unknown-version", f"tool_activation version {version_text!r} is not supported by this app"
        )
    lines = match.group("body").split("\n")
    try:
        data = orjson.loads(lines[-1])
    except orjson.JSONDecodeError as exc:
        raise ActivationSectionError("invalid", f"tool_activation payload is not JSON: {exc}") from exc
    if not isinstance(data, dict) or data.get("v") != int(version_text):
        raise ActivationSectionError("invalid", "tool_activation payload version does not match its tag")
    state = _state_from_payload(data, int(version_text))
    if render_section(state) != text:
        raise ActivationSectionError("invalid", "tool_activation section was altered (it does not re-render)")
    return state


def activation_message(
    state: ActivationState,
    *,
    tools_added: Sequence[Mapping[str, Any]] = (),
    tools_removed: Sequence[str] = (),
    timestamp: int | None = None,
) -> dict[str, Any]:
    """The neutral system message the runtime appends after tool results (``state`` sealed)."""
    message: dict[str, Any] = {
        "role": "system",
        "content": "",
        "sections": {SECTION_NAME: render_section(state)},
        "timestamp": timestamp if timestamp is not None else int(time.time() * 1000),
    }
    if tools_added:
        message["toolsAdded"] = [dict(tool) for tool in tools_added]
    if tools_removed:
        message["toolsRemoved"] = [{"name": name} for name in tools_removed]
    return message


RestoreSource = Literal["section", "section+toolsearch", "legacy", "none", "rejected"]
#: What a ToolSearch call with these arguments could activate in the current catalog.
CouldReturn = Callable[[Mapping[str, Any]], Collection[str]]


class RestoreResult(NamedTuple):
    """What restoration granted and why (the inspector shows ``reason``)."""

    active: frozenset[str]
    source: RestoreSource
    reason: str
    epoch: int = 0
    recovered: tuple[str, ...] = ()
    ignored: tuple[str, ...] = ()
    #: ToolSearch results that were not accepted as evidence, each with why (design A8).
    refused_evidence: tuple[str, ...] = ()
    #: The highest epoch of any section this installation verifiably wrote in this history;
    #: a section written after a rejection starts above it, so older sections cannot be replayed.
    epoch_floor: int = -1


class _Evidence(NamedTuple):
    names: tuple[str, ...]
    refused: tuple[str, ...]


def _toolsearch_evidence(
    messages: Sequence[Mapping[str, Any]], start: int, could_return: CouldReturn
) -> _Evidence:
    """Names granted by ToolSearch results at ``start`` or later that answer a real call.

    A result counts only if an earlier assistant message (one that stopped to use tools, so
    the runtime really ran its calls) holds a ``ToolSearch`` call with the same id, no earlier
    result already answered that call, and every name it lists is one the call could return.
    """
    if not could_mention(messages, TOOLSEARCH):
        # No ToolSearch call or result in the conversation's rows: nothing to find, without
        # decoding every row of a long session (design G9).
        return _Evidence((), ())
    calls: dict[str, tuple[int, Mapping[str, Any]]] = {}
    answered: set[str] = set()
    names: list[str] = []
    refused: list[str] = []
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "assistant" and message.get("stopReason") == "toolUse":
            for block in message.get("content") or ():
                # ``type(...) is dict`` first: rows are dicts, and the abstract check costs more
                # than the rest of this loop on a long session (the status budget).
                if (
                    (type(block) is dict or isinstance(block, Mapping))
                    and block.get("name") == TOOLSEARCH
                    and block.get("type") == "toolCall"
                ):
                    call_id = block.get("id")
                    if isinstance(call_id, str) and call_id not in calls:
                        args = block.get("arguments")
                        calls[call_id] = (index, args if isinstance(args, Mapping) else {})
            continue
        if role != "toolResult":
            continue
        call_id = message.get("toolCallId")
        first_answer = isinstance(call_id, str) and call_id not in answered
        if isinstance(call_id, str):
            answered.add(call_id)
        # Only a ToolSearch result can list names; others skip the copy (long sessions).
        listed = activated_names(dict(message)) if message.get("toolName") == TOOLSEARCH else []
        if index < start or not listed:
            continue
        if not first_answer:
            refused.append(f"result {call_id!r} answers a call that was already answered")
            continue
        call = calls.get(call_id) if isinstance(call_id, str) else None
        if call is None:
            refused.append(f"result {call_id!r} answers no earlier ToolSearch call")
            continue
        possible = set(could_return(call[1]))
        beyond = [n for n in listed if n not in possible]
        if beyond:
            refused.append(
                f"result {call_id!r} lists {', '.join(beyond)}, which its call could not have returned"
            )
            continue
        names.extend(listed)
    return _Evidence(tuple(dict.fromkeys(names)), tuple(refused))


class Verifier(Protocol):
    """What restoration needs of a signer: whether a section was sealed by this installation."""

    def verify(self, state: ActivationState) -> bool: ...


def restore_activation(
    messages: Sequence[Mapping[str, Any]],
    *,
    identity: str,
    deferred_names: Collection[str],
    signer: Verifier,
    could_return: CouldReturn,
) -> RestoreResult:
    """Recover execution activation from neutral messages (model order)."""
    known = frozenset(deferred_names)
    sections: list[tuple[int, object]] = [
        (index, message["sections"][SECTION_NAME])
        for index, message in system_messages_at(messages)
        if isinstance(message.get("sections"), Mapping) and SECTION_NAME in message["sections"]
    ]

    def verified_epoch(text: object) -> int:
        try:
            state = parse_section(text)
        except ActivationSectionError:
            return -1
        return state.epoch if signer.verify(state) else -1

    floor = max((verified_epoch(text) for _, text in sections), default=-1)
    if not sections:
        evidence = _toolsearch_evidence(messages, 0, could_return)
        if not evidence.names and not evidence.refused:
            return RestoreResult(
                frozenset(), "none", "no activation section and no ToolSearch results in history"
            )
        # The design record: "Legacy histories without this section retain their existing
        # activation evidence rules" (design A5): a successful ToolSearch result that answers a
        # real call activates what it listed, if the catalog could have returned it.
        granted = tuple(n for n in evidence.names if n in known)
        ignored = tuple(n for n in evidence.names if n not in known)
        return RestoreResult(
            frozenset(granted),
            "legacy",
            f"legacy evidence: history without a {SECTION_NAME} section; its ToolSearch results "
            f"activate {', '.join(granted) if granted else 'nothing the current catalog defers'}",
            recovered=granted,
            ignored=ignored,
            refused_evidence=evidence.refused,
        )
    newest, text = sections[-1]
    earlier_floor = max((verified_epoch(t) for _, t in sections[:-1]), default=-1)

    def rejected(reason: str, epoch: int = 0) -> RestoreResult:
        return RestoreResult(frozenset(), "rejected", reason, epoch=epoch, epoch_floor=floor)

    if text is None:
        return rejected(f"the newest {SECTION_NAME} section was removed (null)")
    try:
        state = parse_section(text)
    except ActivationSectionError as exc:
        return rejected(f"newest {SECTION_NAME} section rejected ({exc.kind}): {exc}")
    if state.version < ACTIVATION_VERSION:
        return rejected(
            f"newest {SECTION_NAME} section is version {state.version}, written without a MAC "
            "(before activation was signed); nothing restored",
            state.epoch,
        )
    if not signer.verify(state):
        return rejected(
            f"newest {SECTION_NAME} section was written by another installation or for another "
            "session, or altered (MAC does not verify); nothing restored",
            state.epoch,
        )
    if state.identity != identity:
        return rejected(
            f"newest {SECTION_NAME} section belongs to another account, route, permission mode or "
            "catalog (identity mismatch)",
            state.epoch,
        )
    if state.epoch < earlier_floor:
        return rejected(
            f"newest {SECTION_NAME} section has epoch {state.epoch}, older than epoch {earlier_floor} "
            "recorded before it (an earlier section replayed); nothing restored",
            state.epoch,
        )
    later = _toolsearch_evidence(messages, newest + 1, could_return)
    recovered = tuple(n for n in later.names if n in known and n not in state.active)
    kept = {n for n in state.active if n in known} | set(recovered)
    ignored = tuple(n for n in (*state.active, *later.names) if n not in known)
    return RestoreResult(
        frozenset(kept),
        "section+toolsearch" if recovered else "section",
        f"{SECTION_NAME} section plus {len(recovered)} tool(s) from a newer successful ToolSearch result"
        if recovered
        else f"{SECTION_NAME} section (epoch {state.epoch})",
        epoch=state.epoch,
        recovered=recovered,
        ignored=ignored,
        refused_evidence=later.refused,
        epoch_floor=floor,
    )
