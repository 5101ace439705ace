"""Shared catalog fixtures: real bundled snapshots, and helpers to write altered copies of them."""

from __future__ import annotations

import contextlib
import copy
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import orjson
import pytest

from desktop.pi.catalog import Catalog, build_catalog, default_catalog
from desktop.pi.catalog.pi_snapshot import bundled_bytes


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return default_catalog()


@pytest.fixture(scope="session")
def published() -> Catalog:
    """Pi's catalog exactly as pi-ai 1.0.3 publishes it: no patches."""
    return build_catalog(patches=())


@pytest.fixture
def pi_doc() -> dict[str, Any]:
    """A private, mutable copy of the bundled Pi catalog document."""
    doc: dict[str, Any] = orjson.loads(bundled_bytes())
    return copy.deepcopy(doc)


@pytest.fixture
def find_model() -> Callable[[dict[str, Any], str, str], dict[str, Any]]:
    def find(doc: dict[str, Any], provider: str, model_id: str) -> dict[str, Any]:
        for model in doc["models"]:
            if model["provider"] == provider and model["id"] == model_id:
                return model  # type: ignore[no-any-return]
        raise AssertionError(f"{provider}/{model_id} is not in the Pi snapshot")

    return find


@contextlib.contextmanager
def static_server(routes: dict[str, bytes], hits: list[str] | None = None) -> Iterator[str]:
    """A loopback HTTP server answering GET with ``routes`` (JSON; 404 for any other path),
    appending each path asked for to ``hits``; yields its URL."""
    seen = hits if hits is not None else []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.path)
            body = routes.get(self.path)
            if body is None:
                self.send_response(404)
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()
