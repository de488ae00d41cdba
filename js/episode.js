// The episode player (gymview.show_episode, gymview.compare): the videos side by side, the charts of
// the chosen step values under them, one slider that scrubs both, the values at the cursor as text,
// arrow keys to step a frame. Its model: "_videos" (one MP4 each, as bytes), "_episodes" ({label,
// start, count, columns} each: the episode's first frame in its video, its frames, its step table as
// columns), "fps", "frame", "values", "title".
import { COLOURS, chartable, drawCharts, frameAt, readout } from "./charts.js";
import { chartsContext, chipsFor, element, followModel, onPlayerKeys, playerControls } from "./player_parts.js";

/** The seconds into an episode's video at which its frame `index` shows (the middle of the frame). */
export function timeOf(episode, index, fps) {
  return (episode.start + Math.min(index, episode.count - 1) + 0.5) / fps;
}

/** The episode's frame a video shows at `seconds` (its presentation time). */
export function frameOf(episode, seconds, fps) {
  return Math.max(0, Math.min(episode.count - 1, Math.floor(seconds * fps + 1e-3) - episode.start));
}

function buildDom(el, episodes) {
  el.classList.add("gymview-episode");
  el.tabIndex = 0; // arrow keys step a frame once the player has focus
  const title = element("div", "gymview-title", el);
  const row = element("div", "gymview-episode-videos", el);
  const videos = episodes.map((episode, index) => {
    const figure = element("figure", "gymview-episode-figure", row);
    const video = element("video", "gymview-episode-video", figure);
    video.muted = true;
    video.playsInline = true;
    video.preload = "auto";
    if (episodes.length > 1) {
      const caption = element("figcaption", "", figure);
      caption.textContent = episode.label;
      caption.style.color = COLOURS[index % COLOURS.length];
    }
    return video;
  });
  return { el, title, videos, ...playerControls(el) };
}

/** Blob URLs of the model's videos (revoked by the returned function). */
function loadVideos(model, videos) {
  const urls = model.get("_videos").map((view) => URL.createObjectURL(new Blob([view], { type: "video/mp4" })));
  videos.forEach((video, index) => {
    video.src = urls[index];
  });
  return () => urls.forEach((url) => URL.revokeObjectURL(url));
}

/** The player's state: the frame shown, what is charted, and drawing them. */
class Player {
  constructor(model, dom) {
    this.model = model;
    this.dom = dom;
    this.episodes = model.get("_episodes");
    this.fps = model.get("fps");
    this.count = Math.max(...this.episodes.map((episode) => episode.count));
    this.frame = Math.min(model.get("frame"), this.count - 1);
    this.playing = false;
    this.unfollow = null; // stops listening for the end of the video a play follows
    dom.slider.max = String(this.count - 1);
  }

  get values() {
    return this.model.get("values");
  }

  /** Show frame `frame` everywhere; `seek`: move the videos there too (not while they play there). */
  show(frame, seek = true) {
    this.frame = Math.max(0, Math.min(this.count - 1, frame));
    const { el, slider, videos } = this.dom;
    slider.value = String(this.frame);
    if (seek) {
      this.episodes.forEach((episode, index) => {
        const time = timeOf(episode, this.frame, this.fps);
        if (Math.abs(videos[index].currentTime - time) > 1e-6) videos[index].currentTime = time;
      });
    }
    el.dataset.frame = String(this.frame);
    this.draw();
  }

  draw() {
    const { charts, readout: readouts, el } = this.dom;
    const names = this.values;
    const width = Math.max(320, this.dom.videos[0].parentElement.parentElement.clientWidth || 640);
    const context = chartsContext(charts, width, names.length);
    charts.hidden = names.length === 0;
    drawCharts(context, this.episodes, names, this.count, this.frame, width);
    el.dataset.cursorX = String(((this.frame + 0.5) / this.count) * width);
    readouts.replaceChildren(
      ...this.episodes.map((episode, index) => {
        const line = element("div", "gymview-readout-line");
        const local = Math.min(this.frame, episode.count - 1);
        line.textContent = (this.episodes.length > 1 ? `${episode.label}: ` : "") + readout(episode.columns, names, local);
        if (this.episodes.length > 1) line.style.color = COLOURS[index % COLOURS.length];
        return line;
      }),
    );
  }

