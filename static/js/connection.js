// Every page that sends htmx requests: a club's wifi drops, a phone sleeps, the server fails. A request
// that gets no good answer says so at the foot of the screen (#connection, in base.html), instead of a
// button that wakes up again as if nothing happened. The poll's trouble (the battle screen's #poller)
// clears with its next answer, a tap's with the next tap that gets one. What to do after a lost tap
// depends on the page, so the notice carries its words (data-no-answer, data-failed).
(function () {
  "use strict";

  if (window.htmx) htmx.config.timeout = 20000;
  var troubles = {};
  var POLL = "No answer from the server: this page may be out of date. It keeps asking every 2 seconds.";

  function notice() {
    return document.getElementById("connection");
  }
  function show() {
    var box = notice();
    if (!box) return;
    var text = troubles.tap || troubles.poll || "";
    box.querySelector(".connection-text").textContent = text;
    box.hidden = !text;
  }
  function kindOf(event) {
    return event.detail.elt && event.detail.elt.id === "poller" ? "poll" : "tap";
  }
  function pageSays(name) {
    var box = notice();
    return (box && box.getAttribute(name)) || "";
  }

  function noAnswer(event) {
    var kind = kindOf(event);
    troubles[kind] = kind === "poll" ? POLL : "Your last tap got no answer (is the connection down?), so this page " +
      "may not show it yet. " + pageSays("data-no-answer");
    show();
  }
  document.addEventListener("htmx:sendError", noAnswer);
  document.addEventListener("htmx:timeout", noAnswer);
  document.addEventListener("htmx:responseError", function (event) {
    var kind = kindOf(event);
    var xhr = event.detail.xhr;
    // 403 from the poll: the watch token expired (or access was withdrawn); 404: the battle is gone (a
    // session discarded). A reload gets a fresh token, or the page that says why. The server also says
    // HX-Refresh where it can, which htmx obeys first; this covers a proxy that drops it.
    if (kind === "poll" && (xhr.status === 403 || xhr.status === 404)) {
      window.location.reload();
      return;
    }
    var said = (xhr.getResponseHeader("Content-Type") || "").indexOf("text/plain") === 0 ? xhr.responseText : "";
    if (said && said.length < 300) {
      troubles[kind] = said;
    } else if (xhr.status >= 500) {
      troubles[kind] = kind === "poll" ? POLL :
        "The server failed on your last tap (error " + xhr.status + "). " + pageSays("data-failed");
    } else {
      troubles[kind] = "The server refused your last tap (error " + xhr.status + "): reload the page and try again.";
    }
    show();
  });
  document.addEventListener("htmx:afterRequest", function (event) {
    if (!event.detail.successful) return;
    var kind = kindOf(event);
    if (!troubles[kind]) return;
    delete troubles[kind];
    show();
  });
})();
