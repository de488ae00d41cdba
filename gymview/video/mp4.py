"""MP4 files rewritten without re-encoding, in this process: a fragmented recording made into a
plain MP4 with its index at the front (PyAV), and episode files joined into one fragmented MP4 by
appending their fragments (bytes, no demuxing).

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
import io
import os
import struct
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from gymview.errors import FFmpegError
from gymview.video.encoder import FRAGMENTED_MOVFLAGS

__all__ = ["Joiner", "faststart_copy", "join"]

# boxes whose payload is boxes (the ones the joiner looks into)
_CONTAINERS = {b"moov", b"trak", b"mdia", b"mvex", b"moof", b"traf"}
# top-level boxes after the fragments that index a file's own offsets: left out of a joined file
_INDEXES = {b"mfra", b"sidx", b"free", b"skip"}


def faststart_copy(path: str | os.PathLike[str]) -> None:
    """Rewrite the MP4 ``path`` (a fragmented recording) as a plain MP4 with its index (moov) at the
    front ("faststart"), so browsers start playing and seeking before the whole file has arrived.

    The copy is made beside it and swapped in atomically: should it fail, ``path`` is left as it was
    (a fragmented MP4 plays too) and the FFmpegError says so.
    """
    path = Path(path)
    temporary = path.with_name(f".{path.name}.gymview-remux.mp4")
    try:
        _remux(path, os.fspath(temporary), {"movflags": "+faststart"})
        os.replace(temporary, path)
    except FFmpegError as error:
        raise FFmpegError(
            f"could not rewrite {str(path)!r} as a plain MP4 ({error}); the fragmented MP4 written while "
            f"recording is still there, complete and playable"
        ) from error
    finally:
        temporary.unlink(missing_ok=True)


def _remux(source: Path, target: Any, options: dict[str, str]) -> int:
    """Copy the video stream of the MP4 ``source`` into ``target`` (a path or a file object), an MP4
    written with the muxer ``options``; the packets copied."""
    import av

    written = 0
    try:
        with av.open(os.fspath(source)) as file, av.open(target, "w", format="mp4", container_options=options) as out:
            video = file.streams.video[0]
            stream = out.add_stream_from_template(video)
            for packet in file.demux(video):
                if packet.dts is None:  # the demuxer's empty packet at the end
                    continue
                packet.stream = stream
                out.mux(packet)
                written += 1
    except (av.error.FFmpegError, IndexError, ValueError) as error:
        raise FFmpegError(f"could not copy the video of {os.fspath(source)!r}: {error}") from error
    return written


def join(sources: Sequence[str | os.PathLike[str]], target: str | os.PathLike[str]) -> int:
    """Join MP4 files of one video stream with the same settings into ``target``, a fragmented MP4,
    one after another, without re-encoding; returns the frames written. Raises FFmpegError when a
    file cannot be read or does not match the first."""
    joiner = Joiner(target)
    try:
        for source in sources:
            joiner.add(source)
    except BaseException:
        with contextlib.suppress(FFmpegError):  # the error that led here is the one to raise
            joiner.close()
        raise
    joiner.close()
    return joiner.frames


class Joiner:
    """MP4 files of one video stream with the same settings joined into ``target`` one after
    another, each as it comes (:meth:`add`), without re-encoding; :meth:`close` finishes ``target``.

    ``target`` is a fragmented MP4: the header of the first file, then every file's fragments, their
    times moved on to follow the file before. A fragmented file (what ``VideoEncoder`` writes with
    ``fragmented=True``) is appended as bytes, with no demuxing; any other MP4 is first copied into
    fragments (PyAV). Each file is on disk once :meth:`add` returns, so after a kill ``target`` plays
    to the end of the file added last; :meth:`close` writes its duration into its header.

    Args:
        target: The MP4 to write, replaced.

    Raises:
        FFmpegError: When ``target`` cannot be written, a file cannot be read, or a file does not
            match the first (another frame size, codec or setting).
    """

    def __init__(self, target: str | os.PathLike[str]) -> None:
        self.target = Path(target)
        self.frames = 0  # samples appended
        self._header: bytes | None = None  # ftyp + moov of the first file: every file must have it
        self._durations: list[tuple[int, int, int]] = []  # (where in the file, version, timescale) of moov's durations
        self._track_timescale = 0
        self._default_duration = 0  # trex's sample duration, for fragments that give none
        self._sequence = 0  # fragments written
        self._time = 0  # where the next file starts, in the track's timescale
        try:
            self._file: Any = open(self.target, "wb")  # noqa: SIM115 - closed in close()
        except OSError as error:
            raise FFmpegError(f"could not open {str(self.target)!r} for writing: {error}") from error

    def add(self, source: str | os.PathLike[str]) -> None:
        """Append the video of the MP4 ``source``."""
        path = Path(source)
        try:
            data = path.read_bytes()
            if not _is_fragmented(data):
                buffer = io.BytesIO()
                _remux(path, buffer, {"movflags": FRAGMENTED_MOVFLAGS})
                data = buffer.getvalue()
            header, fragments = _split(data)
            if self._header is None:
                self._start(header)
            elif _comparable(header) != _comparable(self._header):
                raise ValueError("its header differs from the first file's (another frame size, codec or setting)")
            end = self._time
            for moof, (mdat_start, mdat_end) in fragments:
                shifted, start, duration, samples = self._shifted(data, moof)
                self._file.write(shifted)
                self._file.write(memoryview(data)[mdat_start:mdat_end])
                end = max(end, start + duration)
                self.frames += samples
            self._file.flush()
            self._time = end
        except (OSError, ValueError, struct.error) as error:
            raise FFmpegError(f"could not copy {os.fspath(source)} into {str(self.target)!r}: {error}") from error

    def _start(self, header: bytes) -> None:
        self._header = header
        for kind, _, _, payload in _walk(header, 0, len(header)):
            version = header[payload]
            if kind in (b"mvhd", b"mdhd"):  # version 0: creation, modification (32 bits), timescale, duration
                timescale = struct.unpack_from(">I", header, payload + (20 if version else 12))[0]
                where = payload + (24 if version else 16)
                self._durations.append((where, version, timescale))
                if kind == b"mdhd":
                    self._track_timescale = timescale
            elif kind == b"tkhd":  # duration in the movie's timescale (mvhd's, found before it)
                self._durations.append((payload + (28 if version else 20), version, self._durations[0][2]))
            elif kind == b"trex":
                self._default_duration = struct.unpack_from(">I", header, payload + 12)[0]
        if sum(kind == b"trak" for kind, *_ in _walk(header, 0, len(header))) != 1:
            raise ValueError("it does not hold exactly one track")
        self._file.write(header)

    def _shifted(self, data: bytes, moof: tuple[int, int]) -> tuple[bytearray, int, int, int]:
        """The box ``moof`` of ``data`` numbered on and its times moved by where this file starts,
        with its start and duration (of the track, once moved) and its samples."""
        box = bytearray(data[moof[0] : moof[1]])
        start = duration = samples = 0
        default = self._default_duration
        for kind, _, _, payload in _walk(box, 0, len(box)):
            version, flags = box[payload], int.from_bytes(box[payload + 1 : payload + 4], "big")
            if kind == b"mfhd":
                self._sequence += 1
                struct.pack_into(">I", box, payload + 4, self._sequence)
            elif kind == b"tfhd":  # its optional fields in order: base offset, description, duration
                offset = payload + 8 + 8 * bool(flags & 0x1) + 4 * bool(flags & 0x2)
                default = struct.unpack_from(">I", box, offset)[0] if flags & 0x8 else self._default_duration
            elif kind == b"tfdt":
                layout = ">Q" if version else ">I"
                start = struct.unpack_from(layout, box, payload + 4)[0] + self._time
                struct.pack_into(layout, box, payload + 4, start)  # a version 0 time past 32 bits: struct.error
            elif kind == b"trun":
                count = struct.unpack_from(">I", box, payload + 4)[0]
                samples += count
                if not flags & 0x100:  # no durations of its own
                    duration += count * default
                    continue
                offset = payload + 8 + 4 * bool(flags & 0x1) + 4 * bool(flags & 0x4)
                stride = 4 * sum(bool(flags & bit) for bit in (0x100, 0x200, 0x400, 0x800))
                duration += sum(struct.unpack_from(">I", box, offset + stride * i)[0] for i in range(count))
        return box, start, duration, samples

    def close(self) -> None:
        """Write the video's duration into its header and finish ``target`` (idempotent)."""
        if self._file.closed:
            return
        try:
            for where, version, timescale in self._durations:
                duration = self._time * timescale // max(self._track_timescale, 1)
                if version or duration < 2**32:  # a header too small for it keeps 0: players count the fragments
                    self._file.seek(where)
                    self._file.write(struct.pack(">Q" if version else ">I", duration))
            self._file.close()
        except OSError as error:
            self._file.close()
            raise FFmpegError(f"could not finish {str(self.target)!r}: {error}") from error


