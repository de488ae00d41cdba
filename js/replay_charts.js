// The live view's replay charts: while the run is paused, the steps its kept frames span (the kernel's
// "steps" message) charted under the picture, the cursor at the frame the slider shows, the values
// there as text.
import { defaultNames, drawCharts, rowReadout } from "./charts.js";
import { chartsContext } from "./player_parts.js";

/** Where kept frame `index` sits in the charts: its step's position among the rows sent (fractional
 * when every stride-th step was sent), or null for a frame without a step. `header`: the frame's, once
 * its picture came (its "row" names the step too). */
export function cursorOf(steps, index, header = null) {
  const number = header !== null && header.replay === index ? header.row : steps.frames[index];
  if (number === null || number === undefined) return null;
  return (number - steps.first) / steps.stride;
}

/** Draw the charts and the readout for kept frame `index`, or hide them (running, nothing kept). */
export function showReplayCharts(dom, stream, index, shown) {
  const { el, charts, readout } = dom;
  const steps = stream.steps;
  const header = stream.replayed ? stream.replayed.header : null;
  const cursor = shown && steps !== null && index !== null ? cursorOf(steps, index, header) : null;
  charts.hidden = readout.hidden = cursor === null;
  if (cursor === null) {
    el.dataset.chartCursor = "";
    return;
  }
  const names = defaultNames(steps.columns);
  const count = (steps.columns.step || []).length;
  const width = Math.max(320, dom.canvas.clientWidth || dom.canvas.width);
  const context = chartsContext(charts, width, names.length);
  drawCharts(context, [{ columns: steps.columns }], names, count, cursor, width);
  const row = steps.rows[index];
  readout.textContent = row ? rowReadout(row, names) : ""; // the status line above says the episode
  el.dataset.chartCursor = String(cursor);
  el.dataset.chartCount = String(count);
}
