// Click a column heading of a table.sortable to sort by it (again to reverse).
// The table works without it: the server sends it in standings order.
"use strict";
document.querySelectorAll("table.sortable").forEach((table) => {
  const headers = Array.from(table.tHead.rows[0].cells);
  headers.forEach((th, column) => {
    if (!th.dataset.sort) return;
    th.tabIndex = 0;
    const sort = () => {
      const ascending = th.getAttribute("aria-sort") !== "ascending";
      headers.forEach((other) => other.removeAttribute("aria-sort"));
      th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
      const value = (row) => {
        const cell = row.cells[column];
        const raw = cell.dataset.value ?? cell.textContent.trim();
        return th.dataset.sort === "number" ? parseFloat(raw) || 0 : raw.toLowerCase();
      };
      const body = table.tBodies[0];
      const rows = Array.from(body.rows);
      rows.sort((a, b) => (value(a) < value(b) ? -1 : value(a) > value(b) ? 1 : 0) * (ascending ? 1 : -1));
      rows.forEach((row) => body.appendChild(row));
    };
    th.addEventListener("click", sort);
    th.addEventListener("keydown", (event) => { if (event.key === "Enter") sort(); });
  });
});
