// plmail's service worker (served as /sw.js, so its scope is the whole app).
// - The app shell (styles, scripts, icons, the offline page) is kept at install and answered from the cache while
//   a fresh copy is fetched behind it.
// - Pages go to the network first; when the server is out of reach, the copy kept here answers, else the offline
//   page. The inbox and its newest 50 conversations are copied whenever a page asks (pwa.js does on each inbox
//   visit), and only those whose stamp changed are fetched again.
"use strict";

var SHELL = "plmail-shell-v1";
var MAIL = "plmail-mail-v1";
var QUEUE = "plmail-queue-v1";  // actions made offline, one entry each, replayed in the order they were made
var INDEX = "/offline/inbox.json";
var OFFLINE_PAGE = "/offline";
var COPY_HEADER = "X-Plmail-Offline-Copy";  // the copy is no reading: the server leaves the conversation unread
var REFRESH_GAP_MS = 15000;
var SHELL_FILES = [
  OFFLINE_PAGE,
  "/static/plmail.css", "/static/print.css", "/static/htmx.min.js", "/static/live.js", "/static/pages.js",
  "/static/keys.js", "/static/app.js", "/static/pwa.js", "/static/compose.js",
  "/static/trix/trix.css", "/static/trix/trix-defaults.css", "/static/trix/trix.umd.min.js",
  "/static/icons/plmail.svg", "/static/icons/plmail-192.png", "/static/icons/plmail-180.png"
];

self.addEventListener("install", function (event) {
  event.waitUntil(caches.open(SHELL).then(function (cache) {
    return cache.addAll(SHELL_FILES.map(function (url) { return new Request(url, {cache: "reload"}); }));
  }).then(function () { return self.skipWaiting(); }));
});

self.addEventListener("activate", function (event) {
  event.waitUntil(caches.keys().then(function (names) {
    return Promise.all(names.filter(function (name) { return name !== SHELL && name !== MAIL && name !== QUEUE; })
      .map(function (name) { return caches.delete(name); }));
  }).then(function () { return self.clients.claim(); }));
});

function staticFile(request) {
  return caches.open(SHELL).then(function (cache) {
    return cache.match(request).then(function (kept) {
      var fresh = fetch(request).then(function (response) {
        if (response.ok) cache.put(request, response.clone());
        return response;
      });
      if (kept) {
        fresh.catch(function () { /* offline: the kept copy answered */ });
        return kept;
      }
      return fresh;
    });
  });
}

function keptPage(request) {
  var url = new URL(request.url);
  return caches.open(MAIL).then(function (cache) {
    // The page's own query (a tab, "queued=…") is no other page: the copy of the path answers.
    return cache.match(url.pathname, {ignoreSearch: true});
  }).then(function (kept) {
    return kept || caches.match(OFFLINE_PAGE, {cacheName: SHELL});
  });
}

function page(request) {
  return fetch(request).catch(function () { return keptPage(request); });
}

self.addEventListener("fetch", function (event) {
  var request = event.request;
  var url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (request.method === "POST" && url.pathname === "/actions" && request.mode === "navigate") {
    var kept = request.clone();
    event.respondWith(fetch(request).catch(function () { return queueAction(kept); }));
    return;
  }
  if (request.method === "POST" && (url.pathname === "/compose" || url.pathname === "/compose/")) {
    var send = request.clone();
    event.respondWith(fetch(request).catch(function (error) { return queueSend(send, error); }));
    return;
  }
  if (request.method !== "GET") return;
  if (url.pathname.indexOf("/static/") === 0) {
    event.respondWith(staticFile(request));
  } else if (request.mode === "navigate") {
    event.respondWith(page(request));
  }
});

// -- the offline copies of the inbox -------------------------------------------------------------------------
var refreshing = null;
var lastRefresh = 0;

function copy(cache, url) {
  return fetch(url, {headers: {[COPY_HEADER]: "1"}, credentials: "same-origin", redirect: "error"})
    .then(function (response) {
      if (!response.ok) throw new Error(url + " answered " + response.status);
      return cache.put(url, response);
    });
}

