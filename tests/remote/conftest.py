"""Fixtures for published runs (tests/helpers/published_runs.py): addresses, tokens, scripts, pages."""

from __future__ import annotations

import secrets

import pytest
from published_runs import FakePage, Script, free_port


@pytest.fixture
def address() -> str:
    return f"127.0.0.1:{free_port()}"


@pytest.fixture
def token(monkeypatch) -> str:
    """A token in GYMVIEW_TOKEN for this test (its scripts inherit it)."""
    value = secrets.token_urlsafe(12)
    monkeypatch.setenv("GYMVIEW_TOKEN", value)
    return value


@pytest.fixture
def scripts(tmp_path):
    """Start published scripts: ``scripts("--publish", address, ...)``; every one is killed at the end."""
    started = []

    def start(*args, **kwargs):
        folder = tmp_path / f"script-{len(started)}"
        folder.mkdir()
        started.append(Script(folder, *args, **kwargs))
        return started[-1]

    yield start
    for script in started:
        script.kill()


@pytest.fixture
def pages():
    """A stand-in page for each view given; the pages and their views are closed at the end, also after a
    failure (a view left open would keep its thread for the tests after it)."""
    made = []

    def attach(view, **kwargs):
        made.append(FakePage(view, **kwargs))
        return made[-1]

    yield attach
    for page in made:
        page.close()
        page.view.close()

