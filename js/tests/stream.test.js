// FrameStream: frames, decoding, acks, visibility and replays, without a DOM: `node --test js/tests/`.
import assert from "node:assert/strict";
import { test } from "node:test";

import { CLIENT_ID } from "../protocol.js";
import { FrameStream, READY_TRIES } from "../stream.js";

function fakeModel() {
  const sent = [];
  return { sent, send: (msg) => sent.push(msg), on() {}, off() {}, get() {} };
}

function header(seq, extra = {}) {
  return { type: "frame", v: 2, seq, format: "jpeg", width: 4, height: 2, step: seq, episode: 1,
    episode_return: 1.5, dropped: 0, ...extra };
}

const bytes = () => [new DataView(new Uint8Array([0xff, 0xd8, 0xff]).buffer)];
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

function decoder() {
  const blobs = [];
  const decode = async (blob) => {
    blobs.push(blob);
    return { seq: blobs.length, closed: false, close() { this.closed = true; } };
  };
  return { blobs, decode };
}

test("frames are decoded and listeners told; gaps counted from the first frame seen", async () => {
  const { blobs, decode } = decoder();
  const stream = new FrameStream(fakeModel(), decode);
  let told = 0;
  stream.listeners.add(() => (told += 1));
  stream.onMessage(header(10), bytes());
  await settle();
  stream.onMessage(header(11), bytes());
  await settle();
  stream.onMessage(header(14), bytes());
  await settle();
  assert.equal(stream.received, 3);
  assert.equal(stream.gaps, 2);
  assert.equal(stream.newest.header.seq, 14);
  assert.equal(told, 3);
  assert.equal(blobs[0].type, "image/jpeg");
});

test("while one frame decodes, newer arrivals replace the waiting one (latest wins)", async () => {
  const { blobs, decode } = decoder();
  const stream = new FrameStream(fakeModel(), decode);
  for (let seq = 0; seq < 5; seq += 1) stream.onMessage(header(seq, { format: "png" }), bytes());
  await settle();
  await settle();
  assert.equal(blobs.length, 2); // frame 0, then only the newest waiting one (4)
  assert.equal(stream.newest.header.seq, 4);
  assert.equal(blobs[1].type, "image/png");
  assert.equal(stream.gaps, 0);
});

test("a resent frame is drawn only when the stream has none yet, and is no gap", async () => {
  const { blobs, decode } = decoder();
  const stream = new FrameStream(fakeModel(), decode);
  stream.onMessage(header(3), bytes());
  await settle();
  stream.onMessage(header(3), bytes());
  await settle();
  assert.equal(blobs.length, 1);
  assert.equal(stream.received, 1);
});

test("decode errors are counted, not thrown, and the stream goes on", async () => {
  let fail = true;
  const stream = new FrameStream(fakeModel(), async () => {
    if (fail) { fail = false; throw new Error("corrupt"); }
    return { close() {} };
  });
  const quiet = console.error;
  console.error = () => {};
  stream.onMessage(header(0), bytes());
  await settle();
  console.error = quiet;
  stream.onMessage(header(1), bytes());
  await settle();
  assert.equal(stream.errors, 1);
  assert.equal(stream.newest.header.seq, 1);
});

test("messages that are not frames are ignored", () => {
  const stream = new FrameStream(fakeModel(), async () => ({}));
  stream.onMessage({ type: "other" }, bytes());
  stream.onMessage(header(0), []);
  stream.onMessage(null, null);
  assert.equal(stream.received, 0);
});

/** setTimeout on a clock the test moves: advance(t) runs the timers due by t, in order. */

function fakeTimers() {
  const queue = [];
  let now = 0;
  return {
    setTimer: (fn, ms) => { const timer = { at: now + ms, fn }; queue.push(timer); return timer; },
    clearTimer: (timer) => { const index = queue.indexOf(timer); if (index >= 0) queue.splice(index, 1); },
    pending: () => queue.length,
    advance(to) {
      queue.sort((a, b) => a.at - b.at);
      while (queue.length > 0 && queue[0].at <= to) {
        const timer = queue.shift();
        now = timer.at;
        timer.fn();
      }
      now = to;
    },
  };
}

