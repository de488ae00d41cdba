// The H.264 stream on the page (video.js, and FrameStream's side of it) with a stand-in VideoDecoder:
// `node --test js/tests/`. Chromium's real decoder is exercised by tests/browser.
import assert from "node:assert/strict";
import { test } from "node:test";

import { CLIENT_ID } from "../protocol.js";
import { FrameStream, MAX_QUEUED, VIDEO_FAILURES } from "../stream.js";
import { VideoFrames, videoCodecs } from "../video.js";

globalThis.EncodedVideoChunk = class {
  constructor({ type, timestamp, data }) {
    Object.assign(this, { type, timestamp, data });
  }
};

/** A decoder that outputs each chunk at once, or fails on a chunk whose first byte is 0xee. */
function fakeDecoders() {
  const made = [];
  const make = ({ output, error }) => {
    const decoder = {
      state: "unconfigured", configs: [], chunks: [],
      configure(config) { this.configs.push(config); this.state = "configured"; },
      decode(chunk) {
        this.chunks.push(chunk);
        if (chunk.data[0] === 0xee) {
          this.state = "closed";
          error(new Error("bad chunk"));
        } else output({ timestamp: chunk.timestamp, closed: false, close() { this.closed = true; } });
      },
      close() { this.state = "closed"; },
    };
    made.push(decoder);
    return decoder;
  };
  return { made, make };
}

const frame = (seq, extra = {}) => ({ type: "frame", v: 2, seq, format: "h264", width: 64, height: 32, key: false,
  codec: "avc1.42c01f", step: seq, episode: 1, episode_return: 0, dropped: 0, ...extra });
const buffer = (first = 0) => [new DataView(new Uint8Array([first, 0, 0, 1]).buffer)];
const fakeModel = () => {
  const sent = [];
  return { sent, send: (msg) => sent.push(msg), on() {}, off() {}, get() {} };
};

test("no WebCodecs, no video codecs; a browser that decodes H.264 says so", async () => {
  assert.deepEqual(await videoCodecs(undefined), []);
  const supported = { isConfigSupported: async (config) => ({ supported: config.codec.startsWith("avc1.") }) };
  assert.deepEqual(await videoCodecs(Object.assign(function VideoDecoder() {}, supported)), ["h264"]);
  const refusing = { isConfigSupported: async () => { throw new TypeError("no"); } };
  assert.deepEqual(await videoCodecs(Object.assign(function VideoDecoder() {}, refusing)), []);
});

test("frames are decoded in order from a key frame; the decoder is configured from the key frame's header", () => {
  const { made, make } = fakeDecoders();
  const shown = [];
  const video = new VideoFrames((header) => shown.push(header.seq), () => {}, make);
  assert.equal(video.push(frame(0), new Uint8Array([1])), false); // a delta frame first: nothing to start from
  assert.equal(made.length, 0);
  assert.equal(video.push(frame(1, { key: true }), new Uint8Array([1])), true);
  assert.equal(video.push(frame(2), new Uint8Array([1])), true);
  assert.deepEqual(shown, [1, 2]);
  assert.deepEqual(made[0].configs, [{ codec: "avc1.42c01f", optimizeForLatency: true }]);
  assert.deepEqual(made[0].chunks.map((chunk) => chunk.type), ["key", "delta"]);
  video.push(frame(3, { key: true, width: 128 }), new Uint8Array([1])); // a new size: a new decoder
  assert.equal(made.length, 2);
  assert.equal(made[0].state, "closed");
});

test("a page that joins mid-stream asks for a key frame once, and draws from the key frame on", async () => {
  const { make } = fakeDecoders();
  const model = fakeModel();
  const stream = new FrameStream(model, undefined, ["h264"], make);
  stream.onMessage(frame(5), buffer());
  stream.onMessage(frame(6), buffer());
  assert.deepEqual(model.sent.filter((msg) => msg.type === "keyframe").length, 1);
  assert.equal(stream.newest, null);
  stream.onMessage(frame(7, { key: true }), buffer());
  stream.onMessage(frame(8), buffer());
  assert.equal(stream.newest.header.seq, 8);
  assert.equal(stream.decoded, 2);
});

test("a decoder error or a missing frame asks for a key frame and waits for it", () => {
  const { made, make } = fakeDecoders();
  const model = fakeModel();
  const stream = new FrameStream(model, undefined, ["h264"], make);
  const keyAsks = () => model.sent.filter((msg) => msg.type === "keyframe").length;
  const errors = console.error;
  console.error = () => {};
  try {
    stream.onMessage(frame(0, { key: true }), buffer());
    stream.onMessage(frame(1), buffer(0xee)); // the decoder fails
  } finally {
    console.error = errors;
  }
  assert.equal(stream.errors, 1);
  assert.equal(keyAsks(), 1);
  stream.keyAskedAt = -Infinity; // later on
  stream.onMessage(frame(2), buffer());
  assert.equal(stream.newest.header.seq, 0); // frame 2 refers to frames the page lost
  stream.onMessage(frame(3, { key: true }), buffer());
  stream.keyAskedAt = -Infinity;
  stream.onMessage(frame(5), buffer()); // frame 4 never came
  assert.equal(stream.gaps, 1);
  assert.equal(stream.newest.header.seq, 3);
  assert.equal(keyAsks(), 3);
  assert.equal(made.length, 2); // one decoder per key frame after a failure
});

