// Keyboard play (keyboard.js) with stand-ins for the view's element and the window: `node --test js/tests/`.
import assert from "node:assert/strict";
import { test } from "node:test";

import { bindKeyboard } from "../keyboard.js";
import { FrameStream } from "../stream.js";

/** Something that takes listeners, as a DOM node or the window does. */
function target(extra = {}) {
  const listeners = new Map();
  return {
    listeners,
    addEventListener: (type, fn) => listeners.set(type, fn),
    removeEventListener: (type) => listeners.delete(type),
    ...extra,
  };
}

function keyboardView() {
  const sent = [];
  const model = { send: (msg) => sent.push(msg), get: (name) => name === "_keyboard", on() {}, off() {} };
  const blurred = [];
  const el = target({
    dataset: {}, classList: { toggle() {} }, setAttribute() {}, focus() {},
    blur() { blurred.push("el"); this.listeners.get("blur")?.(); },
    contains: (node) => node === el || node === canvas,
  });
  const canvas = target();
  const win = target();
  const unbind = bindKeyboard({ el, canvas }, model, new FrameStream(model), win);
  /** A key event on the view, as the window's capture listener gets it; returns what the handler did to it. */
  const press = (type, key) => {
    const done = { prevented: false, stopped: false };
    win.listeners.get(type)({
      key, repeat: false, target: el,
      preventDefault: () => (done.prevented = true), stopPropagation: () => (done.stopped = true),
    });
    return done;
  };
  return { sent, blurred, win, press, unbind };
}

test("a game key goes to the kernel and not to the notebook", () => {
  const { sent, press } = keyboardView();
  assert.deepEqual(press("keydown", "ArrowLeft"), { prevented: true, stopped: true });
  press("keyup", "ArrowLeft");
  assert.deepEqual(sent.map(({ type, key, down }) => [type, key, down]), [["key", "ArrowLeft", true], ["key", "ArrowLeft", false]]);
});

test("Tab passes through: focus moves on, and the kernel hears nothing", () => {
  const { sent, press, blurred } = keyboardView();
  assert.deepEqual(press("keydown", "Tab"), { prevented: false, stopped: false });
  assert.deepEqual(press("keyup", "Tab"), { prevented: false, stopped: false });
  assert.deepEqual([sent, blurred], [[], []]);
});

test("Escape passes through and leaves keyboard play: the view lets go of focus and of the keys held", () => {
  const { sent, press, blurred } = keyboardView();
  press("keydown", "ArrowUp");
  assert.deepEqual(press("keydown", "Escape"), { prevented: false, stopped: false });
  assert.deepEqual(blurred, ["el"]);
  assert.deepEqual(sent.map(({ key, down }) => [key, down]), [["ArrowUp", true], ["ArrowUp", false]]);
});

test("unbinding takes the view's listeners off the window", () => {
  const { win, unbind } = keyboardView();
  unbind();
  assert.equal(win.listeners.size, 0);
});
