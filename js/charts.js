// Charts of an episode's step values under its picture: one row per value, every episode's line in
// it (compare), a cursor at the frame shown, and the values at the cursor as text. Shared by the
// episode player (episode.js) and the live view's replay (draw.js).

/** Height of one chart row, in CSS pixels. */
export const ROW_HEIGHT = 56;
/** Line colours, one per episode (a compare's policies), in order. */
export const COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"];
const LABEL_FONT = "11px system-ui, sans-serif";

/** A number as the readout shows it: integers whole, others to 4 significant digits; "–" for none. */
export function formatValue(value) {
  if (value === null || value === undefined || Number.isNaN(value)) return "–";
  if (Number.isInteger(value)) return String(value);
  return String(Number(value.toPrecision(4)));
}

/** "step 120 · reward 1 · value 60" for row `index` of `columns` ({name: values}); "· terminated" at an end. */
export function readout(columns, names, index) {
  const at = (name) => (columns[name] ? columns[name][index] : undefined);
  const parts = [`step ${formatValue(at("step"))}`];
  for (const name of names) {
    if (name !== "step") parts.push(`${name} ${formatValue(at(name))}`);
  }
  if (at("terminated") === 1) parts.push("terminated");
  else if (at("truncated") === 1) parts.push("truncated");
  return parts.join(" · ");
}

// Columns that say where a row is, not what happened there: never charted.
const PLACE = new Set(["frame", "episode", "step"]);
/** Charts shown when nobody chose: at most this many. */
export const DEFAULT_CHARTS = 6;

/** The names a chart could show: every column of the episodes but where a row is, in order of appearance. */
export function chartable(episodes) {
  const names = [];
  for (const episode of episodes) {
    for (const name of Object.keys(episode.columns)) {
      if (!PLACE.has(name) && !names.includes(name)) names.push(name);
    }
  }
  return names;
}

/** What is charted when nobody chose: reward, return, the action's and the other values, not the ends. */
export function defaultNames(columns) {
  return chartable([{ columns }]).filter((name) => name !== "terminated" && name !== "truncated").slice(0, DEFAULT_CHARTS);
}

/** The readout of one row (a dict of values). */
export function rowReadout(row, names) {
  return readout(Object.fromEntries(Object.entries(row).map(([name, value]) => [name, [value]])), names, 0);
}

/** The smallest and largest value of `lists` (arrays of numbers or null) over `count` entries; a flat line
 * gets a range around it. */
export function valueRange(lists, count = Infinity) {
  let low = Infinity;
  let high = -Infinity;
  for (const values of lists) {
    const end = Math.min(values.length, count);
    for (let i = 0; i < end; i += 1) {
      const v = values[i];
      if (v === null || Number.isNaN(v)) continue;
      if (v < low) low = v;
      if (v > high) high = v;
    }
  }
  if (low === Infinity) return [0, 1];
  if (low === high) return [low - 1, high + 1];
  return [low, high];
}

/** The x of frame `index` of `count` across `width` pixels (frame centres). */
export function xOf(index, count, width) {
  return count <= 1 ? width / 2 : ((index + 0.5) / count) * width;
}

/** The frame at x of `width` pixels, of `count` frames: the inverse of xOf, clamped. */
export function frameAt(x, count, width) {
  return Math.max(0, Math.min(count - 1, Math.floor((x / width) * count)));
}

/** One value's line: segments between missing values, the drawn y range [top, top + height]. */
function line(context, values, count, width, top, height, [low, high]) {
  context.beginPath();
  let drawing = false;
  for (let i = 0; i < Math.min(values.length, count); i += 1) {
    const v = values[i];
    if (v === null || Number.isNaN(v)) {
      drawing = false;
      continue;
    }
    const x = xOf(i, count, width);
    const y = top + height - ((v - low) / (high - low)) * height;
    if (drawing) context.lineTo(x, y);
    else context.moveTo(x, y);
    drawing = true;
  }
  context.stroke();
}

/**
 * Draw one chart row per name of `names` on `context` (width x names.length * ROW_HEIGHT pixels):
 * each episode's values of that name as a line in its colour, the name and range as labels, and a
 * cursor at frame `cursor` of `count` frames.
 * @param {CanvasRenderingContext2D} context
 * @param {{columns: Object<string, (number|null)[]>}[]} episodes
 */
export function drawCharts(context, episodes, names, count, cursor, width) {
  context.clearRect(0, 0, width, names.length * ROW_HEIGHT);
  context.font = LABEL_FONT;
  names.forEach((name, row) => {
    const top = row * ROW_HEIGHT;
    const lists = episodes.map((episode) => episode.columns[name] || []);
    const range = valueRange(lists, count);
    context.fillStyle = row % 2 ? "rgba(127,127,127,0.06)" : "rgba(127,127,127,0.12)";
    context.fillRect(0, top, width, ROW_HEIGHT);
    context.lineWidth = 1.5;
    lists.forEach((values, index) => {
      context.strokeStyle = COLOURS[index % COLOURS.length];
      line(context, values, count, width, top + 14, ROW_HEIGHT - 20, range);
    });
    context.fillStyle = "#555";
    context.textAlign = "left";
    context.fillText(name, 4, top + 11);
    context.textAlign = "right";
    context.fillText(`${formatValue(range[0])} … ${formatValue(range[1])}`, width - 4, top + 11);
  });
  const x = Math.round(xOf(cursor, count, width)) + 0.5;
  context.strokeStyle = "#e53935";
  context.lineWidth = 1;
  context.beginPath();
  context.moveTo(x, 0);
  context.lineTo(x, names.length * ROW_HEIGHT);
  context.stroke();
}
