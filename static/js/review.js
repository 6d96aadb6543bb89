// The review queue: decisions wait a few seconds (undo, with a countdown) before they are sent;
// j/k/a/r/e/m/o/x/u keys, `?` lists them all; select many and act once (a/r act on the selection),
// or every card the filters match (confirmed in a dialog, decided by the server). A claim card is an `article.item` too: a/r submit its form, which
// carries its ticked facets (unticked ones are rejected when the claim is approved). Without JavaScript the same forms post and redirect back.
(function () {
  "use strict";
  const app = document.getElementById("review-app");
  if (!app) return;
  const undoMs = Math.max(0, parseFloat(app.dataset.undoSeconds || "5") * 1000);
  const toast = document.getElementById("toast");
  const toastText = toast.querySelector(".toast-text");
  const undoButton = toast.querySelector(".undo");
  const csrf = () => (JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"] || "");
  let pending = null; // {items, url, body, timer, label}
  let current = null;

  const items = () => Array.from(document.querySelectorAll("#queue article.item:not([hidden])"));
  const badge = () => document.getElementById("review-count");

  function say(text, undoable) {
    toastText.textContent = text;
    undoButton.hidden = !undoable;
    toast.hidden = false;
    toast.classList.toggle("error", false);
  }
  function fail(text) {
    say(text, false);
    toast.classList.add("error");
  }
  function adjustCount(delta) {
    const b = badge();
    if (!b) return;
    const n = Math.max(0, (parseInt(b.textContent, 10) || 0) + delta);
    b.textContent = String(n);
  }
  function setCurrent(item) {
    if (current) current.classList.remove("current");
    current = item || null;
    if (current) {
      current.classList.add("current");
      current.focus({preventScroll: true});
      reveal(current);
    }
  }
  // The card in view, and above all its buttons: a card taller than the window scrolls so
  // that they stay clear of the toast (their scroll margin, mnemo.css).
  function reveal(item) {
    item.scrollIntoView({block: "nearest"});
    const actions = item.querySelector("form.actions:not([hidden])");
    if (actions) actions.scrollIntoView({block: "nearest"});
  }
  // Wide screens (issue 21 part 3): the list of cards on the left, the current card's detail
  // beside it (mnemo.css: its own .detail, fixed there). The pane starts where the queue does,
  // below the bulk bar, and never reaches the toast's strip at the bottom.
  const wide = window.matchMedia("(min-width: 1200px)");
  function placePane() {
    const queue = document.getElementById("queue");
    if (!wide.matches || !queue) return;
    const box = queue.getBoundingClientRect();
    const bar = document.getElementById("bulk");
    const top = Math.max(0, box.top, bar ? bar.getBoundingClientRect().bottom : 0) + 8;
    app.style.setProperty("--pane-top", top + "px");
    app.style.setProperty("--pane-left", (box.left + box.width * 0.4 + 16) + "px");
    app.style.setProperty("--pane-width", (box.width * 0.6 - 16) + "px");
  }
  function layout() {
    app.classList.toggle("list-detail", wide.matches);
    placePane();
  }
  wide.addEventListener("change", layout);
  window.addEventListener("resize", placePane);
  window.addEventListener("scroll", placePane, {passive: true});
  layout();

  function hide(list) {
    const all = items();
    const after = all.find((el) => all.indexOf(el) > all.indexOf(list[list.length - 1]) && !list.includes(el));
    list.forEach((el) => {
      el.hidden = true;
      const box = el.querySelector("input.select");
      if (box) box.checked = false;
      const group = el.closest("section.group");
      if (group && !group.querySelector("article.item:not([hidden])")) group.hidden = true;
    });
    updateSelected();
    if (list.includes(current)) setCurrent(after || items()[items().length - 1]);
  }
  function show(list) {
    list.forEach((el) => {
      el.hidden = false;
      const group = el.closest("section.group");
      if (group) group.hidden = false;
    });
    setCurrent(list[0]);
  }
  // Reload the emptied page only once nothing waits to be sent and every decision sent has
  // been answered: a reload before the server decided a card would show that card again (and
  // a key pressed on it decides it twice: 409). One reload at a time: two answers arriving
  // while it loads would swap the same cards in twice, and htmx's settling of the second swap
  // takes the current card's mark away.
  let reloading = false;
  let sending = 0;
  function refreshIfEmpty() {
    if (!items().length && pending === null && sending === 0 && !reloading && window.htmx) {
      reloading = true;
      htmx.ajax("GET", window.location.pathname + window.location.search, {target: "#queue", select: "#queue", swap: "outerHTML"})
        .finally(() => { reloading = false; });
    }
  }

  function send(decision, keepalive) {
    clearTimeout(decision.timer);
    clearInterval(decision.ticker);
    sending += 1;
    return fetch(decision.url, {
      method: "POST", body: decision.body, keepalive: !!keepalive, credentials: "same-origin",
      headers: {"X-CSRFToken": csrf(), "X-Requested-With": "fetch"},
    }).then((response) => response.text().then((text) => {
      if (!response.ok) {
        fail(text || ("The decision failed (" + response.status + ")."));
        if (response.status === 409) {
          decision.items.forEach((el) => el.remove());
        } else {
          show(decision.items);
          adjustCount(decision.items.length);
        }
      } else if (pending === null || pending === decision) {
        say(text, false);
      }
      // The server names the event other panels refresh on (HX-Trigger), as for htmx requests.
      const event = response.headers.get("HX-Trigger");
      if (event && window.htmx) htmx.trigger(document.body, event);
    })).catch(() => {
      fail("The decision could not be sent; nothing changed.");
      show(decision.items);
      adjustCount(decision.items.length);
    }).finally(() => {
      sending -= 1;
      refreshIfEmpty();
    });
  }
  function flush(keepalive) {
    if (!pending) return;
    const decision = pending;
    pending = null;
    send(decision, keepalive);
  }
  function decide(list, url, body, label) {
    flush(false);
    hide(list);
    adjustCount(-list.length);
    const decision = {items: list, url: url, body: body, label: label};
    pending = decision;
    if (undoMs === 0) { flush(false); return; }
    // The toast counts down to the send.
    const sendAt = Date.now() + undoMs;
    const tick = () => {
      if (pending !== decision) return;
      say(label + " — sending in " + Math.max(1, Math.ceil((sendAt - Date.now()) / 1000)) + " s.", true);
    };
    tick();
    decision.ticker = setInterval(tick, 250);
    decision.timer = setTimeout(() => { if (pending === decision) flush(false); }, undoMs);
  }
  function undo() {
    if (!pending) return;
    const decision = pending;
    pending = null;
    clearTimeout(decision.timer);
    clearInterval(decision.ticker);
    show(decision.items);
    adjustCount(decision.items.length);
    say("Undone: nothing was sent.", false);
  }
  undoButton.addEventListener("click", undo);
  window.addEventListener("pagehide", () => flush(true));

  // At most `limit` characters, cut between words (core.quoting.shorten does the same on the server).
  function shorten(text, limit) {
    text = text.replace(/\s+/g, " ").trim();
    if (text.length <= limit) return text;
    let cut = text.slice(0, limit - 1);
    if (cut.includes(" ") && text[limit - 1] !== " ") cut = cut.slice(0, cut.lastIndexOf(" "));
    return cut.replace(/[\s,;:.\-–—]+$/, "") + "…";
  }
  function labelFor(action, item) {
    const text = (item.querySelector(".text") || {}).textContent || "";
    const verb = {approve: "Approved", reject: "Rejected", merge: "Merged", both: "Kept both"}[action] || "Decided";
    return verb + ": " + shorten(text, 60);
  }
  // The first edited field left blank (it had a value), named as the form labels it: the
  // server refuses an empty edit, so it is refused here at once, not after the undo wait.
  function emptiedField(form) {
    const fields = Array.from(form.querySelectorAll("[name^='change-']"));
    const blank = fields.find((field) => {
      const facet = field.closest("li.facet");
      const tick = facet && facet.querySelector("input.facet-tick");
      if (tick && !tick.checked) return false;
      return field.defaultValue.trim() !== "" && field.value.trim() === "";
    });
    if (!blank) return null;
    const label = blank.closest("label");
    return label ? label.childNodes[0].textContent.trim() : blank.name.replace(/^change-(\d+-)?/, "");
  }
  function actionOf(url) {
    const parts = url.replace(/\/$/, "").split("/");
    return parts[parts.length - 1];
  }

  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (form.id === "bulk") {
      event.preventDefault();
      const action = (event.submitter && event.submitter.value) || "approve";
      if (allMatching) { openMatching(); return; }
      const chosen = selected();
      if (!chosen.length) { fail("Select items first (x, or the checkboxes)."); return; }
      const body = new FormData();
      body.append("action", action);
      // An item card posts its item id, a claim card its claim id (the claim is decided whole).
      chosen.forEach((el) => body.append(el.dataset.claim ? "claims" : "ids", el.dataset.claim || el.dataset.id));
      decide(chosen, app.dataset.bulkUrl, body, (action === "approve" ? "Approved " : "Rejected ") + chosen.length + " cards");
      return;
    }
    const item = form.closest("article.item");
    if (!item || !["actions", "edit-form", "merge-form"].some((name) => form.classList.contains(name))) return;
    event.preventDefault();
    const url = (event.submitter && event.submitter.getAttribute("formaction")) || form.getAttribute("action");
    const action = actionOf(url);
    const emptied = action === "approve" ? emptiedField(form) : null;
    if (emptied) {
      fail(emptied + " cannot be empty: write the corrected text, or reject the item.");
      return;
    }
    const dialog = form.closest("dialog");
    if (dialog) dialog.close();
    if (action === "merge" && !/^#?\d+$/.test((form.querySelector("input[name=merge_into]") || {}).value || "")) {
      fail("Give the id of the item to merge into, or pick one of the similar items.");
      return;
    }
    const body = new FormData(form);
    const edited = form.classList.contains("edit-form");
    decide([item], url, body, edited ? "Edited and approved: " + (body.get("change-text") || body.get("change-name") || body.get("change-value") || "") : labelFor(action, item));
  });

  document.addEventListener("click", (event) => {
    const target = event.target;
    const item = target.closest && target.closest("article.item");
    if (target.classList.contains("edit-toggle") && item) { openEdit(item); return; }
    if (target.classList.contains("edit-cancel") && item) {
      item.querySelector("form.edit-form").hidden = true;
      item.querySelector("form.actions").hidden = false;
      return;
    }
    // "Merge into this…" asks first, showing both items and what merging does.
    if (target.classList.contains("merge-into") && item) {
      const dialog = target.parentElement.querySelector("dialog.merge-confirm");
      if (dialog) dialog.showModal();
      return;
    }
    if (target.classList.contains("merge-cancel")) {
      const dialog = target.closest("dialog");
      if (dialog) dialog.close();
      return;
    }
    if (target.id === "select-page") { selectPage(); return; }
    if (target.id === "select-matching") {
      selectPage();
      allMatching = true;
      updateSelected();
      openMatching();
      return;
    }
    if (target.classList.contains("dialog-cancel")) {
      const dialog = target.closest("dialog");
      if (dialog) dialog.close();
      return;
    }
    if (target.classList.contains("show-shortcuts")) { shortcuts(); return; }
    if (item && !target.closest("form, a, button, input, textarea")) setCurrent(item);
  });
  // A required edit field left empty: the browser blocks the submit; say why in the toast too.
  document.addEventListener("invalid", (event) => {
    const form = event.target.form;
    if (form && form.classList.contains("edit-form")) {
      fail((emptiedField(form) || "This field") + " cannot be empty: write the corrected text, or reject the item.");
    }
  }, true);
  document.addEventListener("change", (event) => {
    if (event.target.classList.contains("select")) { allMatching = false; updateSelected(); }
  });
  // "Select all N matching": the selection is every card the filters match, on every page.
  let allMatching = false;
  const selected = () => Array.from(document.querySelectorAll("#queue input.select:checked")).map((box) => box.closest("article.item"));
  function updateSelected() {
    const counter = document.getElementById("selected-count");
    const matching = document.getElementById("select-matching");
    if (counter) {
      counter.textContent = allMatching && matching ? "All " + matching.dataset.count + " matching" : String(selected().length);
    }
  }
  function selectPage() {
    items().forEach((el) => { const box = el.querySelector("input.select"); if (box) box.checked = true; });
    allMatching = false;
    updateSelected();
  }
  function openMatching() {
    const dialog = document.getElementById("bulk-matching");
    if (dialog && !dialog.open) dialog.showModal();
  }
  function shortcuts() {
    const dialog = document.getElementById("shortcuts");
    if (dialog && !dialog.open) dialog.showModal();
  }
  // The decision by filter is sent at once (the dialog was the confirmation); the queue then reloads.
  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (!form.closest("#bulk-matching")) return;
    event.preventDefault();
    const body = new FormData(form);
    if (event.submitter && event.submitter.name) body.append(event.submitter.name, event.submitter.value);
    form.closest("dialog").close();
    allMatching = false;
    say("Sending…", false);
    fetch(form.getAttribute("action"), {
      method: "POST", body: body, credentials: "same-origin",
      headers: {"X-CSRFToken": csrf(), "X-Requested-With": "fetch"},
    }).then((response) => response.text().then((text) => {
      if (!response.ok) { fail(text || ("The decision failed (" + response.status + ").")); return; }
      say(text, false);
      const trigger = response.headers.get("HX-Trigger");
      if (trigger && window.htmx) htmx.trigger(document.body, trigger);
      if (window.htmx) htmx.ajax("GET", window.location.pathname + window.location.search, {target: "#queue", select: "#queue", swap: "outerHTML"});
    })).catch(() => fail("The decision could not be sent; nothing changed."));
  });
  // `m`: the merge confirmation of the most similar item, loading the similar items first
  // when the card has not shown them yet.
  function mergeTop(item) {
    const open = () => {
      const button = item.querySelector("button.merge-into");
      if (button) { button.click(); } else { fail("No similar existing item to merge into."); }
    };
    const box = item.querySelector(".similar-box");
    if (!box) { fail("Items of this kind are not merged."); return; }
    if (box.querySelector("ul.similar, p") || !window.htmx) { open(); return; }
    htmx.ajax("GET", box.getAttribute("hx-get"), {target: box, swap: "innerHTML"}).then(open);
  }
  function openPage(item) {
    if (item && item.dataset.open) window.location.assign(item.dataset.open);
  }
  function openEdit(item) {
    const form = item.querySelector("form.edit-form");
    if (!form) return;
    item.querySelector("form.actions").hidden = true;
    form.hidden = false;
    const field = form.querySelector("textarea, input:not([type=hidden])");
    if (field) field.focus();
  }

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.target.closest && event.target.closest("dialog")) return; // a confirmation has the keys
    if (document.querySelector("dialog[open]")) return;
    const typing = event.target.closest && event.target.closest("input:not([type=checkbox]), textarea, select, [contenteditable]");
    if (typing) {
      if (event.key === "Escape") {
        const item = event.target.closest("article.item");
        if (item && item.querySelector("form.edit-form")) {
          item.querySelector("form.edit-form").hidden = true;
          item.querySelector("form.actions").hidden = false;
          setCurrent(item);
        } else if (event.target.blur) { event.target.blur(); }
      }
      return;
    }
    // Enter on a button or a link does what it always does.
    if (event.key === "Enter" && event.target.closest && event.target.closest("a, button, summary, input")) return;
    const list = items();
    const index = current ? list.indexOf(current) : -1;
    const chosen = selected();
    const bulk = (action) => {
      const form = document.getElementById("bulk");
      if (form) form.requestSubmit(form.querySelector("button[value=" + action + "]"));
    };
    const press = (selector) => {
      const button = current && current.querySelector(selector);
      if (button) current.querySelector("form.actions").requestSubmit(button);
    };
    switch (event.key) {
      case "j": setCurrent(list[Math.min(list.length - 1, index + 1)]); break;
      case "k": setCurrent(list[Math.max(0, index - 1)]); break;
      case "a": if (chosen.length || allMatching) { bulk("approve"); } else { press("button.approve"); } break;
      case "r": if (chosen.length || allMatching) { bulk("reject"); } else { press("button.reject"); } break;
      case "e": if (current) openEdit(current); break;
      case "m": if (current) mergeTop(current); break;
      case "o": case "Enter": openPage(current); break;
      case "*": selectPage(); break;
      case "?": shortcuts(); break;
      case "/": { const search = document.querySelector(".queue-search input[name=q]"); if (search) search.focus(); } break;
      case "x": if (current) {
        const box = current.querySelector("input.select");
        if (box) { box.checked = !box.checked; updateSelected(); }
      } break;
      case "u": undo(); break;
      default: return;
    }
    event.preventDefault();
  });

  // Similar items loading above the current card push it down: keep it in view, clear of the toast.
  document.body.addEventListener("htmx:afterSwap", (event) => {
    if (current && event.detail.target && event.detail.target.classList.contains("similar-box")) reveal(current);
  });
  document.body.addEventListener("htmx:afterSettle", (event) => {
    // The queue reloaded (its page emptied, or a decision by filter): keep the keys working.
    // After settling: htmx puts back the new cards' own attributes then, class included.
    if (event.target.id === "queue") {
      placePane();
      current = null;
      allMatching = false;
      updateSelected();
      if (items().length) setCurrent(items()[0]);
    }
  });
  if (items().length) setCurrent(items()[0]);
})();
