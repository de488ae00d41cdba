// One rendered view of a widget: its DOM, the buttons and slider, keyboard play, and the draw loop.
import { controlMessage, keyMessage } from "./protocol.js";
import { RateMeter, speedLabel, statusText } from "./status.js";

function button(label, text) {
  const b = document.createElement("button");
  b.type = "button";
  b.className = "gymview-button";
  b.textContent = text;
  b.setAttribute("aria-label", label);
  b.title = label;
  return b;
}

/** The view's elements, appended to `el`. */
export function buildDom(el) {
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
  return { el, title, canvas, status, bar, pause, play, step, stop, speed, slider, notice };
}

/** Title and button bar follow the model's traits; returns the unbinding. */
export function bindTraits(dom, model) {
  const showTitle = () => {
    const text = model.get("title") || "";
    dom.title.textContent = text;
    dom.title.hidden = text === "";
  };
  const showBar = () => {
    dom.bar.hidden = !model.get("show_controls");
  };
  showTitle();
  showBar();
  model.on("change:title", showTitle);
  model.on("change:show_controls", showBar);
  return () => {
    model.off("change:title", showTitle);
    model.off("change:show_controls", showBar);
  };
}

/** Buttons, speed and replay slider send their clicks through the stream's control channel. */
export function bindControls(dom, stream) {
  const { el, slider, speed } = dom;
  const click = (action, value) => {
    el.dataset.lastClickAt = String(Date.now()); // ms since the epoch: tests compare it with the kernel's clock
    if (action === "step" || action === "play") {
      stream.endReplay();
      slider.value = slider.max;
    }
    stream.controls.send(controlMessage(action, value), action !== "speed");
    el.dataset.unanswered = String(stream.controls.pending.size);
  };
  for (const action of ["pause", "play", "step", "stop"]) dom[action].addEventListener("click", () => click(action));
  speed.addEventListener("change", () => click("speed", speed.value === "max" ? "max" : Number(speed.value)));
  slider.addEventListener("input", () => stream.askReplay(Number(slider.value)));
}

/** Keyboard play: while the `_keyboard` trait is on, the focused view sends key presses to the
 * kernel instead of the notebook's shortcuts. Returns the unbinding. */
export function bindKeyboard(dom, model, stream) {
  const { el, canvas } = dom;
  const keysDown = new Set();
  const onKey = (down) => (event) => {
    if (!model.get("_keyboard") || !el.contains(event.target)) return;
    event.preventDefault();
    event.stopPropagation();
    if (event.repeat || keysDown.has(event.key) === down) return;
    if (down) keysDown.add(event.key);
    else keysDown.delete(event.key);
    stream.controls.send(keyMessage(event.key, down));
    el.dataset.keysDown = Array.from(keysDown).join(" ");
  };
  const onKeyDown = onKey(true);
  const onKeyUp = onKey(false);
  const onBlur = () => {
    for (const key of keysDown) stream.controls.send(keyMessage(key, false));
    keysDown.clear();
    el.dataset.keysDown = "";
  };
  const showKeyboard = () => {
    const on = Boolean(model.get("_keyboard"));
    if (!on) onBlur(); // keys held when keyboard play ends are released
    el.tabIndex = on ? 0 : -1;
    el.classList.toggle("gymview-keyboard", on);
    if (on) el.setAttribute("aria-label", "Game view: click, then play with the keyboard");
  };
  const onMouseDown = () => {
    if (model.get("_keyboard")) el.focus();
  };
  showKeyboard();
  model.on("change:_keyboard", showKeyboard);
  // Taken on the window in the capture phase, before the notebook's own shortcut handling (Notebook 7
  // swallows some keys, e.g. arrows, before they reach the focused element).
  window.addEventListener("keydown", onKeyDown, true);
  window.addEventListener("keyup", onKeyUp, true);
  el.addEventListener("blur", onBlur);
  canvas.addEventListener("mousedown", onMouseDown);
  return () => {
    window.removeEventListener("keydown", onKeyDown, true);
    window.removeEventListener("keyup", onKeyUp, true);
    el.removeEventListener("blur", onBlur);
    canvas.removeEventListener("mousedown", onMouseDown);
    model.off("change:_keyboard", showKeyboard);
  };
}

/** Draw the newest frame (or the replayed one) on requestAnimationFrame, with the buttons' state;
 * returns the unbinding. */
export function drawLoop(dom, stream) {
  const { el, canvas, status, pause, play, speed, slider, notice } = dom;
  const context = canvas.getContext("2d");
  const meter = new RateMeter();
  let drawnFrame = null;
  let lastHeader = null;
  let drawn = 0;
  let scheduled = 0;
  let speedsShown = "";

  const showState = () => {
    const { state, pending } = stream.controls;
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
    notice.textContent = stream.controls.notice;
    notice.hidden = stream.controls.notice === "";
    el.dataset.notice = stream.controls.notice;
    el.dataset.unanswered = String(pending.size); // clicks the kernel has not applied yet
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
      status.textContent = statusText(header, 0, `replay ${header.replay + 1}/${stream.controls.state?.history ?? "?"}`);
      return;
    }
    lastHeader = header;
    drawn += 1;
    const now = performance.now();
    meter.tick(now);
    status.textContent = statusText(header, meter.rate(now), stream.controls.state && stream.controls.state.state);
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
  schedule();
  return () => {
    stream.listeners.delete(schedule);
    if (scheduled !== 0) cancelAnimationFrame(scheduled);
  };
}
