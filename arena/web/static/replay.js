// The replay of a game page. The server drew the board after one ply and lists
// every move with a link to the board after it (?ply=N), which is the whole page
// without JavaScript. This plays the game on the page itself: stones drop into
// place (or appear in their cells, where the server says they fall no rows), with
// play/pause, steps, a slider and the left and right arrow keys. Each stone carries
// data-col, data-row and data-player, so what the board shows can be read back from the page.
// At the last ply the line that won (the server found it with the engine: none for a
// draw, a forfeit or a game won on the count of lines) is ringed, once the last stone has landed.
"use strict";
(() => {
  const data = JSON.parse(document.getElementById("replay-data").textContent);
  const svg = document.getElementById("board");
  const layer = svg.querySelector(".stones");
  const marker = svg.querySelector(".last");
  const winLine = svg.querySelector(".win-line"); // absent where no line won
  const caption = document.getElementById("board-caption");
  const slider = document.getElementById("replay-ply");
  const count = document.getElementById("replay-count");
  const playButton = document.querySelector("[data-play]");
  const steps = Object.fromEntries(Array.from(document.querySelectorAll("[data-step]"), (b) => [b.dataset.step, b]));
  const rows = Array.from(document.querySelectorAll("#moves tbody tr"));
  const box = document.querySelector(".moves-box");
  const still = window.matchMedia("(prefers-reduced-motion: reduce)");
  const total = data.cells.length;
  const cell = data.cell;
  const stones = new Array(total).fill(null); // by ply: the stone it put down, while shown
  svg.querySelectorAll(".stone").forEach((stone) => { stones[Number(stone.dataset.ply)] = stone; });
  let ply = data.ply;
  let timer = null;

  document.querySelectorAll("[data-without-js]").forEach((element) => { element.hidden = true; });
  document.querySelectorAll("[data-with-js]").forEach((element) => { element.hidden = false; });

  const centre = ([column, row]) =>
    [data.left + column * cell + cell / 2, (data.height - 1 - row) * cell + cell / 2];

  function newStone(index) {
    const stone = document.createElementNS("http://www.w3.org/2000/svg", "circle");
    const [column, row] = data.cells[index];
    const [x, y] = centre(data.cells[index]);
    stone.setAttribute("class", "stone");
    stone.setAttribute("cx", x);
    stone.setAttribute("cy", y);
    stone.setAttribute("r", cell * 0.42);
    Object.assign(stone.dataset, { ply: index, col: column, row, player: index % 2 });
    return stone;
  }

  // The stone's way into place; its Animation, or null where motion is not wanted.
  function animate(stone, index) {
    if (still.matches) return null;
    const rowsFallen = data.falls[index]; // worked out by the server: 0 where a stone appears in its cell
    if (!rowsFallen) {
      return stone.animate([{ transform: "scale(0.3)", opacity: 0 }, { transform: "scale(1)", opacity: 1 }],
        { duration: 180, easing: "ease-out" });
    }
    // From where it comes in (just above the board) to its cell, faster as it falls
    // (the time of a fall grows with the square root of its height), with a small bounce.
    const fall = rowsFallen * cell;
    return stone.animate([
      { transform: `translateY(${-fall}px)`, easing: "cubic-bezier(.45, 0, 1, .6)" },
      { transform: "translateY(0)", offset: 0.84, easing: "ease-out" },
      { transform: `translateY(${-cell * 0.12}px)`, offset: 0.92, easing: "ease-in" },
      { transform: "translateY(0)" },
    ], { duration: Math.min(150 * Math.sqrt(rowsFallen), 620) });
  }

  function after(shown) {
    const plies = `${total} ${total === 1 ? "ply" : "plies"}`;
    return shown ? `After ${shown} of ${plies}: ${shown % 2 ? "X" : "O"} played ${data.moves[shown - 1]}`
      : `After 0 of ${plies}`;
  }

  // Show the board after `target` plies; a single step forward drops its stone.
  // The address follows (?ply=N), so a position can be linked to as it is seen.
  function show(target, animated = false, remember = true) {
    target = Math.max(0, Math.min(total, target));
    const oneStep = target === ply + 1;
    let landing = null;
    for (let index = ply; index < target; index++) {
      const stone = newStone(index);
      layer.appendChild(stone);
      stones[index] = stone;
      if (animated && oneStep) landing = animate(stone, index);
    }
    for (let index = ply - 1; index >= target; index--) {
      if (stones[index]) stones[index].remove();
      stones[index] = null;
    }
    ply = target;
    svg.dataset.ply = ply;
    if (ply) {
      const [x, y] = centre(data.cells[ply - 1]);
      marker.setAttribute("cx", x);
      marker.setAttribute("cy", y);
      if (landing) { // the last move's mark appears once its stone has landed
        marker.setAttribute("visibility", "hidden");
        landing.finished.then(() => { if (ply === target) marker.removeAttribute("visibility"); }, () => {});
      } else {
        marker.removeAttribute("visibility");
      }
    } else {
      marker.setAttribute("visibility", "hidden");
    }
    if (winLine) {
      winLine.setAttribute("visibility", "hidden");
      if (ply === total) {
        const reveal = () => { if (ply === total) winLine.removeAttribute("visibility"); };
        if (landing) landing.finished.then(reveal, () => {});
        else reveal();
      }
    }
    caption.textContent = after(ply);
    slider.value = ply;
    count.textContent = `${ply} / ${total}`;
    steps.first.disabled = steps.back.disabled = ply === 0;
    steps.forward.disabled = steps.last.disabled = ply === total;
    rows.forEach((row) => {
      if (Number(row.dataset.ply) === ply) row.setAttribute("aria-current", "step");
      else row.removeAttribute("aria-current");
    });
    const current = rows[ply - 1];
    if (current && box) { // keep the move in sight inside the list, never scrolling the page
      const top = current.offsetTop;
      if (top < box.scrollTop || top + current.offsetHeight > box.scrollTop + box.clientHeight) {
        box.scrollTop = top - box.clientHeight / 2;
      }
    }
    if (remember) history.replaceState(null, "", `?ply=${ply}${location.hash}`);
  }

  function stop() {
    clearInterval(timer);
    timer = null;
    playButton.textContent = "Play";
    playButton.setAttribute("aria-pressed", "false");
  }

  function play() {
    if (ply >= total) show(0);
    playButton.textContent = "Pause";
    playButton.setAttribute("aria-pressed", "true");
    timer = setInterval(() => (ply >= total ? stop() : show(ply + 1, true)), 700);
  }

  const toggle = () => (timer ? stop() : play());
  const go = (target) => { stop(); show(target, true); };
  const actions = {
    first: () => go(0), back: () => go(ply - 1), forward: () => go(ply + 1), last: () => go(total),
  };

  playButton.addEventListener("click", toggle);
  Object.entries(steps).forEach(([name, button]) => button.addEventListener("click", actions[name]));
  slider.addEventListener("input", () => go(Number(slider.value)));
  document.getElementById("moves").addEventListener("click", (event) => {
    const link = event.target.closest("a[data-goto]");
    if (!link) return;
    event.preventDefault();
    go(Number(link.dataset.goto));
  });
  document.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const target = event.target;
    // Form fields keep their keys (the slider moves itself and says so by "input");
    // so do the keys that scroll the page: only the arrows across it step.
    if (target.closest("input, select, textarea, [contenteditable]")) return;
    const keys = { ArrowLeft: actions.back, ArrowRight: actions.forward };
    if (keys[event.key]) {
      event.preventDefault();
      keys[event.key]();
    }
  });

  document.querySelectorAll("[data-copy]").forEach((button) => {
    button.addEventListener("click", async () => {
      const source = document.getElementById(button.dataset.copy);
      const label = button.textContent;
      try {
        await navigator.clipboard.writeText(source.textContent);
      } catch (error) { // no clipboard API (a page not served over https): copy the selection instead
        const range = document.createRange();
        range.selectNodeContents(source);
        const selection = window.getSelection();
        selection.removeAllRanges();
        selection.addRange(range);
        document.execCommand("copy");
      }
      button.textContent = "Copied";
      setTimeout(() => { button.textContent = label; }, 1500);
    });
  });

  show(ply, false, false);
})();
