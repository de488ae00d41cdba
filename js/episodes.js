// gymview's episode widgets: the entry esbuild bundles into dist/episodes.js for anywidget. The episode player
// (episode.js), the table of episodes (episode_list.js) and the rollout player (rollout.js) share the bundle; the
// model's "_view" says which one it is.
import { renderPlayer } from "./episode.js";
import { renderList } from "./episode_list.js";
import { isModule } from "./protocol.js";
import { renderRollout } from "./rollout.js";
import { askForScene3d, importScene3d } from "./scene3d_loader.js";

function rollout({ model, el }) {
  const onCustom = (msg, buffers) => isModule(msg, buffers) && importScene3d(buffers[0]);
  model.on("msg:custom", onCustom);
  const close = renderRollout({ model, el }, () => askForScene3d(model));
  return () => {
    model.off("msg:custom", onCustom);
    close();
  };
}

function render({ model, el }) {
  const view = model.get("_view");
  if (view === "rollout") return rollout({ model, el });
  return view === "list" ? renderList({ model, el }) : renderPlayer({ model, el });
}

export default { render };
