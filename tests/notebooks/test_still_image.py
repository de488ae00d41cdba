"""A saved notebook keeps the picture: stopped views leave their last frame as an image that
nbconvert (and GitHub, and a notebook opened without a kernel) shows."""

import os
import pathlib

import nbformat
import pytest
from nbclient import NotebookClient
from nbconvert import HTMLExporter

REPO = pathlib.Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.kernel, pytest.mark.slow]

CELLS = [
    """import gymnasium as gym, gymview
env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"))
run = gymview.play(env, lambda obs: int(obs[2] > 0), episodes=1, speed="max", seed=0)
run.wait()""",
    """car = gymview.watch(gym.make("MountainCar-v0", render_mode="rgb_array"))
car.reset(seed=0)
for _ in range(30):
    car.step(2)
car.close()""",
]


def test_nbconvert_html_shows_the_last_frame_of_ended_runs_and_closed_views(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in CELLS])
    # Saved as JupyterLab saves by default: without the widgets' state (Settings > Save Widget State).
    NotebookClient(notebook, timeout=300, kernel_name="python3", store_widget_state=False,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    played, closed = (cell.outputs[0]["data"] for cell in notebook.cells)
    # The ended run keeps its live widget (a page with the kernel draws it) and gains the picture.
    assert "application/vnd.jupyter.widget-view+json" in played and "image/jpeg" in played
    assert "image/jpeg" in closed and "application/vnd.jupyter.widget-view+json" not in closed
    path = tmp_path / "saved.ipynb"
    nbformat.write(notebook, path)
    html, _ = HTMLExporter().from_filename(str(path))
    assert html.count('src="data:image/jpeg;base64,') == 2


PLAYER = """import gymnasium as gym, gymview
env = gymview.RecordVideo(gym.make("CartPole-v1", render_mode="rgb_array"), "videos")
env.reset(seed=0)
for step in range(30):
    env.step(step % 2)
env.close()
gymview.show_episode("videos/rl-video-episode-0.mp4")"""


def test_a_saved_notebook_shows_the_episode_player_s_first_frame_and_charts(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(PLAYER)])
    NotebookClient(notebook, timeout=300, kernel_name="python3", store_widget_state=False,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    (data,) = [output["data"] for output in notebook.cells[0].outputs if output.get("output_type") == "execute_result"]
    # the player (a page with the kernel draws it) and its picture (what nbconvert, GitHub, this site show)
    assert "application/vnd.jupyter.widget-view+json" in data and "image/png" in data
    path = tmp_path / "saved.ipynb"
    nbformat.write(notebook, path)
    html, _ = HTMLExporter().from_filename(str(path))
    assert f'src="data:image/png;base64,{data["image/png"]}' in html.replace("\n", "")
