// The rollout player's arithmetic: where a frame's numbers are, which cell a click is on, the readout.
import assert from "node:assert/strict";
import { test } from "node:test";

import { cellAt, frameOf, rolloutReadout, statesOf, timeline } from "../rollout.js";

const cartpole = { kind: "cartpole", width: 600, height: 400 };
const grid = { kind: "grid", width: 1200, height: 800, count: 3, columns: 2, state_dim: 4, cell: cartpole };

test("segments are played one after another, each frame's numbers found in the one buffer", () => {
  const placed = timeline([cartpole, grid], [{ scene: 0, frames: 2, size: 4 }, { scene: 1, frames: 1, size: 15 }]);
  assert.deepEqual(placed.map(({ start, offset }) => [start, offset]), [[0, 0], [2, 8]]);
  const states = Float32Array.from({ length: 23 }, (_, i) => i);
  assert.deepEqual(Array.from(frameOf(placed, states, 1).state), [4, 5, 6, 7]);
  const { scene, state } = frameOf(placed, states, 2);
  assert.equal(scene, grid);
  assert.equal(state.length, 15);
  const alone = frameOf(placed, states, 2, 2); // env 2 of the grid: its own cell's scene and numbers
  assert.equal(alone.scene, cartpole);
  assert.deepEqual(Array.from(alone.state), [16, 17, 18, 19]);
  assert.equal(frameOf(placed, states, 0, 2).scene, cartpole); // a focus on a scene that is no grid: the whole
});

test("a click finds the grid's cell under it, at any size shown, and nothing past the last env", () => {
  assert.equal(cellAt(grid, 10, 10, 600), 0);
  assert.equal(cellAt(grid, 590, 10, 600), 1);
  assert.equal(cellAt(grid, 10, 390, 600), 2);
  assert.equal(cellAt(grid, 590, 390, 600), -1); // the empty fourth cell
  assert.equal(cellAt(grid, 700, 10, 600), -1);
});

test("the readout shows the env in focus, or the mean over the envs, and a dash for what is missing", () => {
  const values = { reward: [[1, 2], [3, null]] };
  assert.equal(rolloutReadout(values, ["reward"], 0, 2, -1, 2), "frame 1/2 · mean of 2 envs · reward 2");
  assert.equal(rolloutReadout(values, ["reward"], 1, 2, 1, 2), "frame 2/2 · env 1 · reward –");
  assert.equal(rolloutReadout({ x: [[0.5]] }, ["x"], 0, 1, -1, 1), "frame 1/1 · x 0.5");
});

test("a widget's bytes become float32 numbers wherever they start in their buffer", () => {
  const bytes = new Uint8Array(9);
  new DataView(bytes.buffer).setFloat32(1, 2.5, true);
  assert.deepEqual(Array.from(statesOf(new DataView(bytes.buffer, 1, 4))), [2.5]);
  const numbers = Float32Array.of(1, 2);
  assert.equal(statesOf(numbers), numbers);
  assert.deepEqual(Array.from(statesOf(numbers.buffer)), [1, 2]);
});
