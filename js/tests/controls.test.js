// ControlChannel: clicks with ids, answers, unanswered clicks and notices: `node --test js/tests/`.
import assert from "node:assert/strict";
import { test } from "node:test";

import { NOT_HEARD } from "../controls.js";
import { CLIENT_ID } from "../protocol.js";
import { FrameStream } from "../stream.js";

function fakeModel() {
  const sent = [];
  return { sent, send: (msg) => sent.push(msg), on() {}, off() {}, get() {} };
}

test("a click the kernel answers clears its timer; one it never answers shows the notice and is cancelled", () => {
  const model = fakeModel();
  const stream = new FrameStream(model);
  const timers = [];
  const fakeTimer = (fn) => (timers.push(fn), timers.length);
  const heard = stream.controls.send({ type: "control", action: "pause" }, true, fakeTimer);
  const lost = stream.controls.send({ type: "control", action: "stop" }, true, fakeTimer);
  stream.onMessage({ type: "state", state: "paused", heard: [heard] });
  assert.equal(stream.controls.pending.size, 1);
  timers[1](); // the unanswered click's timer fires
  assert.equal(stream.controls.notice, NOT_HEARD);
  assert.deepEqual(model.sent.at(-1), { type: "control", action: "cancel", of: lost, id: `${CLIENT_ID}:3` });
  timers[0](); // the answered one's timer (already cleared in a browser) does nothing
  assert.equal(model.sent.length, 3);
  stream.onMessage({ type: "state", state: "running", heard: [] });
  assert.equal(stream.controls.notice, ""); // nothing pending any more: the notice goes
});

test("a kernel message (a run's error) shows as the notice", () => {
  const stream = new FrameStream(fakeModel());
  stream.onMessage({ type: "state", state: "stopped", heard: [], message: "play stopped: ZeroDivisionError" });
  assert.equal(stream.controls.notice, "play stopped: ZeroDivisionError");
});
