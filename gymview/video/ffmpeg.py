"""Find the ffmpeg binary, build its command lines, and run it safely.

Nothing here knows about frames or threads: :func:`encode_command` and :func:`remux_command`
build argument lists, and :class:`FFmpegProcess` starts one ffmpeg, feeds its stdin and always
shuts it down (close stdin, wait, kill only as a last resort).

Safety rules every process started here follows:

* it runs in its own session (process group), so Ctrl-C in a notebook or terminal, which
  signals the whole foreground group, does not kill it before it has flushed its output;
* its stderr goes to an anonymous temporary file, never to a pipe nobody reads (a full pipe
  would block ffmpeg forever), and the text is put into every error raised about it;
* a :func:`weakref.finalize` shuts it down when the handle is garbage collected or the
  interpreter exits, so no ffmpeg process is ever left behind.

>>> cmd = encode_command("ffmpeg", "out.mp4", width=5, height=4, fps=30)
>>> cmd[cmd.index("-vf") + 1]    # odd width: one black column added on the right
'pad=6:4:0:0:black'
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
import weakref
from fractions import Fraction
from typing import IO, Any

from gymview.errors import FFmpegError, FFmpegNotFoundError

__all__ = [
    "FFmpegProcess",
    "encode_command",
    "even_size",
    "find_ffmpeg",
    "fps_text",
    "remux_command",
]

ENV_VAR = "GYMVIEW_FFMPEG"

#: MP4 flags used while recording: a header without samples first, then one self-contained
#: fragment (moof + mdat) per keyframe, so every finished fragment is playable on its own.
FRAGMENTED_MOVFLAGS = "+frag_keyframe+empty_moov+default_base_moof"

_STDERR_SHOWN = 4000  # characters of ffmpeg's stderr put into an error message


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


def even_size(width: int, height: int) -> tuple[int, int]:
    """The size H.264 in yuv420p needs: an odd width or height grows by one pixel.

    The extra column goes on the right and the extra row at the bottom, filled with black;
    frames are never scaled, so every recorded pixel stays sharp and in place.

    >>> even_size(601, 400)
    (602, 400)
    """
    return width + width % 2, height + height % 2


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


def encode_command(
    ffmpeg: str,
    path: str | os.PathLike[str],
    *,
    width: int,
    height: int,
    fps: float | Fraction,
    codec: str = "libx264",
    crf: int | None = 23,
    preset: str | None = "veryfast",
    threads: int | None = None,
    fragmented: bool = True,
    input_format: str = "rgb24",
    tune: str | None = None,
) -> list[str]:
    """The command that encodes raw frames read from stdin into the MP4 file ``path``.

    Input: ``width`` x ``height`` frames at ``fps``, packed RGB (``input_format="rgb24"``) or
    I420 planes (``"yuv420p"``, even sizes only; see :mod:`gymview.image.yuv`). Output: yuv420p (what
    browsers play) with a keyframe about every second; odd sizes padded as :func:`even_size`
    says. ``crf``, ``preset`` and ``tune`` apply to the x264/x265 encoders only. With
    ``fragmented`` the MP4 is written as self-contained fragments, one per keyframe, each flushed
    to disk as soon as it is done.

    >>> encode_command("ffmpeg", "a.mp4", width=4, height=4, fps=30)[-1]
    'a.mp4'
    """
    if width < 1 or height < 1:
        raise ValueError(f"frame size must be positive; got width={width}, height={height}")
    if input_format not in ("rgb24", "yuv420p"):
        raise ValueError(f"input_format must be 'rgb24' or 'yuv420p'; got {input_format!r}")
    if input_format == "yuv420p" and (width % 2 or height % 2):
        raise ValueError(f"yuv420p input needs an even width and height; got {width}x{height}")
    rate = fps_text(fps)
    keyframe_interval = max(1, round(Fraction(rate)))
    command = [ffmpeg, "-hide_banner", "-loglevel", "error", "-y"]
    command += ["-f", "rawvideo", "-pix_fmt", input_format, "-s", f"{width}x{height}", "-r", rate, "-i", "pipe:0"]
    command += ["-an"]
    padded_width, padded_height = even_size(width, height)
    if (padded_width, padded_height) != (width, height):
        command += ["-vf", f"pad={padded_width}:{padded_height}:0:0:black"]
    command += ["-c:v", codec, "-pix_fmt", "yuv420p", "-g", str(keyframe_interval)]
    if codec in ("libx264", "libx265"):
        if crf is not None:
            command += ["-crf", str(crf)]
        if preset is not None:
            command += ["-preset", preset]
        if tune is not None:
            command += ["-tune", tune]
    if threads is not None:
        command += ["-threads", str(threads)]
    if fragmented:
        command += ["-movflags", FRAGMENTED_MOVFLAGS, "-flush_packets", "1"]
    else:
        command += ["-movflags", "+faststart"]
    command += ["-f", "mp4", os.fspath(path)]
    return command


def remux_command(ffmpeg: str, source: str | os.PathLike[str], target: str | os.PathLike[str]) -> list[str]:
    """The command that copies (no re-encoding) the MP4 ``source`` into a plain MP4 ``target``.

    The result has one index (moov) at the front ("faststart"), so browsers start playing and
    seeking before the whole file has arrived.

    >>> remux_command("ffmpeg", "in.mp4", "out.mp4")[-3:]
    ['-f', 'mp4', 'out.mp4']
    """
    return [
        ffmpeg, "-hide_banner", "-loglevel", "error", "-y", "-i", os.fspath(source),
        "-map", "0", "-c", "copy", "-movflags", "+faststart", "-f", "mp4", os.fspath(target),
    ]  # fmt: skip


def _session_kwargs() -> dict[str, Any]:
    """Popen arguments that put the child outside our process group (no Ctrl-C for it)."""
    if sys.platform.startswith("win"):
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": True}


def _stop(process: subprocess.Popen[bytes], timeout: float) -> None:
    """Close stdin (ffmpeg then finishes its file), wait up to ``timeout`` s, kill as a last resort."""
    if process.stdin is not None and not process.stdin.closed:
        try:
            process.stdin.close()
        except OSError:  # ffmpeg already gone: the pipe is broken
            pass
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _shut_down(process: subprocess.Popen[bytes], stderr: IO[bytes], timeout: float) -> None:
    """The finalizer: :func:`_stop` the process, then drop its stderr file."""
    try:
        _stop(process, timeout)
    finally:
        stderr.close()


class FFmpegProcess:
    """One running ffmpeg: write bytes to its stdin, then :meth:`finish` it.

    Started in its own session with stderr kept in a temporary file. Garbage collection or
    interpreter exit shuts it down (stdin closed, so ffmpeg finishes its file), and
    :meth:`finish` and :meth:`kill` can be called any number of times.

    >>> process = FFmpegProcess([find_ffmpeg(), "-hide_banner", "-version"])
    >>> process.finish()
    0
    """

    def __init__(self, command: list[str], shutdown_timeout: float = 60.0) -> None:
        self.command = list(command)
        # ffmpeg's log, open while it runs: finish() or the finalizer closes it
        self._stderr = tempfile.TemporaryFile(prefix="gymview-ffmpeg-", suffix=".log")  # noqa: SIM115
        try:
            self._process: subprocess.Popen[bytes] = subprocess.Popen(
                self.command,
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=self._stderr,
                **_session_kwargs(),
            )
        except OSError as error:
            self._stderr.close()
            raise FFmpegError(f"could not start ffmpeg ({error}); command: {self.command_text}") from error
        self._finalizer = weakref.finalize(self, _shut_down, self._process, self._stderr, shutdown_timeout)
        self._returncode: int | None = None
        self._stderr_text = ""

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def command_text(self) -> str:
        return subprocess.list2cmdline(self.command)

    def write(self, data: bytes | memoryview) -> None:
        """Write ``data`` to ffmpeg's stdin; blocks while ffmpeg is busy (that is the back-pressure).

        Raises :class:`FFmpegError` with ffmpeg's own error text if it has exited.
        """
        stdin = self._process.stdin
        if stdin is None or stdin.closed:
            raise FFmpegError("this ffmpeg process has already been finished; start a new one")
        try:
            stdin.write(data)
        except (BrokenPipeError, ValueError, OSError) as error:
            self.kill()
            raise self.error(f"ffmpeg stopped reading its input ({error.__class__.__name__})") from error

    def finish(self, timeout: float = 60.0) -> int:
        """Close stdin so ffmpeg finishes its output, wait up to ``timeout`` s, kill it if it hangs.

        Returns ffmpeg's exit code (negative: killed by that signal).
        """
        if self._returncode is None:
            self._finalizer.detach()
            try:
                _stop(self._process, timeout)
                self._stderr.seek(0)
                self._stderr_text = self._stderr.read().decode("utf-8", "replace")
            finally:
                self._stderr.close()
            self._returncode = self._process.returncode
        return self._returncode

    def kill(self) -> None:
        """Stop ffmpeg at once (its output may be cut short); used only when it is already failing."""
        if self._returncode is None:
            self._process.kill()
            self.finish()

    @property
    def stderr_text(self) -> str:
        """ffmpeg's error output, available once the process has finished."""
        return self._stderr_text

    def error(self, what: str) -> FFmpegError:
        """An FFmpegError saying ``what`` happened, with ffmpeg's exit code, command and stderr."""
        self.finish()
        text = self._stderr_text.strip() or "(ffmpeg printed nothing)"
        if len(text) > _STDERR_SHOWN:
            text = "...\n" + text[-_STDERR_SHOWN:]
        return FFmpegError(
            f"{what}; ffmpeg exit code {self._returncode}.\nffmpeg's output:\n{text}\ncommand: {self.command_text}"
        )
