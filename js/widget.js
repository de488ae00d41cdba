// gymview live view: the browser side of gymview.LiveView (plain ESM for anywidget, no bundler).
//
// Protocol (mirrors gymview/live/protocol.py; bump PROTOCOL_VERSION in both places together):
//   kernel → browser, custom message + one binary buffer holding the image:
//     {type: "frame", v: 1, seq, format: "jpeg" | "png", width, height,
//      step, episode, episode_return, dropped, acked}
//     seq counts frames sent by the view, from 0 and without gaps; acked is the newest ack the
//     kernel has read (when it lags far behind, the kernel cannot read acks now: send them rarely).
//   browser → kernel (client identifies this page; one kernel may serve several):
//     {type: "ready", v: 1, client}               a view was rendered; the kernel resends its latest frame
//     {type: "ack", seq}                           frame seq was drawn; bounds the frames in flight
//     {type: "visibility", visible: boolean, client}  whether this page shows a view of the widget
//
// Frames are handled per model (not per view), so a frame that arrives before any view exists is
// kept and drawn as soon as one renders. Decoding is "latest wins": while one image decodes, a
// newer arrival replaces the waiting one. Views draw on requestAnimationFrame only.

export const PROTOCOL_VERSION = 1;

const MIME = { jpeg: "image/jpeg", png: "image/png" };

/** One id per page, so the kernel can tell two tabs (or collaborators) apart. */
export const CLIENT_ID = Math.random().toString(36).slice(2, 10);

// Acks beyond what the kernel has read: past this many, it is not reading them (a blocking cell
// without comms over subshells), so they would pile up and delay the next cell; send one per
// ACK_BACKOFF_MS then.
export const ACK_LAG_LIMIT = 8;
export const ACK_BACKOFF_MS = 5000;

/**
 * @typedef {{type: "frame", v: number, seq: number, format: "jpeg" | "png", width: number,
 *   height: number, step: number | null, episode: number | null, episode_return: number | null,
 *   dropped: number, acked: number}} FrameHeader
 * @typedef {{header: FrameHeader, bitmap: ImageBitmap}} DecodedFrame
 * @typedef {{on: Function, off: Function, send: Function, get: Function}} Model
 */

/** Frames of one widget model: receive, check sequence numbers, decode, hand to the views. */
export class FrameStream {
  /**
   * @param {Model} model
   * @param {(blob: Blob) => Promise<ImageBitmap>} decode
   */
  constructor(model, decode = (blob) => createImageBitmap(blob)) {
    this.model = model;
    this.decode = decode;
    /** @type {DecodedFrame | null} */
    this.latest = null;
    /** @type {{header: FrameHeader, blob: Blob} | null} */
    this.waiting = null;
    this.decoding = false;
    this.received = 0;
    this.decoded = 0;
    this.lastSeq = -1;
    this.gaps = 0;
    this.ackedSeq = -1;
    this.lastAckSentAt = -Infinity;
    this.errors = 0;
    this.versionWarned = false;
    /** @type {Set<() => void>} */
    this.listeners = new Set();
    /** @type {Set<object>} */
    this.visibleViews = new Set();
    this.reportedVisible = true;
  }

  /** @param {any} msg @param {DataView[]} buffers */
  onMessage(msg, buffers) {
    if (!msg || msg.type !== "frame" || !buffers || buffers.length < 1) return;
    if (msg.v !== PROTOCOL_VERSION && !this.versionWarned) {
      this.versionWarned = true;
      console.warn(`gymview: kernel speaks protocol ${msg.v}, this page ${PROTOCOL_VERSION}; reload the page`);
    }
    if (msg.seq <= this.lastSeq) {
      // A resend of a frame we already have (a new view asked for it): draw it if we lack one.
      if (this.latest !== null) return;
    } else {
      if (this.lastSeq >= 0) this.gaps += msg.seq - this.lastSeq - 1;
      this.lastSeq = msg.seq;
      this.received += 1;
    }
    const view = buffers[0];
    const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
    this.waiting = { header: msg, blob: new Blob([bytes], { type: MIME[msg.format] || MIME.jpeg }) };
    this.decodeNext();
  }

  async decodeNext() {
    if (this.decoding || this.waiting === null) return;
    this.decoding = true;
    const { header, blob } = this.waiting;
    this.waiting = null;
    try {
      const bitmap = await this.decode(blob);
      if (this.latest !== null && this.latest.header.seq > header.seq) {
        bitmap.close?.();
      } else {
        this.latest?.bitmap.close?.();
        this.latest = { header, bitmap };
        this.decoded += 1;
        for (const listener of this.listeners) listener();
      }
    } catch (error) {
      this.errors += 1;
      console.error("gymview: could not decode frame", header.seq, error);
    } finally {
      this.decoding = false;
      if (this.waiting !== null) this.decodeNext();
    }
  }

  /**
   * Tell the kernel a frame was drawn (once per frame, whichever view drew it) — or, while the
   * kernel is not reading acks (its `acked` lags far behind), once per ACK_BACKOFF_MS.
   * @param {number} seq @param {number} kernelAcked @param {number} now
   */
  acknowledge(seq, kernelAcked = -1, now = Date.now()) {
    if (seq <= this.ackedSeq) return;
    const kernelLags = seq - kernelAcked > ACK_LAG_LIMIT;
    if (kernelLags && now - this.lastAckSentAt < ACK_BACKOFF_MS) return;
    this.ackedSeq = seq;
    this.lastAckSentAt = now;
    this.model.send({ type: "ack", seq });
  }

