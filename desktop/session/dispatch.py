"""The runtime's dispatcher: a projected request sent over the Host HTTP client.

The body sent is the projection's one encoding (``body_bytes``), the very bytes the preview
shows. Only the auth header is added here, from the account's key, so no preview or journal
row ever holds a secret. Bedrock without a key and Vertex without an API key are
authenticated by the client just before each attempt (SigV4 over these exact bytes, or an
ADC bearer token), through ``CloudAuth``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import cast

from desktop.host.providers.client import DEFAULT_TIMEOUTS, Timeouts, send_streaming, session_http
from desktop.host.providers.cloud_auth import CloudAuth
from desktop.host.providers.network import NetworkSettingError, NetworkSettings
from desktop.host.providers.pool import SessionHttp
from desktop.host.providers.request import WireRequest
from desktop.host.providers.retry import DEFAULT_RETRY, RetryPolicy
from desktop.host.settings import SettingsError, load_settings
from desktop.pi.projection import CREDENTIAL_PLACEHOLDER, ProviderRequest
from desktop.pi.projection.codex_responses import ACCOUNT_PLACEHOLDER, account_id
from desktop.pi.streaming import parser_for
from desktop.pi.types import AssistantMessage, Model
from desktop.session.runtime import EventSink


def with_credential(
    headers: Mapping[str, str], api_key: str | None, account: Callable[[str], str] = account_id
) -> dict[str, str]:
    """Swap the projection's placeholders for the real key (and, for Codex, the ChatGPT
    account id the key carries, read by ``account``); without a key (the offline emulator),
    drop the headers that would only carry a placeholder."""
    placeholders = (CREDENTIAL_PLACEHOLDER, ACCOUNT_PLACEHOLDER)
    if not api_key:
        return {k: v for k, v in headers.items() if not any(p in v for p in placeholders)}
    out: dict[str, str] = {}
    for name, value in headers.items():
        if ACCOUNT_PLACEHOLDER in value and api_key != CREDENTIAL_PLACEHOLDER:  # not in a preview
            value = value.replace(ACCOUNT_PLACEHOLDER, account(api_key))
        out[name] = value.replace(CREDENTIAL_PLACEHOLDER, api_key)
    return out


class HttpDispatcher:
    """Sends the session's requests over one pooled client with keep-alive (design D2)."""

    def __init__(
        self,
        api_key: Callable[[], str | None],
        *,
        cloud: CloudAuth | None = None,
        network: NetworkSettings | None = None,
    ) -> None:
        self._api_key = api_key
        self._cloud = cloud if cloud is not None else CloudAuth()
        self._pool: SessionHttp | None = None
        #: Proxy, CAs, timeouts and retries (design W3); None: read from the settings file
        #: with the first request (on the worker thread that sends it).
        self._network = network
        #: The timeouts and retry policy ``network`` gives, made with the pool.
        self._limits = (DEFAULT_TIMEOUTS, DEFAULT_RETRY)
        #: The last key and the Codex account id read from it: decoding the token costs
        #: more than the rest of the request's preparation together.
        self._account: tuple[str, str] | None = None

    def _account_id(self, api_key: str) -> str:
        if self._account is None or self._account[0] != api_key:
            self._account = (api_key, account_id(api_key))
        return self._account[1]

    def close(self) -> None:
        """Close the pooled connections (the session is closing or its route changed)."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def __call__(
        self, request: ProviderRequest, model: Model, *, on_event: EventSink, cancel: threading.Event
    ) -> AssistantMessage:
        headers = with_credential(request.headers, self._api_key(), self._account_id)
        wire = WireRequest(url=request.url, body=request.body_bytes, headers=headers, method=request.method)
        authorize = self._cloud.authorizer(
            str(model.get("api", "")), request.url, headers, str(model.get("id", ""))
        )

        def forward(event: object) -> None:
            on_event({"type": "stream", "event": event})

        if self._pool is None:
            try:
                network = self._network_settings()
                self._pool = session_http(network)
            except (SettingsError, NetworkSettingError) as exc:
                return _failed(model, str(exc), forward)
            self._limits = (
                Timeouts(connect=network.connect_timeout, read=network.read_timeout),
                RetryPolicy(max_retries=network.max_retries),
            )
        timeouts, policy = self._limits
        message = send_streaming(
            wire,
            model=model,
            cancel=cancel,
            on_event=forward,
            authorize=authorize,
            pool=self._pool,
            timeouts=timeouts,
            policy=policy,
            on_wait=on_event,  # a ``retry_wait`` event: the window counts down with a Cancel
        )
        return cast(AssistantMessage, message)

    def _network_settings(self) -> NetworkSettings:
        if self._network is None:
            self._network = NetworkSettings.from_settings(load_settings().network)
        return self._network


def _failed(model: Model, reason: str, forward: Callable[[object], None]) -> AssistantMessage:
    """The message of a request that could not be sent, with its events."""
    parser = parser_for(model)
    for event in parser.fail(reason):
        forward(event)
    return cast(AssistantMessage, parser.result())
