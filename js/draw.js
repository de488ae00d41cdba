// Drawing a view: the newest (or replayed) frame on requestAnimationFrame, the status line and the
// buttons' state.
import { showReplayCharts } from "./replay_charts.js";
import { canvasScale, drawScene, missingModule, sceneReady } from "./scene.js";
import { KERNEL_GONE, RateMeter, StatusLine, buttonsOff, speedLabel, statusText } from "./status.js";

/** Draw the newest frame (or the replayed one) on requestAnimationFrame, with the buttons' state;
 * returns the unbinding. */
export function drawLoop(dom, stream) {
  const { el, canvas, status, pause, play, step, stop, speed, slider, notice } = dom;
  const context = canvas.getContext("2d");
  const meter = new RateMeter();
  const statusLine = new StatusLine(status);
  let drawnFrame = null;
  let lastHeader = null;
  let drawn = 0;
  let scheduled = 0;
  let speedsShown = "";

  /** The speed choices (rebuilt only when the kernel's change) and the one chosen. */
  const showSpeeds = (state) => {
    const options = JSON.stringify([state.speeds, state.fps]);
    if (options !== speedsShown) {
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
    speed.value = state.speed === null ? "max" : String(state.speed);
  };

  const showState = () => {
    const { state, pending } = stream.controls;
    const now = state ? state.state : "running";
    el.dataset.state = state ? now : "";
    const off = buttonsOff(now);
    pause.disabled = off.pause;
    play.disabled = off.play;
    step.disabled = off.step;
    stop.disabled = off.stop;
    speed.disabled = off.speed;
    if (state) showSpeeds(state);
    const history = state ? state.history : 0;
    slider.hidden = now === "running" || history < 2;
    slider.max = String(Math.max(0, history - 1));
    if (now === "running") slider.value = slider.max;
    showReplayCharts(dom, stream, stream.replayIndex ?? Number(slider.value), !slider.hidden);
    notice.textContent = stream.controls.notice;
    notice.hidden = stream.controls.notice === "";
    el.dataset.notice = stream.controls.notice;
    el.dataset.unanswered = String(pending.size); // clicks the kernel has not applied yet
    el.dataset.kernelGone = String(stream.kernelGone);
    if (!stream.kernelGone && lastHeader !== null) {
      statusLine.show(statusText(lastHeader, meter.rate(performance.now()), state && now), state && now);
    }
    if (stream.kernelGone) {
      statusLine.show(KERNEL_GONE, KERNEL_GONE); // the last frame stays above it
      for (const button of el.querySelectorAll("button, select, input")) button.disabled = true;
    }
  };

  /** Put `frame` on the canvas: a picture, or a state drawn with its scene (false until that scene is here). */
  const paint = ({ header, bitmap }) => {
    const scene = stream.scene;
    if (header.format === "scene" && (scene?.id !== header.scene || missingModule(scene) !== null)) return false;
    // a scene drawn smaller than shown: the canvas at the drawn size, shown at the frame's size
    const shrink = header.format === "scene" ? canvasScale(scene, header.width, header.height) : 1;
    const [width, height] = [Math.max(1, Math.floor(header.width * shrink)), Math.max(1, Math.floor(header.height * shrink))];
    if (canvas.width !== width || canvas.height !== height) {
      canvas.width = width;
      canvas.height = height;
    }
    const shownWidth = shrink === 1 ? "" : `${header.width}px`;
    if (canvas.style.width !== shownWidth) canvas.style.width = shownWidth;
    if (header.format !== "scene") {
      context.drawImage(bitmap, 0, 0);
      return true;
    }
    try {
      drawScene(context, scene, bitmap.state, canvas.width, canvas.height, shrink !== 1);
    } catch (error) {
      stream.sceneFailed(scene, error);
      return false;
    }
    return sceneReady(scene); // drawn again once its pictures are here
  };

  const draw = (refresh) => {
    scheduled = 0;
    showState();
    const { frame: live, more } = stream.advance(refresh);
    if (more) schedule(); // the next queued frame at the next refresh
    const frame = stream.replayed ?? live;
    if (frame === null || frame === drawnFrame) return;
    if (!paint(frame)) return;
    const { header } = frame;
    drawnFrame = frame;
    el.dataset.replayIndex = frame === stream.replayed ? String(header.replay) : "";
    if (frame === stream.replayed) {
      const position = `replay ${header.replay + 1}/${stream.controls.state?.history ?? "?"}`;
      statusLine.show(statusText(header, 0, position), position);
      return;
    }
    lastHeader = header;
    drawn += 1;
    const now = performance.now();
    meter.tick(now);
    if (!stream.kernelGone) {
      const label = stream.controls.state && stream.controls.state.state;
      statusLine.show(statusText(header, meter.rate(now), label), label);
    }
    el.dataset.framesReceived = String(stream.received);
    el.dataset.framesDrawn = String(drawn);
    el.dataset.lastSeq = String(header.seq);
    el.dataset.format = header.format;
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
    statusLine.close();
    if (scheduled !== 0) cancelAnimationFrame(scheduled);
  };
}
