// A background job's status line (gymview.live.job_status.JobStatus): its state, the elapsed time and
// a Stop button. The page counts the elapsed time itself, so no thread ticks in the kernel.
import { jobStopMessage } from "./protocol.js";

/** "learn: running · 12 s · message"; `now` in seconds since the epoch. */
export function jobLine({ name, state, started, ended, message }, now) {
  const seconds = Math.max(0, (ended || now) - started);
  return `${name}: ${state} · ${seconds.toFixed(0)} s` + (message ? ` · ${message}` : "");
}

function render({ model, el }) {
  el.classList.add("gymview-job");
  const label = document.createElement("span");
  const button = document.createElement("button");
  button.type = "button";
  button.textContent = "Stop";
  button.setAttribute("aria-label", "Stop");
  button.className = "gymview-button";
  el.append(label, button);
  const show = () => {
    const traits = Object.fromEntries(["name", "state", "started", "ended", "message"].map((key) => [key, model.get(key)]));
    label.textContent = jobLine(traits, Date.now() / 1000);
    el.dataset.state = traits.state;
    button.disabled = traits.state !== "running";
  };
  button.addEventListener("click", () => model.send(jobStopMessage()));
  model.on("change", show);
  show();
  const timer = setInterval(show, 1000);
  return () => {
    clearInterval(timer);
    model.off("change", show);
  };
}

export default { render };
