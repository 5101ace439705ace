"""The session runtime and its turn loop (design D1).

One object per open session, driven from the worker thread. Every step that a request
depends on is journaled and acknowledged before the request leaves (T3): the user row
first (so typed text is never lost), then the system update of that turn anchored before
it (T4), then dispatch; the assistant row, the tool results and the activation update that
follows them are group-committed as they complete. The projection of the next request is
a pure function of the journal, so the inspector's preview is the dispatch's bytes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, cast

from desktop.host.journal.envelope import now_ms
from desktop.host.journal.lines import rows_of_type
from desktop.pi.delivery import FallbackDelivery
from desktop.pi.projection import ProviderRequest, RequestOptions, project
from desktop.pi.transcript import normalize_context
from desktop.pi.types import AssistantMessage, Message, Model, Tool, ToolCall, ToolResultMessage
from desktop.session.compaction_settings import CompactionSettings, should_compact
from desktop.session.context_log import ContextLog, RowsInOrder
from desktop.session.estimate import context_tokens
from desktop.session.history import ContextView
from desktop.session.state import EffectiveState, effective_state
from desktop.session.system_state import DesiredState, system_fields_for

if TYPE_CHECKING:  # the incremental projector loads with the first request (``status`` builds none)
    from desktop.pi.projection.incremental import IncrementalProjection

    # the compaction engine loads with the first compaction or preview (``status`` runs neither)
    from desktop.session.compaction import CompactionPreview

Event = Mapping[str, Any]
EventSink = Callable[[Event], None]


class RowWriter(Protocol):
    """The Host journal writer as the runtime sees it (``desktop.host.journal.JournalWriter``)."""

    @property
    def rows(self) -> Sequence[dict[str, Any]]: ...

    def append(self, rows: Sequence[Mapping[str, Any]]) -> Any: ...


class Dispatcher(Protocol):
    """Sends one projected request and returns the final assistant message (never raises for
    provider errors: those come back as ``stopReason: "error"`` with a clear message)."""

    def __call__(
        self, request: ProviderRequest, model: Model, *, on_event: EventSink, cancel: threading.Event
    ) -> AssistantMessage: ...


class ToolHost(Protocol):
    """Declarations, activation and the execution gate, owned by the tools layer."""

    def declarations(self) -> list[Tool]: ...

    def activation_section(self, *, for_comparison: bool = False) -> str | None:
        """The ``tool_activation`` section; ``for_comparison`` when only whether it differs from
        the history matters (its MAC may then be unsealed by the installation's key)."""
        ...

    def execute(self, call: ToolCall, *, cancel: threading.Event) -> ToolResultMessage: ...

    def take_update(self, timestamp: int) -> Mapping[str, Any] | None:
        """The activation/declaration system message owed after tool results, if any."""
        ...

    def take_notes(self) -> list[tuple[str, str, dict[str, Any]]]:
        """(level, text, data) notes to journal: declaration policy, fallbacks, epochs."""
        ...


class PromptSource(Protocol):
    """Desktop's sections other than activation (runtime, environment, guidance, skills)."""

    def sections(self) -> dict[str, str]: ...


class SessionRoute(NamedTuple):
    """The model to project for (flags already verified or withdrawn) and its identity."""

    model: Model
    identity: dict[str, Any]
    options: RequestOptions
    fallback: FallbackDelivery = "folded"
    #: Set when no credential was found and the kind in ``options`` is assumed (design P5).
    credential_note: str | None = None


class TurnResult:
    """What one turn produced, filled in as it runs."""

    def __init__(self) -> None:
        self.assistant: list[AssistantMessage] = []
        self.requests = 0
        self.stopped = "stop"
        self.error: str | None = None


class SummaryFailed(RuntimeError):
    """The model did not produce a summary; the session is left exactly as it was."""


class SessionRuntime:
    def __init__(
        self,
        writer: RowWriter,
        route: SessionRoute,
        dispatcher: Dispatcher,
        tools: ToolHost,
        prompt: PromptSource,
        *,
        new_id: Callable[[], str],
        compaction: CompactionSettings | None = None,
        clock: Callable[[], int] = now_ms,
        max_steps: int = 50,
    ) -> None:
        self.writer = writer
        self.route = route
        self.dispatcher = dispatcher
        self.tools = tools
        self.prompt = prompt
        self.compaction = compaction or CompactionSettings()
        self._new_id = new_id
        self._clock = clock
        self.max_steps = max_steps
        self.unsaved: list[dict[str, Any]] = []
        self._undispatched: list[str] = []
        self._last_ack: Any = None
        self._last_notes: dict[str, str] | None = None
        self._log = ContextLog()
        #: The replayed system state and the context log's systems version it was replayed at.
        self._state: tuple[int, EffectiveState] | None = None
        #: The desired sections and declarations found current against ``_state``.
        self._current: tuple[dict[str, str], list[Tool]] | None = None
        #: Incremental projections by route (design P7), the session's own route first; each
        #: with the point of the context log it last projected.
        self._projections: list[tuple[SessionRoute, IncrementalProjection, tuple[int, int] | None]] = []
        #: Rows owed to the journal that wait for the user's next write (a send, a compaction):
        #: opening a session writes nothing (design G12), so a settings record found due at open
        #: goes out with the next turn, in the same group commit as its user row.
        self.owed: list[dict[str, Any]] = []
        #: Called before owed rows are written (they may need what opening must not create).
        self.finish_owed: list[Callable[[], None]] = []
        #: Whether the continuation (baseline, legacy sections, restoration notes) is journaled.
        self.continued = False

    # --- reading ------------------------------------------------------------------------------

    def model_rows(self) -> RowsInOrder:
        """Rows in model order, kept up to date as the journal grows (design P7), read from
        the journal when asked for: walk it, do not keep it across appends."""
        self._log.sync(self.writer.rows)
        return self._log.ordered

    def view(self) -> ContextView:
        """The model's context; its lists are the runtime's own and change with the journal."""
        self._log.sync(self.writer.rows)
        return self._log.view

    def desired(self, *, for_comparison: bool = False) -> DesiredState:
        sections = dict(self.prompt.sections())
        activation = self.tools.activation_section(for_comparison=for_comparison)
        if activation:
            sections["tool_activation"] = activation
        return DesiredState(sections, self.tools.declarations())

    def current_state(self) -> EffectiveState:
        """The effective system state replayed from the kept context's system messages only
        (not every message), cached until a system row is added (the status budget)."""
        self._log.sync(self.writer.rows)
        version = self._log.systems_version
        cached = self._state
        if cached is None or cached[0] != version:
            self._state = (version, effective_state(self._log.system_messages()))
            self._current = None
            return self._state[1]
        return cached[1]

    def _system_fields(
        self, *, anchor_before: str | None = None, for_comparison: bool = False
    ) -> dict[str, Any] | None:
        """The one system row the desired state needs, from the kept context (no full replay)."""
        state = self.current_state()
        desired = self.desired(for_comparison=for_comparison)
        # The same state and the same desired sections and declarations (the same objects)
        # as last time, when nothing was owed: still nothing, without comparing every tool.
        current = self._current
        if (
            current is not None
            and current[0] == desired.sections
            and len(current[1]) == len(desired.tools)
            and all(a is b for a, b in zip(current[1], desired.tools, strict=True))
        ):
            return None
        fields = system_fields_for(
            state,
            self._log.has_model_system,
            desired,
            timestamp=self._clock(),
            anchor_before=anchor_before,
        )
        self._current = (desired.sections, list(desired.tools)) if fields is None else None
        return fields

    def pending_system_fields(self) -> dict[str, Any] | None:
        return self._system_fields()

    def has_pending_update(self) -> bool:
        """Whether the next turn appends a system update (``status``): the same diff as
        ``pending_system_fields``, without reading the installation secret for a MAC nobody sees."""
        return self._system_fields(for_comparison=True) is not None

    def context_request(
        self, extra: Sequence[Message] = (), route: SessionRoute | None = None
    ) -> ProviderRequest:
        """The request for the current context plus ``extra`` on ``route`` (the session's by
        default), built incrementally: byte-equal to a full projection of the same messages,
        at a cost that follows what changed since the previous request (design P7). Up to four
        routes keep their projection (the window previews other routes side by side)."""
        route = route or self.route
        self._log.sync(self.writer.rows)
        entries = self._projections
        found = next((i for i, entry in enumerate(entries) if entry[0] is route or entry[0] == route), None)
        entry: tuple[SessionRoute, IncrementalProjection, tuple[int, int] | None]
        if found is None:
            # Lazy: the status budget.
            from desktop.pi.projection.incremental import IncrementalProjection

            if len(entries) >= 4:
                entries.pop(0)
            entry = (route, IncrementalProjection(route.model, route.options, route.fallback), None)
        else:
            entry = entries.pop(found)
        _route, engine, mark = entry
        stable = self._log.stable_since(mark)
        request = engine.request(self._log.view.messages, stable, extra)
        entries.append((route, engine, self._log.mark()))
        return request

    def warm(self, draft: str) -> None:
        """Build the next request for ``draft`` now, ahead of the turn (design X31).

        The first request after an open (or a route switch) commits the whole history and
        diffs the system state, which on a long session costs tens of milliseconds, so the
        window calls this on the worker while the user writes the first message. With the
        draft after it, the history's last turn is committed too, and the state's diff is kept
        for the turn (the same desired objects): the turn then builds only what it adds. Cheap
        when already warm (the tail alone), and it writes nothing."""
        self.next_request(draft)

    def draft_message(self, content: str | list[dict[str, Any]]) -> dict[str, Any]:
        """The user message ``run_turn`` journals for ``content`` (one rule for preview and turn)."""
        return {"role": "user", "content": content, "timestamp": self._clock()}

    def next_request(
        self, draft: str | list[dict[str, Any]] | None = None, route: SessionRoute | None = None
    ) -> ProviderRequest:
        """The one next request of this session (design P5): what the window, ``pi-desktop
        payload`` and the turn's first dispatch send, including the system update the next
        turn would append.

        With ``draft`` (what the user is about to send) it is the first request of that turn:
        the system update anchored before the new user message, then the message, exactly as
        ``run_turn`` journals them (model order puts an anchored update right before its user
        row, and both land at the end). Timestamps are "now" here and "now" at the turn; no
        projection but ``pi-messages`` (which forwards the transcript as is) writes a message
        timestamp into the body, and the only rule that reads them
        (which usage still describes its prefix) compares them with earlier assistant rows, so
        the bytes do not depend on when the preview was made. A draft that would trigger
        automatic compaction is the exception: the turn then sends the summary request first.
        """
        extra: list[Message] = []
        pending = self.pending_system_fields()
        if pending is not None:
            extra.append(pending["modelSystem"]["message"])
        if draft is not None:
            extra.append(cast(Message, self.draft_message(draft)))
        return self.context_request(extra, route)

    def context_tokens(self) -> int:
        """The session's one context figure (design G14): the provider's count of the last
        request and its reply plus four characters per token for what came after. The context
        meter, the compaction preview, the compaction row and the Payload tab all show it."""
        view = self.view()
        return context_tokens(view.messages, request_tools=self.tools.declarations(), usage_from=view.fresh)

    # --- writing ------------------------------------------------------------------------------

    def _row(self, kind: str, **fields: Any) -> dict[str, Any]:
        return {"type": kind, "v": 1, "id": self._new_id(), "ts": self._clock(), **fields}

    def append(self, rows: Sequence[dict[str, Any]], on_event: EventSink | None = None) -> Any:
        """Journal rows durably; on a local failure keep them, so the window can give an unstored
        message back (T3)."""
        try:
            ack = self.writer.append(rows)
        except Exception:
            self.unsaved = list(rows)
            raise
        self.unsaved = []
        self._undispatched.extend(row["id"] for row in rows)
        self._last_ack = ack
        if on_event is not None:
            for row in rows:
                on_event({"type": "row", "row": row})
        return ack

    def _require_durable(self) -> None:
        """Write-ahead: everything this request depends on must be acknowledged (T3)."""
        if self._undispatched:
            require = getattr(self._last_ack, "require", None)
            if require is not None:
                require(self._undispatched[-1:])
            self._undispatched.clear()

    def sync_system_state(
        self, *, anchor_before: str | None = None, on_event: EventSink | None = None
    ) -> dict[str, Any] | None:
        """Append the one hidden system row that brings the transcript to the desired state."""
        fields = self._system_fields(anchor_before=anchor_before)
        if fields is None:
            return None
        row = self._row("system", **fields)
        self.append([row], on_event)
        return row

    def journal_tool_notes(self, on_event: EventSink | None = None) -> None:
        """Journal the tool layer's notes, skipping one that repeats the last of its kind verbatim
        (reopening a session re-derives the same policy; saying so again is noise)."""
        if self._last_notes is None:
            self._last_notes = {}
            for row in rows_of_type(self.writer.rows, "note"):  # no other row is decoded
                data = row.get("data")
                if isinstance(data, dict):
                    kind = data.get("kind")
                    if isinstance(kind, str) and kind:  # a damaged note's kind is no key (T9)
                        self._last_notes[kind] = row.get("text", "")
        rows = []
        for level, text, data in self.tools.take_notes():
            kind = data.get("kind")
            if kind == "activation-restore" and data.get("source") in ("section", "none"):
                continue  # an ordinary restore is the normal case; recoveries and rejections are noted
            if kind and self._last_notes.get(kind) == text:
                continue
            if kind:
                self._last_notes[kind] = text
            rows.append(self._row("note", level=level, text=text, data=data))
        if rows:
            self.append(rows, on_event)

    def prepare_continuation(self) -> None:
        """Continuation (S3, S5): the baseline or the legacy sections' migration, and what
        restoration owes (a recovered ToolSearch result, a rejected section), are one diff with
        whatever else changed since the last run, appended with the next turn as one row.

        What continuation owes, in memory only: the restored activation's declarations are
        published, so the next request (the preview, ``payload``) is the one the turn sends; the
        rows themselves are written with the user's next write (design G12)."""
        if not self.continued:
            self.continued = True
            self.tools.take_update(self._clock())

    def owe(self, kind: str, **fields: Any) -> dict[str, Any]:
        """A row to journal with the next write (the user's next send or compaction)."""
        row = self._row(kind, **fields)
        self.owed.append(row)
        return row

    def write_owed(
        self, on_event: EventSink | None = None, *, with_rows: Sequence[dict[str, Any]] = ()
    ) -> Any:
        """Journal the owed rows, with ``with_rows`` in the same group commit (T3)."""
        rows = [*self.owed, *with_rows]
        if not rows:
            return None
        for finish in self.finish_owed:  # e.g. seal a settings note: only now is a key needed
            finish()
        ack = self.append(rows, on_event)
        self.owed, self.finish_owed = [], []
        return ack

    def note(self, level: str, text: str, on_event: EventSink | None = None, **data: Any) -> dict[str, Any]:
        row = self._row("note", level=level, text=text, **({"data": data} if data else {}))
        self.append([row], on_event)
        return row

    # --- the turn loop --------------------------------------------------------------------------

    def run_turn(
        self,
        content: str | list[dict[str, Any]],
        *,
        on_event: EventSink | None = None,
        cancel: threading.Event | None = None,
    ) -> TurnResult:
        """Persist the user's message, then dispatch and run tools until the model stops."""
        emit: EventSink = on_event or (lambda _e: None)
        cancel = cancel or threading.Event()
        result = TurnResult()
        self.prepare_continuation()
        user_row = self._row("user", message=self.draft_message(content))
        self.write_owed(emit, with_rows=[user_row])
        # The continuation's one system update (baseline, legacy sections, what restoration owes)
        # is the same diff as any other change since the last turn: one row, anchored (T4).
        self.sync_system_state(anchor_before=user_row["id"], on_event=emit)
        self.journal_tool_notes(emit)
        if should_compact(self.context_tokens(), self.route.model["contextWindow"], self.compaction):
            try:
                self.compact(on_event=emit, cancel=cancel, reason="automatic")
            except (SummaryFailed, ValueError) as error:
                self.note("warning", f"Automatic compaction skipped: {error}", emit)

        for _step in range(self.max_steps):
            if cancel.is_set():
                result.stopped = "aborted"
                break
            request = self.context_request()
            self._require_durable()
            emit({"type": "request", "request": request})
            message = self.dispatcher(request, self.route.model, on_event=emit, cancel=cancel)
            result.requests += 1
            self.append([self._row("assistant", message=message, route=self.route.identity)], emit)
            result.assistant.append(message)
            stop = message["stopReason"]
            if stop in ("error", "aborted"):
                result.stopped = stop
                result.error = message.get("errorMessage")
                break
            calls = [cast(ToolCall, b) for b in message["content"] if b.get("type") == "toolCall"]
            if stop != "toolUse" or not calls:
                result.stopped = stop
                break
            results = []
            for call in calls:
                if cancel.is_set():
                    tool_result: ToolResultMessage = {
                        "role": "toolResult",
                        "toolCallId": call["id"],
                        "toolName": call["name"],
                        "content": [{"type": "text", "text": "Cancelled by the user before it ran."}],
                        "isError": True,
                        "timestamp": self._clock(),
                    }
                else:
                    tool_result = self.tools.execute(call, cancel=cancel)
                results.append(self._row("toolResult", message=tool_result))
            # Results and the system update they cause land together, results first (A4). The
            # update is the one diff of the desired state, so an activation, a catalog or schema
            # change and a skill edit made by these tools all reach the very next request (S6).
            update = self.tools.take_update(self._clock())
            fields = self._system_fields()
            if fields is not None:
                if update is not None:
                    fields["label"] = "tool activation after tool results; " + fields["label"]
                results.append(self._row("system", **fields))
            self.append(results, emit)
            self.journal_tool_notes(emit)
            if cancel.is_set():
                result.stopped = "aborted"
                break
        else:
            result.stopped = "max_steps"
            self.note("warning", f"Stopped after {self.max_steps} model requests in one turn.", emit)
        return result

    # --- compaction -------------------------------------------------------------------------------

    def preview_compaction(self) -> CompactionPreview:
        """What ``compact`` would summarize and the estimated tokens before and after (C1)."""
        # Lazy: the status budget.
        from desktop.session.compaction import preview_compaction

        return preview_compaction(self.view(), self.compaction, context=self.context_tokens())

    def compact(
        self,
        *,
        on_event: EventSink | None = None,
        cancel: threading.Event | None = None,
        reason: str = "manual",
        focus: str = "",
    ) -> dict[str, Any]:
        """Summarize through the session's own route; journal nothing unless it succeeds (C3).
        ``focus`` is the user's text of what the summary must keep (design G8)."""
        # Lazy: the status budget.
        from desktop.session.compaction import (
            compacted_tokens,
            compaction_row_fields,
            plan_compaction,
            summary_request_context,
        )

        emit: EventSink = on_event or (lambda _e: None)
        # Only automatic compaction caps the tail by the window; manual compaction of a
        # context below the keep budget has nothing to compact yet (C1).
        window = self.route.model["contextWindow"] if reason == "automatic" else None
        plan = plan_compaction(
            self.view(), self.compaction, context_window=window, context=self.context_tokens()
        )
        context = summary_request_context(plan, timestamp=self._clock(), focus=focus)
        request = project(self.route.model, normalize_context(context), self.route.options)
        emit({"type": "compaction_request", "request": request, "reason": reason})
        message = self.dispatcher(
            request, self.route.model, on_event=lambda _e: None, cancel=cancel or threading.Event()
        )
        summary = "".join(b["text"] for b in message["content"] if b.get("type") == "text").strip()  # type: ignore[typeddict-item]
        if message["stopReason"] in ("error", "aborted") or not summary:
            why = message.get("errorMessage") or "the model returned no summary text"
            raise SummaryFailed(f"Compaction failed: {why}. The session was not changed.")
        # What this session owed its journal (settings, the continuation's update and notes)
        # lands before the compaction row, so the checkpoint is taken over a current journal.
        self.prepare_continuation()
        self.write_owed(emit)
        self.sync_system_state(on_event=emit)
        self.journal_tool_notes(emit)
        activation = self.tools.activation_section()
        fields = compaction_row_fields(
            plan,
            summary,
            activation={"section": activation} if activation else None,
            route=self.route.identity,
        )
        fields["rowsSummarized"] = len(plan.summarized)
        fields["tokensAfter"] = compacted_tokens(plan, self.view(), summary)
        row = self._row("compaction", reason=reason, usage=message["usage"], **fields)
        self.append([row], emit)
        return row
