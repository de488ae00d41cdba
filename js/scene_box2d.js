// gymnasium's Box2D envs drawn with canvas 2D as gymnasium draws them with pygame (box2d/lunar_lander.py,
// box2d/bipedal_walker.py), on a canvas js/scene.js set up.

import { BLACK, box, pixels, polygon, turned } from "./shapes.js";

/** LunarLander's flags, once, over everything (gymnasium draws them again after each body: here that would cost
 * most of a frame, for edges a shade darker). */
function flags(context, scene) {
  const [x1, x2, y] = scene.helipad;
  for (const x of [x1 * scene.scale, x2 * scene.scale]) {
    const pole = y * scene.scale;
    pixels(context, x, pole, x, pole + 50, "rgb(255,255,255)");
    polygon(context, [[x, pole + 50], [x, pole + 40], [x + 25, pole + 45]], "rgb(204,204,0)");
  }
}

/** gymnasium's LunarLander: the sky above the ground's 11 heights, the exhaust's particles (x, y, time left;
 * NaN where none) coloured by the time they have left, the lander and its legs outlined, the flags. */
export function lunarlander(context, scene, state) {
  const { scale, ground_x: groundX } = scene;
  // the sky above the ground as one shape: gymnasium's pieces, drawn apart, would leave seams between them here
  const ground = groundX.map((x, i) => [x * scale, state[9 + i] * scale]);
  polygon(context, [...ground, [ground.at(-1)[0], scene.height], [ground[0][0], scene.height]], BLACK);
  // the particles, one path a colour (their colours are few): filled half a pixel wider, as pygame covers a pixel
  // its circle's edge crosses, instead of filled and stroked one by one
  const particles = state.subarray(9 + groundX.length);
  const byColour = new Map();
  for (let i = 0; i < scene.particles; i += 1) {
    const [x, y, age] = particles.subarray(3 * i, 3 * i + 3);
    if (Number.isNaN(x)) continue;
    const [warm, cool] = [Math.trunc(Math.max(0.2, 0.15 + age) * 255), Math.trunc(Math.max(0.2, 0.5 * age) * 255)];
    const colour = `rgb(${warm},${cool},${cool})`;
    if (!byColour.has(colour)) byColour.set(colour, []);
    byColour.get(colour).push([x * scale, y * scale]);
  }
  const radius = scene.particle_radius + 0.5;
  for (const [colour, centres] of byColour) {
    context.beginPath();
    for (const [x, y] of centres) {
      context.moveTo(x + radius, y);
      context.arc(x, y, radius, 0, 2 * Math.PI);
    }
    context.fillStyle = colour;
    context.fill();
  }
  scene.outlines.forEach((vertices, n) => {
    const [x, y, angle] = state.subarray(3 * n, 3 * n + 3);
    const path = turned(vertices, angle, x, y).map(([px, py]) => [px * scale, py * scale]);
    polygon(context, path, "rgb(128,102,230)");
    context.strokeStyle = "rgb(77,77,128)";
    context.stroke();
  });
  flags(context, scene);
}

/** gymnasium's BipedalWalker, its view scrolled with the walker (the right end of a picture as wide as the way
 * walked): the sky, the clouds (drifting at half the view's speed), the ground in view (heights from the step before
 * it), the lidar ray (x0, y0, x1, y1; NaN when none), the ground's edge, the hardcore walker's obstacles in view (4
 * corners each; NaN for none), the legs and the hull outlined, the flag. */
export function bipedalwalker(context, scene, state) {
  const { scale, step, ground: count, clouds, outlines, colours } = scene;
  const scroll = state[0];
  const [ray, first, heights] = [state.subarray(16, 20), state[20], state.subarray(21, 21 + count)];
  const obstacles = state.subarray(state.length - 8 * (scene.obstacles ?? 0));
  const corners = state.subarray(21 + count, state.length - obstacles.length);
  context.translate(-(Math.trunc(scene.width + Math.max(0, scroll) * scale) - scene.width), 0);
  polygon(context, box(scroll * scale, scroll * scale + scene.width, scene.height, 0), "rgb(215,215,255)");
  const view = scene.width / scale;
  const cornersEach = corners.length / clouds / 2;
  for (let n = 0; n < clouds; n += 1) {
    const at = (i) => 2 * (n * cornersEach + i);
    const cloud = Array.from({ length: cornersEach }, (_, i) => [corners[at(i)], corners[at(i) + 1]]);
    const xs = cloud.map(([x]) => x);
    if (Math.max(...xs) < scroll / 2 || Math.min(...xs) > scroll / 2 + view) continue;
    polygon(context, cloud.map(([x, y]) => [x * scale + (scroll * scale) / 2, y * scale]), "rgb(255,255,255)");
  }
  // the ground as one shape: gymnasium's pieces, drawn apart, would leave seams between them here
  const edge = Array.from(heights, (height, i) => [(first + i) * step * scale, height * scale]);
  polygon(context, [...edge, [edge.at(-1)[0], 0], [edge[0][0], 0]], "rgb(102,153,76)");
  if (!Number.isNaN(ray[0])) {
    context.beginPath();
    context.moveTo(ray[0] * scale, ray[1] * scale);
    context.lineTo(ray[2] * scale, ray[3] * scale);
    context.strokeStyle = "rgb(255,0,0)";
    context.stroke();
  }
  for (let i = 0; i + 1 < edge.length; i += 1) {
    context.beginPath();
    context.moveTo(...edge[i]);
    context.lineTo(...edge[i + 1]);
    context.strokeStyle = (first + i) % 2 === 0 ? "rgb(76,255,76)" : "rgb(76,204,76)";
    context.stroke();
  }
  for (let i = 0; i < obstacles.length; i += 8) {
    if (Number.isNaN(obstacles[i])) continue;
    const path = Array.from({ length: 4 }, (_, k) => [obstacles[i + 2 * k] * scale, obstacles[i + 2 * k + 1] * scale]);
    polygon(context, path, "rgb(255,255,255)");
    context.strokeStyle = "rgb(153,153,153)";
    context.stroke();
  }
  for (const n of [1, 2, 3, 4, 0]) { // the legs, then the hull
    const [x, y, angle] = state.subarray(1 + 3 * n, 4 + 3 * n);
    const path = turned(outlines[n], angle, x, y).map(([px, py]) => [px * scale, py * scale]);
    polygon(context, path, `rgb(${colours[n][0]})`);
    context.strokeStyle = `rgb(${colours[n][1]})`;
    context.stroke();
  }
  const [flagX, flagY] = scene.flag;
  const top = flagY + 50;
  context.beginPath();
  context.moveTo(flagX, flagY);
  context.lineTo(flagX, top);
  context.strokeStyle = BLACK;
  context.stroke();
  polygon(context, [[flagX, top], [flagX, top - 10], [flagX + 25, top - 5]], "rgb(230,51,0)");
  context.strokeStyle = BLACK;
  context.stroke();
}
