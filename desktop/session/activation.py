"""Execution activation of deferred tools, kept in the versioned ``tool_activation`` section.

Declarations (which schemas the model can see) and activation (which deferred tools may
run) are separate on purpose: on the fixed-declaration route every schema is declared from
the first request, yet only ToolSearch grants execution. The section the model sees holds
the active deferred names and a SHA-256 identity over the account, model, API, endpoint,
the full catalog declarations and the deferred-name set; restoring it on any other
identity grants nothing.

Restoration (``restore_activation``) reads neutral messages only:

* the newest ``tool_activation`` section is the baseline, if it parses, has a known
  version and the current identity; otherwise it grants nothing at all;
* a successful ToolSearch result newer than that section recovers an activation that was
  interrupted before its section was written (crash between result and update), and only
  the names that result activated;
* a history without any section (legacy) keeps the older evidence rule: every successful
  ToolSearch result grants the names it activated;
* ``toolsAdded`` declarations are never read as permission to execute.

Only names that are deferred tools of the current catalog are ever granted.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import orjson

from desktop.host.tools.catalog import canonical_json
from desktop.host.tools.toolsearch import activated_names

SECTION_NAME = "tool_activation"
ACTIVATION_VERSION = 1
SUPPORTED_VERSIONS = frozenset({ACTIVATION_VERSION})

_BLOCK = re.compile(
    r"\A<tool_activation version=\"(?P<version>[^\"]*)\">\n(?P<body>.*)\n</tool_activation>\Z", re.DOTALL
)


class ActivationSectionError(ValueError):
    """The section text cannot be trusted; ``kind`` says why (shown in the inspector)."""

    def __init__(self, kind: Literal["invalid", "unknown-version"], message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class IdentityInputs:
    """What an activation is bound to. ``declarations`` are full pi-ai Tool dicts."""

    account: str
    model: str
    api: str
    endpoint: str
    declarations: tuple[Mapping[str, Any], ...]
    deferred_names: frozenset[str]

    def payload(self) -> dict[str, Any]:
        return {
            "v": ACTIVATION_VERSION,
            "account": self.account,
            "model": self.model,
            "api": self.api,
            "endpoint": self.endpoint.rstrip("/"),
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
) -> str:
    """SHA-256 (hex) over canonical JSON of the identity inputs."""
    return IdentityInputs(
        account, model, api, endpoint, tuple(declarations), frozenset(deferred_names)
    ).digest()


@dataclass(frozen=True)
class ActivationState:
    identity: str
    active: tuple[str, ...] = ()
    epoch: int = 0
    version: int = ACTIVATION_VERSION

    def __post_init__(self) -> None:
        object.__setattr__(self, "active", tuple(sorted(set(self.active))))

    def granting(self, names: Iterable[str]) -> ActivationState:
        return replace(self, active=(*self.active, *names))

    def is_active(self, name: str) -> bool:
        return name in self.active

    def to_checkpoint(self) -> dict[str, Any]:
        """The ``activation`` field of a compaction checkpoint."""
        return {
            "v": self.version,
            "identity": self.identity,
            "active": list(self.active),
            "epoch": self.epoch,
        }

    @classmethod
    def from_checkpoint(cls, data: object) -> ActivationState:
        """Inverse of ``to_checkpoint``; raises ``ActivationSectionError`` like ``parse_section``."""
        if not isinstance(data, Mapping):
            raise ActivationSectionError("invalid", "checkpoint activation is not an object")
        version = data.get("v")
        if not isinstance(version, int) or version not in SUPPORTED_VERSIONS:
            raise ActivationSectionError(
                "unknown-version", f"checkpoint activation version {version!r} is not supported by this app"
            )
        return _state_from_payload(data, version)


def _state_from_payload(data: Mapping[str, Any], version: int) -> ActivationState:
    identity, active, epoch = data.get("identity"), data.get("active"), data.get("epoch", 0)
    if not isinstance(identity, str) or not re.fullmatch(r"[0-9a-f]{64}", identity):
        raise ActivationSectionError("invalid", "tool_activation identity is not a SHA-256 hex digest")
    if not isinstance(active, list) or not all(isinstance(n, str) for n in active):
        raise ActivationSectionError("invalid", "tool_activation active list is not a list of names")
    if not isinstance(epoch, int) or isinstance(epoch, bool) or epoch < 0:
        raise ActivationSectionError("invalid", "tool_activation epoch is not a non-negative integer")
    return ActivationState(identity=identity, active=tuple(active), epoch=epoch, version=version)


def render_section(state: ActivationState) -> str:
    """The section text the model sees: a tagged block, a sentence, and the JSON payload."""
    listed = ", ".join(state.active) if state.active else "none"
    payload = orjson.dumps(
        {"v": state.version, "epoch": state.epoch, "identity": state.identity, "active": list(state.active)},
        option=orjson.OPT_SORT_KEYS,
    ).decode()
    return (
        f'<tool_activation version="{state.version}">\n'
        f"Deferred tools activated for execution (via ToolSearch): {listed}.\n"
        f"{payload}\n"
        "</tool_activation>"
    )


def parse_section(text: object) -> ActivationState:
    """Inverse of ``render_section``; raises ``ActivationSectionError`` on anything else."""
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
    """The neutral system message the runtime appends after tool results."""
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


def preserve_activation(
    replacement_sections: Mapping[str, str | None], current_sections: Mapping[str, str | None]
) -> dict[str, str | None]:
    """A temporary prompt replacement keeps the activation metadata of the current prompt."""
    sections = dict(replacement_sections)
    if SECTION_NAME in current_sections and SECTION_NAME not in sections:
        sections[SECTION_NAME] = current_sections[SECTION_NAME]
    return sections


RestoreSource = Literal["section", "section+toolsearch", "legacy", "none", "rejected"]


@dataclass(frozen=True)
class RestoreResult:
    """What restoration granted and why (the inspector shows ``reason``)."""

    active: frozenset[str]
    source: RestoreSource
    reason: str
    epoch: int = 0
    recovered: tuple[str, ...] = ()
    ignored: tuple[str, ...] = field(default=())


def _section_text(message: Mapping[str, Any]) -> tuple[bool, object]:
    if message.get("role") != "system":
        return False, None
    sections = message.get("sections")
    if isinstance(sections, Mapping) and SECTION_NAME in sections:
        return True, sections[SECTION_NAME]
    return False, None


def restore_activation(
    messages: Sequence[Mapping[str, Any]], *, identity: str, deferred_names: Collection[str]
) -> RestoreResult:
    """Recover execution activation from neutral messages (model order)."""
    known = frozenset(deferred_names)
    newest = -1
    text: object = None
    for index in range(len(messages) - 1, -1, -1):
        found, value = _section_text(messages[index])
        if found:
            newest, text = index, value
            break

    def evidence(start: int) -> list[str]:
        names: list[str] = []
        for message in messages[start:]:
            names.extend(activated_names(dict(message)))
        return list(dict.fromkeys(names))

    if newest < 0:
        names = evidence(0)
        granted = [n for n in names if n in known]
        ignored = tuple(n for n in names if n not in known)
        if not names:
            return RestoreResult(
                frozenset(), "none", "no activation section and no ToolSearch results in history"
            )
        return RestoreResult(
            frozenset(granted),
            "legacy",
            f"legacy history without a {SECTION_NAME} section: {len(granted)} tool(s) from successful ToolSearch results",
            ignored=ignored,
        )
    if text is None:
        return RestoreResult(frozenset(), "rejected", f"the newest {SECTION_NAME} section was removed (null)")
    try:
        state = parse_section(text)
    except ActivationSectionError as exc:
        return RestoreResult(
            frozenset(), "rejected", f"newest {SECTION_NAME} section rejected ({exc.kind}): {exc}"
        )
    if state.identity != identity:
        return RestoreResult(
            frozenset(),
            "rejected",
            f"newest {SECTION_NAME} section belongs to another account, route or catalog (identity mismatch)",
            epoch=state.epoch,
        )
    later = evidence(newest + 1)
    recovered = tuple(n for n in later if n in known and n not in state.active)
    kept = {n for n in state.active if n in known} | set(recovered)
    ignored = tuple(n for n in (*state.active, *later) if n not in known)
    if recovered:
        return RestoreResult(
            frozenset(kept),
            "section+toolsearch",
            f"{SECTION_NAME} section plus {len(recovered)} tool(s) from a newer successful ToolSearch result",
            epoch=state.epoch,
            recovered=recovered,
            ignored=ignored,
        )
    return RestoreResult(
        frozenset(kept),
        "section",
        f"{SECTION_NAME} section (epoch {state.epoch})",
        epoch=state.epoch,
        ignored=ignored,
    )
