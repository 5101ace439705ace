"""The one schema of a session file: its header and rows, as msgspec types (design T1, T2, T7, T10).

The writer builds and checks rows with these types, the reader checks every line it reads
against them (``row_problem``, design T9), and forks and the foreign readers' outputs use the
same message shapes. msgspec rather than pydantic: ``status`` checks every line it reads, and
pydantic's import and schema building alone cost more than parsing a long session (design T10).

Messages stay plain dicts in pi-ai's JSON shape: they are described by ``TypedDict``s, checked
strictly (a bool is not a number) and kept as the very dict that was given, so key order and
unknown fields survive and are written back as they came. Content blocks are tagged structs,
so a block of an unknown ``type`` is named as such.

Every row allows extra fields so a row written by a newer app survives a round trip through an
older one unchanged (T7). Optional fields may be absent or ``null``. Rows of an unknown type, and
``modelSystem`` or checkpoint metadata of an unknown version, are kept and checked only for their
envelope: nothing reads them as a message, so they grant and show nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, NotRequired, TypedDict, TypeVar

from msgspec import UNSET, Meta, Struct, UnsetType, field

from desktop.host.journal.envelope import APP_NAME as APP_NAME
from desktop.host.journal.envelope import MODEL_SYSTEM_VERSION as MODEL_SYSTEM_VERSION
from desktop.host.journal.envelope import SCHEMA_VERSION as SCHEMA_VERSION
from desktop.host.journal.envelope import new_row_id as new_row_id
from desktop.host.journal.envelope import now_ms as now_ms
from desktop.host.schema import SchemaError, ShapeError, check, shape_error

Number = int | float
Object = dict[str, Any]
NonEmpty = Annotated[str, Meta(min_length=1)]

# --- content blocks (tagged structs, used to check) and messages (plain dicts) ------------------


class TextBlock(Struct, tag_field="type", tag="text"):
    text: str
    textSignature: str | None = None


class ThinkingBlock(Struct, tag_field="type", tag="thinking"):
    thinking: str
    thinkingSignature: str | None = None
    redacted: bool | None = None


class ImageBlock(Struct, tag_field="type", tag="image"):
    data: str
    mimeType: str


class ToolCallBlock(Struct, tag_field="type", tag="toolCall"):
    id: str
    name: str
    arguments: Object
    thoughtSignature: str | None = None
    namespace: str | None = None


UserBlock = TextBlock | ImageBlock
AssistantBlock = TextBlock | ThinkingBlock | ToolCallBlock
AnyBlock = TextBlock | ThinkingBlock | ToolCallBlock | ImageBlock


class Cost(TypedDict):
    input: NotRequired[Number | None]
    output: NotRequired[Number | None]
    cacheRead: NotRequired[Number | None]
    cacheWrite: NotRequired[Number | None]
    total: NotRequired[Number | None]


class Usage(TypedDict):
    input: NotRequired[Number | None]
    output: NotRequired[Number | None]
    cacheRead: NotRequired[Number | None]
    cacheWrite: NotRequired[Number | None]
    cacheWrite1h: NotRequired[Number | None]
    reasoning: NotRequired[Number | None]
    totalTokens: NotRequired[Number | None]
    cost: NotRequired[Cost | None]


class Tool(TypedDict):
    name: str
    description: str
    parameters: Object


class ToolReference(TypedDict):
    name: str


class SystemMessage(TypedDict):
    """A neutral system message (``modelSystem`` and checkpoints). ``tool_activation`` sections
    are text here; whether one grants anything is decided by the restore
    (``desktop.session.activation``)."""

    role: Literal["system"]
    content: str | list[TextBlock]
    sections: NotRequired[dict[str, str | None] | None]
    toolsAdded: NotRequired[list[Tool] | None]
    toolsRemoved: NotRequired[list[ToolReference] | None]
    timestamp: NotRequired[int | None]


class UserMessage(TypedDict):
    role: Literal["user"]
    content: str | list[UserBlock]
    timestamp: NotRequired[int | None]


class AssistantMessage(TypedDict):
    role: Literal["assistant"]
    content: list[AssistantBlock]
    api: NotRequired[str | None]
    provider: NotRequired[str | None]
    model: NotRequired[str | None]
    stopReason: NotRequired[str | None]
    errorMessage: NotRequired[str | None]
    responseId: NotRequired[str | None]
    responseModel: NotRequired[str | None]
    usage: NotRequired[Usage | None]
    timestamp: NotRequired[int | None]


class ToolResultMessage(TypedDict):
    role: Literal["toolResult"]
    toolCallId: str
    toolName: str
    content: list[UserBlock]
    isError: NotRequired[bool | None]
    usage: NotRequired[Usage | None]
    timestamp: NotRequired[int | None]


# --- rows (structs) ----------------------------------------------------------------------------

_S = TypeVar("_S", bound="Lenient")


class Lenient(Struct, kw_only=True, dict=True):
    """A stored object: keeps its unknown fields (``extra``) and omits the optional fields named
    in ``_omit_if_none`` when they are absent, instead of writing ``null``."""

    _omit_if_none: ClassVar[frozenset[str]] = frozenset()
    #: Metadata fields whose ``v`` picks their shape (``_build``): v1 is read, others kept as-is.
    _versioned: ClassVar[frozenset[str]] = frozenset()

    @property
    def extra(self) -> dict[str, Any]:
        """The fields this app does not know, in the order they came."""
        found: dict[str, Any] = vars(self).setdefault("_extra", {})
        return found

    def to_json(self) -> dict[str, Any]:
        """The object as the JSON written to the file (extras included, absent fields omitted)."""
        data: dict[str, Any] = {}
        for name in self.__struct_fields__:
            value = getattr(self, name)
            if value is None and name in self._omit_if_none:
                continue
            data[name] = value.to_json() if isinstance(value, Lenient) else value
        data.update(self.extra)
        return data


class RowBase(Lenient, kw_only=True):
    """The envelope every line shares: ``type``, ``v``, ``id``, ``ts``."""

    type: str
    v: int = SCHEMA_VERSION
    id: NonEmpty = field(default_factory=new_row_id)
    ts: int = field(default_factory=now_ms)


class SessionHeader(RowBase, kw_only=True):
    type: Literal["session"] = "session"
    id: NonEmpty  # the session's id: read, never made up
    app: str = APP_NAME
    appVersion: str
    cwd: str


class UserRow(RowBase, kw_only=True):
    type: Literal["user"] = "user"
    message: UserMessage


class Route(Lenient, kw_only=True):
    """Where an assistant message came from; enough to tell whether a prompt cache can still apply."""

    _omit_if_none = frozenset({"account"})
    provider: str
    model: str
    api: str
    baseUrl: str
    account: str | None = None


class AssistantRow(RowBase, kw_only=True):
    type: Literal["assistant"] = "assistant"
    message: AssistantMessage
    route: Route


class ToolResultRow(RowBase, kw_only=True):
    type: Literal["toolResult"] = "toolResult"
    message: ToolResultMessage


class LaterMetadata(Lenient, kw_only=True):
    """``modelSystem`` or checkpoint metadata of a version this app does not know: kept as-is,
    never read, so it grants and shows nothing."""

    v: int


class ModelSystem(Lenient, kw_only=True):
    """Versioned neutral system message behind a hidden row (v1, the version this app reads)."""

    v: int = MODEL_SYSTEM_VERSION
    message: SystemMessage


class Checkpoint(Lenient, kw_only=True):
    """The full effective system state saved at explicit compaction (v1)."""

    v: int = MODEL_SYSTEM_VERSION
    message: SystemMessage
    activation: Object | None = None
    route: Object | None = field(default_factory=dict)


if TYPE_CHECKING:
    SystemMetadata = ModelSystem | LaterMetadata
    CheckpointMetadata = Checkpoint | LaterMetadata
else:  # msgspec checks v1; metadata of another version is checked as LaterMetadata by _build
    SystemMetadata = ModelSystem
    CheckpointMetadata = Checkpoint


class SystemRow(RowBase, kw_only=True):
    """Hidden system row: shown in the inspector, never in the chat."""

    _omit_if_none = frozenset({"modelSystem", "before", "label"})
    _versioned = frozenset({"modelSystem"})
    type: Literal["system"] = "system"
    modelSystem: SystemMetadata | None = None
    before: str | None = None
    label: str | None = None


class CompactionRow(RowBase, kw_only=True):
    _omit_if_none = frozenset({"checkpoint", "usage"})
    _versioned = frozenset({"checkpoint"})
    type: Literal["compaction"] = "compaction"
    summary: str
    firstKeptId: str
    tokensBefore: int
    checkpoint: CheckpointMetadata | None = None
    usage: Usage | None = None


class NoteRow(RowBase, kw_only=True):
    """A local note (an error, a fallback reason); never sent to the model."""

    _omit_if_none = frozenset({"data"})
    type: Literal["note"] = "note"
    level: Literal["info", "warning", "error"]
    text: str
    data: Object | None = None


class OpaqueRow(RowBase, kw_only=True):
    """A row of a type or version this app does not understand: kept and written back unchanged."""


Row = UserRow | AssistantRow | ToolResultRow | SystemRow | CompactionRow | NoteRow | OpaqueRow

ROW_MODELS: dict[str, type[RowBase]] = {
    "user": UserRow,
    "assistant": AssistantRow,
    "toolResult": ToolResultRow,
    "system": SystemRow,
    "compaction": CompactionRow,
    "note": NoteRow,
}


def _later(value: Any) -> bool:
    return isinstance(value, dict) and not (
        type(value.get("v")) is int and value["v"] == MODEL_SYSTEM_VERSION
    )


def build(model: type[_S], data: Mapping[str, Any], prefix: str = "") -> _S:
    """``data`` as a ``model``: checked, with every given value kept as given (messages stay the
    very dicts given, unknown fields are kept in ``extra``). Raises ``SchemaError``."""
    later = [name for name in model._versioned if _later(data.get(name))]
    source = {**data, **dict.fromkeys(later)} if later else data
    built: _S = check(source, model, prefix)
    fields = built.__struct_fields__
    for name, value in data.items():
        if name not in fields:
            built.extra[name] = value
        elif name in later:
            setattr(built, name, build(LaterMetadata, value, f"{prefix}.{name}"))
        else:
            current = getattr(built, name)
            if isinstance(current, Lenient):
                setattr(built, name, build(type(current), value, f"{prefix}.{name}"))
            else:
                setattr(built, name, value)
    return built


def parse_row(data: Mapping[str, Any]) -> RowBase:
    """Validate one raw row; unknown types and newer versions become ``OpaqueRow``.

    Raises ``SchemaError`` (a ``ValueError``) when a known row is malformed.
    """
    model = ROW_MODELS.get(str(data.get("type")))
    version = data.get("v")
    if model is None or (isinstance(version, int) and version > SCHEMA_VERSION):
        return build(OpaqueRow, data)
    return build(model, data)


# --- a message row read straight from its line (the reader's fast path, design X29) ------------


class UserRowLine(UserRow, kw_only=True):
    """A ``UserRow`` as its line must hold it: the envelope's ``id`` and ``v`` given, not
    defaulted (a line without them is set aside), and ``ts`` unset when absent."""

    id: NonEmpty
    v: int
    ts: int | UnsetType = UNSET  # type: ignore[assignment]  # absent, not now: as the full path reads it


class AssistantRowLine(AssistantRow, kw_only=True):
    """An ``AssistantRow`` as its line must hold it (see ``UserRowLine``)."""

    id: NonEmpty
    v: int
    ts: int | UnsetType = UNSET  # type: ignore[assignment]  # absent, not now: as the full path reads it


class ToolResultRowLine(ToolResultRow, kw_only=True):
    """A ``ToolResultRow`` as its line must hold it (see ``UserRowLine``)."""

    id: NonEmpty
    v: int
    ts: int | UnsetType = UNSET  # type: ignore[assignment]  # absent, not now: as the full path reads it


#: The row type's name as a line written by this app starts (``{"type":"user",``), and the
#: type that checks such a line as it is decoded.
MESSAGE_ROW_LINES: dict[bytes, type[UserRowLine | AssistantRowLine | ToolResultRowLine]] = {
    b"user": UserRowLine,
    b"assistant": AssistantRowLine,
    b"toolResult": ToolResultRowLine,
}


# --- problems, in one line naming the field (design T9) -----------------------------------------


def row_problem(row: Mapping[str, Any]) -> ShapeError | None:
    """Why a row of this schema version cannot be used (the field and what is wrong), or None.

    Rows of an unknown type pass: nothing reads them as a message (T7)."""
    model = ROW_MODELS.get(row.get("type"))  # type: ignore[arg-type]  # the reader made it text
    return None if model is None else problem_of(model, row)


def problem_of(model: type[Lenient], value: Mapping[str, Any]) -> ShapeError | None:
    """The first problem of ``value`` as a ``model``, as a ``ShapeError``, or None."""
    try:
        if model._versioned and any(_later(value.get(name)) for name in model._versioned):
            build(model, value)
        else:
            check(value, model)
    except SchemaError as error:
        return shape_error(error, value)
    return None
