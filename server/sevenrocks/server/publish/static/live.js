/* The live page: one WebSocket to the live server; it sends the running matches, the
 * standings, and the public steps of the match this page watches. */
(function () {
  "use strict";
  var SR = window.SR = window.SR || {};
  SR.received = [];  // every step shown, with the time it was drawn (tests read it)
  SR.watchStarted = {};  // match id -> when this page asked to watch it

  SR.startLive = function () {
    var el = SR.el, ws, watching = null, finished = {}, viewer = null, running = [], ended = false;
    var problems = {};  // what -> text: a part of this page the server could not update (never silent)
    function drawProblems() {
      var box = document.getElementById("problems"), whats = Object.keys(problems);
      box.innerHTML = "";
      whats.forEach(function (w) { box.appendChild(el("p", {"data-what": w}, problems[w])); });
      box.hidden = !whats.length;
      document.body.setAttribute("data-problems", whats.join(" "));
    }
    function solved(what) { if (problems[what]) { delete problems[what]; drawProblems(); } }
    var url = (location.protocol === "https:" ? "wss:" : "ws:") + "//" + location.host + "/live/ws" + location.search;
    ws = new WebSocket(url);
    function watch(id) {
      watching = id;
      viewer = null;
      document.getElementById("watching").textContent = "Match " + id;
      document.getElementById("viewer").innerHTML = "";
      SR.watchStarted[id] = Date.now();
      solved("watch");
      ws.send(JSON.stringify({watch: id}));
      drawRunning();
    }
    function drawRunning() {
      var ul = document.getElementById("running");
      ul.innerHTML = "";
      if (!running.length) { ul.appendChild(el("li", {"class": "muted"}, "none right now")); }
      running.forEach(function (m) {
        var li = el("li", {"data-match": m.match_id});
        var a = el("a", {href: "#" + m.match_id}, m.match_id);
        a.addEventListener("click", function (e) { e.preventDefault(); watch(m.match_id); });
        li.appendChild(a);
        li.appendChild(document.createTextNode(" — " + m.names.join(", ") + " — round " + m.round + ", " + m.scores.join(" : ") +
          (m.match_id === watching ? " (watching)" : "")));
        ul.appendChild(li);
      });
    }
    function pickNext() {
      if (!document.getElementById("follow").checked) { return; }
      var next = running.filter(function (m) { return !finished[m.match_id]; })[0];
      if (next) { watch(next.match_id); }
    }
    ws.onmessage = function (e) {
      var arrived = Date.now();
      var msg = JSON.parse(e.data);
      if (msg.type === "matches") {
        running = msg.running;
        drawRunning();
        if (watching === null || finished[watching]) { pickNext(); }
      } else if (msg.type === "problem") {
        if (msg.what !== "watch" || msg.match_id === watching) {
          problems[msg.what] = msg.match_id ? "Match " + msg.match_id + ": " + msg.text : msg.text;
          drawProblems();
        }
      } else if (msg.type === "standings") {
        solved("standings");
        var body = document.querySelector("#standings tbody");
        body.innerHTML = "";
        msg.rows.forEach(function (r) {
          var tr = el("tr", {"data-name": r.name});
          [String(r.rank), r.name, r.rating.toFixed(2), String(r.matches), r.wins + "-" + r.draws + "-" + r.losses].forEach(function (t, i) {
            tr.appendChild(el("td", {"class": i === 1 ? "name" : ""}, t));
          });
          body.appendChild(tr);
        });
        document.getElementById("progress").textContent = msg.done + " of " + msg.total + " matches played";
        document.body.setAttribute("data-done", String(msg.done));
      } else if (msg.type === "league") {  // a league: playing, waiting (and for what), frozen, finished
        var state = document.getElementById("league-state");
        state.textContent = msg.line;
        state.hidden = false;
        document.body.setAttribute("data-league", msg.state);
      } else if (msg.type === "meta" && msg.match_id === watching) {
        viewer = new SR.Viewer(document.getElementById("viewer"), msg.meta, [], {live: true});
      } else if (msg.type === "step" && msg.match_id === watching && viewer) {
        var note = {match: msg.match_id, i: msg.i, k: msg.step.k, arrived: arrived, sent: msg.sent, t: null};
        SR.received.push(note);
        viewer.push(msg.step, function (now) { note.t = now; });
        if (msg.step.k === "match_end") { finished[msg.match_id] = true; setTimeout(pickNext, 800); }
      } else if (msg.type === "ended") {
        ended = true;
        var note = document.getElementById("ended");
        note.textContent = msg.text;
        note.hidden = false;
        document.getElementById("progress").textContent += " — the event has ended";
        document.body.setAttribute("data-ended", "1");
      } else if (msg.type === "error" && msg.match_id === watching) {
        finished[watching] = true;
        pickNext();
      }
    };
    ws.onclose = function () {
      if (!ended) { document.getElementById("watching").textContent += " (connection closed)"; }
    };
    document.body.setAttribute("data-ready", "1");
  };
})();
