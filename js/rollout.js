// The rollout player (gymview.show_rollout, and the page of an HTML file): states drawn by the page from their
// scene (scene.js; MuJoCo's with scene3d.js), a Play button, a slider, the arrow keys, and charts of values under
// the picture; a grid of envs where a click shows one alone and another the grid again. Its model: "_scenes",
// "_segments" ({scene, frames, size} each, played in order), "_states" (every frame's float32 numbers, one after
// another), "_values" ({name: [[a number a frame] an env]}), "fps", "frame", "focus", "values" (the names
// charted), "title".
import { COLOURS, drawCharts, formatValue, frameAt } from "./charts.js";
import { chartsContext, chipsFor, element, followModel, onPlayerKeys, playerControls } from "./player_parts.js";
import { canvasScale, drawScene, forgetScene, loadScene, missingModule, sceneReady } from "./scene.js";

/** A model's states as one Float32Array: a widget's bytes arrive as a DataView (copied: it may not sit on a
 * multiple of 4 bytes), a file's as a Float32Array. */
export function statesOf(value) {
  if (value instanceof Float32Array) return value;
  if (value instanceof ArrayBuffer) return new Float32Array(value.slice(0, value.byteLength - (value.byteLength % 4)));
  return new Float32Array(new Uint8Array(value.buffer, value.byteOffset, value.byteLength).slice().buffer);
}

/** The segments with where each starts: [{scene, start, frames, size, offset}], `offset` in numbers. */
export function timeline(scenes, segments) {
  let start = 0;
  let offset = 0;
  return segments.map(({ scene, frames, size }) => {
    const placed = { scene: scenes[scene], start, frames, size, offset };
    start += frames;
    offset += frames * size;
    return placed;
  });
}

/** Frame `frame`'s scene and numbers in `states`, one env's alone where `focus` picks a cell of a grid. */
export function frameOf(placed, states, frame, focus = -1) {
  const segment = placed.find((each) => frame < each.start + each.frames) ?? placed[placed.length - 1];
  const begin = segment.offset + (frame - segment.start) * segment.size;
  const state = states.subarray(begin, begin + segment.size);
  const { scene } = segment;
  if (scene.kind !== "grid" || focus < 0 || focus >= scene.count) return { scene, state };
  return { scene: scene.cell, state: state.subarray(focus * scene.state_dim, (focus + 1) * scene.state_dim) };
}

/** The cell of a grid `scene` shown `shownWidth` pixels wide at (x, y) of the picture, or -1. */
export function cellAt(scene, x, y, shownWidth) {
  const scale = shownWidth / scene.width;
  const column = Math.floor(x / (scene.cell.width * scale));
  const index = Math.floor(y / (scene.cell.height * scale)) * scene.columns + column;
  return column >= 0 && column < scene.columns && index >= 0 && index < scene.count ? index : -1;
}

/** "frame 3/50 · env 2 · reward 0.5": the values at `frame` of the env in focus, or their mean over the envs. */
export function rolloutReadout(values, names, frame, count, focus, envs) {
  const parts = [`frame ${frame + 1}/${count}`];
  if (envs > 1) parts.push(focus >= 0 ? `env ${focus}` : `mean of ${envs} envs`);
  for (const name of names) {
    const lists = values[name] ?? [];
    const chosen = focus >= 0 ? [lists[focus] ?? []] : lists;
    const known = chosen.map((list) => list[frame]).filter((v) => v !== null && v !== undefined && !Number.isNaN(v));
    parts.push(`${name} ${known.length ? formatValue(known.reduce((a, b) => a + b, 0) / known.length) : "–"}`);
  }
  return parts.join(" · ");
}

function buildDom(el) {
  el.classList.add("gymview-episode", "gymview-rollout");
  el.tabIndex = 0; // arrow keys step a frame once the player has focus
  const title = element("div", "gymview-title", el);
  const canvas = element("canvas", "gymview-rollout-canvas", el);
  return { el, title, canvas, ...playerControls(el) };
}

class Rollout {
  constructor(model, dom, needsModule) {
    this.model = model;
    this.dom = dom;
    this.placed = timeline(model.get("_scenes"), model.get("_segments"));
    this.states = statesOf(model.get("_states"));
    this.count = this.placed.reduce((sum, each) => sum + each.frames, 0);
    const first = this.placed[0].scene;
    this.envs = first.kind === "grid" ? first.count : 1;
    this.frame = Math.min(Math.max(0, model.get("frame")), this.count - 1);
    this.playing = false;
    this.plays = 0; // each play's number: a tick of an earlier play stops
    this.drawn = 0;
    this.painted = null; // [frame, focus, width] of the picture on the canvas
    this.watched = null; // the parent whose width the picture follows
    this.resize = null;
    dom.slider.max = String(this.count - 1);
    const scenes = [...new Set(this.placed.map((each) => each.scene))];
    this.ready = Promise.all(
      scenes.map((scene) =>
        (missingModule(scene) === null ? Promise.resolve() : needsModule(scene)).then(() =>
          loadScene(scene, () => this.draw()),
        ),
      ),
    )
      .catch((error) => console.error("gymview: could not load what the rollout's scene draws with", error))
      .then(() => this.draw());
    this.scenes = scenes;
  }

  get focus() {
    return this.model.get("focus");
  }

  /** Show frame `frame`: the picture, the slider, the charts' cursor, the readout. */
  show(frame) {
    this.frame = Math.max(0, Math.min(this.count - 1, frame));
    this.dom.slider.value = String(this.frame);
    this.dom.el.dataset.frame = String(this.frame);
    this.draw();
  }

