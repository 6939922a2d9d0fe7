// Every <time datetime> of the page in the visitor's own time zone, in the style the
// server writes UTC in ("2026-11-26 22:26 CET"); without JavaScript the page keeps
// the server's UTC. Marked data-enhance: a live page runs it again over new regions.
"use strict";
(() => {
  const two = (n) => String(n).padStart(2, "0");
  const zone = (date) => {
    const part = new Intl.DateTimeFormat(undefined, { timeZoneName: "short" })
      .formatToParts(date).find((p) => p.type === "timeZoneName");
    return part ? part.value : "";
  };
  document.querySelectorAll("time[datetime]:not([data-local])").forEach((element) => {
    const date = new Date(element.getAttribute("datetime"));
    if (Number.isNaN(date.getTime())) return; // not a time the browser reads: the server's text stays
    element.textContent = `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())} `
      + `${two(date.getHours())}:${two(date.getMinutes())} ${zone(date)}`.trimEnd();
    element.dataset.local = "";
  });
})();
