"""A script in a subprocess publishes its live view; a real IPython kernel attaches to it. Its view's frames
go out on IOPub as a LiveView's do, and the page's messages (sent here on the shell channel, as a front-end
sends them) steer the script: Pause holds its step counter, Play resumes it, Stop ends it."""

import base64
import io
import queue
import secrets

import pytest
from PIL import Image
from published_runs import Script, free_port
from waiting import wait_until

pytestmark = [pytest.mark.kernel, pytest.mark.slow]


class PageOverKernel:
    """What a page does with the view's comm: reads its messages from IOPub, sends ready, acks and clicks."""

    def __init__(self, kernel, comm_id):
        self.kernel, self.comm_id = kernel, comm_id
        self.frames, self.states, self.modules = [], [], []
        self.updates = []  # update_display_data: what a saved notebook shows in the view's place
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
            if message["header"]["msg_type"] == "update_display_data":
                self.updates.append(message["content"])
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

    def sent_as(self, image_format):
        """The headers of the frames that came as ``image_format``. A page that says it is ready gets the
        latest frame again as a picture, which may come after scene frames relayed before the run heard it."""
        return [content for content, _ in self.frames if content["format"] == image_format]

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


def still(update):
    """The still image of an update_display_data: (its size, whether the live widget is still beside it)."""
    image = Image.open(io.BytesIO(base64.b64decode(update["data"]["image/jpeg"])))
    assert image.getextrema() != ((0, 0), (0, 0), (0, 0)), "a picture, not a black frame"
    return image.size, "application/vnd.jupyter.widget-view+json" in update["data"]


@pytest.mark.parametrize("draw, codecs", [("kernel", []), ("page", ["webgl"])])
def test_an_attached_view_leaves_the_runs_last_frame_as_a_still_image(kernel, tmp_path, draw, codecs):
    address, token = f"127.0.0.1:{free_port()}", secrets.token_urlsafe(12)
    folder = tmp_path / "script"
    folder.mkdir()
    script = Script(folder, "--publish", address, "--draw", draw, env={"GYMVIEW_TOKEN": token})
    try:
        shown = kernel.run(f"import gymview\nview = gymview.attach({address!r}, token={token!r}, timeout=90)\n"
                           "print(view.comm.comm_id)")
        display_id = shown.of_type("display_data")[0]["content"]["transient"]["display_id"]
        page = PageOverKernel(kernel, shown.stdout.strip())
        page.send({"type": "ready", "v": 2, "client": "kernel-test", "codecs": codecs})
        drawn_as = "jpeg" if draw == "kernel" else "scene"
        wait_until(lambda: page.read() and len(page.sent_as(drawn_as)) > 5, f"{drawn_as} frames on IOPub")
        header = page.sent_as(drawn_as)[-1]
        if draw == "kernel":
            assert not page.sent_as("scene")
        assert not page.updates, "while the run is shown, the view is live"
        page.click("stop")
        assert script.wait(60) == 0
        # The run ended: the view stays, and beside it the last frame as a picture, for a saved notebook
        wait_until(lambda: page.read() and page.updates, "the view's output to get the last frame")
        update = page.updates[-1]
        assert update["transient"]["display_id"] == display_id
        assert still(update) == ((header["width"], header["height"]), True)
        (closed,) = kernel.run("view.close()").of_type("update_display_data")  # the cell's own output
        assert still(closed["content"]) == ((header["width"], header["height"]), False)
    finally:
        script.kill()


def test_a_view_closed_while_its_run_goes_on_leaves_its_last_frame(kernel, tmp_path):
    address, token = f"127.0.0.1:{free_port()}", secrets.token_urlsafe(12)
    folder = tmp_path / "script"
    folder.mkdir()
    script = Script(folder, "--publish", address, "--draw", "page", env={"GYMVIEW_TOKEN": token})
    try:
        shown = kernel.run(f"import gymview\nview = gymview.attach({address!r}, token={token!r}, timeout=90)\n"
                           "print(view.comm.comm_id)")
        page = PageOverKernel(kernel, shown.stdout.strip())
        page.send({"type": "ready", "v": 2, "client": "kernel-test", "codecs": ["webgl"]})
        wait_until(lambda: page.read() and len(page.sent_as("scene")) > 5, "scene frames on IOPub")
        (closed,) = kernel.run("view.close()").of_type("update_display_data")
        header = page.sent_as("scene")[-1]
        assert still(closed["content"]) == ((header["width"], header["height"]), False)
        steps = script.steps
        wait_until(lambda: script.steps > steps + 100, "the run to go on")
    finally:
        script.kill()
