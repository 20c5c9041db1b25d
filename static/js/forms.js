// Every page: a form sent the plain way (not by htmx) shows nothing until the next page arrives, and
// on a club's slow wifi a second tap sent it again: "Start the battle" started two battles, "Add
// structure" added two. For a while (as long as htmx waits for an answer: connection.js) such
// a form is not sent again; if the page is still here after that, the browser gave up on it (Stop)
// and a tap sends it anew. Without JavaScript the browser sends it twice as before.
(function () {
  "use strict";

  var WAIT_MS = 20000;

  document.addEventListener("submit", function (event) {
    var form = event.target;
    // htmx has taken the submit over (it prevents the browser's own); a GET only asks again.
    if (event.defaultPrevented || (form.getAttribute("method") || "get").toLowerCase() !== "post") return;
    var sent = Number(form.getAttribute("data-sent"));
    if (sent && Date.now() - sent < WAIT_MS) {
      event.preventDefault();
      return;
    }
    form.setAttribute("data-sent", String(Date.now()));
  });

  // A save refused because someone else changed the same thing since the page was drawn (409) answers
  // with the form again, saying what they changed and carrying it, so that saving again is a choice:
  // htmx swaps no error answer, and the tap would seem to have done nothing.
  document.addEventListener("htmx:beforeSwap", function (event) {
    if (event.detail.xhr.status === 409) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });

  // The messages stay in view only on a page that arrived at a #fragment (redoubt.css): a link within
  // the page ("Preview ↓", "Skip to content") is not where a save landed, and must not pin them over fields.
  window.addEventListener("hashchange", function () { document.body.classList.add("jumped"); });

  // Back on a page the browser kept (bfcache): its forms may be sent again.
  window.addEventListener("pageshow", function () {
    document.querySelectorAll("form[data-sent]").forEach(function (form) { form.removeAttribute("data-sent"); });
  });
})();
