"""Atari observations as network-ready, frame-stacked torch tensors, on the CPU or a CUDA GPU.

torch is imported when a pipeline is made (``pip install "gymview[torch]"``), never by ``import gymview``.
"""

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
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
