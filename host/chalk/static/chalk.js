// The venue's scoreboard: draws each table's view (made by chalk/views.py on the server) and
// redraws it on every `view` event pushed by the server (server-sent events).
// Everything a board or a player named is put in the page as text (textContent), never as HTML.
"use strict";

(function () {
  var root = document.getElementById("tables");
  var single = root.getAttribute("data-table");
  var linkState = document.getElementById("link-state");
  var params = new URLSearchParams(window.location.search);
  var theme = params.get("theme");
  if (theme === "light" || theme === "dark") {
    document.documentElement.className = "theme-" + theme;
  }

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function beds(row) {
    // Shove ha'penny: nine beds, each with its marks (0-3) as chalk strokes.
    var wrap = el("div", "beds");
    for (var i = 0; i < row.beds.length; i++) {
      var n = row.beds[i];
      var bed = el("div", "bed" + (n >= 3 ? " full" : ""));
      bed.appendChild(el("span", "bed-no", i + 1));
      bed.appendChild(el("span", "marks", n ? "|".repeat(n) : "\u00b7"));
      bed.setAttribute("title", "bed " + (i + 1) + ": " + n);
      wrap.appendChild(bed);
    }
    return wrap;
  }

  function card(v) {
    var c = el("section", "table-card");
    c.setAttribute("data-table", v.table);
    c.setAttribute("data-seq", v.seq === null || v.seq === undefined ? "" : v.seq);
    c.setAttribute("data-scoring", v.scoring ? "1" : "0");
    c.setAttribute("data-kind", v.kind);
    if (!v.scoring) c.classList.add("not-scoring");
    var head = el("div", "card-head");
    var name = el("a", "table-name", v.table);
    name.href = "/table/" + encodeURIComponent(v.table);
    head.appendChild(name);
    var game = [v.game || "", v.headline || ""].filter(function (s) { return s; }).join(" \u00b7 ");
    head.appendChild(el("span", "game", game));
    c.appendChild(head);
    if (!v.scoring) {
      var since = v.since ? " (since " + new Date(v.since * 1000).toLocaleTimeString() + ")" : "";
      c.appendChild(el("div", "banner", (v.why ? v.why.toUpperCase() : "NOT SCORING") + since));
    }
    var rows = el("div", "rows");
    v.rows.forEach(function (r) {
      var row = el("div", "row" + (r.on_move ? " on-move" : "") + (r.winner ? " winner" : ""));
      row.appendChild(el("span", "turn", r.on_move ? "\u25b6" : (r.winner ? "\u2605" : "")));
      row.appendChild(el("span", "name", r.name));
      row.appendChild(el("span", "score", r.score));
      if (r.beds) row.appendChild(beds(r));
      if (r.detail) row.appendChild(el("span", "detail", r.detail));
      rows.appendChild(row);
    });
    c.appendChild(rows);
    c.appendChild(el("div", "status", v.on_move));
    if (v.last) c.appendChild(el("div", "last", "last: " + v.last));
    if (v.note) c.appendChild(el("div", "note", v.note));
    (v.notices || []).forEach(function (n) {  // what staff should do (a peg out of place)
      c.appendChild(el("div", "warning notice", "\u26a0 " + n));
    });
    var warnings = v.warnings || [];
    warnings.slice(0, 3).forEach(function (w) {
      c.appendChild(el("div", "warning", "\u26a0 " + w));
    });
    if (warnings.length > 3) {
      c.appendChild(el("div", "warning", "\u26a0 " + (warnings.length - 3) + " more: " +
                       warnings.slice(3).join(", ")));
    }
    return c;
  }

  var cards = {};
  function show(v) {
    if (single && v.table !== single) return;
    var c = card(v);
    var old = cards[v.table];
    if (old) {
      root.replaceChild(c, old);
    } else {
      var names = Object.keys(cards).concat([v.table]).sort();
      var after = names[names.indexOf(v.table) + 1];
      root.insertBefore(c, after ? cards[after] : null);
    }
    cards[v.table] = c;
    document.body.setAttribute("data-updated", String(Date.now()));
  }

  JSON.parse(document.getElementById("initial").textContent).forEach(show);
  if (!Object.keys(cards).length) {
    root.appendChild(el("p", "empty", "No table is being served."));
  }

  var url = "/api/events" + (single ? "?table=" + encodeURIComponent(single) : "");
  var source = new EventSource(url);
  source.addEventListener("view", function (e) { show(JSON.parse(e.data)); });
  source.addEventListener("open", function () {
    linkState.hidden = true;
    document.body.setAttribute("data-live", "1");
  });
  source.addEventListener("error", function () {
    linkState.hidden = false;
    document.body.setAttribute("data-live", "0");
  });
})();
