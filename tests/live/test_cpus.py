"""The CPUs a process may use follow its affinity and its cgroup's quota (v1 and v2), not the host's cores."""

import os

import pytest

from gymview.live.pacing.cpus import HelperCost, cgroup_cpu_limit, thread_wait_seconds, usable_cpus


def fake_system(tmp_path, cgroup_lines, files):
    """A /proc/self/cgroup and a cgroup mount, as a test writes them."""
    proc, mount = tmp_path / "proc", tmp_path / "sys-fs-cgroup"
    (proc / "self").mkdir(parents=True)
    (proc / "self" / "cgroup").write_text("".join(line + "\n" for line in cgroup_lines))
    for path, text in files.items():
        (mount / path).parent.mkdir(parents=True, exist_ok=True)
        (mount / path).write_text(text)
    mount.mkdir(exist_ok=True)
    return proc, mount


@pytest.mark.parametrize("cgroup_lines, files, limit", [
    # cgroup v2: a quota on the process's own group, on a group above it, none at all
    (["0::/user.slice/job"], {"user.slice/job/cpu.max": "200000 100000\n"}, 2.0),
    (["0::/user.slice/job"], {"user.slice/cpu.max": "50000 100000\n", "user.slice/job/cpu.max": "max 100000\n"}, 0.5),
    (["0::/user.slice/job"], {"user.slice/job/cpu.max": "max 100000\n"}, None),
    # a container: its own group is the mount's root, whatever path the host gives it
    (["0::/docker/0123abcd"], {"cpu.max": "150000 100000\n"}, 1.5),
    # cgroup v1: the cpu controller mounted with cpuacct; -1 is no quota
    (["12:memory:/job", "4:cpu,cpuacct:/job"],
     {"cpu,cpuacct/job/cpu.cfs_quota_us": "300000\n", "cpu,cpuacct/job/cpu.cfs_period_us": "100000\n"}, 3.0),
    (["4:cpu,cpuacct:/job"],
     {"cpu,cpuacct/job/cpu.cfs_quota_us": "-1\n", "cpu,cpuacct/job/cpu.cfs_period_us": "100000\n"}, None),
    # a hybrid system: v1's cpu controller beside the unified hierarchy; and cpuacct named first
    (["4:cpu,cpuacct:/job", "0::/job"],
     {"cpu,cpuacct/job/cpu.cfs_quota_us": "200000\n", "cpu,cpuacct/job/cpu.cfs_period_us": "100000\n"}, 2.0),
    (["4:cpuacct,cpu:/"], {"cpu/cpu.cfs_quota_us": "50000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 0.5),
    # unreadable or odd files count as no quota
    (["0::/job"], {"job/cpu.max": "garbage\n"}, None),
])
def test_the_tightest_cgroup_quota_is_the_limit(tmp_path, cgroup_lines, files, limit):
    proc, mount = fake_system(tmp_path, cgroup_lines, files)
    assert cgroup_cpu_limit(proc, mount) == limit


def test_no_cgroup_file_means_no_limit(tmp_path):
    assert cgroup_cpu_limit(tmp_path / "no-proc", tmp_path) is None


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="affinity is a Linux feature")
def test_usable_cpus_is_the_affinity_capped_by_the_quota(tmp_path):
    mask = os.sched_getaffinity(0)
    allowed = len(mask)
    proc, mount = fake_system(tmp_path, ["0::/job"], {"job/cpu.max": "50000 100000\n"})
    assert usable_cpus(proc, mount) == 0.5
    proc, mount = fake_system(tmp_path / "wide", ["0::/job"], {"job/cpu.max": f"{allowed * 200000} 100000\n"})
    assert usable_cpus(proc, mount) == allowed  # a quota above the CPUs it may run on changes nothing
    os.sched_setaffinity(0, {min(mask)})
    try:
        assert usable_cpus(tmp_path / "no-proc", tmp_path) == 1
    finally:
        os.sched_setaffinity(0, mask)


def test_the_loop_pays_for_the_helper_as_far_as_its_thread_waited_for_a_core():
    readings = iter([5.0, 5.0, 5.5, 5.5, 5.502])
    cost = HelperCost(quota=None, cpus=2.0, wait=lambda: next(readings))
    cost.before_frame()  # the first frame compares with nothing
    assert cost.paid(0.01) == 0.0
    cost.mark()  # 5.0
    cost.before_frame()  # 5.5: half a second waited (a machine busy with other work)
    assert cost.paid(0.01) == 0.01  # no more than the helper's time
    cost.mark()
    cost.before_frame()  # 2 ms waited
    assert cost.paid(0.01) == pytest.approx(0.002)


def test_a_wait_read_on_another_thread_compares_with_nothing():
    import threading

    readings = iter([1.0, 9.0])
    cost = HelperCost(quota=None, cpus=2.0, wait=lambda: next(readings))
    marker = threading.Thread(target=cost.mark)
    marker.start()
    marker.join()
    cost.before_frame()
    assert cost.paid(0.01) == 0.0


def test_the_wait_for_a_core_is_read_where_linux_says_it():
    waited = thread_wait_seconds()
    assert waited is None or waited >= 0.0
    if os.path.exists("/proc/thread-self/schedstat"):
        assert waited is not None
