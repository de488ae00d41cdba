"""neat-python configs that match an env: inputs and outputs from its spaces, defaults that solve
CartPole, overrides checked by name, and older config files told exactly what to add."""

from __future__ import annotations

import configparser
import difflib
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from gymview.neat._neat import neat_module

DEFAULTS: dict[str, dict[str, str]] = {
    "NEAT": {
        "fitness_criterion": "max",
        "fitness_threshold": "inf",
        "pop_size": "150",
        "reset_on_extinction": "True",
        "no_fitness_termination": "False",
    },
    "DefaultGenome": {
        "num_inputs": "1",
        "num_outputs": "1",
        "num_hidden": "0",
        "feed_forward": "True",
        "initial_connection": "full_direct",
        "single_structural_mutation": "False",
        "structural_mutation_surer": "default",
        "compatibility_disjoint_coefficient": "1.0",
        "compatibility_weight_coefficient": "0.5",
        "conn_add_prob": "0.5",
        "conn_delete_prob": "0.5",
        "node_add_prob": "0.2",
        "node_delete_prob": "0.2",
        "activation_default": "tanh",
        "activation_mutate_rate": "0.0",
        "activation_options": "tanh",
        "aggregation_default": "sum",
        "aggregation_mutate_rate": "0.0",
        "aggregation_options": "sum",
        "bias_init_mean": "0.0",
        "bias_init_stdev": "1.0",
        "bias_init_type": "gaussian",
        "bias_max_value": "30.0",
        "bias_min_value": "-30.0",
        "bias_mutate_power": "0.5",
        "bias_mutate_rate": "0.7",
        "bias_replace_rate": "0.1",
        "response_init_mean": "1.0",
        "response_init_stdev": "0.0",
        "response_init_type": "gaussian",
        "response_max_value": "30.0",
        "response_min_value": "-30.0",
        "response_mutate_power": "0.0",
        "response_mutate_rate": "0.0",
        "response_replace_rate": "0.0",
        "weight_init_mean": "0.0",
        "weight_init_stdev": "1.0",
        "weight_init_type": "gaussian",
        "weight_max_value": "30",
        "weight_min_value": "-30",
        "weight_mutate_power": "0.5",
        "weight_mutate_rate": "0.8",
        "weight_replace_rate": "0.1",
        "enabled_default": "True",
        "enabled_mutate_rate": "0.01",
        "enabled_rate_to_true_add": "0.0",
        "enabled_rate_to_false_add": "0.0",
        # time constants are read by continuous-time (CTRNN) networks only
        "time_constant_init_mean": "1.0",
        "time_constant_init_stdev": "0.0",
        "time_constant_init_type": "gaussian",
        "time_constant_max_value": "10.0",
        "time_constant_min_value": "0.01",
        "time_constant_mutate_power": "0.0",
        "time_constant_mutate_rate": "0.0",
        "time_constant_replace_rate": "0.0",
    },
    "DefaultSpeciesSet": {"compatibility_threshold": "3.0"},
    "DefaultStagnation": {"species_fitness_func": "max", "max_stagnation": "20", "species_elitism": "2"},
    "DefaultReproduction": {"elitism": "2", "survival_threshold": "0.2", "min_species_size": "2"},
}
"""Every setting neat-python 2 reads, by config-file section, as the strings the file holds.

The values evolve CartPole-v1 to its cap in a few generations. ``config_for`` starts from them and
sets ``num_inputs``, ``num_outputs`` and ``feed_forward`` from the env and its arguments, ``pop_size``
from its argument and ``fitness_threshold`` from the env's ``spec.reward_threshold``; any other key
can be overridden by name (``config_for(env, max_stagnation=10)``). ``load_config`` shows these values
for the lines an older config file lacks.
"""


@dataclass(frozen=True)
class SpaceMapping:
    """How a network meets an env: inputs from observations, actions from outputs.

    ``spaces_of`` makes one from an env.

    Args:
        inputs: The network's number of inputs.
        outputs: The network's number of outputs.
        observation: ``"box"`` (observations flattened) or ``"discrete"`` (one-hot).
        action: ``"discrete"`` (the argmax of one output per action) or ``"box"`` (tanh outputs
            scaled to the action space's bounds).

    Examples:
        >>> SpaceMapping(inputs=4, outputs=2, observation="box", action="discrete").outputs
        2
    """

    inputs: int
    outputs: int
    observation: str  # "box" (flattened) or "discrete" (one-hot)
    action: str  # "discrete" (argmax of the outputs) or "box" (tanh outputs scaled to the bounds)


