"""How much of the helper process's time for a frame the loop pays, read the way the process sees the machine."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path

__all__ = ["HelperCost", "cgroup_cpu_limit", "thread_wait_seconds", "torch_fills_cpus", "usable_cpus"]

# From three CPUs a view's helper has a core of its own: one runs the loop, one the helper, one serves the page.
HELPER_NEEDS_CPUS = 3


def usable_cpus(proc: str | os.PathLike[str] = "/proc", cgroups: str | os.PathLike[str] = "/sys/fs/cgroup") -> float:
    """The CPUs this process may use: its affinity capped by :func:`cgroup_cpu_limit` (1.5 under such a quota)."""
    allowed = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return min(float(allowed), cgroup_cpu_limit(proc, cgroups) or float(allowed))


def cgroup_cpu_limit(
    proc: str | os.PathLike[str] = "/proc", cgroups: str | os.PathLike[str] = "/sys/fs/cgroup"
) -> float | None:
    """The tightest CPU quota, in CPUs, on this process's cgroup or any above it (v2 ``cpu.max``, v1
    ``cpu.cfs_quota_us`` over ``cpu.cfs_period_us``); None where none is set or readable. ``proc`` and ``cgroups``
    are where ``/proc`` and the cgroup file systems are.

    >>> cgroup_cpu_limit("/no/such/proc") is None
    True
    """
    try:
        lines = (Path(proc) / "self" / "cgroup").read_text().splitlines()
    except OSError:
        return None
    limits: list[float] = []
    for line in lines:
        hierarchy, controllers, path = [*line.split(":", 2), "", ""][:3]
        if hierarchy == "0" and not controllers:
            limits += _quotas(Path(cgroups), path, ("cpu.max",))
        elif "cpu" in controllers.split(","):
            mounts = [Path(cgroups) / name for name in (controllers, "cpu", "cpu,cpuacct")]
            for mount in [mount for mount in mounts if mount.is_dir()][:1]:
                limits += _quotas(mount, path, ("cpu.cfs_quota_us", "cpu.cfs_period_us"))
    return min(limits, default=None)


def _quotas(mount: Path, path: str, files: tuple[str, ...]) -> list[float]:
    """The quotas on cgroup ``path`` and each above it, in CPUs. In a container the process's own cgroup is the
    mount's root, whatever path the host gives it."""
    folder = mount / path.strip("/") if (mount / path.strip("/")).is_dir() else mount
    found = []
    for each in [folder, *folder.parents][: len(folder.relative_to(mount).parts) + 1]:
        try:
            quota, period = " ".join((each / name).read_text() for name in files).split()[:2]
            if quota != "max" and int(quota) > 0 and int(period) > 0:
                found.append(int(quota) / int(period))
        except (OSError, ValueError):
            pass
    return found


def torch_fills_cpus(cpus: float | None = None) -> bool:
    """Whether torch, imported here, runs a thread per core of the ``cpus`` it may run on (by default the affinity's,
    as torch counts them): its threads meet at each operation, and one that waits for a view's helper holds all."""
    get_num_threads = getattr(sys.modules.get("torch"), "get_num_threads", None)
    cpus = len(os.sched_getaffinity(0)) if cpus is None and hasattr(os, "sched_getaffinity") else cpus
    return get_num_threads is not None and get_num_threads() >= max(1, (cpus or os.cpu_count() or 1) // 2)


def thread_wait_seconds() -> float | None:
    """Seconds the calling thread waited, runnable, for a core since it started (Linux's schedstat), or None."""
    try:
        with open("/proc/thread-self/schedstat", "rb") as stats:
            return int(stats.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


class HelperCost:
    """The part of the helper's time for a frame that the loop pays: how long the loop's thread waited for a core
    since the last frame (``wait``: its total), up to all of it; all of it under a cgroup ``quota`` of fewer than
    three CPUs, or where ``wait`` says nothing and the process has fewer than three ``cpus``.

    >>> waits = iter([1.0, 1.25])
    >>> cost = HelperCost(quota=None, cpus=2.0, wait=lambda: next(waits))
    >>> cost.mark(); cost.before_frame()  # after a frame, and before the next: 0.25 s waited
    >>> cost.paid(0.5), cost.paid(0.5, all_of_it=True)
    (0.25, 0.5)
    """

    def __init__(self, quota: float | None, cpus: float, wait: Callable[[], float | None] = thread_wait_seconds):
        self.shares_quota = quota is not None and quota < HELPER_NEEDS_CPUS
        self.cpus = cpus
        self._wait = wait
        self._mark: tuple[int, float] | None = None  # (thread, its total wait) after the last frame
        self._waited: float | None = 0.0

    def mark(self) -> None:
        """A frame was made: the wait counts from now."""
        total = self._wait()
        self._mark = None if total is None else (threading.get_ident(), total)

    def forget(self) -> None:
        """A frame the helper did not make (the page drew it): the next one has nothing to compare with."""
        self._mark = None
        self._waited = None if self._waited is None else 0.0  # None: waits cannot be read here

    def before_frame(self) -> None:
        """Read the wait since :meth:`mark` (a frame's own wait is in its time). The first frame, or one made on
        another thread, has nothing to compare with."""
        total, mark = self._wait(), self._mark or (0, float("inf"))
        if total is None:
            self._waited = None
        else:
            self._waited = total - mark[1] if mark[0] == threading.get_ident() and total >= mark[1] else 0.0

    def paid(self, helper_seconds: float, all_of_it: bool = False) -> float:
        """The seconds of the helper's time for the last frame that the loop paid (``all_of_it``: torch trains)."""
        if all_of_it or self.shares_quota:
            return helper_seconds
        if self._waited is not None:
            return min(self._waited, helper_seconds)
        return helper_seconds if self.cpus < HELPER_NEEDS_CPUS else 0.0