  /** Track which views can be seen; tell the kernel when "any view visible" changes. */
  setVisible(view, visible) {
    if (visible) this.visibleViews.add(view);
    else this.visibleViews.delete(view);
    const anyVisible = this.visibleViews.size > 0 && !globalThis.document?.hidden;
    if (anyVisible !== this.reportedVisible) {
      this.reportedVisible = anyVisible;
      this.model.send({ type: "visibility", visible: anyVisible, client: CLIENT_ID });
    }
  }
}

/** "12.3 fps · step 1,234 · episode 5 · return 37.0 · dropped 456" */
export function statusText(header, fps) {
  const parts = [`${fps.toFixed(1)} fps`];
  const number = (x) => Number(x).toLocaleString("en-US");
  if (header.step !== null && header.step !== undefined) parts.push(`step ${number(header.step)}`);
  if (header.episode !== null && header.episode !== undefined) parts.push(`episode ${number(header.episode)}`);
  if (header.episode_return !== null && header.episode_return !== undefined) {
    parts.push(`return ${Number(header.episode_return).toFixed(1)}`);
  }
  parts.push(`dropped ${number(header.dropped)}`);
  return parts.join(" · ");
}

/** Frames drawn per second over a sliding one-second window. */
export class RateMeter {
  constructor(windowMs = 1000) {
    this.windowMs = windowMs;
    /** @type {number[]} */
    this.times = [];
  }
  tick(now) {
    this.times.push(now);
    while (this.times.length > 0 && now - this.times[0] > this.windowMs) this.times.shift();
  }
  rate(now) {
    while (this.times.length > 0 && now - this.times[0] > this.windowMs) this.times.shift();
    return (this.times.length * 1000) / this.windowMs;
  }
}

// anywidget hands initialize() and each render() a different proxy of the same model, so the
// per-model state is found through the widget's "_stream_id" trait (a uuid set by the kernel).
/** @type {Map<string, FrameStream>} */
const streams = new Map();

function streamOf(model) {
  const key = model.get("_stream_id");
  let stream = streams.get(key);
  if (!stream) {
    stream = new FrameStream(model);
    streams.set(key, stream);
  }
  return stream;
}

function initialize({ model }) {
  const stream = streamOf(model);
  const onCustom = (msg, buffers) => stream.onMessage(msg, buffers);
  model.on("msg:custom", onCustom);
  return () => {
    model.off("msg:custom", onCustom);
    streams.delete(model.get("_stream_id"));
  };
}

function render({ model, el }) {
  const stream = streamOf(model);
  const viewId = {};
  el.classList.add("gymview");
  const title = document.createElement("div");
  title.className = "gymview-title";
  const canvas = document.createElement("canvas");
  canvas.className = "gymview-canvas";
  canvas.width = 1;
  canvas.height = 1;
  const status = document.createElement("div");
  status.className = "gymview-status";
  status.textContent = "waiting for frames…";
  el.append(title, canvas, status);
  const context = canvas.getContext("2d");
  const meter = new RateMeter();
  let drawnSeq = -1;
  let drawn = 0;
  let scheduled = 0;

  const showTitle = () => {
    const text = model.get("title") || "";
    title.textContent = text;
    title.hidden = text === "";
  };
  showTitle();
  model.on("change:title", showTitle);

  const draw = () => {
    scheduled = 0;
    const frame = stream.latest;
    if (frame === null || frame.header.seq === drawnSeq) return;
    const { header, bitmap } = frame;
    if (canvas.width !== header.width || canvas.height !== header.height) {
      canvas.width = header.width;
      canvas.height = header.height;
    }
    context.drawImage(bitmap, 0, 0);
    drawnSeq = header.seq;
    drawn += 1;
    const now = performance.now();
    meter.tick(now);
    status.textContent = statusText(header, meter.rate(now));
    el.dataset.framesReceived = String(stream.received);
    el.dataset.framesDrawn = String(drawn);
    el.dataset.lastSeq = String(header.seq);
    el.dataset.gaps = String(stream.gaps);
    el.dataset.decodeErrors = String(stream.errors);
    stream.acknowledge(header.seq, header.acked ?? -1);
  };
  const schedule = () => {
    if (scheduled === 0) scheduled = requestAnimationFrame(draw);
  };
  stream.listeners.add(schedule);

  const observer = new IntersectionObserver((entries) => {
    for (const entry of entries) stream.setVisible(viewId, entry.isIntersecting);
  });
  observer.observe(el);
  const onPageVisibility = () => stream.setVisible(viewId, stream.visibleViews.has(viewId));
  document.addEventListener("visibilitychange", onPageVisibility);

  model.send({ type: "ready", v: PROTOCOL_VERSION, client: CLIENT_ID });
  schedule();

  return () => {
    stream.listeners.delete(schedule);
    if (scheduled !== 0) cancelAnimationFrame(scheduled);
    observer.disconnect();
    document.removeEventListener("visibilitychange", onPageVisibility);
    model.off("change:title", showTitle);
    stream.setVisible(viewId, false);
  };
}

export default { initialize, render };
