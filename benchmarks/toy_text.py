"""What a watched toy-text env keeps of its speed: tabular Q-learning on FrozenLake-v1, as a course's student writes it.

    python benchmarks/toy_text.py [--rounds 10] [--slice 0.5] [--no-browser]

One cell of a notebook, run in JupyterLab with the page open in Chromium (the view scrolled into sight), then in
a kernel with no front-end: Q-learning (epsilon-greedy, a Q-table update a step, a reset every few steps, a tqdm
bar counting the steps) on a watched ``FrozenLake-v1`` (pygame draws each frame in the loop), against the same
training on its inner env. Slices alternate in the kernel (watched, plain, plain again; then the reverse order),
and the table is ``benchmarks/observer.py``'s: the loop ratio (median of watched / plain per round), the noise
floor (plain again / plain), the worst step watched and plain, frames/s sent and drawn.
"""

from __future__ import annotations

from observer import CLOSE, SETUP, main

Q_LEARNING = """
from tqdm.auto import tqdm

q_table, rng = np.zeros((16, 4)), np.random.default_rng(0)
bar = tqdm(desc="Q-learning steps", mininterval=0.5)

def run_slice(env, seconds):
    worst, steps, start = 0.0, 0, time.perf_counter()
    state, _ = env.reset()
    while time.perf_counter() - start < seconds:
        began = time.perf_counter()
        action = env.action_space.sample() if rng.random() < 0.1 else int(q_table[state].argmax())
        next_state, reward, terminated, truncated, _ = env.step(action)
        target = reward + 0.99 * q_table[next_state].max() * (not terminated)
        q_table[state, action] += 0.1 * (target - q_table[state, action])
        state = next_state
        if terminated or truncated:
            state, _ = env.reset()
        bar.update()
        worst = max(worst, time.perf_counter() - began)
        steps += 1
    return steps / (time.perf_counter() - start), worst
"""

MAKE = 'gym.make("FrozenLake-v1", render_mode="rgb_array")'


def cells(rounds: int, slice_s: float) -> list[str]:
    return [
        SETUP + Q_LEARNING,
        f"watched['FrozenLake-v1'] = gymview.watch({MAKE})\n"
        f"paired('FrozenLake-v1', watched['FrozenLake-v1'], {rounds}, {slice_s})",
        CLOSE,
    ]


if __name__ == "__main__":
    main(cells, __doc__)
