"""The loopback provider emulator: a real HTTP server speaking the providers' wire formats.

Paths (the first segment names the family, whose cache state is separate; the rest is
matched by its ending, so any prefix pi-ai builds from a base URL works):

=========================  ================================================  ============================
family (``base_url``)      endpoint                                          format
=========================  ================================================  ============================
anthropic                  ``/anthropic/v1/messages``                        Anthropic Messages SSE
openai (``/openai/v1``)    ``/openai/v1/chat/completions``                   chat completions SSE
openai (``/openai/v1``)    ``/openai/v1/responses``                          Responses SSE
azure (``/azure/openai/v1``) ``/azure/openai/v1/responses?api-version=v1``   Responses SSE
codex (``/codex``)         ``/codex/codex/responses``                        Responses SSE
deepseek                   ``/deepseek/chat/completions`` (``/v1`` optional) chat SSE, DeepSeek usage
mistral                    ``/mistral/v1/chat/completions``                  chat SSE, Mistral usage
google (``/google/v1beta``) ``/google/v1beta/models/M:streamGenerateContent``  Gemini SSE
vertex (``/vertex``)       ``/vertex/v1/[projects/P/locations/L/]publishers/   Gemini SSE
                           google/models/M:streamGenerateContent``
bedrock (``/bedrock``)     ``/bedrock/model/M/converse-stream``              AWS event-stream frames
=========================  ================================================  ============================

Routes reach the emulator as ``<origin>/<provider><published path>``, so the provider id
(``amazon-bedrock``, ``google-vertex``) may stand in for the family name: the endpoint is
recognized by its ending.

Replies follow ``desktop.emulator.script``; prompt-cache figures follow
``desktop.emulator.provider_cache`` (the emulator's own rules, written from the providers'
documentation apart from the product's, design P11), expiring by each provider's retention on
the emulator's ``clock`` (a test may set it); faults follow ``desktop.emulator.faults``. The latest
requests are recorded (``emu.requests``) with their exact body bytes and headers: at most
``history`` of them and ``history_bytes`` of bodies, so an emulator that runs for days (the
window's, ``pi-desktop emulator``) does not keep every body it was sent (design X25).

A bad request gets a 4xx answer, never a traceback: a ``Content-Length`` that is not a number
or is negative is 400, a missing one (or a chunked body) 411, one above ``max_body`` 413 without
reading the body, a body shorter than announced 400, and a JSON body that does not have the shape
of the endpoint's request 400.
"""

from __future__ import annotations

import re
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import orjson

from desktop.emulator.conversation import (
    Conversation,
    read_anthropic,
    read_bedrock,
    read_chat,
    read_google,
    read_responses,
)
from desktop.emulator.faults import FAULT_HEADER, Fault, parse_fault_header
from desktop.emulator.provider_cache import (
    ProviderCache,
    Usage,
    asks_long_retention,
    count_tokens,
    policy_for,
)
from desktop.emulator.script import Reply, plan_reply
from desktop.emulator.wire import anthropic, bedrock, chat, google, responses
from desktop.emulator.wire.common import StreamContext

#: Family -> path appended to the emulator URL to get a pi-ai ``Model.baseUrl``.
BASE_PATHS = {
    "anthropic": "/anthropic",
    "openai": "/openai/v1",
    "azure": "/azure/openai/v1",
    "codex": "/codex",
    "deepseek": "/deepseek",
    "mistral": "/mistral",
    "google": "/google/v1beta",
    "vertex": "/vertex",
    "bedrock": "/bedrock",
}
_GOOGLE_PATH = re.compile(r"/models/([^/:]+):streamGenerateContent$")
_BEDROCK_PATH = re.compile(r"/model/([^/]+)/converse-stream$")
_WIRE_ENDINGS = (("/messages", "anthropic"), ("/chat/completions", "chat"), ("/responses", "responses"))
#: Fixed epoch for ``created`` fields so identical runs produce identical bytes.
_EPOCH_MS = 1_700_000_000_000
#: The largest request body read (a long session's request is a few megabytes).
MAX_BODY_BYTES = 64 << 20
#: How many of the latest requests ``Emulator.requests`` keeps, and how many body bytes at most.
HISTORY = 1000
HISTORY_BYTES = 64 << 20


