// The calendar's few behaviours, as a file so the pages need neither inline scripts nor inline handlers:
// a double-click on a day opens a new event on that day; "All day" hides the time fields it makes moot.
(function () {
  "use strict";

  function newEventOn(day) {
    window.location.assign("/calendar/new?day=" + encodeURIComponent(day));
  }

  document.addEventListener("dblclick", function (event) {
    var target = event.target;
    if (!(target instanceof Element)) return;
    if (target.closest("a, button, input, select, textarea, .entry")) return;  // an event or a link is not a day
    var day = target.closest(".calendar-view [data-day]");
    if (day) {
      event.preventDefault();
      newEventOn(day.getAttribute("data-day"));
    }
  });

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
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", ready);
  else ready();
})();
