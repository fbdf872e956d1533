// The venue's scoreboard: draws each table's view (made by chalk/serve.py and chalk/views.py on
// the server) and redraws it on every `view` event pushed by the server (server-sent events).
// Everything a board or a player named is put in the page as text (textContent), never as HTML.
//
// The server sends a `beat` event every `data-beat` seconds: a page that hears nothing for two
// beats says on every card that the server is gone (its scores may be stale), and comes back by
// itself when the server does. On a wide screen (a TV) and on a table's own page the cards fill
// the screen: as big as the screen and the number of tables allow, never cut.
"use strict";

(function () {
  var root = document.getElementById("tables");
  var single = root.getAttribute("data-table");
  var beatS = parseFloat(root.getAttribute("data-beat")) || 1;
  var linkState = document.getElementById("link-state");
  var html = document.documentElement;
  var params = new URLSearchParams(window.location.search);
  var theme = params.get("theme");
  if (theme === "light" || theme === "dark") {
    html.classList.remove("theme-auto", "theme-dark", "theme-light");
    html.classList.add("theme-" + theme);
  }
  var tv = html.classList.contains("tv");
  var query = tv ? "?tv" : (theme ? "?theme=" + encodeURIComponent(theme) : "");
  Array.prototype.forEach.call(document.querySelectorAll("header a[href^='/']"), function (a) {
    a.setAttribute("href", a.getAttribute("href") + query);  // a TV stays a TV
  });

  // A card's type size: its smallest text is 0.75 of it, so never under 12 px at MIN_PX (a
  // phone never goes below); a full TV (twelve tables, all with warnings) may go to FLOOR_PX
  // rather than cut a card.
  var MIN_PX = 16, FLOOR_PX = 12;
  var TITLES = {
    "silent": "NOT SCORING",
    "stopped": "NOT SCORING",
    "no connection": "NOT SCORING",
    "service": "NOT SCORING \u2014 SERVICE VIEW",
    "catching up": "CATCHING UP"
  };

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function named(tag, cls, text) {
    // A name (a player's, a table's) is its own bidi island: whatever it holds, it cannot
    // reorder the text around it (bdi, dir=auto, unicode-bidi: isolate in chalk.css).
    var e = el(tag, cls, text);
    e.setAttribute("dir", "auto");
    e.setAttribute("title", String(text));
    return e;
  }

  function beds(row) {
    // Shove ha'penny: nine beds, each with its marks (0-3) as chalk strokes.
    var wrap = el("div", "beds");
    for (var i = 0; i < row.beds.length; i++) {
      var n = row.beds[i];
      var bed = el("div", "bed" + (n >= 3 ? " full" : ""));
      bed.appendChild(el("span", "bed-no", i + 1));
      bed.appendChild(el("span", "marks", n ? "|".repeat(Math.min(n, 3)) : "\u00b7"));
      bed.setAttribute("title", "bed " + (i + 1) + ": " + n);
      wrap.appendChild(bed);
    }
    return wrap;
  }

  function stateOf(v) {
    return v.state || (v.scoring ? "scoring" : "no connection");
  }

  function card(v) {
    var state = stateOf(v);
    var c = el("section", "table-card state-" + state.replace(/ /g, "-"));
    c.setAttribute("data-table", v.table);
    c.setAttribute("data-seq", v.seq === null || v.seq === undefined ? "" : v.seq);
    c.setAttribute("data-scoring", v.scoring ? "1" : "0");
    c.setAttribute("data-state", state);
    c.setAttribute("data-kind", v.kind || "");
    if (!v.scoring) c.classList.add("not-scoring");

    var head = el("div", "card-head");
    var name = named("a", "table-name", v.table);
    name.href = "/table/" + encodeURIComponent(v.table) + query;
    head.appendChild(name);
    var what = [v.game_name || v.game || "", v.race || ""].filter(Boolean).join(", ");
    var game = el("span", "game");
    if (what) game.appendChild(el("span", "game-name", what));
    if (v.headline) game.appendChild(el("span", "headline", v.headline));
    head.appendChild(game);
    c.appendChild(head);

    if (!v.scoring) {
      var banner = el("div", "banner");
      banner.appendChild(el("div", "banner-title", TITLES[state] || "NOT SCORING"));
      var since = v.since ? " (since " + new Date(v.since * 1000).toLocaleTimeString() + ")" : "";
      banner.appendChild(el("div", "banner-why", (v.why || "") + since));
      c.appendChild(banner);
    }

    var rows = el("div", "rows");
    (v.rows || []).forEach(function (r) {
      var row = el("div", "row" + (r.on_move ? " on-move" : "") + (r.winner ? " winner" : ""));
      row.appendChild(el("span", "turn", r.on_move ? "\u25b6" : (r.winner ? "\u2605" : "")));
      row.appendChild(named("bdi", "name", r.name));
      row.appendChild(el("span", "score", r.score));
      if (r.beds) row.appendChild(beds(r));
      if (r.detail) row.appendChild(el("span", "detail", r.detail));
      rows.appendChild(row);
    });
    c.appendChild(rows);
    if (v.on_move) c.appendChild(el("div", "status", v.on_move));
    if (v.refused) {
      // A refused entry, for a few seconds: the server takes it back (and so does this page
      // when the time is up, should the server be gone meanwhile).
      var refused = el("div", "refused");
      refused.appendChild(el("span", "refused-rule", "Refused (" + v.refused.rule + ")"));
      refused.appendChild(el("span", "refused-reason", v.refused.reason));
      refused.setAttribute("data-end", String(Date.now() + (v.refused.left || 8) * 1000));
      c.appendChild(refused);
    }
    if (v.last) c.appendChild(el("div", "last", "Last: " + v.last));
    if (v.last_fouls && v.last_fouls.length) {
      var fouls = el("div", "fouls");
      v.last_fouls.forEach(function (f) { fouls.appendChild(el("span", "foul", f)); });
      c.appendChild(fouls);
    }
    if (v.note) c.appendChild(el("div", "note", v.note));
    // What staff should do (a peg out of place, a sensor fault), then any warning not already
    // said among them.
    var notes = (v.notices || []).slice();
    (v.warnings || []).forEach(function (w) { if (notes.indexOf(w) < 0) notes.push(w); });
    notes.forEach(function (w) {
      c.appendChild(el("div", "warning", "\u26a0 " + w));
    });
    var gone = el("div", "gone");
    gone.appendChild(el("div", "gone-title", "NOT LIVE"));
    gone.appendChild(el("div", "gone-why", "No contact with the scoreboard server: these " +
                        "scores may be out of date. Check the PC that runs chalk serve."));
    c.appendChild(gone);
    return c;
  }

  var cards = {};
  var empty = null;

  // The board's own gauge (heap, longest gap between scans), for staff looking for a fault:
  // small print under the card on the table's own page, not on the room's TV.
  var gauge = document.getElementById("gauge");

  function show(v) {
    if (single && v.table !== single) return;
    if (gauge) {
      gauge.textContent = v.gauge || "";
      gauge.hidden = !v.gauge;
    }
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
    if (empty) {
      empty.parentNode.removeChild(empty);
      empty = null;
    }
    document.body.setAttribute("data-updated", String(Date.now()));
    layout(old ? c : null);
  }

  function only(names) {
    // The server's tables now: a card for a table it no longer serves goes.
    Object.keys(cards).forEach(function (n) {
      if (names.indexOf(n) < 0) {
        root.removeChild(cards[n]);
        delete cards[n];
      }
    });
    if (!Object.keys(cards).length && !empty) {
      empty = el("p", "empty", single ? "The table " + single + " is not being served."
                 : "No table is being served.");
      root.appendChild(empty);
    }
    layout(null);
  }

  // -- filling the screen ------------------------------------------------------------------
  function fills() {
    // A table's own page always fills its screen; the venue page on a wide one (a TV, a
    // computer), while a phone scrolls its cards one under another.
    return Boolean(single) || (window.innerWidth >= 900 && window.innerHeight >= 480);
  }

  function fits(c) {
    if (c.scrollHeight > c.clientHeight + 1 || c.scrollWidth > c.clientWidth + 1) return false;
    // Nothing sticks out of its box: the marks of a bed, a word of a name (names break
    // between words, and inside one only on a card "squeezed" for want of room).
    var inner = c.querySelectorAll(".bed, .name, .table-name");
    for (var i = 0; i < inner.length; i++) {
      if (inner[i].scrollWidth > inner[i].clientWidth + 1) return false;
    }
    return true;
  }

  function search(c, lo) {
    var hi = Math.max(lo, c.clientHeight / 3);
    c.style.fontSize = lo + "px";
    if (!fits(c)) return 0;
    for (var i = 0; i < 14 && hi - lo > 0.25; i++) {
      var mid = (lo + hi) / 2;
      c.style.fontSize = mid + "px";
      if (fits(c)) lo = mid; else hi = mid;
    }
    c.style.fontSize = lo + "px";
    return lo;
  }

  function fitCard(c) {
    // The largest type at which the card shows everything it holds (a binary search); with
    // names that would not fit even then, broken inside words. 0: it does not fit at all.
    var tries = [[false, MIN_PX], [true, MIN_PX], [true, FLOOR_PX]];
    for (var i = 0; i < tries.length; i++) {
      c.classList.toggle("squeezed", tries[i][0]);
      var size = search(c, tries[i][1]);
      if (size) return size;
    }
    return 0;
  }

  function arrange(list, cols) {
    var n = list.length, rows = Math.ceil(n / cols), spare = cols * rows - n;
    root.style.setProperty("--cols", cols);
    root.style.setProperty("--rows", rows);
    for (var i = 0; i < n; i++) {  // the last card takes the cells left over in its row
      list[i].style.gridColumn = i === n - 1 && spare ? "span " + (spare + 1) : "";
    }
  }

  var chosen = null;  // {key, cols}: the grid for this many cards on this screen
  var pending = null;
  function layout(c) {
    // Fit one card again (its view changed), or every card (null: tables came or went, the
    // screen changed): in the next animation frame, once.
    if (pending === null) {
      pending = [];
      window.requestAnimationFrame(function () {
        var which = pending;
        pending = null;
        fit(which);
      });
    }
    if (pending !== "all") {
      if (c && pending.indexOf(c) < 0) pending.push(c); else if (!c) pending = "all";
    }
  }

  function unfill(list) {
    html.classList.remove("fill");
    for (var i = 0; i < list.length; i++) {
      list[i].classList.remove("squeezed");
      list[i].style.fontSize = "";
      list[i].style.gridColumn = "";
    }
  }

  function fit(which) {
    var list = Array.prototype.slice.call(root.querySelectorAll(".table-card"));
    var n = list.length;
    if (!fills() || !n) {
      unfill(list);
      chosen = null;
      return;
    }
    html.classList.add("fill");
    var key = n + ":" + root.clientWidth + "x" + root.clientHeight;
    if (chosen === null || chosen.key !== key) {
      // The grid whose cards are the biggest (in type size, on the whole), every card fitting:
      // a few column counts around the square's.
      var best = null, around = Math.ceil(Math.sqrt(n));
      for (var cols = Math.max(1, around - 1); cols <= Math.min(n, around + 2); cols++) {
        arrange(list, cols);
        var logs = 0;
        for (var i = 0; i < n && logs > -Infinity; i++) logs += Math.log(fitCard(list[i]));
        if (best === null || logs > best.score) best = {cols: cols, score: logs};
      }
      chosen = {key: key, cols: best.cols};
      which = "all";
    }
    arrange(list, chosen.cols);
    var todo = which === "all" ? list : which.filter(function (c) { return c.parentNode; });
    for (var j = 0; j < todo.length; j++) {
      if (!fitCard(todo[j])) {  // too much for the screen even small: cards one under another
        unfill(list);
        return;
      }
    }
  }

  window.addEventListener("resize", function () { layout(null); });

  // -- live: the server's stream, and its heartbeat ----------------------------------------
  var heardAt = Date.now();
  var live = null;

  function setLive(up) {
    if (up === live) return;
    live = up;
    document.body.classList.toggle("server-gone", !up);
    document.body.setAttribute("data-live", up ? "1" : "0");
    document.body.setAttribute("data-server", up ? "live" : "gone");
    linkState.hidden = up;
    linkState.textContent = up ? "" : "NOT LIVE: no contact with the server";
  }

  function heard() {
    heardAt = Date.now();
    setLive(true);
  }

  var source = null;
  function connect() {
    if (source) source.close();
    var url = "/api/events" + (single ? "?table=" + encodeURIComponent(single) : "");
    source = new EventSource(url);
    source.addEventListener("view", function (e) {
      heard();
      show(JSON.parse(e.data));
    });
    source.addEventListener("tables", function (e) {
      heard();
      var data = JSON.parse(e.data);
      if (data.beat) beatS = data.beat;
      only(data.tables);
    });
    source.addEventListener("beat", heard);
  }

  // A page left for another (kept by the browser for its back button) lets its stream go: a
  // browser opens few connections to one server, and a phone's old pages must not hold them.
  window.addEventListener("pagehide", function () {
    if (source) source.close();
    source = null;
  });
  window.addEventListener("pageshow", function () {
    if (!source) {
      heardAt = Date.now();
      connect();
    }
  });

  JSON.parse(document.getElementById("initial").textContent).forEach(show);
  if (!Object.keys(cards).length) only([]);
  document.body.setAttribute("data-live", "0");
  connect();
  setInterval(function () {
    var done = Array.prototype.filter.call(root.querySelectorAll(".refused"), function (r) {
      return Number(r.getAttribute("data-end")) <= Date.now();
    });
    done.forEach(function (r) {
      var c = r.parentNode;
      c.removeChild(r);
      layout(c);
    });
    // Two beats missed: the server is gone (stopped, or the network between). The browser
    // reconnects a broken stream by itself; one it gave up on is opened again here.
    if (Date.now() - heardAt > (2 * beatS + 0.5) * 1000) {
      setLive(false);
      if (source && source.readyState === 2) connect();
    }
  }, 250);
})();
