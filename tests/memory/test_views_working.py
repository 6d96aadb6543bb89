"""The working memory and scratchpad pages (issue 21 part 4): lists by the agent that last
wrote them, a session's focus and what left it, a scratchpad's state and checkpoints with
the changes between two of them; contents redacted on read (reviewers may ask for them as
stored, viewers may not); reviewers go back to a checkpoint after a confirmation; bad
parameters never a 5xx; outsiders get 404."""

from __future__ import annotations

import json

import pytest

from core.models import AuditEvent
from core.services import Actor
from entities.models import Entity
from memory.models import Scratchpad, ScratchpadCheckpoint, WorkingSession
from memory.services import FocusItem, scratchpad_checkpoint, scratchpad_put, working_memory_put

pytestmark = pytest.mark.django_db

EMAIL = "priya.raman@example.com"


@pytest.fixture
def bot_key(workspace, make_key):
    bot = Entity.objects.create(workspace=workspace, kind="agent", name="triage-bot")
    key, _ = make_key(workspace, name="triage")
    key.agent = bot
    key.save()
    return key


def _session(workspace, key: str, actor, items=None, capacity=None):
    items = items or [FocusItem(content=f"Call {EMAIL} about the invoice", attention=0.9, key="call"),
                      FocusItem(content="Draft the release notes", attention=0.4, key="notes")]
    session, _ = working_memory_put(workspace=workspace, session_key=key, items=items, actor=actor,
                                    capacity=capacity, task=f"Answer the ticket from {EMAIL}")
    return session


def _pad(workspace, actor, task="ticket-42"):
    pad = scratchpad_put(workspace=workspace, task=task, raw_state=json.dumps({"step": 1, "contact": EMAIL}), actor=actor)
    scratchpad_checkpoint(scratchpad=pad, actor=actor, label="started")
    pad = scratchpad_put(workspace=workspace, task=task, raw_state=json.dumps({"step": 2, "contact": EMAIL,
                                                                               "done": ["triage"]}), actor=actor)
    scratchpad_checkpoint(scratchpad=pad, actor=actor, label="triaged")
    return scratchpad_put(workspace=workspace, task=task, raw_state=json.dumps({"step": 3, "contact": EMAIL}), actor=actor)


def test_the_lists_show_who_wrote_each_row_and_filter_by_agent(client, viewer, workspace, bot_key):
    by_bot = _session(workspace, "bot-session", Actor.for_api_key(bot_key))
    by_person = _session(workspace, "person-session", Actor.for_user(viewer))
    pad = _pad(workspace, Actor.for_api_key(bot_key))
    client.force_login(viewer)
    html = client.get("/w/acme/memories/working/").content.decode()
    assert f'id="session-{by_bot.pk}"' in html and f'id="session-{by_person.pk}"' in html
    assert f'href="/w/acme/entities/{bot_key.agent_id}/">triage-bot</a>' in html and "user:vera" in html
    assert "Answer the ticket from [email]" in html and EMAIL not in html
    html = client.get(f"/w/acme/memories/working/?agent={bot_key.agent_id}").content.decode()
    assert f'id="session-{by_bot.pk}"' in html and f'id="session-{by_person.pk}"' not in html
    html = client.get("/w/acme/memories/scratchpads/?q=ticket").content.decode()
    assert f'id="scratchpad-{pad.pk}"' in html and ">2<" in html  # two checkpoints
    partial = client.get("/w/acme/memories/scratchpads/", headers={"HX-Request": "true"}).content.decode()
    assert partial.lstrip().startswith('<div id="rows">')


def test_empty_states(client, viewer, workspace):
    client.force_login(viewer)
    assert "No working memory yet" in client.get("/w/acme/memories/working/").content.decode()
    assert "No scratchpads yet" in client.get("/w/acme/memories/scratchpads/").content.decode()
    assert "No session matches" in client.get("/w/acme/memories/working/?q=nothing").content.decode()


@pytest.mark.parametrize("query", ["agent=abc", "agent=99999999999999999999999", "agent=²", "agent=-1", "page=x",
                                   "q=" + "y" * 3000, "redact=maybe", "from=1&to=2", "from=x&to=current",
                                   "from=99999999999999999999&to=current", "to=current"])
def test_bad_query_parameters_are_never_a_5xx(client, viewer, workspace, query):
    session = _session(workspace, "s1", Actor.for_user(viewer))
    pad = _pad(workspace, Actor.for_user(viewer))
    client.force_login(viewer)
    for path in ("/w/acme/memories/working/", "/w/acme/memories/scratchpads/",
                 f"/w/acme/memories/working/{session.pk}/", f"/w/acme/memories/scratchpads/{pad.pk}/"):
        assert client.get(f"{path}?{query}").status_code == 200, (path, query)
    if query.startswith("agent=abc"):
        assert "Ignored (not a value this page knows): agent" in client.get(
            f"/w/acme/memories/working/?{query}").content.decode()


