"""Sending a projected request and streaming its answer into a neutral AssistantMessage.

Synchronous by design: the app calls ``send_streaming`` on a worker thread and receives
neutral events through ``on_event`` as they are parsed. Guarantees:

* Retries (see ``retry``) happen only before a response has started (a failed connection,
  a timeout waiting for the headers, a retryable status), so a consumer never sees a partial
  answer followed by a second one and a request the provider may be executing is never sent
  twice. Each wait is announced (``on_wait``) before it starts.
* A stream ends at its API's end event, whatever the connection does afterwards (design W1).
* ``cancel`` may be set from any thread at any moment: a watcher shuts the socket down,
  which unblocks the read at once, and the result is the message so far with
  ``stopReason: "aborted"`` — never a message presented as complete.
* Failures end in ``stopReason: "error"`` with an ``errorMessage`` naming the provider,
  HTTP status and the provider's own error text; the API key never appears in it.
* Every socket is known from the moment it connects, so cancellation works even while
  waiting for the first byte. The one watcher is ``SessionHttp``'s: with a session's pooled
  client (keep-alive) its watcher serves every request; without one, the request gets a
  client of its own that keeps no connection, watched the same way.
"""

from __future__ import annotations

import contextlib
import functools
import random
import ssl
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from desktop.host.providers.auth import with_auth
from desktop.host.providers.errors import host_of, http_error_message, provider_label
from desktop.host.providers.extras import AuthUnavailable
from desktop.host.providers.network import NetworkSettingError, NetworkSettings
from desktop.host.providers.pool import SessionHttp
from desktop.host.providers.request import ProjectedRequest, RequestAuthorizer
from desktop.host.providers.retry import (
    DEFAULT_RETRY,
    EXHAUSTED_ACCOUNT,
    RetryDelayTooLong,
    RetryPolicy,
    is_retryable_status,
    retry_delay,
)
from desktop.host.redaction import redact_text
from desktop.pi.streaming import AssistantMessage, StreamEvent, StreamParser, parser_for

EventCallback = Callable[[StreamEvent], None]
#: Hears of each wait before a retry (design W4).
WaitCallback = Callable[[dict[str, Any]], None]
#: Largest error body read from a failed response.
MAX_ERROR_BODY = 64 * 1024
#: Seconds the client keeps reading after a stream's end event for the body to end, so
#: the connection can be reused; a server holding it open is cut off then (design W1).
END_GRACE = 0.25


@dataclass(frozen=True)
class Timeouts:
    """Seconds: to connect, and of silence while waiting for the first or next bytes."""

    connect: float = 10.0
    read: float = 120.0
    write: float = 30.0

    def httpx(self) -> httpx.Timeout:
        return httpx.Timeout(connect=self.connect, read=self.read, write=self.write, pool=self.connect)


DEFAULT_TIMEOUTS = Timeouts()


@functools.cache
def _httpx_timeout(timeouts: Timeouts) -> dict[str, float | None]:
    """``timeouts`` in the form a request carries them (httpcore's), built once rather than
    per request."""
    return timeouts.httpx().as_dict()


