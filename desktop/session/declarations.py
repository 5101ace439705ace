"""Declaration policy: which tool schemas the model is given, and when.

On the exact verified deepseek-flash / openai-completions / official-endpoint binding (with
chronological system support), the complete current catalog is declared in name order
from the first request, so the request-level tool list never changes when ToolSearch
activates a tool: the cached prefix survives, and ToolSearch changes execution activation
only. This is a Desktop policy, not a transport capability. Every other binding publishes
deferred schemas on demand (``toolsAdded`` when activated).

The fixed path falls back to on-demand, never truncating, when the catalog has more than
128 functions (DeepSeek's limit) or its estimated cost would leave less than the
retained-tail budget below the automatic compaction threshold. The reason is a string on
the policy; the runtime journals it as a note and the inspector shows it.

The user may also choose on-demand on the fixed binding (settings ``tools.declarations``:
``"on-demand"``): the first request is smaller, which can make a short conversation cheaper
even though a later ToolSearch activation then rewrites the declared tools (the cache
economics benchmark measures both on the same conversations). ``"auto"`` is the default.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, Literal, NamedTuple

from desktop.host.tools.catalog import CatalogSnapshot, canonical_json
from desktop.session.context_log import system_messages_at

FIXED_PROVIDER = "deepseek"
FIXED_MODEL = "deepseek-flash"
FIXED_API = "openai-completions"
FIXED_BASE_URL = "https://api.deepseek.com"
DEEPSEEK_MAX_FUNCTIONS = 128
DEFAULT_RESERVE_TOKENS = 16_384
DEFAULT_RETAINED_TAIL_TOKENS = 20_000

DeclarationMode = Literal["fixed", "on-demand"]
DeclarationPreference = Literal["auto", "on-demand"]
DECLARATION_PREFERENCES: tuple[DeclarationPreference, ...] = ("auto", "on-demand")


class RouteBinding(NamedTuple):
    """The actual request route, as the route helper resolved it."""

    provider: str
    model_id: str
    api: str
    base_url: str
    transport_verified: bool
    supports_mid_convo_system_messages: bool
    context_window: int
    account: str = ""

    @classmethod
    def from_model(
        cls, model: Mapping[str, Any], *, transport_verified: bool, account: str = ""
    ) -> RouteBinding:
        """From a pi-ai model dict (``compat`` carries the transport flags)."""
        compat = model.get("compat") or {}
        return cls(
            provider=str(model.get("provider", "")),
            model_id=str(model.get("id", "")),
            api=str(model.get("api", "")),
            base_url=str(model.get("baseUrl", "")),
            transport_verified=transport_verified,
            supports_mid_convo_system_messages=bool(compat.get("supportsMidConvoSystemMessages", False)),
            context_window=int(model.get("contextWindow") or 0),
            account=account,
        )

    def is_fixed_declaration_binding(self) -> tuple[bool, str]:
        wanted = (FIXED_PROVIDER, FIXED_MODEL, FIXED_API, FIXED_BASE_URL)
        actual = (self.provider, self.model_id, self.api, self.base_url.rstrip("/"))
        if actual != wanted:
            return False, (
                f"route {self.provider}/{self.model_id} ({self.api}, {self.base_url}) is not the official "
                f"{FIXED_PROVIDER}/{FIXED_MODEL} {FIXED_API} binding; deferred schemas are published on demand"
            )
        if not self.transport_verified:
            return (
                False,
                "the deepseek-flash route is not transport-verified (alias, relay or endpoint override)",
            )
        if not self.supports_mid_convo_system_messages:
            return False, "the deepseek-flash catalog entry lacks verified chronological system support"
        return True, "verified deepseek-flash binding: complete catalog declared from the first request"


class CompactionBudget(NamedTuple):
    reserve_tokens: int = DEFAULT_RESERVE_TOKENS
    retained_tail_tokens: int = DEFAULT_RETAINED_TAIL_TOKENS


def estimate_tokens(tools: Iterable[Mapping[str, Any]]) -> int:
    """chars/4 of each tool's name, description and canonical JSON schema."""
    chars = 0
    for tool in tools:
        chars += len(str(tool.get("name", ""))) + len(str(tool.get("description", "")))
        chars += len(canonical_json(tool.get("parameters", {})).decode("utf-8"))
    return math.ceil(chars / 4)


class DeclarationPolicy(NamedTuple):
    mode: DeclarationMode
    reason: str
    fallback: bool
    function_count: int
    estimated_tokens: int

    def note(self) -> str:
        """One line for the journal and the inspector."""
        prefix = "fixed declarations" if self.mode == "fixed" else "on-demand declarations"
        return f"{prefix}: {self.reason}"