def test_the_lists_paginate(client, viewer, workspace):
    for i in range(51):
        scratchpad_put(workspace=workspace, task=f"task-{i}", raw_state="{}", actor=Actor.for_user(viewer))
    client.force_login(viewer)
    first = client.get("/w/acme/memories/scratchpads/").content.decode()
    second = client.get("/w/acme/memories/scratchpads/?page=2").content.decode()
    assert first.count('id="scratchpad-') == 50 and second.count('id="scratchpad-') == 1


def test_a_session_shows_its_focus_and_what_left_it_redacted(client, viewer, teammate, workspace):
    session = _session(workspace, "s1", Actor.for_user(viewer), capacity=1)  # "notes" leaves focus
    client.force_login(viewer)
    html = client.get(f"/w/acme/memories/working/{session.pk}/").content.decode()
    assert "Call [email] about the invoice" in html and EMAIL not in html
    assert "Draft the release notes" in html and "Left focus (1)" in html and "working_memory.put" in html
    assert "Show as stored" not in html
    assert EMAIL not in client.get(f"/w/acme/memories/working/{session.pk}/?redact=0").content.decode()  # viewers: never
    client.force_login(teammate)
    html = client.get(f"/w/acme/memories/working/{session.pk}/").content.decode()
    assert "Show as stored" in html and EMAIL not in html
    assert EMAIL in client.get(f"/w/acme/memories/working/{session.pk}/?redact=0").content.decode()


def test_a_scratchpad_shows_its_state_checkpoints_and_a_diff(client, viewer, workspace):
    pad = _pad(workspace, Actor.for_user(viewer))
    started, triaged = ScratchpadCheckpoint.objects.filter(scratchpad=pad).order_by("id")
    client.force_login(viewer)
    html = client.get(f"/w/acme/memories/scratchpads/{pad.pk}/").content.decode()
    assert "&quot;step&quot;: 3" in html and "&quot;contact&quot;: &quot;[email]&quot;" in html and EMAIL not in html
    assert f"?from={started.pk}&amp;to={triaged.pk}" in html  # each checkpoint against the one before
    assert "Go back to it" not in html  # viewers only read
    diff = client.get(f"/w/acme/memories/scratchpads/{pad.pk}/?from={started.pk}&to={triaged.pk}").content.decode()
    assert '<span class="del">-  &quot;step&quot;: 1,</span>' in diff
    assert '<span class="add">+  &quot;step&quot;: 2,</span>' in diff and EMAIL not in diff
    same = client.get(f"/w/acme/memories/scratchpads/{pad.pk}/?from={started.pk}&to={started.pk}").content.decode()
    assert "No change: the two states are the same" in same


def test_a_checkpoint_of_another_scratchpad_is_not_compared(client, viewer, workspace):
    pad, other = _pad(workspace, Actor.for_user(viewer)), _pad(workspace, Actor.for_user(viewer), task="other")
    foreign = ScratchpadCheckpoint.objects.filter(scratchpad=other).first()
    client.force_login(viewer)
    response = client.get(f"/w/acme/memories/scratchpads/{pad.pk}/?from={foreign.pk}&to=current")
    assert response.status_code == 200 and 'id="diff"' not in response.content.decode()
    assert "Ignored the comparison" in response.content.decode()


def test_a_reviewer_goes_back_to_a_checkpoint_after_confirming(client, teammate, workspace):
    pad = _pad(workspace, Actor.for_user(teammate))
    started = ScratchpadCheckpoint.objects.filter(scratchpad=pad, label="started").get()
    client.force_login(teammate)
    confirm = client.get(f"/w/acme/memories/scratchpads/{pad.pk}/restore/{started.pk}/")
    assert confirm.status_code == 200 and Scratchpad.objects.get(pk=pad.pk).version == 3
    response = client.post(f"/w/acme/memories/scratchpads/{pad.pk}/restore/{started.pk}/", {"keep": "1"})
    assert response.status_code == 302
    pad.refresh_from_db()
    assert json.loads(pad.state)["step"] == 1 and pad.version == 4
    kept = ScratchpadCheckpoint.objects.get(scratchpad=pad, label=f"before going back to {started.pk}")
    assert json.loads(kept.state)["step"] == 3
    assert AuditEvent.objects.filter(verb="scratchpad.restore", actor_label="user:tomas").exists()


def test_viewers_cannot_go_back_to_a_checkpoint(client, viewer, workspace):
    pad = _pad(workspace, Actor.for_user(viewer))
    checkpoint = ScratchpadCheckpoint.objects.filter(scratchpad=pad).first()
    client.force_login(viewer)
    assert client.get(f"/w/acme/memories/scratchpads/{pad.pk}/restore/{checkpoint.pk}/").status_code == 403
    assert client.post(f"/w/acme/memories/scratchpads/{pad.pk}/restore/{checkpoint.pk}/").status_code == 403
    assert Scratchpad.objects.get(pk=pad.pk).version == 3


