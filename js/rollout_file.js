// The page of a rollout saved as one HTML file (gymview/episodes/page_file.py): the rollout player with scene3d.js
// (three.js) bundled in, reading the scenes and states the file carries. Nothing is fetched: the file plays from
// disk with no network.
import * as scene3d from "./scene3d.js";
import { renderRollout } from "./rollout.js";
import { addSceneModule } from "./scene.js";

addSceneModule("mujoco", scene3d);

/** A segment's float32 numbers from the file's base64 text: inflated (zlib), then each number's four bytes
 * gathered from the planes page_file.py wrote them in (the first byte of every number over time, then the second...). */
async function unpack({ frames, size, states }) {
  const packed = Uint8Array.from(atob(states), (c) => c.charCodeAt(0));
  const inflated = new Response(new Blob([packed]).stream().pipeThrough(new DecompressionStream("deflate")));
  const planes = new Uint8Array(await inflated.arrayBuffer());
  const count = frames * size;
  const bytes = new Uint8Array(count * 4);
  for (let plane = 0; plane < 4; plane += 1) {
    for (let number = 0; number < size; number += 1) {
      const from = (plane * size + number) * frames;
      for (let frame = 0; frame < frames; frame += 1) bytes[(frame * size + number) * 4 + plane] = planes[from + frame];
    }
  }
  return new Float32Array(bytes.buffer);
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
  const model = fileModel({
    _scenes: data.scenes,
    _segments: data.segments.map(({ scene, frames, size }) => ({ scene, frames, size })),
    _states: states,
    _values: data.values,
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
