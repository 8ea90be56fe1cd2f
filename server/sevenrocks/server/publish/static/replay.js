/* The match viewer: draws the steps that sevenrocks.server.publish.steps writes.
 *
 * One script for the replay page, the published site and the live page. The steps
 * already say where every tile of the layout is drawn; this script only keeps the
 * bookkeeping a person would (which tiles a hand still holds) and draws.
 *
 * Views: "all" shows every hand face up; a seat number shows only what that seat
 * knew (its own hand and draws; other hands as face-down backs), and no element of
 * the page then holds another seat's unplayed tile. Live pages have no hands at all.
 */
(function () {
  "use strict";
  var SR = window.SR = window.SR || {};
  var SVGNS = "http://www.w3.org/2000/svg";
  // Pip centres on a unit square, for 0..6.
  var PIPS = [[], [[.5, .5]], [[.25, .25], [.75, .75]], [[.25, .25], [.5, .5], [.75, .75]],
    [[.25, .25], [.75, .25], [.25, .75], [.75, .75]],
    [[.25, .25], [.75, .25], [.5, .5], [.25, .75], [.75, .75]],
    [[.25, .22], [.75, .22], [.25, .5], [.75, .5], [.25, .78], [.75, .78]]];
  var SPEEDS = [["0.5", 2000], ["1", 1000], ["2", 500], ["4", 250], ["10", 100]];

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) { if (attrs[k] !== null && attrs[k] !== undefined) { e.setAttribute(k, attrs[k]); } }
    if (text !== undefined) { e.textContent = text; }
    return e;
  }
  function svg(tag, attrs) {
    var e = document.createElementNS(SVGNS, tag);
    for (var k in attrs) { e.setAttribute(k, attrs[k]); }
    return e;
  }
  function fmt(t) { return "[" + t[0] + "|" + t[1] + "]"; }
  function same(a, b) { return a[0] === b[0] && a[1] === b[1]; }

  /* One domino as SVG into group g: centre (x, y), orientation o, halves pips, unit size u. */
  function domino(g, x, y, o, pips, u, back) {
    var w = (o === "h" ? 2 : 1) * u, h = (o === "h" ? 1 : 2) * u;
    var x0 = x - w / 2, y0 = y - h / 2;
    g.appendChild(svg("rect", {x: x0 + .5, y: y0 + .5, width: w - 1, height: h - 1, rx: u * .12,
      "class": back ? "dom-back" : "dom-face"}));
    if (back) { return; }
    if (o === "h") { g.appendChild(svg("line", {x1: x, x2: x, y1: y0 + u * .12, y2: y0 + h - u * .12, "class": "dom-mid"})); }
    else { g.appendChild(svg("line", {y1: y, y2: y, x1: x0 + u * .12, x2: x0 + w - u * .12, "class": "dom-mid"})); }
    for (var half = 0; half < 2; half++) {
      var hx = o === "h" ? x0 + half * u : x0, hy = o === "h" ? y0 : y0 + half * u;
      PIPS[pips[half]].forEach(function (p) {
        g.appendChild(svg("circle", {cx: hx + p[0] * u, cy: hy + p[1] * u, r: u * .085, "class": "dom-pip"}));
      });
    }
  }

  /* A hand tile (or a face-down back) as a small inline SVG element. */
  function handTile(t, seat) {
    var u = 22, s = svg("svg", {width: u + 2, height: 2 * u + 2, viewBox: "0 0 " + (u + 2) + " " + (2 * u + 2)});
    if (t) {
      s.setAttribute("class", "tile");
      s.setAttribute("data-tile", t[0] + "-" + t[1]);
      s.setAttribute("data-seat", seat);
      s.setAttribute("aria-label", fmt(t));
      domino(s, 1 + u / 2, 1 + u, "v", t, u, false);
    } else {
      s.setAttribute("class", "tile back");
      domino(s, 1 + u / 2, 1 + u, "v", [0, 0], u, true);
    }
    return s;
  }

  function Viewer(root, meta, steps, options) {
    this.root = root;
    this.meta = meta;
    this.steps = steps;
    this.live = !!(options && options.live);
    this.view = this.live ? "public" : "all";
    this.i = this.live ? steps.length - 1 : -1;
    this.timer = null;
    this.speed = 1000;
    this.build();
    this.show(this.i);
  }
  SR.Viewer = Viewer;

  Viewer.prototype.seatName = function (s) {
    return this.meta.names[s] + " (seat " + s + ")";
  };
  Viewer.prototype.teamName = function (t) {
    var m = this.meta, who = [];
    for (var s = 0; s < m.players; s++) { if (m.seat_team[s] === t) { who.push(m.names[s]); } }
    return (m.partnerships ? "Team " + "AB"[t] + ": " : "") + who.join(" & ");
  };

  Viewer.prototype.build = function () {
    var self = this, m = this.meta, r = this.root;
    r.innerHTML = "";
    r.classList.add("viewer");
    var bar = el("div", {"class": "controls", role: "toolbar", "aria-label": "replay controls"});
    if (!this.live) {
      [["first", "« start", "Start (Home)"], ["prevround", "⇤ round", "Previous round (PageUp)"], ["prev", "◀", "Step back (←)"],
       ["play", "▶ play", "Play / pause (space)"], ["next", "▶|", "Step forward (→)"],
       ["nextround", "round ⇥", "Next round (PageDown)"], ["last", "end »", "End (End)"]].forEach(function (b) {
        var btn = el("button", {type: "button", "data-act": b[0], title: b[2]}, b[1]);
        btn.addEventListener("click", function () { self.act(b[0]); });
        bar.appendChild(btn);
      });
      var rsel = el("select", {"data-role": "round", "aria-label": "jump to round"});
      this.roundStarts().forEach(function (p) { rsel.appendChild(el("option", {value: p[1]}, "round " + p[0])); });
      rsel.addEventListener("change", function () { self.pause(); self.show(parseInt(rsel.value, 10)); });
      var ssel = el("select", {"data-role": "speed", "aria-label": "playback speed (steps per second)"});
      SPEEDS.forEach(function (s) { ssel.appendChild(el("option", {value: s[1], selected: s[1] === 1000 ? "" : null}, s[0] + " step/s")); });
      ssel.addEventListener("change", function () { self.speed = parseInt(ssel.value, 10); if (self.timer) { self.pause(); self.play(); } });
      var vsel = el("select", {"data-role": "view", "aria-label": "whose view"});
      vsel.appendChild(el("option", {value: "all"}, "every hand face up"));
      for (var s = 0; s < m.players; s++) { vsel.appendChild(el("option", {value: String(s)}, "only what " + this.seatName(s) + " knew")); }
      vsel.addEventListener("change", function () { self.setView(vsel.value); });
      bar.appendChild(rsel); bar.appendChild(ssel); bar.appendChild(vsel);
      this.stepLabel = el("span", {"class": "step-label"});
      bar.appendChild(this.stepLabel);
    } else {
      this.stepLabel = el("span", {"class": "step-label"});
      bar.appendChild(this.stepLabel);
    }
    r.appendChild(bar);
    var main = el("div", {"class": "table-area"});
    var table = el("div", {"class": "table seats-" + m.players});
    this.hands = [];
    var spots = m.players === 2 ? ["bottom", "top"] : m.players === 3 ? ["bottom", "right", "top"] : ["bottom", "right", "top", "left"];
    for (var seat = 0; seat < m.players; seat++) {
      var h = el("div", {"class": "hand " + spots[seat], "data-seat": seat});
      h.appendChild(el("div", {"class": "who"}, this.seatName(seat)));
      h.appendChild(el("div", {"class": "tiles"}));
      table.appendChild(h);
      this.hands.push(h);
    }
    this.board = el("div", {"class": "board"});
    table.appendChild(this.board);
    main.appendChild(table);
    var side = el("div", {"class": "side"});
    this.scoreBox = el("div", {"class": "scores"});
    this.endsBox = el("div", {"class": "ends"});
    this.awardBox = el("div", {"class": "award", "aria-live": "polite"});
    this.log = el("ol", {"class": "log", "aria-label": "event log"});
    side.appendChild(this.scoreBox); side.appendChild(this.endsBox); side.appendChild(this.awardBox);
    side.appendChild(el("h3", {}, "Event log"));
    side.appendChild(this.log);
    main.appendChild(side);
    r.appendChild(main);
    this.buildLog();
    if (!this.live) {
      document.addEventListener("keydown", function (e) {
        if (e.target && /^(INPUT|SELECT|TEXTAREA)$/.test(e.target.tagName)) { return; }
        var keys = {ArrowRight: "next", ArrowLeft: "prev", Home: "first", End: "last", PageDown: "nextround",
          PageUp: "prevround", " ": "play"};
        if (keys[e.key]) { e.preventDefault(); self.act(keys[e.key]); }
        else if (e.key === "v") { var v = self.root.querySelector("[data-role=view]"); v.selectedIndex = (v.selectedIndex + 1) % v.options.length; self.setView(v.value); }
      });
    }
  };

  Viewer.prototype.roundStarts = function () {
    var out = [];
    this.steps.forEach(function (s, i) { if (s.k === "round") { out.push([s.r, i]); } });
    return out;
  };

  Viewer.prototype.act = function (what) {
    var n = this.steps.length;
    if (what === "play") { if (this.timer) { this.pause(); } else { this.play(); } return; }
    this.pause();
    if (what === "first") { this.show(-1); }
    else if (what === "last") { this.show(n - 1); }
    else if (what === "next") { this.show(Math.min(n - 1, this.i + 1)); }
    else if (what === "prev") { this.show(Math.max(-1, this.i - 1)); }
    else {
      var starts = this.roundStarts().map(function (p) { return p[1]; }), i = this.i, target;
      if (what === "nextround") { target = starts.filter(function (s) { return s > i; })[0]; this.show(target === undefined ? n - 1 : target); }
      else { var before = starts.filter(function (s) { return s < i; }); this.show(before.length ? before[before.length - 1] : -1); }
    }
  };
  Viewer.prototype.play = function () {
    var self = this, btn = this.root.querySelector("[data-act=play]");
    if (this.i >= this.steps.length - 1) { this.show(-1); }
    if (btn) { btn.textContent = "⏸ pause"; }
    this.timer = setInterval(function () {
      if (self.i >= self.steps.length - 1) { self.pause(); return; }
      self.show(self.i + 1);
    }, this.speed);
  };
  Viewer.prototype.pause = function () {
    if (this.timer) { clearInterval(this.timer); this.timer = null; }
    var btn = this.root.querySelector("[data-act=play]");
    if (btn) { btn.textContent = "▶ play"; }
  };
  Viewer.prototype.setView = function (v) {
    this.view = v;
    this.buildLog();
    this.show(this.i);
  };
  /* Live pages: a new step arrived. Steps that arrive together are drawn in one go
   * (a page that fell behind catches up at once instead of drawing every state). */
  Viewer.prototype.push = function (step, drawn) {
    var self = this;
    this.steps.push(step);
    this.addLogLine(step, this.steps.length - 1);
    (this.waiting = this.waiting || []).push(drawn);
    if (this.scheduled) { return; }
    this.scheduled = true;
    setTimeout(function () {
      self.scheduled = false;
      self.show(self.steps.length - 1);
      var now = Date.now();
      self.waiting.forEach(function (f) { if (f) { f(now); } });
      self.waiting = [];
    }, 0);
  };

  /* May the current view see this seat's hidden tiles? */
  Viewer.prototype.sees = function (seat) {
    return this.view === "all" || this.view === String(seat);
  };

  Viewer.prototype.describe = function (s) {
    var m = this.meta, who = s.seat !== undefined ? this.seatName(s.seat) : "";
    if (s.k === "round") { return "Round " + s.r + ": " + this.seatName(s.leader) + " leads (" + s.by + ")"; }
    if (s.k === "play") {
      return who + " plays " + fmt(s.tile) + " — ends " + s.ends + (s.award ? ", scores " + s.award : "");
    }
    if (s.k === "pass") { return who + " passes"; }
    if (s.k === "draw") { return who + " draws " + (s.tile && this.sees(s.seat) ? fmt(s.tile) : "a tile"); }
    if (s.k === "round_end") {
      var how = s.reason === "domino" ? this.seatName(s.by) + " dominoes" : "blocked";
      var extra = (s.settlement || []).filter(function (x) { return x.points; }).map(function (x) {
        return "seat " + x.seat + " " + x.points;
      });
      if (s.bonus) { extra.push("seat " + s.bonus.seat + " +" + s.bonus.points); }
      return "Round " + s.r + " ends: " + how + (extra.length ? " (" + extra.join(", ") + ")" : "") +
        "; score " + s.scores.join("–");
    }
    if (s.k === "match_end") {
      var w = s.winner === null || s.winner === undefined ? "a draw" : this.teamName(s.winner) + " wins";
      var off = s.offender ? " — " + this.seatName(s.offender.seat) + " forfeits (" + s.offender.cause + ")" : "";
      return "Match over (" + s.reason + "): " + w + ", " + s.scores.join("–") + " after " + s.rounds + " rounds" + off;
    }
    return s.k;
  };
  Viewer.prototype.addLogLine = function (s, i) {
    var li = el("li", {"data-step": i, "class": "ev-" + s.k + (s.award ? " scored" : "")}, this.describe(s));
    var self = this;
    li.addEventListener("click", function () { if (!self.live) { self.pause(); self.show(i); } });
    this.log.appendChild(li);
  };
  Viewer.prototype.buildLog = function () {
    this.log.innerHTML = "";
    for (var i = 0; i < this.steps.length; i++) { this.addLogLine(this.steps[i], i); }
  };

  /* The state after step i: hands, layout, scores (bookkeeping only). */
  Viewer.prototype.stateAt = function (i) {
    var m = this.meta, st = {round: 0, hands: null, sizes: [], layout: [], open: [], ends: 0, award: null,
      scores: [], revealed: null, end: null, boneyard: 0};
    for (var t = 0; t < m.teams; t++) { st.scores.push(0); }
    var start = -1;
    for (var j = i; j >= 0; j--) { if (this.steps[j].k === "round") { start = j; break; } }
    for (var k = 0; k <= i; k++) { if (this.steps[k].scores) { st.scores = this.steps[k].scores; } }
    if (start < 0) { return st; }
    var rs = this.steps[start];
    st.round = rs.r;
    st.sizes = rs.sizes.slice();
    st.boneyard = rs.boneyard;
    st.hands = rs.hands ? rs.hands.map(function (h) { return h.slice(); }) : null;
    for (var q = start + 1; q <= i; q++) {
      var s = this.steps[q];
      if (s.k === "play") {
        st.layout.push(s);
        st.open = s.open; st.ends = s.ends;
        st.award = s.award ? {seat: s.seat, points: s.award, step: q} : st.award;
        st.sizes[s.seat] -= 1;
        if (st.hands) { st.hands[s.seat] = st.hands[s.seat].filter(function (t) { return !same(t, s.tile); }); }
      } else if (s.k === "draw") {
        st.sizes[s.seat] += 1; st.boneyard -= 1;
        if (st.hands && s.tile) { st.hands[s.seat].push(s.tile); }
      } else if (s.k === "round_end") {
        st.revealed = s.hands;
      } else if (s.k === "match_end") {
        st.end = s;
      }
    }
    return st;
  };

  Viewer.prototype.show = function (i) {
    var m = this.meta, self = this;
    this.i = i;
    var st = this.stateAt(i);
    // Hands.
    for (var seat = 0; seat < m.players; seat++) {
      var box = this.hands[seat].querySelector(".tiles");
      box.innerHTML = "";
      var tiles = null;
      if (st.revealed) { tiles = st.revealed[seat]; }
      else if (st.hands && this.sees(seat)) { tiles = st.hands[seat]; }
      if (tiles) { tiles.forEach(function (t) { box.appendChild(handTile(t, seat)); }); }
      else { for (var b = 0; b < (st.sizes[seat] || 0); b++) { box.appendChild(handTile(null, seat)); } }
      var last = i >= 0 ? this.steps[i] : null;
      this.hands[seat].classList.toggle("acting", !!(last && last.seat === seat));
    }
    // Layout.
    this.drawBoard(st);
    // Scores, ends, award.
    this.scoreBox.innerHTML = "";
    var tbl = el("table", {"class": "scoreboard"});
    for (var t = 0; t < m.teams; t++) {
      var tr = el("tr", {"data-team": t});
      tr.appendChild(el("th", {}, this.teamName(t)));
      tr.appendChild(el("td", {"class": "score", "data-team": t}, String(st.scores[t] === undefined ? 0 : st.scores[t])));
      tbl.appendChild(tr);
    }
    this.scoreBox.appendChild(el("div", {"class": "target"}, m.ruleset + " to " + m.target + (st.round ? ", round " + st.round : "")));
    this.scoreBox.appendChild(tbl);
    this.endsBox.innerHTML = "";
    this.endsBox.appendChild(el("span", {}, "Ends total "));
    this.endsBox.appendChild(el("b", {"class": "ends-total"}, String(st.ends)));
    this.endsBox.appendChild(el("span", {"class": "open-ends", "data-open": st.open.join(",")},
      st.open.length ? " — a tile fits on " + st.open.join(", ") : ""));
    if (st.boneyard) { this.endsBox.appendChild(el("span", {}, " — boneyard " + st.boneyard)); }
    var cur = i >= 0 ? this.steps[i] : null;
    this.awardBox.textContent = cur && cur.k === "play" && cur.award ? this.seatName(cur.seat) + " scores " + cur.award + "!" :
      st.end ? this.describe(st.end) : "";
    this.awardBox.classList.toggle("on", !!(cur && cur.award));
    // Log.
    var curLi = this.log.children[i];
    if (this.live) {
      if (this.currentLi) { this.currentLi.classList.remove("current"); }
      if (curLi) { curLi.classList.add("current"); }
      this.currentLi = curLi;
      this.log.scrollTop = this.log.scrollHeight;
    } else {
      Array.prototype.forEach.call(this.log.children, function (li, n) {
        li.classList.toggle("future", n > i);
        li.classList.toggle("current", n === i);
      });
      if (curLi) {
        var lr = this.log.getBoundingClientRect(), cr = curLi.getBoundingClientRect();
        if (cr.top < lr.top || cr.bottom > lr.bottom) { this.log.scrollTop += cr.top - lr.top - lr.height / 2; }
      }
    }
    var rsel = this.root.querySelector("[data-role=round]");
    if (rsel) {
      var starts = this.roundStarts(), pick = 0;
      starts.forEach(function (p, n) { if (p[1] <= i) { pick = n; } });
      rsel.selectedIndex = pick;
    }
    this.stepLabel.textContent = "step " + (i + 1) + " of " + this.steps.length;
    this.root.setAttribute("data-step", i);
    self.root.setAttribute("data-view", this.view);
  };

  Viewer.prototype.drawBoard = function (st) {
    var u = 30, minx = -1, maxx = 1, miny = -1, maxy = 1;
    st.layout.forEach(function (p) {
      var a = p.at, hw = a.o === "h" ? 1 : .5, hh = a.o === "h" ? .5 : 1;
      minx = Math.min(minx, a.x - hw); maxx = Math.max(maxx, a.x + hw);
      miny = Math.min(miny, a.y - hh); maxy = Math.max(maxy, a.y + hh);
    });
    var pad = .3, w = (maxx - minx + 2 * pad) * u, h = (maxy - miny + 2 * pad) * u;
    var s = svg("svg", {viewBox: ((minx - pad) * u) + " " + ((miny - pad) * u) + " " + w + " " + h,
      "class": "layout", role: "img", "aria-label": "the layout: " + st.layout.length + " tiles"});
    s.style.maxHeight = Math.max(120, Math.min(460, h * 1.4)) + "px";
    st.layout.forEach(function (p, n) {
      var g = svg("g", {"class": "ltile" + (n === st.layout.length - 1 ? " last" : ""), "data-tile": p.tile[0] + "-" + p.tile[1]});
      domino(g, p.at.x * u, p.at.y * u, p.at.o, p.at.pips, u, false);
      s.appendChild(g);
    });
    this.board.innerHTML = "";
    if (!st.layout.length) { this.board.appendChild(el("p", {"class": "empty"}, st.round ? "The round is about to open." : "Press ▶ or → to start.")); }
    else { this.board.appendChild(s); }
  };

  /* A page with <div id="viewer"> and <script id="match-data" type="application/json">. */
  SR.startReplay = function () {
    var node = document.getElementById("match-data"), root = document.getElementById("viewer");
    if (!node || !root) { return null; }
    var data = JSON.parse(node.textContent);
    var v = new Viewer(root, data.meta, data.steps, {});
    var hash = /(?:^|&)step=(-?\d+)/.exec(location.hash.slice(1));
    if (hash) { v.show(Math.min(data.steps.length - 1, parseInt(hash[1], 10))); }
    document.body.setAttribute("data-ready", "1");
    SR.viewer = v;
    return v;
  };
  SR.domino = domino;
  SR.handTile = handTile;
  SR.el = el;
})();
