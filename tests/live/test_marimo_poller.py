"""MarimoCommPoller against marimo's own queue and batcher: a view's messages are handled once,
from inside the cell; everything else still reaches marimo's kernel after it, in order."""

from __future__ import annotations

import queue
import threading

import pytest

from gymview.live.marimo_poller import MarimoCommPoller

commands = pytest.importorskip("marimo._runtime.commands")
batching = pytest.importorskip("marimo._runtime.utils.set_ui_element_request_manager")


def custom(model_id: str, content: dict) -> object:
    return commands.ModelCommand(model_id=model_id, message=commands.ModelCustomMessage(content=content), buffers=[])


def kernel_queues():
    """marimo's two queues (each command goes on both) and the batcher that drains the second."""
    control, ui = queue.Queue(), queue.Queue()

    def enqueue(command):
        control.put(command)
        ui.put(command)

    return control, ui, batching.SetUIElementRequestManager(ui), enqueue


def test_a_views_messages_are_handled_in_the_cell_and_skipped_by_the_kernel_after_it():
    control, ui, batcher, enqueue = kernel_queues()
    click = custom("view", {"type": "control", "action": "pause", "id": "p:1"})
    other_widget = custom("other", {"hello": 1})
    state = commands.ModelCommand(model_id="view", message=commands.ModelUpdateMessage(state={"fps": 10}, buffer_paths=[]),
                                  buffers=[])
    slider = commands.UpdateUIElementCommand(object_ids=["slider"], values=[3])
    for command in (click, other_widget, state, slider):
        enqueue(command)
    heard = []
    poller = MarimoCommPoller(batcher, threading.get_ident())

    assert poller.deliver({"view": heard.append}) == 1
    assert heard == [{"type": "control", "action": "pause", "id": "p:1"}]
    # After the cell, marimo's control loop reads the control queue: the click is not handled twice,
    # every other command is, in the order it came.
    after = []
    while not control.empty():
        after += batcher.process_request(control.get_nowait())
    assert [what(command) for command in after] == [what(other_widget), what(state), what(slider)]


def what(command) -> tuple:
    """A command without its token (marimo's batcher gives merged state updates a new one)."""
    if isinstance(command, commands.ModelCommand):
        return command.model_id, command.message
    return tuple(command.object_ids), tuple(command.values)


def test_it_delivers_only_on_the_thread_that_runs_the_cells():
    control, ui, batcher, enqueue = kernel_queues()
    enqueue(custom("view", {"type": "ack", "seq": 3}))
    poller = MarimoCommPoller(batcher, threading.get_ident() + 1)
    assert poller.deliver({"view": lambda content: None}) == 0
    assert ui.qsize() == 1  # left for the kernel, which is free when a loop runs in another thread


def test_a_handler_that_fails_leaves_the_loop_running():
    control, ui, batcher, enqueue = kernel_queues()
    enqueue(custom("view", {"type": "ack", "seq": 3}))
    poller = MarimoCommPoller(batcher, threading.get_ident())

    def broken(content):
        raise ValueError("a bug in a handler")

    assert poller.deliver({"view": broken}) == 1


def test_outside_a_marimo_kernel_there_is_no_poller():
    assert MarimoCommPoller.for_this_kernel() is None
