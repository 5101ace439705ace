"""Optional extras (``pi-desktop[bedrock]``, ``pi-desktop[vertex]``), imported only when used.

The official auth libraries are large and most users need neither, so they are not runtime
dependencies. Code that needs one asks for it here at the moment of use; when it is missing
the error names the extra to install instead of surfacing a bare ImportError.
"""

from __future__ import annotations

import importlib
from types import ModuleType


class AuthUnavailable(RuntimeError):
    """A request cannot be authenticated; the text says what is missing and how to fix it."""


class MissingExtra(AuthUnavailable):
    """An optional dependency is not installed."""


#: extra -> (distribution, what it is for)
EXTRAS = {
    "bedrock": ("botocore", "Amazon Bedrock SigV4 signing (AWS credentials)"),
    "vertex": ("google-auth", "Google Vertex AI Application Default Credentials"),
}


def require_extra(module: str, extra: str) -> ModuleType:
    """Import ``module`` from the optional ``extra``, or fail naming the pip command."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        distribution, purpose = EXTRAS[extra]
        raise MissingExtra(
            f"{purpose} needs the {distribution} package, which is not installed. "
            f"Install it with: pip install 'pi-desktop[{extra}]'"
        ) from exc
