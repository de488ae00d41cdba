// gymview live view: the browser side of gymview.LiveView (plain ESM for anywidget, no bundler).
//
// Protocol (mirrors gymview/live/protocol.py; bump PROTOCOL_VERSION in both places together):
//   kernel → browser, custom message + one binary buffer holding the image:
//     {type: "frame", v: 1, seq, format: "jpeg" | "png", width, height,
//      step, episode, episode_return, dropped, acked}
//     seq counts frames sent by the view, from 0 and without gaps; acked is the newest ack the
//     kernel has read (when it stays behind the acks sent, the kernel cannot read acks now: send
//     them rarely).
//   browser → kernel (client identifies this page; one kernel may serve several):
//     {type: "ready", v: 1, client}               a view was rendered; the kernel resends its latest frame
//     {type: "ack", seq}                           frames up to seq were drawn (at most one per ACK_PERIOD_MS)
//     {type: "visibility", visible: boolean, client}  whether this page shows a view of the widget
//     {type: "control", action: "pause" | "play" | "step" | "stop" | "speed", value?, id}   a button
//     {type: "control", action: "cancel", of: id, id}   a click that got no answer (see CLICK_ANSWER_MS)
//     {type: "key", key, down, id}                 a key went down / up while the view has focus
//     {type: "replay", index, id}                  show the index-th kept frame (oldest first)
//   kernel → browser, besides frames:
//     {type: "state", state: "running" | "paused" | "stopped", speed: number | null, fps: number | null,
//      speeds: number[], history: number, heard: string[], message: string | null}
//     heard: ids of the latest clicks the kernel applied; a frame with `replay: index` is a kept frame
//     shown again, not a new one.
//
// Frames are handled per model (not per view), so a frame that arrives before any view exists is
// kept and drawn as soon as one renders. Decoding is "latest wins": while one image decodes, a
// newer arrival replaces the waiting one. Views draw on requestAnimationFrame only.

export const PROTOCOL_VERSION = 1;

const MIME = { jpeg: "image/jpeg", png: "image/png" };

/** One id per page, so the kernel can tell two tabs (or collaborators) apart. */
export const CLIENT_ID = Math.random().toString(36).slice(2, 10);

