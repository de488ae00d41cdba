"""Pure functions: an (H, W, 3) uint8 frame → JPEG or PNG bytes.

JPEG goes through simplejpeg (libjpeg-turbo) when it is installed and Pillow otherwise; both
release the GIL while they compress.

>>> import numpy as np
>>> data = encode_frame(np.zeros((8, 8, 3), np.uint8), "jpeg", quality=80)
>>> data[:2] == b"\\xff\\xd8"
True
"""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

from gymview._internal.checks import check_int

try:
    import simplejpeg
except ImportError:  # optional speed-up; Pillow does the same job
    simplejpeg = None

__all__ = ["IMAGE_FORMATS", "check_format", "check_quality", "encode_frame"]

IMAGE_FORMATS = ("jpeg", "png")


def check_format(image_format: str) -> str:
    """Return the normalised format name or raise ValueError listing the choices."""
    name = str(image_format).lower()
    name = "jpeg" if name == "jpg" else name
    if name not in IMAGE_FORMATS:
        raise ValueError(f"image format must be one of {IMAGE_FORMATS}; got {image_format!r}")
    return name


def check_quality(quality: int) -> int:
    """Return ``quality`` if it is an int in 1..100, else raise ValueError."""
    return check_int("quality", quality, minimum=1, maximum=100, hint=" (JPEG quality)")


def encode_frame(frame: np.ndarray, image_format: str = "jpeg", quality: int = 80) -> bytes:
    """Compress a C-contiguous (H, W, 3) uint8 RGB frame.

    PNG is lossless (``quality`` is ignored); JPEG uses 4:2:0 chroma subsampling, which is what
    browsers decode fastest.
    """
    image_format = check_format(image_format)
    if image_format == "jpeg":
        quality = check_quality(quality)
        if simplejpeg is not None:
            return simplejpeg.encode_jpeg(frame, quality=quality, colorspace="RGB", colorsubsampling="420")
        buffer = io.BytesIO()
        Image.fromarray(frame).save(buffer, format="JPEG", quality=quality)
        return buffer.getvalue()
    buffer = io.BytesIO()
    Image.fromarray(frame).save(buffer, format="PNG", compress_level=1)
    return buffer.getvalue()