test("acks go at most once per ACK_PERIOD_MS, each for the newest frame drawn by then", () => {
  const model = fakeModel();
  const stream = new FrameStream(model, async () => ({}));
  const timers = fakeTimers();
  for (let seq = 0; seq < 30; seq += 1) {  // a second of frames at 30 fps, the kernel reading acks
    const now = seq * 33;
    timers.advance(now);
    stream.acknowledge(seq, stream.ackedSeq, now, timers.setTimer, timers.clearTimer);
    stream.acknowledge(seq - 1, stream.ackedSeq, now, timers.setTimer, timers.clearTimer);  // an older frame changes nothing
  }
  timers.advance(2000);
  const seqs = model.sent.map((m) => m.seq);
  assert.equal(seqs[0], 0);  // the first at once
  assert.equal(seqs.at(-1), 29);  // the last frame drawn is acked by the timer
  assert.ok(seqs.length >= 4 && seqs.length <= 6, seqs);  // about 4 a second, not 30
  assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b));
  assert.ok(model.sent.every((m) => m.type === "ack" && m.client === CLIENT_ID));  // each page acks as itself
});

test("a kernel that restarted or died is said once, and the listeners are told", () => {
  const stream = new FrameStream(fakeModel(), async () => ({}));
  let told = 0;
  stream.listeners.add(() => (told += 1));
  assert.equal(stream.kernelGone, false);
  stream.setKernelGone(true);
  stream.setKernelGone(true);
  assert.equal(stream.kernelGone, true);
  assert.equal(told, 1);
});

test("acks back off while the kernel is not reading them, and resume when it does", () => {
  const model = fakeModel();
  const stream = new FrameStream(model, async () => ({}));
  const timers = fakeTimers();
  for (let seq = 0; seq < 100; seq += 1) {  // the kernel read acks up to frame 3, then none
    timers.advance(seq * 33);
    stream.acknowledge(seq, 3, seq * 33, timers.setTimer, timers.clearTimer);
  }
  timers.advance(3300);
  const seqs = model.sent.map((m) => m.seq);
  assert.ok(seqs.length >= 4 && seqs.length <= 7, seqs);  // every 250 ms until one is a second unread, then none for 5 s
  assert.equal(timers.pending(), 1);  // ...but the last frame drawn will be acked at the end of those 5 s
  model.sent.length = 0;
  stream.acknowledge(100, 99, 3400, timers.setTimer, timers.clearTimer);  // it read them all: acks flow again
  assert.equal(timers.pending(), 0);  // the back-off's timer is dropped: this ack went at once
  stream.acknowledge(101, 100, 3433, timers.setTimer, timers.clearTimer);
  timers.advance(9000);
  assert.deepEqual(model.sent.map((m) => m.seq), [100, 101]);
});

test("a kernel that never reads acks still gets the last frame drawn, one back-off later", () => {
  const model = fakeModel();
  const stream = new FrameStream(model, async () => ({}));
  const timers = fakeTimers();
  for (let seq = 0; seq < 60; seq += 1) {
    timers.advance(seq * 33);
    stream.acknowledge(seq, -1, seq * 33, timers.setTimer, timers.clearTimer);
  }
  timers.advance(10_000);
  assert.equal(model.sent.at(-1).seq, 59);
});

test("visibility is reported only when 'any view visible' changes", () => {
  const model = fakeModel();
  const stream = new FrameStream(model, async () => ({}));
  const a = {}, b = {};
  stream.setVisible(a, true);
  stream.setVisible(b, true);
  stream.setVisible(a, false);
  assert.deepEqual(model.sent, []);
  stream.setVisible(b, false);
  stream.setVisible(b, true);
  assert.deepEqual(model.sent.map(({ type, visible }) => ({ type, visible })),
    [{ type: "visibility", visible: false }, { type: "visibility", visible: true }]);
  assert.ok(model.sent.every((m) => m.client === CLIENT_ID && CLIENT_ID.length > 4));
});

test("a kernel speaking another protocol version is reported once, and frames still flow", async () => {
  const stream = new FrameStream(fakeModel(), async () => ({ close() {} }));
  const warnings = [];
  const warn = console.warn;
  console.warn = (text) => warnings.push(text);
  stream.onMessage(header(0, { v: 99 }), bytes());
  stream.onMessage(header(1, { v: 99 }), bytes());
  await settle();
  console.warn = warn;
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /reload the page/);
  assert.equal(stream.received, 2);
});

