"""PageRequests' status messages: a message answered while a cell runs is done for the page once an
idle names it; busy follows only while the cell still runs (its own idle must stay the last).
The requests themselves are answered in a real kernel: tests/kernel/test_page_requests_kernel.py."""

from types import SimpleNamespace

import pytest

from gymview.live.kernels.page_requests import PageRequests


class Kernel:
    """What PageRequests sends statuses through: a session that records, an IOPub socket, topics."""

    def __init__(self):
        self.statuses = []
        self.iopub_socket = object()
        self.session = SimpleNamespace(send=self._send)

    def _send(self, stream, msg_type, content=None, parent=None, ident=None):
        assert stream is self.iopub_socket and msg_type == "status" and ident == b"kernel.status"
        self.statuses.append((content["execution_state"], parent["header"]["msg_id"]))

    def _topic(self, name):
        return f"kernel.{name}".encode()


@pytest.mark.parametrize("cell_runs, statuses", [(True, [("idle", "click"), ("busy", "cell")]),
                                                  (False, [("idle", "click")])])
def test_a_handled_message_gets_its_idle_then_busy_while_the_cell_runs(cell_runs, statuses):
    kernel = Kernel()
    answers = PageRequests(kernel, reply_stream=None, busy=lambda: cell_runs)
    answers.running_cell = {"header": {"msg_id": "cell", "msg_type": "execute_request"}}
    answers.done({"header": {"msg_id": "click", "msg_type": "comm_msg"}, "content": {}})
    assert kernel.statuses == statuses
