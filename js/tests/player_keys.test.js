// The players' keys are taken on the window before the notebook's shortcuts, only while the player has focus.
import assert from "node:assert/strict";
import { test } from "node:test";

import { onPlayerKeys } from "../player_keys.js";

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

test("a key used by a focused player is kept from the notebook; others and keys elsewhere pass", () => {
  const win = fakeWindow();
  const inside = {};
  const el = { contains: (node) => node === inside };
  const used = [];
  const unbind = onPlayerKeys(el, (event) => (used.push(event.key), event.key === "ArrowRight"), win);
  assert.equal(win.listeners[0].type, "keydown");
  assert.equal(win.listeners[0].capture, true); // before Notebook 7's own handling
  const arrow = key(inside, "ArrowRight");
  win.listeners[0].listener(arrow);
  assert.ok(arrow.prevented && arrow.stopped);
  const letter = key(inside, "a");
  win.listeners[0].listener(letter);
  assert.ok(!letter.prevented && !letter.stopped);
  const elsewhere = key({}, "ArrowRight");
  win.listeners[0].listener(elsewhere);
  assert.ok(!elsewhere.prevented);
  assert.deepEqual(used, ["ArrowRight", "a"]);
  unbind();
  assert.equal(win.listeners.length, 0);
});
