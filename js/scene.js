// Scenes the page draws from a state: gymnasium's classic-control and Box2D envs drawn with canvas 2D as
// gymnasium draws them with pygame (gymnasium/envs/classic_control/*.py; Box2D's in scene_box2d.js), the toy-text
// envs from their own pictures (boards, Taxi, Blackjack), MuJoCo envs drawn with three.js
// (scene3d.js, a bundle of its own that the page loads when it first meets a MuJoCo scene: most views
// never need three.js's half a megabyte), and a labelled grid of either for vector envs.
// The kernel sends a scene's description once (the view's "_scene" trait: gymview/renderers, page_scene())
// and each frame's state as float32 numbers (live/encoding/scene_frames.py).
//
// pygame draws on pixel indices, y up, then flips the picture: pixel (x, y) has its centre at
// (x + 0.5, height - y - 0.5) on the canvas. Its filled shapes cover the pixels their edges cross, hence
// each shape is filled and stroked one pixel wide (shapes.js); Box2D's envs: scene_box2d.js.

import { bipedalwalker, lunarlander } from "./scene_box2d.js";
import { carracing } from "./scene_car.js";
import { BLACK, box, circle, pixels, polygon, turned } from "./shapes.js";

/** Modules that draw kinds of scene this one does not: kind -> {drawMujoco, drawnScale, loadMujoco} (scene3d.js;
 * one a kernel with an older gymview sent may lack drawnScale). */
const modules = new Map();

/** Draw scenes of `kind` with `module` from now on (the widget adds scene3d.js once it has loaded it). */
export function addSceneModule(kind, module) {
  modules.set(kind, module);
}

/** The kind of module `scene` needs that the page has not loaded yet ("mujoco"), or null. */
export function missingModule(scene) {
  const cell = scene.kind === "grid" ? scene.cell : scene;
  return cell.kind === "mujoco" && !modules.has("mujoco") ? "mujoco" : null;
}

/** Let go of what drawing `scene` holds (WebGL buffers and textures): the view closed or has a new scene. */
export function forgetScene(scene) {
  const cell = scene.kind === "grid" ? scene.cell : scene;
  if (cell.kind === "mujoco") modules.get("mujoco")?.forgetMujoco(cell);
}

/** The pictures a scene draws with (Pendulum's arrow, a board and its players, Taxi's), decoded once per scene object:
 * scene -> {name: ImageBitmap} (or a promise of them). */
const pictures = new WeakMap();

/**
 * Load what `scene` needs besides its description (Pendulum's arrow, a board's pictures, a MuJoCo scene's
 * textures); `onLoad` runs once it is there.
 * @param {object} scene @param {() => void} onLoad
 * @returns {Promise<void>}
 */
export function loadScene(scene, onLoad = () => {}) {
  const cell = scene.kind === "grid" ? scene.cell : scene;
  if (cell.kind === "mujoco") return modules.get("mujoco")?.loadMujoco(cell, onLoad) ?? Promise.resolve();
  const urls = cell.arrow ? { arrow: cell.arrow } : (cell.images ?? {});
  if (Object.keys(urls).length === 0) return Promise.resolve();
  if (!pictures.has(cell)) {
    const decode = async ([name, url]) => [name, await createImageBitmap(await (await fetch(url)).blob())];
    const loading = Promise.all(Object.entries(urls).map(decode))
      .then((decoded) => pictures.set(cell, Object.fromEntries(decoded)))
      .catch((error) => {
        pictures.set(cell, {}); // drawn without them from now on (drawing says what is missing), not waited for
        console.error("gymview: could not decode the scene's pictures", error);
      })
      .then(onLoad);
    pictures.set(cell, loading);
  }
  const loaded = pictures.get(cell);
  return loaded instanceof Promise ? loaded : Promise.resolve();
}

/** Whether what `scene` draws with is here (its pictures, a MuJoCo scene's textures): a frame drawn before is drawn
 * again once it is, or a run that stopped would leave it unfinished. */
