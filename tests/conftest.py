import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def repo_root() -> pathlib.Path:
    return ROOT


@pytest.fixture
def shown():
    """Make LiveViews as a notebook shows them (see live_helpers.ShownView); closed afterwards."""
    from live_helpers import ShownView

    views = []

    def make(**kwargs):
        views.append(ShownView(**kwargs))
        return views[-1]

    yield make
    for view in views:
        view.close()
