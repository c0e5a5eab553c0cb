// The installable app's page half: registers the service worker (sw.js) for the signed-in pages, and asks it to
// refresh its offline copies of the inbox whenever the inbox is shown.
(function () {
  "use strict";
  if (!("serviceWorker" in navigator)) return;
  var signedIn = document.body && document.body.hasAttribute("data-signed-in");

  function askForCopies(worker) {
    if (worker && location.pathname === "/") worker.postMessage({type: "refresh-offline-copies"});
  }

  if (!signedIn) return;
  navigator.serviceWorker.register("/sw.js", {scope: "/"}).then(function () {
    return navigator.serviceWorker.ready;
  }).then(function (registration) {
    askForCopies(registration.active);
  }).catch(function () { /* no service worker (private window, http on a remote host): the app works online */ });
}());
