"""Frames as numpy arrays: check and convert them, downsample, tile, compress to JPEG/PNG, convert to I420.

Pure functions and small stateful converters over numpy and Pillow; nothing here imports the rest
of gymview.

>>> from gymview.image import downsample
>>> import numpy as np
>>> downsample(np.zeros((400, 600, 3), np.uint8), max_size=300).shape
(200, 300, 3)
"""

from typing import TYPE_CHECKING

from gymview._internal.lazy import lazy_exports

_EXPORTS = {
    "check_frame": ".frames",
    "to_rgb_uint8": ".frames",
    "fit_size": ".frames",
    "downsample": ".frames",
    "tile": ".tiling",
    "check_format": ".codec",
    "check_quality": ".codec",
    "encode_frame": ".codec",
    "I420Converter": ".yuv",
}
__all__ = list(_EXPORTS)

if TYPE_CHECKING:  # what editors and the API reference see; at run time each name is imported on first use
    from gymview.image.codec import check_format, check_quality, encode_frame
    from gymview.image.frames import check_frame, downsample, fit_size, to_rgb_uint8
    from gymview.image.tiling import tile
    from gymview.image.yuv import I420Converter

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
