"""Python client for Mnemo, a memory service for AI agents: `Mnemo` (sync), `AsyncMnemo`
(async), the request/response models and the exceptions. The `mnemo` command line is
`mnemo_client.cli`."""

from mnemo_client import models
from mnemo_client._core import VERSION as __version__
from mnemo_client._core import RetryPolicy
from mnemo_client.client import AsyncMnemo, Mnemo
from mnemo_client.errors import (
    ApiError,
    Conflict,
    ConnectionFailed,
    InvalidRequest,
    MnemoError,
    NotFound,
    PayloadTooLarge,
    PermissionDenied,
    RateLimited,
    ServerError,
    ServiceUnavailable,
    Unauthorized,
    UnexpectedResponse,
)

__all__ = [
    "ApiError", "AsyncMnemo", "Conflict", "ConnectionFailed", "InvalidRequest", "Mnemo", "MnemoError", "NotFound",
    "PayloadTooLarge", "PermissionDenied", "RateLimited", "RetryPolicy", "ServerError", "ServiceUnavailable",
    "Unauthorized", "UnexpectedResponse", "__version__", "models",
]
