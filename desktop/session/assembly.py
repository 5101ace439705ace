"""Open a session: the journal, the route, the tools, the prompt and the runtime, wired once.

The window's worker thread and the headless commands both come through here, so the CLI
reproduces exactly what the inspector shows. Opening an existing session restores tool
activation from its history (never from declarations) and prepares the one continuation step
the history needs (baseline, legacy skills split) in memory: it is journaled with the user's
next send or compaction, so opening writes nothing (design G12).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from desktop import __version__
from desktop.host import catalog_cache
from desktop.host.accounts import credential_env_names, keyring_username, known_secrets, resolve_api_key
from desktop.host.installation_secret import InstallationSecretError, keyring_secret, load_installation_secret
from desktop.host.journal import Diagnostic, JournalWriter, new_row_id
from desktop.host.permissions import PermissionBridge, PermissionMode
from desktop.host.private_files import make_private_dirs
from desktop.host.providers.cloud_auth import CloudAuth, projection_env
from desktop.host.providers.credential_kind import RouteCredential, route_credential, unread_credential
from desktop.host.providers.network import NetworkSettings
from desktop.host.settings import Settings, load_settings
from desktop.host.tools.session_tools import Consent, SessionTools
from desktop.host.tools.types import SkillIndex
from desktop.pi.capability import CapabilityStatus, capability_status
from desktop.pi.delivery import FallbackDelivery
from desktop.pi.projection import CREDENTIAL_PLACEHOLDER, ProviderRequest, RequestOptions
from desktop.pi.routes import ResolvedModel, Route, resolve_model
from desktop.pi.types import AssistantMessage, Model
from desktop.session.activation import ActivationSigner
from desktop.session.compaction_settings import CompactionSettings
from desktop.session.declarations import CompactionBudget, DeclarationPreference
from desktop.session.declarations import RouteBinding as DeclarationRoute
from desktop.session.estimate import message_tokens
from desktop.session.gate import ToolGate
from desktop.session.prompt import WorkspacePrompt
from desktop.session.runtime import Dispatcher, EventSink, SessionRoute, SessionRuntime
from desktop.session.session_settings import SessionSettings, seal, settings_note_fields, settings_of_note
from desktop.session.tool_host import GateToolHost


class LiveSkillIndex(SkillIndex):
    """The skill tool's index, read from the same live catalog the prompt lists."""

    def __init__(self, prompt: WorkspacePrompt) -> None:
        super().__init__()
        self._prompt = prompt

    def path_for(self, name: str) -> Path | None:
        skill = self._prompt.skills().get(name)
        return skill.path if skill else None

    def names(self) -> list[str]:
        return [s.id for s in self._prompt.skills().skills]


@dataclass(eq=False)
class SessionConfig:
    """How to open one session."""

    route: Route
    workspace: Path
    fallback: FallbackDelivery = "folded"
    mode: PermissionMode | None = None
    settings: Settings | None = None
    compaction: CompactionSettings = field(default_factory=CompactionSettings)
    user_skills: Path | None = None
    #: Where Bedrock/Vertex credentials come from; None = the default chains (none when offline).
    cloud_auth: CloudAuth | None = None
    #: Asked before a repository's own servers, hooks or extensions first run (design A11);
    #: None: they do not run.
    consent: Consent | None = None
    #: The session's declarations policy; None = the settings file's (design G12).
    declarations: DeclarationPreference | None = None
    #: The session's thinking level (``RequestOptions.reasoning``); None: the route's default.
    reasoning: str | None = None


