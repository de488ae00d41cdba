"""The evolution panel: a fitness chart and the champion's network as small SVGs (no matplotlib, no
graphviz), and the champion playing at the env's real speed in a live view while evolution goes on."""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from typing import Any

_WIDTH, _HEIGHT, _PAD = 340, 190, 30


def fitness_chart_svg(history: Sequence[dict[str, float]]) -> str:
    """Draw the best and mean fitness per generation, with a band of one stdev around the mean.

    A small SVG (no matplotlib needed): best in red, mean in blue, the range of fitness and of
    generations written on the axes.

    Args:
        history: One row per generation, each a dict with ``generation``, ``best``, ``mean`` and
            ``stdev``, as in ``EvolutionResult.history``; empty gives an empty chart.

    Returns:
        The SVG markup; ``IPython.display.SVG`` or ``HTML`` shows it in a notebook.

    Examples:
        >>> svg = fitness_chart_svg([{"generation": 0, "best": 20.0, "mean": 10.0, "stdev": 4.0},
        ...                          {"generation": 1, "best": 60.0, "mean": 25.0, "stdev": 9.0}])
        >>> svg.startswith("<svg") and svg.count("<polyline") == 2
        True
    """
    if not history:
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{_WIDTH}" height="{_HEIGHT}" role="img" '
            'aria-label="Fitness"></svg>'
        )
    generations = [row["generation"] for row in history]
    lows = [row["mean"] - row["stdev"] for row in history]
    highs = [row["mean"] + row["stdev"] for row in history]
    best = [row["best"] for row in history]
    bottom = min(*lows, *best)
    top = max(*highs, *best)
    if top - bottom < 1e-9:
        top, bottom = top + 1, bottom - 1
    first, last = generations[0], max(generations[-1], generations[0] + 1)

    def x(generation: float) -> float:
        return _PAD + (generation - first) / (last - first) * (_WIDTH - 2 * _PAD)

    def y(value: float) -> float:
        return _HEIGHT - _PAD + (bottom - value) / (top - bottom) * (_HEIGHT - 2 * _PAD)

    def points(values: Sequence[float]) -> str:
        return " ".join(f"{x(g):.1f},{y(v):.1f}" for g, v in zip(generations, values))

    band = points(highs) + " " + " ".join(f"{x(g):.1f},{y(v):.1f}" for g, v in reversed(list(zip(generations, lows))))
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_WIDTH}" height="{_HEIGHT}" role="img" '
        f'aria-label="Fitness per generation" font-family="sans-serif" font-size="10">'
        f'<polygon points="{band}" fill="#1f77b4" fill-opacity="0.15"/>'
        f'<polyline points="{points([row["mean"] for row in history])}" fill="none" stroke="#1f77b4" '
        'stroke-width="1.5"/>'
        f'<polyline points="{points(best)}" fill="none" stroke="#d62728" stroke-width="2"/>'
        f'<line x1="{_PAD}" y1="{_HEIGHT - _PAD}" x2="{_WIDTH - _PAD}" y2="{_HEIGHT - _PAD}" stroke="#888"/>'
        f'<line x1="{_PAD}" y1="{_PAD}" x2="{_PAD}" y2="{_HEIGHT - _PAD}" stroke="#888"/>'
        f'<text x="{_PAD}" y="{_PAD - 8}" fill="#333">{top:.4g}</text>'
        f'<text x="{_PAD}" y="{_HEIGHT - 8}" fill="#333">{bottom:.4g} · generation {first}..{generations[-1]}</text>'
        f'<text x="{_WIDTH - _PAD}" y="{_PAD - 8}" text-anchor="end" fill="#d62728">best {best[-1]:.4g}</text>'
        f'<text x="{_WIDTH - _PAD}" y="{_PAD + 4}" text-anchor="end" fill="#1f77b4">mean ± stdev</text>'
        "</svg>"
    )


