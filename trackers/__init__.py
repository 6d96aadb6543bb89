"""Issue-tracker clients for capability-gap TODOs (issue 18): when a gap reaches its
threshold, Mnemo opens an issue in the team's GitHub or GitLab with the evidence trail,
comments on it, and closes or reopens it; `check` reads the project to test a
workspace's settings.

Pure of Django (httpx and the standard library only, the "pure" import contract), so the
routes and the Markdown are tested against a local server in milliseconds. Nothing here
retries: a TrackerError says whether retrying can help (and after how long), and the
caller's task decides."""

from trackers.body import MAX_BODY_CHARS, EvidenceLine, issue_body
from trackers.clients import OpenedIssue, TrackerConfig, TrackerError, check, comment, open_issue, set_state, validate

__all__ = [
    "MAX_BODY_CHARS",
    "EvidenceLine",
    "OpenedIssue",
    "TrackerConfig",
    "TrackerError",
    "check",
    "comment",
    "issue_body",
    "open_issue",
    "set_state",
    "validate",
]