test("frames that arrive together are shown one per display refresh, and closed once replaced", () => {
  const { make } = fakeDecoders();
  const stream = new FrameStream(fakeModel(), undefined, ["h264"], make);
  stream.onMessage(frame(0, { key: true }), buffer());
  stream.onMessage(frame(1), buffer());
  stream.onMessage(frame(2), buffer());
  const first = stream.advance(16);
  assert.equal(first.frame.header.seq, 0);
  assert.equal(first.more, true);
  assert.equal(stream.advance(16).frame.header.seq, 0); // a second view, the same refresh: the same frame
  assert.equal(stream.advance(33).frame.header.seq, 1);
  assert.equal(first.frame.bitmap.closed, true);
  const last = stream.advance(50);
  assert.deepEqual([last.frame.header.seq, last.more, last.frame.bitmap.closed], [2, false, false]);
});

test("a page that falls behind drops the oldest waiting frames: the picture never runs far behind", () => {
  const { make } = fakeDecoders();
  const stream = new FrameStream(fakeModel(), undefined, ["h264"], make);
  stream.onMessage(frame(0, { key: true }), buffer());
  for (let seq = 1; seq < 6; seq += 1) stream.onMessage(frame(seq), buffer());
  const dropped = stream.queued[0].bitmap;
  stream.onMessage(frame(6), buffer());
  assert.deepEqual(stream.queued.map((f) => f.header.seq), [0, 1, 2, 3, 4, 5, 6].slice(-MAX_QUEUED));
  assert.equal(dropped.closed, true);
  stream.close();
  assert.equal(stream.queued.length, 0);
});

test("a decoder that keeps failing makes the page ask for images", () => {
  const { make } = fakeDecoders();
  const model = fakeModel();
  const stream = new FrameStream(model, undefined, ["h264"], make);
  const errors = console.error;
  console.error = () => {};
  try {
    for (let seq = 0; seq < VIDEO_FAILURES; seq += 1) {
      stream.keyAskedAt = -Infinity;
      stream.onMessage(frame(seq, { key: true }), buffer(0xee));
    }
  } finally {
    console.error = errors;
  }
  assert.deepEqual(model.sent.at(-1), { type: "ready", v: 2, client: CLIENT_ID, codecs: [] });
  assert.equal(model.sent.filter((msg) => msg.type === "keyframe").length, VIDEO_FAILURES - 1);
});

test("without WebCodecs a forced H.264 stream fails quietly and asks for images", () => {
  const model = fakeModel();
  const stream = new FrameStream(model, undefined, ["h264"], () => { throw new ReferenceError("VideoDecoder is not defined"); });
  const errors = console.error;
  console.error = () => {};
  try {
    for (let seq = 0; seq < VIDEO_FAILURES; seq += 1) stream.onMessage(frame(seq, { key: true }), buffer());
  } finally {
    console.error = errors;
  }
  assert.equal(stream.errors, VIDEO_FAILURES);
  assert.deepEqual(model.sent.at(-1).codecs, []);
});

test("closing the stream closes every picture it holds", () => {
  const { make } = fakeDecoders();
  const stream = new FrameStream(fakeModel(), undefined, ["h264"], make);
  stream.onMessage(frame(0, { key: true }), buffer());
  stream.onMessage(frame(1), buffer());
  const shown = stream.advance(16).frame.bitmap;
  const waiting = stream.queued[0].bitmap;
  stream.close();
  assert.equal(shown.closed && waiting.closed, true);
});

test("a picture the decoder outputs after close() is closed, not shown; a late error is not reported", () => {
  let output, error;
  const make = (init) => {
    ({ output, error } = init);
    return { state: "configured", configure() {}, decode() {}, close() { this.state = "closed"; } };
  };
  const shown = [], errors = [];
  const video = new VideoFrames((header) => shown.push(header.seq), (failure) => errors.push(failure), make);
  assert.equal(video.push(frame(0, { key: true }), new Uint8Array([1])), true); // in the decoder when the view goes
  video.close();
  const late = { timestamp: 0, closed: false, close() { this.closed = true; } };
  output(late);
  error(new Error("aborted"));
  assert.deepEqual([shown, errors, late.closed], [[], [], true]);
  assert.equal(video.push(frame(1, { key: true }), new Uint8Array([1])), false); // no new decoder either
});
