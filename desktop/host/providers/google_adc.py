"""Google Application Default Credentials for Vertex AI, with google-auth (the ``vertex`` extra).

Used only when the projection chose ADC (no Vertex API key): the access token is fetched
with ``google.auth.default(scopes=[cloud-platform])`` — ``gcloud auth application-default
login``, ``GOOGLE_APPLICATION_CREDENTIALS`` (a service-account or external-account file),
or the metadata server on Google Cloud — refreshed whenever it is missing or about to
expire, and added as ``authorization: Bearer …`` just before each attempt. The token is a
secret: it is never part of a projection, a preview or a journal row, and the client
scrubs it from any error text.

google-auth refreshes over an injected transport; ours is httpx with the client's shared
TLS context, so the extra needs neither ``requests`` nor ``urllib3``.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import httpx

from desktop.host.providers.extras import AuthUnavailable, require_extra
from desktop.host.providers.network import NetworkSettingError, NetworkSettings

if TYPE_CHECKING:
    import httpx

SCOPES = ("https://www.googleapis.com/auth/cloud-platform",)
REFRESH_TIMEOUT_SECONDS = 30.0

NO_CREDENTIALS = (
    "No Google Application Default Credentials were found for Vertex AI. Run "
    "`gcloud auth application-default login`, set GOOGLE_APPLICATION_CREDENTIALS to a credentials "
    "file, or store a Vertex API key for the account."
)


class _Response:
    """The ``google.auth.transport.Response`` shape over an httpx response."""

    def __init__(self, response: httpx.Response) -> None:
        self.status = response.status_code
        self.headers = dict(response.headers)
        self.data = response.content


class HttpxAuthTransport:
    """The ``google.auth.transport.Request`` callable google-auth refreshes tokens through."""

    def __call__(
        self,
        url: str,
        method: str = "GET",
        body: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
        **_kwargs: Any,
    ) -> _Response:

        exceptions = require_extra("google.auth.exceptions", "vertex")
        try:  # the environment's proxies (httpx reads them) and CA bundles (design W3)
            with httpx.Client(verify=NetworkSettings().tls_context(), follow_redirects=False) as client:
                response = client.request(
                    method,
                    url,
                    content=body,
                    headers=dict(headers or {}),
                    timeout=timeout or REFRESH_TIMEOUT_SECONDS,
                )
        except (httpx.HTTPError, NetworkSettingError) as exc:
            raise exceptions.TransportError(f"{type(exc).__name__}: {exc}") from exc
        return _Response(response)


class AdcBearer:
    """Adds a fresh ADC access token to a request; ``credentials`` may be injected."""

    def __init__(self, credentials: Any | None = None) -> None:
        self._credentials = credentials
        self._transport = HttpxAuthTransport()
        self._lock = threading.Lock()

    def _load(self) -> Any:
        google_auth = require_extra("google.auth", "vertex")
        exceptions = require_extra("google.auth.exceptions", "vertex")
        try:
            credentials, _project = google_auth.default(scopes=list(SCOPES))
        except exceptions.DefaultCredentialsError as exc:
            raise AuthUnavailable(f"{NO_CREDENTIALS} ({exc})") from exc
        return credentials

    def headers(self) -> dict[str, str]:
        """``authorization`` (and ``x-goog-user-project`` for a quota project), refreshed as needed."""
        exceptions = require_extra("google.auth.exceptions", "vertex")
        with self._lock:
            if self._credentials is None:
                self._credentials = self._load()
            credentials = self._credentials
            try:
                if not credentials.valid:
                    credentials.refresh(self._transport)
            except exceptions.GoogleAuthError as exc:
                # The library's text never includes the token; it may name the token endpoint.
                raise AuthUnavailable(
                    f"Refreshing the Google credentials for Vertex AI failed: {exc}. "
                    "Run `gcloud auth application-default login` again or check GOOGLE_APPLICATION_CREDENTIALS."
                ) from exc
            if not credentials.token:
                raise AuthUnavailable(NO_CREDENTIALS)
            added: dict[str, str] = {}
            credentials.apply(added)
        return {str(k).lower(): str(v) for k, v in added.items()}

    def __call__(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> dict[str, str]:
        out = {k: v for k, v in headers.items() if k.lower() != "authorization"}
        out.update(self.headers())
        return out
