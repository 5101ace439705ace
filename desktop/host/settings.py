"""The user settings file (``<data dir>/settings.json``): MCP servers, hooks, mode, extensions.

The shape follows Claude Code where it has one, so an existing ``mcpServers`` block can be
pasted in unchanged::

    {
      "permissions": {"mode": "ask"},
      "mcpServers": {"files": {"command": "python", "args": ["server.py"], "env": {"K": "V"}}},
      "hooks": {"PreToolUse": [{"matcher": "bash|write",
                                "hooks": [{"type": "command", "command": "./check.sh", "timeout": 30}]}]},
      "extensions": ["~/pi-extensions/words.py"],
      "tools": {"declarations": "auto", "bash": {"inheritCredentials": false}},
      "network": {"proxy": "http://proxy.corp:8080", "caBundle": "~/corp-root.pem", "readTimeout": 120}
    }

Unknown keys are kept (other parts of the app add their own); a bad value is reported with
the file and the field so the user can fix it.

The file carries a schema ``"version"`` (a file without one is version 0). Each change of
shape is a named migration from one version to the next. Reading migrates in memory only
(reading never writes); ``upgrade_settings_file``, run once when the window starts, applies
the pending migrations to the file itself, keeps the old file beside it as a backup, and
records each migration's name in ``"appliedMigrations"``, so each runs once. A file from a
newer Pi Desktop is read as it is and never written. The format stays backward compatible: an
older app ignores ``version`` and ``appliedMigrations`` like any other unknown key.

The migration records are named tuples, not frozen dataclasses: every open (``status`` too)
imports this module, and on Python 3.11 a frozen dataclass costs about 1 ms to create
(design D6). The models are declared like dataclasses and built by ``_Model`` for the same
reason.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import re
import types
import typing
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, NamedTuple, Self

import orjson

from desktop.host.paths import data_dir

if TYPE_CHECKING:
    import logging


SETTINGS_FILE = "settings.json"
SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
#: The schema version this build writes; a file without ``version`` is version 0.
SETTINGS_VERSION: Final = 1


class SettingsError(Exception):
    """The settings file is unreadable or invalid; the message names the file and the field."""


class SettingsValueError(ValueError):
    """One invalid value: where it is (``hooks.PreToolUse.0.matcher``) and what is wrong."""

    def __init__(self, loc: tuple[str | int, ...], problem: str) -> None:
        self.loc = loc
        self.problem = problem
        super().__init__(f"{'.'.join(str(part) for part in loc) or 'settings'}: {problem}")


# The models below are plain dataclasses checked by ``_check`` against their annotations:
# every command reads the settings, and importing pydantic costs more than a whole read-only
# command (design D6). Like the models they replace, each keeps unknown keys (``model_extra``),
# accepts a mapping for a nested model, and names the field of a bad value.

_TYPE_PROBLEMS = {
    str: "Input should be a valid string",
    bool: "Input should be a valid boolean",
    int: "Input should be a valid integer",
    float: "Input should be a valid number",
}


def _check(value: Any, kind: Any, loc: tuple[str | int, ...]) -> Any:
    """``value`` as ``kind`` (an annotation the models use), or ``SettingsValueError``."""
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin is typing.Literal:
        if value not in args:
            allowed = ", ".join(repr(a) for a in args)
            raise SettingsValueError(loc, f"Input should be one of {allowed}, not {value!r}")
        return value
    if origin in (types.UnionType, typing.Union):
        if value is None and type(None) in args:
            return None
        (inner,) = [a for a in args if a is not type(None)]
        return _check(value, inner, loc)
    if origin is list:
        if not isinstance(value, list):
            raise SettingsValueError(loc, "Input should be a valid list")
        return [_check(item, args[0], (*loc, index)) for index, item in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise SettingsValueError(loc, "Input should be a valid dictionary")
        return {_check(key, args[0], loc): _check(item, args[1], (*loc, key)) for key, item in value.items()}
    if isinstance(kind, type) and issubclass(kind, _Model):
        if isinstance(value, kind):
            return value
        if not isinstance(value, dict):
            raise SettingsValueError(loc, "Input should be a valid dictionary or instance")
        return kind.model_validate(value, loc=loc)
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if type(value) is not kind:
        raise SettingsValueError(loc, _TYPE_PROBLEMS.get(kind, f"Input should be {kind.__name__}"))
    return value


#: Each model's field annotations, resolved once (on first use, never at import).
_FIELD_TYPES: dict[type, dict[str, Any]] = {}


class _Field(NamedTuple):
    """One field of a model, as its class declares it (``dataclasses.MISSING``: none given)."""

    name: str
    default: Any
    default_factory: Any


def _fields(cls: type[_Model]) -> tuple[_Field, ...]:
    return cls._model_fields


@typing.dataclass_transform(field_specifiers=(dataclasses.field,))
class _Model:
    """A model class that checks its fields on construction and keeps unknown keys.

    Declared like a dataclass (annotated fields, ``dataclasses.field`` for a factory) and
    built like one, with ``__init__``, ``__eq__`` and ``__repr__`` over those fields, but by
    this class rather than by ``@dataclass``: every command reads the settings, and on Python
    3.11 a dataclass costs about half a millisecond to create, eight models 4 ms (design D6).
    """

    model_extra: dict[str, Any]
    _model_fields: typing.ClassVar[tuple[_Field, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fields = []
        for name in inspect.get_annotations(cls):  # its own fields, in order
            declared = cls.__dict__.get(name, dataclasses.MISSING)
            if isinstance(declared, dataclasses.Field):
                fields.append(_Field(name, declared.default, declared.default_factory))
                delattr(cls, name)
            else:
                fields.append(_Field(name, declared, dataclasses.MISSING))
        cls._model_fields = tuple(fields)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        fields = self._model_fields
        if len(args) > len(fields):
            raise TypeError(
                f"{type(self).__name__}() takes {len(fields)} positional arguments, not {len(args)}"
            )
        for field, value in zip(fields, args, strict=False):
            if field.name in kwargs:
                raise TypeError(f"{type(self).__name__}() got multiple values for argument {field.name!r}")
            kwargs[field.name] = value
        for field in fields:
            if field.name in kwargs:
                value = kwargs.pop(field.name)
            elif field.default is not dataclasses.MISSING:
                value = field.default
            elif field.default_factory is not dataclasses.MISSING:
                value = field.default_factory()
            else:
                raise TypeError(f"{type(self).__name__}() missing required argument: {field.name!r}")
            setattr(self, field.name, value)
        if kwargs:
            raise TypeError(
                f"{type(self).__name__}() got an unexpected keyword argument {next(iter(kwargs))!r}"
            )
        self.__post_init__()

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, f.name) == getattr(other, f.name) for f in self._model_fields)

    __hash__ = None  # type: ignore[assignment]  # mutable, as a dataclass with eq is

    def __repr__(self) -> str:
        shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in self._model_fields)
        return f"{type(self).__qualname__}({shown})"

    @classmethod
    def _field_types(cls) -> dict[str, Any]:
        hints = _FIELD_TYPES.get(cls)
        if hints is None:
            every = typing.get_type_hints(cls)
            hints = _FIELD_TYPES[cls] = {f.name: every[f.name] for f in _fields(cls)}
        return hints

    def __post_init__(self) -> None:
        self._loc: tuple[str | int, ...] = getattr(self, "_loc", ())
        for name, kind in self._field_types().items():
            setattr(self, name, _check(getattr(self, name), kind, (*self._loc, name)))
        if not hasattr(self, "model_extra"):
            self.model_extra = {}
        self._validate()

    def _validate(self) -> None:
        """Checks across a field's value (a regular expression, a name rule)."""

    @classmethod
    def model_validate(cls, raw: Any, *, loc: tuple[str | int, ...] = ()) -> Self:
        if not isinstance(raw, dict):
            raise SettingsValueError(loc, "Input should be a valid dictionary")
        known = cls._field_types()
        required = [f.name for f in _fields(cls) if _required(f)]
        for name in required:
            if name not in raw:
                raise SettingsValueError((*loc, name), "Field required")
        model = cls.__new__(cls)
        model._loc = loc
        model.model_extra = {k: v for k, v in raw.items() if k not in known}
        for field in _fields(cls):
            if field.name in raw:
                value = raw[field.name]
            elif field.default is not dataclasses.MISSING:
                value = field.default
            else:
                value = typing.cast(Callable[[], Any], field.default_factory)()
            object.__setattr__(model, field.name, value)
        model.__post_init__()
        return model


