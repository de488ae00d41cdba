// Keyboard play in a view: key presses go to the kernel (gymview.play(keys=...)).
import { keyMessage } from "./protocol.js";

// Keys that keep their meaning during keyboard play, so focus is never trapped in the view: Tab moves
// focus on; Escape leaves keyboard play (the view lets go of focus) and the notebook gets it too.
export const PASSED_KEYS = new Set(["Tab", "Escape"]);

/** Keyboard play: while the `_keyboard` trait is on, the focused view sends key presses to the
 * kernel instead of the notebook's shortcuts (but PASSED_KEYS). Returns the unbinding. */
export function bindKeyboard(dom, model, stream, win = globalThis.window) {
  const { el, canvas } = dom;
  const keysDown = new Set();
  const onKey = (down) => (event) => {
    if (!model.get("_keyboard") || !el.contains(event.target)) return;
    if (PASSED_KEYS.has(event.key)) {
      if (down && event.key === "Escape") event.target.blur?.(); // the view (or its button) lets go of focus
      return;
    }
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
  win.addEventListener("keydown", onKeyDown, true);
  win.addEventListener("keyup", onKeyUp, true);
  el.addEventListener("blur", onBlur);
  canvas.addEventListener("mousedown", onMouseDown);
  return () => {
    win.removeEventListener("keydown", onKeyDown, true);
    win.removeEventListener("keyup", onKeyUp, true);
    el.removeEventListener("blur", onBlur);
    canvas.removeEventListener("mousedown", onMouseDown);
    model.off("change:_keyboard", showKeyboard);
  };
}