def test_outsiders_get_404_everywhere(client, outsider, teammate, workspace, other_workspace):
    session, pad = _session(workspace, "s1", Actor.for_user(teammate)), _pad(workspace, Actor.for_user(teammate))
    checkpoint = ScratchpadCheckpoint.objects.filter(scratchpad=pad).first()
    client.force_login(outsider)
    for path in ("/w/acme/memories/working/", "/w/acme/memories/scratchpads/", f"/w/acme/memories/working/{session.pk}/",
                 f"/w/acme/memories/scratchpads/{pad.pk}/", f"/w/globex/memories/working/{session.pk}/",
                 f"/w/globex/memories/scratchpads/{pad.pk}/",
                 f"/w/globex/memories/scratchpads/{pad.pk}/restore/{checkpoint.pk}/"):
        assert client.get(path).status_code == 404, path
    assert client.post(f"/w/globex/memories/scratchpads/{pad.pk}/restore/{checkpoint.pk}/").status_code == 404
    # A checkpoint of one scratchpad is not restorable through another's page.
    client.force_login(teammate)
    other = _pad(workspace, Actor.for_user(teammate), task="other")
    assert client.get(f"/w/acme/memories/scratchpads/{other.pk}/restore/{checkpoint.pk}/").status_code == 404
    assert WorkingSession.objects.count() == 1 and Scratchpad.objects.get(pk=pad.pk).version == 3


def test_checkpoints_paginate_and_each_compares_with_the_one_before(client, viewer, workspace):
    pad = scratchpad_put(workspace=workspace, task="long", raw_state='{"n": 0}', actor=Actor.for_user(viewer))
    for n in range(21):
        pad = scratchpad_put(workspace=workspace, task="long", raw_state=json.dumps({"n": n + 1}),
                             actor=Actor.for_user(viewer))
        scratchpad_checkpoint(scratchpad=pad, actor=Actor.for_user(viewer), label=f"cp{n}")
    oldest, second = ScratchpadCheckpoint.objects.filter(scratchpad=pad).order_by("id")[:2]
    client.force_login(viewer)
    first = client.get(f"/w/acme/memories/scratchpads/{pad.pk}/").content.decode()
    last = client.get(f"/w/acme/memories/scratchpads/{pad.pk}/?page=2").content.decode()
    assert first.count('id="checkpoint-') == 20 and last.count('id="checkpoint-') == 1
    # The oldest on page 1 compares with the one on page 2, across the page boundary.
    assert f"?from={oldest.pk}&amp;to={second.pk}" in first and f"?from={oldest.pk}&amp;to=current" in last


def test_the_audit_log_links_sessions_and_scratchpads_to_their_pages(client, teammate, workspace):
    session, pad = _session(workspace, "s1", Actor.for_user(teammate)), _pad(workspace, Actor.for_user(teammate))
    client.force_login(teammate)
    html = client.get("/w/acme/audit/").content.decode()
    assert f'href="/w/acme/memories/working/{session.pk}/"' in html and f'href="/w/acme/memories/scratchpads/{pad.pk}/"' in html


def test_a_diff_of_two_long_states_is_cut_and_says_so(client, viewer, workspace):
    actor = Actor.for_user(viewer)
    pad = scratchpad_put(workspace=workspace, task="big", raw_state=json.dumps({"rows": list(range(6000))}), actor=actor)
    scratchpad_checkpoint(scratchpad=pad, actor=actor, label="before")
    scratchpad_put(workspace=workspace, task="big", raw_state=json.dumps({"rows": list(range(1, 6001))}), actor=actor)
    checkpoint = ScratchpadCheckpoint.objects.get(scratchpad=pad)
    client.force_login(viewer)
    html = client.get(f"/w/acme/memories/scratchpads/{pad.pk}/?from={checkpoint.pk}&to=current").content.decode()
    assert '<span class="del">-    0,</span>' in html and "only the changes in their first lines are shown" in html


def test_a_long_state_is_shown_cut_and_an_address_at_the_cut_stays_masked(client, viewer, workspace):
    from memory.views_working import SHOWN_CHARS

    # Indented, the state reads '{\n  "a": "xx…x priya@…': the address starts 5 characters
    # before the cut.
    filler = "x" * (SHOWN_CHARS - 16)
    state = json.dumps({"a": f"{filler} {EMAIL}", "rows": [f"row {i} of a long state" for i in range(20000)]})
    pad = scratchpad_put(workspace=workspace, task="huge", raw_state=state, actor=Actor.for_user(viewer))
    client.force_login(viewer)
    html = client.get(f"/w/acme/memories/scratchpads/{pad.pk}/").content.decode()
    assert "The state is long: only its beginning is shown" in html
    assert "priya" not in html and "[emai" in html
