// The status line, rate meter and speed labels: `node --test js/tests/`.
import assert from "node:assert/strict";
import { test } from "node:test";

import { RateMeter, speedLabel, statusText } from "../status.js";

function header(seq, extra = {}) {
  return { type: "frame", v: 1, seq, format: "jpeg", width: 4, height: 2, step: seq, episode: 1,
    episode_return: 1.5, dropped: 0, ...extra };
}

test("status line and rate meter", () => {
  assert.equal(statusText(header(1234), 29.94), "29.9 fps · step 1,234 · episode 1 · return 1.5 · dropped 0");
  assert.equal(statusText(header(1, { step: null, episode: null, episode_return: null, dropped: 7 }), 2),
    "2.0 fps · dropped 7");
  const meter = new RateMeter(1000);
  for (let t = 0; t <= 1000; t += 100) meter.tick(t);
  assert.equal(meter.rate(1000), 11);
  assert.equal(meter.rate(5000), 0);
});

test("speed labels", () => {
  assert.equal(speedLabel(null, 50), "max");
  assert.equal(speedLabel(0.25, 50), "x0.25 (12.5 fps)");
  assert.equal(speedLabel(2, null), "x2");
  assert.equal(statusText(header(1), 30, "paused").split(" · ")[0], "paused");
});
