"""Waiting in tests for something another thread or process does: a deadline for a hung test, never
a timing assertion."""

import time


def wait_until(condition, what="the condition", timeout=60.0, poll=0.005):
    """Poll ``condition()`` until it is true; fail naming ``what`` after ``timeout`` seconds (``what`` may be a
    function: its text is made at the failure, with the state things are in then)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout} s for: {what() if callable(what) else what}")
        time.sleep(poll)
