// ControlChannel: clicks with ids, answers, unanswered clicks and notices: `node --test js/tests/`.
import assert from "node:assert/strict";
import { test } from "node:test";

import { CLICK_ANSWER_MS, CLICK_RESEND_MS, NOT_HEARD } from "../controls.js";
import { CLIENT_ID } from "../protocol.js";
import { FrameStream } from "../stream.js";

function fakeModel() {
  const sent = [];
  return { sent, send: (msg) => sent.push(msg), on() {}, off() {}, get() {} };
}

test("a click the kernel answers clears its timer; one it never answers goes again, then shows the notice and is cancelled", () => {
  const model = fakeModel();
  const stream = new FrameStream(model);
  const timers = [];
  const fakeTimer = (fn, ms) => (timers.push({ fn, ms }), timers.length);
  const heard = stream.controls.send({ type: "control", action: "pause" }, true, fakeTimer);
  const lost = stream.controls.send({ type: "control", action: "stop" }, true, fakeTimer);
  stream.onMessage({ type: "state", state: "paused", heard: [heard] });
  assert.equal(stream.controls.pending.size, 1);
  const stop = { type: "control", action: "stop", id: lost };
  timers[1].fn(); // no answer after CLICK_RESEND_MS: the same click, the same id, again
  assert.deepEqual(model.sent.at(-1), stop);
  timers[2].fn();
  assert.deepEqual(model.sent.at(-1), stop);
  assert.equal(stream.controls.notice, "");
  timers[3].fn(); // CLICK_ANSWER_MS in all: given up
  assert.deepEqual(timers.slice(1).map((t) => t.ms), [CLICK_RESEND_MS, CLICK_RESEND_MS, CLICK_ANSWER_MS - 2 * CLICK_RESEND_MS]);
  assert.equal(stream.controls.notice, NOT_HEARD);
  assert.deepEqual(model.sent.at(-1), { type: "control", action: "cancel", of: lost, id: `${CLIENT_ID}:3` });
  timers[0].fn(); // the answered one's timer (already cleared in a browser) does nothing
  assert.equal(model.sent.length, 5);
  stream.onMessage({ type: "state", state: "running", heard: [] });
  assert.equal(stream.controls.notice, ""); // nothing pending any more: the notice goes
});

test("a click answered after it went again is not sent any more", () => {
  const model = fakeModel();
  const stream = new FrameStream(model);
  const timers = [];
  const id = stream.controls.send({ type: "control", action: "step" }, true, (fn) => (timers.push(fn), timers.length));
  timers[0]();
  assert.equal(model.sent.length, 2);
  stream.onMessage({ type: "state", state: "paused", heard: [id] });
  timers[1](); // cleared in a browser; here it finds the click answered
  assert.equal(model.sent.length, 2);
  assert.equal(stream.controls.pending.size, 0);
});

test("a click whose comm closed before it could go again gives up at once", () => {
  const model = fakeModel();
  const stream = new FrameStream(model);
  const timers = [];
  stream.controls.send({ type: "control", action: "pause" }, true, (fn) => (timers.push(fn), timers.length));
  model.send = () => {
    throw new Error("comm closed"); // the kernel restarted
  };
  timers[0]();
  assert.equal(stream.controls.pending.size, 0);
  assert.equal(stream.controls.notice, NOT_HEARD);
  assert.equal(timers.length, 1);
});

test("a kernel message (a run's error) shows as the notice", () => {
  const stream = new FrameStream(fakeModel());
  stream.onMessage({ type: "state", state: "stopped", heard: [], message: "play stopped: ZeroDivisionError" });
  assert.equal(stream.controls.notice, "play stopped: ZeroDivisionError");
});

test("the kernel's line under the picture stays until it sends another or an empty one", () => {
  const stream = new FrameStream(fakeModel());
  stream.onMessage({ type: "state", state: "running", heard: [], message: "drawn in the kernel: a flex" });
  stream.onMessage({ type: "state", state: "running", heard: [] }); // an older kernel's: says nothing new
  assert.equal(stream.controls.notice, "drawn in the kernel: a flex");
  stream.onMessage({ type: "state", state: "running", heard: [], message: "" });
  assert.equal(stream.controls.notice, "");
});
