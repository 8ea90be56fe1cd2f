// A Seven Rocks bot in plain Node.js: JSON lines in, one move out per turn (docs/protocol.md).
const readline = require("node:readline");

// The heaviest tile scores best here; put your strategy in this function.
function weight(placement) {
  return placement.tile.low + placement.tile.high;
}

const lines = readline.createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const message = JSON.parse(line); // one RefereeMessage per line
  const turn = message.turnRequest;
  if (!turn) return; // a deal, a play, a pass...: a smarter bot keeps track here
  const best = turn.legalMoves.reduce((a, b) => (weight(b) > weight(a) ? b : a));
  process.stdout.write(JSON.stringify({ placement: best }) + "\n"); // a Move; the ids are filled in
});
