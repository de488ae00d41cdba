// The episode player's arithmetic and the table's sort: `node --test js/tests/`.
import assert from "node:assert/strict";
import { test } from "node:test";

import { chartable, defaultNames, formatValue, frameAt, readout, rowReadout, valueRange, xOf } from "../charts.js";
import { frameOf, timeOf } from "../episode.js";
import { cursorOf } from "../replay_charts.js";
import { sortedRows } from "../episode_list.js";

test("values at the cursor read as the step table's row", () => {
  const columns = { step: [0, 1, 2], reward: [0, 1, 0.123456], value: [null, 60, 61.5], terminated: [0, 0, 1] };
  assert.equal(readout(columns, ["reward", "value"], 1), "step 1 · reward 1 · value 60");
  assert.equal(readout(columns, ["reward", "value"], 2), "step 2 · reward 0.1235 · value 61.5 · terminated");
  assert.equal(readout(columns, ["value"], 0), "step 0 · value –");
  assert.equal(formatValue(-1234.5678), "-1235");
  assert.equal(formatValue(Number.NaN), "–");
});

test("frames map to the video's time and the charts' x, and back", () => {
  const episode = { start: 10, count: 5 };
  assert.equal(timeOf(episode, 2, 50), 12.5 / 50);
  assert.equal(timeOf(episode, 99, 50), 14.5 / 50); // past its end: its last frame
  assert.equal(frameOf(episode, timeOf(episode, 3, 50), 50), 3);
  assert.equal(frameOf(episode, 12 / 50, 50), 2); // a frame's own presentation time
  assert.equal(frameOf(episode, 0, 50), 0);
  for (let frame = 0; frame < 7; frame += 1) assert.equal(frameAt(xOf(frame, 7, 300), 7, 300), frame);
  assert.equal(frameAt(-5, 7, 300), 0);
  assert.equal(frameAt(400, 7, 300), 6);
});

test("a chart's range skips missing values; a flat line gets room", () => {
  assert.deepEqual(valueRange([[null, 2, 5], [3, Number.NaN]]), [2, 5]);
  assert.deepEqual(valueRange([[4, 4]]), [3, 5]);
  assert.deepEqual(valueRange([[null]]), [0, 1]);
  assert.deepEqual(valueRange([[1, 2, 100]], 2), [1, 2]); // only the frames shown
});

test("every column but where a row is can be charted", () => {
  const episodes = [{ columns: { frame: [], episode: [], step: [], reward: [], value: [] } }, { columns: { entropy: [] } }];
  assert.deepEqual(chartable(episodes), ["reward", "value", "entropy"]);
  const columns = { step: [], reward: [], return: [], terminated: [], truncated: [], action: [], a: [], b: [], c: [], d: [] };
  assert.deepEqual(defaultNames(columns), ["reward", "return", "action", "a", "b", "c"]);
  assert.equal(rowReadout({ episode: 2, step: 7, reward: 1, value: 0.5 }, ["reward", "value"]), "step 7 · reward 1 · value 0.5");
});

test("the table sorts by a column, missing cells last, ties in their order", () => {
  const rows = [
    { index: 0, return: 10, file: "b" },
    { index: 1, return: null, file: "a" },
    { index: 2, return: 30, file: "c" },
    { index: 3, return: 10, file: "a" },
  ];
  assert.deepEqual(sortedRows(rows, "return", true).map((row) => row.index), [2, 0, 3, 1]);
  assert.deepEqual(sortedRows(rows, "return", false).map((row) => row.index), [0, 3, 2, 1]);
  assert.deepEqual(sortedRows(rows, "file", false).map((row) => row.index), [1, 3, 0, 2]);
});

test("a kept frame's cursor sits at its step among the rows sent, between them when some were left out", () => {
  const steps = { first: 100, stride: 4, frames: [100, 110, null] };
  assert.equal(cursorOf(steps, 0), 0);
  assert.equal(cursorOf(steps, 1), 2.5);
  assert.equal(cursorOf(steps, 2), null);
  assert.equal(cursorOf(steps, 1, { replay: 1, row: 110 }), 2.5); // the replayed frame's own header
  assert.equal(cursorOf(steps, 0, { replay: 1, row: 110 }), 0); // a header of another frame: not used
});
