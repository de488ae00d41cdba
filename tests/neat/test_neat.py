"""gymview.neat: configs that fit the env, evaluation in workers, errors that name the genome,
stops, checkpoints and the champion as a policy."""

import concurrent.futures
import copy
import os
import pathlib
import pickle
import random
import signal
import threading
import time

import gymnasium as gym
import neat
import numpy as np
import psutil
import pytest

import gymview
import gymview.neat as gn

pytestmark = pytest.mark.slow


def small(**overrides):
    return gn.config_for("CartPole-v1", pop_size=20, fitness_threshold=100000, **overrides)


def a_genome(config):
    return next(iter(neat.Population(config, seed=0).population.values()))


def children():
    """The pids of this process's live children (zombies are dead: not counted)."""
    alive = set()
    for child in psutil.Process().children(recursive=True):
        try:
            if child.status() != psutil.STATUS_ZOMBIE:
                alive.add(child.pid)
        except psutil.NoSuchProcess:
            pass
    return alive


def history(result):
    return [(row["best"], row["mean"], row["species"]) for row in result.history]


def test_config_for_box_observations_and_discrete_actions():
    config = gn.config_for("CartPole-v1")
    assert (config.genome_config.num_inputs, config.genome_config.num_outputs) == (4, 2)
    assert config.pop_size == 150 and config.fitness_threshold == 475.0 and config.genome_config.feed_forward


def test_config_for_box_actions_scales_tanh_outputs_to_the_bounds():
    env = gym.make("Pendulum-v1")
    config = gn.config_for(env, pop_size=10, recurrent=True)
    assert (config.genome_config.num_inputs, config.genome_config.num_outputs) == (3, 1)
    assert not config.genome_config.feed_forward and config.no_fitness_termination  # Pendulum has no threshold
    genome = a_genome(config)
    for gene in genome.connections.values():
        gene.weight = 30.0  # saturate: the output is tanh(large) = 1
    action = gn.GenomePolicy(genome, config, env)(np.ones(3))
    assert action.shape == (1,) and action.dtype == np.float32 and action[0] == pytest.approx(2.0)


def test_config_for_discrete_observations_is_one_hot():
    env = gym.make("FrozenLake-v1")
    config = gn.config_for(env, pop_size=10)
    assert (config.genome_config.num_inputs, config.genome_config.num_outputs) == (16, 4)
    genome = a_genome(config)
    assert gn.GenomePolicy(genome, config, env)(5) in range(4)


def test_spaces_neat_cannot_take_are_refused_with_the_fix():
    env = gym.make("Blackjack-v1")  # Tuple observations
    with pytest.raises(TypeError, match="FlattenObservation"):
        gn.config_for(env)


def test_unknown_overrides_and_mismatches_name_the_field():
    with pytest.raises(TypeError, match="'max_stagnaton' is not a neat-python setting; did you mean max_stagnation"):
        gn.config_for("CartPole-v1", max_stagnaton=5)
    with pytest.raises(ValueError, match="num_inputs = 5 does not fit CartPole-v1: its observation space needs num_inputs = 4"):
        gn.config_for("CartPole-v1", num_inputs=5)
    with pytest.raises(ValueError, match="neat-python refused this config"):
        gn.config_for("CartPole-v1", activation_default="no-such-function")


def test_config_file_round_trip_and_older_files_are_told_what_to_add(tmp_path):
    path = tmp_path / "cartpole.cfg"
    gn.config_for("CartPole-v1", path=path, pop_size=30)
    assert gn.load_config(path, "CartPole-v1").pop_size == 30
    with pytest.raises(ValueError, match="num_inputs = 4 does not fit MountainCar-v0: its observation space needs "
                                         "num_inputs = 2; num_outputs = 2 does not fit MountainCar-v0: its action "
                                         "space needs num_outputs = 3"):
        gn.load_config(path, "MountainCar-v0")
    old = tmp_path / "old.cfg"
    old.write_text("\n".join(line for line in path.read_text().splitlines()
                             if not line.startswith(("no_fitness_termination", "min_species_size"))))
    with pytest.raises(ValueError) as refused:
        gn.load_config(old)
    assert "[NEAT]\nno_fitness_termination = False" in str(refused.value)
    assert "min_species_size" not in str(refused.value)  # optional: not asked for
    with pytest.raises(FileNotFoundError, match="config_for"):
        gn.load_config(tmp_path / "missing.cfg")


