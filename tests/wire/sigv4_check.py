"""An independent SigV4 verifier (AWS's published algorithm, hashlib/hmac only).

Tests recompute the signature of a request the emulator recorded and compare it with the
one botocore produced, so a wrong region, service, body or header set is caught rather
than just "an Authorization header was there".
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Mapping
from urllib.parse import quote

AUTH = re.compile(
    r"^AWS4-HMAC-SHA256 Credential=(?P<key>[^/]+)/(?P<date>\d{8})/(?P<region>[a-z0-9-]+)/(?P<service>[a-z0-9-]+)"
    r"/aws4_request, SignedHeaders=(?P<signed>[a-z0-9;-]+), Signature=(?P<signature>[0-9a-f]{64})$"
)
AMZ_DATE = re.compile(r"^\d{8}T\d{6}Z$")


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def expected_signature(
    *,
    method: str,
    raw_path: str,
    query: str,
    headers: Mapping[str, str],
    body: bytes,
    secret_key: str,
) -> str:
    """The signature AWS would compute for this request (headers as sent, any case)."""
    lower = {k.lower(): v for k, v in headers.items()}
    match = AUTH.match(lower["authorization"])
    assert match, lower["authorization"]
    signed = match["signed"].split(";")
    canonical_headers = "".join(f"{name}:{' '.join(lower[name].split())}\n" for name in signed)
    # Non-S3 services sign the path URI-encoded once more than it is sent.
    canonical_uri = quote(raw_path, safe="/-_.~")
    canonical_request = "\n".join(
        [method, canonical_uri, query, canonical_headers, match["signed"], hashlib.sha256(body).hexdigest()]
    )
    scope = f"{match['date']}/{match['region']}/{match['service']}/aws4_request"
    to_sign = "\n".join(
        [
            "AWS4-HMAC-SHA256",
            lower["x-amz-date"],
            scope,
            hashlib.sha256(canonical_request.encode()).hexdigest(),
        ]
    )
    key = ("AWS4" + secret_key).encode()
    for part in (match["date"], match["region"], match["service"], "aws4_request"):
        key = _hmac(key, part)
    return hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()


def parse_authorization(value: str) -> dict[str, str]:
    match = AUTH.match(value)
    assert match, value
    return match.groupdict()
