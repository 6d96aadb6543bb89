"""Three REST routes each of GitHub and GitLab: open an issue, comment on it, close or
reopen it. One code path for both; a kind only says where the routes are and how the
token travels."""

from __future__ import annotations

import email.utils
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from urllib.parse import quote, urlsplit

import httpx

KINDS = ("github", "gitlab")
# GitLab refuses longer titles; GitHub documents no limit but a title is a line, not a page.
MAX_TITLE_CHARS = 255
# GitHub: "otherwise, wait for at least one minute" after a secondary rate limit.
SECONDARY_RATE_LIMIT_WAIT = 60.0


@dataclass(frozen=True)
class TrackerConfig:
    kind: str  # "github" | "gitlab"
    base_url: str  # "https://api.github.com", or a GitLab's root such as "https://gitlab.example.com"
    project: str  # "owner/repo" on GitHub; "group/sub/project" or a numeric id on GitLab
    token: str = field(repr=False)  # never in a repr, an exception message or a log line
    labels: tuple[str, ...] = ("mnemo", "capability-gap")
    timeout: float = 10.0  # seconds, for each of connect, read, write


@dataclass(frozen=True)
class OpenedIssue:
    url: str  # the issue's page: GitHub's html_url, GitLab's web_url
    number: int  # GitHub's number, GitLab's iid (the number people see)
    kind: str


class TrackerError(Exception):
    """A tracker call failed. `retryable` says whether trying again can help (a timeout, a
    lost connection, a rate limit, a 5xx) and `retry_after` how many seconds to wait first
    when the tracker said so; `status` is the HTTP status when there was an answer."""

    def __init__(self, message: str, *, retryable: bool, status: int | None = None,
                 retry_after: float | None = None):
        super().__init__(message)
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after


def open_issue(config: TrackerConfig, *, title: str, body: str,
               transport: httpx.BaseTransport | None = None) -> OpenedIssue:
    """Open an issue labelled with config.labels. A retryable error after the request was
    sent (a timeout, a 5xx) may still have opened it: the caller decides whether to look."""
    title = " ".join(title.split())
    if not title:
        raise TrackerError("an issue needs a title", retryable=False)
    if len(title) > MAX_TITLE_CHARS:
        title = title[:MAX_TITLE_CHARS - 1] + "…"
    route = _project_route(config) + "/issues"
    if config.kind == "github":
        answer = _send(config, "POST", route, {"title": title, "body": body, "labels": list(config.labels)},
                       transport)
        return OpenedIssue(url=_field(answer, "html_url", str), number=_field(answer, "number", int), kind="github")
    answer = _send(config, "POST", route, {"title": title, "description": body, "labels": ",".join(config.labels)},
                   transport)
    return OpenedIssue(url=_field(answer, "web_url", str), number=_field(answer, "iid", int), kind="gitlab")


def check(config: TrackerConfig, *, transport: httpx.BaseTransport | None = None) -> None:
    """Read the project (GitHub's repository, GitLab's project): a test of the base URL,
    the project and the token that opens nothing. Raises TrackerError as the others do."""
    _send(config, "GET", _project_route(config), None, transport)


def comment(config: TrackerConfig, *, number: int, body: str, transport: httpx.BaseTransport | None = None) -> None:
    """Add a comment (a GitLab note) to issue `number`."""
    tail = "/comments" if config.kind == "github" else "/notes"
    _send(config, "POST", _issue_route(config, number) + tail, {"body": body}, transport)


def set_state(config: TrackerConfig, *, number: int, open: bool,  # noqa: A002 - the name the callers agreed
              transport: httpx.BaseTransport | None = None) -> None:
    """Reopen issue `number` (open=True) or close it (open=False)."""
    if config.kind == "github":
        payload = {"state": "open" if open else "closed"}
        _send(config, "PATCH", _issue_route(config, number), payload, transport)
    else:
        payload = {"state_event": "reopen" if open else "close"}
        _send(config, "PUT", _issue_route(config, number), payload, transport)


def validate(config: TrackerConfig) -> None:
    """Raise TrackerError (not retryable) when the settings cannot work: the kind, the base
    URL, the project's form, the token's characters. No request is made."""
    _project_route(config)


# --- routes -------------------------------------------------------------------------------

