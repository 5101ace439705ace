"""The execution gate: activation first, then the Host (hooks, mode, confinement, approval).

``ToolGate`` is the session's single owner of tool state between prompts: the catalog
snapshot in force, the declaration epoch, the declaration policy and what has been
published, and the execution activation of deferred tools. Runtime activation is
authoritative; history is only read once, at continuation (``restore``).

A new declaration epoch starts whenever the catalog or any schema, the permission mode,
the account or the route changes. It revokes all activation (the model must use ToolSearch
again), and names that left the catalog are remembered as removed so a late call to one is
refused with that reason. Every refusal is an error ``ToolResultMessage`` that states why,
returned before the Host is involved.

Across processes the same inputs are part of the ``tool_activation`` identity, so a later run
under another permission mode, account, route, endpoint or catalog restores nothing; and the
section's MAC (this installation's key, this session's id) makes a copied or edited section
grant nothing (design A7, A8; docs/architecture.md, "Trust model").
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, NamedTuple

from desktop.host.permissions import PermissionMode
from desktop.host.tools.catalog import CatalogSnapshot, ToolCatalog, canonical_json
from desktop.host.tools.executor import HostExecutor, ToolCallRequest, refusal
from desktop.host.tools.toolsearch import NAME as TOOLSEARCH
from desktop.host.tools.toolsearch import select
from desktop.host.tools.types import ToolOutcome
from desktop.session.activation import (
    ActivationSigner,
    ActivationState,
    RestoreResult,
    activation_identity,
    activation_message,
    render_section,
    restore_activation,
)
from desktop.session.declarations import (
    CompactionBudget,
    DeclarationPolicy,
    DeclarationPreference,
    Declarations,
    RouteBinding,
    decide_policy,
)

#: Gives the installation's signer and why it is not usable (None when it is), on first need.
SignerSource = Callable[[], tuple[ActivationSigner, str | None]]

GateStage = Literal["unknown", "removed", "not-activated", "revoked"]


class GateNote(NamedTuple):
    """Something to journal as a ``note`` row (fallback reasons, epochs, restoration)."""

    level: Literal["info", "warning", "error"]
    text: str
    data: dict[str, Any]


class GateResult(NamedTuple):
    message: dict[str, Any]
    refused: str | None = None
    activated: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.message.get("isError")


class _EpochKey(NamedTuple):
    catalog: str
    mode: str
    account: str
    route: tuple[str, str, str, str]

    def digest(self) -> str:
        return hashlib.sha256(
            canonical_json([self.catalog, self.mode, self.account, list(self.route)])
        ).hexdigest()

    def changes_from(self, old: _EpochKey) -> list[str]:
        return [why for why, was, now in zip(_EPOCH_CHANGES, old, self, strict=True) if was != now]


#: What a change of each ``_EpochKey`` field is called, in field order.
_EPOCH_CHANGES = ("catalog or schema change", "permission mode change", "account change", "route change")


class ToolGate:
    def __init__(
        self,
        catalog: ToolCatalog,
        host: HostExecutor,
        route: RouteBinding,
        *,
        budget: CompactionBudget = CompactionBudget(),
        prompt_tokens: int = 0,
        preference: DeclarationPreference = "auto",
        signer: ActivationSigner | None = None,
        signer_problem: str | None = None,
        signer_source: SignerSource | None = None,
    ) -> None:
        """``signer`` seals and verifies ``tool_activation`` sections (design A8); production passes
        the installation's (``desktop.session.assembly``). Without one, a throwaway key is used:
        nothing from another process ever verifies, so the default fails closed.

        ``signer_source`` gives the signer and its problem on first need instead: the first seal,
        or a restore from a history that holds something to verify. A history without any
        activation section or ToolSearch result never reads the installation secret, so a
        read-only ``status`` does not load the keyring for nothing (the status budget)."""
        self._catalog = catalog
        self._signer = signer if signer is not None else ActivationSigner.ephemeral()
        self._signer_problem = signer_problem
        self._signer_source = signer_source
        self._host = host
        self._route = route
        self._budget = budget
        self._prompt_tokens = prompt_tokens
        self._preference: DeclarationPreference = preference
        self._lock = threading.RLock()
        self._notes: list[GateNote] = []
        self._removed: dict[str, str] = {}
        self._revoked: dict[str, str] = {}
        self._restore_reason: str | None = None
        #: What the last ``restore`` granted and why (``status`` and the Activation tab show it).
        self.last_restore: RestoreResult | None = None
        self._dirty = False
        self._pending_removed: tuple[str, ...] = ()
        self._snapshot = catalog.snapshot()
        self._key = self._key_for(self._snapshot)
        self.epoch = 0
        self.policy = self._decide(self._snapshot)
        self.declarations = Declarations(self.policy, self._snapshot)
        self.state = ActivationState(identity=self.identity(), epoch=0)
        self._note_policy(self.policy)

    # -- identity, epochs and policy ---------------------------------------------------------

    @property
    def snapshot(self) -> CatalogSnapshot:
        return self._snapshot

    @property
    def route(self) -> RouteBinding:
        return self._route

    @property
    def mode(self) -> PermissionMode:
        return self._host.mode

    @property
    def signer(self) -> ActivationSigner:
        self._resolve_signer()
        return self._signer

    def _resolve_signer(self) -> None:
        with self._lock:
            if self._signer_source is not None:
                self._signer, self._signer_problem = self._signer_source()
                self._signer_source = None

    def identity(self) -> str:
        return activation_identity(
            account=self._route.account,
            provider=self._route.provider,
            model=self._route.model_id,
            api=self._route.api,
            endpoint=self._route.base_url,
            mode=self._host.mode.value,
            declarations=self._snapshot.declarations(),
            deferred_names=self._snapshot.deferred_names,
        )

    def could_return(self, arguments: Mapping[str, Any]) -> frozenset[str]:
        """What a ToolSearch call with ``arguments`` can activate in the current catalog."""
        return frozenset(select(dict(arguments), self._snapshot.deferred).chosen)

    def _key_for(self, snapshot: CatalogSnapshot) -> _EpochKey:
        r = self._route
        return _EpochKey(
            snapshot.fingerprint,
            self._host.mode.value,
            r.account,
            (r.provider, r.model_id, r.api, r.base_url),
        )

    def _decide(self, snapshot: CatalogSnapshot) -> DeclarationPolicy:
        return decide_policy(
            self._route,
            snapshot.declarations(),
            budget=self._budget,
            prompt_tokens=self._prompt_tokens,
            preference=self._preference,
        )

    def _note_policy(self, policy: DeclarationPolicy) -> None:
        level: Literal["info", "warning"] = "warning" if policy.fallback else "info"
        self._notes.append(
            GateNote(
                level,
                policy.note(),
                {
                    "kind": "declaration-policy",
                    "mode": policy.mode,
                    "fallback": policy.fallback,
                    "functions": policy.function_count,
                    "estimatedTokens": policy.estimated_tokens,
                },
            )
        )

    def refresh(self) -> bool:
        """Pick up catalog/mode/route changes; returns True when a new epoch started."""
        with self._lock:
            snapshot = self._catalog.snapshot()
            key = self._key_for(snapshot)
            if key.digest() == self._key.digest():
                return False
            why = key.changes_from(self._key)
            for name in self._snapshot.names - snapshot.names:
                self._removed[name] = f"removed from the catalog in epoch {self.epoch + 1}"
            for name in snapshot.names:
                self._removed.pop(name, None)
            reason = ", ".join(why) or "declaration change"
            self._revoked = {name: reason for name in self.state.active}
            self._snapshot = snapshot
            self._key = key
            self.epoch += 1
            old_mode = self.policy.mode
            self.policy = self._decide(snapshot)
            removed = self.declarations.rebase(self.policy, snapshot).removed
            self._pending_removed = tuple(sorted({*self._pending_removed, *removed}))
            self.state = ActivationState(identity=self.identity(), epoch=self.epoch)
            self._restore_reason = None
            self._dirty = True
            self._notes.append(
                GateNote(
                    "info",
                    f"new declaration epoch {self.epoch} ({reason}); earlier tool activation revoked",
                    {"kind": "epoch", "epoch": self.epoch, "reasons": why, "revoked": sorted(self._revoked)},
                )
            )
            if self.policy.mode != old_mode or self.policy.fallback:
                self._note_policy(self.policy)
            return True

    def set_route(self, route: RouteBinding) -> bool:
        with self._lock:
            self._route = route
            return self.refresh()

    def set_mode(self, mode: PermissionMode) -> bool:
        with self._lock:
            self._host.mode = mode
            return self.refresh()

    # -- continuation ------------------------------------------------------------------------

    def restore(self, messages: Sequence[Mapping[str, Any]]) -> RestoreResult:
        """Rebuild activation from history at continuation; never from declarations."""
        with self._lock:
            self.refresh()
            result = self.verdict(messages)
            self.declarations.adopt_history(messages)
            if result.source in ("section", "section+toolsearch"):
                self.epoch = max(self.epoch, result.epoch)
            else:
                # Whatever is written next must outrank every section this installation wrote
                # before, so none of them can be replayed as the newest (design A8).
                self.epoch = max(self.epoch, result.epoch, result.epoch_floor + 1)
            self.state = ActivationState(
                identity=self.identity(), active=tuple(result.active), epoch=self.epoch
            )
            self._dirty = bool(result.recovered) or result.source in ("legacy", "rejected")
            untrusted = result.source == "rejected"
            self._restore_reason = result.reason if untrusted else None
            self._revoked = {}
            self.last_restore = result
            level: Literal["info", "warning"] = "warning" if untrusted else "info"
            self._notes.append(
                GateNote(
                    level,
                    f"tool activation restored: {result.reason}",
                    {"kind": "activation-restore", "source": result.source, "active": sorted(result.active)},
                )
            )
            return result

    def verdict(self, messages: Sequence[Mapping[str, Any]]) -> RestoreResult:
        """What restoration would grant from ``messages`` now (read-only; the Activation tab).

        One pass: the installation's signer is resolved at the first section to verify, so a
        history with nothing to verify never reads the secret, and one with a section is not
        replayed twice (design A8). A result other than "none" resolves it in any case:
        an unusable secret rejects whatever the history would restore."""
        with self._lock:
            found = restore_activation(
                messages,
                identity=self.identity(),
                deferred_names=self._snapshot.deferred_names,
                signer=_SignerOnDemand(self),
                could_return=self.could_return,
            )
            if found.source == "none":
                return found
            self._resolve_signer()
            if self._signer_problem is not None:
                return found._replace(
                    active=frozenset(),
                    source="rejected",
                    recovered=(),
                    reason=f"{self._signer_problem}; nothing restored",
                )
            return found

    # -- the gate ----------------------------------------------------------------------------

    def execute(self, call: Mapping[str, Any], *, cancel: threading.Event | None = None) -> GateResult:
        """Run one pi-ai ``toolCall`` block through the gate; always returns a tool result."""
        request = ToolCallRequest.from_block(dict(call))
        with self._lock:
            self.refresh()
            snapshot = self._snapshot
            spec = snapshot.get(request.name)
            if spec is None:
                if request.name in self._removed:
                    return self._refuse(
                        request,
                        "removed",
                        f"Tool {request.name} was {self._removed[request.name]}; it can no longer be called.",
                    )
                available = ", ".join(sorted(snapshot.names - snapshot.deferred_names))
                return self._refuse(
                    request,
                    "unknown",
                    f"Unknown tool {request.name!r}. Core tools: {available}. Deferred tools are found with {TOOLSEARCH}.",
                )
            if request.name in snapshot.deferred_names and not self.state.is_active(request.name):
                if request.name in self._revoked:
                    return self._refuse(
                        request,
                        "revoked",
                        f"Tool {request.name} is no longer activated: a new declaration epoch "
                        f"({self._revoked[request.name]}) revoked earlier activation. Call {TOOLSEARCH} to activate it again.",
                    )
                extra = f" ({self._restore_reason})" if self._restore_reason else ""
                return self._refuse(
                    request,
                    "not-activated",
                    f"Tool {request.name} is a deferred tool that is not activated{extra}. "
                    f"Call {TOOLSEARCH} to activate it first.",
                )
            deferred = snapshot.deferred
        outcome = self._host.run(spec, request, deferred_tools=deferred, cancel=cancel)
        activated: tuple[str, ...] = ()
        if spec.name == TOOLSEARCH and not outcome.is_error:
            activated = self._grant(outcome)
        return GateResult(outcome.to_message(request.id, request.name), None, activated)

    def _refuse(self, request: ToolCallRequest, stage: GateStage, reason: str) -> GateResult:
        return GateResult(refusal(reason, stage=stage).to_message(request.id, request.name or "?"), stage)

    def _grant(self, outcome: ToolOutcome) -> tuple[str, ...]:
        details = outcome.details or {}
        names = details.get("activated")
        if not isinstance(names, list):
            return ()
        with self._lock:
            granted = tuple(n for n in names if isinstance(n, str) and n in self._snapshot.deferred_names)
            new = [n for n in granted if not self.state.is_active(n)]
            if new:
                self.state = self.state.granting(new)
                for name in new:
                    self._revoked.pop(name, None)
                self._dirty = True
            return granted

    # -- what the runtime appends and sends --------------------------------------------------

    def section_text(self, *, for_comparison: bool = False) -> str:
        """The current ``tool_activation`` section (for the leading system prompt).

        ``for_comparison``: the text is only compared with the history's (is an update due?).
        While the installation's signer is unresolved, restore found no section in the history
        (it resolves it for any section it must verify), so this section differs from the
        history's whatever its MAC: the throwaway signer seals it and the keyring stays closed
        (design A8). Such a text is never journaled or sent.
        """
        with self._lock:
            unresolved = self._signer_source is not None
            signer = self._signer if for_comparison and unresolved else self.signer
            return render_section(signer.seal(self.state))

    def take_update(self, timestamp: int | None = None) -> dict[str, Any] | None:
        """The system message to append after this turn's tool results, or None if nothing changed."""
        with self._lock:
            self.refresh()
            if not self._dirty:
                return None
            # publish() skips schemas already declared, so only new ones become toolsAdded.
            added = self.declarations.publish(self.state.active).added
            removed, self._pending_removed = self._pending_removed, ()
            self._dirty = False
            return activation_message(
                self.signer.seal(self.state), tools_added=added, tools_removed=removed, timestamp=timestamp
            )

    def request_tools(self) -> list[dict[str, Any]]:
        with self._lock:
            return self.declarations.request_tools()

    def take_notes(self) -> list[GateNote]:
        with self._lock:
            notes, self._notes = self._notes, []
            return notes


class _SignerOnDemand:
    """The gate's signer, resolved when restoration first verifies a section."""

    def __init__(self, gate: ToolGate) -> None:
        self._gate = gate

    def verify(self, state: ActivationState) -> bool:
        return self._gate.signer.verify(state)
