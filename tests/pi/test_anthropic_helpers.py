"""Id and endpoint rules behind the Anthropic and Bedrock projections.

The conformance fixtures exercise these through whole requests; these cases pin the edge
inputs a fixture cannot easily carry (astral characters in
tool ids, non-canonical base64, endpoint spellings).
"""

from __future__ import annotations

import pytest

from desktop.pi.projection import ProjectionError, RequestOptions
from desktop.pi.projection.anthropic import normalize_tool_call_id
from desktop.pi.projection.bedrock import _atob, _image, endpoint_url
from desktop.pi.types import Model


def test_tool_call_ids_follow_anthropic_pattern() -> None:
    assert normalize_tool_call_id("toolu_01") == "toolu_01"
    assert normalize_tool_call_id("call|a/b c") == "call_a_b_c"
    assert normalize_tool_call_id("x🙈") == "x__"  # two UTF-16 units, two underscores
    assert len(normalize_tool_call_id("a" * 100)) == 64


def test_atob_is_forgiving_like_the_browser() -> None:
    assert _atob("aGk=") == b"hi"
    assert _atob("aGk") == b"hi"
    assert _atob(" aG\nk= ") == b"hi"
    with pytest.raises(ValueError):
        _atob("a")
    with pytest.raises(ValueError):
        _atob("not base64!")


def test_unknown_image_type_names_the_field() -> None:
    with pytest.raises(ProjectionError, match="image/tiff"):
        _image({"type": "image", "mimeType": "image/tiff", "data": "aGk="})


def _model(model_id: str, base_url: str) -> Model:
    return {
        "id": model_id,
        "name": "m",
        "api": "bedrock-converse-stream",
        "provider": "amazon-bedrock",
        "baseUrl": base_url,
        "reasoning": False,
        "input": ["text"],
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": 1000,
        "maxTokens": 100,
    }


@pytest.mark.parametrize(
    ("model_id", "base_url", "env", "expected"),
    [
        (
            "a.b:0",
            "https://bedrock-runtime.us-east-1.amazonaws.com",
            {},
            "https://bedrock-runtime.us-east-1.amazonaws.com/model/a.b%3A0/converse-stream",
        ),
        (
            "m",
            "https://bedrock-runtime.us-east-1.amazonaws.com",
            {"AWS_REGION": "eu-west-3"},
            "https://bedrock-runtime.eu-west-3.amazonaws.com/model/m/converse-stream",
        ),
        (
            "m",
            "https://bedrock-runtime.us-east-1.amazonaws.com",
            {"AWS_REGION": "cn-north-1"},
            "https://bedrock-runtime.cn-north-1.amazonaws.com.cn/model/m/converse-stream",
        ),
        (
            "m",
            "https://proxy.example/",
            {"AWS_REGION": "eu-west-3"},
            "https://proxy.example/model/m/converse-stream",
        ),
        (
            "m",
            "https://proxy.example:8443/base?x=1",
            {},
            "https://proxy.example:8443/base/model/m/converse-stream",
        ),
        (
            "arn:aws:bedrock:ap-south-1:1:inference-profile/x",
            "https://bedrock-runtime.us-east-1.amazonaws.com",
            {"AWS_PROFILE": "p"},
            "https://bedrock-runtime.ap-south-1.amazonaws.com/model/arn%3Aaws%3Abedrock%3Aap-south-1%3A1%3Ainference-profile%2Fx/converse-stream",
        ),
    ],
)
def test_endpoint_url(model_id: str, base_url: str, env: dict[str, str], expected: str) -> None:
    assert endpoint_url(_model(model_id, base_url), RequestOptions(env=env)) == expected
