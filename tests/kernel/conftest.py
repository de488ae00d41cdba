"""A real IPython kernel (jupyter_client) and a reader of everything it publishes on IOPub."""

import contextlib
import os
import queue
import time
from dataclasses import dataclass, field

import pytest
from jupyter_client import KernelManager


@dataclass
class Execution:
    """What one execute request published: its IOPub messages with their arrival times."""

    messages: list = field(default_factory=list)
    stdout: str = ""
    error: str | None = None
    reply: dict = field(default_factory=dict)  # the shell reply's content: status, ename, ...
    # comm messages published meanwhile under another parent (e.g. a click handled on a subshell)
    other_comm: list = field(default_factory=list)

    def of_type(self, msg_type):
        return [m for _, m in self.messages if m["header"]["msg_type"] == msg_type]

    def custom_frames(self):
        """(arrival time, content, buffers) of every LiveView frame message."""
        frames = []
        for arrived, msg in self.messages:
            if msg["header"]["msg_type"] != "comm_msg":
                continue
            data = msg["content"]["data"]
            if data.get("method") == "custom" and data.get("content", {}).get("type") == "frame":
                frames.append((arrived, data["content"], msg["buffers"]))
        return frames


class Kernel:
    def __init__(self, manager, client, log_path=None):
        self.manager = manager
        self.client = client
        self.log_path = log_path  # the kernel process's stderr: its own log lines land here

    def log(self) -> str:
        return self.log_path.read_text() if self.log_path is not None else ""

    def execute(self, code: str, timeout: float = 120, until_text: str | None = None, on_text=None,
                on_message=None) -> Execution:
        """Run ``code``; once ``until_text`` appears on stdout, call ``on_text()`` (once); every IOPub
        message that arrives meanwhile also goes to ``on_message(msg)``."""
        msg_id = self.client.execute(code)
        result = Execution()
        fired = False
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"kernel did not finish within {timeout} s:\n{code}")
            try:
                msg = self.client.get_iopub_msg(timeout=remaining)
            except queue.Empty:
                continue
            if on_message is not None:
                on_message(msg)
            if msg["parent_header"].get("msg_id") != msg_id:
                if msg["header"]["msg_type"] == "comm_msg":
                    result.other_comm.append((time.monotonic(), msg))
                continue
            result.messages.append((time.monotonic(), msg))
            kind = msg["header"]["msg_type"]
            if kind == "stream" and msg["content"]["name"] == "stdout":
                result.stdout += msg["content"]["text"]
                if until_text and until_text in result.stdout and not fired:
                    fired = True
                    on_text()
            elif kind == "error":
                result.error = "\n".join(msg["content"]["traceback"])
            elif kind == "status" and msg["content"]["execution_state"] == "idle":
                result.reply = self._reply_to(msg_id, timeout)
                return result

    def _reply_to(self, msg_id: str, timeout: float) -> dict:
        while True:  # skip replies to other requests (wait_for_ready's kernel_info, for one)
            reply = self.client.get_shell_msg(timeout=timeout)
            if reply["parent_header"].get("msg_id") == msg_id:
                return reply["content"]

    def run(self, code: str, timeout: float = 120) -> Execution:
        """Execute and fail the test with the kernel's traceback if the code raised."""
        result = self.execute(code, timeout)
        if result.error:
            pytest.fail(f"kernel raised:\n{result.error}")
        return result


@contextlib.contextmanager
def running_kernel(pythonpath: str, cwd: str | None = None, log_path=None, kernel_name: str = "python3",
                   **variables: str):
    """A real IPython kernel importing gymview from ``pythonpath`` (and with ``variables`` set),
    shut down on exit; its stderr goes to ``log_path`` when given. Tests and benchmarks both
    start kernels through this."""
    env = dict(os.environ, PYTHONPATH=pythonpath, **variables)
    log = open(log_path, "w") if log_path is not None else None  # noqa: SIM115 - closed below
    manager = KernelManager(kernel_name=kernel_name)
    manager.start_kernel(env=env, cwd=cwd, **({"stderr": log} if log is not None else {}))
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=60)
        yield Kernel(manager, client, log_path)
    finally:
        client.stop_channels()
        if manager.is_alive():
            manager.shutdown_kernel(now=True)
        if log is not None:
            log.close()


@pytest.fixture
def kernel(repo_root, tmp_path):
    log_path = tmp_path / "kernel-stderr.log"
    with running_kernel(str(repo_root), cwd=str(tmp_path), log_path=log_path, MPLBACKEND="agg") as started:
        yield started