class _Retry(Exception):
    def __init__(self, reason: str, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(reason)
        self.headers = headers or {}


def session_http(network: NetworkSettings, *, keepalive: int = 4) -> SessionHttp:
    """A pooled client set up as ``network`` says: its proxies and trusted CAs (design W3).
    Raises ``NetworkSettingError`` for a CA bundle that cannot be loaded."""
    return SessionHttp.create(
        verify=network.tls_context(), keepalive=keepalive, proxy_for=lambda url: network.proxy_for(url)[0]
    )


def send_streaming(
    request: ProjectedRequest,
    *,
    model: Mapping[str, Any],
    api_key: str | None = None,
    cancel: threading.Event | None = None,
    on_event: EventCallback | None = None,
    policy: RetryPolicy = DEFAULT_RETRY,
    timeouts: Timeouts = DEFAULT_TIMEOUTS,
    client: httpx.Client | None = None,
    rng: random.Random | None = None,
    authorize: RequestAuthorizer | None = None,
    pool: SessionHttp | None = None,
    on_wait: WaitCallback | None = None,
) -> AssistantMessage:
    """Send ``request`` for pi-ai ``model`` (api, provider, id, cost) and return the final message.

    ``api_key`` is added as the API's auth header unless ``request.headers`` already has
    one. ``authorize`` (SigV4 signing, a cloud bearer token) runs before every attempt over
    the final headers and body; when it cannot authenticate the message ends as an error
    naming what is missing, without a request being sent. With ``pool`` the session's pooled
    client carries the request (keep-alive) and its watcher serves ``cancel``. Before each
    wait to retry, ``on_wait`` hears of it (a ``retry_wait`` event: seconds, the retry's number,
    the retries allowed and the reason) so a window can count down with a Cancel. The returned
    message always has a
    terminal stop reason: ``stop``, ``length`` or ``toolUse`` when the stream completed,
    ``error`` or ``aborted`` otherwise.
    """
    parser = parser_for(model)
    emit = on_event or _ignore
    label = provider_label(str(model.get("provider", "")))
    headers = with_auth(request.headers, str(model.get("api", "")), api_key)
    if cancel is None:  # a watcher also bounds the reading past a stream's end event
        cancel = threading.Event()

    if pool is not None:
        session = pool
    elif client is not None:
        session = SessionHttp(client, owns_client=False)
    else:  # a client for this request alone (no keep-alive), with the user's network setup
        try:
            session = session_http(NetworkSettings(), keepalive=0)
        except NetworkSettingError as exc:
            for event in parser.fail(str(exc)):
                emit(event)
            return parser.result()

    call = _Call(session, request, parser, emit, cancel, timeouts, label, [api_key] if api_key else [])
    try:
        with session.watching(cancel):
            return _send(call, headers, authorize, policy, rng, on_wait)
    finally:
        if session is not pool:
            session.close()


def _ignore(event: StreamEvent) -> None:
    pass


@dataclass
class _Call:
    """What every attempt of one request shares."""

    session: SessionHttp
    request: ProjectedRequest
    parser: StreamParser
    emit: EventCallback
    cancel: threading.Event
    timeouts: Timeouts
    label: str
    #: Values never shown in an error (the API key, credentials an authorizer added).
    secrets: list[str]

    def deliver(self, events: list[StreamEvent]) -> None:
        for event in events:
            self.emit(event)

    def cancelled(self) -> bool:
        return self.cancel.is_set()

    def fail(self, message: str) -> AssistantMessage:
        """Deliver the failure with secrets redacted; the message as it ends."""
        self.deliver(self.parser.fail(redact_text(message, self.secrets)))
        return self.parser.result()

    def abort(self) -> AssistantMessage:
        self.deliver(self.parser.abort())
        return self.parser.result()


def _send(
    call: _Call,
    headers: dict[str, str],
    authorize: RequestAuthorizer | None,
    policy: RetryPolicy,
    rng: random.Random | None,
    on_wait: WaitCallback | None,
) -> AssistantMessage:
    """The attempts of one request, with retries before a response starts."""
    secrets = call.secrets
    attempt = 0
    while True:
        if call.cancelled():
            return call.abort()
        try:
            sent = _authorized(call.request, headers, authorize, secrets)
            _attempt(call, sent)
            return call.parser.result()
        except AuthUnavailable as exc:
            return call.fail(f"{call.label}: {exc}")
        except NetworkSettingError as exc:
            return call.fail(str(exc))
        except _Retry as retry:
            if call.cancelled():
                return call.abort()
            if attempt >= policy.max_retries:
                return call.fail(f"{retry} (after {attempt + 1} attempts)")
            try:
                delay = retry_delay(policy, attempt, retry.headers, rng)
            except RetryDelayTooLong as too_long:
                return call.fail(f"{too_long}. {retry}")
            attempt += 1
            if on_wait is not None:
                on_wait(
                    {
                        "type": "retry_wait",
                        "seconds": delay,
                        "retry": attempt,
                        "retries": policy.max_retries,
                        "reason": redact_text(str(retry), secrets),
                    }
                )
            if call.cancel.wait(delay):
                return call.abort()


#: Headers whose values an authorizer adds as credentials (scrubbed from error text).
_CREDENTIAL_HEADERS = frozenset({"authorization", "x-amz-security-token"})


def _authorized(
    request: ProjectedRequest,
    headers: dict[str, str],
    authorize: RequestAuthorizer | None,
    secrets: list[str],
) -> dict[str, str]:
    """The headers for one attempt; their fresh credentials join the values to redact."""
    if authorize is None:
        return headers
    sent = authorize(request.method, request.url, headers, request.body)
    for name, value in sent.items():
        if name.lower() in _CREDENTIAL_HEADERS:
            token = value.split(" ", 1)[1] if value.lower().startswith("bearer ") else value
            if token and token not in secrets:
                secrets.append(token)
    return sent


def _attempt(call: _Call, headers: Mapping[str, str]) -> None:
    """One try. Raises _Retry when the failure is transient and came before the response
    started: once a 2xx response is under way the provider may be executing the request,
    so it is never sent again (design W4)."""
    session, request, parser, cancelled = call.session, call.request, call.parser, call.cancelled
    started = False
    try:
        response = session.open(
            request.method, request.url, headers, request.body, _httpx_timeout(call.timeouts)
        )
        with contextlib.closing(response):
            if response.status_code >= 400:
                body = _read_error_body(response, cancelled)
                if cancelled():
                    call.abort()
                    return
                lowered = {k.lower(): v for k, v in response.headers.items()}
                message = http_error_message(
                    str(parser.model.get("provider", "")), response.status_code, body, call.secrets, lowered
                )
                if is_retryable_status(response.status_code, response.headers) and not (
                    response.status_code == 429 and EXHAUSTED_ACCOUNT.search(message)
                ):
                    raise _Retry(message, lowered)
                call.deliver(parser.fail(message))
                return
            started = True
            feed, emit = parser.feed, call.emit
            chunks = response.iter_bytes()
            for chunk in chunks:
                if cancelled():
                    break
                for event in feed(chunk):  # ``deliver`` inlined: this runs for every chunk
                    emit(event)
                if parser.terminal:  # the API's end event (or an error event) ended the message
                    _read_past_end(session, chunks)
                    return
            if cancelled():
                call.abort()
                return
            call.deliver(parser.finish())
    except httpx.TimeoutException as exc:
        if cancelled():
            call.abort()
            return
        phase = "connect" if isinstance(exc, httpx.ConnectTimeout) else "read"
        limit = call.timeouts.connect if phase == "connect" else call.timeouts.read
        message = redact_text(
            f"{call.label} at {host_of(request.url)} did not respond within {limit:g}s ({phase} timeout)",
            call.secrets,
        )
        if not started:
            raise _Retry(message) from exc
        call.deliver(parser.fail(message + " mid-stream"))
    except httpx.TransportError as exc:
        if cancelled():
            call.abort()
            return
        where = f"{call.label} at {host_of(request.url)}"
        if started:
            call.fail(f"Connection to {where} was lost mid-stream: {exc}")
        elif _untrusted_certificate(exc):  # the same on every attempt: not retried
            call.fail(f"{where}: {exc} — {UNTRUSTED_HINT}")
        else:
            if isinstance(exc, httpx.ProxyError):
                reason = f"The proxy did not open a connection to {where}"
            elif isinstance(exc, httpx.ConnectError):
                reason = f"Could not connect to {where}"
            else:
                reason = f"Connection failed with {where}"
            raise _Retry(redact_text(f"{reason}: {exc}", call.secrets)) from exc


#: What to do about a certificate the client does not trust.
UNTRUSTED_HINT = (
    "the server's certificate is not trusted; if a proxy inspects TLS, add its CA certificate "
    "with the network.caBundle setting or REQUESTS_CA_BUNDLE"
)


def _untrusted_certificate(exc: BaseException) -> bool:
    """A TLS verification failure (httpx keeps ssl's error as the cause, or only its text)."""
    seen: BaseException | None = exc
    for _ in range(8):  # a short chain; never loop on a cycle
        if seen is None:
            break
        if isinstance(seen, ssl.SSLCertVerificationError) or "CERTIFICATE_VERIFY_FAILED" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _read_past_end(session: SessionHttp, chunks: Iterator[bytes]) -> None:
    """Read what follows the end event for at most ``END_GRACE`` seconds: a body that ends
    there leaves its connection to the next request (keep-alive); a server holding the
    connection open (or sending more) is cut off. The message is already complete, so
    nothing read here, nor any failure, changes it (design W1)."""
    session.expire_after(END_GRACE)
    try:
        with contextlib.suppress(httpx.HTTPError):
            for _ in chunks:
                pass
    finally:
        session.expire_after(None)


def _read_error_body(response: httpx.Response, cancelled: Callable[[], bool]) -> bytes:
    body = bytearray()
    with contextlib.suppress(httpx.HTTPError):
        for chunk in response.iter_bytes():
            body += chunk
            if len(body) >= MAX_ERROR_BODY or cancelled():
                break
    return bytes(body[:MAX_ERROR_BODY])
