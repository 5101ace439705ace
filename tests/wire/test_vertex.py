"""Google Vertex AI: Application Default Credentials added just before sending, never journaled.

Token refresh runs for real: google-auth posts to a loopback OAuth token endpoint through our
httpx transport. Turns run through the real session runtime against the emulator's Vertex path.
"""

from __future__ import annotations

import base64
import datetime
import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from google.oauth2.credentials import Credentials

from desktop.emulator import Emulator
from desktop.host.providers import WireRequest, send_streaming
from desktop.host.providers.cloud_auth import CloudAuth
from desktop.host.providers.extras import AuthUnavailable, MissingExtra
from desktop.host.providers.google_adc import AdcBearer
from desktop.pi.projection import CREDENTIAL_PLACEHOLDER, RequestOptions, project
from desktop.pi.routes import emulator_route, resolve_model
from desktop.pi.streaming import parser_for
from desktop.pi.streaming.google_generative_ai import GoogleVertexParser
from tests.session.support import config, open_

ROUTE = "google-vertex/gemini-2.5-flash"
TOKEN = "ya29.pi-desktop-test-access-token-0123456789"
VERTEX_URL = "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse"


@pytest.fixture
def gcp_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "pi-desktop-test")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "us-central1")
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "no-adc.json"))
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "no-gcloud"))
    monkeypatch.setenv("NO_GCE_CHECK", "True")


class TokenEndpoint:
    """A loopback OAuth token endpoint: hands out numbered tokens, or refuses."""

    def __init__(self) -> None:
        self.calls: list[dict[str, list[str]]] = []
        self.refuse = False
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                from urllib.parse import parse_qs

                length = int(self.headers.get("content-length") or 0)
                endpoint.calls.append(parse_qs(self.rfile.read(length).decode()))
                if endpoint.refuse:
                    status, body = (
                        400,
                        {"error": "invalid_grant", "error_description": "Token has been revoked."},
                    )
                else:
                    status = 200
                    body = {
                        "access_token": f"{TOKEN}-{len(endpoint.calls)}",
                        "expires_in": 3600,
                        "token_type": "Bearer",
                    }
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/token"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def token_endpoint() -> Iterator[TokenEndpoint]:
    endpoint = TokenEndpoint()
    yield endpoint
    endpoint.close()


def user_credentials(endpoint: TokenEndpoint) -> Credentials:
    return Credentials(
        token=None,
        refresh_token="refresh-me",
        client_id="client",
        client_secret="shh",
        token_uri=endpoint.url,
    )


# -- the stream ----------------------------------------------------------------------------


def test_vertex_stream_is_read_like_gemini_under_its_own_api() -> None:
    model = {"id": "gemini-2.5-flash", "api": "google-vertex", "provider": "google-vertex"}
    parser = parser_for(model)
    assert isinstance(parser, GoogleVertexParser)
    parser.start()
    chunk = {
        "candidates": [{"content": {"parts": [{"text": "Hi"}]}, "finishReason": "STOP"}],
        "responseId": "r1",
    }
    parser.feed(f"data: {json.dumps(chunk)}\r\n\r\n".encode())
    parser.finish()
    message = parser.result()
    assert (message["api"], message["stopReason"], message["content"]) == (
        "google-vertex",
        "stop",
        [{"type": "text", "text": "Hi"}],
    )
    unfinished = parser_for(model)
    unfinished.start()
    unfinished.feed(b'data: {"candidates": [{"content": {"parts": [{"text": "Hi"}]}}]}\r\n\r\n')
    unfinished.finish()
    assert unfinished.result()["errorMessage"] == "Google Vertex stream ended without a finish reason"


# -- ADC ---------------------------------------------------------------------------------------


def test_token_is_fetched_once_and_refreshed_when_expired(token_endpoint: TokenEndpoint) -> None:
    credentials = user_credentials(token_endpoint)
    bearer = AdcBearer(credentials)
    assert bearer.headers() == {"authorization": f"Bearer {TOKEN}-1"}
    assert bearer.headers() == {"authorization": f"Bearer {TOKEN}-1"}  # still valid: no second call
    assert token_endpoint.calls[0]["grant_type"] == ["refresh_token"]
    assert token_endpoint.calls[0]["refresh_token"] == ["refresh-me"]
    credentials.expiry = datetime.datetime.now(datetime.UTC).replace(tzinfo=None) - datetime.timedelta(
        minutes=1
    )
    sent = bearer("POST", VERTEX_URL, {"content-type": "application/json", "Authorization": "stale"}, b"{}")
    assert sent == {"content-type": "application/json", "authorization": f"Bearer {TOKEN}-2"}
    assert len(token_endpoint.calls) == 2


