"""A page that loads while a cell runs a watched loop (a reload, a second tab) gets what it asks for at
once: kernel_info, the comm list, every widget's state, and its view's answer to "ready". Every other
message waits for the cell, in its order. The page is a second jupyter_client client of a real kernel."""

import queue
import threading
import time

import pytest
from jupyter_client import BlockingKernelClient
from conftest import running_kernel
from test_controls_kernel import wait_until
from test_ipykernel6 import ipykernel6  # noqa: F401 - the fixture

pytestmark = [pytest.mark.kernel, pytest.mark.slow]

SETUP = """
import os, time, gymnasium as gym, gymview, ipywidgets
slider = ipywidgets.IntSlider(value=1)
order = []
env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"))
env.reset(seed=0)
"""
LOOP = """
seen = []
env.reset(seed=0)
print("LOOPING", flush=True)
while not os.path.exists({stop!r}):
    for _ in range(50):
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
    if slider.value != 1:
        seen.append(slider.value)
order.append("loop")
print("SLIDER DURING THE LOOP", seen)
"""


class Page:
    """A second client of the kernel: what a reloaded page or a second tab is to it. It reads its
    channels directly: the client's get_*_msg share one event loop, which two threads cannot."""

    def __init__(self, manager):
        # Its own session: one shared with the first client would refuse the IOPub messages both
        # receive as replays.
        self.client = BlockingKernelClient(connection_file=manager.connection_file)
        self.client.load_connection_file()
        self.client.start_channels()
        self.iopub: list[dict] = []
        self._stop = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        while not self._stop.is_set():
            try:
                self.iopub.append(self.client.iopub_channel.get_msg(timeout=0.2))
            except queue.Empty:
                continue

    def send(self, msg_type, content, metadata=None):
        message = self.client.session.msg(msg_type, content, metadata=metadata or {})
        self.client.shell_channel.send(message)
        return message["header"]["msg_id"]

    def reply_to(self, msg_id, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                reply = self.client.shell_channel.get_msg(timeout=0.5)
            except queue.Empty:
                continue
            if reply["parent_header"].get("msg_id") == msg_id:
                return reply
        raise TimeoutError(f"no reply to {msg_id} within {timeout} s")

    def statuses(self, msg_id):
        return [m["content"]["execution_state"] for m in list(self.iopub)
                if m["header"]["msg_type"] == "status" and m["parent_header"].get("msg_id") == msg_id]

    def latest_status(self):
        statuses = [m["content"]["execution_state"] for m in list(self.iopub) if m["header"]["msg_type"] == "status"]
        return statuses[-1] if statuses else None

    def comm_messages(self, comm_id):
        return [m["content"]["data"] for m in list(self.iopub)
                if m["header"]["msg_type"] == "comm_msg" and m["content"]["comm_id"] == comm_id]

    def close(self):
        self._stop.set()
        self._reader.join(5)
        self.client.stop_channels()


@pytest.mark.parametrize("kernel_name", ["python3", "ipykernel6"])
def test_a_page_loading_during_a_blocking_loop_gets_its_answers_and_other_messages_wait(repo_root, tmp_path, request, kernel_name):
    """ipykernel 7 answers on its shell-channel thread; ipykernel 6 when the watched loop looks for its
    view's messages."""
    if kernel_name == "ipykernel6":
        kernel_name = request.getfixturevalue("ipykernel6")
    stop = tmp_path / "stop"
    with running_kernel(str(repo_root), cwd=str(tmp_path), kernel_name=kernel_name) as kernel:
        kernel.run(SETUP)
        ids = kernel.run("print(env.view.comm.comm_id, env.view.model_id, slider.model_id)").stdout.split()
        view_comm, view_model, slider_model = ids
        page = Page(kernel.manager)
        checks = {}

        def as_a_new_page():
            try:
                info = page.send("kernel_info_request", {})
                checks["kernel_info"] = page.reply_to(info)["content"]
                wait_until(lambda: page.statuses(info) == ["busy", "idle"] and page.latest_status() == "busy",
                           "busy and idle for the request, then busy again: the cell still runs")
                comms = page.reply_to(page.send("comm_info_request", {"target_name": "jupyter.widget"}))
                checks["comms"] = comms["content"]["comms"]
                control = "control-comm-of-the-page"
                answered = [page.send("comm_open", {"comm_id": control, "target_name": "jupyter.widget.control",
                                                    "data": {}}, metadata={"version": "1.0.0"}),
                            page.send("comm_msg", {"comm_id": control, "data": {"method": "request_states"}})]
                wait_until(lambda: page.comm_messages(control), "the widgets' states")
                checks["states"] = page.comm_messages(control)[0]
                answered.append(page.send("comm_close", {"comm_id": control, "data": {}}))
                answered.append(page.send("comm_msg", {"comm_id": view_comm, "data": {"method": "custom", "content": {
                    "type": "ready", "v": 2, "client": "second-page"}}}))
                wait_until(lambda: any(d.get("content", {}).get("type") == "state" for d in page.comm_messages(view_comm)),
                           "the view's answer to ready")
                # A page keeps each message it sent until an idle names it (JupyterLab's kernel futures).
                wait_until(lambda: all("idle" in page.statuses(msg_id) for msg_id in answered),
                           "an idle for each comm message answered")
                wait_until(lambda: page.latest_status() == "busy", "busy again: the cell still runs")
                # Another widget's message, and a cell, wait for the running cell, in their order.
                page.send("comm_msg", {"comm_id": slider_model, "data": {"method": "update", "state": {"value": 7},
                                                                         "buffer_paths": []}})
                checks["queued cell"] = page.send("execute_request", {"code": "order.append('queued')", "silent": False})
            except BaseException as error:
                checks["failure"] = error
            finally:
                stop.write_text("")

        helper = threading.Thread(target=as_a_new_page, daemon=True)
        result = kernel.execute(LOOP.format(stop=str(stop)), timeout=180, until_text="LOOPING", on_text=helper.start)
        helper.join(60)
        try:
            assert "failure" not in checks, checks.get("failure")
            assert result.error is None, result.error
            assert checks["kernel_info"]["status"] == "ok" and "language_info" in checks["kernel_info"]
            assert view_comm in checks["comms"] and slider_model in checks["comms"]
            states = checks["states"]
            assert states["method"] == "update_states" and {view_model, slider_model} <= set(states["states"])
            assert "SLIDER DURING THE LOOP []" in result.stdout  # its update waited for the cell
            assert page.reply_to(checks["queued cell"])["content"]["status"] == "ok"
            assert kernel.run("print(order, slider.value)").stdout.strip() == "['loop', 'queued'] 7"
            assert "could not answer" not in kernel.log()
        finally:
            page.close()