@dataclass(frozen=True)
class RecordedRequest:
    seq: int
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: bytes
    family: str
    wire: str
    status: int
    fault: str | None
    cache: Usage | None

    def json(self) -> Any:
        return orjson.loads(self.body)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    emulator: Emulator

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients that hang up (cancel, reset a kept-alive socket) are normal, not errors; a
        bug is one line on standard error, never a traceback."""
        error = sys.exc_info()[1]
        if isinstance(error, OSError):
            return
        print(
            f"pi-desktop emulator: internal error serving {client_address}: {type(error).__name__}: {error}",
            file=sys.stderr,
        )


class Emulator:
    """Start with ``with Emulator() as emu:`` (port 0 picks a free port) or ``start()``/``stop()``."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        require_auth: bool = False,
        max_body: int = MAX_BODY_BYTES,
        history: int = HISTORY,
        history_bytes: int = HISTORY_BYTES,
    ) -> None:
        self.host = host
        self.require_auth = require_auth
        self.max_body = max_body
        self.history = history
        self.history_bytes = history_bytes
        self._requested_port = port
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._seq = 0
        self._faults: list[tuple[Fault, int]] = []
        self._requests: deque[RecordedRequest] = deque()
        self._recorded_bytes = 0
        #: The cache's clock in Unix ms (design P9): the wall clock, or one a test sets.
        self.clock: Callable[[], int] = lambda: time.time_ns() // 1_000_000
        self.reset_cache()

    # -- lifecycle ------------------------------------------------------------------------
    def start(self) -> Emulator:
        if self._server is not None:
            return self
        server = _Server((self.host, self._requested_port), _Handler)
        server.emulator = self
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="pi-emulator", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> Emulator:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # -- addresses ------------------------------------------------------------------------
    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("The emulator is not running; use `with Emulator() as emu:` or call start()")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def base_url(self, family: str) -> str:
        """The pi-ai ``Model.baseUrl`` that points a route of this family at the emulator."""
        if family not in BASE_PATHS:
            raise ValueError(f"Unknown emulator family {family!r}; expected one of {', '.join(BASE_PATHS)}")
        return self.url + BASE_PATHS[family]

    # -- test controls -------------------------------------------------------------------
    def inject(self, fault: Fault, times: int = 1) -> None:
        """Apply ``fault`` to the next ``times`` matching requests."""
        with self._lock:
            self._faults.append((fault, times))

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def reset_cache(self) -> None:
        """Forget every cached prefix (a cold provider cache)."""
        self.cache = ProviderCache()

    # -- internals -----------------------------------------------------------------------
    def _next_seq(self) -> int:
        with self._lock:
            self._seq += 1
            return self._seq

    def _take_fault(self, family: str) -> Fault | None:
        with self._lock:
            for i, (fault, remaining) in enumerate(self._faults):
                if fault.family in (None, family):
                    if remaining <= 1:
                        del self._faults[i]
                    else:
                        self._faults[i] = (fault, remaining - 1)
                    return fault
        return None

    def _record(self, request: RecordedRequest) -> None:
        """Keep ``request``, then forget the oldest beyond ``history`` or ``history_bytes``."""
        with self._lock:
            self._requests.append(request)
            self._recorded_bytes += len(request.body)
            while self._requests and (
                len(self._requests) > self.history or self._recorded_bytes > self.history_bytes
            ):
                self._recorded_bytes -= len(self._requests.popleft().body)


def _wire_for(path: str) -> tuple[str, str | None]:
    """(wire format, model from the path) for a request path; wire ``""`` when unknown."""
    for ending, wire in _WIRE_ENDINGS:
        if path.endswith(ending):
            return wire, None
    if match := _GOOGLE_PATH.search(path):
        return "google", match.group(1)
    if match := _BEDROCK_PATH.search(path):
        return "bedrock", unquote(match.group(1))
    return "", None


def _has_auth(wire: str, family: str, headers: Mapping[str, str], query: str) -> bool:
    if wire == "anthropic":
        return bool(headers.get("x-api-key") or headers.get("authorization"))
    if wire == "google":
        # A Gemini/Vertex API key, or a Vertex ADC bearer token.
        bearer = headers.get("authorization", "").lower().startswith("bearer ")
        return bool(headers.get("x-goog-api-key") or "key" in parse_qs(query) or bearer)
    if wire == "bedrock":
        # SigV4 or a Bedrock API key; signatures are not verified.
        value = headers.get("authorization", "").lower()
        return value.startswith(("aws4-hmac-sha256 ", "bearer "))
    if family == "azure":
        return bool(headers.get("api-key") or headers.get("authorization"))
    return headers.get("authorization", "").lower().startswith("bearer ")


