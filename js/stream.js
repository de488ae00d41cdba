// Frames of one widget model: receive, check sequence numbers, decode (latest wins), acknowledge,
// and tell the views. Frames are handled per model (not per view), so a frame that arrives before
// any view exists is kept and drawn as soon as one renders.
import { ControlChannel } from "./controls.js";
import { PROTOCOL_VERSION, ackMessage, imageOf, isFrame, isReplay, isScene, isState, isSteps, isVideo, keyFrameMessage, readyMessage, replayMessage, stateOf, stepsMessage, visibilityMessage } from "./protocol.js";
import { KEY_ASK_MS, VideoFrames } from "./video.js";

// Acks go at most this often, each for the newest frame drawn: every message to a busy kernel costs
// its threads turns at the GIL that the cell's loop holds, and clicks wait behind them
// (docs/performance-log.md).
export const ACK_PERIOD_MS = 250;
// An ack the kernel has not read after this long means it cannot read them now (a blocking cell
// without comms over subshells): they would pile up and delay the next cell, so send one per
// ACK_BACKOFF_MS until it reads them again.
export const ACK_LAG_MS = 1000;
export const ACK_BACKOFF_MS = 5000;
// The kernel answers a view's "ready" with its state message. The first "ready" of a view rendered as
// its cell displays it sometimes never reaches the kernel (JupyterLab 4.6, comms over a subshell,
// ipykernel 7.4); unanswered, the view would lack the loop's state and speed choices until the next
// click, so "ready" goes again, a few times.
export const READY_ANSWER_MS = 1000;
export const READY_TRIES = 5;
// Decoded frames wait here for their turn on screen, one per display refresh: frames that arrive
// together (a link or a busy kernel delivers them in bursts) are all drawn, not all but the last.
// Past this many waiting, the oldest is dropped: the picture never runs more than this behind.
export const MAX_QUEUED = 4;
// After this many decoder failures with no picture between them the page stops announcing H.264:
// the kernel ("auto") sends it images instead.
export const VIDEO_FAILURES = 3;

/** Frames of one widget model, with its control channel. */
export class FrameStream {
  /**
   * @param {Model} model
   * @param {(blob: Blob) => Promise<ImageBitmap>} decode
   * @param {string[] | Promise<string[]>} codecs the video codecs this page decodes (video.js: videoCodecs)
   * @param {(init: object) => VideoDecoder} makeDecoder
   */
  constructor(model, decode = (blob) => createImageBitmap(blob), codecs = [], makeDecoder = undefined) {
    this.model = model;
    this.decode = decode;
    this.codecs = codecs;
    /** @type {VideoFrames} the H.264 stream's decoder */
    this.video = new VideoFrames((header, frame) => this.showVideo(header, frame), (error) => this.videoFailed(error), makeDecoder);
    this.videoFailures = 0; // decoder failures since the last decoded picture
    this.keyAskedAt = -Infinity;
    /** @type {DecodedFrame | null} the frame on screen now */
    this.latest = null;
    /** @type {DecodedFrame[]} decoded, oldest first, to be shown one per refresh */
    this.queued = [];
    this.advancedAt = -1; // the display refresh that last took a queued frame
    /** @type {{header: FrameHeader, blob: Blob} | null} */
    this.waiting = null;
    this.decoding = false;
    this.received = 0;
    this.decoded = 0;
    this.lastSeq = -1;
    this.gaps = 0;
    this.ackedSeq = -1;
    this.lastAckSentAt = -Infinity;
    /** @type {{seq: number, at: number}[]} acks sent that the kernel has not read yet */
    this.unreadAcks = [];
    this.drawnSeq = -1; // newest frame drawn, acked by the next ack
    this.ackTimer = null;
    this.errors = 0;
    this.versionWarned = false;
    /** @type {Set<() => void>} */
    this.listeners = new Set();
    /** @type {Set<object>} */
    this.visibleViews = new Set();
    this.reportedVisible = true;
    /** @type {DecodedFrame | null} a kept frame the replay slider asked for */
    this.replayed = null;
    this.replaying = false; // a replay was asked for and not ended since
    this.replayIndex = null; // the kept frame the slider asked for last
    this.steps = null; // the kernel's "steps" message: the kept frames' steps, charted under the replay
    this.stepsAskedFor = -1; // how many frames were kept ("history") when the steps were asked for
    /** The view's buttons, keys and replay requests, and the kernel's answers. */
    this.controls = new ControlChannel(model, () => this.tell());
    this.kernelGone = false; // the kernel restarted or stopped: this model's comm is closed
    this.answered = false; // a state message came since the last "ready"
    this.readyTimer = null;
    // The widget went away: decodes still in flight and late callbacks (the codecs' promise, the
    // decoder's output) draw nothing and send nothing.
    this.closed = false;
  }

