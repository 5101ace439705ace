"""HTTP overhead per request: the session's dispatcher against a bare pooled httpx request.

The emulator runs in its own process (so its work does not share this process's interpreter
lock). For each API family the same short streamed answer is fetched, interleaved round by
round:

* ``bare``   — a pooled ``httpx.Client`` (keep-alive, ``TCP_NODELAY``): ``client.stream("POST",
  ...)`` and read every byte; the least any client does;
* ``ours``   — ``HttpDispatcher`` exactly as the runtime calls it (pooled ``SessionHttp``,
  credential swap, cancel watcher, SSE decoding and the family's parser into the final
  assistant message).

Wall time per request, min and median over all rounds. Target: ours within 1.2x of bare for
every family.

    PYTHONPATH=. python benchmarks/http_bench.py [--rounds 7] [--requests 20]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from desktop.emulator import BASE_PATHS
from desktop.host.providers.pool import NO_DELAY
from desktop.pi.projection import ProviderRequest
from desktop.session.dispatch import HttpDispatcher
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


def _measure(family: Any, remote: _Remote, rounds: int, requests: int) -> tuple[list[float], list[float]]:
    """Seconds per request, bare and ours, interleaved round by round."""
    wire = family.request(remote, "system", [("user", "hello there")])
    model: dict[str, Any] = {**family.model(remote), "baseUrl": remote.base_url(family.name)}
    request = ProviderRequest("POST", wire.url, dict(wire.headers), orjson.loads(wire.body))
    # The anchor's best case: pooled, keep-alive, and TCP_NODELAY like ours.
    limits = httpx.Limits(max_keepalive_connections=4)
    bare_client = httpx.Client(transport=httpx.HTTPTransport(limits=limits, socket_options=NO_DELAY))
    dispatcher = HttpDispatcher(lambda: None)
    headers = {"content-type": "application/json", **dict(wire.headers)}

    def bare() -> None:
        with bare_client.stream("POST", wire.url, content=wire.body, headers=headers) as response:
            for _chunk in response.iter_bytes():
                pass

    def ours() -> None:
        message = dispatcher(request, model, on_event=lambda _e: None, cancel=CANCEL)
        assert message["stopReason"] == "stop", message.get("errorMessage")

    bare()
    ours()
    times: dict[str, list[float]] = {"bare": [], "ours": []}
    for _ in range(rounds):
        for name, run in (("bare", bare), ("ours", ours)):
            for _ in range(requests):
                started = time.perf_counter()
                run()
                times[name].append(time.perf_counter() - started)
    bare_client.close()
    dispatcher.close()
    return times["bare"], times["ours"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--requests", type=int, default=20, help="requests per side per round")
    args = parser.parse_args()
    process, url = _start_emulator()
    remote = _Remote(url)
    print(
        f"{'family':<40}{'bare min':>10}{'median':>9}{'ours min':>10}{'median':>9}{'ratio min':>11}{'median':>8}"
    )
    try:
        for family in FAMILIES:
            b, o = _measure(family, remote, args.rounds, args.requests)
            print(
                f"{family.name + '/' + family.api:<40}{min(b) * 1000:>10.2f}{statistics.median(b) * 1000:>9.2f}"
                f"{min(o) * 1000:>10.2f}{statistics.median(o) * 1000:>9.2f}"
                f"{min(o) / min(b):>11.2f}{statistics.median(o) / statistics.median(b):>8.2f}"
            )
    finally:
        process.terminate()
        process.wait(timeout=10)
    print("ms of wall time per request against the emulator in its own process; target ratio <= 1.2")


if __name__ == "__main__":
    main()