class OpenSession:
    """An open session: its writer, runtime, tools, gate and prompt, closed together."""

    def __init__(
        self,
        writer: JournalWriter,
        runtime: SessionRuntime,
        resolved: ResolvedModel,
        tools: SessionTools,
        gate: ToolGate,
        prompt: WorkspacePrompt,
        config: SessionConfig,
        journal_problems: list[Diagnostic] | None = None,
    ) -> None:
        self.writer = writer
        self.runtime = runtime
        self.resolved = resolved
        self.tools = tools
        self.gate = gate
        self.prompt = prompt
        self.config = config
        self.journal_problems: list[Diagnostic] = journal_problems if journal_problems is not None else []
        """Every problem the reader found in the session file (design T9): lines set aside in
        the middle of the file (garbage, duplicate ids, rows of the wrong shape), rows of a
        newer version read as unknown, a torn last line. Each names the file, the line and,
        for a wrong shape, the field (``format_diagnostic``). The window shows them as a
        banner; the command line prints them on stderr."""
        #: What the session is set to now, and what its journal last recorded (design G12).
        self.settings: SessionSettings | None = None
        self.recorded_settings: SessionSettings | None = None
        #: A settings note owed to the journal, and the settings it records.
        self._owed_settings: tuple[dict[str, Any], SessionSettings] | None = None

    def settings_key(self) -> bytes:
        """The installation's key the settings notes are sealed with (the activation key, A8)."""
        return self.gate.signer.key

    def record_settings(
        self, settings: SessionSettings, *, by: str, why: str, now: bool, on_event: EventSink | None = None
    ) -> dict[str, Any] | None:
        """Make ``settings`` the session's. When they differ from what the journal recorded, a
        settings note is journaled: ``now`` (the user changed a setting: that is a write), or
        with the user's next send or compaction (a command's flags, a first record)."""
        runtime = self.runtime
        owed = self._owed_settings
        if owed is not None and not any(row is owed[0] for row in runtime.owed):
            self.recorded_settings, self._owed_settings = owed[1], None  # written since
        self.settings = settings
        runtime.owed = [row for row in runtime.owed if settings_of_note(row) is None]
        if settings == self.recorded_settings or self.read_only:
            return None
        fields = settings_note_fields(settings, self.recorded_settings, by=by, why=why)

        def sealed(data: dict[str, Any] = fields["data"]) -> None:
            # The seal needs the installation's key, which may not exist yet: it is made (and
            # the key created) only when the note is written, never by opening (design A8, G12).
            if "seal" not in data:
                data["seal"] = seal(self.settings_key(), self.writer.session_id, data["settings"])

        if now:
            sealed()
            row = runtime._row("note", **fields)
            runtime.write_owed(on_event, with_rows=[row])
            self.recorded_settings = settings
            return row
        row = runtime.owe("note", **fields)
        runtime.finish_owed = [sealed]
        self._owed_settings = (row, settings)
        return row

    @property
    def read_only(self) -> bool:
        return self.writer.read_only

    def capability(self) -> CapabilityStatus:
        return capability_status(self.resolved, self.config.fallback)

    def close(self) -> None:
        self.tools.stop()
        self.writer.close()
        close = getattr(self.runtime.dispatcher, "close", None)
        if callable(close):
            close()

    def __enter__(self) -> OpenSession:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def refuse_dispatch(
    request: ProviderRequest, model: Model, *, on_event: EventSink, cancel: threading.Event
) -> AssistantMessage:
    """The dispatcher of a read-only session: the writer refuses before any request is due."""
    raise RuntimeError("a read-only session sends no requests")


def route_binding(
    resolved: ResolvedModel,
    fallback: FallbackDelivery,
    session_id: str,
    credential: RouteCredential | None = None,
    reasoning: str | None = None,
) -> SessionRoute:
    """The runtime's binding: the model, and the options every request of the route uses.

    The credential stays the placeholder; its *kind* is looked up where dispatch finds the key
    (``route_credential``), so the body is the one dispatch sends (design P5).
    """
    if credential is None:
        credential = route_credential(resolved.model, resolved.route)
    return SessionRoute(
        model=resolved.model,  # type: ignore[arg-type]
        identity=resolved.journal_route(),
        options=RequestOptions(
            session_id=session_id,
            api_key=CREDENTIAL_PLACEHOLDER,
            env=projection_env(),
            credential_kind=credential.kind,
            reasoning=reasoning,
        ),
        fallback=fallback,
        credential_note=credential.note(),
    )


def declaration_route(resolved: ResolvedModel, route: Route) -> DeclarationRoute:
    """The binding the declaration policy and the activation identity see.

    An emulated route stands in for the official endpoint, so it is identified by the
    published endpoint rather than the emulator's (per-process) loopback port; otherwise every
    restart of the offline demo would start a new declaration epoch.
    """
    model = dict(resolved.model)
    if route.emulated:
        model["baseUrl"] = resolved.published.base_url
    return DeclarationRoute.from_model(
        model, transport_verified=resolved.transport_verified, account=route.account.name
    )


def _guard_credentials(tools: SessionTools, route: Route, *, read: bool) -> None:
    """Tool output never carries a credential the app holds (design A9): an account's own
    ``env:NAME`` joins the credential variables, and the route's keyring key is read now (on the
    worker or the command's thread) so its value is known to the redaction before any tool runs."""
    ref = route.account.api_key_ref or ""
    extra = (ref[4:],) if ref.startswith("env:") and len(ref) > 4 else ()
    tools.executor.credential_env = credential_env_names(extra)
    tools.executor.secrets = lambda: known_secrets(extra_env=extra)
    if read:
        resolve_api_key(route.provider, keyring_username(route.provider, route.account.name))


