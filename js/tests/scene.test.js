// Scene frames without a DOM: states unpacked, several frames in one message, and the drawing calls.
import assert from "node:assert/strict";
import { test } from "node:test";

import { stateOf } from "../protocol.js";
import { addSceneModule, canvasScale, drawScene, envLabel, sceneReady } from "../scene.js";
import { FrameStream } from "../stream.js";

function fakeModel(scene = null) {
  const sent = [];
  return { sent, send: (msg) => sent.push(msg), on() {}, off() {}, get: (name) => (name === "_scene" ? scene : undefined) };
}

const floats = (...values) => new DataView(new Float32Array(values).buffer);

function sceneHeader(seq, extra = {}) {
  return { type: "frame", v: 2, seq, format: "scene", width: 300, height: 200, step: seq, episode: 1,
    episode_return: 0, dropped: 0, scene: 1, ...extra };
}

test("a scene frame's state is its buffer's float32 numbers, copied", () => {
  const buffer = new Float32Array([1.5, -2, 0.25, 7]).buffer;
  const state = stateOf(new DataView(buffer, 4, 8));
  assert.deepEqual([...state], [-2, 0.25]);
  new Float32Array(buffer)[1] = 99;
  assert.equal(state[0], -2);
});

test("scene frames are shown without decoding, and several in one message each in turn", () => {
  const stream = new FrameStream(fakeModel({ kind: "cartpole", id: 1 }), () => assert.fail("decoded"));
  stream.onMessage(sceneHeader(0), [floats(0.1, 0, 0.2, 0)]);
  const frames = [{ seq: 1, step: 5 }, { seq: 2, step: 6 }, { seq: 3, step: 7 }];
  stream.onMessage(sceneHeader(3, { frames }), [floats(1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0)]);
  assert.deepEqual(stream.queued.map((f) => [f.header.seq, f.header.step, f.bitmap.state[0]]),
    [[0, 0, 0.1], [1, 5, 1], [2, 6, 2], [3, 7, 3]].map(([a, b, c]) => [a, b, Math.fround(c)]));
  assert.equal(stream.queued.at(-1).header.frames, undefined);
  assert.equal(stream.received, 4);
  assert.equal(stream.gaps, 0);
  assert.equal(stream.scene.kind, "cartpole");
});

test("a scene kind the page does not know is an error that names it", () => {
  assert.throws(() => drawScene(recordingContext(), { kind: "teapot", width: 2, height: 2 }, new Float32Array(1), 2, 2),
    /cannot draw scenes of kind teapot/);
});

test("a CartPole is drawn in pygame's space, flipped, scaled to the shown size", () => {
  const context = recordingContext();
  const scene = { kind: "cartpole", width: 600, height: 400, scale: 125, pole_length: 125 };
  drawScene(context, scene, new Float32Array([0, 0, 0, 0]), 300, 200);
  assert.ok(context.calls.some(([name, ...args]) => name === "setTransform" && args[0] === 0.5 && args[3] === -0.5));
  const moves = context.calls.filter(([name]) => name === "moveTo");
  assert.deepEqual(moves[0].slice(1), [275, 85]); // the cart's corner: (300 - 25, 100 - 15)
});

test("a LunarLander's particles are drawn where it has them, by colour, and its flags over all", () => {
  const context = recordingContext();
  const box = [[-0.1, -0.2], [0.1, -0.2], [0.1, 0.2], [-0.1, 0.2]];
  const scene = { kind: "lunarlander", width: 600, height: 400, scale: 30, outlines: [box, box, box],
    helipad: [8, 12, 10 / 3], ground_x: [0, 10, 20], particles: 3, particle_radius: 2 };
  const state = new Float32Array([10, 10, 0, 9, 9, 0, 11, 9, 0, 1, 2, 1, 5, 6, 0.85, NaN, NaN, NaN, 7, 8, 0.05]);
  drawScene(context, scene, state, 600, 400);
  const arcs = context.calls.filter(([name]) => name === "arc");
  assert.deepEqual(arcs.map(([, x, y, radius]) => [x, y, radius]), [[150, 180, 2.5], [210, 240, 2.5]]);
  const fills = context.calls.filter(([name]) => name === "fillStyle").map(([, colour]) => colour);
  assert.ok(fills.includes("rgb(255,108,108)") && fills.includes("rgb(51,51,51)")); // new, and nearly spent
  assert.equal(fills.filter((colour) => colour === "rgb(204,204,0)").length, 2); // the two flags, once
});

