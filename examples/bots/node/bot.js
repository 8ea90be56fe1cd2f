#!/usr/bin/env node
// A Seven Rocks / fives bot in JavaScript, written from proto/sevenrocks/v1/referee.proto alone.
//
//   SEVENROCKS_REFEREE=127.0.0.1:50051 SEVENROCKS_TOKEN=... node bot.js
//
// It opens one Referee.Play stream for all its seats, keeps a small view of each
// seat (its hand, the ruleset, the scores), and answers every TurnRequest with the
// heaviest of the legal moves the referee sent. Replace chooseMove() with your own
// strategy: everything else is the protocol, done once.
"use strict";

const fs = require("node:fs");
const net = require("node:net");
const path = require("node:path");
const tls = require("node:tls");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");

const NAME = "node-heaviest";
const VERSION = "1.0.0";
const PROTOCOL_VERSION = 1;
// Status codes after which reconnecting cannot help (see the .proto's "Connecting").
const FATAL = new Map([
  [grpc.status.UNAUTHENTICATED, 2],
  [grpc.status.PERMISSION_DENIED, 2],
  [grpc.status.FAILED_PRECONDITION, 2],
  [grpc.status.UNIMPLEMENTED, 2],
  [grpc.status.INVALID_ARGUMENT, 1],
  [grpc.status.RESOURCE_EXHAUSTED, 1],
]);
const GIVE_UP_MS = 60_000;

function usage() {
  return [
    "usage: node bot.js [--referee HOST:PORT|unix:/path] [--token TOKEN] [--tls-ca CA.pem] [--proto FILE]",
    "",
    "The referee's address and your entrant's token arrive in SEVENROCKS_REFEREE and",
    "SEVENROCKS_TOKEN (sevenrocks match / tournament / check set both); SEVENROCKS_ENTRANT",
    "names the entrant when the referee set it. --tls-ca (SEVENROCKS_TLS_CA) dials with TLS,",
    "trusting that CA (the ca.pem a referee's `sevenrocks tls` wrote). The flags override the environment.",
  ].join("\n");
}

function settings(argv) {
  const out = {
    referee: process.env.SEVENROCKS_REFEREE || "",
    token: process.env.SEVENROCKS_TOKEN || "",
    entrant: process.env.SEVENROCKS_ENTRANT || "",
    tlsCa: process.env.SEVENROCKS_TLS_CA || "",
    // The kit ships its copy of proto/sevenrocks/v1/referee.proto (a test keeps the two identical),
    // so the bot reads nothing outside its own folder: that is all a sandboxed bot may be given.
    proto: process.env.SEVENROCKS_PROTO || path.join(__dirname, "referee.proto"),
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag === "-h" || flag === "--help") {
      console.log(usage());
      process.exit(0);
    }
    const key = { "--referee": "referee", "--token": "token", "--tls-ca": "tlsCa", "--proto": "proto" }[flag];
    if (!key || i + 1 >= argv.length) {
      console.error(`unknown or incomplete option ${flag}\n${usage()}`);
      process.exit(2);
    }
    out[key] = argv[++i];
  }
  if (!out.referee || !out.token) {
    console.error(`no referee address or token: set SEVENROCKS_REFEREE and SEVENROCKS_TOKEN\n${usage()}`);
    process.exit(2);
  }
  return out;
}

// ------------------------------------------------------------------ why a connection fails

// grpc-js reports a plaintext bot at a TLS port, a certificate for other names and a referee
// that is restarting alike (UNAVAILABLE). So after such a failure the bot looks for itself, as
// the Python SDK does (sdk/sevenrocks/sdk/diagnose.py): a TLS handshake with its CA and the host
// it dialled, or (dialling in plaintext) one that accepts any certificate. A string: the reason
// retrying cannot help; null: transient (nothing listening, a timeout), keep retrying.
function splitAddress(address) {
  const m = /^(?:dns:\/\/\/)?\[?([^\]]*?)\]?:(\d+)$/.exec(address);
  return m && !address.startsWith("unix:") ? { host: m[1], port: Number(m[2]) } : null;
}

function handshake(host, port, options) {
  return new Promise((resolve) => {
    const sock = tls.connect({ host, port, ALPNProtocols: ["h2"], timeout: 3000,
      servername: net.isIP(host) ? undefined : host, ...options });
    sock.on("secureConnect", () => { sock.destroy(); resolve(null); });
    sock.on("timeout", () => { sock.destroy(); resolve({ code: "ETIMEDOUT" }); });
    sock.on("error", (err) => { sock.destroy(); resolve(err); });
  });
}

