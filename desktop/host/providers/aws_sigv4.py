"""AWS Signature Version 4 for Bedrock requests, with botocore (the ``bedrock`` extra).

The projection builds the exact request without a credential (its preview must not depend
on the clock or hold a secret); this module signs those bytes just before each attempt, so
a retry gets a fresh ``x-amz-date``. Credentials come from botocore's default chain — the
``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``(/``AWS_SESSION_TOKEN``) variables,
``AWS_PROFILE`` and the shared config/credentials files (SSO included), web identity,
container and instance roles — or are injected (tests, the offline emulator). Refreshable
credentials are frozen per signature, so an expiring role is renewed by botocore.

The signing region is the one in the endpoint host (``bedrock-runtime.<region>.amazonaws.com``);
for custom endpoints (VPC endpoints, proxies, the emulator) it is ``AWS_REGION`` /
``AWS_DEFAULT_REGION``, else ``us-east-1``, as pi-ai resolves it.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from desktop.host.providers.extras import AuthUnavailable, require_extra

SERVICE = "bedrock"
DEFAULT_REGION = "us-east-1"
_ENDPOINT = re.compile(r"^bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$")
_ARN_REGION = re.compile(r"^arn:aws(?:-[a-z0-9-]+)?:bedrock:([a-z0-9-]+):")

NO_CREDENTIALS = (
    "No AWS credentials were found for Amazon Bedrock. Set AWS_ACCESS_KEY_ID and "
    "AWS_SECRET_ACCESS_KEY, choose a profile with AWS_PROFILE (`aws configure` or `aws sso login`), "
    "run where an instance or task role applies, or store a Bedrock API key for the account "
    "(or set AWS_BEARER_TOKEN_BEDROCK) to use bearer-token auth instead."
)


def signing_region(url: str, environ: Mapping[str, str] | None = None, model_id: str = "") -> str:
    """The region a request to ``url`` is signed for."""
    env = os.environ if environ is None else environ
    host = (urlsplit(url).hostname or "").lower()
    match = _ENDPOINT.match(host)
    if match:
        return match.group(1)
    arn = _ARN_REGION.match(model_id)
    if arn:
        return arn.group(1)
    return env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or DEFAULT_REGION


def static_credentials(access_key: str, secret_key: str, token: str | None = None) -> Any:
    """botocore ``Credentials`` from fixed values (tests, ``AWS_BEDROCK_SKIP_AUTH`` proxies)."""
    credentials = require_extra("botocore.credentials", "bedrock")
    return credentials.Credentials(access_key, secret_key, token)


class SigV4Signer:
    """Signs Bedrock requests; resolves the default credential chain once, on first use."""

    def __init__(self, credentials: Any | None = None, *, environ: Mapping[str, str] | None = None) -> None:
        self._credentials = credentials
        self._environ = environ
        self._lock = threading.Lock()

    def _frozen(self) -> Any:
        botocore_exceptions = require_extra("botocore.exceptions", "bedrock")
        with self._lock:
            try:
                if self._credentials is None:
                    session = require_extra("botocore.session", "bedrock")
                    found = session.get_session().get_credentials()
                    if found is None:
                        raise AuthUnavailable(NO_CREDENTIALS)
                    self._credentials = found
                frozen = self._credentials.get_frozen_credentials()
            except botocore_exceptions.BotoCoreError as exc:
                raise AuthUnavailable(
                    f"AWS credentials for Amazon Bedrock could not be loaded: {exc}"
                ) from exc
        if not frozen.access_key or not frozen.secret_key:
            raise AuthUnavailable(NO_CREDENTIALS)
        return frozen

    def sign(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes, *, region: str | None = None
    ) -> dict[str, str]:
        """``headers`` plus ``Authorization``, ``X-Amz-Date`` (and ``X-Amz-Security-Token``)."""
        auth = require_extra("botocore.auth", "bedrock")
        awsrequest = require_extra("botocore.awsrequest", "bedrock")
        frozen = self._frozen()
        kept = {k: v for k, v in headers.items() if k.lower() != "authorization"}
        request = awsrequest.AWSRequest(method=method, url=url, data=body, headers=kept)
        auth.SigV4Auth(frozen, SERVICE, region or signing_region(url, self._environ)).add_auth(request)
        return {str(k): str(v) for k, v in request.headers.items()}

    def __call__(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> dict[str, str]:
        return self.sign(method, url, headers, body)
