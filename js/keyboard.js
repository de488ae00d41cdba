// Keyboard play in a view: key presses go to the kernel (gymview.play(keys=...)).
import { keyMessage } from "./protocol.js";

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
