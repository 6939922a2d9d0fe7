// A trivial protocol-v1 bot in JavaScript (Node): the lowest column that is not full.
const readline = require("readline");

readline.createInterface({ input: process.stdin }).on("line", (line) => {
  const request = JSON.parse(line);
  let answer;
  if (request.type === "quit") {
    process.exit(0);
  } else if (request.type === "hello") {
    answer = { type: "hello", protocol: 1, name: "node" };
  } else if (request.type === "new_game") {
    answer = { ok: true };
  } else {
    const height = [0, 0, 0, 0, 0, 0, 0];
    for (const move of request.moves) height[move]++;
    let column = 0;
    while (height[column] >= 6) column++;
    answer = { move: column, info: { node: process.version } };
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
});
