"""The Activation tab: which deferred tools may run, bound to what, and why (design G3).

The worker sends a plain dict (see ``SessionWorker.activation_info``); this pane only renders
it, so the view never reaches into the tools layer itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PySide6.QtWidgets import QWidget

from desktop.ui.glossary import term
from desktop.ui.html import Colors, badge, esc
from desktop.ui.inert import InertBrowser
from desktop.ui.theme import is_dark


def _names(values: Any, empty: str = "none") -> str:
    items = [str(v) for v in values or ()]
    return esc(", ".join(items)) if items else f"<i>{empty}</i>"


#: The glossary entry that explains each label of the table (its tooltip; design G7).
LABEL_TERMS = {
    "Active deferred tools": "deferred tool",
    "Restored when the session opened": "activation",
    "Epoch": "epoch",
    "Identity (SHA-256)": "identity",
    "Account": "identity",
    "Model": "identity",
    "API": "identity",
    "Endpoint": "identity",
    "Permission mode": "permission mode",
    "Declarations": "declaration policy",
    "Deferred names": "deferred tool",
    "Declaration policy": "declaration policy",
    "Fallback reason": "on-demand",
    "Functions / estimated schema tokens": "fixed",
}


def label_term(label: str) -> str:
    """The label with its explanation as a tooltip; a label without one is a ``KeyError``."""
    key = label.split(" (", 1)[0] if label.startswith("Declarations (") else label
    return term(label, LABEL_TERMS[key])


def render_activation(info: Mapping[str, Any], dark: bool) -> str:
    c = Colors(dark)
    if not info.get("available", True):
        return f"<p><i>{esc(info.get('why', 'The tools layer is not available.'))}</i></p>"
    valid = bool(info.get("valid"))
    out = [f"<h3 style='margin-bottom: 2px'>{term('Tool activation', 'activation')}</h3>"]
    out.append(
        "<p>"
        + badge("valid" if valid else "not valid", c.ok if valid else c.bad)
        + f" &nbsp;{esc(info.get('why', ''))}</p>"
    )
    legacy = list(info.get("legacyEvidence") or ())
    active = _names(info.get("active"))
    if legacy:  # a history without a section: its ToolSearch results activated these (A5)
        active += " &nbsp;" + badge("legacy evidence", c.warn) + f" {_names(legacy)}"
    rows = [
        ("Active deferred tools", active),
        ("Restored when the session opened", esc(info.get("restoredAtOpen") or "—")),
        ("Epoch", esc(info.get("epoch", 0))),
        ("Identity (SHA-256)", f"<code>{esc(info.get('identity', ''))}</code>"),
    ]
    inputs = info.get("inputs") or {}
    declarations = list(inputs.get("declarations") or ())
    rows += [
        ("Account", esc(inputs.get("account", ""))),
        ("Model", esc(inputs.get("model", ""))),
        ("API", esc(inputs.get("api", ""))),
        ("Endpoint", f"<code>{esc(inputs.get('endpoint', ''))}</code>"),
        ("Permission mode", esc(inputs.get("mode", ""))),
        (f"Declarations ({len(declarations)})", _names(declarations)),
        ("Deferred names", _names(inputs.get("deferred"))),
    ]
    policy = info.get("policy") or {}
    fallback = policy.get("fallback")
    rows += [
        (
            "Declaration policy",
            esc(policy.get("mode", "?")) + (f" — {esc(policy.get('note'))}" if policy.get("note") else ""),
        ),
        (
            "Fallback reason",
            f"<span style='color: {c.warn}'>{esc(fallback)}</span>"
            if fallback
            else f"<i style='color: {c.muted}'>none</i>",
        ),
    ]
    if policy.get("functions") is not None:
        rows.append(
            (
                "Functions / estimated schema tokens",
                f"{policy.get('functions')} / {policy.get('estimatedTokens', '?')}",
            )
        )
    table = "".join(
        f"<tr><td valign='top' style='color: {c.muted}; padding-right: 12px'>{label_term(k)}</td><td>{v}</td></tr>"
        for k, v in rows
    )
    out.append(f"<table cellspacing='0' cellpadding='3'>{table}</table>")
    section = info.get("section")
    if section:
        out.append("<p><b>Section in the transcript</b> (<code>tool_activation</code>)</p>")
        out.append(
            f"<pre style='background: {c.code_bg}; padding: 6px; white-space: pre-wrap'>{esc(section)}</pre>"
        )
    notes = info.get("notes") or ()
    if notes:
        out.append("<p><b>Gate notes</b></p><ul>" + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
    return "".join(out)


class ActivationView(InertBrowser):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("activationView")
        self.info: Mapping[str, Any] = {}
        self.setHtml("<p><i>Waiting for the session…</i></p>")

    def show_info(self, info: Mapping[str, Any]) -> None:
        self.info = dict(info)
        self.setHtml(render_activation(info, is_dark(self.palette())))