def test_application_default_credentials_file(
    gcp_env: None, token_endpoint: TokenEndpoint, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``google.auth.default`` reads GOOGLE_APPLICATION_CREDENTIALS (a service account here, whose
    file names its token endpoint), asks for the cloud-platform scope, refreshes via our transport."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    adc = tmp_path / "service-account.json"
    adc.write_text(
        json.dumps(
            {
                "type": "service_account",
                "project_id": "pi-desktop-test",
                "private_key_id": "k1",
                "private_key": pem,
                "client_email": "pi@pi-desktop-test.iam.gserviceaccount.com",
                "client_id": "1",
                "token_uri": token_endpoint.url,
            }
        ),
        encoding="utf-8",
    )
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(adc))
    authorize = CloudAuth().authorizer("google-vertex", VERTEX_URL, {"content-type": "application/json"})
    assert authorize is not None
    assert authorize("POST", VERTEX_URL, {}, b"{}")["authorization"] == f"Bearer {TOKEN}-1"
    assert authorize("POST", VERTEX_URL, {}, b"{}")["authorization"] == f"Bearer {TOKEN}-1"
    (call,) = token_endpoint.calls
    assert call["grant_type"] == ["urn:ietf:params:oauth:grant-type:jwt-bearer"]
    claims_part = call["assertion"][0].split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(claims_part + "=" * (-len(claims_part) % 4)))
    assert claims["scope"] == "https://www.googleapis.com/auth/cloud-platform"
    assert claims["iss"] == "pi@pi-desktop-test.iam.gserviceaccount.com"


def test_missing_adc_and_refused_refresh_are_explained(gcp_env: None, token_endpoint: TokenEndpoint) -> None:
    with pytest.raises(AuthUnavailable, match="No Google Application Default Credentials were found"):
        AdcBearer().headers()
    token_endpoint.refuse = True
    with pytest.raises(AuthUnavailable, match="Refreshing the Google credentials for Vertex AI failed"):
        AdcBearer(user_credentials(token_endpoint)).headers()


def test_missing_google_auth_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "google.auth.exceptions", None)
    with pytest.raises(MissingExtra, match=r"pip install 'pi-desktop\[vertex\]'"):
        AdcBearer(Credentials(token=TOKEN)).headers()


def test_only_adc_requests_get_a_token() -> None:
    cloud = CloudAuth(google_credentials=Credentials(token=TOKEN), ambient=False)
    assert cloud.authorizer("google-vertex", VERTEX_URL, {"x-goog-api-key": "k"}) is None
    assert cloud.authorizer("google-vertex", VERTEX_URL + "&key=k", {}) is None
    assert cloud.authorizer("google-generative-ai", VERTEX_URL, {}) is None
    assert CloudAuth.offline().authorizer("google-vertex", VERTEX_URL, {}) is None
    authorize = cloud.authorizer("google-vertex", VERTEX_URL, {})
    assert (
        authorize is not None and authorize("POST", VERTEX_URL, {}, b"")["authorization"] == f"Bearer {TOKEN}"
    )


# -- through the emulator ------------------------------------------------------------------


def test_a_refused_refresh_ends_the_turn_before_any_request(
    gcp_env: None, token_endpoint: TokenEndpoint, emu: Emulator
) -> None:
    token_endpoint.refuse = True
    model = resolve_model(emulator_route(ROUTE, emu.url, emulated=True)).model
    request = project(
        model,
        [{"role": "user", "content": "hi", "timestamp": 0}],
        RequestOptions(
            api_key=CREDENTIAL_PLACEHOLDER,
            env={"GOOGLE_CLOUD_PROJECT": "p", "GOOGLE_CLOUD_LOCATION": "l"},
            credential_kind="adc",  # the host decided: no Vertex key, so ADC (design P5)
        ),
    )
    assert (
        "authorization" not in {k.lower() for k in request.headers}
        and "x-goog-api-key" not in request.headers
    )
    cloud = CloudAuth(google_credentials=user_credentials(token_endpoint), ambient=False)
    authorize = cloud.authorizer(model["api"], request.url, request.headers)
    message = send_streaming(
        WireRequest(request.url, request.body_bytes, request.headers), model=model, authorize=authorize
    )
    assert message["stopReason"] == "error"
    assert message["errorMessage"].startswith("Google Vertex AI: Refreshing the Google credentials")
    assert emu.requests == []


def test_adc_turns_through_the_session_runtime(tmp_path: Path, gcp_env: None) -> None:
    path = tmp_path / "session.jsonl"
    with Emulator(require_auth=True) as emu:
        auth = CloudAuth(google_credentials=Credentials(token=TOKEN), ambient=False)
        cfg = config(emu, tmp_path / "ws", ROUTE, cloud_auth=auth)
        (cfg.workspace / "notes.txt").write_text("remember the milk", encoding="utf-8")
        with open_(path, cfg) as session:
            first = session.runtime.run_turn("hello vertex")
            assert first.stopped == "stop", first.error
            assert first.assistant[-1]["content"][0]["text"] == "Echo: hello vertex"
            call = json.dumps({"path": "notes.txt"})
            second = session.runtime.run_turn(f"please read [[tool:read {call}]]")
            assert second.stopped == "stop", second.error
            assert "remember the milk" in second.assistant[-1]["content"][0]["text"]
        recorded = list(emu.requests)

    assert [m["api"] for m in (*first.assistant, *second.assistant)] == ["google-vertex"] * 3
    assert len(recorded) == 3 and all(r.status == 200 and r.wire == "google" for r in recorded)
    assert (
        recorded[0].path
        == "/google-vertex/v1/publishers/google/models/gemini-2.5-flash:streamGenerateContent"
    )
    assert recorded[0].query == "alt=sse"
    assert all(r.headers["authorization"] == f"Bearer {TOKEN}" for r in recorded)
    assert all("x-goog-api-key" not in r.headers for r in recorded)
    journal = path.read_text(encoding="utf-8")
    assert TOKEN not in journal and "ya29." not in journal
