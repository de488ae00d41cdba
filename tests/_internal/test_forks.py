"""What a forked child forgets: every hook gymview registered runs in the child, in order, even after one fails."""

import subprocess
import sys

from gymview._internal.forks import after_fork_in_child, forked_child

CHILD = """
import os, sys
import gymview.remote.publisher, gymview.live.widget  # every module that keeps its parent's state
from gymview._internal import forks

ran = []
forks.after_fork_in_child(lambda: ran.append("first"))
@forks.after_fork_in_child
def broken():
    raise RuntimeError("a hook that fails")
forks.after_fork_in_child(lambda: ran.append("after the failure"))
reader, writer = os.pipe()
pid = os.fork()
if pid == 0:
    os.write(writer, f"{forks.forked_child()} {ran}".encode())
    os._exit(0)
os.waitpid(pid, 0)
print(os.read(reader, 1000).decode(), forks.forked_child())
print(sorted(hook.__module__ for hook in forks._in_child if hook.__module__.startswith("gymview")))
"""


def test_every_hook_runs_in_a_forked_child_in_order_and_a_failing_one_is_told_on_stderr():
    result = subprocess.run([sys.executable, "-c", CHILD], check=False, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    ran, modules = result.stdout.splitlines()
    assert ran == "True ['first', 'after the failure'] False", result.stdout
    assert modules == str(sorted(["gymview.live.controls", "gymview.live.encoding.drawn_here",
                                  "gymview.live.kernels.registry", "gymview.remote.publisher"])), modules
    assert "broken failed" in result.stderr and "a hook that fails" in result.stderr, result.stderr


def test_this_process_is_no_forked_child_and_a_hook_registers_as_a_decorator():
    def forget():
        pass

    assert after_fork_in_child(forget) is forget and not forked_child()
