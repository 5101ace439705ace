"""Corrections to the single Pi catalog, each one removable on its own.

A patch names one exact published binding and the compat fields it corrects there. It is applied
to the Pi catalog before anything reads it, so there is still exactly one source of transport
flags (no parallel allow-list). When the published catalog already carries the value, the patch
is a no-op and says so: that is the signal to delete it.

To remove a patch, delete it from ``DEFAULT_PATCHES`` (or build a catalog with ``patches=()``);
the catalog then shows Pi's published flags exactly.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal, NamedTuple

from desktop.pi.catalog.transport import SYSTEM_MESSAGES, Binding

PatchStatus = Literal["applied", "already published", "binding not found"]


class CatalogPatch(NamedTuple):
    name: str
    binding: Binding
    compat: Mapping[str, Any]
    why: str
    remove_when: str


class PatchOutcome(NamedTuple):
    patch: CatalogPatch
    status: PatchStatus
    detail: str = ""

    def describe(self) -> str:
        return f"patch {self.patch.name}: {self.status}" + (f" ({self.detail})" if self.detail else "")


DEEPSEEK_FLASH_SYSTEM_MESSAGES = CatalogPatch(
    name="deepseek-flash-mid-convo-system-messages",
    binding=Binding(
        provider="deepseek",
        model_id="deepseek-flash",
        api="openai-completions",
        base_url="https://api.deepseek.com",
    ),
    compat={SYSTEM_MESSAGES: True},
    why=(
        "pi-ai 1.0.3 publishes supportsMidConvoSystemMessages for deepseek/deepseek-v4-pro but not for "
        "deepseek/deepseek-flash on the same official endpoint. Authorized official-endpoint experiments "
        "confirmed both preserved cache reuse and effective updated instructions (ADR: preserve "
        "chronological model system state). Native tool-addition and tool-change flags stay off."
    ),
    remove_when="the published Pi catalog sets supportsMidConvoSystemMessages for this binding",
)

DEFAULT_PATCHES: tuple[CatalogPatch, ...] = (DEEPSEEK_FLASH_SYSTEM_MESSAGES,)


def apply_patches(
    models: Iterable[Mapping[str, Any]], patches: Iterable[CatalogPatch]
) -> tuple[list[Mapping[str, Any]], tuple[PatchOutcome, ...]]:
    """Return the models with every patch applied to its exact binding, and what each patch did.

    Untouched models are passed through as the same objects; a patched model is a new dict, so the
    parsed snapshot itself never changes.
    """
    out = list(models)
    outcomes: list[PatchOutcome] = []
    for patch in patches:
        target = patch.binding
        # Provider and id first: a ``Binding`` per published model costs more than the rest of
        # building the catalog, and only the patch's own model can match (the status budget).
        hits = [
            i
            for i, m in enumerate(out)
            if str(m["provider"]) == target.provider
            and str(m["id"]) == target.model_id
            and Binding.of(m).same_as(target)
        ]
        if not hits:
            outcomes.append(
                PatchOutcome(patch, "binding not found", f"no published model is {patch.binding.describe()}")
            )
            continue
        index = hits[0]
        model = out[index]
        compat = dict(model.get("compat") or {})
        if all(compat.get(k) == v for k, v in patch.compat.items()):
            outcomes.append(
                PatchOutcome(
                    patch,
                    "already published",
                    f"Pi already publishes it; remove the patch ({patch.remove_when})",
                )
            )
            continue
        compat.update(patch.compat)
        patched = dict(model)
        patched["compat"] = compat
        out[index] = patched
        outcomes.append(
            PatchOutcome(patch, "applied", ", ".join(f"{k}={v!r}" for k, v in patch.compat.items()))
        )
    return out, tuple(outcomes)
