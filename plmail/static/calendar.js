// The calendar's behaviours, as a file so the pages need neither inline scripts nor inline handlers (the CSP):
// - the time grid: events placed from their data attributes (custom properties: --top, --len, --col, --cols),
//   the current time line, the grid scrolled to the working day;
// - drag an event to move it, drag its lower edge to resize it, click or drag on empty grid to create one;
// - the keyboard alternative: on a focused event the arrow keys move it (Shift+arrows change its length),
//   Enter saves, Escape cancels;
// - a move is saved through htmx and answered with the calendar and an undo toast (Undo, or z);
// - a double-click on a month day opens a new event on that day; "All day" hides the time fields it makes moot.
(function () {
  "use strict";

  var STEP = 15;            // minutes a drag or an arrow key snaps to
  var DAY = 24 * 60;
  var TOAST_SECONDS = 10;   // as the mail list's undo toast
  var DRAG_THRESHOLD = 4;   // pixels before a press becomes a drag

  function pad(n) { return (n < 10 ? "0" : "") + n; }
  function clock(minutes) { return pad(Math.floor(minutes / 60)) + ":" + pad(minutes % 60); }

  // Wall times ("YYYY-MM-DDTHH:MM") shifted by minutes, computed in UTC so no browser zone or DST gets in.
  function parseWall(text) {
    var m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})$/.exec(text || "");
    return m ? Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5]) : null;
  }
  function formatWall(ms) {
    var d = new Date(ms);
    return d.getUTCFullYear() + "-" + pad(d.getUTCMonth() + 1) + "-" + pad(d.getUTCDate()) + "T" +
      pad(d.getUTCHours()) + ":" + pad(d.getUTCMinutes());
  }
  function shiftWall(text, minutes) { return formatWall(parseWall(text) + minutes * 60000); }

  function intAttr(el, name, fallback) {
    var v = parseInt(el.getAttribute(name), 10);
    return isNaN(v) ? fallback : v;
  }

  // -- placing events on the grid ----------------------------------------------------------------------
  function place(ev, top, bottom, column, columns) {
    ev.style.setProperty("--top", String(top));
    ev.style.setProperty("--len", String(Math.max(STEP, bottom - top)));
    ev.style.setProperty("--col", String(column));
    ev.style.setProperty("--cols", String(columns));
  }

  function placeFromData(ev) {
    place(ev, intAttr(ev, "data-top", 0), intAttr(ev, "data-bottom", 60),
      intAttr(ev, "data-column", 0), Math.max(1, intAttr(ev, "data-columns", 1)));
  }

  var loadedAt = Date.now();
  function nowMinute(grid) {
    return (intAttr(grid, "data-now", 0) + Math.floor((Date.now() - loadedAt) / 60000)) % DAY;
  }

  function layout(root) {
    (root || document).querySelectorAll("[data-time-grid]").forEach(function (grid) {
      grid.querySelectorAll(".grid-event").forEach(placeFromData);
      var line = grid.querySelector("[data-now-line]");
      if (line) line.style.setProperty("--now", String(nowMinute(grid)));
      grid.classList.add("laid-out");
      var scroller = grid.querySelector("[data-grid-scroll]");
      if (scroller && !scroller.hasAttribute("data-scrolled")) {
        // Today: the current time, an hour and a half from the top. Other days: 07:00, or earlier when an
        // event of the shown days starts earlier (as calendars do).
        var first = 7 * 60;
        grid.querySelectorAll(".grid-event").forEach(function (ev) { first = Math.min(first, intAttr(ev, "data-top", first)); });
        var from = line ? nowMinute(grid) - 90 : first - 30;
        scroller.scrollTop = Math.max(0, from) * hourHeight(grid) / 60;
        scroller.setAttribute("data-scrolled", "");
      }
    });
  }

  setInterval(function () {
    document.querySelectorAll("[data-time-grid]").forEach(function (grid) {
      var line = grid.querySelector("[data-now-line]");
      if (line) line.style.setProperty("--now", String(nowMinute(grid)));
    });
  }, 60000);

  function hourHeight(grid) {
    var hour = grid.querySelector(".tg-hour");
    return hour ? hour.getBoundingClientRect().height : 48;
  }

  function columnsOf(grid) { return Array.prototype.slice.call(grid.querySelectorAll(".day-col")); }

  function columnAt(grid, x) {
    var cols = columnsOf(grid);
    for (var i = 0; i < cols.length; i++) {
      var r = cols[i].getBoundingClientRect();
      if (x >= r.left && x < r.right) return i;
    }
    if (!cols.length) return -1;
    return x < cols[0].getBoundingClientRect().left ? 0 : cols.length - 1;
  }

  function view() { return document.querySelector(".calendar-view"); }

  function announce(text) {
    var live = document.querySelector("[data-cal-live]");
    if (live) live.textContent = text;
  }

  // -- saving a move --------------------------------------------------------------------------------------
  var refocus = null;  // the event to focus again once the calendar comes back (a keyboard move)

  function save(ev, minutesShift, endShift, keyboard) {
    var section = view();
    var values = {
      start: shiftWall(ev.getAttribute("data-starts"), minutesShift),
      end: shiftWall(ev.getAttribute("data-ends"), minutesShift + endShift),
      occurrence: ev.getAttribute("data-occurrence") || "",
      view: section ? section.getAttribute("data-view") : "week",
      day: section ? section.getAttribute("data-anchor") : ""
    };
    refocus = keyboard ? { id: ev.getAttribute("data-event-id"), occurrence: values.occurrence } : null;
    window.htmx.ajax("POST", "/calendar/event/" + ev.getAttribute("data-event-id") + "/move",
      { source: ev, target: "#calendar-body", swap: "innerHTML", values: values });
  }

  // -- dragging: move, resize, create -----------------------------------------------------------------------
  var drag = null;
  var swallowClick = false;

  document.addEventListener("pointerdown", function (e) {
    if (e.button !== 0 || !(e.target instanceof Element)) return;
    var grid = e.target.closest("[data-time-grid]");
    if (!grid) return;
    var ev = e.target.closest(".grid-event");
    var col = e.target.closest(".day-col");
    if (ev && !ev.hasAttribute("data-movable")) return;
    if (!ev && !col) return;
    var cols = columnsOf(grid);
    drag = {
      grid: grid, ev: ev, x: e.clientX, y: e.clientY, active: false, pointer: e.pointerId,
      resize: !!(ev && e.target.closest("[data-resize]")),
      fromCol: ev ? cols.indexOf(ev.closest(".day-col")) : cols.indexOf(col),
      ppm: hourHeight(grid) / 60, minutes: 0, days: 0
    };
    if (!ev) {
      var rect = col.getBoundingClientRect();
      drag.start = Math.floor((e.clientY - rect.top) / drag.ppm / STEP) * STEP;
      drag.start = Math.max(0, Math.min(DAY - STEP, drag.start));
    } else {
      drag.top = intAttr(ev, "data-top", 0);
      drag.bottom = intAttr(ev, "data-bottom", 60);
      e.preventDefault();  // no text selection, no native link drag
    }
  });

  document.addEventListener("pointermove", function (e) {
    if (!drag || e.pointerId !== drag.pointer) return;
    var dy = e.clientY - drag.y, dx = e.clientX - drag.x;
    if (!drag.active && Math.abs(dy) < DRAG_THRESHOLD && Math.abs(dx) < DRAG_THRESHOLD) return;
    if (!drag.active) {
      drag.active = true;
      document.body.classList.add("grid-dragging");
      if (drag.ev) drag.ev.classList.add("dragging");
    }
    var minutes = Math.round(dy / drag.ppm / STEP) * STEP;
    var cols = columnsOf(drag.grid);
    if (drag.ev) {
      if (drag.resize) {
        minutes = Math.max(minutes, STEP - (drag.bottom - drag.top));
        minutes = Math.min(minutes, DAY - drag.bottom);
        drag.minutes = minutes;
        place(drag.ev, drag.top, drag.bottom + minutes, 0, 1);
      } else {
        minutes = Math.max(-drag.top, Math.min(DAY - STEP - drag.top, minutes));
        var target = columnAt(drag.grid, e.clientX);
        drag.minutes = minutes;
        drag.days = target - drag.fromCol;
        if (cols[target] && drag.ev.parentNode !== cols[target]) cols[target].appendChild(drag.ev);
        place(drag.ev, drag.top + minutes, drag.bottom + minutes, 0, 1);
      }
      var shown = drag.resize ? [drag.top, drag.bottom + drag.minutes] : [drag.top + drag.minutes, drag.bottom + drag.minutes];
      announce(clock(shown[0]) + "–" + clock(shown[1] % DAY));
    } else {
      var col = cols[drag.fromCol];
      var rect = col.getBoundingClientRect();
      var at = Math.ceil((e.clientY - rect.top) / drag.ppm / STEP) * STEP;
      var end = Math.max(drag.start + STEP, Math.min(DAY, at));
      if (!drag.ghost) {
        drag.ghost = document.createElement("div");
        drag.ghost.className = "grid-ghost";
        col.appendChild(drag.ghost);
      }
      drag.end = end;
      drag.ghost.style.setProperty("--top", String(drag.start));
      drag.ghost.style.setProperty("--len", String(end - drag.start));
      drag.ghost.textContent = (view().getAttribute("data-msg-new") || "") + " " + clock(drag.start) + "–" + clock(end % DAY);
    }
  });

  function finishDrag(e, cancelled) {
    if (!drag || e.pointerId !== drag.pointer) return;
    var d = drag;
    drag = null;
    document.body.classList.remove("grid-dragging");
    if (d.ghost) d.ghost.remove();
    if (d.ev) {
      d.ev.classList.remove("dragging");
      if (!d.active) return;  // a plain click: the link opens the event
      swallowClick = true;
      setTimeout(function () { swallowClick = false; }, 0);
      if (cancelled || (d.minutes === 0 && d.days === 0)) {
        var home = columnsOf(d.grid)[d.fromCol];
        if (home && d.ev.parentNode !== home) home.appendChild(d.ev);
        placeFromData(d.ev);
        return;
      }
      if (d.resize) save(d.ev, 0, d.minutes, false);
      else save(d.ev, d.minutes + d.days * DAY, 0, false);
      return;
    }
    if (cancelled) return;
    // A click on empty grid: an hour from the half hour clicked; a drag: the span it covered.
    var day = columnsOf(d.grid)[d.fromCol].getAttribute("data-day");
    var start = d.active ? d.start : Math.floor(d.start / 30) * 30;
    var end = d.active ? d.end : Math.min(DAY, start + 60);
    window.location.assign("/calendar/new?day=" + encodeURIComponent(day) + "&start=" + clock(start) +
      "&end=" + (end >= DAY ? "24:00" : clock(end)));
  }

  document.addEventListener("pointerup", function (e) { finishDrag(e, false); });
  document.addEventListener("pointercancel", function (e) { finishDrag(e, true); });
  document.addEventListener("click", function (e) {
    if (swallowClick && e.target instanceof Element && e.target.closest(".grid-event")) {
      e.preventDefault();
      swallowClick = false;
    }
  }, true);
  document.addEventListener("dragstart", function (e) {
    if (e.target instanceof Element && e.target.closest && e.target.closest("[data-time-grid]")) e.preventDefault();
  });

  // -- the keyboard alternative ---------------------------------------------------------------------------
  function pendingOf(ev) {
    if (!ev._pending) ev._pending = { minutes: 0, length: 0, days: 0 };
    return ev._pending;
  }

  function showPending(ev) {
    var p = pendingOf(ev);
    var grid = ev.closest("[data-time-grid]");
    var top = intAttr(ev, "data-top", 0), bottom = intAttr(ev, "data-bottom", 60);
    var cols = columnsOf(grid);
    var home = cols.indexOf(ev.closest(".day-col"));
    if (ev._home === undefined) ev._home = home;
    var target = cols[ev._home + p.days];
    if (target && ev.parentNode !== target) { target.appendChild(ev); ev.focus(); }
    place(ev, top + p.minutes, bottom + p.minutes + p.length, 0, 1);
    ev.classList.add("pending");
    var section = view();
    var start = shiftWall(ev.getAttribute("data-starts"), p.minutes + p.days * DAY);
    var end = shiftWall(ev.getAttribute("data-ends"), p.minutes + p.days * DAY + p.length);
    var when = start.replace("T", " ") + "–" + end.slice(11);
    announce((section.getAttribute("data-msg-pending") || "{when}").replace("{when}", when));
  }

  function resetPending(ev) {
    var cols = columnsOf(ev.closest("[data-time-grid]"));
    if (ev._home !== undefined && cols[ev._home] && ev.parentNode !== cols[ev._home]) { cols[ev._home].appendChild(ev); ev.focus(); }
    ev._pending = null;
    ev._home = undefined;
    ev.classList.remove("pending");
    placeFromData(ev);
  }

  document.addEventListener("keydown", function (e) {
    var ev = e.target instanceof Element && e.target.closest(".grid-event[data-movable]");
    if (!ev || e.ctrlKey || e.metaKey || e.altKey) return;
    var p = pendingOf(ev);
    var top = intAttr(ev, "data-top", 0), bottom = intAttr(ev, "data-bottom", 60);
    var cols = columnsOf(ev.closest("[data-time-grid]"));
    var home = ev._home !== undefined ? ev._home : cols.indexOf(ev.closest(".day-col"));
    var step = e.key === "ArrowDown" ? STEP : e.key === "ArrowUp" ? -STEP : 0;
    if (step && e.shiftKey) {
      p.length = Math.max(STEP - (bottom - top), Math.min(DAY - bottom - p.minutes, p.length + step));
    } else if (step) {
      p.minutes = Math.max(-top, Math.min(DAY - STEP - top, p.minutes + step));
    } else if (e.key === "ArrowLeft" || e.key === "ArrowRight") {
      var days = p.days + (e.key === "ArrowRight" ? 1 : -1);
      if (home + days < 0 || home + days >= cols.length) return;
      p.days = days;
    } else if (e.key === "Enter" && (p.minutes || p.length || p.days)) {
      e.preventDefault();
      var shift = p.minutes + p.days * DAY, length = p.length;
      resetPending(ev);
      save(ev, shift, length, true);
      return;
    } else if (e.key === "Escape" && ev.classList.contains("pending")) {
      e.preventDefault();
      e.stopPropagation();
      resetPending(ev);
      announce("");
      return;
    } else {
      return;
    }
    e.preventDefault();
    showPending(ev);
  });

  // -- the undo toast of a move -------------------------------------------------------------------------------
  function startToast(root) {
    var toast = (root || document).querySelector("[data-calendar-toast]");
    if (!toast) return;
    var timer = setTimeout(function () { toast.remove(); }, TOAST_SECONDS * 1000);
    var close = toast.querySelector("[data-toast-close]");
    if (close) close.addEventListener("click", function () { clearTimeout(timer); toast.remove(); });
  }

  document.addEventListener("htmx:afterSwap", function (e) {
    var target = e.detail && e.detail.target;
    if (!target || target.id !== "calendar-body") return;
    layout(target);
    startToast(target);
    if (refocus) {
      var wanted = refocus;
      refocus = null;
      var found = Array.prototype.slice.call(target.querySelectorAll('.grid-event[data-event-id="' + wanted.id + '"]'))
        .filter(function (el) { return (el.getAttribute("data-occurrence") || "") === wanted.occurrence; })[0];
      if (found) found.focus();
    }
  });

  // -- the month: a double-click on a day opens a new event on it ---------------------------------------------
  document.addEventListener("dblclick", function (event) {
    var target = event.target;
    if (!(target instanceof Element)) return;
    if (target.closest("a, button, input, select, textarea, .entry, [data-time-grid]")) return;
    var day = target.closest(".calendar-view [data-day]");
    if (day) {
      event.preventDefault();
      window.location.assign("/calendar/new?day=" + encodeURIComponent(day.getAttribute("data-day")));
    }
  });

  // -- the editor -----------------------------------------------------------------------------------------------
  function syncAllDay(form) {
    var box = form.querySelector("[data-all-day]");
    if (!box) return;
    form.querySelectorAll("[data-time]").forEach(function (input) {
      input.hidden = box.checked;
      input.disabled = box.checked;
      input.required = !box.checked;
    });
  }

  document.addEventListener("change", function (event) {
    var target = event.target;
    if (target instanceof Element && target.matches("[data-all-day]")) {
      syncAllDay(target.closest("form"));
    }
  });

  function ready() {
    document.querySelectorAll("[data-event-form]").forEach(syncAllDay);
    layout(document);
    startToast(document);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", ready);
  else ready();
})();