// Acks go at most this often, each for the newest frame drawn. Every message to a busy kernel
// costs its threads dozens of turns at the GIL, which the cell's loop holds: with one ack per frame
// (30/s) a Pause click during a blocking loop in JupyterLab waited behind them (p95 209-247 ms;
// 31-42 ms with this period).
export const ACK_PERIOD_MS = 250;
// An ack the kernel has not read after this long means it cannot read them now (a blocking cell
// without comms over subshells): they would pile up and delay the next cell, so send one per
// ACK_BACKOFF_MS until it reads them again.
export const ACK_LAG_MS = 1000;
export const ACK_BACKOFF_MS = 5000;
// A click the kernel has not answered by then did not reach it: a cell blocks a kernel that cannot
// hear widgets meanwhile (ipykernel 6, or a front-end without comms over subshells).
export const CLICK_ANSWER_MS = 3000;
export const NOT_HEARD =
  "The kernel could not hear this click while the cell runs. Run the loop with " +
  "gymview.play(env, policy) or gymview.background(fn) and the buttons act at once.";

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
    /** The kernel's latest {type: "state"} message, or null before the first. */
    this.state = null;
    /** @type {DecodedFrame | null} a kept frame the replay slider asked for */
    this.replayed = null;
    this.replaying = false; // a replay was asked for and not ended since
    this.clicks = 0;
    /** @type {Map<string, any>} clicks sent and not answered yet -> their timer */
    this.pending = new Map();
    this.notice = "";
  }

  /** Send a control, key or replay message with a fresh id; controls expect an answer. */
  sendControl(msg, expectAnswer = false, setTimer = setTimeout) {
    this.clicks += 1;
    const id = `${CLIENT_ID}:${this.clicks}`;
    this.model.send({ ...msg, id });
    if (expectAnswer) {
      this.pending.set(id, setTimer(() => this.unanswered(id), CLICK_ANSWER_MS));
    }
    return id;
  }

  unanswered(id) {
    if (!this.pending.delete(id)) return;
    this.notice = NOT_HEARD;
    // When the kernel finally hears the click (the cell ended), it undoes it: a late Pause or Stop
    // must not hit the next run.
    this.sendControl({ type: "control", action: "cancel", of: id });
    this.tell();
  }

  tell() {
    for (const listener of this.listeners) listener();
  }

  onState(msg) {
    this.state = msg;
    for (const id of msg.heard || []) {
      const timer = this.pending.get(id);
      if (timer !== undefined) {
        clearTimeout(timer);
        this.pending.delete(id);
      }
    }
    if (msg.message) this.notice = msg.message;
    else if (this.pending.size === 0 && this.notice === NOT_HEARD) this.notice = "";
    if (msg.state === "running") this.endReplay();
    this.tell();
  }

  /** Ask the kernel for kept frame `index` (the Replay slider). */
  askReplay(index) {
    this.replaying = true;
    this.sendControl({ type: "replay", index });
  }

  /** Back to live frames: the run goes on (Play) or moves (Step); a replay still decoding is dropped. */
  endReplay() {
    this.replaying = false;
    if (this.replayed !== null) {
      this.replayed.bitmap.close?.();
      this.replayed = null;
    }
  }

  async onReplay(msg, blob) {
    try {
      const bitmap = await this.decode(blob);
      if (!this.replaying) {
        bitmap.close?.(); // the run went on while it decoded: live frames win
        return;
      }
      this.replayed?.bitmap.close?.();
      this.replayed = { header: msg, bitmap };
      this.tell();
    } catch (error) {
      this.errors += 1;
    }
  }

  /** @param {any} msg @param {DataView[]} buffers */
  onMessage(msg, buffers) {
    if (msg && msg.type === "state") {
      this.onState(msg);
      return;
    }
    if (!msg || msg.type !== "frame" || !buffers || buffers.length < 1) return;
    if (msg.replay !== undefined && msg.replay !== null) {
      const view = buffers[0];
      const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
      this.onReplay(msg, new Blob([bytes], { type: MIME[msg.format] || MIME.jpeg }));
      return;
    }
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
   * Tell the kernel frames up to `seq` were drawn (whichever view drew them): at once when no ack
   * went in the last ACK_PERIOD_MS, else by a timer at the end of that period, for the newest frame
   * drawn by then. While the kernel is not reading acks (one sent ACK_LAG_MS ago is still unread),
   * one per ACK_BACKOFF_MS. Either way the last frame drawn is acked in the end.
   * @param {number} seq @param {number} kernelAcked @param {number} now
   * @param {Function} setTimer @param {Function} clearTimer
   */
  acknowledge(seq, kernelAcked = -1, now = Date.now(), setTimer = setTimeout, clearTimer = clearTimeout) {
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
    this.model.send({ type: "ack", seq: this.ackedSeq });
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

/** "paused · 12.3 fps · step 1,234 · episode 5 · return 37.0 · dropped 456" */
export function statusText(header, fps, state = null) {
  const parts = state ? [state, `${fps.toFixed(1)} fps`] : [`${fps.toFixed(1)} fps`];
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
    for (const timer of stream.pending.values()) clearTimeout(timer);
    stream.pending.clear();
    if (stream.ackTimer !== null) clearTimeout(stream.ackTimer);
    stream.ackTimer = null;
    streams.delete(model.get("_stream_id"));
  };
}

/** "x1 (50 fps)" for a speed option; "max" for null. */
export function speedLabel(speed, fps) {
  if (speed === null || speed === undefined) return "max";
  return fps ? `x${speed} (${Number((fps * speed).toFixed(1))} fps)` : `x${speed}`;
}

function button(label, text) {
  const b = document.createElement("button");
  b.type = "button";
  b.className = "gymview-button";
  b.textContent = text;
  b.setAttribute("aria-label", label);
  b.title = label;
  return b;
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

  const bar = document.createElement("div");
  bar.className = "gymview-controls";
  const pause = button("Pause", "⏸ Pause");
  const play = button("Play", "▶ Play");
  const step = button("Step", "⏭ Step");
  const stop = button("Stop", "⏹ Stop");
  const speed = document.createElement("select");
  speed.className = "gymview-speed";
  speed.setAttribute("aria-label", "Speed");
  speed.title = "Speed";
  const slider = document.createElement("input");
  slider.type = "range";
  slider.className = "gymview-replay";
  slider.setAttribute("aria-label", "Replay");
  slider.title = "Replay: scrub back through the last seconds (while paused or stopped)";
  slider.min = "0";
  slider.hidden = true;
  bar.append(pause, play, step, stop, speed, slider);
  const notice = document.createElement("div");
  notice.className = "gymview-notice";
  notice.setAttribute("role", "status");
  notice.hidden = true;
  el.append(title, canvas, status, bar, notice);

  const context = canvas.getContext("2d");
  const meter = new RateMeter();
  let drawnFrame = null;
  let lastHeader = null;
  let drawn = 0;
  let scheduled = 0;
  let speedsShown = "";

  const showTitle = () => {
    const text = model.get("title") || "";
    title.textContent = text;
    title.hidden = text === "";
  };
  showTitle();
  model.on("change:title", showTitle);
  const showBar = () => {
    bar.hidden = !model.get("show_controls");
  };
  showBar();
  model.on("change:show_controls", showBar);

  const click = (action, value) => {
    el.dataset.lastClickAt = String(Date.now()); // ms since the epoch: tests compare it with the kernel's clock
    if (action === "step" || action === "play") {
      stream.endReplay();
      slider.value = slider.max;
    }
    const msg = { type: "control", action };
    if (value !== undefined) msg.value = value;
    stream.sendControl(msg, action !== "speed");
    el.dataset.unanswered = String(stream.pending.size);
  };
  pause.addEventListener("click", () => click("pause"));
  play.addEventListener("click", () => click("play"));
  step.addEventListener("click", () => click("step"));
  stop.addEventListener("click", () => click("stop"));
  speed.addEventListener("change", () => click("speed", speed.value === "max" ? "max" : Number(speed.value)));
  slider.addEventListener("input", () => {
    stream.askReplay(Number(slider.value));
  });

  // Keyboard play: the view takes focus; keys go to the kernel, not to the notebook's shortcuts.
  const keysDown = new Set();
  const onKey = (down) => (event) => {
    if (!model.get("_keyboard") || !el.contains(event.target)) return;
    event.preventDefault();
    event.stopPropagation();
    if (event.repeat || keysDown.has(event.key) === down) return;
    if (down) keysDown.add(event.key);
    else keysDown.delete(event.key);
    stream.sendControl({ type: "key", key: event.key, down });
    el.dataset.keysDown = Array.from(keysDown).join(" ");
  };
  const onKeyDown = onKey(true);
  const onKeyUp = onKey(false);
  const onBlur = () => {
    for (const key of keysDown) stream.sendControl({ type: "key", key, down: false });
    keysDown.clear();
    el.dataset.keysDown = "";
  };
  const showKeyboard = () => {
    if (!model.get("_keyboard")) onBlur(); // keys held when keyboard play ends are released
    el.tabIndex = model.get("_keyboard") ? 0 : -1;
    el.classList.toggle("gymview-keyboard", Boolean(model.get("_keyboard")));
    if (model.get("_keyboard")) el.setAttribute("aria-label", "Game view: click, then play with the keyboard");
  };
  showKeyboard();
  model.on("change:_keyboard", showKeyboard);
  // Taken on the window in the capture phase, before the notebook's own shortcut handling (Notebook 7
  // swallows some keys, e.g. arrows, before they reach the focused element).
  window.addEventListener("keydown", onKeyDown, true);
  window.addEventListener("keyup", onKeyUp, true);
  el.addEventListener("blur", onBlur);
  canvas.addEventListener("mousedown", () => { if (model.get("_keyboard")) el.focus(); });

  const showState = () => {
    const state = stream.state;
    const now = state ? state.state : "running";
    el.dataset.state = state ? now : "";
    pause.disabled = now === "paused";
    play.disabled = now === "running";
    const options = JSON.stringify([state?.speeds, state?.fps]);
    if (state && options !== speedsShown) {
      speedsShown = options;
      speed.replaceChildren(
        ...[...(state.speeds || []), null].map((x) => {
          const option = document.createElement("option");
          option.value = x === null ? "max" : String(x);
          option.textContent = speedLabel(x, state.fps);
          return option;
        }),
      );
    }
    if (state) speed.value = state.speed === null ? "max" : String(state.speed);
    const history = state ? state.history : 0;
    slider.hidden = now === "running" || history < 2;
    slider.max = String(Math.max(0, history - 1));
    if (now === "running") slider.value = slider.max;
    notice.textContent = stream.notice;
    notice.hidden = stream.notice === "";
    el.dataset.notice = stream.notice;
    el.dataset.unanswered = String(stream.pending.size); // clicks the kernel has not applied yet
    if (lastHeader !== null) status.textContent = statusText(lastHeader, meter.rate(performance.now()), state && now);
  };

  const draw = () => {
    scheduled = 0;
    showState();
    const frame = stream.replayed ?? stream.latest;
    if (frame === null || frame === drawnFrame) return;
    const { header, bitmap } = frame;
    if (canvas.width !== header.width || canvas.height !== header.height) {
      canvas.width = header.width;
      canvas.height = header.height;
    }
    context.drawImage(bitmap, 0, 0);
    drawnFrame = frame;
    el.dataset.replayIndex = frame === stream.replayed ? String(header.replay) : "";
    if (frame === stream.replayed) {
      status.textContent = statusText(header, 0, `replay ${header.replay + 1}/${stream.state?.history ?? "?"}`);
      return;
    }
    lastHeader = header;
    drawn += 1;
    const now = performance.now();
    meter.tick(now);
    status.textContent = statusText(header, meter.rate(now), stream.state && stream.state.state);
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
    window.removeEventListener("keydown", onKeyDown, true);
    window.removeEventListener("keyup", onKeyUp, true);
    el.removeEventListener("blur", onBlur);
    model.off("change:title", showTitle);
    model.off("change:show_controls", showBar);
    model.off("change:_keyboard", showKeyboard);
    stream.setVisible(viewId, false);
  };
}

export default { initialize, render };
