"""Issue 21 part 6, "every action reachable by keyboard, visible focus", checked in a real
browser (Playwright + Debian's Chromium) on a page as it is loaded. Used by the every-page
sweep (tests/test_every_page.py) and by tests/test_keyboard_focus.py.

`keyboard_problems(page)` says, in words, what a keyboard user would trip over:

- a visible, enabled control (link, button, field, summary, [tabindex>=0]) that Tab never
  reaches, or reaches out of document order;
- a control that, while focused, shows no focus indicator: an outline or a box-shadow of at
  least 2 px, or a border of at least 2 px that differs from its unfocused one; or that keeps
  it after the focus moves on;
- a keyboard trap: Tab stops moving, or cycles without leaving the page;
- something that acts on the mouse only: an element given a mouse listener (click, hover,
  drag; htmx's click triggers included) or an on* handler, which is not a control the keyboard
  can reach and use; a CSS :hover rule that reveals content with no :focus twin;
- a menu (a <details> whose panel floats over the page) that opens with Enter but does not
  close with Escape, handing the focus back to its summary.

`KEYBOARD_INIT` must run before the page's own scripts (context/page.add_init_script): it
notes every mouse listener as it is added."""

from __future__ import annotations

KEYBOARD_INIT = """(() => {
  // Mouse-only events: a listener on one of these, on an element the keyboard cannot operate,
  // is an action only a mouse can take.
  const MOUSE = new Set(['click', 'dblclick', 'mousedown', 'mouseup', 'mouseover', 'mouseenter', 'mouseout',
    'mouseleave', 'contextmenu', 'pointerdown', 'pointerup', 'pointerover', 'pointerenter', 'dragstart', 'drop']);
  const add = EventTarget.prototype.addEventListener;
  const listened = new Set();
  EventTarget.prototype.addEventListener = function (type, listener, options) {
    if (MOUSE.has(type) && this instanceof Element) listened.add(this);
    return add.call(this, type, listener, options);
  };
  const px = value => parseFloat(value) || 0;
  // What can show focus: outline, box-shadow, border (all four sides).
  const look = el => {
    const s = getComputedStyle(el);
    const sides = ['Top', 'Right', 'Bottom', 'Left'];
    return {
      outline: s.outlineStyle === 'none' || /rgba\\(.*, 0\\)$/.test(s.outlineColor) ? 0 : px(s.outlineWidth),
      outlineKey: s.outlineStyle + ' ' + s.outlineWidth + ' ' + s.outlineColor,
      shadow: s.boxShadow,
      border: sides.map(side => s['border' + side + 'Style'] + ' ' + s['border' + side + 'Width'] + ' '
                        + s['border' + side + 'Color']).join(' | '),
      borderWidth: Math.max(...sides.map(side => s['border' + side + 'Style'] === 'none' ? 0 : px(s['border' + side + 'Width']))),
    };
  };
  // The largest offset or spread of a box-shadow, in px ("rgb(..) 0px 0px 0px 3px, ...").
  const shadowSize = shadow => shadow === 'none' ? 0 : Math.max(0, ...shadow.replace(/rgba?\\([^)]*\\)/g, '')
    .split(',').map(layer => { const n = layer.trim().split(/\\s+/).map(px); return Math.max(Math.abs(n[0] || 0), Math.abs(n[1] || 0), n[3] || 0); }));
  // A focus indicator: what the element wears now that it did not wear unfocused (`base`).
  const shows = (el, base) => {
    const now = look(el);
    if (now.outline >= 2 && (!base || now.outlineKey !== base.outlineKey)) return 'outline ' + now.outline + 'px';
    if (now.shadow !== 'none' && shadowSize(now.shadow) >= 2 && (!base || now.shadow !== base.shadow)) return 'box-shadow';
    if (base && now.border !== base.border && now.borderWidth >= 2) return 'border';
    return '';
  };
  const describe = el => {
    if (!el || el === document.body) return 'the page';
    const text = (el.innerText || el.value || el.getAttribute('aria-label') || '').trim().replace(/\\s+/g, ' ').slice(0, 40);
    return el.tagName.toLowerCase() + (el.id ? '#' + el.id : '')
      + (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\\s+/).join('.') : '')
      + (text ? ' "' + text + '"' : '');
  };
  window.__kb = {listened, look, shows, describe};
})();"""

