"""The row shapes of a session file (design T1, T2), as pydantic models.

Every model allows extra fields so a row written by a newer app survives a round trip through an
older one unchanged (T7). Models are built on demand (``parse_row``), never for every row on open:
the reader keeps raw dicts so opening a long session costs little more than parsing its JSON,
and it does not even import this module (pydantic alone costs more than parsing a long session;
the envelope constants and row ids live in ``envelope``).
Messages stay plain dicts in pi-ai's JSON shape; only their ``role`` is checked here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from desktop.host.journal.envelope import APP_NAME as APP_NAME
from desktop.host.journal.envelope import MODEL_SYSTEM_VERSION as MODEL_SYSTEM_VERSION
from desktop.host.journal.envelope import ROW_TYPES as ROW_TYPES
from desktop.host.journal.envelope import SCHEMA_VERSION as SCHEMA_VERSION
from desktop.host.journal.envelope import new_row_id as new_row_id
from desktop.host.journal.envelope import now_ms as now_ms

# --- models ----------------------------------------------------------------------------------


class _Lenient(BaseModel):
    """Keeps unknown fields; omits optional fields that are absent instead of writing ``null``."""

    model_config = ConfigDict(extra="allow", strict=True)
    _omit_if_none: ClassVar[frozenset[str]] = frozenset()

    @model_serializer(mode="wrap")
    def _drop_absent(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            for name in self._omit_if_none:
                if name in data and data[name] is None:
                    del data[name]
        return data


def _require_role(message: Mapping[str, Any], role: str) -> None:
    if message.get("role") != role:
        raise ValueError(f"message role must be {role!r}, got {message.get('role')!r}")


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
    app: str = APP_NAME
    appVersion: str
    cwd: str


class UserRow(RowBase):
    type: Literal["user"] = "user"
    message: dict[str, Any]

    @field_validator("message")
    @classmethod
    def _role(cls, value: dict[str, Any]) -> dict[str, Any]:
        _require_role(value, "user")
        return value


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
    message: dict[str, Any]
    route: Route

    @field_validator("message")
    @classmethod
    def _role(cls, value: dict[str, Any]) -> dict[str, Any]:
        _require_role(value, "assistant")
        return value


class ToolResultRow(RowBase):
    type: Literal["toolResult"] = "toolResult"
    message: dict[str, Any]

    @field_validator("message")
    @classmethod
    def _role(cls, value: dict[str, Any]) -> dict[str, Any]:
        _require_role(value, "toolResult")
        return value


class ModelSystem(_Lenient):
    """Versioned neutral system message behind a hidden row.

    A version this app does not know is kept as-is and must grant nothing; only v1 is checked.
    """

    _omit_if_none = frozenset({"message"})
    v: int = MODEL_SYSTEM_VERSION
    message: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _v1_shape(self) -> ModelSystem:
        if self.v == MODEL_SYSTEM_VERSION:
            if self.message is None:
                raise ValueError("modelSystem v1 needs a message")
            _require_role(self.message, "system")
        return self

    @property
    def understood(self) -> bool:
        return self.v == MODEL_SYSTEM_VERSION


class SystemRow(RowBase):
    """Hidden system row: shown in the inspector, never in the chat."""

    _omit_if_none = frozenset({"modelSystem", "before", "label"})
    type: Literal["system"] = "system"
    modelSystem: ModelSystem | None = None
    before: str | None = None
    label: str | None = None


class Checkpoint(_Lenient):
    """The full effective system state saved at explicit compaction."""

    v: int = MODEL_SYSTEM_VERSION
    message: dict[str, Any]
    activation: dict[str, Any] | None = None
    route: dict[str, Any] = Field(default_factory=dict)


class CompactionRow(RowBase):
    _omit_if_none = frozenset({"checkpoint"})
    type: Literal["compaction"] = "compaction"
    summary: str
    firstKeptId: str
    tokensBefore: int
    checkpoint: Checkpoint | None = None


class NoteRow(RowBase):
    """A local note (an error, a fallback reason); never sent to the model."""

    _omit_if_none = frozenset({"data"})
    type: Literal["note"] = "note"
    level: Literal["info", "warning", "error"]
    text: str
    data: dict[str, Any] | None = None


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
