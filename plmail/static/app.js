// The whole UI's keyboard and toasts: Gmail's shortcuts on the list and the conversation, the phone menu,
// the undo toast (10 s, Undo or z), folded quotes, search suggestions and recent searches.
// The composer's keys stay where they were: c, r, a, f in keys.js (data-key), Ctrl+Enter and Escape in compose.js;
// all of them skip keys typed into a field and follow the shortcuts setting.
(function () {
  "use strict";

  var TOAST_SECONDS = 10;  // the undo window; the server holds the provider's copy as long
  var RECENT_KEY = "plmail.recentSearches";
  var RECENT_MAX = 8;

  function typing(target) {
    return target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT|TRIX-EDITOR)$/.test(target.tagName) ||
      (target.closest && target.closest("[data-composer], trix-editor")));
  }

  // -- the list cursor and the actions ------------------------------------------------------------
  function rows() { return Array.prototype.slice.call(document.querySelectorAll("li.thread")); }
  function cursorRow() { return document.querySelector("li.thread.cursor") || null; }

  function moveCursor(step) {
    var all = rows();
    if (!all.length) return false;
    var current = cursorRow();
    var index = current ? all.indexOf(current) + step : (step > 0 ? 0 : all.length - 1);
    index = Math.max(0, Math.min(all.length - 1, index));
    if (current) current.classList.remove("cursor");
    all[index].classList.add("cursor");
    var link = all[index].querySelector("a");
    if (link) link.focus();
    return true;
  }

  function listForm() { return document.getElementById("thread-list"); }
  function threadForm() { return document.querySelector("form.thread-actions"); }

  // -- your place in the list ----------------------------------------------------------------------
  // A list page (a tab, a label, a search, each page of them) remembers itself and its rows' order in this tab's
  // sessionStorage; a conversation opened from it goes back there ("Back to the list", u, Esc) with the cursor
  // on the row it came from, and e or # there open the next conversation of that list, as Gmail does.
  var PLACE_KEY = "plmail.place";

  function readPlace() {
    try { return JSON.parse(window.sessionStorage.getItem(PLACE_KEY) || "null"); } catch (err) { return null; }
  }

  function writePlace(place) {
    try { window.sessionStorage.setItem(PLACE_KEY, JSON.stringify(place)); } catch (err) { /* storage off */ }
  }

  function currentThreadId() {
    var form = threadForm();
    var field = form && form.querySelector("input[name=thread_ids]");
    return field ? field.value : null;
  }

  function listUrl() {
    var place = readPlace();
    return place && place.url ? place.url : "/";
  }

  // The conversation after `id` in the remembered list (the older one below it), else the one above, else none.
  function neighbour(id) {
    var place = readPlace();
    if (!place || !place.ids) return null;
    var index = place.ids.indexOf(String(id));
    if (index < 0) return null;
    if (index + 1 < place.ids.length) return place.ids[index + 1];
    return index > 0 ? place.ids[index - 1] : null;
  }

  function startPlace() {
    var all = rows();
    if (listForm() && all.length) {
      var previous = readPlace();
      var here = window.location.pathname + window.location.search;
      writePlace({ url: here, ids: all.map(function (row) { return row.getAttribute("data-thread-id"); }),
                   opened: previous && previous.url === here ? previous.opened : null });
      var opened = previous && previous.url === here && previous.opened;
      var row = opened && document.querySelector('li.thread[data-thread-id="' + opened + '"]');
      if (row) {
        row.classList.add("cursor");
        var link = row.querySelector("a");
        if (link) link.focus({ preventScroll: false });
      }
      listForm().addEventListener("click", function (e) {
        var target = e.target.closest && e.target.closest("li.thread a");
        if (target) remember(target.closest("li.thread").getAttribute("data-thread-id"));
      });
      return;
    }
    var id = currentThreadId();
    if (!id) return;
    var place = readPlace();
    if (place && place.ids && place.ids.indexOf(String(id)) >= 0) {
      remember(id);
      var back = document.querySelector("[data-back-to-list]");
      if (back) back.setAttribute("href", place.url);
      // Archive, Delete, Spam … on the page's buttons go back to the same list, page and search.
      document.querySelectorAll("form.thread-actions button[data-next]").forEach(function (button) {
        button.setAttribute("data-next", place.url);
      });
    }
  }

  function remember(id) {
    var place = readPlace();
    if (!place) return;
    place.opened = String(id);
    writePlace(place);
  }

  function backToList() {
    if (!document.querySelector("article.conversation")) return false;
    var back = document.querySelector("[data-back-to-list]");
    window.location.href = back ? back.getAttribute("href") : "/";
    return true;
  }

  function submitAction(form, action, extra) {
    var field = form.querySelector("input[name=action][data-key-action]");
    if (!field) {
      field = document.createElement("input");
      field.type = "hidden";
      field.name = "action";
      field.setAttribute("data-key-action", "");
      form.appendChild(field);
    }
    field.value = action;
    Object.keys(extra || {}).forEach(function (name) { form.elements[name].value = extra[name]; });
    form.submit();  // a plain submit: no button's own action value travels with it
  }

  function act(action) {
    var thread = threadForm();
    if (thread) {
      var leaves = /^(archive|trash|spam|unread|snooze)$/.test(action);
      var next = listUrl();
      if (action === "archive" || action === "trash") {
        var id = currentThreadId();
        var after = id && neighbour(id);
        if (after) { remember(after); next = "/thread/" + after; }
      }
      submitAction(thread, action, leaves ? { next: next } : {});
      return true;
    }
    var form = listForm();
    if (!form) return false;
    var checked = form.querySelectorAll("input[name=thread_ids]:checked");
    if (!checked.length) {
      var row = cursorRow();
      if (!row) return false;
      row.querySelector("input[name=thread_ids]").checked = true;
    }
    submitAction(form, action);
    return true;
  }

  function toggleStar() {
    var thread = threadForm();
    if (thread) {
      return act(thread.querySelector("button[value=unstar]") ? "unstar" : "star");
    }
    var row = cursorRow();
    if (!row) return false;
    return act(row.hasAttribute("data-starred") ? "unstar" : "star");
  }

  function focusField(selector) {
    var scope = threadForm() || listForm();
    var field = scope && scope.querySelector(selector);
    if (!field) return false;
    var menu = field.closest("details");
    if (menu) menu.open = true;
    var row = cursorRow();
    if (row && listForm() && !listForm().querySelector("input[name=thread_ids]:checked")) {
      row.querySelector("input[name=thread_ids]").checked = true;
    }
    field.focus();
    return true;
  }

  function follow(selector) {
    var link = document.querySelector(selector);
    if (!link) return false;
    window.location.href = link.getAttribute("href");
    return true;
  }

  var GO = {
    i: function () { window.location.href = "/"; return true; },
    s: function () { window.location.href = "/starred"; return true; },
    a: function () { window.location.href = "/all"; return true; },
    t: function () { return follow(".sidebar a[data-role=sent]"); },
    d: function () { return follow(".sidebar a[data-role=drafts]"); }
  };

  var KEYS = {
    j: function () { return moveCursor(1); },
    k: function () { return moveCursor(-1); },
    o: function () {
      var row = cursorRow();
      var link = row && row.querySelector("a");
      if (!link) return false;
      remember(row.getAttribute("data-thread-id"));
      window.location.href = link.getAttribute("href");
      return true;
    },
    u: backToList,
    Escape: function () {
      // Esc leaves a conversation unless something on it is open: a composer, a menu, a dialog (theirs first).
      if (document.querySelector("[data-composer], details.menu-wrap[open] :focus, dialog[open]")) return false;
      if (document.body.classList.contains("menu-open")) return false;
      return backToList();
    },
    e: function () { return act("archive"); },
    "#": function () { return act("trash"); },
    "!": function () { return act("spam"); },
    s: toggleStar,
    x: function () {
      var row = cursorRow();
      if (!row) return false;
      var box = row.querySelector("input[name=thread_ids]");
      box.checked = !box.checked;
      showSelection();
      return true;
    },
    I: function () { return act("read"); },
    U: function () { return act("unread"); },
    l: function () { return focusField("select[name=label_id]"); },
    b: function () { return focusField("[name=snooze]"); },  // the snooze menu's first choice
    z: function () { return undo(); },
    "/": function () {
      var box = document.querySelector("[data-search-box]");
      if (!box) return false;
      openMenu(true);
      box.focus();
      box.select();
      return true;
    },
    "?": function () {
      var help = document.getElementById("shortcuts-help");
      if (!help) return false;
      if (help.open) help.close(); else help.showModal();
      return true;
    }
  };

  var pendingG = 0;
  document.addEventListener("keydown", function (e) {
    if (document.body.getAttribute("data-shortcuts") !== "on") return;
    if (e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return;
    if (document.querySelector("dialog[open]") && e.key !== "?" && e.key !== "Escape") return;
    if (pendingG && Date.now() - pendingG < 1500) {
      pendingG = 0;
      if (GO[e.key] && GO[e.key]()) e.preventDefault();
      return;
    }
    if (e.key === "g") { pendingG = Date.now(); e.preventDefault(); return; }
    if (e.key === "Enter" && cursorRow() && e.target === document.body) { if (KEYS.o()) e.preventDefault(); return; }
    var handler = KEYS[e.key];
    if (handler && handler()) e.preventDefault();
  });

  // -- the toast ----------------------------------------------------------------------------------
  var toastTimer = null;
  function undo() {
    var form = document.querySelector("[data-toast] [data-undo-form]");
    if (!form) return false;
    form.submit();
    return true;
  }

  function startToast() {
    var toast = document.querySelector("[data-toast]");
    if (!toast) return;
    // The action's redirect carried the toast in the query: a reload must not show it again.
    var url = new URL(window.location.href);
    ["toast", "undo", "n"].forEach(function (k) { url.searchParams.delete(k); });
    window.history.replaceState(null, "", url.pathname + (url.search || "") + url.hash);
    var undoForm = toast.querySelector("[data-undo-form]");
    if (undoForm) undoForm.elements.next.value = url.pathname + url.search;
    toastTimer = setTimeout(function () { toast.remove(); }, TOAST_SECONDS * 1000);
    toast.querySelector("[data-toast-close]").addEventListener("click", function () {
      clearTimeout(toastTimer);
      toast.remove();
    });
  }

  // -- the phone menu -----------------------------------------------------------------------------
  function openMenu(open) {
    var button = document.querySelector("[data-menu-toggle]");
    if (!button || window.getComputedStyle(button).display === "none") return;
    document.body.classList.toggle("menu-open", open);
    button.setAttribute("aria-expanded", open ? "true" : "false");
  }

  function startMenu() {
    var button = document.querySelector("[data-menu-toggle]");
    if (!button) return;
    button.addEventListener("click", function () {
      openMenu(!document.body.classList.contains("menu-open"));
      if (document.body.classList.contains("menu-open")) {
        var first = document.querySelector("#sidebar a");
        if (first) first.focus();
      }
    });
    document.addEventListener("keydown", function (e) {
      if (e.key === "Escape" && document.body.classList.contains("menu-open")) {
        openMenu(false);
        button.focus();
      }
    });
  }

  // -- conversations: collapsed messages and folded quotes ----------------------------------------
  // What thread.html's frame style hides until "…": quotes and signatures as Gmail, Thunderbird, Proton, Yahoo
  // and Outlook (its reply header and everything after it) write them.
  var FOLDED_IN_HTML = "blockquote, .gmail_quote, .gmail_signature, .moz-cite-prefix, .protonmail_quote, " +
    ".yahoo_quoted, #divRplyFwdMsg, #appendonsend";
  function startConversation() {
    document.querySelectorAll("[data-expand]").forEach(function (row) {
      row.addEventListener("click", function () {
        var message = row.closest(".message");
        message.classList.remove("collapsed");
        row.setAttribute("aria-expanded", "true");
      });
    });
    // HTML bodies: quotes and signatures are hidden by the frame's own style until "…" shows them.
    document.querySelectorAll("iframe[data-html-body]").forEach(function (frame) {
      var toggle = frame.nextElementSibling;
      function fit() { frame.style.height = (frame.contentDocument.documentElement.scrollHeight + 24) + "px"; }
      function check() {
        var doc = frame.contentDocument;
        if (!doc || !toggle || !toggle.hasAttribute("data-fold-toggle")) return;
        toggle.hidden = !doc.querySelector(FOLDED_IN_HTML);
      }
      frame.addEventListener("load", check);
      if (frame.contentDocument && frame.contentDocument.readyState === "complete") check();
      if (toggle && toggle.hasAttribute("data-fold-toggle")) {
        toggle.addEventListener("click", function () {
          var shown = frame.contentDocument.documentElement.classList.toggle("show-quotes");
          toggle.setAttribute("aria-expanded", shown ? "true" : "false");
          fit();
        });
      }
    });
    var expandAll = document.querySelector("[data-expand-all]");
    if (expandAll) {
      expandAll.addEventListener("click", function () {
        document.querySelectorAll(".message.collapsed").forEach(function (m) { m.classList.remove("collapsed"); });
      });
    }
  }

  // -- search: suggestions from the server, recent searches from this browser ---------------------
  function recentSearches() {
    try { return JSON.parse(window.localStorage.getItem(RECENT_KEY) || "[]"); } catch (err) { return []; }
  }

  function rememberSearch(query) {
    query = (query || "").trim();
    if (!query) return;
    var list = recentSearches().filter(function (q) { return q !== query; });
    list.unshift(query);
    try { window.localStorage.setItem(RECENT_KEY, JSON.stringify(list.slice(0, RECENT_MAX))); } catch (err) { /* full */ }
  }

  function startSearch() {
    var box = document.querySelector("[data-search-box]");
    if (!box) return;
    var form = box.form;
    var list = document.getElementById("search-suggestions");
    var index = -1;
    form.addEventListener("submit", function () { rememberSearch(box.value); });
    // The server's suggestions do not know this browser's recent searches: add them when the box is empty.
    document.body.addEventListener("htmx:afterSwap", function (e) {
      if (e.detail.target !== list) return;
      index = -1;
      if (box.value.trim()) return;
      recentSearches().forEach(function (q) {
        var li = document.createElement("li");
        li.setAttribute("role", "option");
        li.setAttribute("data-value", q);
        li.className = "recent";
        li.textContent = q;
        list.appendChild(li);
      });
    });
    function options() { return Array.prototype.slice.call(list.querySelectorAll("li[data-value]")); }
    function choose(li) {
      var value = li.getAttribute("data-value");
      box.value = value;
      list.innerHTML = "";
      if (li.hasAttribute("data-complete")) { box.focus(); return; }  // an operator: keep typing
      rememberSearch(value);
      form.submit();
    }
    list.addEventListener("mousedown", function (e) {
      var li = e.target.closest("li[data-value]");
      if (li) { e.preventDefault(); choose(li); }
    });
    box.addEventListener("keydown", function (e) {
      var all = options();
      if (e.key === "ArrowDown" || e.key === "ArrowUp") {
        if (!all.length) return;
        e.preventDefault();
        index = (index + (e.key === "ArrowDown" ? 1 : -1) + all.length) % all.length;
        all.forEach(function (li, i) { li.setAttribute("aria-selected", i === index ? "true" : "false"); });
      } else if (e.key === "Enter" && index >= 0 && all[index]) {
        e.preventDefault();
        choose(all[index]);
      } else if (e.key === "Escape") {
        list.innerHTML = "";
        box.blur();
      }
    });
    box.addEventListener("blur", function () { setTimeout(function () { list.innerHTML = ""; }, 150); });
  }

  // -- the list's selection: highlight, "3 selected", the select-all box's third state ---------------
  // The bar of bulk actions shows by CSS alone (mail.css, :has(:checked)); this adds the count to it.
  function showSelection() {
    var form = listForm();
    if (!form) return;
    var boxes = form.querySelectorAll("input[name=thread_ids]");
    var n = 0;
    boxes.forEach(function (box) {
      box.closest("li.thread").classList.toggle("selected", box.checked);
      if (box.checked) n++;
    });
    var count = form.querySelector("[data-selected-count]");
    if (count) count.textContent = n ? (form.getAttribute("data-selected-text") || "{n}").replace("{n}", n) : "";
    var page = document.getElementById("select-page");
    if (page) {
      page.checked = n > 0 && n === boxes.length;
      page.indeterminate = n > 0 && n < boxes.length;
    }
    form.classList.toggle("has-selection", n > 0);
  }

  // -- menus (details.menu-wrap): one open at a time, closed by a click elsewhere or Esc --------------
  function startMenus() {
    document.addEventListener("toggle", function (e) {
      var opened = e.target;
      if (!opened.matches || !opened.matches("details.menu-wrap") || !opened.open) return;
      document.querySelectorAll("details.menu-wrap[open]").forEach(function (other) {
        if (other !== opened && !other.contains(opened)) other.open = false;
      });
    }, true);
    document.addEventListener("click", function (e) {
      document.querySelectorAll("details.menu-wrap[open]").forEach(function (menu) {
        if (!menu.contains(e.target)) menu.open = false;
      });
    });
    document.addEventListener("keydown", function (e) {
      if (e.key !== "Escape") return;
      var open = document.querySelectorAll("details.menu-wrap[open]");
      if (!open.length) return;
      var last = open[open.length - 1];
      last.open = false;
      var summary = last.querySelector("summary");
      if (summary) summary.focus();
      e.stopPropagation();
    }, true);
  }

  // -- a row's own actions: on hover by CSS; on a touch screen a long press shows them ---------------
  var LONG_PRESS_MS = 500;
  function startRowActions() {
    var timer = null, pressed = null, moved = false;
    function clear() { if (timer) { clearTimeout(timer); timer = null; } }
    document.addEventListener("touchstart", function (e) {
      var row = e.target.closest && e.target.closest("li.thread");
      if (!row || e.target.closest(".row-actions, input, button")) return;
      moved = false;
      clear();
      timer = setTimeout(function () {
        timer = null;
        document.querySelectorAll("li.thread.actions-open").forEach(function (r) { r.classList.remove("actions-open"); });
        row.classList.add("actions-open");
        pressed = row;
      }, LONG_PRESS_MS);
    }, { passive: true });
    document.addEventListener("touchmove", function () { moved = true; clear(); }, { passive: true });
    document.addEventListener("touchend", clear, { passive: true });
    // The click that ends a long press does not open the conversation; a tap elsewhere hides the actions.
    document.addEventListener("click", function (e) {
      if (pressed && e.target.closest && e.target.closest("li.thread") === pressed && !e.target.closest(".row-actions, .star-toggle")) {
        if (!moved && e.target.closest("a")) e.preventDefault();
        pressed = null;
        return;
      }
      if (!e.target.closest || !e.target.closest(".row-actions")) {
        document.querySelectorAll("li.thread.actions-open").forEach(function (r) { r.classList.remove("actions-open"); });
      }
    }, true);
    document.addEventListener("contextmenu", function (e) {
      if (e.target.closest && e.target.closest("li.thread.actions-open")) e.preventDefault();
    });
  }

  function startList() {
    document.addEventListener("change", function (e) {
      if (e.target.name === "thread_ids" || e.target.id === "select-page") showSelection();
    });
    // The live list swaps rows in (htmx): their boxes start unchecked.
    document.body.addEventListener("htmx:afterSwap", showSelection);
    showSelection();
  }

  document.addEventListener("DOMContentLoaded", function () {
    startToast();  // first: it takes the toast's parameters out of the address the list remembers
    startPlace();
    startMenu();
    startConversation();
    startSearch();
    startList();
    startMenus();
    startRowActions();
  });
})();
