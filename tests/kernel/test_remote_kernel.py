"""A script in a subprocess publishes its live view; a real IPython kernel attaches to it. Its view's frames
go out on IOPub as a LiveView's do, and the page's messages (sent here on the shell channel, as a front-end
sends them) steer the script: Pause holds its step counter, Play resumes it, Stop ends it."""

import queue
import secrets

import pytest
from published_runs import Script, free_port
from waiting import wait_until

pytestmark = [pytest.mark.kernel, pytest.mark.slow]


class PageOverKernel:
    """What a page does with the view's comm: reads its messages from IOPub, sends ready, acks and clicks."""

    def __init__(self, kernel, comm_id):
        self.kernel, self.comm_id = kernel, comm_id
        self.frames, self.states, self.modules = [], [], []
        self.clicks = 0

    def send(self, content):
        message = self.kernel.client.session.msg("comm_msg", {"comm_id": self.comm_id, "data": {"method": "custom",
                                                                                              "content": content}})
        self.kernel.client.shell_channel.send(message)

    def read(self):
        """Take what IOPub has for the view (never waits long); ack the newest frame."""
        while True:
            try:
                message = self.kernel.client.get_iopub_msg(timeout=0.05)
            except queue.Empty:
                break
            if message["header"]["msg_type"] != "comm_msg" or message["content"]["comm_id"] != self.comm_id:
                continue
            data = message["content"]["data"]
            content = data.get("content", {}) if data.get("method") == "custom" else {}
            if content.get("type") == "frame":
                self.frames.append((content, message["buffers"]))
            elif content.get("type") == "state":
                self.states.append(content)
            elif content.get("type") == "module":
                self.modules.append((content, message["buffers"]))
        if self.frames:
            self.send({"type": "ack", "seq": self.frames[-1][0]["seq"], "client": "kernel-test"})
        return True

    def click(self, action):
        self.clicks += 1
        click = f"kernel-test:{self.clicks}"
        self.send({"type": "control", "action": action, "id": click})
        wait_until(lambda: self.read() and any(click in state["heard"] for state in self.states), f"{action} heard")


def test_a_kernel_attached_to_a_script_shows_its_frames_and_steers_it(kernel, tmp_path):
    address, token = f"127.0.0.1:{free_port()}", secrets.token_urlsafe(12)
    folder = tmp_path / "script"
    folder.mkdir()
    script = Script(folder, "--publish", address, env={"GYMVIEW_TOKEN": token})
    try:
        shown = kernel.run(f"""
import gymview
view = gymview.attach({address!r}, token={token!r}, timeout=90)
print("COMM", view.comm.comm_id, view.run.pid)
""")
        assert shown.of_type("display_data"), "attach() shows the view"
        _, comm_id, pid = shown.stdout.split()
        assert int(pid) == script.process.pid
        page = PageOverKernel(kernel, comm_id)
        page.send({"type": "ready", "v": 2, "client": "kernel-test", "codecs": []})
        wait_until(lambda: page.read() and len(page.frames) > 5, "frames on IOPub")
        content, buffers = page.frames[-1]
        assert content["format"] == "jpeg" and bytes(buffers[0][:2]) == b"\xff\xd8"
        # A page without three.js asks for it: this notebook's gymview answers (the run never sends JavaScript).
        page.send({"type": "module", "name": "mujoco", "client": "kernel-test"})
        wait_until(lambda: page.read() and page.modules, "the module from this kernel")
        assert b"three" in bytes(page.modules[0][1][0]).lower()
        page.click("pause")
        wait_until(lambda: script.held, "the script's loop to be held")
        held = script.steps
        wait_until(lambda: page.read() and page.states[-1]["state"] == "paused", "the page to be told it is paused")
        assert script.steps == held
        page.click("play")
        wait_until(lambda: script.steps > held + 100, "the script to step again")
        page.click("stop")
        assert script.wait(60) == 0 and "STOPPED" in script.output()
        wait_until(lambda: page.read() and page.states[-1]["state"] == "ended", "the page to be told the run ended")
        threads = kernel.run("view.close()\nimport threading\n"
                             "print(sorted(t.name for t in threading.enumerate() if t.name.startswith('gymview')))")
        assert threads.stdout.strip() == "[]"
    finally:
        script.kill()
