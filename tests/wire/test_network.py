"""Network settings as users expect them (design W3): requests go through the proxy that
``HTTPS_PROXY`` or the ``network.proxy`` setting names, trust the CA the ``network.caBundle``
setting adds, and time out when the settings say.

The provider here is a TLS server on loopback with a certificate from a throwaway CA, for
a host name (``api.example.test``) no resolver knows: the only way to reach it is the
CONNECT proxy, which tunnels every target to that server.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from desktop.host.providers.client import UNTRUSTED_HINT
from desktop.host.providers.network import NetworkSettings
from desktop.host.settings import Settings
from desktop.pi.projection import ProviderRequest
from desktop.session.dispatch import HttpDispatcher
from tests.wire.loopback import ANTHROPIC, ConnectProxy, Reply, ScriptedServer

HOST = "api.example.test"
MODEL = {"id": "m-1", "api": "anthropic-messages", "provider": "anthropic", "baseUrl": f"https://{HOST}"}


class Certificates:
    """A CA and a server certificate it signed for ``HOST`` and 127.0.0.1, as PEM files."""

    def __init__(self, folder: Path) -> None:
        now = datetime.datetime.now(datetime.UTC)
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Test Corp Inspection CA")])
        ca = (
            x509.CertificateBuilder()
            .subject_name(ca_name)
            .issuer_name(ca_name)
            .public_key(ca_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256())
        )
        key = ec.generate_private_key(ec.SECP256R1())
        server = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, HOST)]))
            .issuer_name(ca_name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(
                x509.SubjectAlternativeName(
                    [x509.DNSName(HOST), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
                ),
                critical=False,
            )
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
            )
            .sign(ca_key, hashes.SHA256())
        )
        self.ca_file = folder / "corp-root.pem"
        self.ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
        self.cert_file = folder / "server.pem"
        self.cert_file.write_bytes(server.public_bytes(serialization.Encoding.PEM))
        self.key_file = folder / "server.key"
        self.key_file.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )

    def server_context(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert_file, self.key_file)
        return context


@pytest.fixture
def certificates(tmp_path: Path) -> Certificates:
    return Certificates(tmp_path)


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No proxy or CA bundle from the machine running the tests."""
    for name in list(os.environ):
        if name.lower().endswith("_proxy") or name in (
            "SSL_CERT_FILE",
            "REQUESTS_CA_BUNDLE",
            "CURL_CA_BUNDLE",
        ):
            monkeypatch.delenv(name)


@pytest.fixture
def provider(certificates: Certificates) -> Iterator[ScriptedServer]:
    with ScriptedServer(
        respond=lambda _seen: Reply(chunks=ANTHROPIC), tls=certificates.server_context()
    ) as server:
        yield server


def _dispatcher(network: dict[str, Any]) -> HttpDispatcher:
    settings = Settings.model_validate({"network": network})
    return HttpDispatcher(lambda: "sk-test", network=NetworkSettings.from_settings(settings.network))


def _send(dispatcher: HttpDispatcher) -> dict[str, Any]:
    request = ProviderRequest(
        "POST", f"https://{HOST}/v1/messages", {"x-api-key": "sk-test"}, {"stream": True}
    )
    try:
        return dict(dispatcher(request, MODEL, on_event=lambda _e: None, cancel=threading.Event()))  # type: ignore[arg-type]
    finally:
        dispatcher.close()


