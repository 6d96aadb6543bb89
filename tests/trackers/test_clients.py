"""The tracker clients against a local server speaking GitHub's and GitLab's routes
(tests/trackers/tracker_server.py): open, comment, close, reopen; the errors and whether
retrying can help; the token never shown. No database, no network beyond 127.0.0.1."""

from __future__ import annotations

import json
import socket
import traceback
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime

import pytest

import trackers
from tests.trackers.tracker_server import GITHUB_PROJECT, GITLAB_PROJECT, GITLAB_PROJECT_ID, TOKEN, TrackerServer
from trackers import OpenedIssue, TrackerConfig, TrackerError


@pytest.fixture
def server():
    server = TrackerServer()
    yield server
    server.close()


def _config(server: TrackerServer, tracker: str, **overrides) -> TrackerConfig:
    values = {
        "github": {"kind": "github", "base_url": server.url, "project": GITHUB_PROJECT},
        "gitlab": {"kind": "gitlab", "base_url": server.url + "/gitlab/", "project": GITLAB_PROJECT},
    }[tracker]
    return TrackerConfig(**{**values, "token": TOKEN, "timeout": 2.0, **overrides})


def _opened(server: TrackerServer, kind: str):
    return server.github if kind == "github" else server.gitlab


@pytest.mark.parametrize("kind", ["github", "gitlab"])
def test_it_opens_comments_on_closes_and_reopens_an_issue(server, kind):
    config = _config(server, kind)

    issue = trackers.open_issue(config, title="Agents keep asking for  the\nrefund policy",
                                body="**Need:** the refund policy")

    assert issue == OpenedIssue(url=issue.url, number=1, kind=kind)
    assert issue.url.endswith("/issues/1")
    stored = _opened(server, kind)[1]
    assert stored.title == "Agents keep asking for the refund policy"
    assert stored.body == "**Need:** the refund policy"
    assert stored.labels == ["mnemo", "capability-gap"]

    trackers.comment(config, number=issue.number, body="Seen 3 more times this week.")
    trackers.set_state(config, number=issue.number, open=False)
    assert stored.comments == ["Seen 3 more times this week."]
    assert stored.state == "closed"

    trackers.set_state(config, number=issue.number, open=True)
    assert stored.state == ("open" if kind == "github" else "opened")


def test_github_gets_the_documented_routes_headers_and_json(server):
    config = _config(server, "github", labels=("mnemo", "gap, billing"))

    trackers.open_issue(config, title="A gap", body="evidence")
    trackers.set_state(config, number=1, open=False)
    trackers.comment(config, number=1, body="closed: answered in the handbook")

    create, close, note = server.requests
    assert (create["method"], create["path"]) == ("POST", "/repos/acme/agents/issues")
    assert create["json"] == {"title": "A gap", "body": "evidence", "labels": ["mnemo", "gap, billing"]}
    assert create["content_type"] == "application/json"
    assert create["headers"]["Authorization"] == f"Bearer {TOKEN}"
    assert create["headers"]["X-GitHub-Api-Version"] == "2022-11-28"
    assert (close["method"], close["path"], close["json"]) == ("PATCH", "/repos/acme/agents/issues/1", {"state": "closed"})
    assert (note["method"], note["path"]) == ("POST", "/repos/acme/agents/issues/1/comments")


def test_gitlab_gets_the_project_path_url_encoded_and_labels_comma_separated(server):
    config = _config(server, "gitlab")

    trackers.open_issue(config, title="A gap", body="evidence")
    trackers.comment(config, number=1, body="still asked")
    trackers.set_state(config, number=1, open=False)

    create, note, close = server.requests
    # GitLab: "the ID or URL-encoded path of the project" — every slash of group/sub/project.
    assert (create["method"], create["path"]) == ("POST", "/gitlab/api/v4/projects/acme%2Fplatform%2Fagents/issues")
    assert create["json"] == {"title": "A gap", "description": "evidence", "labels": "mnemo,capability-gap"}
    assert create["headers"]["PRIVATE-TOKEN"] == TOKEN
    assert "Authorization" not in create["headers"]
    assert (note["path"], note["json"]) == ("/gitlab/api/v4/projects/acme%2Fplatform%2Fagents/issues/1/notes",
                                            {"body": "still asked"})
    assert (close["method"], close["json"]) == ("PUT", {"state_event": "close"})


def test_gitlab_takes_a_numeric_project_id(server):
    issue = trackers.open_issue(_config(server, "gitlab", project=GITLAB_PROJECT_ID), title="A gap", body="")

    assert server.requests[0]["path"] == f"/gitlab/api/v4/projects/{GITLAB_PROJECT_ID}/issues"
    assert issue.number == 1 and server.gitlab[1].title == "A gap"


