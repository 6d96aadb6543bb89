"""The secret rules and `find_secrets`.

Each rule has a stable snake_case name (it appears in API errors and audit rows), a
description that never quotes the secret, a pattern whose group `s` is the secret, and a
check that looks at the candidate before it counts. Rules are listed most specific first:
where two rules match overlapping text, the earlier one is reported, so `password: ghp_…`
is a GitHub token rather than a generic assigned secret."""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import unquote

from core.privacy.results import SecretMatch
from core.privacy.values import (
    char_classes,
    is_placeholder,
    looks_like_password,
    looks_like_token,
    looks_random,
    name_words,
    shannon_entropy,
)

Span = tuple[int, int]

# Tokens are bounded by characters that cannot belong to them, rather than `\b`, because
# `-` and `_` occur inside tokens and `\b` treats them differently.
_B64URL = "A-Za-z0-9_\\-"
_START = f"(?<![{_B64URL}])"
_END = f"(?![{_B64URL}])"
_ALNUM_START = "(?<![A-Za-z0-9_])"
_ALNUM_END = "(?![A-Za-z0-9_])"


@dataclass(frozen=True)
class Rule:
    name: str
    description: str
    pattern: re.Pattern[str]
    locate: Callable[[re.Match[str]], Span | None]

    def spans(self, text: str) -> list[Span]:
        spans = []
        position = 0
        while m := self.pattern.search(text, position):
            span = self.locate(m)
            if span is None:
                # A rejected candidate must not hide one that starts inside it, as in
                # `token = DB_PASSWORD=…`, so the search resumes just after its start.
                position = m.start() + 1
            else:
                spans.append(span)
                position = m.end()
        return spans


def _prefixed(
    name: str, description: str, regex: str, *, test: Callable[[str], bool] = looks_random, flags: int = 0
) -> Rule:
    """A rule whose pattern already carries the evidence; `test` only vets group `s`."""
    return Rule(name, description, re.compile(regex, flags), lambda m: m.span("s") if test(m.group("s")) else None)


def _openai_body_is_random(token: str) -> bool:
    body = re.sub(r"^sk-(?:(?:proj|svcacct|admin|None)-)?", "", token)
    if "T3BlbkFJ" in body:  # base64 of "OpenAI", embedded in every key OpenAI issues
        return True
    classes = char_classes(body)
    return len(body) >= 32 and "digit" in classes and len(classes) >= 2 and shannon_entropy(body) >= 3.3


def _jwt_header_has_alg(token: str) -> bool:
    header = token.split(".", 1)[0]
    try:
        decoded = json.loads(base64.urlsafe_b64decode(header + "=" * (-len(header) % 4)))
    except (binascii.Error, ValueError):  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        return False
    return isinstance(decoded, dict) and "alg" in decoded


def _pem_has_key_material(m: re.Match[str]) -> Span | None:
    # A header alone ("the file starts with -----BEGIN RSA PRIVATE KEY-----") is a mention,
    # not a key; an unterminated block runs to the end of the text, as a pasted key may.
    return m.span() if re.search(r"[A-Za-z0-9+/=]{20,}", m.group("body")) else None


def _url_password(m: re.Match[str]) -> Span | None:
    return None if is_placeholder(unquote(m.group("s"))) else m.span("s")


def _aws_secret(value: str) -> bool:
    return looks_random(value, min_distinct=12) and shannon_entropy(value) >= 3.5


PEM_PRIVATE_KEY = Rule(
    "private_key",
    "a PEM private key block",
    re.compile(
        # The body stops at the next BEGIN too, which keeps a text of many headers linear.
        r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----(?P<body>(?:(?!-----BEGIN).)*?)"
        r"(?:-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|(?=-----BEGIN)|\Z)",
        re.DOTALL,
    ),
    _pem_has_key_material,
)