def network_svg(
    genome: Any, config: Any, input_names: Sequence[str] | None = None, output_names: Sequence[str] | None = None
) -> str:
    """Draw the genome's network as a small SVG (no graphviz needed).

    Inputs are on the left, outputs on the right and hidden nodes between them by depth. Only
    enabled connections are drawn: blue for positive weights and red for negative, thicker for
    larger ones, each weight shown on hover.

    Args:
        genome: A neat genome.
        config: The ``neat.Config`` it was evolved with (for its input and output keys).
        input_names: Labels for the inputs, in order (None: their node keys).
        output_names: Labels for the outputs, in order (None: their node keys).

    Returns:
        The SVG markup; ``IPython.display.SVG`` or ``HTML`` shows it in a notebook.

    Examples:
        >>> import gymview.neat as gn
        >>> config = gn.config_for("CartPole-v1", pop_size=10)
        >>> import neat
        >>> genome = next(iter(neat.Population(config, seed=0).population.values()))
        >>> network_svg(genome, config).count("<circle")
        6
        >>> "cart velocity" in network_svg(genome, config, input_names=["cart position", "cart velocity"])
        True
    """
    inputs = list(config.genome_config.input_keys)
    outputs = list(config.genome_config.output_keys)
    hidden = [key for key in genome.nodes if key not in outputs]
    edges = [(a, b, gene.weight) for (a, b), gene in genome.connections.items() if gene.enabled]
    depth = {key: 0 for key in inputs}
    for _ in range(len(hidden) + 1):  # longest path from the inputs; cycles (recurrent nets) stop here
        for a, b, _ in edges:
            if a in depth and b in hidden and depth.get(b, -1) < depth[a] + 1 <= len(hidden):
                depth[b] = depth[a] + 1
    columns = max([depth.get(key, 1) for key in hidden] + [0]) + 2
    for key in hidden:
        depth.setdefault(key, 1)
    for key in outputs:
        depth[key] = columns - 1
    layers: dict[int, list[int]] = {}
    for key in inputs + sorted(hidden) + outputs:
        layers.setdefault(depth[key], []).append(key)
    position = {}
    for column, keys in layers.items():
        for row, key in enumerate(keys):
            position[key] = (
                _PAD + column / max(1, columns - 1) * (_WIDTH - 2 * _PAD),
                _PAD + (row + 0.5) / len(keys) * (_HEIGHT - 2 * _PAD),
            )
    heaviest = max([abs(w) for _, _, w in edges] + [1e-9])
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_WIDTH}" height="{_HEIGHT}" role="img" '
        f'aria-label="Champion network" font-family="sans-serif" font-size="9">'
    ]
    for a, b, weight in edges:
        if a in position and b in position:
            (x1, y1), (x2, y2) = position[a], position[b]
            color = "#1f77b4" if weight >= 0 else "#d62728"
            width = 0.5 + 3.0 * abs(weight) / heaviest
            parts.append(
                f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{color}" '
                f'stroke-width="{width:.2f}" stroke-opacity="0.7"><title>{weight:+.3f}</title></line>'
            )
    names = {**dict(zip(inputs, input_names or [])), **dict(zip(outputs, output_names or []))}
    for key, (cx, cy) in position.items():
        fill = "#ddd" if key in inputs else "#ffd27f" if key in outputs else "#fff"
        parts.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="7" fill="{fill}" stroke="#333"/>')
        label = html.escape(names.get(key, str(key)))
        anchor, dx = ("end", -10) if key in inputs else ("start", 10)
        if key in inputs or key in outputs:
            parts.append(f'<text x="{cx + dx:.1f}" y="{cy + 3:.1f}" text-anchor="{anchor}">{label}</text>')
    parts.append("</svg>")
    return "".join(parts)


class _Champion:
    """The policy the replay plays: the best genome so far, replaced as evolution finds better ones."""

    def __init__(self, policy: Callable[[Any], Any]) -> None:
        self.policy = policy

    def __call__(self, observation: Any) -> Any:
        return self.policy(observation)


