// The pages' small behaviours, as one script from our own origin: the Content-Security-Policy allows no inline
// script and no inline event handlers. Handlers are delegated from the document, so content that htmx swaps in
// (the live thread list) works without running anything again.
(function () {
  "use strict";

  // A button that leaves the page it acts on says where to go next: <button data-next="/">.
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("button[data-next]");
    if (button && button.form && button.form.elements.next) {
      button.form.elements.next.value = button.getAttribute("data-next");
    }
  });

  // A Print button: <button type="button" data-print>.
  document.addEventListener("click", function (event) {
    if (event.target.closest && event.target.closest("[data-print]")) window.print();
  });

  // One button of a form that deletes for good asks first: <button data-confirm="Empty the Trash?">.
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("button[data-confirm]");
    if (button && !window.confirm(button.getAttribute("data-confirm"))) event.preventDefault();
  });

  // Forms that delete something ask first: <form data-confirm="Delete this label?">.
  document.addEventListener("submit", function (event) {
    var form = event.target;
    var question = form.getAttribute && form.getAttribute("data-confirm");
    if (question && !window.confirm(question)) event.preventDefault();
  });

  // The thread list: "select all on this page", and then "every conversation in this view".
  document.addEventListener("change", function (event) {
    var page = event.target;
    if (page.id !== "select-page") return;
    var form = document.getElementById("thread-list");
    var note = document.getElementById("select-view");
    var all = document.getElementById("all-in-view");
    if (!form) return;
    form.querySelectorAll("input[name=thread_ids]").forEach(function (box) { box.checked = page.checked; });
    if (note) note.hidden = !page.checked || form.getAttribute("data-more-pages") !== "true";
    if (all && !page.checked) all.value = "";
  });
  document.addEventListener("click", function (event) {
    if (!event.target.closest || !event.target.closest("#select-view-all")) return;
    var form = document.getElementById("thread-list");
    var note = document.getElementById("select-view");
    var all = document.getElementById("all-in-view");
    if (all) all.value = "1";
    if (note && form) note.textContent = form.getAttribute("data-all-selected") || "";
  });

  // A filter's conditions: "Add a condition" copies the first row, emptied.
  document.addEventListener("click", function (event) {
    if (!event.target.closest || !event.target.closest("[data-add-condition]")) return;
    var first = document.querySelector("#conditions .condition");
    if (!first) return;
    var copy = first.cloneNode(true);
    var input = copy.querySelector("input");
    if (input) input.value = "";
    document.getElementById("conditions").appendChild(copy);
  });

  // Settings: typing in the time-zone search keeps only the zones that match, and picks the first of them.
  document.addEventListener("input", function (event) {
    var filter = event.target;
    if (!filter.matches || !filter.matches("[data-zone-filter]")) return;
    var select = document.getElementById("time-zone");
    if (!select) return;
    var typed = filter.value.trim().toLowerCase().replace(/ /g, "_"), first = null;
    select.querySelectorAll("option").forEach(function (o) {
      var hit = !typed || o.value.toLowerCase().indexOf(typed) >= 0;
      o.hidden = !hit;
      if (hit && !first) first = o;
    });
    select.querySelectorAll("optgroup").forEach(function (g) { g.hidden = !g.querySelector("option:not([hidden])"); });
    if (typed && first) select.value = first.value;
  });

  // A mail body in its sandboxed frame grows to its content's height.
  function fit(frame) {
    try {
      var doc = frame.contentDocument;
      if (doc && doc.documentElement) frame.style.height = (doc.documentElement.scrollHeight + 24) + "px";
    } catch (e) { /* a frame we may not read keeps its size */ }
  }
  document.addEventListener("load", function (event) {
    if (event.target.tagName === "IFRAME" && event.target.classList.contains("body")) fit(event.target);
  }, true);

  // A menu (<details class="dropdown">) opens and closes without JavaScript; with it, a click elsewhere or Esc
  // closes it as a menu should.
  document.addEventListener("click", function (event) {
    document.querySelectorAll("details.dropdown[open]").forEach(function (menu) {
      if (!menu.contains(event.target)) menu.open = false;
    });
  });
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape") return;
    var menu = event.target.closest && event.target.closest("details.dropdown[open]");
    if (menu) { menu.open = false; menu.querySelector("summary").focus(); }
  });

  // A table wider than its column scrolls sideways on its own (plmail.css); a keyboard must reach it to scroll it.
  function focusableWhenScrolling(root) {
    (root || document).querySelectorAll("table").forEach(function (table) {
      if (table.scrollWidth > table.clientWidth + 1) table.setAttribute("tabindex", "0");
      else if (table.getAttribute("tabindex") === "0") table.removeAttribute("tabindex");
    });
  }
  document.addEventListener("htmx:afterSettle", function (event) { focusableWhenScrolling(event.target); });
  window.addEventListener("resize", function () { focusableWhenScrolling(); });

  document.addEventListener("DOMContentLoaded", function () {
    focusableWhenScrolling();
    document.querySelectorAll("iframe.body").forEach(function (frame) {
      if (frame.contentDocument && frame.contentDocument.readyState === "complete") fit(frame);
    });
    // First-run setup: pre-fill the browser's time zone; the server validates whatever is sent.
    var zone = document.getElementById("tz");
    if (zone && zone.value === "UTC") {
      try { zone.value = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC"; } catch (e) { /* keep UTC */ }
    }
    // Settings on a phone: the section row scrolls sideways; bring the current section into view.
    var section = document.querySelector(".settings-nav [aria-current=page]");
    var row = section && section.closest("ul");
    if (row && row.scrollWidth > row.clientWidth) {
      row.scrollLeft = section.offsetLeft - (row.clientWidth - section.offsetWidth) / 2;
    }
  });
})();
