// Single-key shortcuts for the whole UI: a key pressed outside a text field clicks the visible element that
// carries data-key="that key" (the first one on the page). A page offers a shortcut by marking its control,
// e.g. <a data-key="c" href="/compose">; the control works the same without JavaScript. Keys with Ctrl, Alt or
// Meta are left to the browser and to the scripts that handle them (compose.js: Ctrl+Enter, Esc).
(function () {
  "use strict";

  function typing(target) {
    return !!target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT|TRIX-EDITOR)$/.test(target.tagName));
  }

  function control(key) {
    var marked = document.querySelectorAll("[data-key]");
    for (var i = 0; i < marked.length; i++) {
      if (marked[i].dataset.key === key && marked[i].getClientRects().length) return marked[i];
    }
    return null;
  }

  document.addEventListener("keydown", function (e) {
    if (document.body.getAttribute("data-shortcuts") === "off") return;  // Settings → Appearance turned them off
    if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return;
    if (e.key.length !== 1) return;
    var found = control(e.key);
    if (found) {
      e.preventDefault();
      found.click();
    }
  });

  window.plmailKeys = { typing: typing };
})();