def decide_policy(
    route: RouteBinding,
    catalog: Sequence[Mapping[str, Any]],
    *,
    budget: CompactionBudget = CompactionBudget(),
    prompt_tokens: int = 0,
    preference: DeclarationPreference = "auto",
) -> DeclarationPolicy:
    """Pick fixed or on-demand for ``catalog`` (all declarations) on ``route``.

    ``preference="on-demand"`` is the user's setting to keep on-demand schemas even on the
    fixed binding; ``"auto"`` lets the binding decide.
    """
    if preference not in DECLARATION_PREFERENCES:
        raise ValueError(
            f"tool declaration preference {preference!r} is not one of {', '.join(DECLARATION_PREFERENCES)}"
        )
    count = len(catalog)
    cost = estimate_tokens(catalog) + prompt_tokens
    threshold = route.context_window - budget.reserve_tokens
    fixed, why = route.is_fixed_declaration_binding()
    if not fixed:
        return DeclarationPolicy("on-demand", why, False, count, cost)
    if preference == "on-demand":
        return DeclarationPolicy(
            "on-demand",
            "the tools.declarations setting asks for on-demand schemas on the verified deepseek-flash "
            "binding (it would otherwise declare the complete catalog from the first request)",
            False,
            count,
            cost,
        )
    if count > DEEPSEEK_MAX_FUNCTIONS:
        return DeclarationPolicy(
            "on-demand",
            f"fell back to on-demand schemas: the catalog has {count} functions and DeepSeek accepts at most "
            f"{DEEPSEEK_MAX_FUNCTIONS} per request (nothing truncated)",
            True,
            count,
            cost,
        )
    if threshold - cost < budget.retained_tail_tokens:
        return DeclarationPolicy(
            "on-demand",
            f"fell back to on-demand schemas: the catalog costs about {cost} tokens, leaving "
            f"{threshold - cost} below the compaction threshold of {threshold} (context {route.context_window} "
            f"- reserve {budget.reserve_tokens}), less than the retained-tail budget of "
            f"{budget.retained_tail_tokens} (nothing truncated)",
            True,
            count,
            cost,
        )
    return DeclarationPolicy("fixed", why, False, count, cost)


class ToolChanges(NamedTuple):
    added: tuple[dict[str, Any], ...] = ()
    removed: tuple[str, ...] = ()


class Declarations:
    """What this conversation has declared, under one policy and catalog snapshot.

    ``request_tools()`` is the list the runtime sends: on the fixed route the complete
    catalog in name order (identical bytes whatever is activated); on demand the core
    tools plus each deferred schema once it was published by an activation.
    """

    def __init__(self, policy: DeclarationPolicy, snapshot: CatalogSnapshot) -> None:
        self.policy = policy
        self.snapshot = snapshot
        self._published: dict[str, dict[str, Any]] = {}

    @property
    def fixed(self) -> bool:
        return self.policy.mode == "fixed"

    def initial_tools(self) -> list[dict[str, Any]]:
        """Request-level tools of the first request (before any system message adds more)."""
        if self.fixed:
            return self.snapshot.declarations()
        return [spec.declaration() for spec in sorted(self.snapshot.core, key=lambda s: s.name)]

    def request_tools(self) -> list[dict[str, Any]]:
        tools = {tool["name"]: tool for tool in self.initial_tools()}
        tools.update(self._published)
        return [tools[name] for name in sorted(tools)]

    def publish(self, names: Collection[str]) -> ToolChanges:
        """Schemas to send as ``toolsAdded`` for newly activated deferred tools (none when fixed)."""
        if self.fixed:
            return ToolChanges()
        added: list[dict[str, Any]] = []
        for name in sorted(names):
            spec = self.snapshot.get(name)
            if (
                spec is None
                or not any(d.name == name for d in self.snapshot.deferred)
                or name in self._published
            ):
                continue
            declaration = spec.declaration()
            self._published[name] = declaration
            added.append(declaration)
        return ToolChanges(added=tuple(added))

    def adopt_history(self, messages: Sequence[Mapping[str, Any]]) -> None:
        """Learn which deferred schemas the history already declared (what the model can see).

        This is declaration bookkeeping only, so the same schema is not published twice;
        it never grants execution (see ``activation.restore_activation``).
        """
        if self.fixed:
            return
        for _, message in system_messages_at(messages):
            for tool in message.get("toolsAdded") or ():
                name = tool.get("name") if isinstance(tool, Mapping) else None
                spec = self.snapshot.get(name) if isinstance(name, str) else None
                if (
                    spec is not None
                    and spec.name in self.snapshot.deferred_names
                    and spec.declaration() == dict(tool)
                ):
                    self._published[spec.name] = spec.declaration()
            for ref in message.get("toolsRemoved") or ():
                if isinstance(ref, Mapping):
                    self._published.pop(str(ref.get("name")), None)

    def rebase(self, policy: DeclarationPolicy, snapshot: CatalogSnapshot) -> ToolChanges:
        """Move to a new catalog/policy (a new epoch); published schemas that left or changed are removed."""
        removed = [
            name
            for name, declaration in self._published.items()
            if (spec := snapshot.get(name)) is None or spec.declaration() != declaration
        ]
        for name in removed:
            del self._published[name]
        self.policy = policy
        self.snapshot = snapshot
        return ToolChanges(removed=tuple(sorted(removed)))