# Every control a keyboard user could want, numbered in document order (data-kb), each with
# its look while nothing is focused. With a modal dialog open, only the dialog's controls:
# the rest of the page is inert. Cards (tabindex=-1) are left out: j/k move between them.
CONTROLS = ("a[href], area[href], button, input:not([type=hidden]), select, textarea, summary, iframe, "
            "[contenteditable]:not([contenteditable=false]), [tabindex]:not([tabindex^='-'])")
MARK_CONTROLS = """(selector) => {
  // checkVisibility: also false inside a closed <details> (its content is not rendered).
  const visible = el => el.checkVisibility({visibilityProperty: true, contentVisibilityAuto: true});
  const scope = document.querySelector('dialog:modal') || document;
  document.activeElement && document.activeElement.blur();
  document.querySelectorAll('[data-kb]').forEach(el => { delete el.dataset.kb; });
  let controls = [...scope.querySelectorAll(selector)]
    .filter(el => visible(el) && !el.matches(':disabled') && !el.closest('[inert]')
                  && !(el.tagName === 'SUMMARY' && el !== el.parentElement.querySelector(':scope > summary')));
  // A group of radio buttons is one stop for Tab (the arrows move within it): its checked
  // button, or its first when none is.
  const radios = controls.filter(el => el.type === 'radio' && el.name);
  const stops = new Set(radios.map(el => {
    const group = radios.filter(other => other.name === el.name && other.form === el.form);
    return group.find(other => other.checked) || group[0];
  }));
  controls = controls.filter(el => !radios.includes(el) || stops.has(el));
  window.__kb.base = new Map(controls.map(el => [el, window.__kb.look(el)]));
  controls.forEach((el, i) => { el.dataset.kb = String(i); });
  return controls.map(el => el.outerHTML.slice(0, 160));
}"""

# From here on every focus change is noted: what got the focus, whether it shows it, and
# whether the element that lost it still shows it.
START_RECORDING = """() => {
  const kb = window.__kb;
  kb.steps = [];
  kb.previous = null;
  const record = () => {
    const el = document.activeElement;
    const previous = kb.previous;
    kb.previous = el;
    const step = {kb: el && el.dataset ? (el.dataset.kb ?? null) : null, what: kb.describe(el),
                  body: !el || el === document.body};
    if (!step.body) step.shows = kb.shows(el, kb.base.get(el));
    if (previous && previous !== el && previous.isConnected && previous !== document.body
        && kb.shows(previous, kb.base.get(previous))) step.lingers = kb.describe(previous);
    kb.steps.push(step);
  };
  if (kb.record) {
    document.removeEventListener('focusin', kb.record, true);
    document.removeEventListener('focusout', kb.leave, true);
  }
  kb.record = record;
  // The focus leaving the document (past the last control) fires no focusin.
  kb.leave = event => { if (!event.relatedTarget) kb.steps.push({kb: null, what: 'the page', body: true}); };
  record();
  document.addEventListener('focusin', record, true);
  document.addEventListener('focusout', kb.leave, true);
}"""

