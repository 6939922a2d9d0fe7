#!/usr/bin/env node
// js-mcts: Monte Carlo tree search (UCT with random playouts) within a time budget,
// after two checks no playout needs: take a win in one, block the opponent's.
// Speaks the arena's bot protocol, version 1 (docs/protocol.md): JSON lines on
// stdin and stdout, its log on stderr. Node's own JSON and readline only.
'use strict';

const readline = require('readline');

const HELLO = {
  type: 'hello',
  protocol: 1,
  name: 'js-mcts',
  author: 'connectk-arena examples',
  version: '1',
  options: {
    seconds: {type: 'float', default: 0.5, min: 0.01, max: 30,
      help: 'thinking time per move, at most half the time the move allows'},
    playouts: {type: 'int', default: 0, min: 0, max: 10000000,
      help: 'playouts per move instead of a time (0: by time); the same seed then gives the same game'},
    c: {type: 'float', default: 1.4, min: 0, max: 10, help: 'UCT exploration constant'},
  },
  variants: [{width: [3, 15], height: [3, 15], connect: [3, 15], gravity: [true, false]}],
};

const DIRECTIONS = [[0, 1], [1, 0], [1, 1], [1, -1]];

// A seeded generator (mulberry32): the same seed, the same game.
function generator(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6D2B79F5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// The board: cells row * width + column, row 0 at the top. Moves are the protocol's
// numbers (the column, or without gravity column * height + row from the bottom);
// landing() turns one into a cell.
class Board {
  constructor(rules) {
    this.w = rules.width;
    this.h = rules.height;
    this.k = rules.connect;
    this.gravity = rules.gravity;
    this.cells = new Int8Array(this.w * this.h).fill(-1);
    this.filled = new Int16Array(this.w);
    this.ply = 0;
  }

  copy() {
    const b = Object.create(Board.prototype);
    Object.assign(b, this);
    b.cells = this.cells.slice();
    b.filled = this.filled.slice();
    return b;
  }

  moveCount() {
    return this.gravity ? this.w : this.w * this.h;
  }

  // The cell a move puts a stone on, or -1 if it is not legal now.
  landing(move) {
    if (!Number.isInteger(move) || move < 0 || move >= this.moveCount()) return -1;
    if (this.gravity) return this.filled[move] >= this.h ? -1 : (this.h - 1 - this.filled[move]) * this.w + move;
    const cell = (this.h - 1 - move % this.h) * this.w + Math.floor(move / this.h);
    return this.cells[cell] >= 0 ? -1 : cell;
  }

  legalMoves() {
    const moves = [];
    for (let m = 0; m < this.moveCount(); m++) if (this.landing(m) >= 0) moves.push(m);
    return moves;
  }

  // Whether a stone of the player on the cell makes a line of k.
  wins(cell, player) {
    const row = Math.floor(cell / this.w), col = cell % this.w;
    for (const [dr, dc] of DIRECTIONS) {
      let run = 1;
      for (const sign of [-1, 1]) {
        let r = row + sign * dr, c = col + sign * dc;
        while (r >= 0 && r < this.h && c >= 0 && c < this.w && this.cells[r * this.w + c] === player) {
          run++;
          r += sign * dr;
          c += sign * dc;
        }
      }
      if (run >= this.k) return true;
    }
    return false;
  }

  // Plays the move for the player to move; true if it wins.
  play(move) {
    const cell = this.landing(move), player = this.ply % 2;
    const won = this.wins(cell, player);
    this.cells[cell] = player;
    if (this.gravity) this.filled[move]++;
    this.ply++;
    return won;
  }

  winningMoves(player) {
    return this.legalMoves().filter((m) => this.wins(this.landing(m), player));
  }
}

class Node {
  constructor(parent, move, player, moves) {
    this.parent = parent;
    this.move = move;
    this.player = player; // who made `move`
    this.untried = moves;
    this.children = [];
    this.visits = 0;
    this.wins = 0; // for the player who made `move`; a draw counts a half
  }
}

// A random game from the board; the winner (0, 1) or -1 for a draw.
function playout(board, random) {
  const moves = board.legalMoves();
  for (;;) {
    if (moves.length === 0) return -1;
    const i = Math.floor(random() * moves.length);
    const move = moves[i];
    const player = board.ply % 2;
    if (board.play(move)) return player;
    if (board.landing(move) < 0) {
      moves[i] = moves[moves.length - 1];
      moves.pop();
    }
  }
}

function search(root, options, deadline, random) {
  const tree = new Node(null, -1, -1, root.legalMoves());
  let playouts = 0;
  const enough = options.playouts > 0 ? () => playouts >= options.playouts : () => Date.now() >= deadline;
  while (!enough()) {
    const board = root.copy();
    let node = tree, winner = null;
    // Down the tree by UCT, while every move of the node has a child.
    while (node.untried.length === 0 && node.children.length > 0) {
      const logN = Math.log(node.visits);
      let best = null, bestValue = -Infinity;
      for (const child of node.children) {
        const value = child.wins / child.visits + options.c * Math.sqrt(logN / child.visits);
        if (value > bestValue) { bestValue = value; best = child; }
      }
      node = best;
      const player = board.ply % 2;
      if (board.play(node.move)) { winner = player; break; }
    }
    // One new child, then a random game from there.
    if (winner === null && node.untried.length > 0) {
      const i = Math.floor(random() * node.untried.length);
      const move = node.untried[i];
      node.untried[i] = node.untried[node.untried.length - 1];
      node.untried.pop();
      const player = board.ply % 2;
      const won = board.play(move);
      const child = new Node(node, move, player, won ? [] : board.legalMoves());
      node.children.push(child);
      node = child;
      winner = won ? player : null;
    }
    if (winner === null) winner = playout(board, random);
    playouts++;
    // The result goes back up, each node counting it for the player who moved into it.
    for (let n = node; n; n = n.parent) {
      n.visits++;
      if (winner === -1) n.wins += 0.5;
      else if (winner === n.player) n.wins += 1;
    }
  }
  return {tree, playouts};
}

let game = null;

function answer(message) {
  process.stdout.write(JSON.stringify(message) + '\n');
}

function newGame(req) {
  const rules = req.rules || {};
  const {width, height, connect, gravity} = rules;
  if (![width, height, connect].every(Number.isInteger) || typeof gravity !== 'boolean') {
    return {error: 'new_game: rules need whole width, height, connect and a true/false gravity'};
  }
  if ([width, height, connect].some((n) => n < 3 || n > 15)) {
    return {error: 'new_game: this bot plays boards of 3 to 15 a side, connect 3 to 15'};
  }
  if (rules.scoring !== undefined && rules.scoring !== 'line') {
    return {error: 'new_game: this bot plays line scoring only'};
  }
  const given = req.options || {};
  const options = {};
  for (const [name, spec] of Object.entries(HELLO.options)) {
    options[name] = typeof given[name] === 'number' ? given[name] : spec.default;
  }
  // The seed may be past 2^53: hash its digits as written.
  let hash = 2166136261;
  for (const ch of String(req.seed ?? 0)) hash = Math.imul(hash ^ ch.charCodeAt(0), 16777619);
  game = {rules: {width, height, connect, gravity}, options, random: generator(hash)};
  process.stderr.write(`js-mcts: ${width}x${height} connect ${connect}, ${gravity ? 'gravity' : 'no gravity'}, `
    + `options ${JSON.stringify(options)}\n`);
  return {ok: true};
}

function move(req) {
  if (!game) return {error: 'move before new_game'};
  if (!Array.isArray(req.moves)) return {error: 'move: no list of moves'};
  const board = new Board(game.rules);
  for (let i = 0; i < req.moves.length; i++) {
    const m = req.moves[i];
    if (board.landing(m) < 0) {
      const count = board.moveCount();
      const why = !Number.isInteger(m) ? 'is not a whole number'
        : m < 0 || m >= count ? `is off the board (0..${count - 1})`
          : board.gravity ? 'is a full column' : 'is a taken cell';
      return {error: `move ${i + 1} (${JSON.stringify(m)}) ${why}`};
    }
    if (board.play(m)) {
      return {error: i + 1 < req.moves.length
        ? `moves after the game was won (by move ${i + 1})`
        : `the game is over: move ${i + 1} won it`};
    }
  }
  const legal = board.legalMoves();
  if (legal.length === 0) return {error: 'the board is full: there is nothing to play'};
  const started = Date.now();
  const me = board.ply % 2;
  const pick = (moves) => moves[Math.floor(game.random() * moves.length)];
  const wins = board.winningMoves(me);
  if (wins.length) return {move: pick(wins), info: {why: 'win'}};
  const blocks = board.winningMoves(1 - me);
  if (blocks.length) return {move: pick(blocks), info: {why: 'block'}};

  const limit = req.limit || {};
  const allowed = typeof limit.move_seconds === 'number' ? limit.move_seconds : 1;
  const seconds = Math.min(game.options.seconds, allowed / 2);
  const {tree, playouts} = search(board, game.options, started + seconds * 1000, game.random);
  let best = tree.children[0];
  for (const child of tree.children) if (child.visits > best.visits) best = child;
  // From -1 (sure loss) to 1 (sure win), so that positive means winning.
  const score = Math.round((2 * best.wins / best.visits - 1) * 1000) / 1000;
  const time = (Date.now() - started) / 1000;
  process.stderr.write(`ply ${board.ply}: ${best.move} after ${playouts} playouts, score ${score}, ${time} s\n`);
  return {move: best.move, info: {score, nodes: playouts, time, why: 'mcts'}};
}

const input = readline.createInterface({input: process.stdin, terminal: false});
input.on('line', (line) => {
  if (!line.trim()) return;
  let req;
  try {
    req = JSON.parse(line);
  } catch (e) {
    answer({error: `unreadable request: ${e.message}`});
    return;
  }
  if (req === null || typeof req !== 'object' || typeof req.type !== 'string') {
    answer({error: 'a request is an object with a type'});
    return;
  }
  switch (req.type) {
    case 'hello': answer(HELLO); break;
    case 'new_game': answer(newGame(req)); break;
    case 'move': answer(move(req)); break;
    case 'quit': process.exit(0); break;
    default: answer({error: 'unknown request type'});
  }
});
input.on('close', () => process.exit(0));
