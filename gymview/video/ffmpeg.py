"""Where the ffmpeg binary is (``gymview doctor`` reports it), and exact frame rates.

gymview records in-process through PyAV (``gymview.video.encoder``); the binary is only looked for
so that ``find_ffmpeg`` and the doctor can say which one a user's own tools would run.

>>> fps_text(30)
'30'
"""

from __future__ import annotations

import functools
import os
import shutil
from fractions import Fraction

from gymview.errors import FFmpegNotFoundError

__all__ = ["find_ffmpeg", "fps_text"]

ENV_VAR = "GYMVIEW_FFMPEG"


def find_ffmpeg() -> str:
    """Path of the ffmpeg binary to use.

    Looked up in this order: the ``GYMVIEW_FFMPEG`` environment variable, the binary shipped
    with the ``imageio-ffmpeg`` package, then ``ffmpeg`` on the PATH.

    >>> os.path.basename(find_ffmpeg()).startswith("ffmpeg")
    True
    """
    return _find_ffmpeg(
        os.environ.get(ENV_VAR, ""), os.environ.get("IMAGEIO_FFMPEG_EXE", ""), os.environ.get("PATH", "")
    )


@functools.lru_cache(maxsize=8)
def _find_ffmpeg(explicit: str, imageio_explicit: str, search_path: str) -> str:
    if explicit:
        found = shutil.which(explicit)
        if found is None:
            raise FFmpegNotFoundError(
                f"{ENV_VAR}={explicit!r} is not an executable file. "
                f"Point it at an ffmpeg binary, or unset it to use the one from imageio-ffmpeg."
            )
        return found
    try:
        import imageio_ffmpeg
    except ImportError:
        pass
    else:
        try:
            shipped = imageio_ffmpeg.get_ffmpeg_exe()
        except RuntimeError:
            shipped = None
        if shipped is not None and shutil.which(shipped) is not None:
            return shipped
        if imageio_explicit:  # imageio-ffmpeg returns this variable's value unchecked
            raise FFmpegNotFoundError(
                f"IMAGEIO_FFMPEG_EXE={imageio_explicit!r} is not an executable file. "
                f"Point it at an ffmpeg binary, or unset it to use the one imageio-ffmpeg ships."
            )
    found = shutil.which("ffmpeg", path=search_path)
    if found is None:
        raise FFmpegNotFoundError(
            "gymview needs an ffmpeg binary to write videos and found none. "
            "Run `pip install imageio-ffmpeg` (it ships one), install ffmpeg on the PATH, "
            f"or set {ENV_VAR} to the path of an ffmpeg binary."
        )
    return found


def fps_text(fps: float | Fraction) -> str:
    """``fps`` as an exact ffmpeg rate (``30``, ``30000/1001``); ValueError unless positive.

    >>> fps_text(29.97)
    '2997/100'
    """
    if isinstance(fps, bool) or not isinstance(fps, (int, float, Fraction)):
        raise TypeError(f"fps must be a number of frames per second; got {fps!r}")
    if not fps > 0 or fps == float("inf"):
        raise ValueError(f"fps must be a positive, finite number of frames per second; got {fps!r}")
    return str(Fraction(fps).limit_denominator(1_000_000))
