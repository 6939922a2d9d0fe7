// The leftmost legal column, at once: what the arena adds to a Node program's move.
const readline = require('readline');
let width = 7, height = 6;
readline.createInterface({input: process.stdin}).on('line', (line) => {
  const request = JSON.parse(line);
  if (request.type === 'hello') {
    process.stdout.write(JSON.stringify({type: 'hello', protocol: 1, name: 'bench-javascript', variants: [{gravity: [true]}]}) + '\n');
  } else if (request.type === 'new_game') {
    ({width, height} = request.rules);
    process.stdout.write('{"ok": true}\n');
  } else if (request.type === 'move') {
    const counts = new Array(width).fill(0);
    for (const move of request.moves) counts[move]++;
    let column = 0;
    while (column < width - 1 && counts[column] >= height) column++;
    process.stdout.write(JSON.stringify({move: column}) + '\n');
  } else if (request.type === 'quit') {
    process.exit(0);
  }
});