def _walk(data: bytes | bytearray, start: int, end: int) -> Iterator[tuple[bytes, int, int, int]]:
    """``(kind, start, end, start of payload)`` of the boxes between ``start`` and ``end``, and of
    the boxes inside those of ``_CONTAINERS``, depth first."""
    for kind, box_start, box_end, payload in _boxes(data, start, end):
        yield kind, box_start, box_end, payload
        if kind in _CONTAINERS:
            yield from _walk(data, payload, box_end)


def _boxes(data: bytes | bytearray, start: int, end: int) -> Iterator[tuple[bytes, int, int, int]]:
    """``(kind, start, end, start of payload)`` of the boxes one after another between ``start`` and ``end``."""
    position = start
    while position < end:
        size, kind = struct.unpack_from(">I4s", data, position)
        payload = position + 8
        if size == 1:  # a 64-bit size follows
            size, payload = struct.unpack_from(">Q", data, position + 8)[0], position + 16
        elif size == 0:  # to the end
            size = end - position
        if size < payload - position or position + size > end:
            raise ValueError(f"a {kind!r} box runs past the end of the file (cut short?)")
        yield bytes(kind), position, position + size, payload
        position += size


def _comparable(header: bytes) -> bytes:
    """``header`` without its bitrate box's figures (btrt: a file's own peak and average, which
    players do not need to hold for the whole joined video)."""
    at = header.find(b"btrt")
    return header if at < 4 else header[: at + 4] + bytes(12) + header[at + 16 :]


def _is_fragmented(data: bytes) -> bool:
    return any(kind == b"moof" for kind, *_ in _boxes(data, 0, len(data)))


def _split(data: bytes) -> tuple[bytes, list[tuple[tuple[int, int], tuple[int, int]]]]:
    """The header (ftyp and moov) of the fragmented MP4 ``data`` and the spans of its (moof, mdat) pairs."""
    header, moof, movie = b"", None, False
    fragments: list[tuple[tuple[int, int], tuple[int, int]]] = []
    for kind, start, end, _ in _boxes(data, 0, len(data)):
        if kind in (b"ftyp", b"moov") and not fragments and moof is None:
            header += data[start:end]
            movie = movie or kind == b"moov"
        elif kind == b"moof" and moof is None:
            moof = (start, end)
        elif kind == b"mdat" and moof is not None:
            fragments.append((moof, (start, end)))
            moof = None
        elif kind not in _INDEXES:
            raise ValueError(f"unexpected {kind.decode(errors='replace')!r} box: not a fragmented MP4 of one video")
    if moof is not None or not movie:
        raise ValueError("not a whole fragmented MP4")
    return header, fragments
