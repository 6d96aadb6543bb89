"""The nightly decay job against the real database (issue 19 part 2): it archives what fell
under the threshold and nothing else, leaves identity, changes nothing when run twice the
same night, lands where one run would after being cut short, never touches another
workspace, and records its runs."""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta, timezone

import pytest

from core.models import AuditEvent, JobRun
from memory import decay
from memory.models import Memory
from memory.services import decay_reference_time, memories_decay
from memory.tasks import decay as decay_task

AS_OF = datetime(2026, 6, 1, tzinfo=timezone.utc)
HALF_LIVES = {"episodic": 30, "preference": 180, "fact": 365, "procedure": 1095, "identity": 3650, "censor": 3650}


def make(workspace, text, *, type="episodic", status="active", days_old=200, **extra) -> Memory:
    return Memory.objects.create(workspace=workspace, type=type, certainty="extracted", status=status, text=text,
                                 text_hash=hashlib.sha256(text.encode()).hexdigest(), source="test",
                                 created_at=AS_OF - timedelta(days=days_old), **extra)


def run(workspace, **kwargs) -> dict:
    return memories_decay(workspace_id=workspace.pk, as_of=AS_OF, half_lives=HALF_LIVES, archive_below=0.05, **kwargs)


@pytest.mark.django_db
def test_it_archives_what_fell_under_the_threshold_and_keeps_the_rest(workspace):
    pattern = make(workspace, "Ana and Bo often talk about races.", type="fact", days_old=1)
    old_episode = make(workspace, "Ana and Bo talked about the race.", consolidated_into=pattern)
    unkept_episode = make(workspace, "Bo talked about the weather.")  # no pattern keeps it: only weakens
    fresh_episode = make(workspace, "Ana booked the venue.", days_old=20)
    fact = make(workspace, "The staging database is db-2.", type="fact")
    identity = make(workspace, "Ana is the team lead.", type="identity", days_old=100_000)
    censor = make(workspace, "Never force-push main.", type="censor", days_old=100_000)
    waiting = make(workspace, "Bo might move to Lisbon.", status="candidate")
    counts = run(workspace)
    assert counts["decayed"] == 8 and counts["archived"] == 1 and counts["unfinished"] is False
    rows = {m.pk: m for m in Memory.objects.all()}
    assert rows[old_episode.pk].status == "archived" and rows[old_episode.pk].archived_reason == "decay"
    assert rows[old_episode.pk].strength == pytest.approx(0.5 ** (200 / 30))
    assert rows[unkept_episode.pk].status == "active" and rows[unkept_episode.pk].strength < 0.05
    assert rows[fresh_episode.pk].status == "active"
    assert rows[fresh_episode.pk].strength == pytest.approx(0.5 ** (20 / 30))
    assert rows[fact.pk].status == "active" and rows[fact.pk].strength == pytest.approx(0.5 ** (200 / 365))
    for kept in (identity, censor):  # weaker, never archived
        assert rows[kept.pk].status == "active" and rows[kept.pk].strength < 0.05
    assert rows[waiting.pk].status == "candidate" and rows[waiting.pk].strength < 0.05  # a person decides it
    assert all(m.strength_at == AS_OF for m in rows.values())
    audit = AuditEvent.objects.get(verb="memory.archive_decayed")
    assert audit.target_id == str(old_episode.pk) and audit.data["half_life_days"] == 30
    assert counts["memories"] == {"active": {"episodic": 2, "fact": 2, "identity": 1, "censor": 1},
                                  "archived": {"episodic": 1}, "candidate": {"episodic": 1}}


@pytest.mark.django_db
def test_reinforcement_and_use_keep_a_memory(workspace):
    confirmed = make(workspace, "Ana likes oat milk.", reinforcement_count=3, last_confirmed_at=AS_OF - timedelta(days=100))
    served = make(workspace, "Bo's dog is called Rex.", access_count=1, last_accessed_at=AS_OF - timedelta(days=2))
    run(workspace)
    confirmed.refresh_from_db()
    served.refresh_from_db()
    # Decayed from the last confirmation, with three confirmations tripling the half-life.
    assert confirmed.strength == pytest.approx(0.5 ** (100 / 90)) and confirmed.status == "active"
    assert served.strength == pytest.approx(0.5 ** (2 / decay.effective_half_life(30, accesses=1)))