  /** The picture, drawn only where it changed (a frame, the focus or the width). */
  paint() {
    const { canvas, el } = this.dom;
    const { scene, state } = frameOf(this.placed, this.states, this.frame, this.focus);
    if (missingModule(scene) !== null) return;
    const whole = this.placed[0].scene;
    const parent = el.parentElement;
    if (parent && parent !== this.watched) {
      this.watched = parent; // the player is as wide as its picture: its room is its parent's
      this.resize?.observe(parent);
    }
    const room = parent?.clientWidth || whole.width;
    const shown = Math.max(160, Math.min(whole.width, room - 8));
    const key = `${this.frame} ${this.focus} ${shown}`;
    if (this.painted === key) return;
    const height = Math.round((shown * scene.height) / scene.width);
    const shrink = canvasScale(scene, shown, height);
    const [width, drawnHeight] = [Math.max(1, Math.floor(shown * shrink)), Math.max(1, Math.floor(height * shrink))];
    if (canvas.width !== width || canvas.height !== drawnHeight) [canvas.width, canvas.height] = [width, drawnHeight];
    canvas.style.width = `${shown}px`;
    canvas.style.height = `${height}px`;
    drawScene(canvas.getContext("2d"), scene, state, width, drawnHeight, shrink !== 1);
    if (!sceneReady(scene)) return; // drawn again once its pictures are here
    this.painted = key;
    this.drawn += 1;
    el.dataset.drawn = String(this.drawn);
  }

  draw() {
    try {
      this.paint();
    } catch (error) {
      console.error("gymview: could not draw the rollout's frame", error);
    }
    const { charts, readout, el } = this.dom;
    const names = this.model.get("values");
    const values = this.model.get("_values");
    const width = Math.max(320, parseFloat(this.dom.canvas.style.width) || 640);
    const context = chartsContext(charts, width, names.length);
    charts.hidden = names.length === 0;
    const envs = this.focus >= 0 ? [this.focus] : [...Array(this.envs).keys()];
    const lines = envs.map((env) => ({ columns: Object.fromEntries(names.map((n) => [n, values[n]?.[env] ?? []])) }));
    drawCharts(context, lines, names, this.count, this.frame, width);
    readout.textContent = rolloutReadout(values, names, this.frame, this.count, this.focus, this.envs);
    el.dataset.focus = String(this.focus);
  }

  /** The chips that pick the charted values. */
  drawChips() {
    const chosen = new Set(this.model.get("values"));
    const toggle = (name) => {
      const now = this.model.get("values");
      this.set("values", chosen.has(name) ? now.filter((v) => v !== name) : [...now, name]);
    };
    const colourOf = (index) => COLOURS[index % COLOURS.length];
    this.dom.chips.replaceChildren(...chipsFor(Object.keys(this.model.get("_values")), chosen, toggle, colourOf));
  }

  set(name, value) {
    this.model.set(name, value);
    this.model.save_changes();
  }

  /** Go to frame `frame`, and tell the kernel. */
  seek(frame) {
    this.show(frame);
    this.pause();
  }

  pause() {
    this.playing = false;
    this.dom.play.textContent = "▶ Play";
    this.dom.el.dataset.playing = "false";
    if (this.model.get("frame") !== this.frame) this.set("frame", this.frame);
  }

  /** Play from the frame shown (from the start at the end), at the model's fps: frames a slow page cannot draw
   * in time are skipped, not queued. */
  play() {
    if (this.frame >= this.count - 1) this.show(0);
    this.playing = true;
    this.dom.play.textContent = "⏸ Pause";
    this.dom.el.dataset.playing = "true";
    this.plays += 1;
    const [began, from, play] = [performance.now(), this.frame, this.plays];
    const tick = (now) => {
      if (!this.playing || play !== this.plays) return;
      const frame = from + Math.floor(((now - began) * this.model.get("fps")) / 1000);
      this.show(Math.min(frame, this.count - 1));
      if (frame >= this.count - 1) this.pause();
      else requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  }
}

function bindInput(player) {
  const { el, slider, play, charts, canvas } = player.dom;
  slider.addEventListener("input", () => {
    if (player.playing) player.pause();
    player.show(Number(slider.value));
  });
  slider.addEventListener("change", () => player.pause());
  play.addEventListener("click", () => (player.playing ? player.pause() : player.play()));
  charts.addEventListener("pointerdown", (event) => {
    const box = charts.getBoundingClientRect();
    if (player.playing) player.pause();
    player.seek(frameAt(event.clientX - box.left, player.count, box.width));
  });
  canvas.addEventListener("click", (event) => {
    const { scene } = frameOf(player.placed, player.states, player.frame);
    if (scene.kind !== "grid") return;
    const box = canvas.getBoundingClientRect();
    const cell = player.focus >= 0 ? -1 : cellAt(scene, event.clientX - box.left, event.clientY - box.top, box.width);
    player.set("focus", cell);
  });
  return onPlayerKeys(el, player);
}

/** Render a rollout player into `el`; `needsModule(scene)` resolves once the page can draw `scene` (a widget asks
 * its kernel for scene3d.js). Returns its clean-up. */
export function renderRollout({ model, el }, needsModule) {
  const dom = buildDom(el);
  const player = new Rollout(model, dom, needsModule);
  const unbindKeys = bindInput(player);
  const { resize, unbind } = followModel(model, dom, player, { "change:focus": () => player.draw() });
  player.resize = resize; // the parent is watched once the player is placed in the page
  return () => {
    player.playing = false;
    unbind();
    unbindKeys();
    player.scenes.forEach(forgetScene);
  };
}
