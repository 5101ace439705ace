"""How provider requests reach the network: proxy, trusted CAs, timeouts, retries (design W3).

Users behind a corporate proxy or TLS inspection set this up once, the way every other tool
on their machine reads it:

* **Proxy**: the ``network.proxy`` setting when given, else ``HTTPS_PROXY`` / ``HTTP_PROXY`` /
  ``ALL_PROXY`` (either case), else the system proxy on macOS and Windows, all as Python's
  ``urllib.request`` reads them. ``NO_PROXY`` (or ``network.noProxy``) lists hosts to reach
  directly. Loopback hosts (the offline emulator) are never proxied, as in Go's HTTP client.
  ``http`` and ``https`` proxies are supported, with ``user:password@`` when needed.
* **Trusted CAs**: the system's store, plus ``SSL_CERT_FILE``, ``REQUESTS_CA_BUNDLE``,
  ``CURL_CA_BUNDLE`` and the ``network.caBundle`` setting, each a PEM file of certificates
  (a corporate root) added to the trusted roots. (OpenSSL itself also reads ``SSL_CERT_FILE``
  and ``SSL_CERT_DIR`` in place of the system's file and folder.) A file that cannot be
  loaded is an error naming it and where it was set.
* **Timeouts** to connect and of silence while reading, and the number of retries.

``NetworkSettings.describe`` is what ``status`` shows for a route: the same decisions, made
without connecting or loading a certificate.
"""

from __future__ import annotations

import functools
import ipaddress
import os
import sys
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urlsplit, urlunsplit

if TYPE_CHECKING:
    import ssl

#: Environment variables naming an extra CA bundle, as requests/pip/curl users set them.
CA_ENV = ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE")


class NetworkSettingError(ValueError):
    """A proxy URL or CA bundle that cannot be used; the text names the setting and the value."""


class NetworkSettings(NamedTuple):
    """The ``network`` block of the settings file (the environment is read when used)."""

    proxy: str | None = None
    no_proxy: str | None = None
    ca_bundle: str | None = None
    connect_timeout: float = 10.0
    read_timeout: float = 120.0
    max_retries: int = 2

    @classmethod
    def from_settings(cls, block: Any) -> NetworkSettings:
        """From ``Settings.network`` (``NetworkConfig``)."""
        return cls(
            proxy=block.proxy or None,
            no_proxy=block.noProxy,
            ca_bundle=block.caBundle or None,
            connect_timeout=block.connectTimeout,
            read_timeout=block.readTimeout,
            max_retries=block.maxRetries,
        )

    # -- proxy ------------------------------------------------------------------------------
    def proxy_for(self, url: str) -> tuple[str | None, str]:
        """The proxy URL for a request to ``url`` (None: direct) and where that choice came from."""
        parts = urlsplit(url)
        host = parts.hostname or ""
        if _loopback(host):
            return None, "loopback host"
        target = f"{host}:{parts.port}" if parts.port else host
        if self.no_proxy is None and not self.proxy and not _proxy_configured():
            return None, "no proxy set"  # without loading urllib.request (``status`` is timed)
        # Lazy: the status budget.
        import urllib.request

        # ``NO_PROXY`` as Python reads it, over the setting's list (public, not in typeshed).
        bypass = urllib.request.proxy_bypass_environment  # type: ignore[attr-defined]
        if self.no_proxy is not None and bypass(target, {"no": self.no_proxy}):
            return None, "network.noProxy"
        if self.proxy:
            return _checked_proxy(self.proxy, "network.proxy"), "network.proxy"
        scheme = parts.scheme.lower()
        proxies = urllib.request.getproxies()
        chosen = proxies.get(scheme) or proxies.get("all")
        if not chosen:
            return None, "no proxy set"
        if self.no_proxy is None and urllib.request.proxy_bypass(target):
            return None, "NO_PROXY"
        names = (f"{scheme}_proxy", f"{scheme.upper()}_PROXY", "all_proxy", "ALL_PROXY")
        source = next((name for name in names if os.environ.get(name)), "system proxy settings")
        return _checked_proxy(chosen, source), source

    # -- TLS --------------------------------------------------------------------------------
    def ca_files(self) -> list[tuple[str, str]]:
        """The extra CA bundles as (source, path), in the order they are loaded."""
        found = [(name, os.environ[name]) for name in CA_ENV if os.environ.get(name)]
        if self.ca_bundle:
            found.append(("network.caBundle", os.path.expanduser(self.ca_bundle)))
        unique: dict[str, tuple[str, str]] = {}
        for source, path in found:  # one file named by several variables is loaded once
            unique.setdefault(path, (source, path))
        return list(unique.values())

    def tls_context(self) -> ssl.SSLContext:
        """The verifying TLS context: the system's roots plus the extra bundles."""
        return _tls_context(tuple(self.ca_files()))

    # -- what status shows -------------------------------------------------------------------
    def describe(self, url: str) -> dict[str, Any]:
        """What a request to ``url`` would use, for ``status`` (no connection is made)."""
        try:
            proxy, source = self.proxy_for(url)
            shown = _without_password(proxy) if proxy else None
        except NetworkSettingError as exc:
            shown, source = None, f"unusable: {exc}"
        return {
            "proxy": shown,
            "proxySource": source,
            "caBundles": [{"source": s, "path": p} for s, p in self.ca_files()],
            "connectTimeout": self.connect_timeout,
            "readTimeout": self.read_timeout,
            "maxRetries": self.max_retries,
        }


def _proxy_configured() -> bool:
    """Some proxy may apply: a ``*_proxy`` variable is set, or the system has its own
    settings (macOS, Windows), which only ``urllib.request`` reads."""
    if sys.platform in ("darwin", "win32"):
        return True
    return any(name.lower().endswith("_proxy") and value for name, value in os.environ.items())


def _loopback(host: str) -> bool:
    if host.lower() in ("localhost", "localhost.") or host.lower().endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _checked_proxy(value: str, source: str) -> str:
    url = value if "://" in value else f"http://{value}"
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise NetworkSettingError(
            f"proxy {_without_password(value)!r} from {source} is not an http:// or https:// proxy URL"
        )
    return url


def _without_password(url: str) -> str:
    parts = urlsplit(url if "://" in url else f"http://{url}")
    if parts.password is None:
        return url
    netloc = f"{parts.username}:***@{parts.hostname}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


@functools.cache
def _tls_context(ca_files: tuple[tuple[str, str], ...]) -> ssl.SSLContext:
    """Built once per set of bundles: loading the CA store costs tens of milliseconds."""
    # Lazy: the status budget.
    import ssl

    context = ssl.create_default_context()
    for source, path in ca_files:
        try:
            context.load_verify_locations(cafile=path)
        except (OSError, ssl.SSLError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise NetworkSettingError(f"CA bundle {path} (from {source}) cannot be loaded: {reason}") from exc
    return context