def test_defaults_name_every_setting_neat_reads(tmp_path):
    import configparser

    gn.config_for("CartPole-v1").save(tmp_path / "saved.cfg")
    saved = configparser.ConfigParser()
    saved.read(tmp_path / "saved.cfg")
    written = {(section, key) for section in saved.sections() for key in saved[section]} - {("NEAT", "seed")}
    assert written == {(section, key) for section, keys in gn.DEFAULTS.items() for key in keys}


def test_the_same_seed_gives_the_same_run_serial_in_processes_or_in_threads():
    before = children()
    serial = gn.evolve("CartPole-v1", small(), generations=3, workers=0, seed=5, panel=False)
    pooled = gn.evolve("CartPole-v1", small(), generations=3, workers=2, seed=5, start_method="fork", panel=False)
    with concurrent.futures.ThreadPoolExecutor(2) as executor:
        threaded = gn.evolve("CartPole-v1", small(), generations=3, executor=executor, seed=5, panel=False)
    assert history(serial) == history(pooled) == history(threaded)
    np.random.seed(11)
    expected = np.random.random()
    np.random.seed(11)
    other = gn.evolve("CartPole-v1", small(), generations=3, workers=0, seed=6, panel=False)
    assert np.random.random() == expected, "evolve leaves the caller's numpy random state as it was"
    assert history(other) != history(serial)
    assert children() <= before, "the run's workers are gone"


def noisy(policy, env):
    """A fitness drawing from the global random modules: reproducible only if each genome's evaluation is seeded."""
    return random.random() + np.random.random()


def draws():
    return [random.random() for _ in range(3)], np.random.random(3).tolist()


def test_the_callers_random_state_continues_as_if_evolve_had_not_run():
    random.seed(3)
    np.random.seed(3)
    expected = draws()
    runs = []
    with concurrent.futures.ThreadPoolExecutor(2) as executor:
        for how in (dict(workers=0), dict(executor=executor)):
            random.seed(3)
            np.random.seed(3)
            runs.append(gn.evolve("CartPole-v1", small(), generations=2, fitness=noisy, seed=5, panel=False, **how))
            assert draws() == expected, f"evolve({how}) changed the caller's random state"
    assert history(runs[0]) == history(runs[1]), "each genome's evaluation is still seeded"


def test_an_evaluation_is_seeded_and_leaves_the_random_state_of_its_process_as_it_was():
    # What a thread pool runs in the caller's process, maybe after evolve returned (an interrupt).
    from gymview.neat.worker_side import Evaluation, Task

    genome = a_genome(small())
    evaluation = Evaluation(Task(lambda: gym.make("CartPole-v1"), noisy, small(), 1, None))
    random.seed(3)
    np.random.seed(3)
    expected = draws()
    random.seed(3)
    np.random.seed(3)
    first = evaluation.evaluate(genome, 7)
    assert draws() == expected
    assert evaluation.evaluate(genome, 7) == first and first[2] is None
    evaluation.close()


def test_the_champion_policy_pickles_and_plays():
    result = gn.evolve("CartPole-v1", small(), generations=2, workers=0, panel=False)
    copy = pickle.loads(pickle.dumps(result.policy))
    observation, _ = result.env.reset(seed=0)
    assert copy(observation) == result.policy(observation) in (0, 1)
    assert [row["generation"] for row in result.history] == [0, 1] and result.stats.most_fit_genomes


def test_a_genome_whose_fitness_raises_stops_the_run_naming_it():
    def fitness(genome, config, env):
        if genome.key == 7:
            raise ZeroDivisionError("genome 7 divides by zero")
        return 1.0

    before = children()
    # A handler that ignores SIGTERM (libraries install such) is inherited by forked workers.
    previous = signal.signal(signal.SIGTERM, lambda *_: None)
    try:
        with pytest.raises(gn.FitnessError, match=r"genome 7 in generation 0 failed: ZeroDivisionError: genome 7 divides by zero \(test_neat.py:"):
            gn.evolve("CartPole-v1", small(), generations=2, fitness=fitness, workers=2, start_method="fork", panel=False)
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert children() <= before, "the run's workers are gone"


def test_a_worker_that_dies_is_that_genomes_error_never_a_hang():
    def fitness(genome, config, env):
        if genome.key == 3:
            os._exit(9)  # as a segfault in native code would
        return 1.0

    before = children()
    with pytest.raises(gn.FitnessError, match="genome 3 in generation 0 failed: its worker process died"):
        gn.evolve("CartPole-v1", small(), generations=2, fitness=fitness, workers=2, start_method="fork", panel=False)
    assert children() <= before, "the run's workers are gone"