function refreshMail() {
  return caches.open(MAIL).then(function (cache) {
    return fetch(INDEX, {credentials: "same-origin", redirect: "error"}).then(function (response) {
      if (!response.ok) throw new Error("the list of conversations answered " + response.status);
      return response.json();
    }).then(function (index) {
      return cache.match(INDEX).then(function (before) { return before ? before.json() : {conversations: []}; })
        .then(function (previous) {
          var stamps = {};
          previous.conversations.forEach(function (c) { stamps[c.url] = c.stamp; });
          var wanted = {};
          index.conversations.forEach(function (c) { wanted[c.url] = true; });
          return cache.keys().then(function (requests) {
            var have = {};
            var drops = [];
            requests.forEach(function (r) {
              var path = new URL(r.url).pathname;
              have[path] = true;
              if (path.indexOf("/thread/") === 0 && !wanted[path]) drops.push(cache.delete(r));
            });
            var fetches = index.conversations.filter(function (c) {
              return !have[c.url] || stamps[c.url] !== c.stamp;
            }).map(function (c) { return copy(cache, c.url).catch(function () { delete wanted[c.url]; }); });
            return Promise.all(drops.concat(fetches, [copy(cache, "/")]));
          }).then(function () {
            // Kept last, so a copy that failed is fetched again next time.
            var kept = index.conversations.filter(function (c) { return wanted[c.url]; });
            return cache.put(INDEX, new Response(JSON.stringify({conversations: kept}),
                                                {headers: {"Content-Type": "application/json"}}));
          });
        });
    });
  });
}

function refreshOnce(force) {
  if (refreshing) return refreshing;
  if (!force && Date.now() - lastRefresh < REFRESH_GAP_MS) return Promise.resolve();
  refreshing = refreshMail().catch(function () { /* offline or signed out: the copies stay as they were */ })
    .then(function () { lastRefresh = Date.now(); refreshing = null; });
  return refreshing;
}

self.addEventListener("message", function (event) {
  var data = event.data || {};
  if (data.type === "replay-queue") {
    event.waitUntil(replayOnce().then(function (left) {
      if (event.source) event.source.postMessage({type: "queue-replayed", left: left});
    }));
    return;
  }
  if (data.type === "refresh-offline-copies") {
    var done = refreshOnce(Boolean(data.force)).then(function () {
      if (event.source) event.source.postMessage({type: "offline-copies-refreshed"});
    });
    event.waitUntil(done);
  }
});

// -- notifications (Web Push, RFC 8030/8291) ---------------------------------------------------------------
// The server sends what a notification shows, in the user's language: sender and subject (or only "New mail",
// the lock-screen setting), one notification per conversation (tag), with Archive and Mark read. Those post the
// notification's signed token to /push/action with an idempotency key made of the token and the action, so a
// repeated click or a retried request is applied once.
self.addEventListener("push", function (event) {
  var data = {};
  try { data = event.data ? event.data.json() : {}; } catch (err) { data = {}; }
  if (data["@type"] === "Reminder") {  // a calendar reminder: "<title> at <time>", opening the event
    event.waitUntil(self.registration.showNotification(data.title || "plmail", {
      body: data.body || "", tag: data.tag, icon: "/static/icons/plmail-192.png",
      badge: "/static/icons/plmail-maskable-192.png", data: {url: data.url}
    }));
    return;
  }
  if (data["@type"] !== "NewMail") return;
  event.waitUntil(self.registration.showNotification(data.title || "plmail", {
    body: data.body || "",
    tag: data.tag,
    renotify: true,
    icon: "/static/icons/plmail-192.png",
    badge: "/static/icons/plmail-maskable-192.png",
    data: {url: data.url, token: data.token, threadId: data.threadId},
    actions: data.actions || []
  }));
});

function notificationAction(notification, action) {
  var data = notification.data || {};
  return fetch("/push/action", {
    method: "POST", credentials: "same-origin",
    headers: {"Content-Type": "application/json"},
    body: JSON.stringify({token: data.token, action: action, key: data.token + ":" + action})
  });
}

self.addEventListener("notificationclick", function (event) {
  var notification = event.notification;
  notification.close();
  if (event.action === "archive" || event.action === "read") {
    event.waitUntil(notificationAction(notification, event.action));
    return;
  }
  var url = (notification.data && notification.data.url) || "/";
  event.waitUntil(self.clients.matchAll({type: "window", includeUncontrolled: true}).then(function (windows) {
    for (var i = 0; i < windows.length; i++) {
      if ("focus" in windows[i]) return windows[i].navigate(url).then(function (w) { return w && w.focus(); });
    }
    return self.clients.openWindow(url);
  }));
});

// -- the offline queue ------------------------------------------------------------------------------------------
// Archive, read/unread and star/unstar pressed while the server is out of reach are kept here, each with an
// idempotency key made now, and sent again in order once it answers (Background Sync where the browser has it,
// else when a page of plmail loads or comes back online). The server applies each key once and answers 409 for
// one it has applied, so a replay whose answer was lost changes nothing.
var QUEUEABLE = ["archive", "read", "unread", "star", "unstar"];

