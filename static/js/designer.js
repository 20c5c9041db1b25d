// Redoubt designer: print buttons, and dragging pieces on the scenario map.
// Everything here is an enhancement: without JavaScript the print view prints from the browser's
// menu and every piece is placed by typing its coordinates.
(function () {
  "use strict";

  // ------------------------------------------------------------------ print
  function showPrintButtons(root) {
    root.querySelectorAll(".js-print").forEach(function (button) { button.hidden = false; });
  }
  document.addEventListener("click", function (event) {
    if (event.target.closest(".js-print")) { window.print(); }
  });

  // ------------------------------------------------------------------ one ruleset's options
  // The new-scenario form: LaserGrenadiers' options only while it is the ruleset chosen.
  function showRulesetOptions() {
    var ruleset = document.getElementById("id_ruleset");
    if (!ruleset) { return; }
    document.querySelectorAll("[data-for-ruleset]").forEach(function (options) {
      options.hidden = options.getAttribute("data-for-ruleset") !== ruleset.value;
    });
  }
  document.addEventListener("change", function (event) {
    if (event.target.id === "id_ruleset") { showRulesetOptions(); }
  });
  document.addEventListener("DOMContentLoaded", showRulesetOptions);

  // ------------------------------------------------------------------ drag on the map
  var SNAP = 0.5;
  var drag = null;

  function snap(value) { return Math.round(value / SNAP) * SNAP; }
  function clamp(value, low, high) { return Math.min(Math.max(value, low), high); }

  function svgPoint(svg, event) {
    var matrix = svg.getScreenCTM();
    if (!matrix) { return null; }
    var point = svg.createSVGPoint();
    point.x = event.clientX;
    point.y = event.clientY;
    return point.matrixTransform(matrix.inverse());
  }

  function bounds(svg) {
    return { w: parseFloat(svg.dataset.width), d: parseFloat(svg.dataset.depth) };
  }

  function place(piece, x, y) {
    piece.setAttribute("transform", "translate(" + x + " " + y + ")");
    piece.dataset.x = x;
    piece.dataset.y = y;
  }

  function status(text) {
    var line = document.getElementById("map-status");
    if (line) { line.textContent = text; }
  }

  // Where a piece stood before this drag or these arrow keys: it goes back there if the server does
  // not save the move.
  function remember(piece) {
    if (piece.dataset.fromX === undefined) {
      piece.dataset.fromX = piece.dataset.x;
      piece.dataset.fromY = piece.dataset.y;
    }
  }

  function send(piece) {
    var x = piece.dataset.x, y = piece.dataset.y;
    status("Placing at (" + x + "″, " + y + "″)…");
    // htmx takes the CSRF header from the page (hx-headers on <body>) and swaps the new map in.
    window.htmx.ajax("POST", piece.dataset.moveUrl, {
      source: piece, values: { x: x, y: y }, target: "#scenario-map", swap: "outerHTML"
    });
  }

  document.addEventListener("pointerdown", function (event) {
    var piece = event.target.closest(".map [data-move-url]");
    if (!piece || event.button !== 0 || !window.htmx) { return; }
    var svg = piece.ownerSVGElement;
    var start = svgPoint(svg, event);
    if (!start) { return; }
    event.preventDefault();
    remember(piece);
    piece.setPointerCapture(event.pointerId);
    drag = {
      piece: piece, svg: svg, moved: false,
      dx: start.x - parseFloat(piece.dataset.x), dy: start.y - parseFloat(piece.dataset.y)
    };
    piece.classList.add("is-dragging");
  });

  document.addEventListener("pointermove", function (event) {
    if (!drag) { return; }
    var point = svgPoint(drag.svg, event);
    if (!point) { return; }
    var table = bounds(drag.svg);
    var x = clamp(snap(point.x - drag.dx), 0, table.w);
    var y = clamp(snap(point.y - drag.dy), 0, table.d);
    if (String(x) !== drag.piece.dataset.x || String(y) !== drag.piece.dataset.y) {
      drag.moved = true;
      place(drag.piece, x, y);
      status("(" + x + "″, " + y + "″)");
    }
  });

  function endDrag() {
    if (!drag) { return; }
    var finished = drag;
    drag = null;
    finished.piece.classList.remove("is-dragging");
    if (finished.moved) { send(finished.piece); }
  }
  document.addEventListener("pointerup", endDrag);
  document.addEventListener("pointercancel", endDrag);

  // A focused piece moves half an inch per arrow key; letting go of the key places it.
  var KEYS = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
  document.addEventListener("keydown", function (event) {
    var piece = event.target.closest && event.target.closest(".map [data-move-url]");
    var step = KEYS[event.key];
    if (!piece || !step) { return; }
    event.preventDefault();
    remember(piece);
    var table = bounds(piece.ownerSVGElement);
    place(piece, clamp(parseFloat(piece.dataset.x) + step[0] * SNAP, 0, table.w),
          clamp(parseFloat(piece.dataset.y) + step[1] * SNAP, 0, table.d));
    piece.dataset.keyMoved = "1";
  });
  document.addEventListener("keyup", function (event) {
    var piece = event.target.closest && event.target.closest(".map [data-move-url]");
    if (!piece || !KEYS[event.key] || !piece.dataset.keyMoved) { return; }
    delete piece.dataset.keyMoved;
    var url = piece.dataset.moveUrl;
    send(piece);
    // The map is redrawn: give the focus back to the same piece.
    document.body.addEventListener("htmx:afterSettle", function refocus() {
      document.body.removeEventListener("htmx:afterSettle", refocus);
      var again = document.querySelector('.map [data-move-url="' + url + '"]');
      if (again) { again.focus(); }
    });
  });

  // A refused move (400) comes back as the map as it stands, its status line saying why: swap it in
  // like a saved one. Any other failure (the piece removed in another tab, the server or the network
  // down) leaves the map as it was drawn: put the piece back and say so, instead of leaving it where
  // it was dropped with "Placing at…" as if it were on its way.
  document.addEventListener("htmx:beforeSwap", function (event) {
    if (event.detail.xhr.status === 400 && event.detail.target && event.detail.target.id === "scenario-map") {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });
  function notPlaced(event) {
    var piece = event.detail.elt;
    if (!piece || !piece.dataset || piece.dataset.moveUrl === undefined || piece.dataset.fromX === undefined) { return; }
    place(piece, piece.dataset.fromX, piece.dataset.fromY);
    delete piece.dataset.fromX;
    delete piece.dataset.fromY;
    status("Not placed: the scenario may have changed in another tab, or the server did not answer. " +
           "Reload the page and try again.");
  }
  document.addEventListener("htmx:responseError", notPlaced);
  document.addEventListener("htmx:sendError", notPlaced);
  document.addEventListener("htmx:timeout", notPlaced);

  document.addEventListener("DOMContentLoaded", function () {
    showPrintButtons(document);
    // Only with htmx (it may fail to load on a bad connection): without it, "Update the preview" is
    // what redraws the sheet's preview.
    if (window.htmx) document.documentElement.classList.add("js");
  });
  document.addEventListener("htmx:load", function (event) { showPrintButtons(event.target); });
})();