def _required(field: _Field) -> bool:
    return field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING


class McpServerConfig(_Model):
    command: str
    args: list[str] = dataclasses.field(default_factory=list)
    env: dict[str, str] = dataclasses.field(default_factory=dict)
    cwd: str | None = None
    disabled: bool = False
    startupTimeout: float = 20.0
    callTimeout: float = 120.0


class HookCommand(_Model):
    command: str
    type: Literal["command"] = "command"
    timeout: float = 30.0


class HookMatcher(_Model):
    matcher: str = ""
    hooks: list[HookCommand] = dataclasses.field(default_factory=list)

    def _validate(self) -> None:
        try:
            re.compile(self.matcher)
        except re.error as exc:
            raise SettingsValueError(
                (*self._loc, "matcher"), f"matcher {self.matcher!r} is not a valid regular expression: {exc}"
            ) from exc


class HooksConfig(_Model):
    PreToolUse: list[HookMatcher] = dataclasses.field(default_factory=list)


class PermissionsConfig(_Model):
    mode: Literal["ask", "accept-edits", "read-only", "full-access"] = "ask"


class BashConfig(_Model):
    """``inheritCredentials``: ``false`` (default) runs ``bash`` without the provider credential
    variables (``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``, ``AWS_SECRET_ACCESS_KEY``, ...) in its
    environment, so a command the model runs cannot read them; ``true`` passes them through
    (known values are still redacted from what the command prints, design A9)."""

    inheritCredentials: bool = False