def spaces_of(env: gym.Env) -> SpaceMapping:
    """Give the network shape that ``env`` needs.

    Box observations are flattened (one input per value) and Discrete ones one-hot (one input per
    value); Discrete actions take one output each (the action is their argmax) and Box actions one
    output per value (tanh outputs scaled to the bounds).

    Args:
        env: A Gymnasium env (only its spaces are read).

    Returns:
        A ``SpaceMapping`` with the number of inputs and outputs and how observations and actions map to them.

    Raises:
        TypeError: When the observations are not Box or Discrete (wrap the env, e.g. with
            ``gymnasium.wrappers.FlattenObservation``), or the actions are not Discrete or Box.
        ValueError: When Box actions have infinite bounds (tanh outputs cannot be scaled to them).

    Examples:
        >>> spaces_of(gym.make("CartPole-v1"))
        SpaceMapping(inputs=4, outputs=2, observation='box', action='discrete')
    """
    observation, action = env.observation_space, env.action_space
    if isinstance(observation, gym.spaces.Box):
        inputs, observation_kind = int(np.prod(observation.shape)), "box"
    elif isinstance(observation, gym.spaces.Discrete):
        inputs, observation_kind = int(observation.n), "discrete"
    else:
        raise TypeError(
            f"NEAT networks take Box or Discrete observations; this env's are {observation}. "
            f"Wrap the env, e.g. gymnasium.wrappers.FlattenObservation(env)"
        )
    if isinstance(action, gym.spaces.Discrete):
        outputs, action_kind = int(action.n), "discrete"
    elif isinstance(action, gym.spaces.Box):
        if not (np.all(np.isfinite(action.low)) and np.all(np.isfinite(action.high))):
            raise ValueError(f"Box actions need finite bounds to scale the network's tanh outputs to; got {action}")
        outputs, action_kind = int(np.prod(action.shape)), "box"
    else:
        raise TypeError(f"NEAT networks give Discrete or Box actions; this env's are {action}")
    return SpaceMapping(inputs, outputs, observation_kind, action_kind)


def make_env_from(env_or_id: gym.Env | str | Callable[[], gym.Env]) -> tuple[gym.Env, bool]:
    """Give an env for an env, an env id or a function that makes the env.

    Args:
        env_or_id: A Gymnasium env (returned as is), an env id or a function that makes the env.

    Returns:
        ``(env, made_here)``, where ``made_here`` is True when the env was made here (from an id or a
            function), and then the caller closes it.

    Raises:
        TypeError: When ``env_or_id`` is none of these, or the function returns something other than a
            Gymnasium env.

    Examples:
        >>> env, made_here = make_env_from("CartPole-v1")
        >>> made_here
        True
        >>> env.close()
    """
    if isinstance(env_or_id, gym.Env):
        return env_or_id, False
    if isinstance(env_or_id, str):
        return gym.make(env_or_id), True
    if callable(env_or_id):
        env = env_or_id()
        if not isinstance(env, gym.Env):
            raise TypeError(f"the env factory returned {type(env).__name__}, not a gymnasium env")
        return env, True
    raise TypeError(
        f"expected a gymnasium env, an env id or a function that makes the env; got {type(env_or_id).__name__}"
    )


def _section_of(name: str) -> str:
    sections = [section for section, keys in DEFAULTS.items() if name in keys]
    if not sections:
        known = [key for keys in DEFAULTS.values() for key in keys]
        close = difflib.get_close_matches(name, known, n=3)
        hint = f"; did you mean {' or '.join(close)}?" if close else ""
        raise TypeError(f"{name!r} is not a neat-python setting{hint} (gymview.neat.DEFAULTS lists them all)")
    return sections[0]


