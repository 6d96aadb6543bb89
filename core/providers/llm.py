"""An LLM client for any OpenAI-compatible chat endpoint (OpenAI, Ollama, vLLM, llama.cpp).

Off by default: get_llm() returns None unless MNEMO_LLM_URL is set, and every caller has a
deterministic fallback. Answers are JSON objects; timeouts and retryable failures (timeouts,
429, 5xx, an answer that is not JSON) are retried with exponential backoff."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable

import httpx

from core.providers.base import ProviderError

_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.MULTILINE)


class LLMClient:
    def __init__(self, *, base_url: str, model: str, api_key: str = "", timeout: float = 30.0, retries: int = 2,
                 backoff: float = 0.5, transport: httpx.BaseTransport | None = None,
                 sleep: Callable[[float], None] = time.sleep):
        if not base_url or not model:
            raise ProviderError("the LLM client needs MNEMO_LLM_URL and MNEMO_LLM_MODEL", retryable=False)
        self.model = model
        self.retries = retries
        self.backoff = backoff
        self._sleep = sleep
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(base_url=base_url.rstrip("/"), headers=headers, timeout=timeout, transport=transport)

    def complete_json(self, *, system: str, user: str, temperature: float = 0.0, max_tokens: int | None = None) -> dict:
        """Ask for a JSON object; returns it parsed. Raises ProviderError after the retries."""
        payload = {
            "model": self.model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "temperature": temperature,
            "response_format": {"type": "json_object"},
        }
        if max_tokens:
            payload["max_tokens"] = max_tokens
        attempt = 0
        while True:
            try:
                return self._once(payload)
            except ProviderError as exc:
                if not exc.retryable or attempt >= self.retries:
                    raise
                self._sleep(self.backoff * (2 ** attempt))
                attempt += 1

    def _once(self, payload: dict) -> dict:
        try:
            response = self._client.post("/chat/completions", json=payload)
        except httpx.TimeoutException as exc:
            raise ProviderError(f"LLM request timed out: {exc}", retryable=True) from exc
        except httpx.TransportError as exc:
            raise ProviderError(f"LLM endpoint unreachable: {exc}", retryable=True) from exc
        if response.status_code == 429 or response.status_code >= 500:
            raise ProviderError(f"LLM endpoint answered {response.status_code}", retryable=True)
        if response.status_code >= 400:
            raise ProviderError(f"LLM endpoint answered {response.status_code}: {response.text[:200]}", retryable=False)
        try:
            content = response.json()["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ProviderError(f"unexpected LLM response shape: {exc}", retryable=False) from exc
        try:
            parsed = json.loads(_FENCE.sub("", content or "").strip())
        except ValueError as exc:
            # Sampling may well produce valid JSON on the next try.
            raise ProviderError("the LLM answer was not JSON", retryable=True) from exc
        if not isinstance(parsed, dict):
            raise ProviderError("the LLM answer was JSON but not an object", retryable=True)
        return parsed


_llm: LLMClient | None = None
_llm_lock = threading.Lock()


def get_llm() -> LLMClient | None:
    """The configured LLM client, or None when no LLM is configured (the default)."""
    from django.conf import settings

    global _llm
    if not settings.MNEMO_LLM_URL:
        return None
    with _llm_lock:
        if _llm is None:
            _llm = LLMClient(
                base_url=settings.MNEMO_LLM_URL, model=settings.MNEMO_LLM_MODEL, api_key=settings.MNEMO_LLM_API_KEY,
                timeout=settings.MNEMO_LLM_TIMEOUT, retries=settings.MNEMO_LLM_RETRIES,
            )
        return _llm