class ToolsConfig(_Model):
    """``declarations``: ``"auto"`` (the route decides: the complete catalog from the first
    request on the verified deepseek-flash binding, on demand elsewhere) or ``"on-demand"``
    (publish deferred schemas only when ToolSearch activates them, on every route).
    ``bash``: see ``BashConfig``."""

    declarations: Literal["auto", "on-demand"] = "auto"
    bash: BashConfig = dataclasses.field(default_factory=BashConfig)


class NetworkConfig(_Model):
    """How provider requests reach the network (design W3). ``proxy``: ``http://host:port``
    (``user:password@`` allowed), used instead of ``HTTPS_PROXY``/``HTTP_PROXY``; ``noProxy``:
    comma-separated hosts reached directly (instead of ``NO_PROXY``); ``caBundle``: a PEM
    file of CA certificates to trust besides the system's (a TLS-inspecting proxy's root);
    ``connectTimeout`` / ``readTimeout``: seconds to connect, and of silence while waiting
    for the answer; ``maxRetries``: attempts after the first on a rate limit, an overload or
    a failed connection."""

    proxy: str | None = None
    noProxy: str | None = None
    caBundle: str | None = None
    connectTimeout: float = 10.0
    readTimeout: float = 120.0
    maxRetries: int = 2

    def _validate(self) -> None:
        for name in ("connectTimeout", "readTimeout"):
            if not 0 < getattr(self, name) <= 3600:
                raise SettingsValueError((*self._loc, name), "must be more than 0 and at most 3600 seconds")
        if not 0 <= self.maxRetries <= 10:
            raise SettingsValueError((*self._loc, "maxRetries"), "must be a whole number from 0 to 10")


class Settings(_Model):
    version: int = SETTINGS_VERSION
    appliedMigrations: list[str] = dataclasses.field(default_factory=list)
    permissions: PermissionsConfig = dataclasses.field(default_factory=PermissionsConfig)
    mcpServers: dict[str, McpServerConfig] = dataclasses.field(default_factory=dict)
    hooks: HooksConfig = dataclasses.field(default_factory=HooksConfig)
    extensions: list[str] = dataclasses.field(default_factory=list)
    tools: ToolsConfig = dataclasses.field(default_factory=ToolsConfig)
    network: NetworkConfig = dataclasses.field(default_factory=NetworkConfig)

    def _validate(self) -> None:
        for name in self.mcpServers:
            if not SERVER_NAME.match(name):
                raise SettingsValueError(
                    (*self._loc, "mcpServers"),
                    f"MCP server name {name!r} must be 1-40 letters, digits, '_' or '-' (it prefixes tool names)",
                )


RawSettings = dict[str, Any]


class Migration(NamedTuple):
    """One named step from ``source`` to ``source + 1``; ``apply`` returns a new mapping."""

    source: int
    name: str
    apply: Callable[[RawSettings], RawSettings]


def add_schema_version(raw: RawSettings) -> RawSettings:
    """0 -> 1: files written before the schema had a version gain one; nothing else changes."""
    return dict(raw)