def _text(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return " ".join(map(str, value))
    return str(value)


def config_for(
    env_or_id: gym.Env | str | Callable[[], gym.Env],
    pop_size: int = 150,
    recurrent: bool = False,
    path: str | os.PathLike[str] | None = None,
    **overrides: Any,
) -> Any:
    """Make a ``neat.Config`` whose inputs and outputs fit the env's spaces.

    Box observations are flattened, Discrete ones one-hot; Discrete actions are the argmax of one
    output per action, Box actions are tanh outputs scaled to the bounds (see ``spaces_of``). The
    other settings start from ``DEFAULTS``. ``fitness_threshold`` is the env's
    ``spec.reward_threshold``; an env without one runs every generation.

    Args:
        env_or_id: A Gymnasium env, an env id or a function that makes the env (an env made here is
            closed again).
        pop_size: Genomes per generation, at least 2.
        recurrent: Evolve recurrent networks (``feed_forward = False``) instead of feed-forward ones.
        path: Where to write the config file, to read or edit it; None writes it to a temporary folder
            only.
        **overrides: Any setting of the config file by name, e.g. ``max_stagnation=10``; lists and tuples
            are joined with spaces (``activation_options=["tanh", "relu"]``).

    Returns:
        The ``neat.Config``, ready for ``evolve``.

    Raises:
        ValueError: When ``pop_size`` is not an int of at least 2, an overridden ``num_inputs`` or
            ``num_outputs`` does not fit the env, or neat-python refuses a value.
        TypeError: When an override is not a neat-python setting (the message suggests close names), or
            the env's spaces do not suit a network (see ``spaces_of``).

    Examples:
        >>> config = config_for("CartPole-v1", pop_size=50, max_stagnation=10)
        >>> config.genome_config.num_inputs, config.genome_config.num_outputs, config.pop_size
        (4, 2, 50)
    """
    neat = neat_module()
    env, made = make_env_from(env_or_id)
    try:
        shape = spaces_of(env)
        threshold = getattr(env.spec, "reward_threshold", None) if env.spec is not None else None
        name = env.spec.id if env.spec is not None else type(env.unwrapped).__name__
    finally:
        if made:
            env.close()
    if isinstance(pop_size, bool) or not isinstance(pop_size, int) or pop_size < 2:
        raise ValueError(f"pop_size must be an int of at least 2; got {pop_size!r}")
    values = {section: dict(keys) for section, keys in DEFAULTS.items()}
    values["NEAT"]["pop_size"] = str(pop_size)
    values["DefaultGenome"].update(
        num_inputs=str(shape.inputs), num_outputs=str(shape.outputs), feed_forward=str(not recurrent)
    )
    if threshold is None:
        values["NEAT"]["no_fitness_termination"] = "True"
    else:
        values["NEAT"]["fitness_threshold"] = str(threshold)
    for key, value in overrides.items():
        values[_section_of(key)][key] = _text(value)
    check_against_env(values["DefaultGenome"], shape, name)
    return _load(neat, values, path)


def check_against_env(genome: dict[str, str], shape: SpaceMapping, name: str) -> None:
    """Check a config's ``[DefaultGenome]`` section against the network shape an env needs.

    Args:
        genome: The ``[DefaultGenome]`` settings as strings, at least ``num_inputs`` and ``num_outputs``.
        shape: What the env needs, from ``spaces_of``.
        name: The env's name for the message.

    Raises:
        ValueError: Naming each of ``num_inputs`` and ``num_outputs`` that is missing, not a whole
            number or not what the env needs, with the value it needs.

    Examples:
        >>> shape = spaces_of(gym.make("CartPole-v1"))
        >>> check_against_env({"num_inputs": "4", "num_outputs": "2"}, shape, "CartPole-v1")
        >>> check_against_env({"num_inputs": "3", "num_outputs": "2"}, shape, "CartPole-v1")
        Traceback (most recent call last):
        ValueError: num_inputs = 3 does not fit CartPole-v1: its observation space needs num_inputs = 4
    """
    problems = []
    for field, needed, space in (("num_inputs", shape.inputs, "observation"), ("num_outputs", shape.outputs, "action")):
        try:
            given = int(genome[field])
        except (KeyError, ValueError):
            problems.append(f"{field} must be a whole number; {name} needs {field} = {needed}")
            continue
        if given != needed:
            problems.append(f"{field} = {given} does not fit {name}: its {space} space needs {field} = {needed}")
    if problems:
        raise ValueError("; ".join(problems))


def _write(values: dict[str, dict[str, str]], path: str | os.PathLike[str]) -> None:
    parser = configparser.ConfigParser()
    for section, keys in values.items():
        parser[section] = keys
    with open(path, "w") as file:
        parser.write(file)


def _load(neat: Any, values: dict[str, dict[str, str]], path: str | os.PathLike[str] | None) -> Any:
    with tempfile.TemporaryDirectory(prefix="gymview-neat-") as folder:
        target = path if path is not None else os.path.join(folder, "neat.cfg")
        _write(values, target)
        try:
            return _read(neat, target)
        except Exception as error:
            raise ValueError(f"neat-python refused this config: {error}") from error


def _read(neat: Any, path: str | os.PathLike[str]) -> Any:
    return neat.Config(
        neat.DefaultGenome, neat.DefaultReproduction, neat.DefaultSpeciesSet, neat.DefaultStagnation, os.fspath(path)
    )


def load_config(path: str | os.PathLike[str], env: gym.Env | str | Callable[[], gym.Env] | None = None) -> Any:
    """Read a neat-python config file, checked against ``env`` when given.

    A file written for an older neat-python gets an error listing exactly the lines to add, with
    gymview's defaults as their values.

    Args:
        path: The config file.
        env: A Gymnasium env, an env id or a function that makes the env, whose spaces the file's
            ``num_inputs`` and ``num_outputs`` must fit; None checks nothing.

    Returns:
        The ``neat.Config`` read from the file.

    Raises:
        FileNotFoundError: When there is no file at ``path`` (``config_for(env, path=...)`` writes one).
        ValueError: When neat-python refuses the file (for a file written for an older neat-python, the
            message lists the settings to add), or its inputs or outputs do not fit ``env``.

    Examples:
        >>> import tempfile, os
        >>> cfg = os.path.join(tempfile.mkdtemp(), "cartpole.cfg")
        >>> _ = config_for("CartPole-v1", path=cfg)
        >>> load_config(cfg, "CartPole-v1").genome_config.num_outputs
        2
    """
    neat = neat_module()
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"no NEAT config file at {os.path.abspath(path)!r}; config_for(env, path=...) writes one"
        )
    parser = configparser.ConfigParser()
    parser.read(path)
    values = {section: dict(parser[section]) for section in parser.sections()}
    try:
        config = _read(neat, path)
    except Exception as error:
        missing = _required_missing(neat, values)
        if not missing:
            raise ValueError(f"neat-python refused {os.fspath(path)!r}: {error}") from error
        lines = "\n".join(
            f"[{section}]\n" + "\n".join(f"{key} = {DEFAULTS[section][key]}" for key in keys)
            for section, keys in missing.items()
        )
        raise ValueError(
            f"{os.fspath(path)!r} was written for an older neat-python: neat-python 2 needs these settings "
            f"(add them; the values shown are gymview's defaults):\n{lines}"
        ) from error
    if env is not None:
        made_env, made = make_env_from(env)
        try:
            name = made_env.spec.id if made_env.spec is not None else type(made_env.unwrapped).__name__
            check_against_env(values.get("DefaultGenome", {}), spaces_of(made_env), name)
        finally:
            if made:
                made_env.close()
    return config


def _required_missing(neat: Any, values: dict[str, dict[str, str]]) -> dict[str, list[str]]:
    """The settings the file lacks that neat-python cannot do without (each tried left out alone)."""
    absent = [
        (section, key) for section, keys in DEFAULTS.items() for key in keys if key not in values.get(section, {})
    ]
    required: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory(prefix="gymview-neat-") as folder:
        for section, key in absent:
            trial = {name: dict(keys) for name, keys in values.items()}
            for other_section, other_key in absent:
                if (other_section, other_key) != (section, key):
                    trial.setdefault(other_section, {})[other_key] = DEFAULTS[other_section][other_key]
            target = os.path.join(folder, "trial.cfg")
            _write(trial, target)
            try:
                _read(neat, target)
            except Exception:
                required.setdefault(section, []).append(key)
    return required
