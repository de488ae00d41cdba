"""Several recorders writing into one folder at once, each under its own names.

Stable-baselines3's ``make_vec_env(..., wrapper_class=RecordVideo)`` wraps every sub-env alike,
so N recorders (threads of one process, or worker processes) would all write
``rl-video-episode-0.mp4``. Each recorder claims the lowest free *slot* for its (folder,
prefix): slot 0 keeps gymnasium's names, slot k adds ``-k`` to the prefix. A slot is an
exclusive ``flock`` on a small file in the temp folder (so the video folder gets no clutter),
held until :meth:`NameSlot.release`; the OS drops it when a process dies, so a crashed run
leaves no slot taken.

>>> import tempfile
>>> folder = tempfile.mkdtemp()
>>> first, second = NameSlot.claim(folder, "rl-video"), NameSlot.claim(folder, "rl-video")
>>> first.prefix, second.prefix
('rl-video', 'rl-video-1')
>>> first.release(); NameSlot.claim(folder, "rl-video").prefix
'rl-video'
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading

try:
    import fcntl
except ImportError:  # Windows: slots are shared between the threads of one process only
    fcntl = None  # type: ignore[assignment]

__all__ = ["NameSlot"]

_taken: set[tuple[str, str, int]] = set()  # this process's slots, for systems without flock
_taken_lock = threading.Lock()


class NameSlot:
    """One recorder's claim on a file-name prefix in a folder; see the module docstring."""

    def __init__(self, key: tuple[str, str, int], lock_file: int | None, prefix: str) -> None:
        self._key = key
        self._lock_file = lock_file
        self.prefix = prefix

    @classmethod
    def claim(cls, folder: str, prefix: str) -> NameSlot:
        """The lowest slot of ``prefix`` in ``folder`` that no live recorder holds."""
        folder = os.path.realpath(folder)
        digest = hashlib.sha1(f"{folder}\0{prefix}".encode()).hexdigest()[:16]
        locks = os.path.join(tempfile.gettempdir(), "gymview-name-slots")
        os.makedirs(locks, exist_ok=True)
        slot = 0
        while True:
            key = (folder, prefix, slot)
            with _taken_lock:
                if key not in _taken:
                    lock_file = _lock(os.path.join(locks, f"{digest}-{slot}.lock"))
                    if lock_file is not False:
                        _taken.add(key)
                        return cls(key, lock_file, prefix if slot == 0 else f"{prefix}-{slot}")
            slot += 1

    def release(self) -> None:
        """Let another recorder have this slot; idempotent."""
        with _taken_lock:
            _taken.discard(self._key)
            lock_file, self._lock_file = self._lock_file, None
        if lock_file is not None:
            os.close(lock_file)  # drops the flock


def _lock(path: str) -> int | bool | None:
    """An fd holding an exclusive flock on ``path``; None without flock; False if another holds it."""
    if fcntl is None:
        return None
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return False
    return fd
