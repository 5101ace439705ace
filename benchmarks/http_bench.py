"""HTTP overhead per request: the session's dispatcher against a bare pooled httpx request.

The emulator runs in its own process (so its work does not share this process's interpreter
lock). For each API family the same short streamed answer is fetched, interleaved request by
request (the sides take turns, each going first in turn, so all see the same moments of a
shared machine's load):

* ``bare``   — a pooled ``httpx.Client`` (keep-alive, ``TCP_NODELAY``): ``client.stream("POST",
  ...)`` with the very headers and body ours sends, prepared once, and read every byte; the
  least a caller of httpx's client does (ours sends to the pool's transport itself, without
  the client's cookie jar and redirect layer, so it can come in under this);
* ``ours``   — ``HttpDispatcher`` exactly as the runtime calls it with a projected request
  (credential placeholders swapped for the account's key, the Codex account id read from
  its token; the pooled ``SessionHttp`` and its cancel watcher, SSE decoding and the
  family's parser into the final assistant message).

With ``--transport`` a third side runs in the same rotation:

* ``transport`` — ours with the family's parser swapped for one that reads nothing (the
  bytes are still read to the end): what the dispatch costs without turning the stream into
  a message, so the report can tell the transport's overhead from the parsing's.

Wall time and this process's CPU time per request (the emulator's work is in the other
process), min and median over all requests. Wall time on a busy machine is mostly
scheduling; CPU time shows the work itself. Target: ours within 1.2x of bare for every
family.

    PYTHONPATH=. python benchmarks/http_bench.py [--rounds 7] [--requests 20] [--transport]

On a shared machine even CPU time varies with the neighbours' cache use. ``--only FAMILY/API
SIDE COUNT`` (SIDE ``bare``, ``ours`` or ``transport``) runs one side alone, for counting
instructions, which do not vary: run it under ``valgrind --tool=cachegrind --cache-sim=no``
with two counts; the difference in ``I refs`` divided by the difference in counts is one
request's instructions in this process.
"""

from __future__ import annotations

import argparse
import base64
import functools
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import compare, report

from desktop.emulator import BASE_PATHS
from desktop.host.providers import client as host_client
from desktop.host.providers.auth import auth_headers
from desktop.host.providers.pool import NO_DELAY
from desktop.pi.projection import CREDENTIAL_PLACEHOLDER, ProviderRequest
from desktop.pi.projection.codex_responses import ACCOUNT_PLACEHOLDER, JWT_CLAIM_PATH
from desktop.pi.streaming import parser_for
from desktop.session.dispatch import HttpDispatcher, with_credential
from tests.wire.families import FAMILIES


