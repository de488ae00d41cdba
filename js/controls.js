// The view's buttons, keys and replay slider: messages to the kernel with ids, and the answers.
import { cancelMessage, clickId, withId } from "./protocol.js";

// A click the kernel has not answered by then did not reach it: a cell blocks a kernel that cannot
// hear widgets meanwhile (ipykernel 6, or a front-end without comms over subshells).
export const CLICK_ANSWER_MS = 3000;
// Until then the click goes again this often, with its id: a message to the kernel is sometimes lost
// on the way (comms over a subshell), and the kernel applies each id once.
export const CLICK_RESEND_MS = 1000;
export const NOT_HEARD =
  "The kernel could not hear this click while the cell runs. Run the loop with " +
  "gymview.play(env, policy) or gymview.background(fn) and the buttons act at once.";

/** Clicks of one widget model: each sent with an id; the kernel's state message names those it heard. */
export class ControlChannel {
  /** @param {import("./protocol.js").Model} model @param {() => void} tell views to redraw */
  constructor(model, tell) {
    this.model = model;
    this.tell = tell;
    this.clicks = 0;
    /** @type {Map<string, any>} clicks sent and not answered yet -> their timer */
    this.pending = new Map();
    this.notice = "";
    /** The kernel's latest {type: "state"} message, or null before the first. */
    this.state = null;
    this.closed = false;
  }

  /** Send a control, key or replay message with a fresh id (null once closed: nothing is sent); a
   * button click expects an answer. */
  send(msg, expectAnswer = false, setTimer = setTimeout) {
    if (this.closed) return null;
    this.clicks += 1;
    const id = clickId(this.clicks);
    const message = withId(msg, id);
    this.model.send(message);
    if (expectAnswer) this.waitForAnswer(id, message, CLICK_ANSWER_MS, setTimer);
    return id;
  }

  /** Send `message` again every CLICK_RESEND_MS until the kernel answers it; unanswered after `left` ms, give up. */
  waitForAnswer(id, message, left, setTimer) {
    const wait = Math.min(CLICK_RESEND_MS, left);
    this.pending.set(id, setTimer(() => {
      if (!this.pending.has(id) || this.closed) return;
      if (left <= wait) {
        this.unanswered(id);
        return;
      }
      try {
        this.model.send(message);
      } catch {
        this.unanswered(id); // the comm closed meanwhile (a restarted kernel): nothing more goes
        return;
      }
      this.waitForAnswer(id, message, left - wait, setTimer);
    }, wait));
  }

  unanswered(id) {
    if (!this.pending.delete(id)) return;
    this.notice = NOT_HEARD;
    // When the kernel finally hears the click (the cell ended), it undoes it: a late Pause or Stop
    // must not hit the next run.
    try {
      this.send(cancelMessage(id));
    } catch {
      // the comm closed (a restarted kernel): no run is left to undo the click in
    }
    this.tell();
  }

  /** The kernel's state message: what the loop does now, and the clicks it heard. */
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
    else if (msg.message === "" && this.notice !== NOT_HEARD) this.notice = ""; // the kernel has nothing to say now
    else if (this.pending.size === 0 && this.notice === NOT_HEARD) this.notice = "";
  }

  /** Forget the clicks waiting for an answer and send nothing more (the widget is going away). */
  close() {
    this.closed = true;
    for (const timer of this.pending.values()) clearTimeout(timer);
    this.pending.clear();
  }
}
