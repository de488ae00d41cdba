"""The import path earlier releases documented for :mod:`gymview.atari`; new code imports that.

>>> import gymview.preprocess as gp, gymview.atari
>>> gp.AtariPipeline is gymview.atari.AtariPipeline
True
"""

from gymview.atari import (
    GRAY_WEIGHTS,
    AtariPipeline,
    PreprocessedVectorEnv,
    area_weights,
    atari_vector_env,
    wrap,
)

__all__ = ["AtariPipeline", "GRAY_WEIGHTS", "PreprocessedVectorEnv", "area_weights", "atari_vector_env", "wrap"]