class _Remote:
    """Stands in for ``Emulator`` in ``Family.request``: the URLs of a separate process."""

    def __init__(self, url: str) -> None:
        self.url = url

    def base_url(self, family: str) -> str:
        return self.url + BASE_PATHS[family]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _start_emulator() -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    process = subprocess.Popen(
        [sys.executable, "-m", "desktop", "emulator", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.1):
                return process, url
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise SystemExit("the emulator did not start")


CANCEL = threading.Event()


class _ReadsNothing:
    """Stands in for the family's parser on the ``transport`` side: every chunk is taken and
    dropped, and the message ends as a stop."""

    terminal = False

    def __init__(self, model: Any, **_: Any) -> None:
        self.model = model

    def feed(self, chunk: bytes) -> list[Any]:
        return []

    def finish(self) -> list[Any]:
        return []

    def abort(self) -> list[Any]:
        return []

    def fail(self, message: str) -> list[Any]:
        return []

    def result(self) -> dict[str, Any]:
        return {"stopReason": "stop"}


def _codex_token() -> str:
    """A ChatGPT access token's shape: a JWT whose payload (about 1 KB, like a real one)
    carries the account id that the Codex headers repeat."""
    claims = {JWT_CLAIM_PATH: {"chatgpt_account_id": "acct-bench"}, "scope": "openid " * 150}
    payload = base64.b64encode(orjson.dumps(claims)).decode().rstrip("=")
    return f"eyJhbGciOiJSUzI1NiJ9.{payload}.c2lnbmF0dXJl"


Side = Callable[[], None]


def _sides(family: Any, remote: _Remote) -> tuple[Side, Side, Side, Side]:
    """The bare request, ours, ours without parsing, and what closes the clients."""
    wire = family.request(remote, "system", [("user", "hello there")])
    model: dict[str, Any] = {**family.model(remote), "baseUrl": remote.base_url(family.name)}
    # As a projection leaves them: the credential as a placeholder, swapped in at dispatch.
    projected = {"content-type": "application/json", **dict(wire.headers)}
    projected.update(auth_headers(family.api, CREDENTIAL_PLACEHOLDER))
    key = "sk-bench-0123456789abcdef"
    if family.api == "openai-codex-responses":
        projected["chatgpt-account-id"] = ACCOUNT_PLACEHOLDER
        key = _codex_token()
    request = ProviderRequest("POST", wire.url, projected, orjson.loads(wire.body))
    assert request.body_bytes == wire.body
    # The anchor's best case: pooled, keep-alive, TCP_NODELAY like ours, and the very headers
    # ours sends, prepared once.
    headers = with_credential(projected, key)
    limits = httpx.Limits(max_keepalive_connections=4)
    bare_client = httpx.Client(transport=httpx.HTTPTransport(limits=limits, socket_options=NO_DELAY))
    dispatcher = HttpDispatcher(lambda: key)

    def bare() -> None:
        with bare_client.stream("POST", wire.url, content=wire.body, headers=headers) as response:
            for _chunk in response.iter_bytes():
                pass

    def ours() -> None:
        message = dispatcher(request, model, on_event=lambda _e: None, cancel=CANCEL)
        assert message["stopReason"] == "stop", message.get("errorMessage")

    def transport() -> None:
        host_client.parser_for = _ReadsNothing  # type: ignore[assignment]
        try:
            message = dispatcher(request, model, on_event=lambda _e: None, cancel=CANCEL)
        finally:
            host_client.parser_for = parser_for
        assert message["stopReason"] == "stop"

    def close() -> None:
        bare_client.close()
        dispatcher.close()

    return bare, ours, transport, close


def _timed(run: Side) -> tuple[float, float]:
    """Wall and process CPU ms of one request."""
    wall_start, cpu_start = time.perf_counter(), time.process_time()
    run()
    return (time.perf_counter() - wall_start) * 1000, (time.process_time() - cpu_start) * 1000


def _measure(
    family: Any, remote: _Remote, rounds: int, requests: int, with_transport: bool
) -> dict[str, list[tuple[float, float]]]:
    """Wall and CPU ms per request for each side, interleaved request by request
    (``_bench.compare``: each side first in turn, one request each first, uncounted)."""
    bare, ours, transport, close = _sides(family, remote)
    sides = {"bare": bare, "ours": ours} | ({"transport": transport} if with_transport else {})
    try:
        for run in sides.values():  # open the clients' connections
            run()
            run()
        return compare(
            {name: functools.partial(_timed, run) for name, run in sides.items()}, rounds * requests
        )
    finally:
        close()


def _one_side(family_name: str, side: str, count: int) -> None:
    """Only ``count`` requests of one side (after a warm-up), for an instruction counter: the
    difference between two counts, divided by the difference in requests, is what one
    request costs, free of the machine's load (see the module docstring)."""
    process, url = _start_emulator()
    try:
        family = next(f for f in FAMILIES if f"{f.name}/{f.api}" == family_name)
        bare, ours, transport, close = _sides(family, _Remote(url))
        run = {"bare": bare, "ours": ours, "transport": transport}[side]
        for _ in range(5):
            run()
        for _ in range(count):
            run()
        close()
    finally:
        process.terminate()
        process.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--requests", type=int, default=20, help="requests per side per round")
    parser.add_argument("--only", nargs=3, metavar=("FAMILY/API", "SIDE", "COUNT"), help="one side alone")
    parser.add_argument("--transport", action="store_true", help="also ours without parsing")
    args = parser.parse_args()
    if args.only:
        _one_side(args.only[0], args.only[1], int(args.only[2]))
        return
    process, url = _start_emulator()
    remote = _Remote(url)
    shown = ["ours", "transport"] if args.transport else ["ours"]
    try:
        for family in FAMILIES:
            measured = _measure(family, remote, args.rounds, args.requests, args.transport)
            name = f"{family.name}/{family.api}"
            for side in shown:
                label = name if side == "ours" else f"{name}, without parsing"
                for index, clock in enumerate(("wall", "CPU")):
                    report(
                        f"{label}: one request, {clock}",
                        [t[index] for t in measured[side]],
                        [t[index] for t in measured["bare"]],
                        anchor_name="a bare pooled httpx request",
                        unit=f"ms {clock}",
                        budget=1.2 if side == "ours" else None,
                    )
    finally:
        process.terminate()
        process.wait(timeout=10)
    print("against the emulator in its own process")


if __name__ == "__main__":
    main()
