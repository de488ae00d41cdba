"""Arrays from JAX, torch or NumPy as NumPy arrays on the host, moved there once."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["host_array"]


def host_array(values: Any, name: str) -> np.ndarray:
    """``values`` (a NumPy, JAX or torch array, or nested lists) as a float64 NumPy array, copied from its device
    once; ``name`` is what an error calls it.

    >>> host_array([[0.0, 1.0]], "qpos").shape
    (1, 2)
    >>> host_array("walk", "qpos")
    Traceback (most recent call last):
    ...
    TypeError: qpos must be an array of numbers (NumPy, JAX or torch); got str
    """
    if isinstance(values, (str, bytes)) or values is None:
        raise TypeError(f"{name} must be an array of numbers (NumPy, JAX or torch); got {type(values).__name__}")
    if type(values).__module__.split(".")[0] == "torch":
        values = values.detach().cpu().numpy()  # a CUDA tensor has no __array__ of its own
    try:
        array = np.asarray(values, dtype=np.float64)  # a JAX array: one transfer to the host
    except (TypeError, ValueError) as error:
        raise TypeError(
            f"{name} must be an array of numbers (NumPy, JAX or torch); got {type(values).__name__}: {error}"
        ) from None
    return array
