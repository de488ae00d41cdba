"""What a Python thread that only wakes up now and then costs a busy loop, and the other core.

    python benchmarks/waking_thread.py [--rounds 12] [--slice 0.5] [--periods 0.05,0.2]

A gymnasium CartPole loop (random actions, as a course's loop steps it) runs in slices, alternately alone and
beside a thread that waits on an Event and wakes every PERIOD seconds to do nothing else. Printed per period:
the loop's speed beside the thread over its speed alone (median of paired slices), the noise floor (alone
against alone), the thread's CPU milliseconds a second, and its context switches a second. The thread's
wait ends in C, but it must take the interpreter back from the loop, and a loop that lets the interpreter go
many times a step (numpy's random numbers release it) wakes the waiting thread each time in vain: that is
why gymview's stream watcher looks in only while something waits on it alone.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time

import gymnasium as gym


def steps_per_second(env: gym.Env, seconds: float) -> float:
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        steps += 1
        if terminated or truncated:
            env.reset()
    return steps / (time.perf_counter() - start)


def thread_cpu(thread: threading.Thread) -> float:
    return time.clock_gettime(time.pthread_getcpuclockid(thread.ident))


def switches(thread: threading.Thread) -> int:
    try:
        with open(f"/proc/self/task/{thread.native_id}/status") as status:
            return int(status.read().split("voluntary_ctxt_switches:")[1].split()[0])
    except (OSError, IndexError):
        return 0


def measure(period: float, rounds: int, slice_s: float) -> dict[str, float]:
    env = gym.make("CartPole-v1")
    env.reset(seed=0)
    env.action_space.seed(0)
    waking, stop = threading.Event(), threading.Event()

    def wake_now_and_then() -> None:
        never = threading.Event()
        while not stop.is_set():
            waking.wait()  # asleep, untimed, while the loop runs alone
            never.wait(period)

    thread = threading.Thread(target=wake_now_and_then, daemon=True)
    thread.start()
    rates: dict[str, list[float]] = {"alone": [], "alone again": [], "beside": []}
    cpu = wakes = seconds = 0.0
    try:
        for index in range(rounds):
            order = ["alone", "beside", "alone again"]
            for slot in order if index % 2 else order[::-1]:
                if slot == "beside":
                    waking.set()
                    before, woken = thread_cpu(thread), switches(thread)
                    rates[slot].append(steps_per_second(env, slice_s))
                    cpu += thread_cpu(thread) - before
                    wakes += switches(thread) - woken
                    seconds += slice_s
                    waking.clear()
                    time.sleep(2 * period)  # the thread is back in its long wait
                else:
                    rates[slot].append(steps_per_second(env, slice_s))
    finally:
        stop.set()
        waking.set()
    return {
        "ratio": statistics.median(b / a for b, a in zip(rates["beside"], rates["alone"])),
        "floor": statistics.median(b / a for b, a in zip(rates["alone again"], rates["alone"])),
        "cpu_ms": cpu * 1000 / seconds,
        "switches": wakes / seconds,
        "steps": statistics.median(rates["alone"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--slice", type=float, default=0.5)
    parser.add_argument("--periods", default="0.05,0.2", help="seconds between the thread's wake-ups")
    args = parser.parse_args()
    print(f"Python {sys.version.split()[0]}, switch interval {sys.getswitchinterval() * 1000:g} ms; "
          f"medians of {args.rounds} rounds of {args.slice} s slices\n")
    print("| wakes every | loop beside it / alone | noise floor | its CPU ms a second | its context switches a second "
          "| loop alone, steps/s |")
    print("|---:|---:|---:|---:|---:|---:|")
    for period in (float(text) for text in args.periods.split(",")):
        result = measure(period, args.rounds, args.slice)
        print(f"| {period * 1000:g} ms | {result['ratio']:.3f}x | {result['floor']:.3f}x | {result['cpu_ms']:.1f} "
              f"| {result['switches']:,.0f} | {result['steps']:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