# Elements that act on the mouse only, and :hover rules that reveal what focus does not.
MOUSE_ONLY = """() => {
  const kb = window.__kb;
  const visible = el => el.checkVisibility({visibilityProperty: true});
  const HANDLERS = ['onclick', 'ondblclick', 'onmousedown', 'onmouseup', 'onmouseover', 'onmouseenter', 'ondragstart'];
  // What a keyboard can reach and use as it is: native controls, a label (it passes the click
  // on to its field), a dialog (Escape closes it; a click on its backdrop is the mouse's way),
  // the page itself (delegated listeners), or an element with a role and tabindex >= 0.
  const operable = el => el.matches('a[href], area[href], button, input, select, textarea, summary, label, option, '
                                    + 'dialog, form, html, body, main, details')
    || (el.tabIndex >= 0 && el.hasAttribute('tabindex') && el.hasAttribute('role'));
  const candidates = new Set(kb.listened);
  document.querySelectorAll('*').forEach(el => { if (HANDLERS.some(h => el[h])) candidates.add(el); });
  const found = [...candidates].filter(el => el.isConnected && visible(el) && !operable(el))
    .map(el => 'acts on the mouse only: ' + el.outerHTML.slice(0, 160));
  const REVEALS = /(^|;)\\s*(display|visibility|opacity|max-height|height|clip|clip-path|transform|pointer-events)\\s*:/;
  const rules = list => [...list].flatMap(rule => [rule, ...(rule.cssRules ? rules(rule.cssRules) : [])]);  // @media, nesting
  for (const sheet of document.styleSheets) {
    let list;
    try { list = sheet.cssRules; } catch (e) { continue; }
    for (const rule of rules(list)) {
      if (!rule.selectorText || !rule.selectorText.includes(':hover') || !REVEALS.test(rule.style.cssText)) continue;
      const selectors = rule.selectorText.split(',').map(s => s.trim());
      for (const hover of selectors.filter(s => s.includes(':hover'))) {
        const twins = [':focus-within', ':focus', ':focus-visible'].map(f => hover.replaceAll(':hover', f));
        if (!twins.some(twin => selectors.includes(twin))) found.push('shown on hover only: ' + hover + ' { ' + rule.style.cssText + ' }');
      }
    }
  }
  return found;
}"""

# Menus: a <details> whose panel floats over the page (position absolute or fixed).
MARK_MENUS = """() => {
  const visible = el => el.checkVisibility({visibilityProperty: true});
  const menus = [...document.querySelectorAll('details')].filter(d => {
    const summary = d.querySelector(':scope > summary');
    if (!summary || !visible(summary)) return false;
    const wasOpen = d.open;
    d.open = true;
    const floats = [...d.children].some(c => c !== summary && ['absolute', 'fixed'].includes(getComputedStyle(c).position));
    d.open = wasOpen;
    return floats;
  });
  menus.forEach((d, i) => { d.querySelector(':scope > summary').dataset.kbMenu = String(i); });
  return menus.map(d => window.__kb.describe(d.querySelector(':scope > summary')));
}"""


# Tabs sent in one Playwright call: "Tab+Tab+...+Tab" is one keydown of Tab per step, each a
# real (trusted) key event that moves the focus as a separate press does, with the key held
# (repeat) in between and one keyup at the end. The pages' scripts listen for no keyup or
# repeat, so the walk sees the same focus changes as with one press() per Tab, at a fraction
# of the round trips (a press() per Tab was most of the every-page sweep's keyboard time).
TABS_PER_CALL = 25


def _walk(page, controls: list[str]) -> tuple[list[dict], str | None]:
    """Tab from the first control until the focus leaves the page or comes back to the
    first; (the focus changes, a keyboard trap's description or None)."""
    page.evaluate("document.querySelector('[data-kb=\"0\"]').focus()")
    # From the first control with the keyboard: leave the page backwards, come back.
    page.keyboard.press("Shift+Tab")
    for _ in range(3):  # coming back from outside the page may take a second Tab
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.dataset.kb === '0'"):
            break
    page.evaluate(START_RECORDING)
    # A date or time field takes a Tab for each of its parts (day, month, year, ...).
    budget, pressed = len(controls) + 20 + 4 * sum('type="date' in html or 'type="time' in html for html in controls), 0
    while pressed < budget:
        batch = min(TABS_PER_CALL, budget - pressed)
        page.keyboard.press("+".join(["Tab"] * batch))
        pressed += batch
        steps = page.evaluate("window.__kb.steps")
        end = next((n for n, step in enumerate(steps) if n and (step["body"] or step["kb"] == "0")), None)
        if end is not None:
            return steps[:end], None
    steps = page.evaluate("window.__kb.steps")
    last = ", ".join(step["what"] for step in steps[-4:])
    return steps, f"keyboard trap: {budget} presses of Tab never left the page; the focus ended on {last}"


