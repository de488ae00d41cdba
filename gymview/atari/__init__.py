"""Atari observations as network-ready, frame-stacked torch tensors, on the CPU or a CUDA GPU.

torch is imported when a pipeline is made (``pip install "gymview[torch]"``), never by ``import gymview``.
"""

from typing import TYPE_CHECKING

from gymview._internal.lazy import lazy_exports

_EXPORTS = {
    "AtariPipeline": ".pipeline",
    "GRAY_WEIGHTS": ".resize",
    "area_weights": ".resize",
    "PreprocessedVectorEnv": ".vector",
    "wrap": ".vector",
    "atari_vector_env": ".vector",
}
__all__ = list(_EXPORTS)

if TYPE_CHECKING:  # what editors and the API reference see; at run time each name is imported on first use
    from gymview.atari.pipeline import AtariPipeline
    from gymview.atari.resize import GRAY_WEIGHTS, area_weights
    from gymview.atari.vector import PreprocessedVectorEnv, atari_vector_env, wrap

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