def test_a_long_title_is_cut_to_what_gitlab_accepts(server):
    trackers.open_issue(_config(server, "gitlab"), title="x" * 400, body="")

    assert len(server.gitlab[1].title) == 255 and server.gitlab[1].title.endswith("…")


# --- errors ----------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["github", "gitlab"])
def test_a_wrong_token_is_a_401_that_retrying_cannot_fix(server, kind):
    config = _config(server, kind, token="not-the-token")

    with pytest.raises(TrackerError) as error:
        trackers.open_issue(config, title="A gap", body="evidence")

    assert (error.value.status, error.value.retryable) == (401, False)
    assert "401" in str(error.value)
    assert not _opened(server, kind)


@pytest.mark.parametrize("kind", ["github", "gitlab"])
def test_an_unknown_project_or_issue_is_a_404_that_retrying_cannot_fix(server, kind):
    with pytest.raises(TrackerError) as unknown_project:
        trackers.open_issue(_config(server, kind, project="acme/elsewhere"), title="A gap", body="")
    with pytest.raises(TrackerError) as unknown_issue:
        trackers.comment(_config(server, kind), number=77, body="hello")

    for error in (unknown_project, unknown_issue):
        assert (error.value.status, error.value.retryable) == (404, False)


def test_a_validation_failure_is_a_422_with_githubs_message(server):
    server.fail_next(422, body={"message": "Validation Failed",
                                "errors": [{"resource": "Issue", "field": "title", "code": "missing_field"}]})

    with pytest.raises(TrackerError) as error:
        trackers.open_issue(_config(server, "github"), title="A gap", body="")

    assert (error.value.status, error.value.retryable) == (422, False)
    assert "Validation Failed" in str(error.value) and "missing_field" in str(error.value)


@pytest.mark.parametrize("kind", ["github", "gitlab"])
def test_a_429_is_retryable_after_the_seconds_the_tracker_asks_for(server, kind):
    server.fail_next(429, headers={"Retry-After": "37"})

    with pytest.raises(TrackerError) as error:
        trackers.comment(_config(server, kind), number=1, body="hello")

    assert (error.value.status, error.value.retryable, error.value.retry_after) == (429, True, 37.0)


def test_a_retry_after_given_as_a_date_becomes_seconds(server):
    later = datetime.now(timezone.utc) + timedelta(seconds=120)
    server.fail_next(503, headers={"Retry-After": format_datetime(later, usegmt=True)})

    with pytest.raises(TrackerError) as error:
        trackers.open_issue(_config(server, "gitlab"), title="A gap", body="")

    assert error.value.retryable and error.value.status == 503
    assert 100 <= error.value.retry_after <= 121


@pytest.mark.parametrize("kind", ["github", "gitlab"])
def test_a_500_is_retryable(server, kind):
    server.fail_next(500, body="<html>Internal Server Error</html>")

    with pytest.raises(TrackerError) as error:
        trackers.set_state(_config(server, kind), number=1, open=False)

    assert (error.value.status, error.value.retryable, error.value.retry_after) == (500, True, None)


def test_githubs_rate_limit_answered_as_403_is_retryable_until_the_reset(server):
    reset = int(datetime.now(timezone.utc).timestamp()) + 600
    server.fail_next(403, headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(reset)},
                     body={"message": "API rate limit exceeded for user ID 1."})
    server.fail_next(403, body={"message": "You have exceeded a secondary rate limit. Please wait a few minutes."})
    server.fail_next(403, body={"message": "Resource not accessible by personal access token"})
    config = _config(server, "github")

    errors = []
    for _ in range(3):
        with pytest.raises(TrackerError) as error:
            trackers.open_issue(config, title="A gap", body="")
        errors.append(error.value)

    primary, secondary, forbidden = errors
    assert primary.retryable and 590 <= primary.retry_after <= 600
    assert secondary.retryable and secondary.retry_after == 60.0  # GitHub: "wait for at least one minute"
    assert not forbidden.retryable and forbidden.status == 403


@pytest.mark.parametrize("kind", ["github", "gitlab"])
def test_a_tracker_that_hangs_is_a_retryable_timeout(server, kind):
    server.hang_next(1.5)

    with pytest.raises(TrackerError) as error:
        trackers.open_issue(_config(server, kind, timeout=0.2), title="A gap", body="")

    assert error.value.retryable and error.value.status is None
    assert "within 0.2 s" in str(error.value)


def test_a_tracker_that_is_not_listening_is_retryable():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = TrackerConfig(kind="github", base_url=f"http://127.0.0.1:{port}", project=GITHUB_PROJECT, token=TOKEN)

    with pytest.raises(TrackerError) as error:
        trackers.open_issue(config, title="A gap", body="")

    assert error.value.retryable and error.value.status is None


