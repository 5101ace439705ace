"""The one table of credential names: environment variables and keyring entries (design D3).

Everything that looks up a provider key by name reads it here: the accounts module (dispatch,
the accounts dialog) and the first-run route choice. Before this table existed the two kept
their own lists and disagreed, so the window could open on a provider whose key dispatch then
could not find.

Environment variables follow pi-ai 1.0.3 exactly (its ``env-api-keys``), in its priority order,
so a shell set up for pi works here unchanged; ``tests/wire/test_credentials.py`` compares this
table with pi-ai's own answer, committed as ``tests/fixtures/credentials/pi_ai_env_api_keys.json``.
Two deliberate differences, both pi-ai's own behaviour seen from here:

- ``ANTHROPIC_AUTH_TOKEN`` is listed by pi-ai for discovery but never used as the key (it must
  travel as ``Authorization: Bearer``), so it is not a key variable here either.
- ``amazon-bedrock`` reads ``AWS_BEARER_TOKEN_BEDROCK`` as its key: pi-ai's Bedrock provider
  reads that variable itself (without it, requests are SigV4-signed from the AWS credentials).

Keyring entries live under service ``pi-desktop`` with user name ``<provider>/<account>``; that
is the only naming rule (a bare ``<provider>`` entry is nobody's and is not read).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Final

#: The keyring service under which every account's key is stored.
KEYRING_SERVICE: Final = "pi-desktop"
#: The account name used when a route names none.
DEFAULT_ACCOUNT: Final = "default"

#: Provider id -> environment variables that may hold its key, in priority order (pi-ai 1.0.3).
API_KEY_ENV: Final[Mapping[str, tuple[str, ...]]] = {
    "amazon-bedrock": ("AWS_BEARER_TOKEN_BEDROCK",),
    "ant-ling": ("ANT_LING_API_KEY",),
    "anthropic": ("ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"),
    "azure": ("AZURE_OPENAI_API_KEY",),
    "baseten": ("BASETEN_API_KEY",),
    "cerebras": ("CEREBRAS_API_KEY",),
    "cloudflare-ai-gateway": ("CLOUDFLARE_API_KEY",),
    "cloudflare-workers-ai": ("CLOUDFLARE_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "fireworks": ("FIREWORKS_API_KEY",),
    "github-copilot": ("COPILOT_GITHUB_TOKEN",),
    "google": ("GEMINI_API_KEY",),
    "google-vertex": ("GOOGLE_CLOUD_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "huggingface": ("HF_TOKEN",),
    "kimi-coding": ("KIMI_API_KEY",),
    "meta": ("META_API_KEY",),
    "minimax": ("MINIMAX_API_KEY",),
    "minimax-cn": ("MINIMAX_CN_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "moonshotai": ("MOONSHOT_API_KEY",),
    "moonshotai-cn": ("MOONSHOT_API_KEY",),
    "nvidia": ("NVIDIA_API_KEY",),
    "openai": ("OPENAI_API_KEY",),
    "opencode": ("OPENCODE_API_KEY",),
    "opencode-go": ("OPENCODE_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "qwen-token-plan": ("QWEN_TOKEN_PLAN_API_KEY",),
    "qwen-token-plan-cn": ("QWEN_TOKEN_PLAN_CN_API_KEY",),
    "qwen-token-plan-individual": ("QWEN_TOKEN_PLAN_API_KEY",),
    "radius": ("RADIUS_API_KEY",),
    "together": ("TOGETHER_API_KEY",),
    "typesafe": ("TYPESAFE_API_KEY",),
    "vercel-ai-gateway": ("AI_GATEWAY_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "xiaomi": ("XIAOMI_API_KEY",),
    "xiaomi-token-plan-ams": ("XIAOMI_TOKEN_PLAN_AMS_API_KEY",),
    "xiaomi-token-plan-cn": ("XIAOMI_TOKEN_PLAN_CN_API_KEY",),
    "xiaomi-token-plan-sgp": ("XIAOMI_TOKEN_PLAN_SGP_API_KEY",),
    "zai": ("ZAI_API_KEY",),
    "zai-coding-cn": ("ZAI_CODING_CN_API_KEY",),
}


def keyring_username(provider: str, account: str = DEFAULT_ACCOUNT) -> str:
    """The keyring user name for a provider's account: ``<provider>/<account>``."""
    return f"{provider}/{account or DEFAULT_ACCOUNT}"


def env_api_key(provider: str, env: Mapping[str, str] | None = None) -> tuple[str, str] | None:
    """(variable name, key) from the environment for ``provider``, or None.

    A blank value does not count: a variable exported empty is not a key.
    """
    source = os.environ if env is None else env
    for name in API_KEY_ENV.get(provider, ()):
        value = source.get(name, "")
        if value.strip():
            return name, value
    return None
