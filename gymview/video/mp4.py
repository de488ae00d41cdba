"""MP4 files rewritten without re-encoding, in this process (PyAV): a fragmented recording made into
a plain MP4 with its index at the front, and episode files joined into one.

>>> import numpy as np, os, tempfile
>>> from gymview.video.encoder import VideoEncoder
>>> folder = tempfile.mkdtemp()
>>> encoder = VideoEncoder(32, 32, fps=10)
>>> for name in ("a.mp4", "b.mp4"):
...     encoder.start(os.path.join(folder, name), fragmented=True)
...     encoder.encode(np.zeros((48, 32), np.uint8))
...     _ = encoder.finish()
>>> join([os.path.join(folder, "a.mp4"), os.path.join(folder, "b.mp4")], os.path.join(folder, "ab.mp4"))
2
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gymview.errors import FFmpegError

__all__ = ["Joiner", "faststart_copy", "join"]


def faststart_copy(path: str | os.PathLike[str]) -> None:
    """Rewrite the MP4 ``path`` (a fragmented recording) as a plain MP4 with its index (moov) at the
    front ("faststart"), so browsers start playing and seeking before the whole file has arrived.

    The copy is made beside it and swapped in atomically: should it fail, ``path`` is left as it was
    (a fragmented MP4 plays too) and the FFmpegError says so.
    """
    path = Path(path)
    temporary = path.with_name(f".{path.name}.gymview-remux.mp4")
    try:
        _copy_packets([path], temporary)
        os.replace(temporary, path)
    except FFmpegError as error:
        raise FFmpegError(
            f"could not rewrite {str(path)!r} as a plain MP4 ({error}); the fragmented MP4 written while "
            f"recording is still there, complete and playable"
        ) from error
    finally:
        temporary.unlink(missing_ok=True)


def join(sources: Sequence[str | os.PathLike[str]], target: str | os.PathLike[str]) -> int:
    """Join MP4 files of one video stream with the same settings into ``target``, one after another,
    without re-encoding; returns the packets written. Raises FFmpegError when a file cannot be read
    or does not match the first."""
    return _copy_packets([Path(source) for source in sources], Path(target))


def _copy_packets(sources: list[Path], target: Path) -> int:
    joiner = Joiner(target)
    try:
        for source in sources:
            joiner.add(source)
    except BaseException:
        with contextlib.suppress(FFmpegError):  # the error that led here is the one to raise
            joiner.close()
        raise
    joiner.close()
    return joiner.written


class Joiner:
    """MP4 files of one video stream with the same settings joined into ``target`` one after
    another, without re-encoding, each as it comes (:meth:`add`); :meth:`close` finishes ``target``.
    Raises FFmpegError when a file cannot be read or does not match the first.

    Args:
        target: The MP4 to write, replaced.
    """

    def __init__(self, target: str | os.PathLike[str]) -> None:
        import av

        self._av = av
        self.target = Path(target)
        self.written = 0  # packets
        self._stream: Any = None
        self._offset = 0  # where the next file starts, in the output's stream time base
        try:
            self._output = av.open(os.fspath(target), "w", format="mp4", container_options={"movflags": "+faststart"})
        except av.error.FFmpegError as error:
            raise FFmpegError(f"could not open {str(target)!r} for writing: {error}") from error

    def add(self, source: str | os.PathLike[str]) -> None:
        """Append the video of the MP4 ``source``."""
        av = self._av
        try:
            with av.open(os.fspath(source)) as file:
                video = file.streams.video[0]
                if self._stream is None:
                    self._stream = self._output.add_stream_from_template(video)
                end = self._offset
                for packet in file.demux(video):
                    if packet.dts is None:  # the demuxer's empty packet at the end
                        continue
                    packet.pts += self._offset
                    packet.dts += self._offset
                    end = max(end, packet.pts + packet.duration)
                    packet.stream = self._stream
                    self._output.mux(packet)
                    self.written += 1
                self._offset = end
        except (av.error.FFmpegError, IndexError, ValueError) as error:
            raise FFmpegError(f"could not copy {os.fspath(source)} into {str(self.target)!r}: {error}") from error

    def close(self) -> None:
        """Finish ``target`` (idempotent)."""
        try:
            self._output.close()
        except self._av.error.FFmpegError as error:
            raise FFmpegError(f"could not finish {str(self.target)!r}: {error}") from error
