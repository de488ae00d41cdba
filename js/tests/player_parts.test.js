// The players' keys are taken on the window before the notebook's shortcuts, only while the player has focus.
import assert from "node:assert/strict";
import { test } from "node:test";

import { onPlayerKeys } from "../player_parts.js";

function fakeWindow() {
  const listeners = [];
  return {
    listeners,
    addEventListener: (type, listener, capture) => listeners.push({ type, listener, capture }),
    removeEventListener: (type, listener) => listeners.splice(listeners.findIndex((l) => l.listener === listener), 1),
  };
}

function key(target, name) {
  const event = { target, key: name, prevented: false, stopped: false };
  event.preventDefault = () => (event.prevented = true);
  event.stopPropagation = () => (event.stopped = true);
  return event;
}

test("a focused player's keys are kept from the notebook and move it; others and keys elsewhere pass", () => {
  const win = fakeWindow();
  const inside = {};
  const el = { contains: (node) => node === inside };
  const done = [];
  const player = {
    playing: true, frame: 5, count: 20,
    play: () => done.push("play"),
    pause: () => { done.push("pause"); player.playing = false; },
    seek: (frame) => done.push(frame),
  };
  const unbind = onPlayerKeys(el, player, win);
  assert.equal(win.listeners[0].type, "keydown");
  assert.equal(win.listeners[0].capture, true); // before Notebook 7's own handling
  const press = (name, target = inside) => {
    const event = key(target, name);
    win.listeners[0].listener(event);
    return event;
  };
  const arrow = press("ArrowRight");
  assert.ok(arrow.prevented && arrow.stopped);
  press("PageUp");
  press("End");
  press(" ");
  const letter = press("a");
  assert.ok(!letter.prevented && !letter.stopped);
  assert.ok(!press("ArrowRight", {}).prevented); // focus elsewhere
  assert.deepEqual(done, ["pause", 6, -5, 19, "play"]);
  unbind();
  assert.equal(win.listeners.length, 0);
});
