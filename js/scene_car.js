// gymnasium's CarRacing drawn from its state as its render() draws it (gymnasium/envs/box2d/car_racing.py and
// car_dynamics.py): on a window of 1000 x 800 pixels, y up, the background, the grass patches, the road (each tile
// its shade until the car touches it), the skid marks, the wheels with their stripes and the hull, all turned,
// zoomed and moved with the car; then, the window flipped, the dashboard and the score; the whole squeezed into
// 600 x 400. The state's parts: gymview/renderers/car_racing.py (its offsets in the scene's "layout").
import { polygon } from "./shapes.js";

const rgb = ([r, g, b]) => `rgb(${r},${g},${b})`;

/** The window's point (x, y), y up, of a world point: turned by `angle`, zoomed, moved (pygame's order). */
function placed(x, y, [zoom, angle, moveX, moveY]) {
  const [cos, sin] = [Math.cos(angle), Math.sin(angle)];
  return [(x * cos - y * sin) * zoom + moveX, (x * sin + y * cos) * zoom + moveY];
}

/** Each `count`-cornered shape in `numbers` (x, y each) placed on the window. */
const shapes = (numbers, view) => {
  const points = [];
  for (let i = 0; i + 1 < numbers.length; i += 2) points.push(placed(numbers[i], numbers[i + 1], view));
  return points;
};

function road(context, scene, state, view) {
  const [bound, step] = [scene.playfield, scene.grass_dim];
  polygon(context, shapes([bound, bound, bound, -bound, -bound, -bound, -bound, bound], view), rgb(scene.background));
  const grass = rgb(scene.grass);
  for (let x = -20; x < 20; x += 2) {
    for (let y = -20; y < 20; y += 2) {
      const [l, r, b, t] = [step * x, step * x + step, step * y, step * y + step];
      polygon(context, shapes([r, b, l, b, l, t, r, t], view), grass);
    }
  }
  const touched = state.subarray(scene.layout.touched);
  const tileOf = new Map(scene.tiles.map((piece, n) => [piece, n]));
  scene.road.forEach((corners, piece) => {
    const n = tileOf.get(piece);
    const done = n !== undefined && (Math.trunc(touched[Math.trunc(n / 24)]) >> n % 24) & 1;
    polygon(context, shapes(corners, view), rgb(done ? scene.road_colour : scene.colours[piece]));
  });
}

function car(context, scene, state, view) {
  const { car: start, marks, marks_size: size } = scene.layout;
  context.lineWidth = 2;
  for (let at = marks; at < marks + size && !Number.isNaN(state[at]); ) {
    const count = state[at];
    const points = shapes(state.subarray(at + 2, at + 2 + 2 * count), view);
    context.beginPath();
    points.forEach(([x, y], i) => (i === 0 ? context.moveTo(x, y) : context.lineTo(x, y)));
    context.strokeStyle = state[at + 1] ? "rgb(102,102,0)" : "rgb(0,0,0)";
    context.stroke();
    at += 2 + 2 * count;
  }
  context.lineWidth = 1;
  for (let wheel = 0; wheel < 4; wheel += 1) {
    const own = state.subarray(start + 16 * wheel, start + 16 * (wheel + 1));
    polygon(context, shapes(own.subarray(0, 8), view), "rgb(0,0,0)");
    if (!Number.isNaN(own[8])) polygon(context, shapes(own.subarray(8), view), "rgb(77,77,77)");
  }
  let at = start + 64;
  for (const count of scene.hull_parts) {
    polygon(context, shapes(state.subarray(at, at + 2 * count), view), "rgb(204,0,0)");
    at += 2 * count;
  }
}

/** The dashboard and the score, on the flipped window (y down). */
function dashboard(context, scene, state) {
  const [width, height] = scene.window;
  const [s, h] = [width / 40, height / 40];
  context.fillStyle = "rgb(0,0,0)";
  context.fillRect(0, height - 5 * h, width, 5 * h);
  const [speed, spin0, spin1, spin2, spin3, steering, turning] = state.subarray(5, 12);
  const vertical = (place, size) => [[place * s, height - (h + h * size)], [(place + 1) * s, height - (h + h * size)],
    [(place + 1) * s, height - h], [place * s, height - h]];
  const horizontal = (place, size) => [[place * s, height - 4 * h], [(place + size) * s, height - 4 * h],
    [(place + size) * s, height - 2 * h], [place * s, height - 2 * h]];
  const bars = [
    [speed, vertical(5, 0.02 * speed), "rgb(255,255,255)"],
    ...[spin0, spin1, spin2, spin3].map((spin, n) => [spin, vertical(7 + n, 0.01 * spin), n < 2 ? "rgb(0,0,255)" : "rgb(51,0,255)"]),
    [steering, horizontal(20, -10 * steering), "rgb(0,255,0)"],
    [turning, horizontal(30, -0.8 * turning), "rgb(255,0,0)"],
  ];
  for (const [value, points, colour] of bars) {
    if (Math.abs(value) > 1e-4) polygon(context, points, colour); // filled and outlined: a thin bar shows, as pygame's
  }
  const negative = state[4] < 0 || Object.is(state[4], -0); // rounded in the kernel as Python's format rounds
  const text = (negative ? "-" : "") + String(Math.abs(state[4])).padStart(negative ? 3 : 4, "0");
  context.font = "bold 42px sans-serif";
  const textWidth = context.measureText(text).width;
  const [x, y] = [60, height - (height * 2.5) / 40];
  context.fillStyle = "rgb(0,0,0)";
  context.fillRect(x - textWidth / 2, y - 25, textWidth, 50);
  context.fillStyle = "rgb(255,255,255)";
  context.textAlign = "center";
  context.textBaseline = "middle";
  context.fillText(text, x, y);
}

/** CarRacing at `scale` canvas pixels a picture pixel, its top-left corner at (left, top). */
export function carracing(context, scene, state, scale, left, top) {
  const [width, height] = scene.window;
  const [across, down] = [(scale * scene.width) / width, (scale * scene.height) / height];
  context.setTransform(across, 0, 0, down, left, top);
  context.fillStyle = "rgb(0,0,0)"; // past the playfield's edge
  context.fillRect(0, 0, width, height);
  context.setTransform(across, 0, 0, -down, left, top + height * down); // the window, y up, flipped
  context.lineWidth = 1;
  const view = state.subarray(0, 4);
  road(context, scene, state, view);
  car(context, scene, state, view);
  context.setTransform(across, 0, 0, down, left, top); // the flipped window, y down
  dashboard(context, scene, state);
}
