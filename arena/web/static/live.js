// A page with [data-live] regions follows the database while tournaments run:
// every 2 s it asks /api/version (a few numbers, cheap), and only when those
// changed fetches this page again and swaps in its new regions, then runs the
// scripts marked data-enhance again over them (sorting the standings). Without
// JavaScript the page is the same, as of its loading.
"use strict";
(() => {
  const regions = document.querySelectorAll("[data-live][id]");
  if (!regions.length) return;
  const EVERY_MS = 2000;
  const status = document.createElement("p");
  status.className = "live-status";
  status.setAttribute("role", "status");
  if (document.querySelector("[data-live][data-running]")) status.textContent = "Live: this page updates as games finish.";
  regions[0].before(status);
  let version = null;

  async function currentVersion() {
    const response = await fetch("/api/version", { cache: "no-store" });
    if (!response.ok) throw new Error(`version: ${response.status}`);
    return JSON.stringify((await response.json()).version);
  }

  async function refresh() {
    const response = await fetch(location.href, { cache: "no-store" });
    if (!response.ok) return; // the selection went away (an error page): keep what is shown
    const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
    document.querySelectorAll("[data-live][id]").forEach((region) => {
      const replacement = fresh.getElementById(region.id);
      if (replacement) region.replaceWith(document.adoptNode(replacement));
    });
    document.querySelectorAll("script[data-enhance]").forEach((script) => {
      const again = document.createElement("script");
      again.src = script.src;
      again.dataset.enhance = "";
      script.replaceWith(again);
    });
    status.textContent = `Live: updated at ${new Date().toLocaleTimeString()}.`;
  }

  async function poll() {
    if (!document.hidden) {
      try {
        const now = await currentVersion();
        // The first answer only sets where the page stands, except on a page drawn
        // while a tournament ran: a game stored between its drawing and this first
        // answer would otherwise never be shown, so it is fetched once more.
        const first = version === null;
        const stale = first ? document.querySelector("[data-live][data-running]") !== null : now !== version;
        if (stale) await refresh();
        version = now;
      } catch (error) {
        // The server restarting or the network down: the next tick tries again.
      }
    }
    setTimeout(poll, EVERY_MS);
  }

  poll();
})();