export function sceneReady(scene) {
  const cell = scene.kind === "grid" ? scene.cell : scene;
  if (cell.kind === "mujoco") return modules.get("mujoco")?.texturesLoaded?.(cell) ?? true;
  const urls = cell.arrow ? { arrow: cell.arrow } : (cell.images ?? {});
  return Object.keys(urls).length === 0 || picturesOf(cell) !== null;
}

/** The scene's decoded pictures, or null while they load. */
function picturesOf(scene) {
  const loaded = pictures.get(scene);
  return loaded === undefined || loaded instanceof Promise ? null : loaded;
}

/**
 * The share of a view's shown width and height its canvas needs to show `scene` at width x height: below
 * one where the page draws the scene smaller than shown (MuJoCo in software WebGL), so that the browser
 * scales the canvas up as it shows it, instead of the page scaling each frame onto a larger canvas.
 */
export function canvasScale(scene, width, height) {
  return scene.kind === "mujoco" && modules.has("mujoco") ? (modules.get("mujoco").drawnScale?.(width, height) ?? 1) : 1;
}

/**
 * Draw `state` (the frame's float32 numbers) of `scene` on `context`, scaled to width x height.
 * `atSize`: the canvas is already the size to draw at (canvasScale's share of the shown size).
 * @param {CanvasRenderingContext2D} context @param {object} scene @param {Float32Array} state
 * @param {number} width @param {number} height @param {boolean} atSize
 */
export function drawScene(context, scene, state, width, height, atSize = false) {
  context.save();
  context.setTransform(1, 0, 0, 1, 0, 0);
  context.fillStyle = BLACK; // a grid's empty cells
  context.fillRect(0, 0, width, height);
  if (scene.kind === "grid") drawGrid(context, scene, state, width / scene.width);
  else drawCell(context, scene, state, width / scene.width, 0, 0, atSize ? 1 : undefined);
  context.restore();
}

/** One env's picture with its top-left corner at (left, top) on the canvas, `scale` canvas pixels per pixel;
 * a MuJoCo one drawn at `drawnAt` of that size (undefined: the size its module chooses); `inGrid`: a grid's cell. */
function drawCell(context, scene, state, scale, left, top, drawnAt = undefined, inGrid = false) {
  if (scene.kind === "mujoco") {
    modules.get("mujoco").drawMujoco(context, scene, state, left, top, scene.width * scale, scene.height * scale, drawnAt, inGrid);
    return;
  }
  const draw = KINDS[scene.kind];
  if (draw === undefined) throw new Error(`gymview: the page cannot draw scenes of kind ${scene.kind}`);
  context.save();
  context.beginPath();
  context.rect(left, top, scene.width * scale, scene.height * scale);
  context.clip();
  context.fillStyle = "rgb(255,255,255)";
  context.fillRect(left, top, scene.width * scale, scene.height * scale);
  context.setTransform(scale, 0, 0, -scale, left + 0.5 * scale, top + (scene.height - 0.5) * scale);
  context.lineWidth = 1;
  context.lineJoin = "round";
  draw(context, scene, state, scale, left, top);
  context.restore();
}

function cartpole(context, scene, state) {
  const cartX = state[0] * scene.scale + scene.width / 2;
  const cartY = 100;
  const axle = cartY + 30 / 4;
  polygon(context, box(-25, 25, 15, -15).map(([x, y]) => [x + cartX, y + cartY]), BLACK);
  polygon(context, turned(box(-5, 5, scene.pole_length - 5, -5), -state[2], cartX, axle), "rgb(202,152,101)");
  circle(context, Math.trunc(cartX), Math.trunc(axle), 5, "rgb(129,132,203)");
  pixels(context, 0, cartY, scene.width, cartY, BLACK);
}

const trackHeight = (x) => Math.sin(3 * x) * 0.45 + 0.55;

