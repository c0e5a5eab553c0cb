// Open list pages follow the mail: when plmail announces a change to one of the user's accounts (new mail,
// a thread moved by the assistant, a change from a phone), the list is fetched again and swapped in place.
(function () {
  "use strict";
  if (!window.EventSource) return;
  var pending = null;
  var source = null;

  function busy(region) {
    // Never pull the list from under someone who is selecting conversations or typing.
    return region.querySelector("input[type=checkbox]:checked") !== null ||
      (document.activeElement && region.contains(document.activeElement) &&
       /^(INPUT|SELECT|TEXTAREA)$/.test(document.activeElement.tagName));
  }

  function refresh() {
    var region = document.getElementById("live-region");
    if (!region || !window.htmx) return;
    if (busy(region)) { pending = setTimeout(refresh, 2000); return; }
    window.htmx.ajax("GET", window.location.pathname + window.location.search,
                     { target: "#live-region", select: "#live-region", swap: "outerHTML" });
  }

  function connect() {
    if (!document.getElementById("live-region")) return;
    source = new EventSource("/events");
    source.addEventListener("mail", function () {
      clearTimeout(pending);
      pending = setTimeout(refresh, 250);  // one refresh for a burst of announcements
    });
  }

  document.addEventListener("DOMContentLoaded", connect);
  window.addEventListener("pagehide", function () { if (source) source.close(); });
})();