function queueAction(request) {
  return request.formData().then(function (form) {
    var action = form.get("action");
    if (QUEUEABLE.indexOf(action) < 0) return keptPage(new Request("/offline"));
    var entry = {key: self.crypto.randomUUID(), action: action, threadIds: form.getAll("thread_ids"),
                 csrf: form.get("_csrf_token") || "", at: Date.now()};
    var next = form.get("next") || "/";
    return caches.open(QUEUE).then(function (cache) {
      return cache.put("/offline/queue/" + entry.at + "-" + entry.key, new Response(JSON.stringify(entry)));
    }).then(function () {
      if (self.registration.sync) self.registration.sync.register("plmail-queue").catch(function () {});
      var target = new URL(next.charAt(0) === "/" && next.charAt(1) !== "/" ? next : "/", self.location.origin);
      target.searchParams.set("queued", action);
      return Response.redirect(target.href, 303);
    });
  });
}

// A message sent from the composer while offline is kept whole (its form, attachments and all) with an
// idempotency key, and posted again on reconnect: the server sends it once, and answers 409 to a replay.
function queueSend(request, error) {
  var navigate = request.mode === "navigate";
  return request.formData().then(function (form) {
    var sending = (form.get("action") === "send" || !!form.get("schedule")) && !form.get("autosave");
    if (!sending) throw error;  // only a send waits; a save or a discard fails as it would without a worker
    var key = self.crypto.randomUUID();
    var at = Date.now();
    var kept = new Response(form, {headers: {"X-Queued-Send": key, "X-Csrf": form.get("_csrf_token") || ""}});
    return caches.open(QUEUE).then(function (cache) {
      return cache.put("/offline/queue/" + at + "-" + key, kept);
    }).then(function () {
      if (self.registration.sync) self.registration.sync.register("plmail-queue").catch(function () {});
      if (navigate) return Response.redirect(new URL("/?queued=send", self.location.origin).href, 303);
      // The composer (compose.js) sees this header and says the message goes when plmail is back online.
      return new Response("", {status: 202, headers: {"X-Plmail-Queued": "send"}});
    });
  });
}

function replaySend(kept) {
  var key = kept.headers.get("X-Queued-Send");
  var csrf = kept.headers.get("X-Csrf") || "";
  return kept.formData().then(function (form) {
    return fetch("/compose", {method: "POST", body: form, credentials: "same-origin", redirect: "manual",
                              headers: {"Idempotency-Key": key, "x-csrftoken": csrf}});
  });
}

function replay(cache, request) {
  return cache.match(request).then(function (kept) {
    if (kept.headers.get("X-Queued-Send")) return replaySend(kept);
    return kept.json().then(replayAction);
  }).then(function (response) {
    // Applied now (a redirect), applied before (409), or refused for good (signed out, gone): done with it.
    var settled = response.type === "opaqueredirect" || response.ok || (response.status >= 400 &&
      response.status < 500 && response.status !== 429);
    if (!settled) throw new Error("the server answered " + response.status);
    return cache.delete(request);
  });
}

function replayAction(entry) {
  return Promise.resolve(entry).then(function (entry) {
    var body = new URLSearchParams();
    body.append("action", entry.action);
    entry.threadIds.forEach(function (id) { body.append("thread_ids", id); });
    body.append("next", "/");
    body.append("_csrf_token", entry.csrf);
    return fetch("/actions", {method: "POST", body: body, credentials: "same-origin", redirect: "manual",
                              headers: {"Idempotency-Key": entry.key, "x-csrftoken": entry.csrf}});
  });
}

var replaying = null;

function replayOnce() {
  if (replaying) return replaying;
  replaying = caches.open(QUEUE).then(function (cache) {
    return cache.keys().then(function (requests) {
      requests.sort(function (a, b) { return a.url < b.url ? -1 : 1; });
      return requests.reduce(function (done, request) {
        return done.then(function () { return replay(cache, request); });
      }, Promise.resolve()).then(function () { return 0; }, function () {
        return cache.keys().then(function (left) { return left.length; });
      });
    });
  }).then(function (left) { replaying = null; return left; });
  return replaying;
}

self.addEventListener("sync", function (event) {
  if (event.tag === "plmail-queue") {
    event.waitUntil(replayOnce().then(function (left) {
      if (left) throw new Error(left + " actions still wait for the server");
    }));
  }
});
