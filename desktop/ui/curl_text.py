"""The Payload tab's request as a cURL command line ("Copy as cURL").

Built from the preview the worker sent: its method, URL, headers (already redacted: a secret
header reads ``<redacted>``) and the exact body bytes, each quoted for a POSIX shell so the
command sends the body byte for byte. A key in the URL's query is redacted too. The user
supplies the credential: nothing here can reveal one.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from typing import Any

from desktop.pi.projection import redacted_headers

_URL_SECRET = re.compile(r"([?&](?:key|api_key|apikey|access_token)=)[^&#]*", re.IGNORECASE)


def curl_command(preview: Mapping[str, Any]) -> str:
    """``curl`` with the preview's method, URL, headers and body (one header per line)."""
    url = _URL_SECRET.sub(r"\1<redacted>", str(preview.get("url") or ""))
    method = str(preview.get("method") or "POST").upper()
    raw = preview.get("headers")
    headers = redacted_headers({str(k): str(v) for k, v in raw.items()} if isinstance(raw, Mapping) else {})
    body = bytes(preview.get("body") or b"").decode("utf-8", errors="replace")
    lines = [f"curl -X {method} {shlex.quote(url)}"]
    lines += [f"  -H {shlex.quote(f'{name}: {value}')}" for name, value in headers.items()]
    if body:
        lines.append(f"  --data-binary {shlex.quote(body)}")
    return " \\\n".join(lines)
