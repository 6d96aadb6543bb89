"""Credentials Mnemo must send somewhere, kept encrypted at rest: a workspace's issue-tracker
token (gaps.GapSink) and a webhook's signing secret (webhooks.Webhook). Mnemo has to read
them back to use them, so they cannot be hashed like API keys; sealed, a copy of the
database (a dump, a backup, a replica someone can read) does not hand them out.

`SealedCharField` stores `fernet:<token>` (cryptography's Fernet: AES-128-CBC + HMAC-SHA256,
a well-kept library rather than hand-made crypto) and reads back the plain value. The keys:
MNEMO_SEAL_KEYS, comma-separated Fernet keys, the first sealing and every one opening
(MultiFernet), so a key is rotated by putting the new one first and running
`manage.py reseal`; unset, one key derived from SECRET_KEY seals (a single-machine install
keeps that under var/, so its sealed values survive restarts), and that derived key always
opens last. A value that no key opens is an
error naming the setting, never an empty credential. Rows written before sealing existed
(no prefix) are read as they are and sealed on their next save or by `manage.py reseal`."""

from __future__ import annotations

import base64
import hashlib
import functools

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import models

from core.errors import ApiError

PREFIX = "fernet:"


class UnsealError(ApiError):
    """A sealed value no configured key opens (MNEMO_SEAL_KEYS or SECRET_KEY changed): the
    deployment's configuration, not the caller's input, so the API answers 503 with this
    message and the worker's task fails loudly rather than send an empty credential."""

    status = 503
    code = "sealing_key_changed"


@functools.lru_cache(maxsize=4)
def _fernet(keys: tuple[str, ...], secret_key: str) -> MultiFernet:
    # The key derived from SECRET_KEY seals when no key is set and always opens last, so a
    # deployment moving to MNEMO_SEAL_KEYS reads what it sealed before and `reseal` moves it.
    derived = Fernet(base64.urlsafe_b64encode(hashlib.sha256(b"mnemo-seal:" + secret_key.encode()).digest()))
    try:
        return MultiFernet([*(Fernet(key.encode()) for key in keys), derived])
    except ValueError as exc:
        raise ImproperlyConfigured("MNEMO_SEAL_KEYS must be Fernet keys (32 url-safe base64 bytes), "
                                   "comma-separated, the newest first") from exc


def _keys() -> MultiFernet:
    return _fernet(tuple(settings.MNEMO_SEAL_KEYS), settings.SECRET_KEY)


def seal(value: str) -> str:
    if not value or value.startswith(PREFIX):
        return value
    return PREFIX + _keys().encrypt(value.encode()).decode()


def unseal(stored: str) -> str:
    if not stored or not stored.startswith(PREFIX):
        return stored
    try:
        return _keys().decrypt(stored[len(PREFIX):].encode()).decode()
    except InvalidToken:
        raise UnsealError("A stored credential cannot be decrypted with the configured keys: "
                          "MNEMO_SEAL_KEYS (or SECRET_KEY, when it is unset) changed since it was saved. "
                          "Put the old key back in MNEMO_SEAL_KEYS after the new one, or enter the "
                          "credential again.") from None


def is_sealed(stored: str) -> bool:
    return bool(stored) and stored.startswith(PREFIX)


def reseal(stored: str) -> str:
    """The value sealed with the first key (rotation), or sealed at all (a legacy row)."""
    if not stored:
        return stored
    if not is_sealed(stored):
        return seal(stored)
    return PREFIX + _keys().rotate(stored[len(PREFIX):].encode()).decode()


class SealedCharField(models.TextField):
    """A text column holding a sealed value; Python sees the plain one. Lookups compare
    sealed bytes (random each time), so the field is for storing, not for querying by."""

    def from_db_value(self, value, expression, connection):
        return value if value is None else unseal(value)

    def get_prep_value(self, value):
        value = super().get_prep_value(value)
        return value if value is None else seal(value)