def activation_signer(session_id: str, *, read_only: bool) -> tuple[ActivationSigner, str | None]:
    """The signer for this session's ``tool_activation`` sections, and why it is not the
    installation's when it cannot be (design A8).

    A read-only open never creates the secret (reading never writes); without one nothing in
    any session can have been sealed here, so a throwaway key, which verifies nothing, is right.
    """
    try:
        secret = load_installation_secret(create=not read_only)
    except (InstallationSecretError, OSError) as exc:
        return ActivationSigner.ephemeral(
            session_id
        ), f"this installation's activation secret is unusable: {exc}"
    if secret is None:
        return ActivationSigner.ephemeral(session_id), "this installation has not sealed any activation yet"
    # The file's secret seals; the keyring is loaded only for a section it does not verify.
    other = keyring_secret if secret.source == "file" else None
    return ActivationSigner.from_secret(secret.value, session_id, other_secret=other), None


def open_session(
    path: Path,
    config: SessionConfig,
    *,
    bridge: PermissionBridge,
    dispatcher: Dispatcher | None = None,
    read_only: bool = False,
    journal: JournalWriter | None = None,
    builds_requests: bool = True,
) -> OpenSession:
    """Open (or create) the session at ``path`` and make it ready for the next turn.

    ``journal`` is a session the caller already opened (the command line reads read-only
    sessions itself, so a FIFO is refused before it is opened and the file is parsed once);
    it is closed with the session. ``builds_requests=False`` (``status``) leaves the credential
    unread: its kind only shapes request bodies, and such a session never projects one.
    """
    if journal is not None:
        writer = journal
    elif path.exists():
        writer = JournalWriter.open(path, read_only=read_only)
    else:
        make_private_dirs(path.parent)  # design X22
        writer = JournalWriter.create(path, cwd=str(config.workspace), app_version=__version__)
    try:
        catalog_cache.install()  # routes resolve against a refreshed catalog when there is one (M1)
        resolved = resolve_model(config.route)
        settings = config.settings if config.settings is not None else load_settings()
        prompt = WorkspacePrompt(config.workspace, user_skills=config.user_skills)
        tools = SessionTools(config.workspace, bridge, settings, skills=LiveSkillIndex(prompt))
        if config.mode is not None:
            tools.executor.mode = config.mode
        _guard_credentials(tools, config.route, read=not writer.read_only)
        if writer.read_only:  # looking starts no server or hook and asks nothing (design A11)
            tools.load_extensions()
        else:
            tools.start(config.consent)
    except BaseException:
        writer.close()
        raise
    prompt_tokens = sum(message_tokens({"role": "user", "content": t}) for t in prompt.sections().values())
    session_id, read_only = writer.session_id, writer.read_only
    gate = ToolGate(
        tools.catalog,
        tools.executor,
        declaration_route(resolved, config.route),
        budget=CompactionBudget(
            reserve_tokens=config.compaction.reserve_tokens,
            retained_tail_tokens=config.compaction.keep_recent_tokens,
        ),
        prompt_tokens=prompt_tokens,
        preference=config.declarations or settings.tools.declarations,
        signer_source=lambda: activation_signer(session_id, read_only=read_only),
    )
    account = config.route.account
    if dispatcher is None and writer.read_only:
        dispatcher = refuse_dispatch  # nothing is sent from a read-only session; no HTTP client needed
    if dispatcher is None:
        from desktop.session.dispatch import HttpDispatcher  # Lazy: the status budget.

        def key() -> str | None:
            if config.route.offline:
                return None
            ref = account.api_key_ref or ""
            if ref.startswith("env:"):
                return os.environ.get(ref[4:])
            return resolve_api_key(
                config.route.provider, keyring_username(config.route.provider, account.name)
            )[0]

        cloud = config.cloud_auth
        if cloud is None:
            cloud = CloudAuth.offline() if config.route.offline else CloudAuth()
        dispatcher = HttpDispatcher(key, cloud=cloud, network=NetworkSettings.from_settings(settings.network))
    runtime = SessionRuntime(
        writer,
        route_binding(
            resolved,
            config.fallback,
            writer.session_id,
            None if builds_requests else unread_credential(resolved.model),
            reasoning=config.reasoning,
        ),
        dispatcher,
        GateToolHost(gate),
        prompt,
        new_id=new_row_id,
        compaction=config.compaction,
    )
    session = OpenSession(
        writer, runtime, resolved, tools, gate, prompt, config, journal_problems=list(writer.diagnostics)
    )
    # A read-only open restores exactly as a writable one would, so ``status`` and the
    # Activation tab show what the runtime would grant. Opening writes nothing (design G12):
    # the continuation is prepared in memory and journaled with the user's next write.
    gate.restore(runtime.view().messages)
    if not writer.read_only:
        runtime.prepare_continuation()
    return session
