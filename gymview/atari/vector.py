"""Vector-env wrappers that return preprocessed, frame-stacked tensors: wrap() and atari_vector_env()."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import gymnasium.vector
import numpy as np
from gymnasium.spaces import Box

if TYPE_CHECKING:
    import torch

from gymview.atari.pipeline import AtariPipeline
from gymview.atari.resize import import_torch


class PreprocessedVectorEnv(gymnasium.vector.VectorWrapper):
    """A vector env whose observations are stacked tensors from an ``AtariPipeline``; ``wrap`` makes one.

    Observations are (num_envs, stack, size, size) tensors on the pipeline's device (with a colour axis after
    ``stack`` when not gray), described by ``single_observation_space``. Full resets and next-step autoresets
    restart the stacks from the reset frame. Closing the env closes its pipeline too.

    Args:
        env: A vector env of raw RGB frames: a uint8 Box of shape (H, W, 3), with autoreset mode ``NEXT_STEP``
            (gymnasium's default) or ``DISABLED``.
        pipeline: The pipeline that converts its frames, made for ``env.num_envs`` envs.

    Attributes:
        pipeline: The ``AtariPipeline``; ``pipeline.preview()`` shows what the agent sees.

    Raises:
        ValueError: When the env's observations are not raw RGB frames, or its autoreset mode is ``SAME_STEP``
            (the final frame of an episode then only exists in ``info["final_obs"]``).

    Examples:
        >>> import gymnasium as gym, ale_py
        >>> gym.register_envs(ale_py)
        >>> raw = gym.make_vec("ALE/Pong-v5", 2, "sync", frameskip=1)
        >>> envs = PreprocessedVectorEnv(raw, AtariPipeline(2, stack=2, device="cpu"))
        >>> obs, _ = envs.reset(seed=0)
        >>> obs, rewards, terminations, truncations, infos = envs.step(envs.action_space.sample())
        >>> tuple(obs.shape), envs.single_observation_space.shape
        ((2, 2, 84, 84), (2, 84, 84))
        >>> envs.close()
    """

    def __init__(self, env: gymnasium.vector.VectorEnv, pipeline: AtariPipeline) -> None:
        vector = gymnasium.vector
        super().__init__(env)
        space = env.single_observation_space
        if not (
            isinstance(space, Box)
            and space.dtype == np.uint8
            and space.shape[-1:] == (3,)
            and len(space.shape) in (3, 4)
        ):
            raise ValueError(
                f"wrap() needs raw RGB frames, a uint8 Box of shape (H, W, 3); got {space}. For ale_py's vector "
                "env pass img_height=210, img_width=160, grayscale=False, stack_num=1 (or use atari_vector_env())"
            )
        mode = env.metadata.get("autoreset_mode", vector.AutoresetMode.NEXT_STEP)
        self._next_step = vector.AutoresetMode(mode) == vector.AutoresetMode.NEXT_STEP
        if vector.AutoresetMode(mode) == vector.AutoresetMode.SAME_STEP:
            raise ValueError(
                "wrap() needs autoreset_mode NEXT_STEP (gymnasium's default) or DISABLED: with SAME_STEP the "
                "final frame of an episode only exists in info['final_obs']. Make the env with "
                "vector_kwargs={'autoreset_mode': gymnasium.vector.AutoresetMode.NEXT_STEP}"
            )
        self.pipeline = pipeline
        shape: tuple[int, ...] = (pipeline.stack, pipeline.size, pipeline.size)
        if not pipeline.grayscale:
            shape = (pipeline.stack, 3, pipeline.size, pipeline.size)
        high, dtype = (1.0, np.float32) if pipeline.scale else (255, np.uint8)
        self.single_observation_space = Box(0, high, shape, dtype)
        self.observation_space = vector.utils.batch_space(self.single_observation_space, env.num_envs)
        self._ended = np.zeros(env.num_envs, dtype=bool)

    def reset(self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        """Reset every env and restart every stack, filled with the reset frame.

        Args:
            seed: Passed to the env's ``reset``.
            options: Passed to the env's ``reset``; a partial ``reset_mask`` is not supported.

        Returns:
            The stacked observations and the env's infos.

        Raises:
            ValueError: When ``options`` holds a ``reset_mask`` that leaves some envs out.
        """
        if options and "reset_mask" in options and not np.all(options["reset_mask"]):
            raise ValueError(
                "wrap() restarts frame stacks on full resets and on next-step autoresets; a partial "
                "reset(options={'reset_mask': ...}) is not supported"
            )
        # VectorEnv.reset is typed seed: int | None; vector envs take a seed per env as well
        observations, infos = self.env.reset(seed=seed, options=options)  # type: ignore[arg-type]
        self._ended[:] = False
        return self.pipeline.process(observations, np.ones(self.num_envs, dtype=bool)), infos

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict]:
        """Step every env; an env that ended last step restarts its stack from its reset frame.

        Args:
            actions: One action per env.

        Returns:
            The stacked observations, then the env's rewards, terminations, truncations and infos.
        """
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        # NEXT_STEP: an env that ended last step was reset by this step, and returns its reset frame.
        restarted = self._ended if self._next_step else np.zeros(self.num_envs, dtype=bool)
        stacked = self.pipeline.process(observations, restarted)
        self._ended = np.logical_or(terminations, truncations)
        return stacked, rewards, terminations, truncations, infos

    def close(self, **kwargs: Any) -> None:
        """Close the pipeline, then the env.

        Args:
            **kwargs: Passed to the env's ``close``.
        """
        self.pipeline.close()
        super().close(**kwargs)


def wrap(
    vector_env: gymnasium.vector.VectorEnv,
    size: int = 84,
    stack: int = 4,
    grayscale: bool = True,
    scale: bool = False,
    device: str | torch.device = "auto",
    backend: str = "auto",
) -> PreprocessedVectorEnv:
    """Wrap a vector env of raw RGB frames so its observations are stacked tensors on ``device``.

    Each observation equals ``AtariPreprocessing(frame_skip=1, noop_max=0)`` + ``FrameStackObservation(stack)``
    applied per env (within 2 grey levels); envs that autoreset restart their stack from the reset frame. For
    ale_py's games, ``atari_vector_env`` is the faster way to the same stacks.

    Args:
        vector_env: A vector env of raw RGB frames, a uint8 Box of shape (H, W, 3), such as
            ``gym.make_vec("ALE/Pong-v5", 8, "sync", frameskip=1)``.
        size: Side of the square frames that come out.
        stack: Frames per stack, oldest first.
        grayscale: Convert to gray; ``False`` gives (num_envs, stack, 3, size, size) observations.
        scale: Give float32 in ``[0, 1]`` instead of uint8.
        device: A torch device; ``"auto"`` picks CUDA when torch sees a GPU, else the CPU.
        backend: ``"torch"``, ``"cv2"`` or ``"auto"``, as for ``AtariPipeline``.

    Returns:
        A ``PreprocessedVectorEnv`` whose observations are (num_envs, stack, size, size) tensors; its
            ``.pipeline`` is the ``AtariPipeline`` doing the work.

    Raises:
        ValueError: When the env's observations are not raw RGB frames, its autoreset mode is ``SAME_STEP``, or
            an argument is out of range (see ``AtariPipeline``).

    Examples:
        >>> import gymnasium as gym, ale_py
        >>> gym.register_envs(ale_py)
        >>> envs = wrap(gym.make_vec("ALE/Pong-v5", 2, "sync", frameskip=1), device="cpu")
        >>> obs, _ = envs.reset(seed=0)
        >>> tuple(obs.shape), envs.pipeline.backend
        ((2, 4, 84, 84), 'cv2')
        >>> envs.close()
    """
    pipeline = AtariPipeline(
        vector_env.num_envs, size=size, stack=stack, grayscale=grayscale, scale=scale, device=device, backend=backend
    )
    return PreprocessedVectorEnv(vector_env, pipeline)


class _NativeToTorch(gymnasium.vector.VectorWrapper):
    """ale_py's natively preprocessed stacks as torch tensors (zero-copy on the CPU).

    ALE pads a fresh stack with black frames; this repeats the reset frame instead, like
    ``FrameStackObservation`` and ``AtariPipeline``, so every device gives the same stacks.
    """

    def __init__(self, env: gymnasium.vector.VectorEnv, stack: int, scale: bool, device: Any) -> None:
        super().__init__(env)
        if env.metadata.get("autoreset_mode") != gymnasium.vector.AutoresetMode.NEXT_STEP:
            raise ValueError("atari_vector_env() needs autoreset_mode=AutoresetMode.NEXT_STEP (ale_py's default)")
        self._torch, self._stack, self._scale, self._device = import_torch(), stack, scale, device
        self._age = np.zeros(env.num_envs, dtype=int)  # frames each env's stack holds since its reset, minus one
        self._ended = np.zeros(env.num_envs, dtype=bool)
        self.backend = "ale_py"

    def reset(self, *, seed: Any = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        if options and "reset_mask" in options and not np.all(options["reset_mask"]):
            raise ValueError(
                "atari_vector_env() restarts stacks on full resets and autoresets only, not partial resets"
            )
        observations, infos = self.env.reset(seed=seed, options=options)
        self._age[:] = 0
        self._ended[:] = False
        return self._to_torch(observations), infos

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict]:
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        self._age = np.where(self._ended, 0, self._age + 1)
        self._ended = np.logical_or(terminations, truncations)
        return self._to_torch(observations), rewards, terminations, truncations, infos

    def _to_torch(self, observations: np.ndarray) -> torch.Tensor:
        young = np.flatnonzero(self._age < self._stack - 1)
        if young.size:
            observations = np.array(observations)  # ALE's buffer may be read-only
            for index in young:
                first = self._stack - 1 - self._age[index]
                observations[index, :first] = observations[index, first]
        tensor = self._torch.from_numpy(observations).to(self._device, non_blocking=True)
        return tensor.to(self._torch.float32).mul_(1.0 / 255.0) if self._scale else tensor


def atari_vector_env(
    game: str,
    num_envs: int,
    size: int = 84,
    stack: int = 4,
    scale: bool = False,
    device: str | torch.device = "auto",
    **ale_kwargs: Any,
) -> gymnasium.vector.VectorEnv:
    """Make ale_py's ``AtariVectorEnv`` with observations as stacked gray tensors on ``device``.

    The fastest way here to stacked gray Atari tensors: ALE's own C++ preprocessing runs in its worker threads (it
    converts the palette straight to gray) and hands over 84x84 stacks, about a third of the bytes of raw RGB
    frames; one copy takes them to ``device``. It beats shipping raw frames through the GPU ``AtariPipeline`` (a
    policy needs each observation before its next step, so the pipeline's overlap cannot help), so every device
    uses it (see the performance page). Fresh stacks are padded by repeating the reset frame, like
    ``FrameStackObservation`` (ALE itself pads with black). For raw frames of any other vector env, ``wrap`` runs
    the ``AtariPipeline``.

    Args:
        game: The ALE game, such as ``"pong"`` or ``"breakout"``.
        num_envs: How many envs.
        size: Side of the square frames that come out.
        stack: Frames per stack, oldest first.
        scale: Give float32 in ``[0, 1]`` instead of uint8.
        device: A torch device; ``"auto"`` picks CUDA when torch sees a GPU, else the CPU.
        **ale_kwargs: Passed to ``AtariVectorEnv``, such as ``frameskip=4, noop_max=30``.

    Returns:
        A vector env whose observations are (num_envs, stack, size, size) tensors on ``device``; its ``.backend``
            is ``"ale_py"``. Stacks restart on full resets and autoresets only.

    Raises:
        ValueError: When ``ale_kwargs`` sets an autoreset mode other than ``NEXT_STEP`` (ale_py's default), or on
            a partial ``reset(options={"reset_mask": ...})``.

    Examples:
        >>> envs = atari_vector_env("pong", num_envs=2, device="cpu", frameskip=1)
        >>> obs, _ = envs.reset(seed=0)
        >>> tuple(obs.shape), envs.backend
        ((2, 4, 84, 84), 'ale_py')
        >>> envs.close()
    """
    from ale_py.vector_env import AtariVectorEnv

    torch = import_torch()
    resolved = torch.device(
        "cuda" if device == "auto" and torch.cuda.is_available() else "cpu" if device == "auto" else device
    )
    native = AtariVectorEnv(
        game, num_envs, img_height=size, img_width=size, grayscale=True, stack_num=stack, **ale_kwargs
    )
    return _NativeToTorch(native, stack, scale, resolved)
