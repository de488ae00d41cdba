// scene3d.js (three.js) for a page's widgets: imported once per page from the text a kernel sends, and shared by
// the copies of each widget's module that anywidget loads (the live view's, the rollout player's).
import { addSceneModule } from "./scene.js";
import { moduleMessage } from "./protocol.js";

/** The page's one import of scene3d.js: { importing, arrived(module | null), imported: Promise<module | null> }. */
function pageScene3d() {
  const key = Symbol.for("gymview.scene3d");
  if (!globalThis[key]) {
    let arrived = () => {};
    const imported = new Promise((resolve) => {
      arrived = resolve;
    });
    globalThis[key] = { importing: false, arrived, imported };
  }
  return globalThis[key];
}

/** Resolves when this widget can draw MuJoCo scenes: each widget that needs them asks its kernel for
 * scene3d.js until one copy came. */
export function askForScene3d(model) {
  const shared = pageScene3d();
  if (!shared.importing) model.send(moduleMessage("mujoco"));
  return shared.imported.then((module) => module && addSceneModule("mujoco", module));
}

/** Import scene3d.js from the text a kernel sent (a Blob URL: the bundle resolves no import of its own). */
export function importScene3d(buffer) {
  const shared = pageScene3d();
  if (shared.importing) return;
  shared.importing = true;
  const url = URL.createObjectURL(new Blob([buffer], { type: "text/javascript" }));
  import(url)
    .then(shared.arrived)
    .catch((error) => {
      console.error("gymview: could not load the MuJoCo scene module", error);
      shared.arrived(null);
    })
    .finally(() => URL.revokeObjectURL(url));
}