// Does the port answer an HTTP/2 preface in clear with a SETTINGS frame (a plaintext gRPC server)?
function speaksH2InClear(host, port) {
  return new Promise((resolve) => {
    const sock = net.connect({ host, port, timeout: 3000 });
    let head = Buffer.alloc(0);
    const finish = (v) => { sock.destroy(); resolve(v); };
    sock.on("connect", () => sock.write(Buffer.concat([Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"),
      Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0])])));
    sock.on("data", (d) => { head = Buffer.concat([head, d]); if (head.length >= 9) finish(head[3] === 4); });
    sock.on("timeout", () => finish(false));
    sock.on("error", () => finish(false));
    sock.on("end", () => finish(false));
  });
}

async function diagnose(opts) {
  const where = splitAddress(opts.referee);
  if (!where) return null;
  const { host, port } = where;
  if (!opts.tlsCa) {
    const err = await handshake(host, port, { rejectUnauthorized: false });
    return err === null ? `the referee at ${host}:${port} speaks TLS, and this bot dialled it in plaintext: ` +
      "pass --tls-ca ca.pem (or SEVENROCKS_TLS_CA=ca.pem), the CA file the referee's operator sent" : null;
  }
  const err = await handshake(host, port, { ca: fs.readFileSync(opts.tlsCa) });
  if (err === null || ["ECONNREFUSED", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH"].includes(err.code)) return null;
  if (err.code === "ERR_TLS_CERT_ALTNAME_INVALID") {
    return `the referee's certificate does not name ${host}, the host this bot dialled (${err.reason}): ` +
      `dial a name it holds, or ask the operator for a certificate naming ${host} (sevenrocks tls ${host} ...)`;
  }
  if (err.code === "CERT_HAS_EXPIRED" || err.code === "CERT_NOT_YET_VALID") {
    return `the referee's certificate at ${host}:${port} is not valid now (${err.message}); ask the operator for a new one`;
  }
  if (/CERT|SIGNATURE|ISSUER/.test(err.code || "")) {
    return `the referee's certificate at ${host}:${port} is not signed by the CA in ${opts.tlsCa} (${err.message}); ` +
      "pass the ca.pem the operator's `sevenrocks tls` wrote";
  }
  if (await speaksH2InClear(host, port)) {
    return `the referee at ${host}:${port} speaks plaintext, and this bot dialled it with TLS ` +
      `(--tls-ca ${opts.tlsCa}): drop --tls-ca / SEVENROCKS_TLS_CA, or ask the operator for its TLS port`;
  }
  return null;
}

function loadProto(file) {
  // keepCase: field names as in the .proto (match_id, legal_moves); longs as strings so that
  // uint64 request ids survive the round trip exactly; oneofs: msg.body names the set field.
  const definition = protoLoader.loadSync(file, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true });
  return grpc.loadPackageDefinition(definition).sevenrocks.v1;
}

// ------------------------------------------------------------------ the strategy

function pips(tile) {
  return tile.low + tile.high;
}

// Pick one of the referee's legal moves (TurnRequest.legal_moves, never empty).
// `seat` is this seat's view: {ruleset, players, hand, scores}.
function chooseMove(seat, legalMoves) {
  let best = legalMoves[0];
  for (const m of legalMoves) if (pips(m.tile) > pips(best.tile)) best = m;
  return best;
}

// ------------------------------------------------------------------ the protocol

class Bot {
  constructor(opts, pkg) {
    this.opts = opts;
    this.pkg = pkg;
    this.seats = new Map(); // "match_id/seat" -> view
    this.goodbye = null;
  }

  key(msg) {
    return `${msg.match_id}/${msg.seat}`;
  }

  // Handle one RefereeMessage; return a BotMessage to send, or null.
  handle(msg) {
    const key = this.key(msg);
    switch (msg.body) {
      case "welcome":
        console.log(`welcome: entrant ${msg.welcome.entrant}, session ${msg.welcome.session_id}`);
        return null;
      case "seat_assignment": {
        const a = msg.seat_assignment;
        this.seats.set(key, { ruleset: a.ruleset, players: a.players, hand: [], scores: [] });
        return null;
      }
      case "deal": {
        const view = this.seats.get(key);
        if (view) {
          view.hand = msg.deal.hand.slice();
          view.scores = msg.deal.scores.slice();
        }
        return null;
      }
      case "play": {
        const view = this.seats.get(key);
        const p = msg.play;
        if (view) {
          view.scores = p.scores.slice();
          if (p.seat === msg.seat) {
            const t = p.placement.tile;
            view.hand = view.hand.filter((h) => h.low !== t.low || h.high !== t.high);
          }
        }
        return null;
      }
      case "draw": {
        const view = this.seats.get(key);
        if (view && msg.draw.seat === msg.seat && msg.draw.tile) view.hand.push(msg.draw.tile);
        return null;
      }
      case "turn_request": {
        const t = msg.turn_request;
        const view = this.seats.get(key) || { hand: [], scores: [] };
        try {
          const placement = chooseMove(view, t.legal_moves);
          return { move: { match_id: msg.match_id, seat: msg.seat, request_id: t.request_id, placement } };
        } catch (e) {
          // Report it at once (the seat is adjudicated as a crash) instead of timing out.
          return { error: { match_id: msg.match_id, seat: msg.seat, request_id: t.request_id, detail: String(e && e.stack || e) } };
        }
      }
      case "match_result":
        this.seats.delete(key);
        return null;
      case "notice":
        console.log(`notice: ${msg.notice.text}`);
        return null;
      case "goodbye":
        this.goodbye = msg.goodbye.reason || "goodbye";
        return null;
      default: // passed, round_end: public events this strategy does not need
        return null;
    }
  }

  // One stream until it ends; resolves with null after a Goodbye, else the error.
  stream(client) {
    return new Promise((resolve) => {
      const metadata = new grpc.Metadata();
      metadata.set("authorization", `Bearer ${this.opts.token}`);
      const call = client.Play(metadata);
      let settled = false;
      const done = (err) => {
        if (!settled) {
          settled = true;
          resolve(err);
        }
      };
      call.on("data", (batch) => {
        for (const msg of batch.messages) {
          const answer = this.handle(msg);
          if (answer) call.write(answer);
        }
        if (this.goodbye !== null) call.end();
      });
      call.on("error", (err) => done(this.goodbye !== null ? null : err));
      call.on("end", () => done(this.goodbye !== null ? null : Object.assign(new Error("stream ended without a Goodbye"), { code: grpc.status.UNAVAILABLE })));
      call.write({ hello: { name: NAME, version: VERSION, protocol_version: PROTOCOL_VERSION, max_seats: 0, entrant: this.opts.entrant } });
    });
  }

  // Play until Goodbye; reconnect with backoff after transient errors (a dropped connection).
  async run() {
    // grpc-js understands "HOST:PORT" and "unix:/path" addresses as they are.
    const creds = this.opts.tlsCa ? grpc.credentials.createSsl(fs.readFileSync(this.opts.tlsCa))
      : grpc.credentials.createInsecure();
    const client = new this.pkg.Referee(this.opts.referee, creds);
    let attempt = 0;
    let backoff = 50;
    let failingSince = null;
    for (;;) {
      const started = Date.now();
      const err = await this.stream(client);
      if (err === null) {
        console.log(`goodbye: ${this.goodbye}`);
        client.close();
        return 0;
      }
      if (FATAL.has(err.code)) {
        console.error(`the referee refused the stream: ${err.details || err.message}`);
        client.close();
        return FATAL.get(err.code);
      }
      this.seats.clear(); // a new stream starts with no seats
      if (Date.now() - started > 1000) {
        backoff = 50;
        failingSince = null;
        attempt = 0;
      } else if (err.code === grpc.status.UNAVAILABLE) {
        const why = await diagnose(this.opts);
        if (why !== null) {
          console.error(why);
          client.close();
          return 2;
        }
      }
      attempt += 1;
      failingSince = failingSince || started;
      if (Date.now() - failingSince > GIVE_UP_MS) {
        console.error(`cannot reach the referee at ${this.opts.referee}: ${err.details || err.message}`);
        client.close();
        return 1;
      }
      console.log(`connection lost (${err.details || err.message}); reconnecting (attempt ${attempt + 1}, in ${backoff} ms)`);
      await new Promise((r) => setTimeout(r, backoff));
      backoff = Math.min(backoff * 2, 5000);
    }
  }
}

async function main() {
  // grpc-js sets the TLS server name to the address dialled, even an IP address; Node then warns
  // (DEP0123) on every connection. The check is the same either way: this one warning is dropped.
  const emitWarning = process.emitWarning;
  process.emitWarning = (warning, ...rest) => {
    if (rest.includes("DEP0123") || rest[0]?.code === "DEP0123") return;
    emitWarning.call(process, warning, ...rest);
  };
  const opts = settings(process.argv.slice(2));
  const bot = new Bot(opts, loadProto(opts.proto));
  process.on("SIGTERM", () => process.exit(0));
  process.exit(await bot.run());
}

if (require.main === module) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}

module.exports = { Bot, chooseMove, loadProto };