def test_an_env_that_cannot_be_made_in_a_worker_is_each_genomes_error():
    here = os.getpid()

    def make():
        if os.getpid() != here:
            raise OSError("no such device in the worker")
        return gym.make("CartPole-v1")

    before = children()
    with pytest.raises(gn.FitnessError, match=r"generation 0 failed: OSError: no such device in the worker .*\(\d+ more genomes failed too\)"):
        gn.evolve(make, small(), generations=2, workers=2, start_method="fork", panel=False)
    assert children() <= before, "the run's workers are gone"


def test_a_fitness_may_start_processes_of_its_own():
    def fitness(genome, config, env):  # as an AsyncVectorEnv inside a fitness does
        import multiprocessing

        child = multiprocessing.get_context("fork").Process(target=sum, args=([1, 2],))
        child.start()
        child.join()
        return float(child.exitcode == 0)

    result = gn.evolve("CartPole-v1", small(), generations=1, fitness=fitness, workers=2,
                       start_method="fork", panel=False)
    assert result.history[0]["best"] == result.history[0]["mean"] == 1.0


def test_stop_from_a_background_job_returns_the_best_genome_so_far():
    evaluated = threading.Event()

    def fitness(policy, env):
        evaluated.set()
        return 1.0

    job = gymview.background(gn.evolve, "CartPole-v1", small(), generations=100_000, fitness=fitness, workers=0,
                             panel=False, display=False)
    assert evaluated.wait(60)
    job.request_stop()
    result = job.wait(timeout=120)
    assert result.stopped and 1 <= result.generations < 100_000 and result.winner.fitness == 1.0


def test_checkpoints_resume_where_they_stopped(tmp_path):
    prefix = str(tmp_path / "ckpt-")
    first = gn.evolve("CartPole-v1", small(), generations=3, workers=0, panel=False, checkpoint_every=1,
                      checkpoint_prefix=prefix)
    saved = sorted(tmp_path.glob("ckpt-*"), key=lambda p: int(p.name.rsplit("-", 1)[1]))
    assert saved
    resumed = gn.evolve("CartPole-v1", generations=2, workers=0, panel=False, resume=saved[-1])
    assert resumed.history[0]["generation"] == int(saved[-1].name.rsplit("-", 1)[1]) > first.history[0]["generation"]


def test_bad_arguments_say_what_to_pass():
    with pytest.raises(TypeError, match="not an env object"):
        gn.evolve(gym.make("CartPole-v1"))
    with pytest.raises(TypeError, match="fitness takes 1 arguments"):
        gn.evolve("CartPole-v1", small(), fitness=lambda genome: 1.0, workers=0, panel=False)
    with pytest.raises(ValueError, match="start_method must be one of fork, spawn, forkserver"):
        gn.evolve("CartPole-v1", small(), start_method="thread", panel=False)
    with pytest.raises(ValueError, match="num_inputs = 4 does not fit MountainCar-v0"):
        gn.evolve("MountainCar-v0", small(), workers=0, panel=False)


def test_a_dask_cluster_evaluates_like_this_process():
    distributed = pytest.importorskip("distributed")
    serial = gn.evolve("CartPole-v1", small(), generations=2, workers=0, seed=4, panel=False)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            clustered = gn.evolve("CartPole-v1", small(), generations=2, executor=client.get_executor(), seed=4,
                                  panel=False)
    assert history(clustered) == history(serial)


def test_max_steps_and_episodes_shape_the_default_fitness():
    capped = gn.evolve("CartPole-v1", small(), generations=1, workers=0, max_steps=5, panel=False)
    assert capped.history[0]["best"] <= 5.0
    with pytest.raises(ValueError, match="episodes"):
        gn.evolve("CartPole-v1", small(), generations=1, episodes=0, workers=0, panel=False)


def test_generations_go_out_in_shrinking_chunks_that_cover_every_genome_once():
    from gymview.neat.worker_side import chunked

    for workers in (1, 2, 3, 8):
        for count in (0, 1, 2, 7, 150, 1000):
            chunks = chunked(list(range(count)), workers)
            assert [item for chunk in chunks for item in chunk] == list(range(count))
            sizes = [len(chunk) for chunk in chunks]
            assert sizes == sorted(sizes, reverse=True) and all(sizes)
            if count >= 2 * workers:
                assert sizes[-workers:] == [1] * workers, "the workers finish together on single genomes"
                assert sizes[0] == count // (2 * workers)


