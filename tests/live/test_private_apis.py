"""Each private API of ipykernel, ipywidgets and marimo that the live view uses, removed: the view degrades
as docs/architecture.md says, with one warning that names what is missing."""

import sys
import threading
import warnings
from types import SimpleNamespace

import ipywidgets
import pytest
from live_helpers import ShownView, feed_of

from gymview._internal import private_apis
from gymview.live.kernels import ipykernel6_poller, marimo_cell, page_requests
from gymview.live.kernels.marimo_poller import MarimoCommPoller
from gymview.live.kernels.page_requests import PageRequests, answer_on_shell_channel


@pytest.fixture(autouse=True)
def fresh_warnings(monkeypatch):
    """Each test starts in a process that has warned of nothing yet."""
    monkeypatch.setattr(private_apis, "_warned", set())


def warned(action):
    """Run ``action`` twice; the warnings it gave, by text."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = [action(), action()]
    return results, [str(warning.message) for warning in caught if warning.category is RuntimeWarning]


class Kernel:
    """The parts of an ipykernel Kernel that PageRequests reaches, recording the statuses it sends."""

    def __init__(self, **parts):
        self.sent = []
        self.iopub_socket = object()
        self.ident = "k1"
        self.session = SimpleNamespace(send=lambda *args, **kwargs: self.sent.append(kwargs.get("ident")))
        self.__dict__.update(parts)


@pytest.mark.parametrize("missing", ["get_shell_channel_to_subshell_socket", "_main_asyncio_lock"])
def test_without_the_subshell_route_pages_wait_for_the_cell_and_one_warning_says_so(monkeypatch, missing):
    route = {"get_shell_channel_to_subshell_socket": lambda subshell: None} if missing == "_main_asyncio_lock" else {}
    kernel = Kernel(shell_channel_thread=SimpleNamespace(manager=SimpleNamespace(**route)), comm_manager=object(),
                    shell_stream=object())
    if missing != "_main_asyncio_lock":
        kernel._main_asyncio_lock = threading.Lock()
    monkeypatch.setattr(page_requests, "ipython_shell", lambda: SimpleNamespace(kernel=kernel))
    results, texts = warned(answer_on_shell_channel)
    assert results == [None, None]
    assert len(texts) == 1 and f"{missing} is missing" in texts[0]


def test_without_kernel_topic_the_status_goes_out_on_the_topic_ipykernel_uses():
    kernel = Kernel()
    PageRequests(kernel, None, busy=lambda: False).done({"header": {"msg_id": "m", "msg_type": "comm_msg"}})
    assert kernel.sent == [b"kernel.k1.status"]


def test_without_ipywidgets_control_handler_a_loading_page_waits_for_the_cell(monkeypatch):
    monkeypatch.delattr(ipywidgets.Widget, "_handle_control_comm_msg")
    answers = PageRequests(Kernel(), None, busy=lambda: True)
    results, texts = warned(lambda: answers.wants("comm_open", {"target_name": "jupyter.widget.control"}))
    assert results == [False, False] and len(texts) == 1 and "_handle_control_comm_msg" in texts[0]


def test_without_the_widgets_own_handler_a_click_goes_through_the_comm(monkeypatch):
    view = ShownView()
    feed = feed_of(view)
    monkeypatch.delattr(ipywidgets.Widget, "_handle_msg")  # the view's comm keeps its handler: the fallback
    answers = PageRequests(Kernel(), None, busy=lambda: True)
    click = {"header": {"msg_id": "c", "msg_type": "comm_msg"}, "buffers": [],
             "content": {"comm_id": view.comm.comm_id,
                         "data": {"method": "custom", "content": {"type": "control", "action": "pause", "id": 1}}}}
    _, texts = warned(lambda: answers.answer([], click))
    view.close()
    assert feed.controls.state == "paused" and len(texts) == 1 and "Widget._handle_msg" in texts[0]


def test_an_ipykernel_6_without_its_queue_gets_no_poller_and_one_warning(monkeypatch):
    monkeypatch.setitem(sys.modules, "ipykernel", SimpleNamespace(__version__="6.29.5"))
    monkeypatch.setattr(ipykernel6_poller, "ipython_shell", lambda: SimpleNamespace(kernel=Kernel()))
    results, texts = warned(ipykernel6_poller.Ipykernel6CommPoller.for_this_kernel)
    assert results == [None, None] and len(texts) == 1 and "msg_queue" in texts[0]


def test_a_marimo_whose_control_loop_is_laid_out_otherwise_gets_no_poller_and_one_warning(monkeypatch):
    from gymview.live.kernels import marimo_poller

    monkeypatch.setattr(marimo_poller, "in_marimo", lambda: True)  # a marimo cell, with no control loop on its stack
    results, texts = warned(MarimoCommPoller.for_this_kernel)
    assert results == [None, None] and len(texts) == 1 and "listen_messages" in texts[0]


def test_a_marimo_without_cell_lifecycles_shows_the_view_and_warns_once(monkeypatch):
    marimo = pytest.importorskip("marimo")
    shown = []
    monkeypatch.setattr(marimo.output, "append", shown.append)
    monkeypatch.setitem(sys.modules, "marimo._runtime.cell_lifecycle_item", None)  # the import fails
    _, texts = warned(lambda: marimo_cell.show_in_cell("view", on_cell_end=lambda: None))
    assert shown == ["view", "view"] and len(texts) == 1 and "cell_lifecycle_item" in texts[0]


def test_outside_marimo_no_warning_is_given():
    assert warned(MarimoCommPoller.for_this_kernel) == ([None, None], [])


def test_every_private_api_has_its_versions_and_its_fallback_in_the_architecture_map():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "architecture.md").read_text()
    for api, (tested, _) in private_apis.PRIVATE_APIS.items():
        assert api in text and tested in text, api


def test_without_gymnasiums_spec_lookup_a_human_env_by_exact_id_still_shows_inline(monkeypatch):
    import gymnasium
    import gymnasium.envs.registration

    from gymview import human

    monkeypatch.delattr(gymnasium.envs.registration, "_find_spec")
    made = []

    def make(env_id, *args, **kwargs):
        made.append((env_id if isinstance(env_id, str) else env_id.id, kwargs.get("render_mode")))
        return gymnasium.make(env_id, **kwargs) if kwargs.get("render_mode") == "rgb_array" else "made as asked"

    shown = lambda env: env  # noqa: E731
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        inline = human._make_inline(make, shown, "CartPole-v1", render_mode="human")
        asked = human._make_inline(make, shown, "CartPole", render_mode="human")  # no version: made as asked
    texts = [str(warning.message) for warning in caught if warning.category is RuntimeWarning]
    inline.close()
    assert isinstance(inline, human.InlineHuman) and asked == "made as asked"
    assert made == [("CartPole-v1", "rgb_array"), ("CartPole", "human")]
    assert len(texts) == 1 and "_find_spec" in texts[0]


def test_without_pyvirtualdisplays_start_hook_xvfb_starts_its_own_way(monkeypatch):
    pytest.importorskip("pyvirtualdisplay")
    from pyvirtualdisplay.abstractdisplay import AbstractDisplay

    from gymview.headless import virtual_display

    monkeypatch.delattr(AbstractDisplay, "_popen")
    results, texts = warned(virtual_display._xvfb_display_class)
    assert [cls.__name__ for cls in results] == ["PlainXvfbDisplay"] * 2
    assert len(texts) == 1 and "_popen" in texts[0]
