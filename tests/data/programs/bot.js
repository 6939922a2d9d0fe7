// A Connect Four bot speaking protocol v1: the first column that is not full.
const readline = require("readline");
const input = readline.createInterface({ input: process.stdin });
input.on("line", (line) => {
  const request = JSON.parse(line);
  if (request.type === "quit") process.exit(0);
  let answer;
  if (request.type === "hello") answer = { type: "hello", protocol: 1, name: "first-js" };
  else if (request.type === "new_game") answer = { ok: true };
  else {
    const count = [0, 0, 0, 0, 0, 0, 0];
    for (const move of request.moves) count[move]++;
    answer = { move: count.findIndex((c) => c < 6) };
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
});