def test_https_proxy_from_the_environment_and_the_ca_from_the_setting(
    provider: ScriptedServer, certificates: Certificates, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ConnectProxy(upstream=provider.port) as proxy:
        monkeypatch.setenv("HTTPS_PROXY", proxy.url)
        message = _send(_dispatcher({"caBundle": str(certificates.ca_file)}))
    assert message["stopReason"] == "stop", message.get("errorMessage")
    assert message["content"] == [{"type": "text", "text": "Hello"}]
    assert proxy.targets == [f"CONNECT {HOST}:443"]
    assert [seen.headers["host"] for seen in provider.seen] == [HOST]


def test_the_proxy_setting_is_used_without_any_environment(
    provider: ScriptedServer, certificates: Certificates
) -> None:
    with ConnectProxy(upstream=provider.port) as proxy:
        message = _send(_dispatcher({"proxy": proxy.url, "caBundle": str(certificates.ca_file)}))
    assert message["stopReason"] == "stop", message.get("errorMessage")
    assert proxy.targets == [f"CONNECT {HOST}:443"]


def test_requests_bundle_variable_adds_the_ca(
    provider: ScriptedServer, certificates: Certificates, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(certificates.ca_file))
    with ConnectProxy(upstream=provider.port) as proxy:
        message = _send(_dispatcher({"proxy": proxy.url}))
    assert message["stopReason"] == "stop", message.get("errorMessage")


def test_an_untrusted_certificate_is_one_clear_error_and_not_retried(provider: ScriptedServer) -> None:
    with ConnectProxy(upstream=provider.port) as proxy:
        message = _send(_dispatcher({"proxy": proxy.url}))
    assert message["stopReason"] == "error"
    assert message["errorMessage"].startswith(f"Anthropic at {HOST}: ")
    assert "CERTIFICATE_VERIFY_FAILED" in message["errorMessage"]
    assert message["errorMessage"].endswith(UNTRUSTED_HINT)
    assert len(proxy.targets) == 1  # the same certificate would fail every attempt


def test_a_missing_ca_bundle_names_the_file_and_the_setting(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.pem"
    message = _send(_dispatcher({"caBundle": str(missing)}))
    assert message["stopReason"] == "error"
    assert message["errorMessage"] == (
        f"CA bundle {missing} (from network.caBundle) cannot be loaded: No such file or directory"
    )


def test_a_proxy_refusing_the_tunnel_is_named() -> None:
    with ConnectProxy(refuse=407) as proxy:
        message = _send(_dispatcher({"proxy": proxy.url, "maxRetries": 0}))
    assert message["stopReason"] == "error"
    assert message["errorMessage"].startswith(f"The proxy did not open a connection to Anthropic at {HOST}")


def test_the_read_timeout_setting_applies_and_a_started_response_is_not_retried() -> None:
    with ScriptedServer(respond=lambda _seen: Reply(chunks=ANTHROPIC[:2], after="hold")) as server:
        dispatcher = _dispatcher({"readTimeout": 0.5, "maxRetries": 2})
        request = ProviderRequest("POST", server.base_url + "/v1/messages", {}, {"stream": True})
        try:
            message = dispatcher(request, MODEL, on_event=lambda _e: None, cancel=threading.Event())  # type: ignore[arg-type]
        finally:
            dispatcher.close()
        requests = len(server.seen)
    assert message["stopReason"] == "error"
    assert (
        message["errorMessage"]
        == f"Anthropic at 127.0.0.1:{server.port} did not respond within 0.5s (read timeout) mid-stream"
    )
    assert requests == 1


@pytest.mark.parametrize(
    ("settings", "environment", "url", "expected"),
    [
        (
            {},
            {"HTTPS_PROXY": "http://proxy.corp:3128"},
            "https://api.anthropic.com/v1",
            ("http://proxy.corp:3128", "HTTPS_PROXY"),
        ),
        (
            {},
            {"https_proxy": "proxy.corp:3128"},
            "https://api.anthropic.com",
            ("http://proxy.corp:3128", "https_proxy"),
        ),
        ({}, {"HTTP_PROXY": "http://proxy.corp:3128"}, "https://api.anthropic.com", (None, "no proxy set")),
        (
            {},
            {"ALL_PROXY": "http://proxy.corp:3128"},
            "https://api.anthropic.com",
            ("http://proxy.corp:3128", "ALL_PROXY"),
        ),
        (
            {},
            {"HTTPS_PROXY": "http://p:1", "NO_PROXY": "anthropic.com"},
            "https://api.anthropic.com",
            (None, "NO_PROXY"),
        ),
        ({}, {"HTTPS_PROXY": "http://p:1", "NO_PROXY": "*"}, "https://api.anthropic.com", (None, "NO_PROXY")),
        (
            {},
            {"HTTPS_PROXY": "http://p:1", "NO_PROXY": "openai.com"},
            "https://api.anthropic.com",
            ("http://p:1", "HTTPS_PROXY"),
        ),
        ({}, {"HTTPS_PROXY": "http://p:1"}, "http://127.0.0.1:8080/v1", (None, "loopback host")),
        ({}, {"HTTPS_PROXY": "http://p:1"}, "https://localhost/v1", (None, "loopback host")),
        (
            {"proxy": "http://set:8"},
            {"HTTPS_PROXY": "http://p:1"},
            "https://api.anthropic.com",
            ("http://set:8", "network.proxy"),
        ),
        (
            {"proxy": "http://set:8", "noProxy": "anthropic.com"},
            {},
            "https://api.anthropic.com",
            (None, "network.noProxy"),
        ),
        (
            {"noProxy": ""},
            {"HTTPS_PROXY": "http://p:1", "NO_PROXY": "anthropic.com"},
            "https://api.anthropic.com",
            ("http://p:1", "HTTPS_PROXY"),
        ),
    ],
)
def test_which_proxy_a_request_uses(
    settings: dict[str, Any],
    environment: dict[str, str],
    url: str,
    expected: tuple[str | None, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    network = NetworkSettings.from_settings(Settings.model_validate({"network": settings}).network)
    assert network.proxy_for(url) == expected


def test_status_description_hides_the_proxy_password(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://me:secret@proxy.corp:3128")
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(tmp_path / "a.pem"))
    network = NetworkSettings.from_settings(
        Settings.model_validate({"network": {"caBundle": "/etc/corp.pem", "connectTimeout": 5}}).network
    )
    assert network.describe("https://api.anthropic.com") == {
        "proxy": "http://me:***@proxy.corp:3128",
        "proxySource": "HTTPS_PROXY",
        "caBundles": [
            {"source": "REQUESTS_CA_BUNDLE", "path": str(tmp_path / "a.pem")},
            {"source": "network.caBundle", "path": "/etc/corp.pem"},
        ],
        "connectTimeout": 5.0,
        "readTimeout": 120.0,
        "maxRetries": 2,
    }


@pytest.mark.parametrize(
    ("network", "problem"),
    [
        ({"readTimeout": 0}, "network.readTimeout must be more than 0"),
        ({"maxRetries": 11}, "network.maxRetries must be at most 10"),
        ({"proxy": 8080}, "network.proxy must be text or null, not a number"),
    ],
)
def test_bad_network_settings_name_the_field(network: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValueError, match=problem.replace(".", r"\.")):
        Settings.model_validate({"network": network})


def test_an_unusable_proxy_url_is_one_line_naming_the_setting() -> None:
    message = _send(_dispatcher({"proxy": "socks5://me:secret@proxy.corp:1080"}))
    assert message["stopReason"] == "error"
    assert message["errorMessage"] == (
        "proxy 'socks5://me:***@proxy.corp:1080' from network.proxy is not an http:// or https:// proxy URL"
    )