def _validate(config: TrackerConfig) -> None:
    if config.kind not in KINDS:
        raise TrackerError(f"unknown tracker kind {config.kind!r} (github | gitlab)", retryable=False)
    parts = urlsplit(config.base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise TrackerError(f"the {config.kind} base URL must be an http(s) URL", retryable=False)
    if parts.username or parts.password or parts.query or parts.fragment:
        # Credentials in a URL end up in logs and error messages; the token has its own field.
        raise TrackerError(f"the {config.kind} base URL must hold no credentials, query or fragment",
                           retryable=False)
    if not config.token or not config.token.strip():
        raise TrackerError(f"the {config.kind} tracker needs a token", retryable=False)
    if not (config.token.isascii() and config.token.isprintable()) or any(c.isspace() for c in config.token):
        # Tokens are printable ASCII; anything else fails in the header's encoding, whose
        # error message would quote the token.
        raise TrackerError(f"the {config.kind} token must be printable ASCII without spaces", retryable=False)
    if any(not label.strip() for label in config.labels):
        raise TrackerError("a label cannot be empty", retryable=False)
    if config.kind == "gitlab" and any("," in label for label in config.labels):
        raise TrackerError("a GitLab label cannot hold a comma (GitLab takes labels comma-separated)",
                           retryable=False)
    if not isinstance(config.timeout, int | float) or config.timeout <= 0:
        raise TrackerError("the tracker timeout must be a positive number of seconds", retryable=False)


def _project_route(config: TrackerConfig) -> str:
    _validate(config)
    project = config.project.strip().strip("/")
    if config.kind == "github":
        owner, _, repo = project.partition("/")
        if not owner or not repo or "/" in repo:
            raise TrackerError(f"a GitHub project is 'owner/repo', not {config.project!r}", retryable=False)
        return f"/repos/{quote(owner, safe='')}/{quote(repo, safe='')}"
    if not project:
        raise TrackerError("a GitLab project is a path such as 'group/project' or a numeric id", retryable=False)
    # GitLab: "the ID or URL-encoded path of the project" — group%2Fsub%2Fproject.
    return f"/api/v4/projects/{quote(project, safe='')}"


def _issue_route(config: TrackerConfig, number: int) -> str:
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        raise TrackerError(f"an issue number is a positive integer, not {number!r}", retryable=False)
    return f"{_project_route(config)}/issues/{number}"


def _headers(config: TrackerConfig) -> dict[str, str]:
    headers = {"User-Agent": "Mnemo"}  # GitHub refuses requests without a User-Agent
    if config.kind == "github":
        headers |= {
            "Authorization": f"Bearer {config.token}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
        }
    else:
        headers["PRIVATE-TOKEN"] = config.token
    return headers


# --- one request ----------------------------------------------------------------------------

def _send(config: TrackerConfig, method: str, route: str, payload: dict | None,
          transport: httpx.BaseTransport | None) -> dict:
    name = "GitHub" if config.kind == "github" else "GitLab"
    try:
        with httpx.Client(base_url=config.base_url.rstrip("/"), headers=_headers(config),
                          timeout=config.timeout, transport=transport) as client:
            response = client.request(method, route, json=payload)
    except httpx.TimeoutException as exc:
        raise TrackerError(f"{name} did not answer {method} {route} within {config.timeout} s",
                           retryable=True) from exc
    except httpx.TransportError as exc:
        raise TrackerError(_scrub(f"{name} unreachable for {method} {route}: {type(exc).__name__}: {exc}", config),
                           retryable=True) from exc
    status = response.status_code
    if status >= 400:
        retry_after = _retry_after(response)
        detail = _scrub(_error_detail(response), config)
        message = f"{name} answered {status} to {method} {route}" + (f": {detail}" if detail else "")
        if status == 429 or status >= 500:
            raise TrackerError(message, retryable=True, status=status, retry_after=retry_after)
        if status == 403 and config.kind == "github":
            # GitHub's rate limits answer 403 as often as 429: "x-ratelimit-remaining: 0",
            # a Retry-After, or a message naming the secondary rate limit.
            if response.headers.get("x-ratelimit-remaining") == "0":
                reset = _epoch_seconds_from_now(response.headers.get("x-ratelimit-reset"))
                raise TrackerError(message, retryable=True, status=status,
                                   retry_after=retry_after if retry_after is not None else reset)
            if retry_after is not None or "secondary rate limit" in detail.lower():
                raise TrackerError(message, retryable=True, status=status,
                                   retry_after=retry_after if retry_after is not None else SECONDARY_RATE_LIMIT_WAIT)
        raise TrackerError(message, retryable=False, status=status)
    try:
        answer = response.json()
    except ValueError:
        raise TrackerError(f"{name} answered {status} to {method} {route} with no JSON", retryable=False,
                           status=status) from None
    if not isinstance(answer, dict):
        raise TrackerError(f"{name} answered {status} to {method} {route} with JSON that is not an object",
                           retryable=False, status=status)
    return answer


def _field(answer: dict, key: str, kind: type):
    value = answer.get(key)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise TrackerError(f"the tracker's answer has no {key}", retryable=False)
    return value


def _error_detail(response: httpx.Response) -> str:
    """GitHub's "message" (with its validation errors), GitLab's "message" or "error"."""
    try:
        answer = response.json()
    except ValueError:
        return " ".join(response.text[:200].split())
    if not isinstance(answer, dict):
        return ""
    detail = answer.get("message") or answer.get("error") or ""
    if isinstance(detail, dict | list):
        detail = str(detail)
    errors = answer.get("errors")
    if errors:
        detail = f"{detail} {errors}"
    return " ".join(str(detail)[:200].split())


def _scrub(text: str, config: TrackerConfig) -> str:
    """A tracker, a proxy or an exception may echo the token back: it never goes further."""
    return text.replace(config.token, "***") if config.token else text


def _retry_after(response: httpx.Response) -> float | None:
    """Retry-After in seconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3)."""
    value = (response.headers.get("retry-after") or "").strip()
    if not value:
        return None
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


def _epoch_seconds_from_now(value: str | None) -> float | None:
    try:
        return max(0.0, float(value) - time.time()) if value else None
    except ValueError:
        return None
