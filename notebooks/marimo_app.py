# gymview in marimo: `marimo edit notebooks/marimo_app.py` (or `marimo run ...` for the app view).
# Install: pip install "gymview[marimo]"
import marimo

__generated_with = "0.25.2"
app = marimo.App()


@app.cell
def _():
    import marimo as mo
    import gymnasium as gym
    import gymview

    mo.md(
        """
        # gymview in marimo

        The first view below is fed by a loop in its cell: Pause, Step and Stop act while the
        cell runs. The second plays in the background (`gymview.play`), so the notebook stays free.
        """
    )
    return gym, gymview, mo


@app.cell
def _(gym, gymview, mo):
    steps = mo.ui.slider(10_000, 1_000_000, value=300_000, step=10_000, label="steps to run")
    steps
    return (steps,)


@app.cell
def _(gym, gymview, steps):
    env = gymview.watch(gym.make("CartPole-v1", render_mode="rgb_array"))  # the view appears here
    obs, info = env.reset(seed=0)
    taken = 0
    try:
        for taken in range(1, steps.value + 1):
            obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
            if terminated or truncated:
                obs, info = env.reset()
    except gymview.Stopped:  # the view's Stop button
        pass
    env.close()  # the view keeps its last frame
    print(f"took {taken} steps")
    return


@app.cell
def _(gym, gymview):
    run = gymview.play(gym.make("MountainCar-v0", render_mode="rgb_array"), episodes=3)
    return (run,)


if __name__ == "__main__":
    app.run()
