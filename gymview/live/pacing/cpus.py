"""How much of the helper process's time for a frame the loop pays for, read the way the process sees the
machine: the CPUs it may use (its affinity, capped by the tightest cgroup CPU quota on its cgroup or any
above it: v2 ``cpu.max``, v1 ``cpu.cfs_quota_us`` over ``cpu.cfs_period_us``; a container limited to 2
CPUs on a 64-core host has 2), and how long the loop's own thread waited for a core (Linux's schedstat).

>>> usable_cpus() >= 0.01
True
"""

from __future__ import annotations

import functools
import math
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path

__all__ = [
    "HELPER_NEEDS_CPUS",
    "HelperCost",
    "cgroup_cpu_limit",
    "thread_wait_seconds",
    "torch_fills_cpus",
    "usable_cpus",
]

# A view's helper has a core of its own from three CPUs: one runs the loop, one the helper, and one is
# left for what serves the page (the Jupyter server, and the browser where it runs on the same machine).
HELPER_NEEDS_CPUS = 3


def usable_cpus(proc: str | os.PathLike[str] = "/proc", cgroups: str | os.PathLike[str] = "/sys/fs/cgroup") -> float:
    """The CPUs this process may use (fractional under a quota such as 1.5); ``proc`` and ``cgroups`` are
    where ``/proc`` and the cgroup file systems are (a test's fake tree).

    Examples:
        >>> usable_cpus() <= os.cpu_count()
        True
    """
    allowed = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    limit = cgroup_cpu_limit(proc, cgroups)
    return float(allowed) if limit is None else min(float(allowed), limit)


def cgroup_cpu_limit(
    proc: str | os.PathLike[str] = "/proc", cgroups: str | os.PathLike[str] = "/sys/fs/cgroup"
) -> float | None:
    """The tightest CPU quota on this process's cgroups, in CPUs; None where none is set or readable.

    Examples:
        >>> import tempfile
        >>> root = Path(tempfile.mkdtemp())
        >>> _ = (root / "proc" / "self").mkdir(parents=True), (root / "cg" / "job").mkdir(parents=True)
        >>> _ = (root / "proc" / "self" / "cgroup").write_text("0::/job\\n")
        >>> _ = (root / "cg" / "job" / "cpu.max").write_text("150000 100000\\n")
        >>> cgroup_cpu_limit(root / "proc", root / "cg")
        1.5
    """
    try:
        lines = (Path(proc) / "self" / "cgroup").read_text().splitlines()
    except OSError:
        return None
    limits = []
    for line in lines:
        hierarchy, controllers, path = [*line.split(":", 2), "", ""][:3]
        if hierarchy == "0" and not controllers:
            limits += _quotas(Path(cgroups), path, ("cpu.max",))
        elif "cpu" in controllers.split(","):
            mounts = [Path(cgroups) / name for name in (controllers, "cpu", "cpu,cpuacct")]
            mount = next((mount for mount in mounts if mount.is_dir()), None)
            limits += _quotas(mount, path, ("cpu.cfs_quota_us", "cpu.cfs_period_us")) if mount else []
    return min(limits, default=None)


def _quotas(mount: Path, path: str, files: tuple[str, ...]) -> list[float]:
    """The quotas set on cgroup ``path`` and each above it, in CPUs. In a container the process's own
    cgroup is the mount's root, whatever path the host gives it."""
    folders = [mount / path.strip("/")]
    if not folders[0].is_dir():
        folders = [mount]
    while folders[-1] != mount:
        folders.append(folders[-1].parent)
    found = []
    for each in folders:
        try:
            quota, period = " ".join((each / name).read_text() for name in files).split()[:2]
            if quota != "max" and int(quota) > 0 and int(period) > 0:
                found.append(int(quota) / int(period))
        except (OSError, ValueError):
            continue
    return found


def torch_fills_cpus(cpus: float | None = None) -> bool:
    """Whether torch, imported here, runs a thread on every core the process may use (its default): while
    it trains, its threads meet at each parallel operation, and one that waits for a view's helper holds
    up the others. ``cpus``: the CPUs the process may use (default: :func:`usable_cpus`).

    Examples:
        >>> torch_fills_cpus() == ("torch" in sys.modules and torch_fills_cpus())
        True
    """
    get_num_threads = getattr(sys.modules.get("torch"), "get_num_threads", None)
    if get_num_threads is None:
        return False
    cpus = _usable_cpus_here() if cpus is None else cpus
    # a thread per physical core: half the logical CPUs where each core runs two
    return get_num_threads() >= max(1, math.floor(cpus / 2))


@functools.cache
def _usable_cpus_here() -> float:
    """:func:`usable_cpus`, read once: SB3 views ask at every frame."""
    return usable_cpus()


def thread_wait_seconds() -> float | None:
    """Seconds the calling thread has waited, runnable, for a core since it started (Linux's schedstat);
    None where the system does not say.

    Examples:
        >>> waited = thread_wait_seconds()
        >>> waited is None or waited >= 0.0
        True
    """
    try:
        with open("/proc/thread-self/schedstat", "rb") as stats:
            return int(stats.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


class HelperCost:
    """The part of the helper's time for a frame that the loop pays: all of it where the helper runs on the
    loop's CPU quota (a cgroup quota of under :data:`HELPER_NEEDS_CPUS`) or torch fills every core;
    elsewhere, the time the loop's thread waited for a core since the last frame, up to the helper's time;
    where the system does not say that, all of it on fewer than :data:`HELPER_NEEDS_CPUS` CPUs.

    Args:
        quota: The process's cgroup CPU quota (None: none).
        cpus: The CPUs the process may use.
        wait: The calling thread's total wait for a core (:func:`thread_wait_seconds`, or a test's readings).

    Examples:
        >>> waits = iter([1.0, 1.25])
        >>> cost = HelperCost(quota=None, cpus=2.0, wait=lambda: next(waits))
        >>> cost.mark()                  # after a frame
        >>> cost.before_frame()          # the next one: the loop waited 0.25 s for a core meanwhile
        >>> cost.paid(0.5), cost.paid(0.5, all_of_it=True)
        (0.25, 0.5)
    """

    def __init__(
        self, quota: float | None, cpus: float, wait: Callable[[], float | None] = thread_wait_seconds
    ) -> None:
        self.shares_quota = quota is not None and quota < HELPER_NEEDS_CPUS
        self.cpus = cpus
        self._wait = wait
        self._mark: tuple[int, float] | None = None  # (thread, its total wait) after the last frame
        self._waited: float | None = 0.0

    def mark(self) -> None:
        """A frame was made: the wait counts from now."""
        total = self._wait()
        self._mark = None if total is None else (threading.get_ident(), total)

    def before_frame(self) -> None:
        """Read how long the loop waited for a core since :meth:`mark` (the frame's own wait is in its time)."""
        total, mark = self._wait(), self._mark
        if total is None:
            self._waited = None
        elif mark is not None and mark[0] == threading.get_ident() and total >= mark[1]:
            self._waited = total - mark[1]
        else:  # the first frame, or one made on another thread: nothing to compare with
            self._waited = 0.0

    def paid(self, helper_seconds: float, all_of_it: bool = False) -> float:
        """The seconds of ``helper_seconds`` (the helper's time for the last frame) that the loop paid."""
        if all_of_it or self.shares_quota:
            return helper_seconds
        if self._waited is not None:
            return min(self._waited, helper_seconds)
        return helper_seconds if self.cpus < HELPER_NEEDS_CPUS else 0.0
