from __future__ import annotations


class ProviderError(Exception):
    """A provider call failed. `retryable` says whether trying again can help (a timeout,
    a 429 or a 5xx) or not (bad configuration, a 4xx, an unusable answer)."""

    def __init__(self, message: str, *, retryable: bool):
        super().__init__(message)
        self.retryable = retryable