test("replayed frames are kept apart from live ones and dropped when the run goes on", async () => {
  const { decode } = decoder();
  const stream = new FrameStream(fakeModel(), decode);
  stream.onMessage({ type: "state", state: "paused", heard: [] });
  stream.onMessage(header(3, { replay: 0 }), bytes()); // not asked for: ignored
  await settle();
  assert.equal(stream.replayed, null);
  stream.askReplay(1);
  stream.onMessage(header(3, { replay: 1 }), bytes());
  await settle();
  assert.equal(stream.replayed.header.replay, 1);
  assert.equal(stream.newest, null); // not a new frame
  const bitmap = stream.replayed.bitmap;
  stream.onMessage({ type: "state", state: "running", heard: [] });
  assert.equal(stream.replayed, null);
  assert.ok(bitmap.closed);
  stream.onMessage(header(3, { replay: 1 }), bytes()); // arrives after Play: ignored
  await settle();
  assert.equal(stream.replayed, null);
});

test("paused with kept frames, the page asks for their steps once per count, and forgets them on Play", () => {
  const model = fakeModel();
  const stream = new FrameStream(model);
  const asked = () => model.sent.filter((msg) => msg.type === "steps").length;
  stream.onMessage({ type: "state", state: "paused", history: 1, heard: [] });
  assert.equal(asked(), 0); // nothing to scrub yet
  stream.onMessage({ type: "state", state: "paused", history: 30, heard: [] });
  stream.onMessage({ type: "state", state: "paused", history: 30, heard: [] });
  assert.equal(asked(), 1);
  const steps = { type: "steps", first: 5, stride: 1, columns: { step: [1, 2] }, frames: [5, 6], rows: [{}, {}] };
  stream.onMessage(steps);
  assert.equal(stream.steps, steps);
  stream.askReplay(1);
  assert.equal(stream.replayIndex, 1);
  stream.onMessage({ type: "state", state: "paused", history: 31, heard: [] }); // a Step kept one more
  assert.equal(asked(), 2);
  stream.onMessage({ type: "state", state: "running", history: 31, heard: [] });
  assert.equal(stream.steps, null);
  assert.equal(stream.replayIndex, null);
});

test("a Step ends the replay: the stepped live frame shows, a replay still decoding is dropped", async () => {
  const { decode } = decoder();
  const model = fakeModel();
  const stream = new FrameStream(model, decode);
  stream.onMessage({ type: "state", state: "paused", heard: [] });
  stream.askReplay(2);
  assert.equal(model.sent.at(-1).type, "replay");
  stream.onMessage(header(3, { replay: 2 }), bytes());
  await settle();
  assert.equal(stream.replayed.header.replay, 2);
  stream.askReplay(1);
  stream.endReplay(); // Step clicked; the answer to the second ask is still on its way
  assert.equal(stream.replayed, null);
  stream.onMessage(header(3, { replay: 1 }), bytes());
  await settle();
  assert.equal(stream.replayed, null);
});

test("a live frame that comes while a replay shows is acked at once, and the replay's end redraws", async () => {
  const { decode } = decoder();
  const model = fakeModel();
  const stream = new FrameStream(model, decode);
  let told = 0;
  stream.listeners.add(() => (told += 1));
  stream.onMessage({ type: "state", state: "paused", heard: [] });
  stream.askReplay(0);
  stream.onMessage(header(3, { replay: 0 }), bytes());
  await settle();
  stream.onMessage(header(7, { acked: 6 }), bytes()); // the paused loop's frame, not drawn under the replay
  await settle();
  assert.deepEqual(model.sent.filter((msg) => msg.type === "ack").map((msg) => msg.seq), [7]);
  const before = told;
  stream.endReplay();
  assert.equal(told, before + 1);
  stream.onMessage(header(8), bytes()); // live again: acked when drawn, not on arrival
  await settle();
  assert.deepEqual(model.sent.filter((msg) => msg.type === "ack").map((msg) => msg.seq), [7]);
});

