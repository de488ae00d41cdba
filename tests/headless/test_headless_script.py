"""watch() in a plain Python script: no front-end, so no renders, no errors and no memory growth."""

import subprocess
import sys

SCRIPT = """
import resource, gymnasium as gym, gymview
env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"), fast_render=False)  # frames via env.render()
renders = 0
inner = env.env.render
def counting_render():
    global renders
    renders += 1
    return inner()
env.env.render = counting_render
env.reset(seed=0)
def run(steps):
    for _ in range(steps):
        *_, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
run(5000)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
run(50000)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
env.close()
print(renders, after - before)
"""


def test_plain_python_loop_renders_nothing_and_stays_flat(repo_root):
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120, cwd=repo_root, check=True
    )
    renders, growth_kib = map(int, out.stdout.split())
    assert renders == 0
    assert growth_kib < 2048, f"resident memory grew {growth_kib} KiB over 50,000 steps"
    assert "Traceback" not in out.stderr
