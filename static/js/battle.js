// The battle screen's few behaviours htmx does not give by itself. Everything here is progressive:
// without this file the page still works by plain links, forms and redirects.
(function () {
  "use strict";

  // Only with htmx: the page's own small script can arrive on a bad connection when htmx did not, and
  // then the buttons kept for pages without JavaScript ("Update the form") are all that redraws.
  if (window.htmx) document.documentElement.classList.add("js");

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

  // Resolve (and a follow-up link in the form) replaces the form's refresh in flight: its own answer
  // redraws the form (hx-sync="#attack-panel:replace"). But htmx sends the refresh queued behind the
  // one it aborts at once, the Resolve then waits behind that one, whose answer replaces the form the
  // Resolve belongs to, and htmx drops a request whose element has left the page: the tap was lost.
  // So the form's refreshes are not sent while a request from inside the form is being sent or is on
  // its way; its answer is the form anyway.
  var formAsking = 0;
  var formSending = false;
  var formOwed = false; // a refresh of the form got no answer (below)
  function fromTheForm(elt) {
    return elt && elt.closest && elt.closest("#attack-form") !== null;
  }
  document.addEventListener("htmx:confirm", function (event) {
    var elt = event.detail.elt;
    if (elt && elt.id === "attack-panel" && (formSending || formAsking)) {
      event.preventDefault();
    } else if (fromTheForm(elt)) {
      formSending = true;
      setTimeout(function () { formSending = false; }, 0);
    }
  });
  document.addEventListener("htmx:beforeRequest", function (event) {
    if (!fromTheForm(event.detail.elt)) return;
    formOwed = false;
    formAsking += 1;
    event.detail.xhr.addEventListener("loadend", function () { formAsking -= 1; });
  });

  // A refresh of the attack form that got no answer leaves it drawn for the choices before: the new
  // action's name above the old one's fields. Choosing the same again fires no change, so the form
  // asks again by itself once a request gets an answer (the next poll), unless Resolve or a follow-up
  // has asked for a whole new form meanwhile.
  function formUnanswered(event) {
    if (event.detail.elt && event.detail.elt.id === "attack-panel") formOwed = true;
  }
  document.addEventListener("htmx:sendError", formUnanswered);
  document.addEventListener("htmx:timeout", formUnanswered);
  document.addEventListener("htmx:afterRequest", function (event) {
    if (!event.detail.successful) return;
    var elt = event.detail.elt;
    if (elt && elt.id === "attack-panel") {
      formOwed = false;
    } else if (formOwed) {
      formOwed = false;
      htmx.trigger(document.body, "battle-changed");
    }
  });

  // An answer that says to drop the turn heading its new entries replace may come after another
  // answer (a poll crossing a slow one) dropped it already: there is nothing left to drop, and htmx
  // would report the missing element as an error.
  document.addEventListener("htmx:beforeSwap", function (event) {
    var text = event.detail.serverResponse;
    if (typeof text !== "string" || text.indexOf('hx-swap-oob="delete"') < 0) return;
    event.detail.serverResponse = text.replace(/<li id="(log-turn-\d+)" hx-swap-oob="delete"><\/li>/g,
      function (drop, id) { return document.getElementById(id) ? drop : ""; });
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

  // The Move form's spot on the table (and an organiser's correction's): a tap on the map's open ground
  // fills in its x and y, to the half inch the table is measured in (the map is drawn in inches), which a
  // thumb otherwise typed. A ring on the map shows the spot the form holds, typed or tapped, until the
  // move is recorded. Without JavaScript the spot is typed, as before.
  function moveSpot() {
    var action = document.getElementById("id_action");
    var x = document.getElementById("id_x");
    var y = document.getElementById("id_y");
    var placing = action && (action.value === "move" || action.value === "correct_position");
    return placing && x && y ? { x: x, y: y } : null;
  }
  function markSpot() {
    var svg = document.querySelector("#map svg.map");
    if (!svg) return;
    var spot = moveSpot();
    var mark = svg.querySelector(".map-spot-chosen");
    var shown = spot && spot.x.value.trim() && spot.y.value.trim() && isFinite(spot.x.value) && isFinite(spot.y.value);
    if (!shown) {
      if (mark) mark.remove();
      return;
    }
    if (!mark) {
      mark = svg.appendChild(document.createElementNS("http://www.w3.org/2000/svg", "circle"));
      mark.setAttribute("class", "map-spot-chosen");
      mark.setAttribute("r", "1.2");
    }
    mark.setAttribute("cx", spot.x.value.trim());
    mark.setAttribute("cy", spot.y.value.trim());
  }
  document.addEventListener("click", function (event) {
    var svg = event.target.closest && event.target.closest("#map svg.map");
    var spot = moveSpot();
    var matrix = svg && svg.getScreenCTM();
    if (!svg || event.target.closest("a") || !spot || !matrix) return;
    var point = svg.createSVGPoint();
    point.x = event.clientX;
    point.y = event.clientY;
    point = point.matrixTransform(matrix.inverse());
    var box = svg.viewBox.baseVal;
    var half = function (value, most) { return Math.round(Math.min(Math.max(value, 0), most) * 2) / 2; };
    spot.x.value = String(half(point.x, box.width));
    spot.y.value = String(half(point.y, box.height));
    markSpot();
    spot.y.dispatchEvent(new Event("change", { bubbles: true }));  // the form asks again with the spot
  });
  document.addEventListener("htmx:afterSettle", markSpot);
  document.addEventListener("DOMContentLoaded", markSpot);

  // "Target" in the structure list is far below the card it opens: bring the card into view, and the
  // focus with it (its heading), or the next Tab would jump back down to the structure list.
  // A tap on the map opens the card below the map: on a phone that is the foot of the screen or
  // past it, and the tap seemed to do nothing. Brought up unless its top is in the upper half already
  // (beside the map on a wide screen, the page stays where it is).
  document.addEventListener("htmx:afterSwap", function (event) {
    var from = event.detail.requestConfig && event.detail.requestConfig.elt;
    var fromMap = from && from.closest && from.closest("#map");
    if (from && from.classList && (from.classList.contains("target-link") || fromMap)) {
      var card = document.getElementById("card");
      var top = card ? card.getBoundingClientRect().top : 0;
      if (card && (!fromMap || top < 0 || top > window.innerHeight / 2)) card.scrollIntoView({ block: "start" });
      var title = document.getElementById("card-title");
      if (title && from === document.activeElement) {
        title.setAttribute("tabindex", "-1");
        title.focus({ preventScroll: true });
      }
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
  // A field is a list of values: a box unticked in a list where another stays ticked (the pieces caught)
  // is a change too.
  var typed = null;
  function shown(form) {
    var values = {};
    Array.prototype.forEach.call(form.elements, function (el) {
      if (!el.name || el.type === "hidden" || el.type === "submit" || el.type === "button") return;
      values[el.name] = values[el.name] || [];
      if ((el.type === "radio" || el.type === "checkbox") && !el.checked) return;
      values[el.name].push(el.value);
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
      var before = sent.getAll(name).map(String).filter(Boolean).sort().join("\n");
      if (now[name].filter(Boolean).sort().join("\n") !== before) {
        values[name] = now[name];
        any = true;
      }
    });
    if (!any) return;
    var active = document.activeElement;
    var focus = active && form.contains(active) && active.classList.contains("die-input") ? active.name : null;
    typed = { values: values, focus: focus };
  });
  // A poll that brings another phone's change has the form ask again (battle-changed), and mostly
  // nothing the form offers changed. Swapped in all the same, the new form took away the select whose
  // picker the player had open, and as the focused field went, the page jumped away from what they were
  // reading further down. An answer that draws the form and its card as they stand is left out. (The
  // CSRF input is masked anew each time it is drawn, to the same secret.)
  function drawing(el) {
    var copy = el.cloneNode(true);
    copy.removeAttribute("hx-swap-oob");
    Array.prototype.forEach.call(copy.querySelectorAll("noscript"), function (n) { n.remove(); });
    Array.prototype.forEach.call(copy.querySelectorAll('input[name="csrfmiddlewaretoken"]'), function (input) {
      input.removeAttribute("value");
    });
    // Where the focus went when it was drawn: this answer moves it nowhere.
    Array.prototype.forEach.call(copy.querySelectorAll("[autofocus]"), function (n) { n.removeAttribute("autofocus"); });
    Array.prototype.forEach.call(copy.querySelectorAll("[class]"), function (n) {
      n.setAttribute("class", n.getAttribute("class").replace(/\bhtmx-\S+/g, "").trim());
    });
    return copy.outerHTML;
  }
  document.addEventListener("htmx:beforeSwap", function (event) {
    var config = event.detail.requestConfig;
    var trigger = config && config.triggeringEvent;
    var text = event.detail.serverResponse;
    if (!config || !config.elt || config.elt.id !== "attack-panel" || !trigger || trigger.type !== "battle-changed" ||
        typeof text !== "string") return;
    var answer = document.createElement("template");
    answer.innerHTML = text;
    var unchanged = ["attack-form", "card"].every(function (id) {
      var now = document.getElementById(id);
      var next = answer.content.getElementById(id);
      return id === "card" && !next || !!(now && next && drawing(now) === drawing(next));
    });
    var active = document.activeElement;
    if (!unchanged && !(active && active.tagName === "SELECT" && active.closest("#attack-form") && onScreen(active))) return;
    event.detail.shouldSwap = false;
    typed = null;
    if (unchanged) return;
    // Something the form offers did change, but a select of it on the screen has the focus: its picker may be
    // open under the player's thumb, and swapping the form shut it. (One scrolled away has no picker open.) The form asks again once they leave the select (a
    // choice made in it asks at once, by its own change).
    active.addEventListener("blur", function () { htmx.trigger(document.body, "battle-changed"); }, { once: true });
  });
  // htmx puts the new form in before it takes the old one out. With the focus in the old one, Chromium
  // moved the page down by the new form's height and never back: a player reading the log below lost
  // their place (some 1,500 px on a phone) whenever another phone's change redrew the form. What was in
  // the middle of the screen is put back where it was, unless that is the form or its card, or the field
  // in the form with the focus is on the screen: a player at the form keeps it where the browser keeps it.
  var reading = null;
  function onScreen(el) {
    var box = el.getBoundingClientRect();
    return box.bottom > 0 && box.top < window.innerHeight;
  }
  document.addEventListener("htmx:beforeSwap", function (event) {
    var config = event.detail.requestConfig;
    var form = document.getElementById("attack-form");
    var active = document.activeElement;
    reading = null;
    if (!event.detail.shouldSwap || !config || !config.elt || config.elt.id !== "attack-panel" || !form ||
        (active && form.contains(active) && onScreen(active))) return;
    var seen = document.elementFromPoint(window.innerWidth / 2, window.innerHeight / 2);
    if (seen && !seen.closest("#attack-form, #card")) reading = { el: seen, top: seen.getBoundingClientRect().top };
  });
  document.addEventListener("htmx:afterSwap", function () {
    var seen = reading;
    reading = null;
    if (seen && seen.el.isConnected) window.scrollBy(0, seen.el.getBoundingClientRect().top - seen.top);
  });
  document.addEventListener("htmx:afterSwap", function () {
    var form = document.getElementById("attack-form");
    if (!typed || !form || !form.elements) return;
    var last = null;
    Object.keys(typed.values).forEach(function (name) {
      var chosen = typed.values[name];
      var value = chosen.length ? chosen[0] : "";
      Array.prototype.forEach.call(form.elements, function (el) {
        if (el.name !== name) return;
        if (el.type === "radio" || el.type === "checkbox") {
          var on = chosen.indexOf(el.value) >= 0;
          if (el.checked !== on) {
            el.checked = on;
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
  // A keyboard (or screen reader) user's focus sits on the control that asked: Resolve, End turn,
  // Undo, a follow-up link. The answer replaces the panel holding it, and htmx puts the focus back
  // only on an element with an id, so it fell to <body> and the next Tab started at the top of the
  // page. Put it on the same control in the new panel (same name and value, data-action or words),
  // else on the panel's first invalid field or its heading.
  var PANELS = { "attack-form": "attack-title", turns: "turns-title", card: "card-title" };
  var lost = null;
  function describe(el) {
    var panel = null;
    Object.keys(PANELS).forEach(function (id) {
      var p = document.getElementById(id);
      if (p && p.contains(el)) panel = id;
    });
    if (!panel) return null;
    return { el: el, panel: panel, tag: el.tagName, name: el.getAttribute("name"), value: el.getAttribute("value"),
             action: el.getAttribute("data-action"), text: (el.textContent || "").trim() };
  }
  function sameControl(d, el) {
    if (el.tagName !== d.tag) return false;
    if (d.name) return el.getAttribute("name") === d.name && (d.value === null || el.getAttribute("value") === d.value);
    if (d.action) return el.getAttribute("data-action") === d.action;
    // A button or link by its words: "Undo #8" is not the "Undo #9" that was tapped.
    return (el.textContent || "").trim() === d.text;
  }
  // Noted before the request too: hx-disabled-elt disables the tapped button, which drops its focus.
  function noteFocus() {
    var active = document.activeElement;
    if (active && active !== document.body) lost = describe(active);
  }
  document.addEventListener("htmx:beforeRequest", noteFocus);
  document.addEventListener("htmx:beforeSwap", noteFocus);
  document.addEventListener("htmx:afterSettle", function () {
    var d = lost;
    lost = null;
    if (!d || d.el.isConnected || (document.activeElement && document.activeElement !== document.body)) return;
    var panel = document.getElementById(d.panel);
    if (!panel) return;
    var candidates = Array.prototype.filter.call(panel.querySelectorAll(d.tag), function (el) {
      return !el.disabled && el.getClientRects().length && sameControl(d, el);
    });
    var to = candidates[0] || panel.querySelector('[aria-invalid="true"]');
    if (!to) {
      to = document.getElementById(PANELS[d.panel]) || panel;
      to.setAttribute("tabindex", "-1");
    }
    to.focus({ preventScroll: true });
  });

  // Every answer and every poll that brings a change redraws the turns panel. What this player had typed
  // or chosen there (their own dice, the piece to activate, the finish result) and the sections they had
  // opened were lost whenever another phone acted. They stay wherever the new panel has the same field
  // (a choice only while it is still offered). Not after the panel's own request: its answer is the panel
  // as it now stands (the dice used, or the refusal beside them).
  var turnsOwnAnswer = false;
  function turnKey(el) {
    if (el.id) return el.id;
    var action = el.form && el.form.querySelector('input[name="action"]');
    return (action ? action.value : "") + ":" + el.name;
  }
  function typedInTurns(panel) {
    var kept = { fields: {}, open: [] };
    Array.prototype.forEach.call(panel.querySelectorAll("input, select, textarea"), function (el) {
      if (!el.name || el.type === "hidden" || el.type === "submit" || el.type === "button") return;
      if (el.type === "radio" || el.type === "checkbox") {
        if (el.checked !== el.defaultChecked) kept.fields[turnKey(el) + "=" + el.value] = el.checked;
      } else if (el.tagName === "SELECT") {
        var option = el.options[el.selectedIndex];
        if (option && !option.defaultSelected) kept.fields[turnKey(el)] = el.value;
      } else if (el.value !== el.defaultValue) {
        kept.fields[turnKey(el)] = el.value;
      }
    });
    Array.prototype.forEach.call(panel.querySelectorAll("details[open]"), function (d) {
      var named = d.id ? d : d.querySelector("[id]");
      if (named) kept.open.push(named.id);
    });
    return kept;
  }
  function putBackInTurns(panel, kept) {
    Array.prototype.forEach.call(panel.querySelectorAll("input, select, textarea"), function (el) {
      if (!el.name || el.type === "hidden" || el.type === "submit" || el.type === "button") return;
      if (el.type === "radio" || el.type === "checkbox") {
        var choice = turnKey(el) + "=" + el.value;
        if (choice in kept.fields) el.checked = kept.fields[choice];
      } else if (turnKey(el) in kept.fields) {
        var value = kept.fields[turnKey(el)];
        if (el.tagName !== "SELECT" || el.querySelector('option[value="' + CSS.escape(value) + '"]')) el.value = value;
      }
    });
    kept.open.forEach(function (id) {
      var el = document.getElementById(id);
      var details = el && (el.tagName === "DETAILS" ? el : el.closest("details"));
      if (details && panel.contains(details)) details.open = true;
    });
  }
  document.addEventListener("htmx:beforeSwap", function (event) {
    var elt = event.detail.requestConfig && event.detail.requestConfig.elt;
    turnsOwnAnswer = !!(elt && elt.closest && elt.closest("#turns"));
  });

  // Even with what was typed put back, a panel swapped whole took away what a person was doing with
  // it: the select whose picker was open (the page's new select has none), the focus on a control
  // without an id, the "Rules and options" and "What it does" sections they had opened, and, as the
  // focused element went, the scroll position. Another phone's change usually alters a line or two
  // of them (the Undo button, the version, fresh tokens), so only those lines change: the panel
  // already on the page is brought into line with the new one node by node, and an element that
  // stays keeps its state. A section stays open: only the panel's own answer closes one.
  function key(node) {
    return node.nodeType === 1 ? node.tagName + "#" + node.id + "." + node.getAttribute("class") : node.nodeType;
  }
  function morph(old, next) {
    if (old.nodeType !== 1) {
      if (old.nodeValue !== next.nodeValue) old.nodeValue = next.nodeValue;
      return;
    }
    Array.prototype.slice.call(old.attributes).forEach(function (a) {
      if (!next.hasAttribute(a.name) && !(a.name === "open" && old.tagName === "DETAILS")) old.removeAttribute(a.name);
    });
    Array.prototype.forEach.call(next.attributes, function (a) {
      if (old.getAttribute(a.name) !== a.value) old.setAttribute(a.name, a.value);
    });
    var at = old.firstChild;
    Array.prototype.slice.call(next.childNodes).forEach(function (child) {
      var match = at;
      // Looking further on for text (whitespace, mostly) would pass over, and drop, the elements between.
      if (child.nodeType === 1) {
        while (match && key(match) !== key(child)) match = match.nextSibling;
      } else if (match && key(match) !== key(child)) {
        match = null;
      }
      if (!match) {
        old.insertBefore(child, at);
        return;
      }
      while (at !== match) {
        var gone = at;
        at = at.nextSibling;
        old.removeChild(gone);
      }
      morph(match, child);
      at = match.nextSibling;
    });
    while (at) {
      var rest = at;
      at = at.nextSibling;
      old.removeChild(rest);
    }
  }
  var MORPHED = { turns: true, "battle-header": true };
  document.addEventListener("htmx:oobBeforeSwap", function (event) {
    var target = event.detail.target;
    var fragment = event.detail.fragment;
    // An outerHTML swap hands over a document fragment holding the new element.
    var next = fragment && (fragment.nodeType === 11 ? fragment.firstElementChild : fragment);
    if (!target || !MORPHED[target.id] || !next || next.id !== target.id) return;
    if (target.id === "turns" && turnsOwnAnswer) return;
    var kept = target.id === "turns" ? typedInTurns(target) : null;
    event.detail.shouldSwap = false;
    morph(target, next);
    if (kept) putBackInTurns(target, kept);
    htmx.process(target);
  });

  document.addEventListener("htmx:afterSettle", function () {
    var form = document.getElementById("attack-form");
    if (!typed || !form) return;
    var input = typed.focus && form.querySelector('input.die-input[name="' + typed.focus + '"]');
    typed = null;
    if (input) input.focus();
  });
})();
