// What the view writes under the picture: the status line, the drawing rate, the speed choices.

// The status line once the kernel behind the view restarted or stopped: its loop is gone.
export const KERNEL_GONE = "kernel restarted or stopped: run the cell again";

// The state a view of a run elsewhere (gymview.attach) shows while no run is attached: its buttons are off.
export const ENDED = "ended";

/** Which buttons are off in loop state `state` ("running", "paused", "stopped" or "ended"). */
export function buttonsOff(state) {
  const ended = state === ENDED;
  return {
    pause: ended || state === "paused",
    play: ended || state === "running",
    step: ended,
    stop: ended,
    speed: ended,
  };
}

// A multi-agent status line names at most this many agents' returns, then "+N more".
export const RETURNS_SHOWN = 6;

/** "returns player_0 1.0, player_1 -1.0" (the first RETURNS_SHOWN agents, then "+N more"). */
export function returnsText(returns) {
  const entries = Object.entries(returns);
  const shown = entries.slice(0, RETURNS_SHOWN).map(([agent, value]) => `${agent} ${Number(value).toFixed(1)}`);
  if (entries.length > RETURNS_SHOWN) shown.push(`+${entries.length - RETURNS_SHOWN} more`);
  return `returns ${shown.join(", ")}`;
}

// Counts with thousands separators: one formatter for every call (toLocaleString makes one each time).
const COUNT = new Intl.NumberFormat("en-US");

/** "paused · 12.3 fps · step 1,234 · episode 5 · return 37.0 · dropped 456"; for a multi-agent env
 * "... · episode 5 · player_1 to move · returns player_0 1.0, player_1 -1.0 · dropped 456". */
export function statusText(header, fps, state = null) {
  const parts = state ? [state, `${fps.toFixed(1)} fps`] : [`${fps.toFixed(1)} fps`];
  const number = (x) => COUNT.format(Number(x));
  if (header.step !== null && header.step !== undefined) parts.push(`step ${number(header.step)}`);
  if (header.episode !== null && header.episode !== undefined) parts.push(`episode ${number(header.episode)}`);
  if (header.episode_return !== null && header.episode_return !== undefined) {
    parts.push(`return ${Number(header.episode_return).toFixed(1)}`);
  }
  if (header.agent !== null && header.agent !== undefined) parts.push(`${header.agent} to move`);
  if (header.returns !== null && header.returns !== undefined) parts.push(returnsText(header.returns));
  parts.push(`dropped ${number(header.dropped)}`);
  return parts.join(" · ");
}

// While frames stream, the status line is rewritten at most this often: each rewrite costs the page a
// layout and a paint, a large share of its time per frame (docs/performance-log.md).
export const STATUS_PERIOD_MS = 250;

/** A view's status line: text under a new label (a loop state such as "paused", a replay position,
 * the kernel gone) shows at once; new numbers under the same label at most once per STATUS_PERIOD_MS,
 * and the last of them always. */
export class StatusLine {
  /**
   * @param {{textContent: string}} element
   * @param {() => number} clock milliseconds (performance.now)
   */
  constructor(element, clock = () => performance.now(), setTimer = (f, ms) => setTimeout(f, ms),
    clearTimer = (id) => clearTimeout(id)) {
    this.element = element;
    this.clock = clock;
    this.setTimer = setTimer;
    this.clearTimer = clearTimer;
    this.label = undefined;
    this.wanted = element.textContent;
    this.writtenAt = -Infinity;
    this.timer = null;
  }

  /** @param {string} text @param {string | null} label */
  show(text, label) {
    this.wanted = text;
    const now = this.clock();
    if (label !== this.label || now - this.writtenAt >= STATUS_PERIOD_MS) {
      this.label = label;
      this.write(now);
    } else if (this.timer === null) {
      this.timer = this.setTimer(() => {
        this.timer = null;
        this.write(this.clock());
      }, this.writtenAt + STATUS_PERIOD_MS - now);
    }
  }

  write(now) {
    this.close();
    if (this.element.textContent !== this.wanted) this.element.textContent = this.wanted;
    this.writtenAt = now;
  }

  /** No later write: the view is going away. */
  close() {
    if (this.timer !== null) this.clearTimer(this.timer);
    this.timer = null;
  }
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

/** "x1 (50 fps)" for a speed option; "max" for null. */
export function speedLabel(speed, fps) {
  if (speed === null || speed === undefined) return "max";
  return fps ? `x${speed} (${Number((fps * speed).toFixed(1))} fps)` : `x${speed}`;
}