function mountaincar(context, scene, state) {
  const { min_position: min, max_position: max, scale } = scene;
  context.beginPath();
  for (let i = 0; i < 100; i += 1) {
    const x = min + ((max - min) * i) / 99;
    context[i === 0 ? "moveTo" : "lineTo"]((x - min) * scale, trackHeight(x) * scale);
  }
  context.strokeStyle = BLACK;
  context.stroke();
  const position = state[0];
  const angle = Math.cos(3 * position);
  const x = (position - min) * scale;
  const y = 10 + trackHeight(position) * scale;
  polygon(context, turned(box(-20, 20, 20, 0), angle, x, y), BLACK);
  for (const [wheelX, wheelY] of turned([[10, 0], [-10, 0]], angle, x, y)) {
    circle(context, Math.trunc(wheelX), Math.trunc(wheelY), 8, "rgb(128,128,128)");
  }
  const flagX = Math.trunc((scene.goal_position - min) * scale);
  const flagY = Math.trunc(trackHeight(scene.goal_position) * scale);
  pixels(context, flagX, flagY, flagX, flagY + 50, BLACK);
  polygon(context, [[flagX, flagY + 50], [flagX, flagY + 40], [flagX + 25, flagY + 45]], "rgb(204,204,0)");
}

function acrobot(context, scene, state) {
  const { scale, offset } = scene;
  const [length1, length2] = scene.link_lengths;
  const starts = [[0, 0], [length1 * Math.sin(state[0]) * scale, -length1 * Math.cos(state[0]) * scale]];
  const angles = [state[0] - Math.PI / 2, state[0] + state[1] - Math.PI / 2];
  const lengths = [length1 * scale, length2 * scale];
  pixels(context, Math.trunc(-2.2 * scale + offset), Math.trunc(scale + offset), Math.trunc(2.2 * scale + offset), Math.trunc(scale + offset), BLACK);
  for (let i = 0; i < 2; i += 1) {
    const x = starts[i][0] + offset;
    const y = starts[i][1] + offset;
    polygon(context, turned(box(0, lengths[i], 0.1 * scale, -0.1 * scale), angles[i], x, y), "rgb(0,204,204)");
    circle(context, Math.trunc(x), Math.trunc(y), Math.trunc(0.1 * scale), "rgb(204,204,0)");
  }
}

function pendulum(context, scene, state, scale, left, top) {
  const { offset } = scene;
  const rodLength = scene.scale;
  const rodWidth = 0.2 * scene.scale;
  const red = "rgb(204,77,77)";
  const angle = state[0] + Math.PI / 2;
  polygon(context, turned(box(0, rodLength, rodWidth / 2, -rodWidth / 2), angle, offset, offset), red);
  circle(context, offset, offset, Math.trunc(rodWidth / 2), red);
  const [[endX, endY]] = turned([[rodLength, 0]], angle, offset, offset);
  circle(context, Math.trunc(endX), Math.trunc(endY), Math.trunc(rodWidth / 2), red);
  const arrow = picturesOf(scene)?.arrow;
  const size = Number.isNaN(state[2]) ? 0 : Math.trunc((scene.scale * Math.abs(state[2])) / 2);
  if (size > 0 && arrow !== undefined) {
    // blitted upside down on a picture flipped afterwards: upright on screen, mirrored for a positive torque
    const corner = offset - Math.trunc(size / 2);
    context.save();
    context.setTransform(scale, 0, 0, scale, left, top);
    const screenTop = scene.height - corner - size;
    if (state[2] > 0) {
      context.translate(corner + size, screenTop);
      context.scale(-1, 1);
    } else {
      context.translate(corner, screenTop);
    }
    context.imageSmoothingQuality = "high";
    context.drawImage(arrow, 0, 0, size, size);
    context.restore();
  }
  circle(context, offset, offset, Math.trunc(0.05 * scene.scale), BLACK);
}