#: Every migration in order; the last one's ``source + 1`` is ``SETTINGS_VERSION``.
MIGRATIONS: Final[tuple[Migration, ...]] = (Migration(0, "add_schema_version", add_schema_version),)


class Migrated(NamedTuple):
    raw: RawSettings
    applied: tuple[str, ...]
    """Names of the migrations applied now, in order (empty when the file was current)."""
    newer: bool
    """The file comes from a newer Pi Desktop: read as it is, never written."""


def file_version(raw: RawSettings, where: object = "settings") -> int:
    value = raw.get("version", 0)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SettingsError(f"{where}: version: must be a whole number >= 0, not {value!r}")
    return value


def migrate(
    raw: RawSettings,
    migrations: Sequence[Migration] = MIGRATIONS,
    current: int = SETTINGS_VERSION,
    where: object = "settings",
) -> Migrated:
    """Pure: ``raw`` brought to version ``current``, each pending migration applied once."""
    version = file_version(raw, where)
    if version > current:
        return Migrated(dict(raw), (), newer=True)
    applied: list[str] = []
    result = dict(raw)
    for migration in migrations:
        if migration.source < version:
            continue
        if migration.source != version:
            raise AssertionError(f"no settings migration from version {version}")  # a programming error
        result = migration.apply(result)
        version = migration.source + 1
        applied.append(migration.name)
    if not applied:
        return Migrated(result, (), newer=False)
    history = result.get("appliedMigrations")
    earlier = [str(name) for name in history] if isinstance(history, list) else []
    # ``version`` first, so a reader of the file sees it at the top.
    stamped: RawSettings = {"version": version, **{k: v for k, v in result.items() if k != "version"}}
    stamped["appliedMigrations"] = [*earlier, *applied]
    return Migrated(stamped, tuple(applied), newer=False)


def settings_path(override: str | os.PathLike[str] | None = None) -> Path:
    return data_dir(override) / SETTINGS_FILE


def _read_raw(target: Path) -> RawSettings:
    try:
        raw: Any = orjson.loads(target.read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        raise SettingsError(f"{target}: not readable as JSON ({exc}); fix or remove the file") from exc
    if not isinstance(raw, dict):
        raise SettingsError(f"{target}: the top level must be a JSON object")
    return raw


def load_settings(path: Path | None = None) -> Settings:
    """Read the settings file, migrated in memory (the file is not touched); missing means defaults."""
    target = path or settings_path()
    if not target.exists():
        return Settings()
    migrated = migrate(_read_raw(target), where=target)
    if migrated.newer:
        _log().warning(
            "%s has settings version %s, newer than this build's %s; reading it as it is",
            target,
            migrated.raw.get("version"),
            SETTINGS_VERSION,
        )
    try:
        return Settings.model_validate(migrated.raw)
    except SettingsValueError as exc:
        raise SettingsError(f"{target}: {exc}") from exc


def upgrade_settings_file(path: Path | None = None) -> tuple[str, ...]:
    """Apply pending migrations to the file itself; the names applied (empty: nothing written).

    A missing, current or newer file is left alone. The old file is kept beside the new one as
    ``settings.json.v<old version>.bak``; the new one replaces it atomically (written, fsynced,
    renamed), so a crash leaves either the old or the new file, never a mix.
    """
    target = path or settings_path()
    if not target.exists():
        return ()
    raw = _read_raw(target)
    old_version = file_version(raw, target)
    migrated = migrate(raw, where=target)
    if not migrated.applied:
        return ()
    original = target.read_bytes()
    backup = target.with_name(f"{target.name}.v{old_version}.bak")
    _write_atomically(backup, original)
    _write_atomically(target, orjson.dumps(migrated.raw, option=orjson.OPT_INDENT_2) + b"\n")
    _log().info(
        "%s: applied settings migrations %s (backup: %s)", target, ", ".join(migrated.applied), backup
    )
    return migrated.applied


def _write_atomically(target: Path, data: bytes) -> None:
    """A new file 0600, an existing one keeps its mode (design X22)."""
    from desktop.host.private_files import replace_file

    replace_file(target, data)


def _log() -> logging.Logger:
    """This module's logger; ``logging`` loads only when there is something to log (a command
    that merely reads settings never needs it, design D6)."""
    import logging

    return logging.getLogger(__name__)