  /** The chips that pick the charted values. */
  drawChips() {
    const chosen = new Set(this.values);
    const toggle = (name) => {
      this.model.set("values", chosen.has(name) ? this.values.filter((v) => v !== name) : [...this.values, name]);
      this.model.save_changes();
    };
    this.dom.chips.replaceChildren(...chipsFor(chartable(this.episodes), chosen, toggle));
  }

  /** Go to frame `frame`, and tell the kernel. */
  seek(frame) {
    this.show(frame);
    this.tellKernel();
  }

  /** The frame chosen here goes to the kernel (``player.frame``). */
  tellKernel() {
    if (this.model.get("frame") !== this.frame) {
      this.model.set("frame", this.frame);
      this.model.save_changes();
    }
  }

  pause() {
    this.playing = false;
    this.unfollow?.();
    this.unfollow = null;
    this.dom.play.textContent = "▶ Play";
    for (const video of this.dom.videos) video.pause();
    this.tellKernel();
  }

  play() {
    if (this.frame >= this.count - 1) this.show(0);
    this.playing = true;
    this.dom.play.textContent = "⏸ Pause";
    const driver = this.episodes.findIndex((episode) => episode.count === this.count);
    this.dom.videos.forEach((video, index) => {
      if (this.frame < this.episodes[index].count - 1) video.play().catch(() => {});
    });
    this.follow(driver);
  }

  /** While playing, the frame shown follows video `driver` (the longest episode's); the others keep up. */
  follow(driver) {
    const video = this.dom.videos[driver];
    const next = (_now, metadata) => {
      if (!this.playing) return;
      const frame = frameOf(this.episodes[driver], metadata ? metadata.mediaTime : video.currentTime, this.fps);
      this.keepUp(frame);
      this.show(frame, false);
      if (frame >= this.count - 1 || video.ended) this.pause();
      else schedule();
    };
    const schedule = () =>
      video.requestVideoFrameCallback ? video.requestVideoFrameCallback(next) : requestAnimationFrame(next);
    // A busy machine drops frames, and no frame callback comes for a frame never presented: the video's end
    // ends the play at its last frame all the same.
    const ended = () => next(0, undefined);
    video.addEventListener("ended", ended);
    this.unfollow = () => video.removeEventListener("ended", ended);
    schedule();
  }

  /** The other videos: paused at their episode's last frame, or moved back in step if they drift. */
  keepUp(frame) {
    this.episodes.forEach((episode, index) => {
      const video = this.dom.videos[index];
      if (frame >= episode.count - 1) {
        if (!video.paused) video.pause();
        return;
      }
      if (Math.abs(video.currentTime - timeOf(episode, frame, this.fps)) > 1.5 / this.fps) {
        video.currentTime = timeOf(episode, frame, this.fps);
      }
    });
  }
}

function bindInput(player) {
  const { el, slider, play, charts } = player.dom;
  slider.addEventListener("input", () => {
    if (player.playing) player.pause();
    player.show(Number(slider.value));
  });
  slider.addEventListener("change", () => player.tellKernel());
  play.addEventListener("click", () => (player.playing ? player.pause() : player.play()));
  const seekAt = (event) => {
    const box = charts.getBoundingClientRect();
    if (player.playing) player.pause();
    player.show(frameAt(event.clientX - box.left, player.count, box.width));
  };
  charts.addEventListener("pointerdown", (event) => {
    seekAt(event);
    const move = (moved) => seekAt(moved);
    const up = () => {
      window.removeEventListener("pointermove", move);
      window.removeEventListener("pointerup", up);
      player.tellKernel();
    };
    window.addEventListener("pointermove", move);
    window.addEventListener("pointerup", up);
  });
  return onPlayerKeys(el, player);
}

/** Render one player into `el`; returns its clean-up. */
export function renderPlayer({ model, el }) {
  const dom = buildDom(el, model.get("_episodes"));
  const player = new Player(model, dom);
  const unload = loadVideos(model, dom.videos);
  dom.videos.forEach((video) => video.addEventListener("loadedmetadata", () => player.show(player.frame)));
  const unbindKeys = bindInput(player);
  const { unbind } = followModel(model, dom, player);
  return () => {
    player.playing = false;
    unbind();
    unbindKeys();
    unload();
  };
}
