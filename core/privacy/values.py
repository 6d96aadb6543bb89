"""Judging a value on its own: is it random enough to be a credential, or a placeholder,
a word, a path, a date?

Rules that only see `name = value` cannot rely on a known prefix, so they ask these
questions instead. The thresholds were chosen so that ordinary prose and code that
merely *mentions* passwords stays storable (see bench/privacy_false_positives.py)."""

from __future__ import annotations

import math
import re
from collections import Counter

PLACEHOLDER_WORDS = frozenset(
    {
        "password", "passwd", "pass", "pwd", "pw", "secret", "token", "apikey", "api_key", "key",
        "changeme", "change_me", "example", "placeholder", "redacted", "hidden", "none", "null",
        "nil", "undefined", "true", "false", "empty", "test", "dummy", "sample", "default",
        "yourpassword", "your_password", "your-password", "mypassword", "my_password",
        "yoursecret", "your_secret", "your-secret", "yourtoken", "your_token", "your-token",
        "your_api_key", "your-api-key", "yourapikey",
    }
)

# `${VAR}`, `$VAR`, `%VAR%`, `{{ var }}`, `<password>`, `[token]`, `%(pw)s`, `process.env.X`,
# `os.environ[...]`, `env("X")`: references to a secret, not the secret. A bare value stops
# before a closing bracket, so the closing one is optional.
_REFERENCE = re.compile(
    r"^(?:\$\{[^}]*\}?|\$\(?[A-Za-z_]\w*\)?|%[A-Za-z_]\w*%|\{\{.*|<[^<>]*>?|\[[^\[\]]*\]?|%\(\w+\)[sd]|%[sd]"
    r"|(?:process\.env|os\.environ|env|getenv)\b.*)$"
)
_MASK = re.compile(r"^[*xX.•#?_\-…]+$")  # ****, xxxx, ••••, …
_NUMERIC = re.compile(r"^[\d\s\-+/.:,()]+$")  # dates, times, amounts, versions, phone numbers
_CALL = re.compile(r"^[A-Za-z_][\w.]*[(\[]")  # getpass(), cfg["x"]; bare values stop before `)`
_PATH = re.compile(r"^(?:~|\.{1,2})?/|^[A-Za-z]:\\|\.(?:pem|key|json|ya?ml|txt|env|cfg|ini|p12|pfx|crt)$")
_CAMEL_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def shannon_entropy(value: str) -> float:
    """Bits per character of the value's own character distribution."""
    if not value:
        return 0.0
    total = len(value)
    return -sum(n / total * math.log2(n / total) for n in Counter(value).values())


def char_classes(value: str) -> set[str]:
    classes = set()
    for char in value:
        if char.islower():
            classes.add("lower")
        elif char.isupper():
            classes.add("upper")
        elif char.isdigit():
            classes.add("digit")
        else:
            classes.add("symbol")
    return classes


def name_words(name: str) -> list[str]:
    """`DB_PASSWORD` -> [db, password]; `xApiKey` -> [x, api, key]; `APIKey2` -> [api, key, 2]."""
    return [word.lower() for word in _CAMEL_WORDS.findall(name)]


def is_placeholder(value: str) -> bool:
    stripped = value.strip()
    if not stripped:
        return True
    lowered = stripped.lower()
    return (
        lowered in PLACEHOLDER_WORDS
        or bool(_MASK.match(stripped))
        or bool(_REFERENCE.match(stripped))
        or len(set(lowered)) <= 2
        or "example" in lowered
        or ("your" in lowered and len(stripped) < 40)
    )


def _not_a_value(value: str) -> bool:
    """Shapes that are never credentials even when they follow `password =`."""
    return (
        is_placeholder(value)
        or bool(_NUMERIC.match(value))
        or bool(_CALL.match(value))
        or bool(_PATH.search(value))
        or "://" in value
        or len(value.split()) > 2  # a phrase, not a password
    )


def _is_wordy(value: str) -> bool:
    """Identifiers and words (`settings.OPENAI_API_KEY`, `state-of-the-art`) split into
    long alphabetic chunks; random strings split into short ones."""
    chunks = _CAMEL_WORDS.findall(value)
    if not chunks or any(chunk.isdigit() for chunk in chunks):
        return False
    return sum(map(len, chunks)) / len(chunks) >= 3


def looks_like_password(value: str) -> bool:
    """A password assigned to `password`/`passwd`/`pwd`/...: short is fine, but it must mix
    character classes beyond letters and word separators, as chosen passwords do."""
    if len(value) < 8 or _not_a_value(value):
        return False
    classes = char_classes(value)
    has_strong = "digit" in classes or any(not c.isalnum() and c not in "-_. " for c in value)
    return has_strong and len(classes) >= 2 and shannon_entropy(value) >= 2.5 and not _is_wordy(value)


def looks_like_token(value: str) -> bool:
    """A machine-made credential assigned to `token`/`secret`/`api_key`/...: long and random."""
    length = len(value)
    if length < 12 or _not_a_value(value) or " " in value:
        return False
    classes = char_classes(value)
    entropy = shannon_entropy(value)
    if "digit" in classes:
        return len(classes) >= 2 and entropy >= (3.0 if length < 20 else 3.5)
    return length >= 20 and len(classes) >= 2 and entropy >= 3.5 and not _is_wordy(value)


def looks_random(token: str, *, min_distinct: int = 10) -> bool:
    """For tokens with a known prefix (`ghp_`, `AKIA`...): only rules out placeholders such
    as `ghp_xxxxxxxx…` or `AKIA0000…`, since the prefix already carries the evidence."""
    return len(set(token)) >= min_distinct
