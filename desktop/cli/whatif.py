"""`pi-desktop whatif`: what a session would have cost on other routes and strategies (design X3).

Reads any session (Pi Desktop, pi-coding-agent, Claude Code; recognized by content), never
writes it, replays its requests onto each route with each delivery strategy through the one
prompt-cache rules module, and prints the table with the assumptions it rests on.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from typing import TYPE_CHECKING, Any, TextIO

from desktop.cli import terminal_columns
from desktop.cli._args import CliError, add_branch_argument
from desktop.cli._boundary import location, one_line, say

if TYPE_CHECKING:  # the replay loads the catalogs; ``--help`` stays light
    from desktop.session.whatif import Progress

DEFAULT_ROUTES = "anthropic/claude-opus-5-5,deepseek/deepseek-flash,openai/gpt-5.5"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "whatif",
        help="replay a session's requests on other routes and strategies: tokens, cache hits, cost",
        description="What would this session have cost? Replays every request of the session (Pi Desktop, "
        "pi or Claude Code) on each route and delivery strategy with the providers' cache rules and the "
        "catalog's prices. Reads the session; never writes it.",
    )
    parser.add_argument("session", help="a session file: Pi Desktop, pi-coding-agent or Claude Code (JSONL)")
    parser.add_argument(
        "--routes",
        default=DEFAULT_ROUTES,
        help=f'comma-separated "provider/model-id" routes (default: {DEFAULT_ROUTES})',
    )
    add_branch_argument(parser)
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(handler=run)


def render(result: Any) -> str:
    # Lazy: the --help budget.
    from desktop.pi.money import format_cost

    lines = [f"session   {result.source} ({result.format}), {result.requests} request(s)"]
    kinds = result.replayed
    if kinds.get("otherBranches") or kinds.get("subAgents"):  # design X9
        lines.append(
            f"replayed  {kinds.get('currentBranch', 0)} on the current branch, "
            f"{kinds.get('otherBranches', 0)} on other branches, {kinds.get('subAgents', 0)} of sub-agents"
        )
    header = (
        f"{'route':28} {'strategy':36} {'input':>10} {'uncached':>10} {'writes':>9} "
        f"{'hit':>6} {'cost':>11} {'vs minimum':>11}"
    )
    lines += ["", header, "-" * len(header)]
    for route in result.routes:
        for index, figures in enumerate(route.strategies):
            name = route.route if index == 0 else ""
            over = (
                "-"
                if not figures.minimum
                else f"{figures.minimum_ratio:.2f}x"
                if figures.over_minimum >= 0
                else f"1.00x ({-figures.over_minimum:,} under)"  # the minimum is an estimate too
            )
            cost = format_cost(figures.cost) if route.price_known else "price unknown"
            lines.append(
                f"{name:28} {figures.strategy:36} {figures.input_tokens:>10,} {figures.uncached_tokens:>10,} "
                f"{figures.cache_writes:>9,} {figures.hit_ratio:>6.1%} {cost:>11} {over:>11}"
            )
        prices = route.prices
        priced = (
            f"$/M in {prices['input']:g}, out {prices['output']:g}, cache read {prices['cacheRead']:g}, "
            f"write {prices['cacheWrite']:g}"
            if route.price_known
            else "price unknown (the catalog has no price for this model)"
        )
        lines.append(
            f"{'':28} cache: {route.rule.description}; theoretical minimum {route.minimum:,} uncached tokens; "
            f"{priced}"
        )
    recorded = result.recorded
    if recorded.get("route"):
        cost = format_cost(recorded["cost"]) if recorded.get("cost") is not None else "price unknown"
        lines += ["", f"recorded  {recorded['route']}: {cost} for the replies as billed"]
    if not result.hidden.get("recorded", True):
        lines.append(f"system    not in the file: {result.hidden.get('note', 'the replay leaves it out')}")
    lines += ["", "assumptions", *(f"  - {text}" for text in result.assumptions)]
    return "\n".join(lines)


class ProgressLine:
    """The replay's progress on standard error (standard output stays the table or the JSON):
    one line rewritten in place on a terminal, else one plain line per pass."""

    def __init__(self, stream: TextIO) -> None:
        self.tty = stream.isatty()
        # The command's standard error strips control characters (design X23); the carriage
        # return that rewrites the line goes to the terminal itself, the text made one line.
        self.stream = sys.__stderr__ if self.tty and sys.__stderr__ is not None else stream
        self.width = 0

    def __call__(self, progress: Progress) -> None:
        if not self.tty:
            if progress.request == 0:
                say("whatif", f"replaying {progress.route}: {progress.strategy}")
            return
        columns = terminal_columns() - 1
        text = one_line(f"pi-desktop whatif: {progress.line()}")[:columns]
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.flush()
        with contextlib.suppress(OSError, ValueError):
            self.stream.write("\r" + text.ljust(self.width))
            self.stream.flush()
        self.width = len(text)

    def close(self) -> None:
        """Clear the line (a terminal), so what follows starts at its left edge."""
        if self.tty and self.width:
            with contextlib.suppress(OSError, ValueError):
                self.stream.write("\r" + " " * self.width + "\r")
                self.stream.flush()
        self.width = 0


def run(args: argparse.Namespace) -> int:
    # Lazy: the --help budget.
    from desktop.pi.catalog import RouteError
    from desktop.pi.projection import ProjectionError
    from desktop.session.foreign import BranchNotFound
    from desktop.session.whatif import request_sequence, what_if

    routes = [r.strip() for r in str(args.routes).split(",") if r.strip()]
    try:
        if not routes:
            raise CliError("--routes needs at least one provider/model-id")
        try:
            sequence = request_sequence(args.session, leaf=args.branch)
        except OSError as error:
            raise CliError(f"{args.session}: cannot be read ({error.strerror or error})") from error
        except (ValueError, BranchNotFound) as error:
            raise CliError(str(error)) from error
        for problem in sequence.problems:  # set-aside lines are never skipped silently (design T9)
            say("whatif", f"{problem.severity}: {problem.message}", location(problem.path, problem.line))
        if not sequence.requests:
            raise CliError(f"{args.session}: the session has no model requests to replay")
        line = ProgressLine(sys.stderr)
        try:
            result = what_if(sequence, routes, progress=line)
        except (RouteError, ProjectionError) as error:
            raise CliError(str(error)) from error
        finally:
            line.close()
    except CliError as error:
        print(f"pi-desktop whatif: {error}", file=sys.stderr)
        return 2
    # Lazy: the --help budget.
    from desktop.pi.money import tidy

    print(json.dumps(tidy(result.to_json()), indent=2) if args.json else render(result))
    return 0
