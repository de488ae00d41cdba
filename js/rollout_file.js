// The page of a rollout saved as one HTML file (gymview/episodes/page_file.py): the rollout player with scene3d.js
// (three.js) bundled in, reading the scenes, states and charted values the file carries. Nothing is fetched: the file plays from
// disk with no network.
import * as scene3d from "./scene3d.js";
import { renderRollout } from "./rollout.js";
import { addSceneModule } from "./scene.js";

addSceneModule("mujoco", scene3d);

const MISSING = -(2 ** 31); // a missing number among the states (page_file.py's _MISSING)

/** A segment's numbers from the file's base64 text: inflated (zlib), each 32-bit word's four bytes gathered from
 * the planes page_file.py wrote them in (the first byte of every word over time, then the second...); then, for
 * states, each word a change (zigzag) from the frame before, added up as int32 and times the step (NaN for the
 * missing mark), and for values the float32 itself. */
async function unpack({ frames, size, data, step }) {
  const packed = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
  const inflated = new Response(new Blob([packed]).stream().pipeThrough(new DecompressionStream("deflate")));
  const planes = new Uint8Array(await inflated.arrayBuffer());
  const bytes = new Uint8Array(frames * size * 4);
  for (let plane = 0; plane < 4; plane += 1) {
    for (let number = 0; number < size; number += 1) {
      const from = (plane * size + number) * frames;
      for (let frame = 0; frame < frames; frame += 1) bytes[(frame * size + number) * 4 + plane] = planes[from + frame];
    }
  }
  if (step === undefined) return new Float32Array(bytes.buffer);
  const words = new Uint32Array(bytes.buffer);
  const numbers = new Float32Array(frames * size);
  for (let number = 0; number < size; number += 1) {
    let whole = 0;
    for (let frame = 0; frame < frames; frame += 1) {
      const at = frame * size + number;
      whole = (whole + ((words[at] >>> 1) ^ -(words[at] & 1))) | 0;
      numbers[at] = whole === MISSING ? Number.NaN : whole * step;
    }
  }
  return numbers;
}

/** A model as the player reads one: the file's values, changed only by the page. */
function fileModel(values) {
  const listeners = new Map();
  return {
    get: (name) => values[name],
    set: (name, value) => {
      values[name] = value;
      for (const listener of listeners.get(`change:${name}`) ?? []) listener();
    },
    save_changes: () => {},
    send: () => {},
    on: (event, listener) => listeners.set(event, [...(listeners.get(event) ?? []), listener]),
    off: (event, listener) => listeners.set(event, (listeners.get(event) ?? []).filter((each) => each !== listener)),
  };
}

async function main() {
  const data = JSON.parse(document.getElementById("gymview-rollout").textContent);
  const parts = await Promise.all(data.segments.map(unpack));
  const states = new Float32Array(parts.reduce((sum, part) => sum + part.length, 0));
  parts.reduce((offset, part) => (states.set(part, offset), offset + part.length), 0);
  const values = {};
  for (const [name, packed] of Object.entries(data.values)) {
    const numbers = await unpack(packed); // [frames, envs]: a line of frames an env, NaN where missing
    const { frames, size: envs } = packed;
    values[name] = Array.from({ length: envs }, (_, env) => Float32Array.from({ length: frames }, (_, t) => numbers[t * envs + env]));
  }
  const model = fileModel({
    _scenes: data.scenes,
    _segments: data.segments.map(({ scene, frames, size }) => ({ scene, frames, size })),
    _states: states,
    _values: values,
    fps: data.fps,
    frame: 0,
    focus: -1,
    values: data.charted,
    title: data.title,
  });
  const el = document.getElementById("gymview");
  renderRollout({ model, el }, () => Promise.reject(new Error("gymview: this file lacks the module its scene needs")));
  el.focus();
}

main().catch((error) => {
  document.getElementById("gymview").textContent = `gymview could not play this file: ${error}`;
  console.error(error);
});
