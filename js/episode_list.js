// The table of episodes (gymview.show_video of a folder of recordings, a record_batch result): one row
// per episode, sorted by a click on a column's heading, a click on a row opens that episode in the
// player below it (the kernel loads it: the "selected" trait). Its model: "_rows" (dicts of cells, each
// with "index" and "openable"), "_columns" (the cells shown, in order), "selected".
import { formatValue } from "./charts.js";

/** `rows` sorted by `column` (missing cells last), descending or not; the sort is stable. */
export function sortedRows(rows, column, descending) {
  const key = (row) => {
    const value = row[column];
    return value === null || value === undefined || Number.isNaN(value) ? null : value;
  };
  return rows
    .map((row, order) => ({ row, order }))
    .sort((a, b) => {
      const x = key(a.row);
      const y = key(b.row);
      if (x === null || y === null) return x === y ? a.order - b.order : x === null ? 1 : -1;
      if (x === y) return a.order - b.order;
      const ascending = typeof x === "string" ? x.localeCompare(y) : x - y;
      return descending ? -ascending : ascending;
    })
    .map(({ row }) => row);
}

function cellText(value) {
  if (typeof value === "boolean") return value ? "yes" : "";
  if (typeof value === "number") return formatValue(value);
  return value === null || value === undefined ? "" : String(value);
}

/** Render the table into `el`; returns its clean-up. */
export function renderList({ model, el }) {
  el.classList.add("gymview-episodes");
  const table = document.createElement("table");
  table.className = "gymview-episode-table";
  el.append(table);
  let sort = { column: null, descending: false };

  const draw = () => {
    const columns = model.get("_columns");
    const head = document.createElement("tr");
    for (const column of columns) {
      const th = document.createElement("th");
      const arrow = sort.column === column ? (sort.descending ? " ▼" : " ▲") : "";
      th.textContent = column + arrow;
      th.dataset.column = column;
      th.title = `sort by ${column}`;
      th.addEventListener("click", () => {
        // numbers sort best first (largest return) on the first click, names from A
        const numeric = model.get("_rows").some((row) => typeof row[column] === "number");
        sort = sort.column === column ? { column, descending: !sort.descending } : { column, descending: numeric };
        draw();
      });
      head.append(th);
    }
    const rows = sort.column === null ? model.get("_rows") : sortedRows(model.get("_rows"), sort.column, sort.descending);
    const body = rows.map((row) => {
      const tr = document.createElement("tr");
      tr.dataset.index = String(row.index);
      tr.classList.toggle("gymview-openable", Boolean(row.openable));
      tr.classList.toggle("gymview-selected", row.index === model.get("selected"));
      for (const column of columns) {
        const td = document.createElement("td");
        td.textContent = cellText(row[column]);
        tr.append(td);
      }
      if (row.openable) {
        tr.title = "open this episode in the player";
        tr.addEventListener("click", () => {
          model.set("selected", row.index);
          model.save_changes();
        });
      }
      return tr;
    });
    table.replaceChildren(head, ...body);
    el.dataset.sortedBy = sort.column ?? "";
    el.dataset.order = rows.map((row) => row.index).join(",");
  };
  draw();
  model.on("change:_rows", draw);
  model.on("change:selected", draw);
  return () => {
    model.off("change:_rows", draw);
    model.off("change:selected", draw);
  };
}
