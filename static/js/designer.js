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

  document.addEventListener("DOMContentLoaded", function () {
    showPrintButtons(document);
    // Only with htmx (it may fail to load on a bad connection): without it, "Update the preview" is
    // what redraws the sheet's preview.
    if (window.htmx) document.documentElement.classList.add("js");
  });
  document.addEventListener("htmx:load", function (event) { showPrintButtons(event.target); });
})();
