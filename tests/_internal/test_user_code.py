"""An error raised by the user's code in a worker process names the user's file and line, whichever
cloudpickle is installed (3.1.3 and later send a function's code with ``<dynamic-code>`` as its file)."""

import json
import re
import subprocess
import sys
import textwrap
from importlib import metadata

import gymnasium as gym
import numpy as np
import pytest

from gymview.video.batch import record_batch

SCRIPT = '''\
import concurrent.futures, json, multiprocessing, sys
import gymview
def policy(observation):
    raise ValueError("policy bug")
if __name__ == "__main__":
    spawned = concurrent.futures.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn"))
    errors = [gymview.record_batch("CartPole-v1", policy, episodes=1, out=sys.argv[1], workers=1, progress=False).table[0]["error"],
              gymview.record_batch("CartPole-v1", policy, episodes=1, out=sys.argv[1], executor=spawned, progress=False).table[0]["error"]]
    spawned.shutdown()
    print(json.dumps(errors))
'''

NEAT_SCRIPT = '''\
import json
import gymview.neat as gn
def fitness(policy, env):
    return 1 / 0
if __name__ == "__main__":
    errors = []
    for start_method in ("fork", "spawn"):
        try:
            gn.evolve("CartPole-v1", gn.config_for("CartPole-v1", pop_size=4), generations=1, fitness=fitness,
                      workers=2, start_method=start_method, panel=False)
        except gn.FitnessError as error:
            errors.append(str(error))
    print(json.dumps(errors))
'''


def run_script(folder, source, *arguments):
    """The last line ``python my_script.py`` printed, read as JSON."""
    (folder / "my_script.py").write_text(source)
    done = subprocess.run([sys.executable, "my_script.py", *arguments], cwd=folder, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_record_batch_rows_name_a_script_run_as_main_by_file_and_line(tmp_path):
    forked, spawned = run_script(tmp_path, SCRIPT, str(tmp_path / "videos"))
    assert forked == spawned == "ValueError: policy bug (my_script.py:4 in policy)"


@pytest.mark.slow
def test_a_fitness_error_names_a_script_run_as_main_by_file_and_line(tmp_path):
    try:  # gymview[neat]; absent only where the core is tested alone (`import neat` would find tests/neat/)
        metadata.version("neat-python")
    except metadata.PackageNotFoundError:
        pytest.skip("needs neat-python: pip install 'gymview[neat]'")
    errors = run_script(tmp_path, NEAT_SCRIPT)
    assert len(errors) == 2
    for error in errors:
        assert "ZeroDivisionError: division by zero (my_script.py:4 in fitness)" in error


def test_an_error_inside_a_library_names_the_line_of_the_users_code_that_called_it(tmp_path):
    def policy(observation):
        return int(np.reshape(observation, (3,))[0])  # CartPole's 4 numbers do not fit: numpy raises

    row = record_batch("CartPole-v1", policy, episodes=1, out=tmp_path, workers=1, progress=False).table[0]
    line = policy.__code__.co_firstlineno + 1
    assert row["error"].startswith("ValueError: cannot reshape array of size 4 into shape (3,)")
    assert row["error"].endswith(f"(test_user_code.py:{line} in policy)")


def test_an_error_in_a_make_env_from_a_string_of_code_names_it_as_python_does(tmp_path):
    namespace = {"gym": gym}
    exec(compile(textwrap.dedent('''
        def make():
            raise OSError("no such device")
    '''), "<string>", "exec"), namespace)  # fmt: skip
    row = record_batch(namespace["make"], None, episodes=1, out=tmp_path, workers=1, progress=False).table[0]
    assert row["error"] == "OSError: no such device (<string>, line 3 in make)"


def test_a_job_that_raises_in_gymviews_own_code_is_named_there(tmp_path):
    # No frame of the user's: the innermost frame is named, so the report still says where.
    row = record_batch(lambda: gym.make("CartPole-v1"), None, episodes=1, out=tmp_path, workers=1,
                       vectorized=False, progress=False).table[0]  # fmt: skip
    assert "render_mode='rgb_array'" in row["error"]
    assert re.search(r"\(batch_episode\.py:\d+ in \w+\)$", row["error"]), row["error"]