class EvolutionPanel:
    """The panel ``evolve`` shows in a notebook, updated after each generation.

    It holds a line of numbers, the fitness chart and the champion's network, and below them the
    champion playing at the env's real speed in a live view (``gymview.play``) while evolution goes
    on. It displays itself when made (outside a notebook, as the widget's text).

    Args:
        title: The panel's heading, e.g. ``"NEAT on CartPole-v1"``.
        make_watched_env: A function that makes an env rendering ``rgb_array`` frames for the champion
            to play in (None: no replay; the panel says how to get one).

    Examples:
        >>> import gymview.neat as gn, neat
        >>> panel = EvolutionPanel("NEAT on CartPole-v1", None)
        HTML(value='<b>NEAT on CartPole-v1</b>: starting')
        >>> config = gn.config_for("CartPole-v1", pop_size=10)
        >>> genome = next(iter(neat.Population(config, seed=0).population.values()))
        >>> genome.fitness = 20.0
        >>> row = {"generation": 0, "best": 20.0, "mean": 10.0, "stdev": 4.0, "species": 1, "seconds": 0.1}
        >>> panel.update([row], genome, config, policy=None, done=True)
        >>> "finished" in panel.html.value, panel.run
        (True, None)
        >>> panel.close()
    """

    def __init__(self, title: str, make_watched_env: Callable[[], Any] | None) -> None:
        import ipywidgets
        from IPython.display import display

        self.title = title
        self.html = ipywidgets.HTML(f"<b>{html.escape(title)}</b>: starting")
        display(self.html)
        self._make_watched_env = make_watched_env
        self._env: Any = None
        self._run: Any = None
        self._playing: tuple[int, float] | None = None
        self._champion: _Champion | None = None
        self.note = (
            ""
            if make_watched_env is not None
            else ("(make the env with render_mode='rgb_array' to see the champion play)")
        )

    def update(
        self, history: Sequence[dict[str, float]], champion: Any, config: Any, policy: Any, done: bool = False
    ) -> None:
        """Show the latest generation, and let the champion play.

        A new champion takes over the replay at its next step. When ``done``, the final champion plays
        three episodes and stops by itself. A replay that fails is reported in the panel's line and
        never ends evolution.

        Args:
            history: One row per generation so far, as in ``EvolutionResult.history``.
            champion: The best genome so far (with its ``fitness``).
            config: The ``neat.Config`` of the run.
            policy: The champion as ``policy(observation) -> action``, e.g. a ``GenomePolicy``
                (unused without ``make_watched_env``).
            done: Whether evolution has finished.
        """
        row = history[-1]
        state = "finished" if done else "evolving"
        self.html.value = (
            f"<div><b>{html.escape(self.title)}</b> · {state} · generation {row['generation']} · "
            f"best {row['best']:.4g} · mean {row['mean']:.4g} · {row['species']} species · "
            f"{row['seconds']:.1f} s {html.escape(self.note)}</div>"
            f'<div style="display:flex;gap:12px;flex-wrap:wrap">{fitness_chart_svg(history)}'
            f"{network_svg(champion, config)}</div>"
        )
        key = (champion.key, float(champion.fitness))
        if self._make_watched_env is None:
            return
        if done:  # the final champion plays a few episodes and stops by itself
            self._play(policy, episodes=3)
        elif key != self._playing:
            if self._run is None or self._run.done or self._champion is None:
                self._champion = _Champion(policy)
                self._play(self._champion, episodes=None)
            else:  # swapped in at the next step: restarting the run cost evolution a quarter of its speed
                self._champion.policy = policy
        self._playing = key

    def _play(self, policy: Any, episodes: int | None) -> None:
        from gymview.playback import play

        self._stop_run()
        if self._env is None:
            assert self._make_watched_env is not None  # update() plays only with one
            self._env = self._make_watched_env()
        self._run = play(self._env, policy, episodes=episodes, speed=1.0)

    def _stop_run(self) -> None:
        run, self._run = self._run, None
        if run is not None:
            run.stop()
            try:
                run.wait(timeout=30)
            except Exception as error:
                self.note = f"(the champion's replay failed: {type(error).__name__}: {error})"

    @property
    def run(self) -> Any:
        """The champion's replay, a ``gymview.Run`` (None before the first generation ends, or without replay)."""
        return self._run

    def close(self) -> None:
        """Stop the champion's replay and close its env; the panel's last picture stays."""
        self._stop_run()
        env, self._env = self._env, None
        if env is not None:
            env.close()
