"""The working memory and scratchpad pages (issue 21 part 4): agents' sessions and task
states, listed by the agent that last wrote them, each with its current content and its
history (a scratchpad's checkpoints, with the changes between two of them).

What agents keep here is their own notes, read back as the API's `?redact=true` reads
(core.privacy.redact masks emails, phone numbers, IPs and keys): redacted by default;
reviewers and admins may ask for the text as stored, viewers may not. Reviewers can go
back to a checkpoint (after a confirmation page); nothing else here is a write."""

from __future__ import annotations

import difflib
import json

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render

from core import params, privacy
from core.decorators import workspace_view
from core.errors import NotFound
from core.models import Role
from core.pagination import page_number
from core.services import Actor
from memory import selectors, services

PAGE_SIZE = 50
CHECKPOINTS_PAGE_SIZE = 20
EVICTED_PAGE_SIZE = 20
# A state is at most 1 MB (services.MAX_STATE_BYTES); a page shows this much of it, and a
# diff this many lines (of the first DIFF_INPUT_LINES of each state), so one huge state
# cannot make a page that no browser renders nor a request that computes for long.
SHOWN_CHARS = 100_000
REDACT_MARGIN = 2_000
DIFF_LINES = 2_000
DIFF_INPUT_LINES = 5_000
DIFF_INPUT_CHARS = 200_000


def _redacting(request) -> bool:
    """Redacted unless a reviewer or an admin asks for the stored text (?redact=0)."""
    return not (request.GET.get("redact") == "0" and request.membership.allows(Role.REVIEWER))


def _shown(text: str, redact: bool, limit: int = SHOWN_CHARS) -> str:
    """The first `limit` characters of `text`, redacted when asked. Only what is shown is
    redacted (privacy.redact costs more than linear time in the number of matches: 20 s for
    a 1.3 MB state of 12,000 emails, measured under load), with a margin so that a mask
    never stops at the cut: emails, phone numbers and IPs are short, and secrets are
    refused when a state is written."""
    if redact:
        text = privacy.redact(text[:limit + REDACT_MARGIN])
    return text[:limit]


def _shown_lines(text: str, redact: bool) -> list[str]:
    """The lines of `text` a diff compares: the first DIFF_INPUT_LINES, within
    DIFF_INPUT_CHARS, redacted when asked."""
    return _shown("\n".join(text.splitlines()[:DIFF_INPUT_LINES]), redact, DIFF_INPUT_CHARS).splitlines()


def _writer_filter(request, target_type: str) -> tuple[list, int | None, bool]:
    """The "written by" choices, the chosen agent (one of them), and whether a value was ignored."""
    writers = selectors.memory_writers(workspace=request.workspace, target_type=target_type)
    raw = request.GET.get("agent", "")
    agent = params.row_id(raw)
    if agent not in {pk for pk, _ in writers}:
        agent = None
    return writers, agent, bool(raw) and agent is None


def _listing(request, rows_for, target_type: str, template: str):
    writers, agent, bad_agent = _writer_filter(request, target_type)
    q = request.GET.get("q", "").strip()[:200]
    rows = rows_for(workspace=request.workspace, text=q or None, agent_id=agent)
    page = Paginator(rows, PAGE_SIZE).get_page(page_number(request))
    redact = _redacting(request)
    page.object_list = list(page.object_list)
    for row in page.object_list:
        # A session's task is free text the agent wrote (a scratchpad's task is its key).
        row.shown_task = _shown(row.task, redact) if target_type == selectors.WORKING_SESSION else row.task
    context = {"page": page, "q": q, "agent": agent, "writers": writers, "ignored": ["agent"] if bad_agent else [],
               "filtered": bool(q or agent), "redact": redact}
    return render(request, f"{template}#rows" if request.htmx else template, context)


@workspace_view()
def working_list(request):
    return _listing(request, selectors.working_session_list, selectors.WORKING_SESSION, "memory/working.html")


@workspace_view()
def scratchpad_list(request):
    return _listing(request, selectors.scratchpad_list, selectors.SCRATCHPAD, "memory/scratchpads.html")


@workspace_view()
def working_detail(request, session_id: int):
    try:
        session = selectors.working_session_by_id(workspace=request.workspace, session_id=session_id)
    except NotFound:
        raise Http404("No such session.")
    redact = _redacting(request)
    in_focus, _ = selectors.working_items(session=session, evicted_limit=0)
    evicted = Paginator(selectors.working_evicted(session=session), EVICTED_PAGE_SIZE).get_page(page_number(request))
    context = {"session": session, "task": _shown(session.task, redact), "redact": redact,
               "in_focus": [(item, _shown(item.content, redact)) for item in in_focus],
               "evicted": [(item, _shown(item.content, redact)) for item in evicted.object_list], "page": evicted,
               "history": selectors.target_history(workspace=request.workspace,
                                                   target_type=selectors.WORKING_SESSION, target_id=session.pk),
               "can_unredact": request.membership.allows(Role.REVIEWER),
               "audit_target": (selectors.WORKING_SESSION, session.pk)}
    return render(request, "memory/working_detail.html", context)


def _pretty(state: str) -> str:
    """A state as indented JSON (the keys in the order the agent sent them)."""
    try:
        return json.dumps(json.loads(state), indent=2, ensure_ascii=False)
    except ValueError:  # stored states are valid JSON (scratchpad_put checks); show it as it is otherwise
        return state


