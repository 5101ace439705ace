"""The one schema of a session file: its header and rows, as pydantic models (design T1, T2, T7, T10).

The writer builds and checks rows with these models, the reader checks every line it reads
against them (``row_problem``, design T9), and forks and the foreign readers' outputs use the
same message shapes. Messages stay plain dicts in pi-ai's JSON shape: they are described by
``TypedDict``s, checked strictly (a bool is not a number), kept as the very dict that was
given (so key order and unknown fields survive) and written back as they came.

Every model and message allows extra fields so a row written by a newer app survives a round
trip through an older one unchanged (T7). Optional fields may be absent or ``null``. Rows of an
unknown type, and ``modelSystem`` or checkpoint metadata of an unknown version, are kept and
checked only for their envelope: nothing reads them as a message, so they grant and show nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, ClassVar, Literal, NotRequired, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    SerializerFunctionWrapHandler,
    Tag,
    ValidationError,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    model_serializer,
    with_config,
)
from typing_extensions import TypedDict  # pydantic reads this one on Python 3.11

from desktop.host.journal.envelope import APP_NAME as APP_NAME
from desktop.host.journal.envelope import MODEL_SYSTEM_VERSION as MODEL_SYSTEM_VERSION
from desktop.host.journal.envelope import ROW_TYPES as ROW_TYPES
from desktop.host.journal.envelope import SCHEMA_VERSION as SCHEMA_VERSION
from desktop.host.journal.envelope import new_row_id as new_row_id
from desktop.host.journal.envelope import now_ms as now_ms

_OPEN = ConfigDict(extra="allow", strict=True)
_T = TypeVar("_T")

Number = int | float
Object = dict[str, Any]

# --- content blocks and messages (plain dicts) --------------------------------------------------


@with_config(_OPEN)
class TextBlock(TypedDict):
    type: Literal["text"]
    text: str
    textSignature: NotRequired[str | None]


@with_config(_OPEN)
class ThinkingBlock(TypedDict):
    type: Literal["thinking"]
    thinking: str
    thinkingSignature: NotRequired[str | None]
    redacted: NotRequired[bool | None]


@with_config(_OPEN)
class ImageBlock(TypedDict):
    type: Literal["image"]
    data: str
    mimeType: str


@with_config(_OPEN)
class ToolCallBlock(TypedDict):
    type: Literal["toolCall"]
    id: str
    name: str
    arguments: Object
    thoughtSignature: NotRequired[str | None]
    namespace: NotRequired[str | None]


UserBlock = Annotated[TextBlock | ImageBlock, Field(discriminator="type")]
AssistantBlock = Annotated[TextBlock | ThinkingBlock | ToolCallBlock, Field(discriminator="type")]
AnyBlock = Annotated[TextBlock | ThinkingBlock | ToolCallBlock | ImageBlock, Field(discriminator="type")]


@with_config(_OPEN)
class Cost(TypedDict):
    input: NotRequired[Number | None]
    output: NotRequired[Number | None]
    cacheRead: NotRequired[Number | None]
    cacheWrite: NotRequired[Number | None]
    total: NotRequired[Number | None]


@with_config(_OPEN)
class Usage(TypedDict):
    input: NotRequired[Number | None]
    output: NotRequired[Number | None]
    cacheRead: NotRequired[Number | None]
    cacheWrite: NotRequired[Number | None]
    cacheWrite1h: NotRequired[Number | None]
    reasoning: NotRequired[Number | None]
    totalTokens: NotRequired[Number | None]
    cost: NotRequired[Cost | None]


@with_config(_OPEN)
class Tool(TypedDict):
    name: str
    description: str
    parameters: Object


@with_config(_OPEN)
class ToolReference(TypedDict):
    name: str


@with_config(_OPEN)
class SystemMessage(TypedDict):
    """A neutral system message (``modelSystem`` and checkpoints). ``tool_activation`` sections
    are text here; whether one grants anything is decided by the restore
    (``desktop.session.activation``)."""

    role: Literal["system"]
    content: str | list[Annotated[TextBlock, Field(discriminator="type")]]
    sections: NotRequired[dict[str, str | None] | None]
    toolsAdded: NotRequired[list[Tool] | None]
    toolsRemoved: NotRequired[list[ToolReference] | None]
    timestamp: NotRequired[int | None]


@with_config(_OPEN)
class UserMessage(TypedDict):
    role: Literal["user"]
    content: str | list[UserBlock]
    timestamp: NotRequired[int | None]


@with_config(_OPEN)
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


@with_config(_OPEN)
class ToolResultMessage(TypedDict):
    role: Literal["toolResult"]
    toolCallId: str
    toolName: str
    content: list[UserBlock]
    isError: NotRequired[bool | None]
    usage: NotRequired[Usage | None]
    timestamp: NotRequired[int | None]


def _as_given(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """Check ``value`` against its shape but keep the dict that was given: its key order and
    unknown fields are what is written back, and nothing is copied."""
    handler(value)
    return value


#: A message field: checked against its ``TypedDict``, stored as the given dict.
Checked = Annotated[_T, WrapValidator(_as_given)]

# --- rows (models) ---------------------------------------------------------------------------


class _Lenient(BaseModel):
    """Keeps unknown fields; omits optional fields that are absent instead of writing ``null``."""

    model_config = _OPEN
    _omit_if_none: ClassVar[frozenset[str]] = frozenset()

    @model_serializer(mode="wrap")
    def _drop_absent(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            for name in self._omit_if_none:
                if name in data and data[name] is None:
                    del data[name]
        return data


class RowBase(_Lenient):
    """The envelope every line shares: ``type``, ``v``, ``id``, ``ts``."""

    type: str
    v: int = SCHEMA_VERSION
    id: str = Field(default_factory=new_row_id, min_length=1)
    ts: int = Field(default_factory=now_ms)

    def to_json(self) -> dict[str, Any]:
        """The row as the JSON object written to the file (extras included, absent fields omitted)."""
        data: dict[str, Any] = self.model_dump(mode="json")
        return data


class SessionHeader(RowBase):
    type: Literal["session"] = "session"
    id: str = Field(min_length=1)  # the session's id: read, never made up
    app: str = APP_NAME
    appVersion: str
    cwd: str


class UserRow(RowBase):
    type: Literal["user"] = "user"
    message: Checked[UserMessage]


class Route(_Lenient):
    """Where an assistant message came from; enough to tell whether a prompt cache can still apply."""

    _omit_if_none = frozenset({"account"})
    provider: str
    model: str
    api: str
    baseUrl: str
    account: str | None = None


class AssistantRow(RowBase):
    type: Literal["assistant"] = "assistant"
    message: Checked[AssistantMessage]
    route: Route


class ToolResultRow(RowBase):
    type: Literal["toolResult"] = "toolResult"
    message: Checked[ToolResultMessage]


def _version_tag(value: Any) -> str:
    """``v1`` for metadata of the version this app understands, ``later`` for any other."""
    version = value.get("v") if isinstance(value, Mapping) else getattr(value, "v", None)
    return "v1" if type(version) is int and version == MODEL_SYSTEM_VERSION else "later"


class ModelSystem(_Lenient):
    """Versioned neutral system message behind a hidden row (v1, the version this app reads)."""

    v: int = MODEL_SYSTEM_VERSION
    message: Checked[SystemMessage]

    @property
    def understood(self) -> bool:
        return True


class LaterMetadata(_Lenient):
    """``modelSystem`` or checkpoint metadata of a version this app does not know: kept as-is,
    never read, so it grants and shows nothing."""

    v: int

    @property
    def understood(self) -> bool:
        return False


class SystemRow(RowBase):
    """Hidden system row: shown in the inspector, never in the chat."""

    _omit_if_none = frozenset({"modelSystem", "before", "label"})
    type: Literal["system"] = "system"
    modelSystem: (
        Annotated[
            Annotated[ModelSystem, Tag("v1")] | Annotated[LaterMetadata, Tag("later")],
            Discriminator(_version_tag),
        ]
        | None
    ) = None
    before: str | None = None
    label: str | None = None


class Checkpoint(_Lenient):
    """The full effective system state saved at explicit compaction (v1)."""

    v: int = MODEL_SYSTEM_VERSION
    message: Checked[SystemMessage]
    activation: Object | None = None
    route: Object | None = Field(default_factory=dict)


class CompactionRow(RowBase):
    _omit_if_none = frozenset({"checkpoint", "usage"})
    type: Literal["compaction"] = "compaction"
    summary: str
    firstKeptId: str
    tokensBefore: int
    checkpoint: (
        Annotated[
            Annotated[Checkpoint, Tag("v1")] | Annotated[LaterMetadata, Tag("later")],
            Discriminator(_version_tag),
        ]
        | None
    ) = None
    usage: Checked[Usage] | None = None


class NoteRow(RowBase):
    """A local note (an error, a fallback reason); never sent to the model."""

    _omit_if_none = frozenset({"data"})
    type: Literal["note"] = "note"
    level: Literal["info", "warning", "error"]
    text: str
    data: Object | None = None


class OpaqueRow(RowBase):
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


def parse_row(data: Mapping[str, Any]) -> RowBase:
    """Validate one raw row; unknown types and newer versions become ``OpaqueRow``.

    Raises ``pydantic.ValidationError`` (a ``ValueError``) when a known row is malformed.
    """
    model = ROW_MODELS.get(str(data.get("type")))
    version = data.get("v")
    if model is None or (isinstance(version, int) and version > SCHEMA_VERSION):
        return OpaqueRow.model_validate(dict(data))
    return model.model_validate(dict(data))


# --- problems, in one line naming the field (design T9) -----------------------------------------


class ShapeError(Exception):
    """A row does not have the shape its type promises; ``field`` is a dotted path into the row."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def row_problem(row: Mapping[str, Any]) -> ShapeError | None:
    """Why a row of this schema version cannot be used (the field and what is wrong), or None.

    Rows of an unknown type pass: nothing reads them as a message (T7)."""
    model = ROW_MODELS.get(row.get("type"))  # type: ignore[arg-type]  # the reader made it text
    return None if model is None else problem_of(model.model_validate, row)


