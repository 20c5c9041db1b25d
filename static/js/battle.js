// The battle screen's few behaviours htmx does not give by itself. Everything here is progressive:
// without this file the page still works by plain links, forms and redirects.
(function () {
  "use strict";

  document.documentElement.classList.add("js");

  // Settling copies `style` between old and new elements with setAttribute, which the CSP blocks
  // (and reports). Nothing here is styled inline, so leave it out.
  if (window.htmx) htmx.config.attributesToSettle = ["class", "width", "height"];

  function pollerVersion() {
    var input = document.querySelector('#poller input[name="v"]');
    return input ? parseInt(input.value, 10) || 0 : 0;
  }

  // Tell the form view which input changed, so it can move the focus to the next die to enter.
  document.addEventListener("htmx:configRequest", function (event) {
    var trigger = event.detail.triggeringEvent;
    if (event.detail.elt.id === "attack-panel" && trigger && trigger.target && trigger.target.name) {
      event.detail.parameters.changed = trigger.target.name;
    }
  });

  // A poll answer that left before a newer change reached this page must not roll it back. Every
  // action's answer replaces #poller, so a poll in flight meanwhile answers to the old, detached
  // element: no document listener hears that, and htmx would look for the out-of-band targets inside
  // it (htmx:oobErrorNoTarget). Such an answer is dropped; the new poller asks again with what the
  // page now holds. The guard therefore sits on each poller element itself.
  function guardPoll(event) {
    var xhr = event.detail.xhr;
    if (!event.currentTarget.isConnected) {
      event.detail.shouldSwap = false;
      return;
    }
    var version = parseInt((xhr && xhr.getResponseHeader("X-Battle-Version")) || "0", 10);
    if (version && version < pollerVersion()) event.detail.shouldSwap = false;
  }
  document.addEventListener("htmx:beforeRequest", function (event) {
    var poller = event.detail.elt;
    if (poller.id !== "poller" || poller.redoubtGuarded) return;
    poller.redoubtGuarded = true;
    poller.addEventListener("htmx:beforeSwap", guardPoll);
  });

  // 403 from the poll: the watch token expired (or access was withdrawn). A reload gets a fresh one.
  // The server also says HX-Refresh, which htmx obeys first; this covers a proxy that drops it.
  document.addEventListener("htmx:responseError", function (event) {
    if (event.detail.elt.id === "poller" && event.detail.xhr.status === 403) window.location.reload();
  });

  // The same entry can arrive twice (an attack's answer and a poll crossing it): keep one.
  function dedupeLog() {
    var list = document.getElementById("log-list");
    if (!list) return;
    var seen = {};
    Array.prototype.slice.call(list.children).forEach(function (item) {
      if (!item.id) return;
      if (seen[item.id]) item.remove();
      else seen[item.id] = true;
    });
  }

  // The map shows which structure the card (and the attack form) is about.
  function markSelected() {
    var target = document.getElementById("card-target");
    var selected = target ? target.value : "";
    document.querySelectorAll("#map [data-structure]").forEach(function (shape) {
      shape.classList.toggle("is-selected", shape.getAttribute("data-structure") === selected);
    });
  }

  document.addEventListener("htmx:afterSettle", function () {
    dedupeLog();
    markSelected();
  });

  // "Target" in the structure list is far below the card it opens: bring the card into view.
  document.addEventListener("htmx:afterSwap", function (event) {
    var from = event.detail.requestConfig && event.detail.requestConfig.elt;
    if (from && from.classList && from.classList.contains("target-link")) {
      var card = document.getElementById("card");
      if (card) card.scrollIntoView({ block: "start" });
    }
  });

  // Once a die is typed, ask for the next die straight away and move on to the next die's field if
  // the form already shows it, so the next digit goes there rather than into this one while the
  // answer is on its way. A d6's face is one digit; on a d10, 2–9 and 10 are complete, while a "1"
  // may still become "10": it counts once the thumb has paused.
  function nextDie(input) {
    input.dispatchEvent(new Event("change", { bubbles: true }));
    var dice = Array.prototype.slice.call(input.form.querySelectorAll(".die-input"));
    var next = dice[dice.indexOf(input) + 1];
    if (next && !next.value) next.focus();
  }
  document.addEventListener("input", function (event) {
    var input = event.target;
    if (!input.classList || !input.classList.contains("die-input")) return;
    var sides = parseInt(input.getAttribute("data-sides"), 10);
    var value = parseInt(input.value, 10);
    clearTimeout(input.redoubtWait);
    if (!(value >= 1 && value <= sides)) return;
    if (value * 10 > sides) {
      nextDie(input);
    } else {
      input.redoubtWait = setTimeout(function () {
        if (parseInt(input.value, 10) === value && document.body.contains(input)) nextDie(input);
      }, 900);
    }
  });

  // "Go" on a phone's keyboard in a die field moves to the next die; Resolve is its own tap.
  document.addEventListener("keydown", function (event) {
    var input = event.target;
    if (event.key !== "Enter" || !input.classList || !input.classList.contains("die-input")) return;
    event.preventDefault();
    nextDie(input);
  });

  // The form's answer is drawn from what was sent: a die typed, a choice tapped ("I rolled") or a
  // select changed while it was on its way would vanish when it replaces the form. Put back every
  // field changed since it was sent, and the focus, and send the form again with them.
  var typed = null;
  function shown(form) {
    var values = {};
    Array.prototype.forEach.call(form.elements, function (el) {
      if (!el.name || el.type === "hidden" || el.type === "submit" || el.type === "button") return;
      if ((el.type === "radio" || el.type === "checkbox") && !el.checked) return;
      values[el.name] = el.value;
    });
    return values;
  }
  document.addEventListener("htmx:beforeSwap", function (event) {
    var form = document.getElementById("attack-form");
    var config = event.detail.requestConfig;
    var sent = config && config.formData;
    typed = null;
    // Only the form's own refresh as it is filled in (a follow-up link brings a form of its own), and
    // only while the battle is open to this phone (else #attack-form is a note, not a form).
    if (!form || !form.elements || event.detail.target !== form || !sent) return;
    if (!config.elt || config.elt.id !== "attack-panel") return;
    var now = shown(form);
    var values = {};
    var any = false;
    Object.keys(now).forEach(function (name) {
      var before = sent.get(name);
      if (now[name] !== (before === null ? "" : String(before))) {
        values[name] = now[name];
        any = true;
      }
    });
    if (!any) return;
    var active = document.activeElement;
    var focus = active && form.contains(active) && active.classList.contains("die-input") ? active.name : null;
    typed = { values: values, focus: focus };
  });
  document.addEventListener("htmx:afterSwap", function () {
    var form = document.getElementById("attack-form");
    if (!typed || !form || !form.elements) return;
    var last = null;
    Object.keys(typed.values).forEach(function (name) {
      var value = typed.values[name];
      Array.prototype.forEach.call(form.elements, function (el) {
        if (el.name !== name) return;
        if (el.type === "radio" || el.type === "checkbox") {
          if (el.value === value && !el.checked) {
            el.checked = true;
            last = el;
          }
        } else if (el.value !== value &&
                   (el.tagName !== "SELECT" || el.querySelector('option[value="' + CSS.escape(value) + '"]'))) {
          el.value = value;
          last = el;
        }
      });
    });
    if (last) last.dispatchEvent(new Event("change", { bubbles: true }));
  });
  document.addEventListener("htmx:afterSettle", function () {
    var form = document.getElementById("attack-form");
    if (!typed || !form) return;
    var input = typed.focus && form.querySelector('input.die-input[name="' + typed.focus + '"]');
    typed = null;
    if (input) input.focus();
  });
})();
