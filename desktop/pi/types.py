"""Neutral transcript types: the JSON shapes of pi-ai 1.0.3 (``types.ts``), as TypedDicts.

Messages stay plain dicts end to end. That keeps the journal, the projections and the
pi-ai conformance fixtures in one shape (no conversion layer to drift), and lets request
projection run at dict speed on 50k-message transcripts.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

JsonValue: TypeAlias = Any
JsonObject: TypeAlias = dict[str, Any]

KNOWN_APIS: tuple[str, ...] = (
    "anthropic-messages",
    "openai-responses",
    "openai-codex-responses",
    "azure-openai-responses",
    "openai-completions",
    "mistral-conversations",
    "google-generative-ai",
    "google-vertex",
    "bedrock-converse-stream",
    "pi-messages",
)

StopReason = Literal["pending", "stop", "length", "toolUse", "error", "aborted", "deferred"]


class TextContent(TypedDict):
    type: Literal["text"]
    text: str
    textSignature: NotRequired[str]


class ThinkingContent(TypedDict):
    type: Literal["thinking"]
    thinking: str
    thinkingSignature: NotRequired[str]
    redacted: NotRequired[bool]


class ImageContent(TypedDict):
    type: Literal["image"]
    data: str
    mimeType: str


class ToolCall(TypedDict):
    type: Literal["toolCall"]
    id: str
    name: str
    arguments: JsonObject
    thoughtSignature: NotRequired[str]
    namespace: NotRequired[str]


class UsageCost(TypedDict):
    input: float
    output: float
    cacheRead: float
    cacheWrite: float
    total: float


class Usage(TypedDict):
    input: int
    output: int
    cacheRead: int
    cacheWrite: int
    cacheWrite1h: NotRequired[int]
    reasoning: NotRequired[int]
    totalTokens: int
    cost: UsageCost


class Tool(TypedDict):
    name: str
    description: str
    parameters: JsonObject
    constrainedSampling: NotRequired[Any]


class ToolReference(TypedDict):
    name: str


class SystemMessage(TypedDict):
    role: Literal["system"]
    content: str | list[TextContent]
    sections: NotRequired[dict[str, str | None]]
    toolsAdded: NotRequired[list[Tool]]
    toolsRemoved: NotRequired[list[ToolReference]]
    timestamp: int


class UserMessage(TypedDict):
    role: Literal["user"]
    content: str | list[TextContent | ImageContent]
    timestamp: int


class AssistantMessage(TypedDict):
    role: Literal["assistant"]
    content: list[TextContent | ThinkingContent | ToolCall]
    api: str
    provider: str
    model: str
    responseModel: NotRequired[str]
    responseId: NotRequired[str]
    providerThinkingLevel: NotRequired[str]
    thinkingLevel: NotRequired[str]
    diagnostics: NotRequired[list[JsonObject]]
    usage: Usage
    stopReason: StopReason
    errorMessage: NotRequired[str]
    rawStopReason: NotRequired[str]
    endTurn: NotRequired[bool]
    timestamp: int


class ToolResultMessage(TypedDict):
    role: Literal["toolResult"]
    toolCallId: str
    toolName: str
    content: list[TextContent | ImageContent]
    details: NotRequired[JsonValue]
    usage: NotRequired[Usage]
    nestedCalls: NotRequired[JsonObject]
    isError: bool
    timestamp: int


Message: TypeAlias = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage


class Context(TypedDict):
    """pi-ai's public request input: shorthand prompt and tools plus the messages."""

    systemPrompt: NotRequired[str]
    messages: list[Message]
    tools: NotRequired[list[Tool]]


class ModelCost(TypedDict):
    input: float
    output: float
    cacheRead: float
    cacheWrite: float
    tiers: NotRequired[list[JsonObject]]


class Model(TypedDict):
    """A pi-ai chat ``Model``; ``compat`` holds the API-specific flags, transport flags included."""

    id: str
    name: str
    api: str
    provider: str
    baseUrl: str
    reasoning: bool
    input: list[str]
    cost: ModelCost
    contextWindow: int
    maxTokens: int
    headers: NotRequired[dict[str, str]]
    compat: NotRequired[JsonObject]
    thinkingLevelMap: NotRequired[dict[str, str | None]]
    promptCache: NotRequired[dict[str, int]]
    inputLimits: NotRequired[JsonObject]
    samplingParams: NotRequired[JsonObject]
    samplingParamsByThinkingLevel: NotRequired[JsonObject]
    type: NotRequired[str]
