"""The scenario language and the synthetic conversations written in it.

A conversation is a list of ``Step``: a user turn (``say``; ``call`` and ``search`` are user
turns whose text carries the emulator's script markers for a tool call or a ToolSearch), or a
change made between turns (a skill edited, guidance added, a manual compaction).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal


@dataclass(frozen=True)
class Step:
    """One event: a user turn (``say``), or a change made between turns."""

    kind: Literal["say", "skill", "guidance", "compact"]
    text: str = ""
    name: str = ""


def say(text: str) -> Step:
    return Step("say", text)


def call(tool: str, args: Mapping[str, Any], text: str = "") -> Step:
    return Step(
        "say", f"{text or 'Please run ' + tool} [[tool:{tool} {json.dumps(dict(args), sort_keys=True)}]]"
    )


def search(names: Sequence[str], text: str = "I need more tools") -> Step:
    return Step("say", f"{text} [[search:select:{','.join(names)}]]")


def skill(name: str, description: str | None) -> Step:
    """Add or change (``description``) or remove (``None``) a workspace skill."""
    return Step("skill", description or "", name)


def guidance(text: str) -> Step:
    return Step("guidance", text)


def short_conversation() -> list[Step]:
    """Six requests: a greeting, a skill edit, a ToolSearch activation, a guidance change, a
    deferred tool with a mid-size result, and a closing question."""
    return [
        say("Hi! I'm picking this project up today. What should I look at first?"),
        skill("release-checklist", "Steps to cut a release: changelog, version bump, tag, announce."),
        search(["ci_log", "ci_runs"], "The nightly build is red; find me the CI tools."),
        guidance("Quote CI log lines verbatim when you cite them."),
        call("ci_log", {"run": 812, "lines": 60}, "Show the failing part of run 812."),
        say("Thanks. Summarize the failure in two sentences."),
    ]


def short_no_search_conversation() -> list[Step]:
    """Six requests with the same kinds of edits but no ToolSearch activation: the case where
    fixed declarations only cost (a larger first request) and never pay back."""
    return [
        say("Hi! I'm picking this project up today. What should I look at first?"),
        skill("release-checklist", "Steps to cut a release: changelog, version bump, tag, announce."),
        call("read", {"path": "README.md"}, "Read the README."),
        guidance("Quote file lines verbatim when you cite them."),
        call("ls", {"path": "src"}, "What is in src?"),
        say("Thanks. Summarize the layout in two sentences."),
    ]


def long_conversation() -> list[Step]:
    """About 80 requests: reads of varied size, greps, four ToolSearch activations, deferred
    tools with small and large results, skill additions/edits/removal, guidance changes and one
    manual compaction about two thirds in."""
    files = ["README.md", "src/app.py", "docs/notes.md", "src/big_module.py", "data/config.json"]
    steps: list[Step] = [
        say("Hi! I'm picking this project up today. Give me an orientation."),
        call("ls", {"path": "."}, "What is in the workspace?"),
        call("read", {"path": "README.md"}, "Read the README."),
        call("read", {"path": "src/app.py"}, "Now the entry point."),
        say("Which module is the riskiest to change? [[words:40]]"),
        skill("db-migrations", "How to write and test a schema migration for this project."),
        call("grep", {"pattern": "def ", "path": "src"}, "List the functions."),
        search(["issue_search", "issue_get"], "Find the issue tracker tools."),
        call("issue_search", {"query": "flaky login", "limit": 12}, "Search the tracker for flaky login."),
        call("issue_get", {"id": 4211}, "Open ticket 4211."),
        guidance("Always link the issue id when you propose a fix."),
        call("read", {"path": "src/big_module.py"}, "Read the module the issue points at."),
        say("Propose a fix plan. [[words:60]]"),
        skill(
            "release-checklist", "Release steps: changelog, version bump, signed tag, announcement, rollback."
        ),
        search(["ci_log", "ci_runs"], "I need the CI tools too."),
        call("ci_runs", {"branch": "main"}, "Which runs failed on main?"),
        call("ci_log", {"run": 812, "lines": 220}, "Show the whole log of run 812."),
        say("Does the log confirm the plan? [[words:30]]"),
        call("read", {"path": "docs/notes.md"}, "Read the design notes."),
        call("grep", {"pattern": "session", "path": "."}, "Where is the session handled?"),
        call("issue_search", {"query": "session timeout", "limit": 30}, "Any related issues?"),
        skill("perf-profiling", "Profile a slow endpoint with py-spy and read the flame graph."),
        call("ci_log", {"run": 815, "lines": 25}, "And the short log of run 815."),
        say("Write the patch description. [[words:80]]"),
        guidance("Keep commit messages under 72 characters per line."),
        call("read", {"path": "data/config.json"}, "Check the config."),
        call("issue_get", {"id": 4302}, "Open ticket 4302 too."),
        call("ci_runs", {"branch": "release/2.4"}, "And the release branch?"),
        say("What is left before we can merge? [[words:40]]"),
        call("read", {"path": "src/app.py"}, "Re-read the entry point after the change."),
        say("Good. Let's pause here."),
        Step("compact"),
        say("Back after the break: where were we?"),
        search(["metrics_query", "deploy_status"], "Find tools for metrics and deploys."),
        call("metrics_query", {"expr": "p95(login_latency)", "points": 90}, "Plot login latency."),
        call("deploy_status", {"env": "staging"}, "Is staging deployed?"),
        skill("perf-profiling", None),
        call("grep", {"pattern": "timeout", "path": "src"}, "Find the timeouts."),
        call("read", {"path": "src/big_module.py"}, "Read the module again."),
        guidance("Prefer feature flags over long-lived branches."),
        say("Draft the rollout plan. [[words:80]]"),
        call("metrics_query", {"expr": "error_rate(login)", "points": 40}, "Error rate?"),
        call("ci_log", {"run": 820, "lines": 120}, "Log of the new run 820."),
        skill("db-migrations", "Schema migrations: write, dry-run on a copy, then apply with a backup."),
        call("issue_search", {"query": "rollout", "limit": 8}, "Open rollout issues?"),
        call("deploy_status", {"env": "production"}, "And production?"),
        say("Summarize the state of the release. [[words:60]]"),
        search(["release_notes", "docs_lookup"], "Tools for release notes and the handbook?"),
        call("release_notes", {"since": "v2.4.0"}, "Draft the release notes since v2.4.0."),
        call("docs_lookup", {"topic": "feature flags"}, "What does the handbook say about flags?"),
        call("grep", {"pattern": "flag", "path": "."}, "Where are flags read?"),
        call("read", {"path": "README.md"}, "Does the README mention the flag?"),
        call("read", {"path": files[2]}, "One more look at the notes."),
        say("Thanks, that's all for today."),
    ]
    return steps


def quick_conversation(steps: Sequence[Step]) -> list[Step]:
    """The long conversation cut down for ``--quick`` (keeps its compaction and every event kind)."""
    cut = [s for i, s in enumerate(steps) if i < 14 or s.kind == "compact"]
    return [*cut, *[s for s in steps[-8:]]]


@dataclass(frozen=True)
class ConversationSpec:
    name: str
    steps: tuple[Step, ...]
    routes: tuple[str, ...] | None = None  # route class keys; None: all


FLASH_ROUTES = ("flash-fixed", "flash-on-demand")


def conversations(quick: bool = False) -> list[ConversationSpec]:
    long = long_conversation()
    return [
        ConversationSpec("short", tuple(short_conversation())),
        ConversationSpec("short-no-search", tuple(short_no_search_conversation()), FLASH_ROUTES),
        ConversationSpec("long", tuple(quick_conversation(long) if quick else long)),
    ]
