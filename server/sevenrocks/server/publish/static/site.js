/* sevenrocks: the one script of the event site (sortable, paged tables, matrix shading, the match list).
 * No request leaves the page: the match list's data are script files next to it,
 * loaded one chunk at a time, so the site works from file:// as well as a server. */
(function () {
  "use strict";
  var SR = window.SR = window.SR || {};

  function key(text) {
    var t = text.replace(/[%,]/g, "").trim();
    var n = parseFloat(t);
    return isNaN(n) ? t : n;
  }
  /* Sortable, paged tables: click a header to sort (numbers as numbers, "–" last);
   * a table longer than one page shows PAGE rows at a time, with a pager under it.
   * All rows stay in memory and sorting sorts them all, not only the page shown. */
  var PAGE = 50;
  function paged(table) {
    var body = table.tBodies[0];
    var state = {rows: Array.prototype.slice.call(body.rows), page: 0, pager: null};
    state.show = function () {
      var pages = Math.max(1, Math.ceil(state.rows.length / PAGE));
      state.page = Math.max(0, Math.min(state.page, pages - 1));
      var shown = state.pager ? state.rows.slice(state.page * PAGE, (state.page + 1) * PAGE) : state.rows;
      var frag = document.createDocumentFragment();
      shown.forEach(function (r) { frag.appendChild(r); });
      body.textContent = "";
      body.appendChild(frag);
      if (state.pager) {
        var first = state.page * PAGE + 1, last = Math.min(state.rows.length, first + PAGE - 1);
        state.status.textContent = "rows " + first + "–" + last + " of " + state.rows.length +
          " — page " + (state.page + 1) + " of " + pages;
        state.prev.disabled = state.page === 0;
        state.next.disabled = state.page >= pages - 1;
        table.setAttribute("data-page", String(state.page + 1));
      }
    };
    if (state.rows.length > PAGE) {
      var pager = state.pager = document.createElement("div");
      pager.className = "pager";
      function button(text, cls, step) {
        var b = document.createElement("button");
        b.type = "button";
        b.className = cls;
        b.textContent = text;
        b.addEventListener("click", function () { state.page += step; state.show(); });
        pager.appendChild(b);
        return b;
      }
      state.prev = button("← previous", "prev", -1);
      state.next = button("next →", "next", 1);
      state.status = document.createElement("span");
      state.status.className = "status";
      pager.appendChild(state.status);
      var anchor = table.parentNode.classList.contains("table-wrap") ? table.parentNode : table;
      anchor.parentNode.insertBefore(pager, anchor.nextSibling);
    }
    state.show();
    return state;
  }
  SR.sortable = function () {
    document.querySelectorAll("table.sortable").forEach(function (table) {
      var state = paged(table);
      var heads = table.querySelectorAll("thead th");
      heads.forEach(function (th, col) {
        th.addEventListener("click", function () {
          var asc = !th.classList.contains("sorted-asc");
          heads.forEach(function (h) { h.classList.remove("sorted-asc", "sorted-desc"); });
          th.classList.add(asc ? "sorted-asc" : "sorted-desc");
          var keyed = state.rows.map(function (r, i) { return {r: r, k: key(r.cells[col].textContent), i: i}; });
          keyed.sort(function (x, y) {
            var a = x.k, b = y.k;
            if (a === b) { return x.i - y.i; }
            if (typeof a !== typeof b) { return typeof a === "number" ? -1 : 1; }
            return (a < b ? -1 : 1) * (asc ? 1 : -1);
          });
          state.rows = keyed.map(function (x) { return x.r; });
          state.page = 0;
          state.show();
        });
      });
    });
  };
  /* Shade the matrix: blue where the row side wins, red where it loses. */
  SR.shade = function () {
    document.querySelectorAll("#matrix td[data-shade]").forEach(function (td) {
      var p = parseFloat(td.getAttribute("data-shade"));
      var a = Math.abs(p - 0.5) * 1.6;
      td.style.background = p >= 0.5 ? "rgba(31,95,191," + a + ")" : "rgba(214,39,40," + a + ")";
      if (a > 0.5) { td.style.color = "#fff"; }
    });
  };

  /* ------------------------------------------------------------ the match list */
  var list = {rows: [], chunks: 0, loaded: 0, page: 0, size: 50};
  SR.addMatches = function (n, rows) {
    Array.prototype.push.apply(list.rows, rows);
    list.loaded += 1;
    if (list.loaded < list.chunks) { loadChunk(list.loaded); }
    render();
  };
  function loadChunk(n) {
    var s = document.createElement("script");
    s.src = "data/matches-" + ("000" + n).slice(-4) + ".js";
    document.body.appendChild(s);
  }
  function filters() {
    var f = {};
    document.querySelectorAll("form.filters [name]").forEach(function (i) { if (i.value !== "") { f[i.name] = i.value; } });
    return f;
  }
  function matches(r, f) {
    // r: {id, file, deal, seats, pairs, reason, winner, scores, cause, fseat, rounds}
    if (f.bot && r.seats.indexOf(f.bot) < 0) { return false; }
    if (f.pair && r.pairs.indexOf(f.pair) < 0) { return false; }
    if (f.vs && r.pairs.indexOf(f.vs) < 0) { return false; }
    // Partner and opponent: sides are seats 0+2 and 1+3; with a bot chosen, relative to it.
    var me = f.bot ? r.seats.indexOf(f.bot) : -1;
    if (f.partner) {
      var ps = r.seats.indexOf(f.partner);
      if (ps < 0) { return false; }
      if (me >= 0 && f.partner === f.bot && r.seats.filter(function (x) { return x === f.bot; }).length < 2) { return false; }
      if (me >= 0 && f.partner !== f.bot && r.seats.some(function (x, s) { return x === f.partner && s % 2 !== me % 2; })) { return false; }
    }
    if (f.opponent) {
      if (r.seats.indexOf(f.opponent) < 0) { return false; }
      if (me >= 0 && !r.seats.some(function (x, s) { return x === f.opponent && s % 2 !== me % 2; })) { return false; }
    }
    if (f.deal !== undefined && String(r.deal) !== f.deal) { return false; }
    if (f.cause && r.cause !== f.cause) { return false; }
    if (f.result) {
      if (f.result === "draw" && r.winner !== null) { return false; }
      if (f.result === "forfeit" && r.reason !== "forfeit") { return false; }
      if (f.result === "round_cap" && r.reason !== "round_cap") { return false; }
      if (/^won:/.test(f.result)) {
        var who = f.result.slice(4);
        if (r.winner === null) { return false; }
        var winners = r.teams.map(function (t, s) { return t === r.winner ? r.seats[s] : null; });
        if (winners.indexOf(who) < 0 && r.pairs[r.winner] !== who) { return false; }
      }
    }
    return true;
  }
  function render() {
    var body = document.querySelector("#match-list tbody");
    if (!body) { return; }
    var f = filters();
    var shown = list.rows.filter(function (r) { return matches(r, f); });
    var pages = Math.max(1, Math.ceil(shown.length / list.size));
    list.page = Math.min(list.page, pages - 1);
    var rows = shown.slice(list.page * list.size, (list.page + 1) * list.size);
    body.innerHTML = "";
    rows.forEach(function (r) {
      var tr = document.createElement("tr");
      function td(text, cls, href) {
        var c = document.createElement("td");
        if (cls) { c.className = cls; }
        if (href) { var a = document.createElement("a"); a.href = href; a.textContent = text; c.appendChild(a); }
        else { c.textContent = text; }
        tr.appendChild(c);
      }
      td(r.id, "name", "m/" + r.file + ".html");
      td(String(r.deal));
      td(r.seats.join(", "), "name");
      td(r.scores.join(" : "));
      td(r.winner === null ? "draw" : (r.pairs.length ? r.pairs[r.winner] : r.seats[r.winner]), "name");
      td(r.reason);
      td(r.cause ? r.cause + " (seat " + r.fseat + ")" : "", "wrap");
      td(String(r.rounds));
      td("record", "", "records/" + r.file + ".jsonl");
      body.appendChild(tr);
    });
    var status = document.getElementById("list-status");
    status.textContent = shown.length + " of " + list.rows.length + " matches" +
      (list.loaded < list.chunks ? " (loading " + list.loaded + "/" + list.chunks + ")" : "") +
      " — page " + (list.page + 1) + " of " + pages;
    document.body.setAttribute("data-rows", String(rows.length));
    document.body.setAttribute("data-loaded", list.loaded >= list.chunks ? "1" : "0");
  }
  SR.matchList = function (chunks) {
    list.chunks = chunks;
    var form = document.querySelector("form.filters");
    // Filters from the address (#bot=NAME&pair=...): links from the bot pages and the matrix.
    location.hash.slice(1).split("&").forEach(function (kv) {
      var p = kv.split("="), input = p[0] && form.querySelector("[name=" + p[0] + "]");
      if (input) { input.value = decodeURIComponent(p[1] || ""); }
    });
    form.addEventListener("input", function () { list.page = 0; render(); });
    form.addEventListener("submit", function (e) { e.preventDefault(); });
    document.getElementById("prev-page").addEventListener("click", function () { list.page = Math.max(0, list.page - 1); render(); });
    document.getElementById("next-page").addEventListener("click", function () { list.page += 1; render(); });
    if (chunks) { loadChunk(0); } else { render(); }
  };

  document.addEventListener("DOMContentLoaded", function () {
    SR.sortable();
    SR.shade();
    document.body.setAttribute("data-ready", "1");
  });
})();