test("a view's ready goes again until the kernel answers with its state, a few times at most", () => {
  const sent = [];
  const stream = new FrameStream({ send: (msg) => sent.push(msg), on() {}, off() {}, get() {} });
  const timers = [];
  const fakeTimer = (fn) => (timers.push(fn), timers.length);
  const readies = () => sent.filter((msg) => msg.type === "ready").length;
  stream.announce(READY_TRIES, fakeTimer);
  timers.at(-1)(); // no answer: again
  assert.equal(readies(), 2);
  stream.onMessage({ type: "state", state: "running", heard: [] });
  timers.at(-1)(); // answered: no more
  assert.equal(readies(), 2);
  timers.length = 0; // fired or cleared
  stream.announce(3, fakeTimer); // a second view, a kernel that never answers
  for (let fired = 0; fired < timers.length; fired += 1) timers[fired]();
  assert.equal(readies(), 2 + 3);
  assert.deepEqual(sent.at(-1), { type: "ready", v: 2, client: CLIENT_ID, codecs: [] });
});

test("a page's ready names the video codecs it decodes, once the browser has said", async () => {
  const model = fakeModel();
  const stream = new FrameStream(model, undefined, Promise.resolve(["h264"]));
  stream.announce(1);
  assert.deepEqual(model.sent, []); // the browser has not answered yet
  await settle();
  assert.deepEqual(model.sent, [{ type: "ready", v: 2, client: CLIENT_ID, codecs: ["h264"] }]);
});

/** A decode that finishes when the test calls `finish[i]()` (which returns the bitmap). */
function heldDecoder() {
  const finish = [];
  const decode = () => new Promise((resolve) => {
    finish.push(() => {
      const bitmap = { closed: false, close() { this.closed = true; } };
      resolve(bitmap);
      return bitmap;
    });
  });
  return { finish, decode };
}

test("a frame whose decode finishes after close() is closed, not drawn, and nothing is sent for it", async () => {
  const { finish, decode } = heldDecoder();
  const model = fakeModel();
  const stream = new FrameStream(model, decode);
  let told = 0;
  stream.listeners.add(() => (told += 1));
  stream.onMessage(header(0), bytes());
  stream.onMessage(header(1), bytes()); // waits for the first decode
  stream.close();
  const bitmap = finish[0]();
  await settle();
  assert.equal(bitmap.closed, true);
  assert.equal(stream.newest, null);
  assert.equal(told, 0);
  assert.equal(finish.length, 1); // the waiting frame is never decoded
  assert.deepEqual(model.sent, []);
});

test("a replayed frame whose decode finishes after close() is closed and not kept", async () => {
  const { finish, decode } = heldDecoder();
  const stream = new FrameStream(fakeModel(), decode);
  stream.onMessage({ type: "state", state: "paused", heard: [] });
  stream.askReplay(1);
  stream.onMessage(header(3, { replay: 1 }), bytes());
  stream.close();
  const bitmap = finish[0]();
  await settle();
  assert.equal(bitmap.closed, true);
  assert.equal(stream.replayed, null);
});

test("a page's ready is not sent when the browser names its codecs after close()", async () => {
  let answer;
  const model = fakeModel();
  const stream = new FrameStream(model, undefined, new Promise((resolve) => (answer = resolve)));
  stream.announce(1);
  stream.close();
  answer(["h264"]);
  await settle();
  assert.deepEqual(model.sent, []);
});

test("after close() kernel messages, hidden views, acks and clicks send nothing", () => {
  const model = fakeModel();
  const stream = new FrameStream(model, async () => ({}), ["h264"]);
  stream.close();
  stream.onMessage(header(5, { format: "h264", key: false }), bytes()); // would ask for a key frame
  stream.onMessage({ type: "state", state: "paused", heard: [] });
  stream.setVisible({}, false); // would say no view is visible
  const timers = fakeTimers();
  stream.acknowledge(5, -1, 0, timers.setTimer, timers.clearTimer);
  timers.advance(10_000);
  assert.equal(stream.controls.send({ type: "control", action: "pause" }, true, timers.setTimer), null);
  assert.deepEqual(model.sent, []);
  assert.equal(stream.controls.state, null);
  assert.equal(timers.pending(), 0);
});
