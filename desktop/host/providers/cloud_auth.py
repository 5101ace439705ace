"""Which cloud credential a request gets, decided from the projected request itself.

Bedrock and Vertex authenticate in two ways each, and the projection already chose:

* ``bedrock-converse-stream``: an account key (a Bedrock API key, or
  ``AWS_BEARER_TOKEN_BEDROCK``) became ``authorization: Bearer`` when the dispatcher swapped
  the placeholder. Without one the request is SigV4-signed (``aws_sigv4``);
  ``AWS_BEDROCK_SKIP_AUTH=1`` signs with dummy keys for proxies that authenticate elsewhere,
  as pi-ai does.
* ``google-vertex``: an API key travels as ``x-goog-api-key``; otherwise the projection used
  Application Default Credentials and the request gets a bearer token (``google_adc``).

Offline (emulator) routes never consult the ambient credential chains — no real credential
is sent to a loopback stand-in — but injected credentials are used, so tests exercise the
same signing path.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

if TYPE_CHECKING:  # the signers load only for a Bedrock or Vertex request (the status budget)
    from desktop.host.providers.aws_sigv4 import SigV4Signer
    from desktop.host.providers.google_adc import AdcBearer
    from desktop.host.providers.request import RequestAuthorizer

BEDROCK_API = "bedrock-converse-stream"
VERTEX_API = "google-vertex"
#: Environment values the projections read, as pi-ai 1.0.3 reads them from the process
#: environment (``getProviderEnvValue``, the OpenAI SDK's organization and project); projections
#: are pure, so these are passed in. None of them is a secret: keys travel as the placeholder.
PROJECTION_ENV = (
    "PI_CACHE_RETENTION",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_PROFILE",
    "AWS_BEDROCK_SKIP_AUTH",
    "AWS_BEDROCK_FORCE_CACHE",
    "GOOGLE_CLOUD_PROJECT",
    "GCLOUD_PROJECT",
    "GOOGLE_CLOUD_LOCATION",
    "AZURE_OPENAI_BASE_URL",
    "AZURE_OPENAI_RESOURCE_NAME",
    "AZURE_OPENAI_API_VERSION",
    "AZURE_OPENAI_DEPLOYMENT_NAME_MAP",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
)


def projection_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The non-secret settings pi-ai reads from the environment, for ``RequestOptions.env``."""
    env = os.environ if environ is None else environ
    return {name: env[name] for name in PROJECTION_ENV if env.get(name)}


def _has(headers: Mapping[str, str], name: str) -> bool:
    return any(key.lower() == name for key in headers)


class CloudAuth:
    """Credential sources for one session. ``ambient=False`` (offline routes) uses only the
    injected ``aws_credentials`` (botocore ``Credentials``) and ``google_credentials``
    (google-auth ``Credentials``)."""

    def __init__(
        self,
        aws_credentials: Any | None = None,
        google_credentials: Any | None = None,
        ambient: bool = True,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.aws_credentials = aws_credentials
        self.google_credentials = google_credentials
        self.ambient = ambient
        self.environ = environ
        self._signer: SigV4Signer | None = None
        self._adc: AdcBearer | None = None

    @classmethod
    def offline(cls) -> CloudAuth:
        return cls(ambient=False)

    def _env(self) -> Mapping[str, str]:
        return os.environ if self.environ is None else self.environ

    def authorizer(
        self, api: str, url: str, headers: Mapping[str, str], model_id: str = ""
    ) -> RequestAuthorizer | None:
        """The step that authenticates this request just before sending, or None when the
        headers already carry the credential (or there is nothing to add)."""
        if api not in (BEDROCK_API, VERTEX_API) or _has(headers, "authorization"):
            return None
        if api == BEDROCK_API:
            return self._bedrock(url, model_id)
        if api == VERTEX_API:
            if _has(headers, "x-goog-api-key") or "key" in parse_qs(urlsplit(url).query):
                return None
            return self._vertex()
        return None

    def _bedrock(self, url: str, model_id: str) -> RequestAuthorizer | None:
        # Lazy: the status budget.
        from desktop.host.providers.aws_sigv4 import SigV4Signer, signing_region, static_credentials

        env = self._env()
        region = signing_region(url, env, model_id)
        if self._signer is None:
            if self.aws_credentials is not None:
                self._signer = SigV4Signer(self.aws_credentials, environ=env)
            elif env.get("AWS_BEDROCK_SKIP_AUTH") == "1":
                self._signer = SigV4Signer(
                    static_credentials("dummy-access-key", "dummy-secret-key"), environ=env
                )
            elif self.ambient:
                self._signer = SigV4Signer(environ=env)
            else:
                return None
        signer = self._signer

        def sign(method: str, url: str, headers: Mapping[str, str], body: bytes) -> dict[str, str]:
            return signer.sign(method, url, headers, body, region=region)

        return sign

    def _vertex(self) -> RequestAuthorizer | None:
        # Lazy: the status budget.
        from desktop.host.providers.google_adc import AdcBearer

        if self._adc is None:
            if self.google_credentials is not None:
                self._adc = AdcBearer(self.google_credentials)
            elif self.ambient:
                self._adc = AdcBearer()
            else:
                return None
        return self._adc