test("grid labels read as the kernel writes them", () => {
  assert.equal(envLabel(3, 12.5), "env 3  R 13");
  assert.equal(envLabel(0, -0.4), "env 0  R -0");
});

function recordingContext() {
  const calls = [];
  const handler = {
    get(target, name) {
      if (name === "calls") return calls;
      if (name === "measureText") return () => ({ width: 10 });
      if (name in target) return target[name];
      return (...args) => calls.push([name, ...args]);
    },
    set(target, name, value) {
      target[name] = value;
      calls.push([name, value]);
      return true;
    },
  };
  return new Proxy({}, handler);
}

test("a MuJoCo scene that cannot be drawn makes the page say it has no WebGL, once", () => {
  const model = fakeModel();
  const stream = new FrameStream(model, undefined, ["h264", "webgl"]);
  const originalError = console.error;
  console.error = () => {};
  try {
    stream.sceneFailed({ kind: "mujoco" }, new Error("no WebGL context"));
    stream.sceneFailed({ kind: "grid", cell: { kind: "mujoco" } }, new Error("no WebGL context"));
    stream.sceneFailed({ kind: "cartpole" }, new Error("a bug"));
  } finally {
    console.error = originalError;
  }
  assert.deepEqual(model.sent.filter((msg) => msg.type === "ready").map((msg) => msg.codecs), [["h264"]]);
  assert.equal(stream.errors, 3);
  stream.close();
});

test("a MuJoCo view's canvas is the size its module draws at, and the module draws at that size", () => {
  const drawn = [];
  addSceneModule("mujoco", {
    drawnScale: (width, height) => (width * height >= 320 * 320 ? 0.75 : 1),
    drawMujoco: (...args) => drawn.push(args.slice(3)),
  });
  const scene = { kind: "mujoco", width: 480, height: 480 };
  assert.equal(canvasScale(scene, 480, 480), 0.75);
  assert.equal(canvasScale(scene, 240, 240), 1);
  assert.equal(canvasScale({ kind: "cartpole", width: 600, height: 400 }, 600, 400), 1);
  assert.equal(canvasScale({ kind: "grid", width: 960, height: 960, cell: scene }, 960, 960), 1); // cells: their own size
  drawScene(recordingContext(), scene, new Float32Array(1), 360, 360, true);
  assert.deepEqual(drawn.pop(), [0, 0, 360, 360, 1, false]); // the canvas is the drawn size: drawn at it, not shrunk again
  drawScene(recordingContext(), scene, new Float32Array(1), 480, 480);
  assert.deepEqual(drawn.pop(), [0, 0, 480, 480, undefined, false]); // elsewhere (a still, a test page): the module's choice
  const grid = { kind: "grid", width: 960, height: 480, cell: scene, count: 2, columns: 2, state_dim: 1, labels: "index" };
  drawScene(recordingContext(), grid, new Float32Array(2), 960, 480);
  assert.deepEqual(drawn.splice(0), [[0, 0, 480, 480, undefined, true], [480, 0, 480, 480, undefined, true]]); // cells, told so
  addSceneModule("mujoco", { drawMujoco: () => {} }); // sent by a kernel with an older gymview
  assert.equal(canvasScale(scene, 480, 480), 1);
});

test("a scene drawn with pictures is ready once they are decoded; one without needs nothing", () => {
  assert.equal(sceneReady({ kind: "cartpole", width: 600, height: 400 }), true);
  const sprites = { kind: "sprites", width: 10, height: 10, images: { background: "data:image/png;base64,", sprite0: "data:," } };
  assert.equal(sceneReady(sprites), false); // not loaded yet: a frame drawn now is drawn again when they are
  assert.equal(sceneReady({ kind: "grid", cell: sprites, count: 2, columns: 2 }), false);
});