_READERS: dict[str, Callable[[Mapping[str, Any]], Conversation]] = {
    "anthropic": read_anthropic,
    "chat": read_chat,
    "responses": read_responses,
}
_ENCODERS: dict[str, Callable[[Reply, StreamContext], list[bytes]]] = {
    "anthropic": anthropic.encode,
    "responses": responses.encode,
    "bedrock": bedrock.encode,
    "google": google.encode,
}
_ERROR_BODIES: dict[str, Callable[[int, str], dict[str, Any]]] = {
    "anthropic": anthropic.error_body,
    "google": google.error_body,
    "responses": responses.error_body,
}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    #: Stream events go out as written: with Nagle's algorithm a small write on a kept-alive
    #: connection waits for the client's delayed acknowledgement (about 40 ms).
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: requests are recorded on the emulator instead."""

    def do_GET(self) -> None:
        if urlsplit(self.path).path in ("/", "/health"):
            self._json(200, {"emulator": "pi-desktop", "families": sorted(BASE_PATHS)})
        else:
            self._json(
                404, {"error": {"message": f"No GET endpoint {self.path}; the emulator serves POST streams"}}
            )

    def do_POST(self) -> None:
        emu = self.server.emulator
        seq = emu._next_seq()
        split = urlsplit(self.path)
        path, query = split.path, split.query
        family = path.strip("/").split("/", 1)[0] if path.strip("/") else ""
        wire, path_model = _wire_for(path)
        headers = {k.lower(): v for k, v in self.headers.items()}
        body = self._read_body(emu, wire, family)
        if body is None:
            return
        fault: Fault | None = None
        cache: Usage | None = None

        def record(status: int) -> None:
            # Recorded before the response is written, so a client that has its answer
            # always finds its request in ``emu.requests``.
            kind = fault.kind if fault else None
            emu._record(
                RecordedRequest(seq, "POST", path, query, headers, body, family, wire, status, kind, cache)
            )

        def refuse(status: int, message: str, extra: dict[str, str] | None = None) -> None:
            record(status)
            self._error(status, wire, family, message, extra)

        try:
            fault = (
                parse_fault_header(headers[FAULT_HEADER])
                if FAULT_HEADER in headers
                else emu._take_fault(family)
            )
        except ValueError as exc:
            record(400)
            self._json(400, {"error": {"message": str(exc)}})
            return
        if not wire:
            record(404)
            self._json(404, {"error": {"message": f"The emulator has no endpoint {path}; see BASE_PATHS"}})
            return
        if emu.require_auth and not _has_auth(wire, family, headers, query):
            refuse(401, "No API key was sent (emulator requires auth)")
            return
        if fault is not None and fault.kind == "slow_first_byte":
            time.sleep(fault.delay)
        if fault is not None and fault.kind == "rate_limit":
            retry = fault.retry_after
            retry_text = str(int(retry)) if float(retry).is_integer() else str(retry)
            refuse(429, "Rate limit reached (emulator fault)", {"retry-after": retry_text})
            return
        if fault is not None and fault.kind == "server_error":
            refuse(fault.status, f"Internal error (emulator fault {fault.status})")
            return
        try:
            request = orjson.loads(body) if body else {}
        except orjson.JSONDecodeError as exc:
            refuse(400, f"Request body is not valid JSON: {exc}")
            return
        if not isinstance(request, dict):
            refuse(400, "Request body must be a JSON object")
            return
        if wire not in ("google", "bedrock") and request.get("stream") is not True:
            refuse(400, 'The emulator only streams: send "stream": true')
            return
        try:
            events, cache = self._render(emu, seq, wire, family, request, path_model or "")
        except (TypeError, ValueError, AttributeError, KeyError, IndexError) as exc:
            refuse(400, f"Request body is not a valid {wire} request: {type(exc).__name__}: {exc}")
            return
        record(200)
        self._stream(events, fault, bedrock.CONTENT_TYPE if wire == "bedrock" else "text/event-stream")

    def _read_body(self, emu: Emulator, wire: str, family: str) -> bytes | None:
        """The request body, or None once a 4xx answered a bad or missing ``Content-Length``
        (the connection then closes: what follows on it is not a request)."""
        raw = self.headers.get("content-length")
        problem: tuple[int, str] | None = None
        length = 0
        if raw is None or "chunked" in self.headers.get("transfer-encoding", "").lower():
            problem = (411, "A request body needs a Content-Length (chunked bodies are not read)")
        elif not raw.strip().isdigit():
            problem = (400, f"Content-Length is not a byte count: {raw[:40]!r}")
        else:
            length = int(raw)
            if length > emu.max_body:
                problem = (
                    413,
                    f"The request body is {length:,} bytes; the emulator reads at most {emu.max_body:,}",
                )
        if problem is None:
            body = self.rfile.read(length) if length else b""
            if len(body) == length:
                return body
            problem = (400, f"The request body ended after {len(body):,} of {length:,} bytes")
        self.close_connection = True
        self._error(problem[0], wire, family, problem[1], {"connection": "close"})
        return None

    # -- rendering -------------------------------------------------------------------------
    def _render(
        self, emu: Emulator, seq: int, wire: str, family: str, request: dict[str, Any], path_model: str
    ) -> tuple[list[bytes], Usage]:
        if wire in ("google", "bedrock"):
            conv = (read_google if wire == "google" else read_bedrock)(request, path_model)
        else:
            conv = _READERS[wire](request)
        policy = policy_for(wire, family)
        key = conv.cache_key if policy.kind == "prefix" else None
        partition = (
            f"{family}:{conv.model}" if policy.kind == "breakpoints" else f"{family}:{conv.model}:{key or ''}"
        )
        cache = emu.cache.send(
            policy, partition, conv.model, conv.segments, emu.clock(), long=asks_long_retention(request)
        )
        reply = plan_reply(conv)
        ctx = StreamContext(
            model=conv.model,
            seq=seq,
            created=_EPOCH_MS + seq * 1000,
            cache=cache,
            output_tokens=max(1, count_tokens(reply.output_text())),
        )
        if wire == "chat":
            flavor = family if family in ("deepseek", "mistral") else "openai"
            include_usage = flavor == "mistral" or bool(
                (request.get("stream_options") or {}).get("include_usage")
            )
            return chat.encode(reply, ctx, flavor=flavor, include_usage=include_usage), cache
        return _ENCODERS[wire](reply, ctx), cache

    # -- responses -----------------------------------------------------------------------
    def _error(
        self, status: int, wire: str, family: str, message: str, extra: dict[str, str] | None = None
    ) -> None:
        if wire == "bedrock":
            body, headers = bedrock.error_body(status, message)
            self._json(status, body, {**headers, **(extra or {})})
        elif wire in _ERROR_BODIES:
            self._json(status, _ERROR_BODIES[wire](status, message), extra)
        else:
            self._json(status, chat.error_body(status, message, flavor=family), extra)

    def _json(self, status: int, body: Any, extra: dict[str, str] | None = None) -> None:
        data = orjson.dumps(body)
        try:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for key, value in (extra or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            self.close_connection = True

    def _stream(self, events: list[bytes], fault: Fault | None, content_type: str) -> None:
        kind = fault.kind if fault else None
        try:
            self.send_response(200)
            self.send_header("content-type", content_type)
            self.send_header("cache-control", "no-cache")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for n, event in enumerate(events):
                if fault is not None and kind in ("cut", "truncate") and n >= fault.after_events:
                    break
                if fault is not None and kind == "malformed" and n == fault.at_event:
                    binary = content_type == bedrock.CONTENT_TYPE
                    event = bedrock.corrupt(event) if binary else _break_json(event)
                if fault is not None and kind == "slow_stream" and n >= max(1, fault.at_event):
                    time.sleep(fault.delay)
                self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                self.wfile.flush()
            if kind == "cut":
                # Drop the connection with the chunked body unfinished, like a network cut.
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError:
            # The client went away (cancelled): nothing left to send.
            self.close_connection = True


def _break_json(event: bytes) -> bytes:
    """The same event with its data JSON cut in half (still a well-formed SSE event)."""
    start = event.find(b"data: ")
    if start < 0:
        return event
    start += len(b"data: ")
    end = event.find(b"\n", start)
    end = len(event) if end < 0 else end
    if event[end - 1 : end] == b"\r":
        end -= 1
    payload = event[start:end]
    return event[:start] + payload[: max(1, len(payload) // 2)] + event[end:]
