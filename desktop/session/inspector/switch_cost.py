"""What changing a session's route or fallback costs, said before it happens (design G12).

The choice of route is the most expensive decision in a session: a provider's prompt cache
belongs to one route, so the next request after a switch is read cold. Before the window
switches, it says so in money: the next request's predicted cost on the current route (warm,
after what this run sent there, or the request behind the last reply) against its cost on the
new one (after whatever this run sent there: usually nothing, so cold), both from the catalog
prices and the providers' cache rules (design P6); and how many activated tools the new
declaration epoch revokes (design A7).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from desktop.pi.cache_view import predict
from desktop.pi.money import format_cost
from desktop.session.inspector.preview import for_preview, previous_messages, request_for_binding
from desktop.session.runtime import SessionRoute, SessionRuntime


class SwitchCost(NamedTuple):
    """The next request's figures on the current and the new binding."""

    what: str
    cost_now: float
    cost_new: float
    cached_now: int
    cached_new: int
    total_new: int
    revoked: int

    @property
    def extra(self) -> float:
        return self.cost_new - self.cost_now

    def text(self) -> str:
        """One sentence: e.g. "Switching to openai/gpt-5.5 starts a cold cache: about $0.04 more
        on the next request; the activation of 3 tools is revoked." """
        if self.cached_new == 0 and self.total_new > 0:
            cache = "starts a cold cache"
        elif self.cached_new < self.cached_now:
            cache = f"reads {self.cached_new:,} tokens from the cache instead of {self.cached_now:,}"
        else:
            cache = "keeps the cache warm"
        if self.extra > 0:
            money = f"about {format_cost(self.extra)} more on the next request"
        elif self.extra < 0:
            money = f"about {format_cost(-self.extra)} less on the next request"
        else:
            money = "the same cost on the next request"
        sentence = (
            f"{self.what} {cache}: {money} ({format_cost(self.cost_now)} → {format_cost(self.cost_new)})"
        )
        if self.revoked:
            sentence += (
                f"; the activation of {self.revoked} tool{'s' if self.revoked != 1 else ''} is revoked"
            )
        return sentence + "."


def _history(runtime: SessionRuntime, binding: SessionRoute, sent: Sequence[bytes]) -> list[bytes]:
    if sent:
        return list(sent)
    before = previous_messages(runtime)
    return [request_for_binding(binding, before).body_bytes] if before is not None else []


def switch_cost(
    runtime: SessionRuntime,
    target: SessionRoute,
    *,
    what: str,
    sent_now: Sequence[bytes],
    sent_target: Sequence[bytes],
    revoked: int,
    same_cache: bool = False,
) -> SwitchCost:
    """The next request on the session's binding against the same request on ``target``.

    ``same_cache``: the target reads the same provider cache as now (a fallback change on the
    same route), so what was sent on the route counts for both."""
    current = for_preview(runtime.route)
    now_body = runtime.next_request().body_bytes
    now_history = _history(runtime, current, sent_now)
    now = predict(current.model, now_body, now_history)
    new_body = runtime.next_request(route=target).body_bytes
    new = predict(target.model, new_body, now_history if same_cache else list(sent_target))
    return SwitchCost(
        what=what,
        cost_now=float(now.cost.get("total", 0.0)),
        cost_new=float(new.cost.get("total", 0.0)),
        cached_now=now.cached,
        cached_new=new.cached,
        total_new=new.total,
        revoked=revoked,
    )


def as_json(cost: SwitchCost) -> dict[str, Any]:
    return {**cost._asdict(), "extra": cost.extra, "text": cost.text()}
