// The keys a player answers (the episode player's and the rollout player's), taken on the window in the capture
// phase when the player has focus: Notebook 7 swallows some keys, arrows among them, before they reach the focused
// element (as js/keyboard.js takes the live view's).

/** Call `handle(event)` for each key pressed while focus is inside `el`; `handle` returns true for a key it used
 * (kept from the notebook). Returns the unbinding. */
export function onPlayerKeys(el, handle, win = globalThis.window) {
  const onKeyDown = (event) => {
    if (!el.contains(event.target) || !handle(event)) return;
    event.preventDefault();
    event.stopPropagation(); // not the notebook's: arrow keys would move between cells
  };
  win.addEventListener("keydown", onKeyDown, true);
  return () => win.removeEventListener("keydown", onKeyDown, true);
}
