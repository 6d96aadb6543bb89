"""Providers behind small protocols: embeddings, the LLM, token counting.

Nothing outside this package imports a provider SDK. Each is chosen by settings and built
once per process; `get_embedder()`, `get_llm()` and `get_token_counter()` hand them out."""

from core.providers.base import ProviderError
from core.providers.embeddings import Embedder, get_embedder
from core.providers.llm import LLMClient, get_llm
from core.providers.tokens import TokenCounter, get_token_counter

__all__ = [
    "Embedder",
    "LLMClient",
    "ProviderError",
    "TokenCounter",
    "get_embedder",
    "get_llm",
    "get_token_counter",
]
