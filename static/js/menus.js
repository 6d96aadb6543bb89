// The navigation's pop-up menus (<details class="navmore"> and the workspace switcher, base.html):
// Escape closes an open one and gives the focus back to its summary (issue 21 part 6, every
// action by keyboard), and Tab moving the focus out of one closes it, as a menu does. A click
// inside on plain text (the focus goes nowhere) leaves it open.
(function () {
  "use strict";
  const MENUS = "details.navmore[open], details.switcher[open]";
  document.addEventListener("keydown", (event) => {
    if (event.key !== "Escape" || !event.target.closest) return;
    const menu = event.target.closest(MENUS);
    if (!menu) return;
    menu.open = false;
    menu.querySelector(":scope > summary").focus();
    event.preventDefault();
  });
  document.addEventListener("focusout", (event) => {
    const menu = event.target.closest && event.target.closest(MENUS);
    if (menu && event.relatedTarget && !menu.contains(event.relatedTarget)) menu.open = false;
  });
})();
