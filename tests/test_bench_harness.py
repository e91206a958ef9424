"""The benchmark harness's interleaved timing, on fake contenders and a fake
clock: each fake call advances the clock by a known cost, so loop counts,
rounds and the reported per-call times are exact and nothing is timed."""

import importlib.util
import os
import sys

import pytest

_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                     "benchmarks", "harness.py")
_spec = importlib.util.spec_from_file_location("bench_harness", _PATH)
harness = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = harness  # dataclasses look their module up there
_spec.loader.exec_module(harness)


class Clock:
    """A clock that moves only when a fake contender is called."""

    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def contenders(clock, costs, log, spikes=None):
    """label -> callable advancing ``clock`` by its cost (plus ``spikes[label][i]``
    on its i-th call), appending its label to ``log``."""
    spikes = spikes or {}
    count = dict.fromkeys(costs, 0)
    calls = {}
    for label, cost in costs.items():
        def call(label=label, cost=cost):
            clock.now += cost + spikes.get(label, {}).get(count[label], 0.0)
            count[label] += 1
            log.append(label)
        calls[label] = call
    return calls


def loops_of(log):
    """The log as (label, run length) pairs: one pair per timed loop."""
    runs = []
    for label in log:
        if runs and runs[-1][0] == label:
            runs[-1][1] += 1
        else:
            runs.append([label, 1])
    return [tuple(r) for r in runs]


def test_every_contender_is_timed_once_per_round_in_a_rotated_order():
    clock, log = Clock(), []
    calls = contenders(clock, {"forward": 1e-6, "s2s-ad": 2e-6, "hand": 1.5e-6}, log)
    numbers = {"forward": 4, "s2s-ad": 2, "hand": 3}
    times = harness.interleave(calls, numbers, rounds=7, timer=clock)
    loops = loops_of(log)
    assert len(loops) == 7 * 3
    firsts = []
    for r in range(7):
        this_round = loops[3 * r:3 * r + 3]
        assert sorted(label for label, _ in this_round) == sorted(calls)
        assert all(n == numbers[label] for label, n in this_round)
        firsts.append(this_round[0][0])
    assert set(firsts) == set(calls)  # no contender always goes first
    assert set(times) == set(calls)
    assert times == pytest.approx({"forward": 1e-6, "s2s-ad": 2e-6, "hand": 1.5e-6})


def test_a_spike_in_one_round_does_not_reach_the_result():
    clock, log = Clock(), []
    # hand's calls 10..19 (its second loop of 10) are 50x slower: a burst of load
    spikes = {"hand": {i: 50e-6 for i in range(10, 20)}}
    calls = contenders(clock, {"forward": 1e-6, "hand": 1e-6}, log, spikes)
    times = harness.interleave(calls, {"forward": 10, "hand": 10}, rounds=5, timer=clock)
    assert times["hand"] == pytest.approx(1e-6)
    assert times["forward"] == pytest.approx(1e-6)


def test_loop_counts_fill_the_budget_and_keep_at_least_one_call():
    clock, log = Clock(), []
    calls = contenders(clock, {"fast": 1e-5, "slow": 0.012}, log)
    numbers, rounds = harness.loop_counts(calls, budget=1.0, rounds=40, min_rounds=7, timer=clock)
    assert rounds == 40
    assert numbers == {"fast": 2_500, "slow": 2}  # loops of budget / rounds = 25 ms


def test_slow_contenders_get_fewer_rounds_but_never_fewer_than_the_minimum():
    clock, log = Clock(), []
    calls = contenders(clock, {"fast": 1e-5, "slow": 0.05}, log)
    numbers, rounds = harness.loop_counts(calls, budget=1.0, rounds=40, min_rounds=7, timer=clock)
    assert rounds == 20 and numbers["slow"] == 1
    calls = contenders(clock, {"fast": 1e-5, "very slow": 0.5}, log)
    numbers, rounds = harness.loop_counts(calls, budget=1.0, rounds=40, min_rounds=7, timer=clock)
    assert rounds == 7 and numbers["very slow"] == 1


def test_interleaved_times_reports_every_label_with_its_cost():
    clock, log = Clock(), []
    costs = {"forward": 3e-5, "s2s-ad": 7e-5, "hand": 5e-5, "other tool": 2e-3}
    times = harness.interleaved_times(contenders(clock, costs, log), budget=0.1, timer=clock)
    assert list(times) == list(costs)
    assert all(t > 0 for t in times.values())
    assert times == pytest.approx(costs)