def with_species_set(species_set, tmp_path, **overrides):
    path = tmp_path / "neat.cfg"
    gn.config_for("CartPole-v1", pop_size=20, fitness_threshold=100000, path=path, **overrides)
    path.write_text(path.read_text().replace("[DefaultSpeciesSet]", f"[{species_set.__name__}]"))
    return neat.Config(neat.DefaultGenome, neat.DefaultReproduction, species_set, neat.DefaultStagnation, str(path))


class SpeciesSetThatWaitsForTheWorkers(neat.DefaultSpeciesSet):
    """Records the genomes new in each bred generation, and speciates each one up to ``last`` only once
    a worker has begun evaluating one of them."""

    markers: pathlib.Path  # where the fitness function marks each genome it evaluates
    last = 0
    bred: dict[int, set[int]] = {}

    def speciate(self, config, population, generation):
        previous = getattr(self, "previous", None)
        self.previous = set(population)
        if previous is not None:  # not the first population: neat has just bred this one
            new = self.bred[generation + 1] = set(population) - previous
            deadline = time.monotonic() + 60
            while generation + 1 <= self.last and not any((self.markers / str(key)).exists() for key in new):
                if time.monotonic() > deadline:
                    raise AssertionError(f"generation {generation + 1} was speciated before any worker evaluated it")
                time.sleep(0.01)
        return super().speciate(config, population, generation)


def test_workers_evaluate_a_bred_generation_while_neat_speciates_it(tmp_path):
    SpeciesSetThatWaitsForTheWorkers.markers, SpeciesSetThatWaitsForTheWorkers.last = tmp_path, 2
    SpeciesSetThatWaitsForTheWorkers.bred = {}
    config = with_species_set(SpeciesSetThatWaitsForTheWorkers, tmp_path)

    def fitness(genome, config, env):
        (tmp_path / str(genome.key)).touch()
        return float(len(genome.connections))

    before = children()
    result = gn.evolve("CartPole-v1", config, generations=3, fitness=fitness, workers=2, start_method="fork",
                       panel=False)
    assert [row["generation"] for row in result.history] == [0, 1, 2]
    assert sorted(SpeciesSetThatWaitsForTheWorkers.bred) == [1, 2, 3]  # neat breeds once more after the last
    evaluated = {int(path.name) for path in tmp_path.iterdir() if path.name.isdigit()}
    assert SpeciesSetThatWaitsForTheWorkers.bred[2] <= evaluated
    assert not SpeciesSetThatWaitsForTheWorkers.bred[3] & evaluated, "no work is spent on a generation never asked for"
    assert children() <= before, "the run's workers are gone"
    assert "reproduce" not in vars(result.population.reproduction), "the population breeds as neat does once returned"


class SpeciesSetThatSwapsAGenome(neat.DefaultSpeciesSet):
    """Puts a new genome in place of one that neat bred, before speciating (as a repair step might)."""

    def speciate(self, config, population, generation):
        if getattr(self, "speciated", False):
            newest = population.pop(max(population))
            swapped = copy.deepcopy(newest)
            swapped.key = newest.key + 100_000
            population[swapped.key] = swapped
        self.speciated = True
        return super().speciate(config, population, generation)


def test_a_generation_changed_after_breeding_is_evaluated_as_it_is(tmp_path):
    config = with_species_set(SpeciesSetThatSwapsAGenome, tmp_path)
    result = gn.evolve("CartPole-v1", config, generations=3, fitness=lambda genome, config, env: float(genome.key),
                       workers=2, start_method="fork", panel=False)
    assert result.history[-1]["best"] >= 100_000, "the swapped-in genome was evaluated"
    assert result.winner.fitness == result.winner.key


def test_a_generation_of_long_errors_never_blocks_the_pipes():
    def fitness(genome, config, env):
        raise ValueError(f"genome {genome.key} " + "is broken " * 60)

    before = children()
    config = gn.config_for("CartPole-v1", pop_size=3000, fitness_threshold=100000)
    with pytest.raises(gn.FitnessError, match=r"genome 1 in generation 0 failed: ValueError: genome 1 is broken .*\(2999 more"):
        gn.evolve("CartPole-v1", config, generations=1, fitness=fitness, workers=2, start_method="fork", panel=False)
    assert children() <= before, "the run's workers are gone"


