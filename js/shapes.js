// Shapes drawn as pygame draws them, on a canvas set up as js/scene.js sets it (pixel centres, y up).

export const BLACK = "rgb(0,0,0)";

export function polygon(context, points, color) {
  context.beginPath();
  points.forEach(([x, y], i) => (i === 0 ? context.moveTo(x, y) : context.lineTo(x, y)));
  context.closePath();
  context.fillStyle = context.strokeStyle = color;
  context.fill();
  context.stroke();
}

export function circle(context, x, y, radius, color) {
  context.beginPath();
  context.arc(x, y, radius, 0, 2 * Math.PI);
  context.fillStyle = context.strokeStyle = color;
  context.fill();
  context.stroke();
}

/** The pixels from (x0, y0) to (x1, y1), both included, filled (pygame's hline, vline and straight lines). */
export function pixels(context, x0, y0, x1, y1, color) {
  context.fillStyle = color;
  context.fillRect(x0 - 0.5, y0 - 0.5, x1 - x0 + 1, y1 - y0 + 1);
}

/** `points` turned by `angle` (radians, counter-clockwise in pygame's y-up space) and moved by (dx, dy). */
export const turned = (points, angle, dx, dy) =>
  points.map(([x, y]) => [x * Math.cos(angle) - y * Math.sin(angle) + dx, x * Math.sin(angle) + y * Math.cos(angle) + dy]);

export const box = (l, r, t, b) => [[l, b], [l, t], [r, t], [r, b]];
