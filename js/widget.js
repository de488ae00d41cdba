// gymview live view: the browser side of gymview.LiveView, the entry esbuild bundles into
// dist/widget.js (`npm run build`) for anywidget. The wire protocol is in protocol.js.
import { FrameStream } from "./stream.js";
import { bindControls, bindTraits, buildDom } from "./dom.js";
import { drawLoop } from "./draw.js";
import { bindKeyboard } from "./keyboard.js";
import { forgetScene, loadScene, missingModule } from "./scene.js";
import { isModule } from "./protocol.js";
import { askForScene3d, importScene3d } from "./scene3d_loader.js";
import { videoCodecs } from "./video.js";

// anywidget hands initialize() and each render() a different proxy of the same model, so the
// per-model state is found through the widget's "_stream_id" trait (a uuid set by the kernel).
/** @type {Map<string, FrameStream>} */
const streams = new Map();
/** @type {Promise<string[]> | null} what this browser decodes, asked once per page */
let codecs = null;
/** What this page decodes and draws, as its "ready" says: video codecs, and "webgl" where it can draw 3D
 * scenes (a page without WebGL gets MuJoCo frames as pictures). */
async function pageCodecs() {
  const video = await videoCodecs();
  let webgl = false;
  try {
    const canvas = typeof OffscreenCanvas === "undefined" ? document.createElement("canvas") : new OffscreenCanvas(1, 1);
    webgl = Boolean(canvas.getContext("webgl2") ?? canvas.getContext("webgl"));
  } catch {
    webgl = false;
  }
  return webgl ? [...video, "webgl"] : video;
}

function streamOf(model) {
  const key = model.get("_stream_id");
  let stream = streams.get(key);
  if (!stream) {
    codecs = codecs ?? pageCodecs();
    stream = new FrameStream(model, undefined, codecs);
    streams.set(key, stream);
  }
  return stream;
}

function initialize({ model }) {
  const stream = streamOf(model);
  const onCustom = (msg, buffers) => (isModule(msg, buffers) ? importScene3d(buffers[0]) : stream.onMessage(msg, buffers));
  model.on("msg:custom", onCustom);
  let shown = null; // the scene drawn now: forgotten when replaced or when the view closes
  const onScene = () => {
    const scene = stream.scene;
    if (shown !== null && shown !== scene) forgetScene(shown);
    shown = scene;
    if (scene === null) return;
    const loaded = missingModule(scene) === null ? Promise.resolve() : askForScene3d(model);
    loaded
      .then(() => loadScene(scene, () => stream.tell()))
      .then(() => stream.tell()) // frames waiting for it
      .catch((error) => console.error("gymview: could not load the scene's textures", error));
    stream.tell();
  };
  model.on("change:_scene", onScene);
  onScene();
  return () => {
    model.off("msg:custom", onCustom);
    model.off("change:_scene", onScene);
    if (shown !== null) forgetScene(shown);
    stream.close();
    streams.delete(model.get("_stream_id"));
  };
}

// Kernel states after which this view's loop is gone for good (the same model never comes back).
const KERNEL_ENDED = new Set(["restarting", "autorestarting", "dead"]);

/** Call `ended()` once the kernel behind the view restarts or dies, where the front-end tells
 * (JupyterLab and Notebook 7 give their widget manager a kernel connection); returns the unbinding. */
function watchKernel(model, ended) {
  const kernel = model.widget_manager?.kernel;
  const changed = kernel?.statusChanged;
  if (!changed || typeof changed.connect !== "function") return () => {};
  const onStatus = (_sender, status) => {
    if (KERNEL_ENDED.has(status)) ended();
  };
  changed.connect(onStatus);
  if (KERNEL_ENDED.has(kernel.status)) ended();
  return () => changed.disconnect(onStatus);
}

function render({ model, el }) {
  const stream = streamOf(model);
  const viewId = {};
  const dom = buildDom(el);
  const unbindTraits = bindTraits(dom, model);
  bindControls(dom, stream);
  const unbindKeyboard = bindKeyboard(dom, model, stream);
  const stopDrawing = drawLoop(dom, stream);

  const observer = new IntersectionObserver((entries) => {
    for (const entry of entries) stream.setVisible(viewId, entry.isIntersecting);
  });
  observer.observe(el);
  const onPageVisibility = () => stream.setVisible(viewId, stream.visibleViews.has(viewId));
  document.addEventListener("visibilitychange", onPageVisibility);
  const unwatchKernel = watchKernel(model, () => stream.setKernelGone(true));
  stream.announce();

  return () => {
    stopDrawing();
    unwatchKernel();
    observer.disconnect();
    document.removeEventListener("visibilitychange", onPageVisibility);
    unbindKeyboard();
    unbindTraits();
    stream.setVisible(viewId, false);
  };
}

export default { initialize, render };