def tab_problems(page) -> tuple[list[str], list[dict], list[str]]:
    """Tab through the page as it is; (the controls, the focus changes, the problems)."""
    controls = page.evaluate(MARK_CONTROLS, CONTROLS)
    if not controls:
        return controls, [], []
    steps, trap = _walk(page, controls)
    problems = [trap] if trap else []
    reached = [int(step["kb"]) for step in steps if step["kb"] is not None]
    missed = [html for i, html in enumerate(controls) if i not in set(reached)]
    if missed:
        problems.append(f"{len(missed)} of {len(controls)} controls not reached by Tab: {missed[:5]}")
    backwards = [f"{controls[a][:80]} before {controls[b][:80]}" for a, b in zip(reached, reached[1:]) if b <= a]
    if backwards:
        problems.append(f"Tab goes against the document order: {backwards[:3]}")
    unringed = [step["what"] for step in steps if not step["body"] and not step["shows"]]
    if unringed:
        problems.append(f"focused without a visible indicator: {unringed[:5]}")
    lingering = [step["lingers"] for step in steps if step.get("lingers")]
    if lingering:
        problems.append(f"the focus indicator stays after the focus moves on: {lingering[:5]}")
    return controls, steps, problems


def menu_problems(page) -> list[str]:
    """Each floating menu opens with Enter on its summary, Tab goes into it, and Escape
    closes it with the focus back on the summary."""
    problems = []
    for n, name in enumerate(page.evaluate(MARK_MENUS)):
        summary = f"[data-kb-menu=\"{n}\"]"
        page.focus(summary)
        page.keyboard.press("Enter")
        if not page.evaluate(f"document.querySelector('{summary}').parentElement.open"):
            problems.append(f"menu {name}: Enter on its summary does not open it")
            continue
        page.keyboard.press("Tab")
        inside = page.evaluate(f"document.querySelector('{summary}').parentElement.contains(document.activeElement)")
        page.keyboard.press("Escape")
        state = page.evaluate(f"""() => {{ const s = document.querySelector('{summary}');
            return {{open: s.parentElement.open, back: document.activeElement === s,
                     focus: window.__kb.describe(document.activeElement)}}; }}""")
        if not inside:
            problems.append(f"menu {name}: Tab after opening it does not go into it")
        if state["open"] or not state["back"]:
            problems.append(f"menu {name}: Escape {'leaves it open' if state['open'] else 'closes it'}, "
                            f"the focus is on {state['focus']}, not on its summary")
        page.evaluate(f"document.querySelector('{summary}').parentElement.open = false")
    return problems


def dialog_problems(page, opener: str, key: str, name: str) -> list[str]:
    """A dialog opened by `key` with the focus on `opener` (a JS expression; nothing to check
    when it finds no element) is modal, can be tabbed through, and Escape closes it with the
    focus back on the opener."""
    before = page.evaluate(f"""() => {{ const el = {opener};
        if (!el) return null; el.focus(); window.__kb.opener = document.activeElement;
        return window.__kb.describe(document.activeElement); }}""")
    if before is None:
        return []
    page.keyboard.press(key)
    if not page.evaluate("!!document.querySelector('dialog:modal')"):
        return [f"dialog {name}: the keys do not open it"]
    problems = [f"dialog {name}: {found}" for found in tab_problems(page)[2]]
    page.keyboard.press("Escape")
    state = page.evaluate("""() => ({open: !!document.querySelector('dialog[open]'),
        back: document.activeElement === window.__kb.opener, focus: window.__kb.describe(document.activeElement)})""")
    if state["open"]:
        problems.append(f"dialog {name}: Escape does not close it")
    elif not state["back"]:
        problems.append(f"dialog {name}: after Escape the focus is on {state['focus']}, not back on {before}")
    return problems


def keyboard_problems(page) -> tuple[int, list[str]]:
    """Everything above but dialogs, on the page as loaded (lazy panels loaded first);
    (how many controls Tab reached, the problems)."""
    # Panels that load when scrolled into view (hx-trigger="intersect") load now, so their
    # controls are counted before the walk, not discovered during it.
    page.evaluate("document.querySelectorAll('[hx-trigger*=intersect]').forEach(el => el.scrollIntoView())")
    page.wait_for_load_state("networkidle")
    page.evaluate("window.scrollTo(0, 0)")
    controls, steps, problems = tab_problems(page)
    problems += page.evaluate(MOUSE_ONLY)
    problems += menu_problems(page)
    return len({step["kb"] for step in steps if step["kb"] is not None}), problems