@pytest.mark.django_db
def test_running_twice_the_same_night_changes_nothing(workspace):
    for i in range(5):
        make(workspace, f"Episode {i} about the launch.", days_old=40 * i)
    run(workspace)
    before = list(Memory.objects.order_by("pk").values_list("pk", "status", "strength", "strength_at", "updated_at"))
    again = run(workspace)
    assert again["decayed"] == 0 and again["archived"] == 0
    assert list(Memory.objects.order_by("pk").values_list("pk", "status", "strength", "strength_at",
                                                          "updated_at")) == before


@pytest.mark.django_db
def test_a_run_cut_short_is_finished_by_the_next_and_lands_where_one_run_would(workspace, other_workspace):
    for i in range(7):
        make(workspace, f"Note {i} on the budget.", days_old=15 * i, type="fact" if i % 2 else "episodic")
        make(other_workspace, f"Note {i} on the budget.", days_old=15 * i, type="fact" if i % 2 else "episodic")
    first = run(workspace, batch=2, max_rows=3)
    assert first["decayed"] == 3 and first["unfinished"] is True
    run(workspace, batch=2)
    memories_decay(workspace_id=other_workspace.pk, as_of=AS_OF, half_lives=HALF_LIVES, archive_below=0.05)
    cut = list(Memory.objects.filter(workspace=workspace).order_by("text").values_list("status", "strength"))
    whole = list(Memory.objects.filter(workspace=other_workspace).order_by("text").values_list("status", "strength"))
    assert cut == whole


@pytest.mark.django_db
def test_the_next_night_continues_from_the_last_step(workspace):
    memory = make(workspace, "The office moved to the third floor.", type="fact", days_old=10)
    run(workspace)
    memories_decay(workspace_id=workspace.pk, as_of=AS_OF + timedelta(days=30), half_lives=HALF_LIVES,
                   archive_below=0.05)
    memory.refresh_from_db()
    assert memory.strength == pytest.approx(0.5 ** (40 / 365))


@pytest.mark.django_db
def test_another_workspace_and_duplicates_are_untouched(workspace, other_workspace):
    theirs = make(other_workspace, "Globex ships on Fridays.")
    original = make(workspace, "Ana runs marathons.")
    duplicate = make(workspace, "Ana runs marathons!", status="archived", archived_reason="duplicate",
                     duplicate_of=original)
    run(workspace)
    theirs.refresh_from_db()
    duplicate.refresh_from_db()
    assert theirs.strength == 1.0 and theirs.strength_at is None and theirs.status == "active"
    assert duplicate.archived_reason == "duplicate" and duplicate.strength_at is None


def test_the_reference_time_is_the_start_of_the_utc_day():
    late = datetime(2026, 6, 1, 23, 59, tzinfo=timezone.utc)
    assert decay_reference_time(late) == decay_reference_time(datetime(2026, 6, 1, 0, 1, tzinfo=timezone.utc)) == AS_OF


@pytest.mark.django_db(transaction=True)
def test_the_task_records_one_run_per_workspace(workspace, other_workspace):
    make(workspace, "The old office was on Elm Street.", type="fact", days_old=2000)
    decay_task.apply(kwargs={"workspace_id": workspace.pk, "trigger": "manual"})
    run_row = JobRun.objects.get()
    assert run_row.name == "memory.decay" and run_row.workspace_id == workspace.pk and run_row.trigger == "manual"
    assert run_row.status == "ok" and run_row.counts["archived"] == 1 and run_row.counts["decayed"] == 1
    decay_task.apply()  # the nightly run: every workspace, each its own run
    assert sorted(JobRun.objects.filter(trigger="schedule").values_list("workspace_id", flat=True)) == \
        sorted([workspace.pk, other_workspace.pk])
    assert JobRun.objects.get(trigger="schedule", workspace=workspace).counts["decayed"] == 0  # same night
