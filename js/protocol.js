// gymview live view: the wire protocol between gymview.live (kernel) and this front-end.
//
// Protocol (mirrors gymview/live/protocol.py; bump PROTOCOL_VERSION in both places together):
//   kernel → browser, custom message + one binary buffer holding the image:
//     {type: "frame", v: 2, seq, format: "jpeg" | "png" | "h264" | "scene", width, height,
//      step, episode, episode_return, dropped, acked, agent, returns, row, key?, codec?, scene?}
//     format "scene": the buffer is the state the page draws (little-endian float32), with the scene
//     whose id the header's "scene" names: the widget's "_scene" trait (scene.js draws it).
//     format "h264": the buffer is one access unit (Annex B) of a continuous stream; key: a key frame
//     (with its SPS and PPS), codec: the stream's WebCodecs codec string. Every such frame is decoded,
//     in order, from a key frame on (video.js).
//     agent (the agent to move next) and returns ({agent: running return}) come from multi-agent
//     envs (PettingZoo); null otherwise.
//     row numbers the frame's step among the steps kept for the replay's charts (null: none kept).
//     seq counts frames sent by the view, from 0 and without gaps; acked is the newest ack the
//     kernel has read (when it stays behind the acks sent, the kernel cannot read acks now: send
//     them rarely).
//   browser → kernel (client identifies this page; one kernel may serve several):
//     {type: "ready", v: 2, client, codecs}       a view was rendered; the kernel resends its latest frame (an
//                                                 image) and its state (sent again until a state message comes:
//                                                 READY_TRIES); codecs: the video codecs this page decodes,
//                                                 and "webgl" where it draws 3D scenes
//     {type: "keyframe", client}                  this page cannot decode the stream from here: send a key frame
//     {type: "ack", seq}                           frames up to seq were drawn (at most one per ACK_PERIOD_MS)
//     {type: "visibility", visible: boolean, client}  whether this page shows a view of the widget
//     {type: "control", action: "pause" | "play" | "step" | "stop" | "speed", value?, id}   a button
//     {type: "control", action: "cancel", of: id, id}   a click that got no answer (see CLICK_ANSWER_MS)
//     {type: "key", key, down, id}                 a key went down / up while the view has focus
//     {type: "replay", index, id}                  show the index-th kept frame (oldest first)
//     {type: "module", name: "mujoco"}             a scene needs a module this page lacks (scene3d.js): send it
//     {type: "steps", id}                          the replay's charts: send the steps the kept frames span
//     {type: "stop"}                               a background job's Stop button (job_status.js, its own widget)
//   kernel → browser, besides frames:
//     {type: "state", state: "running" | "paused" | "stopped", speed: number | null, fps: number | null,
//      speeds: number[], history: number, heard: string[], message: string}  ("": no line to show)
//     heard: ids of the latest clicks the kernel applied; a frame with `replay: index` is a kept frame
//     shown again, not a new one.
//     {type: "module", name: "mujoco"} + one buffer: the module's JavaScript, to a page that asked for it
//     {type: "steps", first, stride, columns: {name: values}, frames: (number | null)[], rows: (object | null)[]}
//     the steps the kept frames span (every stride-th, numbered from first), each kept frame's step
//     number and row: the charts under the replay (replay_charts.js).

export const PROTOCOL_VERSION = 2;

export const MIME = { jpeg: "image/jpeg", png: "image/png" };

/** One id per page, so the kernel can tell two tabs (or collaborators) apart. */
export const CLIENT_ID = Math.random().toString(36).slice(2, 10);

/**
 * @typedef {{type: "frame", v: number, seq: number, format: "jpeg" | "png", width: number,
 *   height: number, step: number | null, episode: number | null, episode_return: number | null,
 *   dropped: number, acked: number, agent?: string | null,
 *   returns?: Object<string, number> | null}} FrameHeader
 * @typedef {{header: FrameHeader, bitmap: ImageBitmap}} DecodedFrame
 * @typedef {{on: Function, off: Function, send: Function, get: Function}} Model
 */

// What the browser sends. Clicks, keys and replay requests carry an id (clickId: this page's nth),
// so the kernel applies each once however many times it hears it.
export const readyMessage = (codecs = []) => ({ type: "ready", v: PROTOCOL_VERSION, client: CLIENT_ID, codecs });
export const keyFrameMessage = () => ({ type: "keyframe", client: CLIENT_ID });
export const ackMessage = (seq) => ({ type: "ack", seq, client: CLIENT_ID });
export const visibilityMessage = (visible) => ({ type: "visibility", visible, client: CLIENT_ID });
export const controlMessage = (action, value) =>
  value === undefined ? { type: "control", action } : { type: "control", action, value };
export const cancelMessage = (id) => ({ type: "control", action: "cancel", of: id });
export const keyMessage = (key, down) => ({ type: "key", key, down });
export const replayMessage = (index) => ({ type: "replay", index });
export const moduleMessage = (name) => ({ type: "module", name });
export const stepsMessage = () => ({ type: "steps" });
export const jobStopMessage = () => ({ type: "stop" });
export const clickId = (count) => `${CLIENT_ID}:${count}`;
export const withId = (msg, id) => ({ ...msg, id });

// What the kernel sends.
export const isState = (msg) => Boolean(msg) && msg.type === "state";
export const isSteps = (msg) => Boolean(msg) && msg.type === "steps";
export const isFrame = (msg, buffers) => Boolean(msg) && msg.type === "frame" && Boolean(buffers) && buffers.length >= 1;
export const isModule = (msg, buffers) => Boolean(msg) && msg.type === "module" && Boolean(buffers) && buffers.length === 1;
export const isReplay = (msg) => msg.replay !== undefined && msg.replay !== null;
export const isVideo = (msg) => msg.format === "h264";
export const isScene = (msg) => msg.format === "scene";

/** A scene frame's state: the buffer's little-endian float32 numbers, copied. */
export function stateOf(buffer) {
  const state = new Float32Array(buffer.byteLength / 4);
  new Uint8Array(state.buffer).set(new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength));
  return state;
}

/** The image of a frame message as a Blob of its format. */
export function imageOf(msg, buffer) {
  const bytes = new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  return new Blob([bytes], { type: MIME[msg.format] || MIME.jpeg });
}
