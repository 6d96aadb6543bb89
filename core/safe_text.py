"""The one guard every stored free-text value passes: a secret is refused, never stored.

Three doors lead to the database and each uses this module, so no endpoint has to
remember a call of its own:

- the API: every free-text field of every write schema is typed `SafeStr`, `SafeContent`
  or `SafeJson`, so pydantic refuses a secret before the endpoint runs (422
  `secret_detected`, naming the field and the rule, mnemo/api.py);
- the services: `refuse_secrets(field=value, …)` raises `SecretRefused`, a Django
  `ValidationError`, so a write from the dashboard, a task or the shell is refused too;
- the Django admin: every ModelAdmin's form is a `SecretRefusingForm` (core/admin.py).

`SafeContent` is for the fields whose service removes `<private>…</private>` blocks
before storing (interaction content, memory text, procedures, working memory): a secret
inside such a block is allowed there, because it is removed. Everywhere else the value is
stored as given, so a secret anywhere in it is refused."""

from __future__ import annotations

from functools import partial
from typing import Annotated, Any

from django import forms
from django.core.exceptions import ValidationError
from pydantic import AfterValidator
from pydantic_core import PydanticCustomError

from core.privacy.guard import first_secret
from core.privacy.results import SecretMatch

SECRET_CODE = "secret_detected"


def _message(match: SecretMatch) -> str:
    # Names the rule, never the value: it goes to API errors, form errors and logs.
    return f"contains {match.description} (rule {match.rule}); remove it: nothing was stored."


def _refuse_in_schema(value: Any, *, private_allowed: bool) -> Any:
    found = first_secret(value, private_allowed=private_allowed)
    if found:
        at, match = found
        raise PydanticCustomError(SECRET_CODE, _message(match), {"rule": match.rule, "at": at})
    return value


SafeStr = Annotated[str, AfterValidator(partial(_refuse_in_schema, private_allowed=False))]
# The check alone, for a type that adds constraints of its own before it (procedure steps).
CONTENT_GUARD = AfterValidator(partial(_refuse_in_schema, private_allowed=True))
SafeContent = Annotated[str, CONTENT_GUARD]
SafeJson = Annotated[dict[str, Any], AfterValidator(partial(_refuse_in_schema, private_allowed=False))]


class SecretRefused(ValidationError):
    """A value about to be stored holds a secret. A ValidationError, so the dashboard's
    views show it as a message and the API answers 422 `secret_detected`."""

    def __init__(self, field: str, match: SecretMatch):
        self.field, self.rule = field, match.rule
        super().__init__({field: f"{field} {_message(match)}"}, code=SECRET_CODE)


def refuse_secrets(*, private_allowed: bool = False, **fields: Any) -> None:
    """Raise SecretRefused for the first field (a string, list or dict) holding a secret."""
    for name, value in fields.items():
        found = first_secret(value, private_allowed=private_allowed)
        if found:
            at, match = found
            raise SecretRefused(f"{name}.{at}" if at and not at.startswith("[") else name + at, match)


class SecretRefusingMixin:
    """For a form that writes a row: every submitted text, list or JSON value is checked,
    but the fields named in `secret_exempt` (a password is a secret on purpose)."""

    secret_exempt: tuple[str, ...] = ()

    def clean(self):
        cleaned = super().clean()
        for name, value in list(cleaned.items()):
            found = None if name in self.secret_exempt else first_secret(value)
            if found:
                self.add_error(name, f"This field {_message(found[1])}")
        return cleaned


class SecretRefusingForm(SecretRefusingMixin, forms.ModelForm):
    """The admin's forms for Mnemo's own models."""
