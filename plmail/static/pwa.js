// The installable app's page half: registers the service worker (sw.js) for the signed-in pages, asks it to refresh
// its offline copies of the inbox whenever the inbox is shown, and runs Settings → Notifications' "Turn on for
// this device" (the browser's PushManager subscription, stored on the server for this browser's session).
(function () {
  "use strict";
  if (!("serviceWorker" in navigator)) return;
  if (!document.body || !document.body.hasAttribute("data-signed-in")) return;

  function csrfToken() {
    try { return JSON.parse(document.body.getAttribute("hx-headers") || "{}")["x-csrftoken"] || ""; }
    catch (err) { return ""; }
  }

  var ready = navigator.serviceWorker.register("/sw.js", {scope: "/"}).then(function () {
    return navigator.serviceWorker.ready;
  });
  ready.then(function (registration) {
    if (!registration.active) return;
    // Actions made offline go to the server first, then the copies are refreshed with their outcome.
    registration.active.postMessage({type: "replay-queue"});
    if (location.pathname === "/") registration.active.postMessage({type: "refresh-offline-copies"});
  }).catch(function () { /* no service worker (private window, http on a remote host): the app works online */ });
  function askReplay() {
    ready.then(function (registration) {
      if (registration.active) registration.active.postMessage({type: "replay-queue"});
    });
  }
  window.addEventListener("online", askReplay);
  // A replay that met no server (the network not quite back, or one already failing when "online" came) leaves
  // actions queued: ask again, waiting longer each time, while this page is open and the browser is online.
  var retryWait = 1000;
  navigator.serviceWorker.addEventListener("message", function (event) {
    var data = event.data || {};
    if (data.type !== "queue-replayed") return;
    if (!data.left) { retryWait = 1000; return; }
    setTimeout(function () { if (navigator.onLine) askReplay(); }, retryWait);
    retryWait = Math.min(retryWait * 2, 60000);
  });

  // An action the service worker kept for later (it redirected here with ?queued=…) says so.
  var queued = document.querySelector("template[data-offline-queued]");
  if (queued && new URLSearchParams(location.search).has("queued")) {
    document.body.appendChild(queued.content.cloneNode(true));
  }

  // -- Settings → Notifications ---------------------------------------------------------------------------
  var section = document.querySelector("[data-push-device]");
  if (!section) return;

  function show(name) {
    var element = section.querySelector("[data-push-" + name + "]");
    if (element) element.hidden = false;
  }

  function serverKey(base64url) {
    var padded = (base64url + "===".slice((base64url.length + 3) % 4)).replace(/-/g, "+").replace(/_/g, "/");
    var raw = atob(padded);
    var bytes = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
    return bytes;
  }

  var supported = "PushManager" in window && "Notification" in window;
  var on = section.querySelector("[data-push-on]");
  if (!supported) {
    if (on) on.disabled = true;
    show("unsupported");
  }

  if (on && supported) {
    on.addEventListener("click", function () {
      on.disabled = true;
      Notification.requestPermission().then(function (permission) {
        if (permission !== "granted") { show("denied"); throw null; }
        return ready;
      }).then(function (registration) {
        return registration.pushManager.getSubscription().then(function (existing) {
          return existing || registration.pushManager.subscribe({
            userVisibleOnly: true, applicationServerKey: serverKey(section.getAttribute("data-vapid-key"))});
        });
      }).then(function (subscription) {
        return fetch("/settings/notifications/device", {
          method: "POST", credentials: "same-origin",
          headers: {"Content-Type": "application/json", "x-csrftoken": csrfToken()},
          body: JSON.stringify(subscription.toJSON())});
      }).then(function (response) {
        if (response.ok) { location.reload(); return null; }
        return response.json().then(function (body) {
          var error = section.querySelector("[data-push-error]");
          error.textContent = body.error || "";
          error.hidden = false;
          on.disabled = false;
        });
      }).catch(function (err) {
        if (err !== null) show("failed");
        on.disabled = false;
      });
    });
  }

  var off = section.querySelector("[data-push-off]");
  if (off) {
    off.addEventListener("submit", function (event) {
      // The browser's own subscription goes too, so its push service stops holding messages for it.
      event.preventDefault();
      ready.then(function (registration) { return registration.pushManager.getSubscription(); })
        .then(function (subscription) { return subscription && subscription.unsubscribe(); })
        .catch(function () { /* the server's row is what sends; removing it below is what counts */ })
        .then(function () { off.submit(); });
    });
  }
}());