# Names whose value is a credential. Only the last word of the name counts, so
# `password_length`, `max_tokens`, `tokenizer` and `compass` are not secret-looking names.
_PASSWORD_WORDS = frozenset({"password", "passwords", "passwd", "pwd", "pass", "passphrase"})
_TOKEN_WORDS = frozenset(
    {"secret", "secrets", "token", "auth", "oauth", "authorization", "credential", "credentials", "bearer"}
)
_TOKEN_SUFFIXES = ("token", "secret", "apikey", "accesskey", "privatekey", "secretkey")
_KEY_QUALIFIERS = frozenset(
    {"api", "access", "private", "secret", "signing", "encryption", "master", "auth", "session", "account", "app"}
)
_NAME_KEYWORDS = "pass|pwd|secret|token|key|auth|credential|bearer"
_NAME_HINT = re.compile(_NAME_KEYWORDS, re.IGNORECASE)
_ASSIGNMENT = re.compile(
    rf"(?<![A-Za-z0-9_.\-])(?=[A-Za-z0-9_.\-]*(?:{_NAME_KEYWORDS}))"
    r"(?P<name>-{0,2}[A-Za-z_][A-Za-z0-9_.\-]{0,60})[\"']?"
    r"[ \t]*(?::=|=>|=|:)[ \t]*(?:(?:bearer|basic|token)[ \t]+)?"
    r"(?:\"(?P<dq>[^\"\r\n]{1,200})\"|'(?P<sq>[^'\r\n]{1,200})'|`(?P<bq>[^`\r\n]{1,200})`"
    r"|(?P<bare>[^\s\"'`,;)\]}>]{1,200}))",
    re.IGNORECASE,
)


def _name_kind(name: str) -> str | None:
    words = name_words(name)
    while words and words[-1].isdigit():
        words.pop()
    if not words:
        return None
    last = words[-1]
    if last in _PASSWORD_WORDS or last.endswith(("password", "passwd")):
        return "password"
    if last in _TOKEN_WORDS or last.endswith(_TOKEN_SUFFIXES):
        return "token"
    if last == "key" and len(words) > 1 and words[-2] in _KEY_QUALIFIERS:
        return "token"
    return None


def _assigned_secret(m: re.Match[str]) -> Span | None:
    kind = _name_kind(m.group("name"))
    if kind is None:
        return None
    group = next(g for g in ("dq", "sq", "bq", "bare") if m.group(g) is not None)
    accept = looks_like_password if kind == "password" else looks_like_token
    return m.span(group) if accept(m.group(group)) else None


ASSIGNED_SECRET = Rule(
    "assigned_secret",
    "a random-looking value assigned to a secret-looking name (password, token, api_key, …)",
    _ASSIGNMENT,
    _assigned_secret,
)

