"""How many CPUs this process may use, as the operating system enforces it: whether a view's helper
process has a core of its own.

The count is the process's affinity (the CPUs it may run on), capped by a cgroup CPU quota: cgroup v2's
``cpu.max`` or v1's ``cpu.cfs_quota_us`` over ``cpu.cfs_period_us``, set on the process's own cgroup or
any above it. A container limited to 2 CPUs on a 64-core host has 2; so does ``taskset -c 0,1``.

>>> usable_cpus() >= 1
True
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path

__all__ = ["HELPER_NEEDS_CPUS", "cgroup_cpu_limit", "torch_fills_cpus", "usable_cpus"]

# A helper process has a core of its own from three CPUs: one runs the loop, one the helper, and a third
# is left for what serves the page (the Jupyter server, and the browser when it runs on the same machine).
HELPER_NEEDS_CPUS = 3


def usable_cpus(proc: str | os.PathLike[str] = "/proc", cgroups: str | os.PathLike[str] = "/sys/fs/cgroup") -> float:
    """The CPUs this process may use: its affinity, capped by a cgroup quota (may be fractional, e.g. 1.5).

    Args:
        proc: Where ``self/cgroup`` is read (a test's fake tree).
        cgroups: Where the cgroup file systems are mounted.

    Examples:
        >>> usable_cpus() <= (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count())
        True
    """
    allowed = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    limit = cgroup_cpu_limit(proc, cgroups)
    return float(allowed) if limit is None else min(float(allowed), limit)


def cgroup_cpu_limit(
    proc: str | os.PathLike[str] = "/proc", cgroups: str | os.PathLike[str] = "/sys/fs/cgroup"
) -> float | None:
    """The tightest CPU quota on this process's cgroups, in CPUs, or None where none is set (or readable).

    Examples:
        >>> import tempfile, pathlib
        >>> root = pathlib.Path(tempfile.mkdtemp())
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
        if hierarchy == "0" and controllers == "":
            limits += _limits_up_from(Path(cgroups), path, _v2_limit)
        elif "cpu" in controllers.split(","):
            mounted = next(
                (
                    Path(cgroups) / name
                    for name in (controllers, "cpu", "cpu,cpuacct")
                    if (Path(cgroups) / name).is_dir()
                ),
                None,
            )
            if mounted is not None:
                limits += _limits_up_from(mounted, path, _v1_limit)
    return min(limits, default=None)


def _limits_up_from(mount: Path, path: str, read: object) -> list[float]:
    """The quotas set on ``path`` and each cgroup above it, under ``mount``. In a container the process's
    own cgroup is the mount's root, whatever path the host gives it."""
    folder = mount / path.strip("/")
    if not folder.is_dir():
        folder = mount
    found = []
    while True:
        limit = read(folder)  # type: ignore[operator]
        if limit is not None:
            found.append(limit)
        if folder == mount or mount not in folder.parents:
            return found
        folder = folder.parent


def _v2_limit(folder: Path) -> float | None:
    try:
        quota, period = (folder / "cpu.max").read_text().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        return None


def _v1_limit(folder: Path) -> float | None:
    try:
        quota = int((folder / "cpu.cfs_quota_us").read_text())
        period = int((folder / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return None if quota <= 0 or period <= 0 else quota / period


def torch_fills_cpus(cpus: float | None = None) -> bool:
    """Whether torch, imported in this process, runs a thread on every core it may use (its default):
    while it trains, its threads meet at each parallel operation, and one that waits for a view's helper
    process holds up the others.

    Args:
        cpus: The CPUs the process may use (default: :func:`usable_cpus`).

    Examples:
        >>> import sys
        >>> torch_fills_cpus() == ("torch" in sys.modules and torch_fills_cpus())
        True
    """
    get_num_threads = getattr(sys.modules.get("torch"), "get_num_threads", None)
    if get_num_threads is None:
        return False
    cpus = usable_cpus() if cpus is None else cpus
    # a thread per physical core: half the logical CPUs where each core runs two
    return get_num_threads() >= max(1, math.floor(cpus / 2))