def test_a_2xx_without_the_issue_fields_is_not_retryable(server):
    server.fail_next(201, body={"id": 5})
    server.fail_next(200, body="not json at all")

    for _ in range(2):
        with pytest.raises(TrackerError) as error:
            trackers.open_issue(_config(server, "github"), title="A gap", body="")
        assert not error.value.retryable


@pytest.mark.parametrize("overrides, words", [
    ({"kind": "jira"}, "unknown tracker kind"),
    ({"base_url": "ftp://tracker.example.com"}, "http(s) URL"),
    ({"base_url": "api.github.com"}, "http(s) URL"),
    ({"base_url": "https://user:pw@api.github.com"}, "no credentials"),
    ({"project": ""}, "'owner/repo'"),
    ({"project": "just-a-repo"}, "'owner/repo'"),
    ({"project": "a/b/c"}, "'owner/repo'"),
    ({"token": ""}, "needs a token"),
    ({"token": "séc-ret"}, "printable ASCII"),
    ({"token": "sec\nret"}, "printable ASCII"),
    ({"labels": ("mnemo", " ")}, "label cannot be empty"),
    ({"timeout": 0}, "positive number"),
])
def test_a_bad_configuration_is_refused_before_any_request(server, overrides, words):
    with pytest.raises(TrackerError) as error:
        trackers.open_issue(_config(server, "github", **overrides), title="A gap", body="")

    assert words in str(error.value)
    assert (error.value.retryable, error.value.status) == (False, None)
    assert server.requests == []


def test_gitlab_refuses_an_empty_project_and_a_label_with_a_comma(server):
    for overrides in ({"project": " / "}, {"labels": ("gap, billing",)}):
        with pytest.raises(TrackerError) as error:
            trackers.open_issue(_config(server, "gitlab", **overrides), title="A gap", body="")
        assert not error.value.retryable
    assert server.requests == []


@pytest.mark.parametrize("number", [0, -3, True, "7"])
def test_an_issue_number_must_be_a_positive_integer(server, number):
    with pytest.raises(TrackerError):
        trackers.comment(_config(server, "github"), number=number, body="hello")
    assert server.requests == []


def test_an_empty_title_is_refused(server):
    with pytest.raises(TrackerError):
        trackers.open_issue(_config(server, "github"), title=" \n ", body="")
    assert server.requests == []


# --- the token is never shown ------------------------------------------------------------------

def test_the_token_is_masked_in_the_configs_repr(server):
    config = _config(server, "gitlab")

    assert TOKEN not in repr(config) and TOKEN not in str(config)
    assert "token" not in repr(config)


@pytest.mark.parametrize("script", [
    lambda server: server.fail_next(401, body={"message": f"Bad credentials: {TOKEN}"}),
    lambda server: server.fail_next(422, body=f"invalid token {TOKEN}"),
    lambda server: server.fail_next(500, body={"error": TOKEN}),
    lambda server: server.hang_next(1.0),
])
@pytest.mark.parametrize("kind", ["github", "gitlab"])
def test_the_token_is_in_no_error_even_when_the_tracker_echoes_it(server, kind, script):
    script(server)

    with pytest.raises(TrackerError) as error:
        trackers.open_issue(_config(server, kind, timeout=0.2), title="A gap", body="")

    shown = [str(error.value), repr(error.value), "".join(traceback.format_exception(error.value)),
             json.dumps(vars(error.value), default=str)]
    assert all(TOKEN not in text for text in shown)


def test_the_token_is_in_no_error_about_the_configuration(server):
    with pytest.raises(TrackerError) as error:
        trackers.open_issue(_config(server, "gitlab", base_url="gopher://tracker"), title="A gap", body="")

    assert TOKEN not in str(error.value) and TOKEN not in repr(error.value)


@pytest.mark.parametrize("kind", ["github", "gitlab"])
def test_check_reads_the_project_and_opens_nothing(server, kind):
    trackers.check(_config(server, kind))
    assert server.requests[-1]["method"] == "GET" and server.github == {} and server.gitlab == {}
    with pytest.raises(TrackerError) as unknown:
        trackers.check(_config(server, kind, project="acme/nothing-here"))
    assert unknown.value.status == 404 and not unknown.value.retryable
    with pytest.raises(TrackerError) as refused:
        trackers.check(_config(server, kind, token="not-the-token"))
    assert refused.value.status == 401


def test_validate_refuses_settings_that_cannot_work_without_a_request(server):
    for bad in ({"kind": "bitbucket"}, {"base_url": "ftp://x"}, {"project": "no-slash"}, {"token": "has space"}):
        with pytest.raises(TrackerError) as refused:
            trackers.validate(_config(server, "github", **bad))
        assert not refused.value.retryable and TOKEN not in str(refused.value)
    trackers.validate(_config(server, "github"))
    assert server.requests == []