RULES: tuple[Rule, ...] = (
    PEM_PRIVATE_KEY,
    _prefixed(
        "jwt",
        "a JSON Web Token",
        rf"{_START}(?P<s>ey[{_B64URL}]{{10,}}\.[{_B64URL}]{{2,}}\.[{_B64URL}]{{16,}}){_END}",
        test=_jwt_header_has_alg,
    ),
    _prefixed(
        "mnemo_api_key", "a Mnemo API key", rf"{_ALNUM_START}(?P<s>mn_[A-Za-z0-9]{{8}}_[A-Za-z0-9]{{40}}){_ALNUM_END}"
    ),
    _prefixed(
        "aws_access_key",
        "an AWS access key id",
        r"(?<![A-Za-z0-9])(?P<s>(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})(?![A-Za-z0-9])",
    ),
    _prefixed(
        "aws_secret_key",
        "an AWS secret access key",
        r"(?<![A-Za-z0-9])(?:aws[_.\-]?secret(?:[_.\-]?access)?(?:[_.\-]?key)?|secret[_.\-]?access[_.\-]?key)"
        r"[\"']?[ \t]*(?::=|=>|=|:)[ \t]*[\"']?(?P<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
        test=_aws_secret,
        flags=re.IGNORECASE,
    ),
    _prefixed("google_api_key", "a Google API key", rf"{_START}(?P<s>AIza[{_B64URL}]{{35}}){_END}"),
    _prefixed(
        "google_oauth_client_secret",
        "a Google OAuth client secret",
        rf"{_START}(?P<s>GOCSPX-[{_B64URL}]{{24,32}}){_END}",
    ),
    _prefixed("google_oauth_token", "a Google OAuth access token", rf"{_START}(?P<s>ya29\.[{_B64URL}]{{20,}}){_END}"),
    _prefixed(
        "azure_storage_key",
        "an Azure storage account key",
        r"(?<![A-Za-z0-9])AccountKey[ \t]*=[ \t]*(?P<s>[A-Za-z0-9+/]{40,}={0,2})",
        flags=re.IGNORECASE,
    ),
    _prefixed(
        "azure_shared_access_key",
        "an Azure shared access key (Service Bus, Event Hubs, IoT Hub)",
        r"(?<![A-Za-z0-9])SharedAccessKey[ \t]*=[ \t]*(?P<s>[A-Za-z0-9+/]{40,}={0,2})",
        flags=re.IGNORECASE,
    ),
    _prefixed(
        "github_token",
        "a GitHub token",
        rf"{_ALNUM_START}(?P<s>gh[pousr]_[A-Za-z0-9]{{36,255}}){_ALNUM_END}",
    ),
    _prefixed(
        "github_fine_grained_token",
        "a GitHub fine-grained personal access token",
        rf"{_ALNUM_START}(?P<s>github_pat_[A-Za-z0-9]{{20,}}_[A-Za-z0-9]{{40,}}){_ALNUM_END}",
    ),
    _prefixed(
        "gitlab_token",
        "a GitLab token",
        # Personal, deploy, runner, pipeline-trigger, feed, SCIM, CI-build, OAuth-app,
        # incoming-mail, agent, feature-flag and workspace tokens, and legacy runner
        # registration tokens; newer ones end in a routing suffix like `.01.0abc1def2`.
        rf"{_START}(?P<s>(?:(?:glpat|gldt|glrt|glptt|glft|glsoat|glcbt|gloas|glimt|glagent|glffct|glwt)-"
        rf"|GR1348941)[{_B64URL}]{{20,}}(?:\.[0-9a-z]{{2}}\.[0-9a-z]{{7,9}})?){_END}",
    ),
    _prefixed(
        "slack_token",
        "a Slack token",
        rf"{_START}(?P<s>(?:xoxe\.)?(?:xox[abposre]|xapp)-[0-9A-Za-z][0-9A-Za-z\-]{{14,}}){_END}",
        test=lambda token: looks_random(token) and any(c.isdigit() for c in token),
    ),
    _prefixed(
        "slack_webhook_url",
        "a Slack webhook URL",
        r"(?P<s>(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_\-]+/[A-Za-z0-9_\-/]{8,})",
    ),
    _prefixed(
        "stripe_key",
        "a Stripe secret or restricted key",
        rf"{_ALNUM_START}(?P<s>[rs]k_(?:live|test)_[0-9A-Za-z]{{16,}}){_ALNUM_END}",
    ),
    _prefixed(
        "stripe_webhook_secret",
        "a Stripe webhook signing secret",
        rf"{_ALNUM_START}(?P<s>whsec_[0-9A-Za-z]{{24,}}){_ALNUM_END}",
    ),
    _prefixed(
        "anthropic_key", "an Anthropic API key", rf"{_START}(?P<s>sk-ant-[{_B64URL}]{{32,}}){_END}"
    ),
    _prefixed(
        "openai_key",
        "an OpenAI-style API key (sk-…)",
        rf"{_START}(?P<s>sk-(?!ant-)(?:(?:proj|svcacct|admin|None)-)?[{_B64URL}]{{20,}}){_END}",
        test=_openai_body_is_random,
    ),
    _prefixed(
        "huggingface_token",
        "a Hugging Face access token",
        rf"{_ALNUM_START}(?P<s>hf_[A-Za-z0-9]{{30,}}){_ALNUM_END}",
        test=lambda token: looks_random(token) and {"lower", "upper"} <= char_classes(token),
    ),
    _prefixed("npm_token", "an npm access token", rf"{_ALNUM_START}(?P<s>npm_[A-Za-z0-9]{{36}}){_ALNUM_END}"),
    _prefixed("pypi_token", "a PyPI API token", rf"{_START}(?P<s>pypi-AgE[{_B64URL}]{{50,}}){_END}"),
    _prefixed(
        "sendgrid_key",
        "a SendGrid API key",
        rf"(?<![{_B64URL}.])(?P<s>SG\.[{_B64URL}]{{22}}\.[{_B64URL}]{{43}}){_END}",
    ),
    Rule(
        "url_password",
        "a password inside a URL",
        re.compile(
            r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]{1,30}://[^\s:/?#@\[\]\"'<>]*:"
            # Greedy up to the last `@` before the host: unencoded `@` in passwords is common.
            r"(?P<s>[^\s/?#\"'<>]+)@(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~%\-]+)"
        ),
        _url_password,
    ),
    ASSIGNED_SECRET,
)


def _overlaps(span: Span, taken: list[Span]) -> bool:
    return any(span[0] < end and start < span[1] for start, end in taken)


def find_secrets(text: str) -> list[SecretMatch]:
    """Every secret in the text, ordered by start; overlapping matches go to the earlier rule."""
    found: list[SecretMatch] = []
    taken: list[Span] = []
    for rule in RULES:
        if rule is ASSIGNED_SECRET and not _NAME_HINT.search(text):
            continue  # the generic rule is the slow one; most texts name no secret at all
        for span in rule.spans(text):
            if not _overlaps(span, taken):
                taken.append(span)
                found.append(SecretMatch(rule.name, rule.description, *span))
    return sorted(found, key=lambda match: match.start)