  /** Every message this stream sends goes here: none once closed. */
  send(msg) {
    if (!this.closed) this.model.send(msg);
  }

  /** A view rendered: tell the kernel (it resends its latest frame and state), again until it answers. */
  announce(tries = READY_TRIES, setTimer = setTimeout) {
    if (this.closed) return;
    if (!Array.isArray(this.codecs)) {
      Promise.resolve(this.codecs).then((codecs) => {
        this.codecs = codecs;
        this.announce(tries, setTimer);
      });
      return;
    }
    this.answered = false;
    this.send(readyMessage(this.codecs));
    if (this.readyTimer !== null) clearTimeout(this.readyTimer);
    this.readyTimer = null;
    if (tries > 1) {
      this.readyTimer = setTimer(() => {
        this.readyTimer = null;
        if (!this.answered) this.announce(tries - 1, setTimer);
      }, READY_ANSWER_MS);
    }
  }

  /** The notebook says this model's comm closed (the kernel restarted or died) or opened again. */
  setKernelGone(gone) {
    if (gone === this.kernelGone) return;
    this.kernelGone = gone;
    this.tell();
  }

  tell() {
    for (const listener of this.listeners) listener();
  }

  /** Ask the kernel for kept frame `index` (the Replay slider). */
  askReplay(index) {
    this.replaying = true;
    this.replayIndex = index;
    this.controls.send(replayMessage(index));
    this.tell(); // the charts' cursor moves at once; the picture when it comes
  }

  /** Back to live frames: the run goes on (Play) or moves (Step); a replay still decoding is dropped. */
  endReplay() {
    this.replaying = false;
    this.replayIndex = this.steps = null;
    this.stepsAskedFor = -1;
    if (this.replayed !== null) {
      this.replayed.bitmap.close?.();
      this.replayed = null;
    }
    this.tell(); // the live frame, at the next refresh
  }

  onReplay(msg, blob) {
    this.decode(blob).then((picture) => this.showReplay(msg, picture)).catch(() => (this.errors += 1));
  }

  /** A kept frame the replay slider asked for, decoded: shown unless the run went on meanwhile. */
  showReplay(msg, picture) {
    if (!this.replaying || this.closed) {
      picture.close?.(); // the run went on while it decoded (live frames win), or the widget went away
      return;
    }
    this.replayed?.bitmap.close?.();
    this.replayed = { header: msg, bitmap: picture };
    this.tell();
  }

  /** The scene scene frames are drawn with now (the widget's "_scene" trait), or null. */
  get scene() {
    const scene = this.model.get("_scene");
    return scene && scene.kind ? scene : null;
  }

  /** @param {any} msg @param {DataView[]} buffers */
  onMessage(msg, buffers) {
    if (this.closed) return;
    if (isState(msg)) {
      this.answered = true;
      this.controls.onState(msg);
      if (msg.state === "running") this.endReplay();
      else if (msg.history >= 2 && msg.history !== this.stepsAskedFor) {
        this.stepsAskedFor = msg.history; // paused with kept frames: their steps, for the charts
        this.controls.send(stepsMessage());
      }
      this.tell();
      return;
    }
    if (isSteps(msg)) {
      this.steps = msg;
      this.tell();
      return;
    }
    if (!isFrame(msg, buffers)) return;
    if (isReplay(msg)) {
      if (isScene(msg)) this.showReplay(msg, { state: stateOf(buffers[0]) });
      else this.onReplay(msg, imageOf(msg, buffers[0]));
      return;
    }
    if (msg.v !== PROTOCOL_VERSION && !this.versionWarned) {
      this.versionWarned = true;
      console.warn(`gymview: kernel speaks protocol ${msg.v}, this page ${PROTOCOL_VERSION}; reload the page`);
    }
    if (isVideo(msg)) {
      this.onVideo(msg, buffers[0]);
      return;
    }
    if (isScene(msg) && Array.isArray(msg.frames)) {
      this.onScenes(msg, buffers[0]);
      return;
    }
    this.onPicture(msg, buffers[0]);
  }

