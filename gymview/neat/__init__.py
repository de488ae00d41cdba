"""Neuroevolution (NEAT) in notebooks: configs that match the env, parallel evolution from notebook
cells under any start method, a live panel, and the champion to video.

neat-python is imported when first used (``pip install "gymview[neat]"``).

Examples:
    >>> import gymview.neat as gn
    >>> gn.config_for("CartPole-v1").genome_config.num_inputs
    4
"""

from typing import TYPE_CHECKING

from gymview._internal.lazy import lazy_exports

_EXPORTS = {
    "DEFAULTS": ".config",
    "EvolutionPanel": ".panel",
    "EvolutionResult": ".evolution",
    "FitnessError": "gymview.errors",
    "GenomePolicy": ".policy",
    "config_for": ".config",
    "evolve": ".evolution",
    "fitness_chart_svg": ".panel",
    "load_config": ".config",
    "network_svg": ".panel",
    "record": ".evolution",
    "spaces_of": ".config",
}

__all__ = list(_EXPORTS)

if TYPE_CHECKING:  # what editors and the API reference see; at run time each name is imported on first use
    from gymview.errors import FitnessError
    from gymview.neat.config import DEFAULTS, config_for, load_config, spaces_of
    from gymview.neat.evolution import EvolutionResult, evolve, record
    from gymview.neat.panel import EvolutionPanel, fitness_chart_svg, network_svg
    from gymview.neat.policy import GenomePolicy

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