def test_a_worker_that_dies_is_blamed_only_for_the_chunk_it_was_on():
    import cloudpickle

    from gymview.neat.worker_side import Task
    from gymview.neat.workers import NOT_STARTED, Died, Workers

    def fitness(genome, config, env):
        if genome.key == 1:
            os._exit(7)
        return 1.0

    config = small()
    genomes = list(neat.Population(config, seed=0).population.values())[:3]
    workers = Workers(1, "fork", cloudpickle.dumps(Task(lambda: gym.make("CartPole-v1"), fitness, config, 1, None)))
    try:
        workers.send(0, "first", [(genomes[1], 0)])  # genome key 2: evaluated
        workers.send(0, "dies", [(genomes[0], 0)])  # genome key 1: its worker exits
        workers.send(0, "after", [(genomes[2], 0)])
        news = []
        while len(news) < 3:
            news += workers.wait()
        assert [(tag, type(reply)) for _, tag, reply in news] == [("first", list), ("dies", Died), ("after", object)]
        assert news[1][2] == Died("exit code 7") and news[2][2] is NOT_STARTED
        workers.send(0, "fresh", [(genomes[2], 0)])  # a fresh worker takes the slot
        assert workers.wait()[0][1:] == ("fresh", [(3, 1.0, None)])
    finally:
        workers.close()


EXITS_MID_EVOLUTION = """
import pathlib, sys, time
import gymview, gymview.neat as gn
marker = pathlib.Path(sys.argv[1])
def fitness(genome, config, env):
    marker.touch()
    time.sleep(0.01)
    return 1.0
job = gymview.background(gn.evolve, "CartPole-v1", gn.config_for("CartPole-v1", pop_size=20, fitness_threshold=100000),
                         generations=100000, fitness=fitness, workers=2, start_method="fork", panel=False, display=False)
while not marker.exists():
    time.sleep(0.01)
print("EXITING", flush=True)
"""


def test_the_interpreter_exits_while_evolution_runs_in_the_background(tmp_path):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", EXITS_MID_EVOLUTION, str(tmp_path / "evaluating")],
                          capture_output=True, text=True, timeout=120)
    assert "EXITING" in done.stdout and "Traceback" not in done.stderr, done.stderr[-2000:]


def test_a_resumed_run_is_the_same_in_this_process_and_in_workers(tmp_path):
    prefix = str(tmp_path / "ckpt-")
    gn.evolve("CartPole-v1", small(node_add_prob=0.5), generations=2, workers=0, panel=False, checkpoint_every=2,
              checkpoint_prefix=prefix)
    (saved,) = tmp_path.glob("ckpt-*")
    runs = [gn.evolve("CartPole-v1", generations=3, resume=saved, panel=False, **how)
            for how in (dict(workers=0), dict(workers=2, start_method="fork"))]
    assert history(runs[0]) == history(runs[1])
    nodes = [sorted({node for genome in run.population.population.values() for node in genome.nodes}) for run in runs]
    assert nodes[0] == nodes[1]


def test_no_more_workers_start_than_there_are_genomes():
    from gymview.neat.worker_side import Task
    from gymview.neat.dispatch import Evaluator

    config = gn.config_for("CartPole-v1", pop_size=3, fitness_threshold=100000)
    before = children()
    evaluator = Evaluator(Task(lambda: gym.make("CartPole-v1"), None, config, 1, None), 8, None, "fork")
    try:
        evaluator.prepare()
        assert len(children() - before) == 3
    finally:
        evaluator.close()
    assert children() <= before


@pytest.mark.parametrize("pop_size", [2, 20])  # every chunk already sent; or some still waiting
def test_collecting_a_generation_after_the_workers_were_closed_says_so(pop_size):
    from gymview.neat.worker_side import Task
    from gymview.neat.dispatch import Evaluator

    config = gn.config_for("CartPole-v1", pop_size=pop_size, fitness_threshold=100000)
    evaluator = Evaluator(Task(lambda: gym.make("CartPole-v1"), None, config, 1, None), 2, None, "fork")
    batch = evaluator.start([(genome, 0) for genome in neat.Population(config, seed=0).population.values()])
    evaluator.close()
    with pytest.raises(RuntimeError, match=r"these NEAT workers were closed \(the evolution ended"):
        evaluator.collect(batch)
