import pytest
from live_helpers import STREAMERS


@pytest.fixture(autouse=True)
def stop_streamers():
    """Stop every streamer a test made, even one that failed: no encoder process outlives its test."""
    yield
    while STREAMERS:
        STREAMERS.pop().stop()
