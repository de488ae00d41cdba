// One rendered view's elements: the picture, status line, buttons, speed and replay slider, and what
// the buttons send.
import { controlMessage } from "./protocol.js";

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
  const charts = document.createElement("canvas");
  charts.className = "gymview-charts";
  charts.hidden = true; // the replay's charts, while paused (replay_charts.js)
  const readout = document.createElement("div");
  readout.className = "gymview-readout";
  readout.hidden = true;
  const notice = document.createElement("div");
  notice.className = "gymview-notice";
  notice.setAttribute("role", "status");
  notice.hidden = true;
  el.append(title, canvas, status, bar, charts, readout, notice);
  return { el, title, canvas, status, bar, pause, play, step, stop, speed, slider, charts, readout, notice };
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