  /** An image, or a scene frame (drawn from its state: scene.js); a resend of one we have is dropped. */
  onPicture(msg, buffer) {
    if (msg.seq <= this.lastSeq) {
      // A resend of a frame we already have (a new view asked for it): draw it if we lack one.
      if (this.latest !== null || this.queued.length > 0) return;
    } else {
      if (this.lastSeq >= 0) this.gaps += msg.seq - this.lastSeq - 1;
      this.lastSeq = msg.seq;
      this.received += 1;
    }
    if (isScene(msg)) {
      this.show(msg, { state: stateOf(buffer) });
      return;
    }
    this.waiting = { header: msg, blob: imageOf(msg, buffer) };
    this.decodeNext();
  }

  /** Several scene frames in one message: their states one after another, each frame's own fields listed. */
  onScenes(msg, buffer) {
    const size = buffer.byteLength / msg.frames.length;
    msg.frames.forEach((fields, i) => {
      const header = { ...msg, ...fields, frames: undefined };
      this.onPicture(header, new DataView(buffer.buffer, buffer.byteOffset + i * size, size));
    });
  }

  /** One frame of the H.264 stream: every one is decoded, in order; one that cannot be asks for a key frame. */
  onVideo(msg, buffer) {
    if (msg.seq <= this.lastSeq) return;
    if (this.lastSeq >= 0) {
      this.gaps += msg.seq - this.lastSeq - 1;
      if (msg.seq !== this.lastSeq + 1) this.video.reset(); // a frame it refers to never came
    }
    this.lastSeq = msg.seq;
    this.received += 1;
    const bytes = new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
    if (!this.video.push(msg, bytes)) this.askKeyFrame();
  }

  /** A decoded picture (an ImageBitmap or a VideoFrame) waits for its turn on screen, unless a newer one is there. */
  show(header, picture) {
    const newest = this.newest;
    if (this.closed || (newest !== null && newest.header.seq > header.seq)) {
      picture.close?.();
      return;
    }
    this.queued.push({ header, bitmap: picture });
    while (this.queued.length > MAX_QUEUED) this.queued.shift().bitmap.close?.();
    this.decoded += 1;
    if (this.replaying) this.acknowledge(header.seq, header.acked ?? -1); // not drawn under a replay: it holds back no Step
    this.tell();
  }

  /** The newest decoded frame, on screen or waiting for its turn; null before the first. */
  get newest() {
    return this.queued.at(-1) ?? this.latest;
  }

  /**
   * The frame to draw at display refresh `refresh` (requestAnimationFrame's time): the next queued
   * one, once per refresh, whichever view asks first. `more` is true while frames still wait.
   * @param {number} refresh
   */
  advance(refresh) {
    if (refresh !== this.advancedAt && this.queued.length > 0) {
      this.advancedAt = refresh;
      this.latest?.bitmap.close?.();
      this.latest = this.queued.shift();
    }
    return { frame: this.latest, more: this.queued.length > 0 };
  }

  showVideo(header, frame) {
    this.videoFailures = 0;
    this.show(header, frame);
  }

  videoFailed(error) {
    this.errors += 1;
    this.videoFailures += 1;
    console.error("gymview: could not decode the video stream", error);
    if (this.videoFailures >= VIDEO_FAILURES && Array.isArray(this.codecs) && this.codecs.length > 0) {
      this.codecs = []; // this browser says it decodes H.264 but does not: ask for images
      this.announce(1);
      return;
    }
    this.askKeyFrame();
  }