/** A board (FrozenLake, CliffWalking): its picture, with the player's cell (state: cell, facing) pasted from the
 * picture of every cell with the player on it, facing that way. Drawn upright: pictures are not flipped. */
function board(context, scene, state, scale, left, top) {
  const drawn = picturesOf(scene);
  if (drawn === null) return;
  const [cell, facing] = [Math.trunc(state[0]), Math.trunc(state[1])];
  const [width, height] = scene.cell_size;
  const [x, y] = [(cell % scene.columns) * width, Math.trunc(cell / scene.columns) * height];
  context.save();
  context.setTransform(scale, 0, 0, scale, left, top);
  context.imageSmoothingQuality = "high";
  drawCovering(context, drawn.board, scale);
  context.drawImage(drawn[`player${facing}`], x, y, width, height, x, y, width, height);
  context.restore();
}

/** Draw `picture` at the origin, and its last row and column again over the part of a pixel it leaves uncovered
 * where its size at `scale` is not whole pixels (a canvas's last row would blend with nothing there). */
function drawCovering(context, picture, scale) {
  const [width, height] = [picture.width, picture.height];
  const [right, bottom] = [Math.ceil(width * scale) / scale - width, Math.ceil(height * scale) / scale - height];
  context.drawImage(picture, 0, 0);
  if (bottom > 0) context.drawImage(picture, 0, height - 1, width, 1, 0, height, width, bottom);
  if (right > 0) context.drawImage(picture, width - 1, 0, 1, height, width, 0, right, height + bottom);
}

/** Pictures pasted on a background (Taxi): the state holds (picture, x, y) for each, in pixels, in the order they
 * are pasted; a picture of NaN is not drawn. */
function sprites(context, scene, state, scale, left, top) {
  const drawn = picturesOf(scene);
  if (drawn === null) return;
  context.save();
  context.setTransform(scale, 0, 0, scale, left, top);
  context.imageSmoothingQuality = "high";
  drawCovering(context, drawn.background, scale);
  for (let i = 0; i + 2 < state.length; i += 3) {
    if (!Number.isNaN(state[i])) context.drawImage(drawn[`sprite${Math.trunc(state[i])}`], state[i + 1], state[i + 2]);
  }
  context.restore();
}

const KINDS = { cartpole, mountaincar, acrobot, pendulum, lunarlander, bipedalwalker, carracing, board, sprites };

/** The label of sub-env `index` in a grid, as gymview.renderers.grid.env_label writes it. */
export const envLabel = (index, episodeReturn) => `env ${index}  R ${episodeReturn.toFixed(0)}`;

/** Sub-envs in cells of `scene.cell`'s size, `scene.columns` a row, each labelled white on black: its index and
 * return, or its index alone where `scene.labels` is "index"; each drawn as `scene.cell` describes, or as its own
 * `scene.cells[index]` where the sub-envs differ. */
function drawGrid(context, scene, state, scale) {
  const { cell, count, columns } = scene;
  const size = count * scene.state_dim;
  const font = Math.max(10, Math.trunc(Math.min(cell.width, cell.height) / 12)) * scale;
  for (let index = 0; index < count; index += 1) {
    const left = (index % columns) * cell.width * scale;
    const top = Math.trunc(index / columns) * cell.height * scale;
    const own = scene.cells?.[index] ?? cell; // sub-envs each on a track of their own (CarRacing)
    drawCell(context, own, state.subarray(index * scene.state_dim, (index + 1) * scene.state_dim), scale, left, top, undefined, true);
    const label = scene.labels === "index" ? `env ${index}` : envLabel(index, state[size + index]);
    context.font = `${font}px sans-serif`;
    const width = context.measureText(label).width;
    context.fillStyle = BLACK;
    context.fillRect(left + 2 * scale, top + scale, width + 5 * scale, font + 5 * scale);
    context.fillStyle = "rgb(255,255,255)";
    context.textBaseline = "top";
    context.fillText(label, left + 4 * scale, top + 3 * scale);
  }
}
