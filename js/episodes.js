// gymview's episode widgets: the entry esbuild bundles into dist/episodes.js for anywidget. The player
// (episode.js) and the table of episodes (episode_list.js) share the bundle; the model's "_view" says
// which one it is.
import { renderPlayer } from "./episode.js";
import { renderList } from "./episode_list.js";

function render({ model, el }) {
  return model.get("_view") === "list" ? renderList({ model, el }) : renderPlayer({ model, el });
}

export default { render };