  /** A scene could not be drawn here; one that needs WebGL makes the page say it has none, so that the kernel
   * sends pictures (as a failing video decoder makes it ask for images). */
  sceneFailed(scene, error) {
    this.errors += 1;
    console.error("gymview: could not draw the scene", error);
    const cell = scene.kind === "grid" ? scene.cell : scene;
    if (cell.kind === "mujoco" && Array.isArray(this.codecs) && this.codecs.includes("webgl")) {
      this.codecs = this.codecs.filter((codec) => codec !== "webgl");
      this.announce(1);
    }
  }

  /** Ask the kernel for a key frame, at most once per KEY_ASK_MS. */
  askKeyFrame(now = Date.now()) {
    if (now - this.keyAskedAt < KEY_ASK_MS) return;
    this.keyAskedAt = now;
    this.send(keyFrameMessage());
  }

  async decodeNext() {
    if (this.decoding || this.waiting === null) return;
    this.decoding = true;
    const { header, blob } = this.waiting;
    this.waiting = null;
    try {
      this.show(header, await this.decode(blob));
    } catch (error) {
      this.errors += 1;
      console.error("gymview: could not decode frame", header.seq, error);
    } finally {
      this.decoding = false;
      if (this.waiting !== null) this.decodeNext();
    }
  }

  /**
   * Tell the kernel frames up to `seq` were drawn (whichever view drew them): at once when no ack
   * went in the last ACK_PERIOD_MS, else by a timer at the end of that period, for the newest frame
   * drawn by then. While the kernel is not reading acks (one sent ACK_LAG_MS ago is still unread),
   * one per ACK_BACKOFF_MS. Either way the last frame drawn is acked in the end.
   * @param {number} seq @param {number} kernelAcked @param {number} now
   * @param {Function} setTimer @param {Function} clearTimer
   */
  acknowledge(seq, kernelAcked = -1, now = Date.now(), setTimer = setTimeout, clearTimer = clearTimeout) {
    if (this.closed) return;
    while (this.unreadAcks.length > 0 && this.unreadAcks[0].seq <= kernelAcked) this.unreadAcks.shift();
    if (seq <= this.drawnSeq) return;
    this.drawnSeq = seq;
    const kernelLags = this.unreadAcks.length > 0 && now - this.unreadAcks[0].at >= ACK_LAG_MS;
    const period = kernelLags ? ACK_BACKOFF_MS : ACK_PERIOD_MS;
    const wait = this.lastAckSentAt + period - now;
    if (wait <= 0) {
      if (this.ackTimer !== null) clearTimer(this.ackTimer);
      this.ackTimer = null;
      this.sendAck(now);
    } else if (this.ackTimer === null) {
      const due = this.lastAckSentAt + period;
      this.ackTimer = setTimer(() => {
        this.ackTimer = null;
        this.sendAck(due);
      }, wait);
    }
  }

  /** @param {number} now */
  sendAck(now) {
    if (this.drawnSeq <= this.ackedSeq) return;
    this.ackedSeq = this.drawnSeq;
    this.lastAckSentAt = now;
    this.unreadAcks.push({ seq: this.ackedSeq, at: now });
    if (this.unreadAcks.length > 64) this.unreadAcks.shift();
    this.send(ackMessage(this.ackedSeq));
  }

  /** Track which views can be seen; tell the kernel when "any view visible" changes. */
  setVisible(view, visible) {
    if (visible) this.visibleViews.add(view);
    else this.visibleViews.delete(view);
    const anyVisible = this.visibleViews.size > 0 && !globalThis.document?.hidden;
    if (anyVisible !== this.reportedVisible) {
      this.reportedVisible = anyVisible;
      this.send(visibilityMessage(anyVisible));
    }
  }

  /** The widget is going away: stop the timers, close every picture held; from now on nothing is
   * drawn or sent (decodes still in flight close their pictures when they finish). */
  close() {
    this.closed = true;
    this.replaying = false;
    this.waiting = null;
    this.controls.close();
    this.video.close();
    for (const frame of this.queued.splice(0)) frame.bitmap.close?.();
    this.latest?.bitmap.close?.();
    this.replayed?.bitmap.close?.();
    this.latest = this.replayed = null;
    if (this.ackTimer !== null) clearTimeout(this.ackTimer);
    if (this.readyTimer !== null) clearTimeout(this.readyTimer);
    this.ackTimer = this.readyTimer = null;
  }
}
