"""In a notebook, an error raised by the user's code in a worker process names the cell as IPython's
own tracebacks do (``Cell In[4], line 3``): never cloudpickle's ``<dynamic-code>`` nor the kernel's
temporary file for the cell."""

import json

import pytest

pytestmark = [pytest.mark.kernel, pytest.mark.slow]

SETUP = """
import concurrent.futures, json, multiprocessing, tempfile
import gymview, gymview.neat as gn
"""

POLICY = """\
def policy(observation):
    if observation[0] > -1:
        raise ValueError("policy bug")
    return 0
"""

FITNESS = """\
def fitness(policy, env):
    if policy.genome.key == 5:
        raise ZeroDivisionError("genome 5")
    return 1.0
"""

RECORD = """
spawned = concurrent.futures.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn"))
errors = [
    gymview.record_batch("CartPole-v1", policy, episodes=2, out=tempfile.mkdtemp(), workers=2, progress=False).table[0]["error"],
    gymview.record_batch("CartPole-v1", policy, episodes=2, out=tempfile.mkdtemp(), executor=spawned, progress=False).table[0]["error"],
]
spawned.shutdown()
print(json.dumps(errors))
"""


def test_record_batch_rows_name_the_cell_that_raised(kernel):
    kernel.run(SETUP)
    cell = kernel.run(POLICY).reply["execution_count"]
    errors = json.loads(kernel.run(RECORD).stdout.strip().splitlines()[-1])
    assert errors == [f"ValueError: policy bug (Cell In[{cell}], line 3 in policy)"] * 2


@pytest.mark.parametrize("workers, start_method", [(0, None), (2, "fork"), (2, "spawn")])
def test_a_fitness_error_names_the_cell_that_raised(kernel, workers, start_method):
    kernel.run(SETUP)
    cell = kernel.run(FITNESS).reply["execution_count"]
    reply = kernel.execute(f"""
gn.evolve("CartPole-v1", gn.config_for("CartPole-v1", pop_size=10), generations=1, fitness=fitness,
          workers={workers}, start_method={start_method!r}, panel=False)
""").reply
    assert reply["ename"] == "FitnessError"
    assert f"ZeroDivisionError: genome 5 (Cell In[{cell}], line 3 in fitness)" in reply["evalue"]