def _diff(old: str, new: str, old_name: str, new_name: str, redact: bool) -> tuple[list[tuple[str, str]], bool]:
    """(css class, line) of the unified diff between two states as shown, and whether it
    was cut. Only the first DIFF_INPUT_LINES of each state are compared (and redacted):
    difflib's matching grows faster than linearly, and a page request must not spin on two
    1 MB states."""
    too_long = any(text.count("\n") >= DIFF_INPUT_LINES or len(text) > DIFF_INPUT_CHARS for text in (old, new))
    lines = list(difflib.unified_diff(_shown_lines(old, redact), _shown_lines(new, redact), old_name, new_name,
                                      lineterm=""))
    # The first two lines name the two states (---/+++), then hunks (@@) of changed lines.
    styled = [("hunk" if index < 2 or line.startswith("@@") else "add" if line.startswith("+") else
               "del" if line.startswith("-") else "", line) for index, line in enumerate(lines[:DIFF_LINES])]
    return styled, too_long or len(lines) > DIFF_LINES


def _compared(request, pad, redact: bool) -> dict | None:
    """The diff asked for with ?from=<checkpoint>&to=<checkpoint or "current">, or None.
    An id that is not one of this scratchpad's checkpoints is ignored (and said)."""
    raw_from, raw_to = request.GET.get("from", ""), request.GET.get("to", "")
    if not raw_from and not raw_to:
        return None
    checkpoints = selectors.scratchpad_checkpoints(scratchpad=pad)
    old = checkpoints.filter(pk=params.row_id(raw_from)).first() if params.row_id(raw_from) else None
    new = None if raw_to == "current" else (checkpoints.filter(pk=params.row_id(raw_to)).first()
                                            if params.row_id(raw_to) else None)
    if old is None or (new is None and raw_to != "current"):
        messages.error(request, "Ignored the comparison: choose two of this scratchpad's checkpoints "
                                "(or a checkpoint and the current state).")
        return None
    old_name = f"checkpoint {old.label or old.pk} (v{old.version})"
    new_name = f"checkpoint {new.label or new.pk} (v{new.version})" if new else f"current (v{pad.version})"
    lines, cut = _diff(_pretty(old.state), _pretty(new.state if new else pad.state), old_name, new_name, redact)
    return {"old": old_name, "new": new_name, "lines": lines, "cut": cut}


def _scratchpad_or_404(request, scratchpad_id: int):
    try:
        return selectors.scratchpad_by_id(workspace=request.workspace, scratchpad_id=scratchpad_id)
    except NotFound:
        raise Http404("No such scratchpad.")


@workspace_view()
def scratchpad_detail(request, scratchpad_id: int):
    pad = _scratchpad_or_404(request, scratchpad_id)
    redact = _redacting(request)
    pretty = _pretty(pad.state)
    page = Paginator(selectors.scratchpad_checkpoints(scratchpad=pad).defer("state"),
                     CHECKPOINTS_PAGE_SIZE).get_page(page_number(request))
    rows = list(page.object_list)
    # Each checkpoint is compared with the one before it; the oldest on a page looks one
    # row past the page for its predecessor.
    before = selectors.scratchpad_checkpoints(scratchpad=pad).filter(pk__lt=rows[-1].pk).values_list(
        "pk", flat=True).first() if rows else None
    previous = [*(r.pk for r in rows[1:]), before]
    context = {"pad": pad, "state": _shown(pretty, redact), "state_cut": len(pretty) > SHOWN_CHARS, "redact": redact,
               "checkpoints": list(zip(rows, previous)), "page": page, "compare": _compared(request, pad, redact),
               "history": selectors.target_history(workspace=request.workspace, target_type=selectors.SCRATCHPAD,
                                                   target_id=pad.pk),
               "can_review": request.membership.allows(Role.REVIEWER), "audit_target": (selectors.SCRATCHPAD, pad.pk)}
    return render(request, "memory/scratchpad_detail.html", context)


@workspace_view(Role.REVIEWER)
def scratchpad_restore(request, scratchpad_id: int, checkpoint_id: int):
    """GET asks for confirmation; POST makes the checkpoint's state the current one, as a
    new version. The state it replaces is kept only in a checkpoint, so the form offers to
    checkpoint it first (on by default)."""
    pad = _scratchpad_or_404(request, scratchpad_id)
    checkpoint = selectors.scratchpad_checkpoints(scratchpad=pad).filter(pk=checkpoint_id).first()
    if checkpoint is None:
        raise Http404("No such checkpoint.")
    if request.method != "POST":
        return render(request, "memory/scratchpad_restore.html", {"pad": pad, "checkpoint": checkpoint})
    actor = Actor.for_user(request.user)
    if request.POST.get("keep") == "1":
        services.scratchpad_checkpoint(scratchpad=pad, actor=actor, label=f"before going back to {checkpoint.pk}")
    pad = services.scratchpad_restore(scratchpad=pad, checkpoint=checkpoint, actor=actor)
    messages.success(request, f"Back to checkpoint {checkpoint.label or checkpoint.pk}: now version {pad.version}.")
    return redirect("scratchpad", slug=request.workspace.slug, scratchpad_id=pad.pk)
