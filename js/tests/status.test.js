// The status line, rate meter and speed labels: `node --test js/tests/`.
import assert from "node:assert/strict";
import { test } from "node:test";

import { ENDED, RateMeter, RETURNS_SHOWN, STATUS_PERIOD_MS, StatusLine, buttonsOff, returnsText, speedLabel, statusText }
  from "../status.js";

function header(seq, extra = {}) {
  return { type: "frame", v: 2, seq, format: "jpeg", width: 4, height: 2, step: seq, episode: 1,
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

test("a multi-agent status line names the agent to move and each agent's return", () => {
  const turn = header(12, { episode_return: null, agent: "player_1", returns: { player_0: 1, player_1: -1 } });
  assert.equal(statusText(turn, 2, "running"),
    "running · 2.0 fps · step 12 · episode 1 · player_1 to move · returns player_0 1.0, player_1 -1.0 · dropped 0");
  const over = header(13, { episode_return: null, agent: null, returns: { player_0: 1, player_1: -1 } });
  assert.ok(!statusText(over, 2).includes("to move"), "nobody moves once the episode is over");
  const pistons = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`piston_${i}`, i / 10]));
  const text = returnsText(pistons);
  assert.ok(text.startsWith("returns piston_0 0.0, piston_1 0.1,"));
  assert.ok(text.endsWith(`, +${20 - RETURNS_SHOWN} more`));
  assert.equal(text.split(", ").length, RETURNS_SHOWN + 1);
  // a single-agent header (no agent, no returns fields at all) reads as before
  assert.equal(statusText(header(5), 30), "30.0 fps · step 5 · episode 1 · return 1.5 · dropped 0");
});

test("while no run is attached (gymview.attach), every button is off; otherwise only the one that does nothing", () => {
  assert.deepEqual(buttonsOff(ENDED), { pause: true, play: true, step: true, stop: true, speed: true });
  assert.deepEqual(buttonsOff("running"), { pause: false, play: true, step: false, stop: false, speed: false });
  assert.deepEqual(buttonsOff("paused"), { pause: true, play: false, step: false, stop: false, speed: false });
  assert.deepEqual(buttonsOff("stopped"), { pause: false, play: false, step: false, stop: false, speed: false });
});

/** A StatusLine on a fake element, clock and timers: `at(ms)` moves the clock and fires the timers due. */
function statusLine() {
  const element = { textContent: "waiting for frames…", writes: 0 };
  let text = element.textContent;
  Object.defineProperty(element, "textContent", {
    get: () => text,
    set: (value) => {
      text = value;
      element.writes += 1;
    },
  });
  let now = 1000;
  const timers = new Map();
  let next = 0;
  const line = new StatusLine(element, () => now, (f, ms) => (timers.set(++next, { f, due: now + ms }), next),
    (id) => timers.delete(id));
  const at = (ms) => {
    now = ms;
    for (const [id, { f, due }] of [...timers]) {
      if (due <= now) {
        timers.delete(id);
        f();
      }
    }
  };
  return { element, line, at, timers };
}

test("a streaming status line is rewritten at most once per period, and ends on the last frame's numbers", () => {
  const { element, line, at, timers } = statusLine();
  line.show("step 1", "running");
  assert.equal(element.textContent, "step 1");
  for (let step = 2; step <= 60; step += 1) {
    at(1000 + (step - 1) * (1000 / 60)); // one frame a display refresh for a second
    line.show(`step ${step}`, "running");
  }
  assert.ok(element.writes <= Math.ceil(1000 / STATUS_PERIOD_MS) + 1, `${element.writes} writes in a second`);
  assert.notEqual(element.textContent, "step 60"); // the last numbers wait for the end of the period...
  at(1000 + 2 * 1000);
  assert.equal(element.textContent, "step 60"); // ...and then show, with no frame after them
  assert.equal(timers.size, 0);
});

test("a new label (paused, a replay position, the kernel gone) shows at once", () => {
  const { element, line, at } = statusLine();
  line.show("running · step 1", "running");
  at(1010);
  line.show("paused · step 1", "paused");
  assert.equal(element.textContent, "paused · step 1");
  at(1020);
  line.show("replay 3/10 · step 3", "replay 3/10");
  assert.equal(element.textContent, "replay 3/10 · step 3");
  at(1030);
  line.show("kernel gone", "kernel gone");
  assert.equal(element.textContent, "kernel gone");
});

test("a closed status line writes nothing later", () => {
  const { element, line, at, timers } = statusLine();
  line.show("step 1", "running");
  at(1010);
  line.show("step 2", "running");
  assert.equal(timers.size, 1);
  line.close();
  at(5000);
  assert.equal(element.textContent, "step 1");
});
