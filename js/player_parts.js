// What the players share (the episode player's and the rollout player's): their elements, the controls under the
// picture, the charts' canvas sized for the screen, the chips that pick what is charted, and their keys, taken on
// the window in the capture phase when the player has focus: Notebook 7 swallows some keys, arrows among them,
// before they reach the focused element (as js/keyboard.js takes the live view's).
import { ROW_HEIGHT } from "./charts.js";

export function element(tag, className, parent) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  parent?.append(node);
  return node;
}

/** Under a player's picture: the charts, a bar with Play and the slider, the readout and the chips. */
export function playerControls(el) {
  const charts = element("canvas", "gymview-charts", el);
  const bar = element("div", "gymview-controls", el);
  const play = element("button", "gymview-button", bar);
  play.type = "button";
  play.textContent = "▶ Play";
  play.setAttribute("aria-label", "Play");
  const slider = element("input", "gymview-episode-slider", bar);
  slider.type = "range";
  slider.min = "0";
  slider.setAttribute("aria-label", "Frame");
  const readout = element("div", "gymview-readout", el);
  const chips = element("div", "gymview-chips", el);
  return { charts, play, slider, readout, chips };
}

/** The charts' canvas `width` CSS pixels wide for `rows` charts, at the screen's pixel ratio: its 2D context. */
export function chartsContext(charts, width, rows) {
  const ratio = window.devicePixelRatio || 1;
  charts.style.width = `${width}px`;
  charts.style.height = `${rows * ROW_HEIGHT}px`;
  charts.width = Math.round(width * ratio);
  charts.height = Math.round(rows * ROW_HEIGHT * ratio);
  const context = charts.getContext("2d");
  context.setTransform(ratio, 0, 0, ratio, 0, 0);
  return context;
}

/** A chip for each of `names`, pressed for those `chosen`; a click calls `toggle(name)`. `colourOf(index)`: its
 * border's colour, where it has one. */
export function chipsFor(names, chosen, toggle, colourOf = () => "") {
  return names.map((name, index) => {
    const chip = element("button", "gymview-chip");
    chip.type = "button";
    chip.textContent = name;
    chip.style.borderColor = colourOf(index);
    chip.setAttribute("aria-pressed", String(chosen.has(name)));
    chip.addEventListener("click", () => toggle(name));
    return chip;
  });
}

const STEPS = { ArrowRight: 1, ArrowLeft: -1, PageDown: 10, PageUp: -10 };

/** The player's keys while focus is inside `el`: Space plays and pauses, the arrows step a frame, Page Up and
 * Down ten, Home and End go to the ends. `player`: {playing, frame, count, play(), pause(), seek(frame)}.
 * Returns the unbinding. */
export function onPlayerKeys(el, player, win = globalThis.window) {
  const onKeyDown = (event) => {
    const { key } = event;
    if (!el.contains(event.target) || !(key in STEPS || key === "Home" || key === "End" || key === " ")) return;
    event.preventDefault();
    event.stopPropagation(); // not the notebook's: arrow keys would move between cells
    if (key === " ") {
      if (player.playing) player.pause();
      else player.play();
      return;
    }
    if (player.playing) player.pause();
    player.seek(key === "Home" ? 0 : key === "End" ? player.count - 1 : player.frame + STEPS[key]);
  };
  win.addEventListener("keydown", onKeyDown, true);
  return () => win.removeEventListener("keydown", onKeyDown, true);
}

/** What a player does with its model: its title shown, the frame and the charted values the kernel sets followed,
 * the `more` events' listeners, the first drawing, and drawing again when resized. Returns the observer of sizes
 * and the unbinding. */
export function followModel(model, dom, player, more = {}) {
  const showTitle = () => {
    dom.title.textContent = model.get("title");
    dom.title.hidden = !model.get("title");
  };
  const events = {
    "change:frame": () => model.get("frame") !== player.frame && player.show(model.get("frame")),
    "change:values": () => {
      player.drawChips();
      player.draw();
    },
    "change:title": showTitle,
    ...more,
  };
  for (const [event, listener] of Object.entries(events)) model.on(event, listener);
  showTitle();
  player.drawChips();
  player.show(player.frame);
  const resize = new ResizeObserver(() => player.draw());
  resize.observe(dom.el);
  const unbind = () => {
    resize.disconnect();
    for (const [event, listener] of Object.entries(events)) model.off(event, listener);
  };
  return { resize, unbind };
}
