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

The file carries a schema ``"version"`` (a file without one is version 0). Each change of
shape is a named migration from one version to the next. Reading migrates in memory only
(reading never writes); ``upgrade_settings_file``, run once when the window starts, applies
the pending migrations to the file itself, keeps the old file beside it as a backup, and
records each migration's name in ``"appliedMigrations"``, so each runs once. A file from a
newer Pi Desktop is read as it is and never written. The format stays backward compatible: an
older app ignores ``version`` and ``appliedMigrations`` like any other unknown key.

The settings are msgspec structs (design T11), as the one row schema is (T10): ``status`` reads
them, and pydantic's import and model building cost it more than parsing a long session. Each
part keeps its unknown keys (``extra``) and a bad value is reported in one line naming the file
and the field (``SettingsError``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal, NamedTuple, Self, TypeVar

import orjson
from msgspec import Meta, Struct, field

from desktop.host.paths import data_dir
from desktop.host.private_files import replace_file
from desktop.host.schema import SchemaError, check, shape_error

if TYPE_CHECKING:
    import logging


SETTINGS_FILE = "settings.json"
SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
#: The schema version this build writes; a file without ``version`` is version 0.
SETTINGS_VERSION: Final = 1


class SettingsError(Exception):
    """The settings file is unreadable or invalid; the message names the file and the field."""


class SettingsValueError(ValueError):
    """One invalid value, in one line naming where it is (``hooks.PreToolUse[0].matcher``)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def _checked(value: Any, kind: type[_S]) -> _S:
    """``value`` as a ``kind``, or ``SettingsValueError`` naming the field."""
    try:
        found: _S = check(value, kind)
    except SchemaError as error:
        problem = shape_error(error, value, whole="settings")
        raise SettingsValueError(problem.field, problem.message) from None
    return found


class _Section(Struct, kw_only=True, dict=True):
    """A part of the settings file: strict types (a bool is not a number), unknown keys kept."""

    @classmethod
    def model_validate(cls, obj: Any) -> Self:
        """``obj`` checked and built, raising ``SettingsValueError`` (one line) for a bad value."""
        built = _checked(obj, cls)
        _keep_extra(built, obj)
        return built

    @property
    def extra(self) -> dict[str, Any]:
        """The keys this app does not know, as they came."""
        found: dict[str, Any] = vars(self).setdefault("_extra", {})
        return found


def _keep_extra(section: _Section, raw: Any) -> None:
    """Keep ``raw``'s unknown keys on ``section`` and on each part inside it (msgspec drops them)."""
    if type(raw) is not dict:
        return
    fields = section.__struct_fields__
    for key, value in raw.items():
        if key not in fields:
            section.extra[key] = value
            continue
        part = getattr(section, key)
        if isinstance(part, _Section):
            _keep_extra(part, value)
        elif isinstance(part, dict):
            for name, item in part.items():
                if isinstance(item, _Section):
                    _keep_extra(item, value.get(name))
        elif isinstance(part, list):
            for item, given in zip(part, value, strict=False):
                if isinstance(item, _Section):
                    _keep_extra(item, given)


_S = TypeVar("_S", bound=_Section)
Seconds = Annotated[float, Meta(gt=0, le=3600)]


class McpServerConfig(_Section, kw_only=True):
    command: str
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    disabled: bool = False
    startupTimeout: float = 20.0
    callTimeout: float = 120.0


class HookCommand(_Section, kw_only=True):
    command: str
    type: Literal["command"] = "command"
    timeout: float = 30.0


class HookMatcher(_Section, kw_only=True):
    matcher: str = ""
    hooks: list[HookCommand] = field(default_factory=list)

    def __post_init__(self) -> None:
        try:
            re.compile(self.matcher)
        except re.error as exc:
            raise ValueError(f"matcher {self.matcher!r} is not a valid regular expression: {exc}") from exc


class HooksConfig(_Section, kw_only=True):
    PreToolUse: list[HookMatcher] = field(default_factory=list)


class PermissionsConfig(_Section, kw_only=True):
    mode: Literal["ask", "accept-edits", "read-only", "full-access"] = "ask"


class BashConfig(_Section, kw_only=True):
    """``inheritCredentials``: ``false`` (default) runs ``bash`` without the provider credential
    variables (``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``, ``AWS_SECRET_ACCESS_KEY``, ...) in its
    environment, so a command the model runs cannot read them; ``true`` passes them through
    (known values are still redacted from what the command prints, design A9)."""

    inheritCredentials: bool = False


class ToolsConfig(_Section, kw_only=True):
    """``declarations``: ``"auto"`` (the route decides: the complete catalog from the first
    request on the verified deepseek-flash binding, on demand elsewhere) or ``"on-demand"``
    (publish deferred schemas only when ToolSearch activates them, on every route).
    ``bash``: see ``BashConfig``."""

    declarations: Literal["auto", "on-demand"] = "auto"
    bash: BashConfig = field(default_factory=BashConfig)


class NetworkConfig(_Section, kw_only=True):
    """How provider requests reach the network (design W3). ``proxy``: ``http://host:port``
    (``user:password@`` allowed), used instead of ``HTTPS_PROXY``/``HTTP_PROXY``; ``noProxy``:
    comma-separated hosts reached directly (instead of ``NO_PROXY``); ``caBundle``: a PEM
    file of CA certificates to trust besides the system's (a TLS-inspecting proxy's root);
    ``connectTimeout`` / ``readTimeout``: seconds to connect (more than 0, at most 3600), and
    of silence while waiting for the answer; ``maxRetries``: attempts after the first on a rate
    limit, an overload or a failed connection (0 to 10)."""

    proxy: str | None = None
    noProxy: str | None = None
    caBundle: str | None = None
    connectTimeout: Seconds = 10.0
    readTimeout: Seconds = 120.0
    maxRetries: Annotated[int, Meta(ge=0, le=10)] = 2


class Settings(_Section, kw_only=True):
    version: int = SETTINGS_VERSION
    appliedMigrations: list[str] = field(default_factory=list)
    permissions: PermissionsConfig = field(default_factory=PermissionsConfig)
    mcpServers: dict[str, McpServerConfig] = field(default_factory=dict)
    hooks: HooksConfig = field(default_factory=HooksConfig)
    extensions: list[str] = field(default_factory=list)
    tools: ToolsConfig = field(default_factory=ToolsConfig)
    network: NetworkConfig = field(default_factory=NetworkConfig)

    def __post_init__(self) -> None:
        for name in self.mcpServers:
            if not SERVER_NAME.match(name):
                raise ValueError(
                    f"mcpServers: MCP server name {name!r} must be 1-40 letters, digits, '_' or '-' (it prefixes tool names)"
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
    replace_file(backup, original)
    replace_file(target, orjson.dumps(migrated.raw, option=orjson.OPT_INDENT_2) + b"\n")
    _log().info(
        "%s: applied settings migrations %s (backup: %s)", target, ", ".join(migrated.applied), backup
    )
    return migrated.applied


def _log() -> logging.Logger:
    """This module's logger; ``logging`` loads only when there is something to log (a command
    that merely reads settings never needs it, design D6)."""
    import logging  # Lazy: the status budget.

    return logging.getLogger(__name__)