def header_problem(header: Mapping[str, Any]) -> ShapeError | None:
    """Why a v1 session header cannot be used, or None."""
    return problem_of(SessionHeader.model_validate, header)


def problem_of(validate: Callable[[Any], object], value: Any) -> ShapeError | None:
    """Run ``validate`` on ``value`` and say its first problem as a ``ShapeError``, or None."""
    try:
        validate(value)
    except ValidationError as error:
        return shape_error(error, value)
    return None


_EXPECTED = {
    "string_type": "text",
    "int_type": "a whole number",
    "float_type": "a number",
    "bool_type": "true or false",
    "list_type": "a list",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "none_required": "null",
}


def type_name(value: object) -> str:
    """How a JSON value's type is named in a message."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _walk(data: Any, loc: tuple[int | str, ...], missing: bool) -> tuple[str, Any]:
    """The dotted field a pydantic location names in ``data``, and the value there.

    A location also names the union member that was tried (``str``, a block's tag, ``v1``);
    those parts name nothing in the data and are left out, which the data itself tells."""
    field, value = "", data
    parts = list(loc)
    while parts:
        part = parts.pop(0)
        if type(value) is list and type(part) is int and 0 <= part < len(value):
            field, value = f"{field}[{part}]", value[part]
            if type(value) is dict and parts and parts[0] == value.get("type") and len(parts) > 1:
                parts.pop(0)  # the tag of a content block
        elif type(value) is dict and type(part) is str and (part in value or (missing and not parts)):
            field, value = (f"{field}.{part}" if field else part), value.get(part)
    return field or "(the row)", value


def shape_error(error: ValidationError, data: Any) -> ShapeError:
    """The deepest problem pydantic found, as one line: ``FIELD must be EXPECTED, not WHAT``."""
    found: dict[str, list[Any]] = {}
    values: dict[str, Any] = {}
    for detail in error.errors(include_url=False):
        field, value = _walk(data, detail["loc"], detail["type"] == "missing")
        found.setdefault(field, []).append(detail)
        values[field] = value
    field = max(found, key=lambda name: name.count(".") + name.count("["))
    details, value = found[field], values[field]
    kinds = [detail["type"] for detail in details]
    if "missing" in kinds:
        return ShapeError(field, f"{field} is missing")
    if "string_too_short" in kinds:
        return ShapeError(field, f"{field} must not be empty")
    for detail in details:
        context = detail.get("ctx") or {}
        if detail["type"] == "union_tag_invalid":
            where = f"{field}.type"
            return ShapeError(
                where, f"{where} must be one of {context['expected_tags']}, not {context['tag']!r}"
            )
        if detail["type"] == "value_error":  # a rule of our own, said as "FIELD is ..."
            return ShapeError(field, f"{field} {context['error']}")
        if detail["type"] == "literal_error":
            return ShapeError(field, f"{field} must be {context['expected']}, not {value!r}")
    expected = [_EXPECTED[kind] for kind in kinds if kind in _EXPECTED]
    if "a whole number" in expected and "a number" in expected:
        expected.remove("a whole number")
    if not expected:
        return ShapeError(field, f"{field}: {details[0]['msg']}")
    return ShapeError(
        field, f"{field} must be {' or '.join(dict.fromkeys(expected))}, not {type_name(value)}"
    )
