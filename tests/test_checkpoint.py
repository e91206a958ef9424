"""Checkpointed loops (docs/checkpointing.md): gradients equal to the taped ones
and to central differences, the binomial schedule against a brute-force
optimum, the forward runs and the memory it promises, the positions it must
work in (helpers, branches, vjp, the CLI's file) and the loops it refuses."""

import math
import os
import subprocess
import sys
import tracemalloc
from functools import lru_cache

import numpy as np
import pytest

import checkpoint_src as P
import s2s_ad
from array_oracle import fd_gradient as fd_array
from oracle import central_difference
from soak import beyond, soak
from s2s_ad.errors import SourceError
from s2s_ad.reverse import checkpoint

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RNG = np.random.default_rng(5)


# -- the schedule ----------------------------------------------------------------

@lru_cache(None)
def _optimal(steps: int, snaps: int) -> int:
    """Brute force: the fewest untaped forward runs reversing ``steps``
    iterations from a snapshot, ``snaps`` snapshots in all, one iteration taped
    at a time (split at every m, keep the best)."""
    if steps <= 1:
        return 0
    if snaps == 1:
        return steps * (steps - 1) // 2
    return min(m + _optimal(steps - m, snaps - 1) + _optimal(m, snaps) for m in range(1, steps))


def _helper():
    ns: dict = {}
    exec(checkpoint.HELPER, ns)  # the function the generated modules hold
    return ns["next_snapshot"]


def _schedule_runs(steps: int, snaps: int, stack: list | None = None, unit: int = 1) -> int:
    """Untaped runs of the generated driver's schedule, simulated, from the
    snapshots ``stack`` (default: the state before the first iteration)."""
    nxt = _helper()
    runs, stack, end = 0, list(stack or [0]), steps
    while end > 0:
        k = stack[-1]
        mid = nxt(k, end, snaps - len(stack), unit)
        if mid < end:
            runs += mid - k
            stack.append(mid)
        else:
            last = k + (end - k - 1) // unit * unit
            runs += last - k
            end = last
            if end == k:
                stack.pop()
    return runs


def _forward_snapshots(steps: int, snaps: int, unit: int) -> list:
    """Where the forward pass takes its snapshots: the schedule's first descent."""
    nxt, stack, k = _helper(), [], 0
    while k < steps:
        stack.append(k)
        k = nxt(k, steps, snaps - len(stack), unit)
    return stack


@pytest.mark.parametrize("snaps", [1, 2, 3, 4, 6])
def test_binomial_schedule_runs_the_fewest_iterations(snaps):
    for steps in range(0, 90):
        best = _optimal(steps, snaps)
        assert checkpoint.forward_steps(steps, snaps) == best, (steps, snaps)
        assert _schedule_runs(steps, snaps) == best, (steps, snaps)
        # blocks of 4 iterations: the same schedule over the blocks
        assert _schedule_runs(4 * steps, snaps, unit=4) == 4 * best, (steps, snaps)


def test_next_snapshot_stays_inside_the_part_to_reverse():
    nxt = _helper()
    for unit in (1, 3, 32):
        for free in range(0, 6):
            for k in range(0, 3):
                for end in range(k, k + 80):
                    m = nxt(k, end, free, unit)
                    if free == 0 or end - k <= unit:
                        assert m == end
                    else:
                        assert k < m < end and (m - k) % unit == 0


# -- gradients: checkpointed == taped == central differences ---------------------

def _flat(g):
    out = []
    for x in (g if isinstance(g, tuple) else (g,)):
        if isinstance(x, list):
            out += [np.asarray(v, dtype=float) for v in x]
        else:
            out.append(np.asarray(x, dtype=float))
    return out


def _fd(f, args, wrt):
    out = []
    for i in wrt:
        a = args[i]
        if isinstance(a, np.ndarray):
            out.append(fd_array(f, args, i))
        elif isinstance(a, list):
            for k in range(len(a)):
                def g(t, k=k):
                    b = list(a)
                    b[k] = t
                    return f(*(args[:i] + [b] + args[i + 1:]))
                out.append(np.asarray(central_difference(g, [a[k]], 0)))
        else:
            out.append(np.asarray(central_difference(f, args, i)))
    return out


def _u():
    return RNG.uniform(-1.0, 1.0, 6)


CASES = [  # (function, arguments, wrt): 0, 1, 2 and many trips; branches, nested, early exits
    *[(P.recurrence, [0.3, 0.9, n], (0, 1)) for n in (0, 1, 2, 3, 7, 40, 33, 64, 300)],
    *[(P.two_carried, [0.4, -0.2, 0.05, n], (0, 1, 2)) for n in (0, 1, 2, 25, 200)],
    *[(P.strided, [0.7, n], (0,)) for n in (0, 1, 2, 3, 21, 301)],
    *[(P.branchy, [x, n], (0,)) for x in (0.4, -1.3) for n in (30, 150)],
    (P.nested, [0.6, 6, 4], (0,)), (P.nested, [0.6, 3, 0], (0,)), (P.nested, [0.6, 0, 3], (0,)),
    (P.nested, [0.6, 70, 3], (0,)), (P.calls_in_loop, [0.2, 0.8, 100], (0, 1)),
    *[(P.breaks, [x, 50], (0,)) for x in (0.3, 1.7)], (P.breaks, [0.3, 0], (0,)),
    (P.breaks, [0.3, 1], (0,)), (P.breaks, [0.3, 2], (0,)),
    *[(P.returns_early, [x, 40], (0,)) for x in (0.2, 2.5)],
    (P.newton, [2.0], (0,)), (P.newton, [27.5], (0,)),
    *[(P.grows, [x, 9.0], (0, 1)) for x in (0.5, 8.95, 12.0)],
    (P.calls_in_loop, [0.2, 0.8, 12], (0, 1)),
    (P.calls_looping_helper, [0.3, 0.7, 9], (0, 1)),
    (P.calls_looping_helper, [-0.3, 0.7, 9], (0, 1)),
    (P.calls_branch_yields_outer, [0.3, 0.9, 40], (0, 1)),
    (P.helper_of_helper, [0.3, 0.7, 40], (0, 1)), (P.helper_in_loop, [0.3, 0.7, 37], (0, 1)),
    (P.calls_branch_yields_outer, [0.8, 0.4, 33], (0, 1)),
    (P.over_list, [[0.3, -0.2, 0.5, 0.1, 0.9], 0.8], (0, 1)), (P.over_list, [[], 0.8], (1,)),
    (P.horner, [[0.3, -0.2, 0.5, 0.1], 0.8], (0, 1)),
    (P.in_branch, [0.5, 11], (0,)), (P.in_branch, [-0.5, 11], (0,)),
    (P.array_state, [_u(), _u(), 9], (0, 1)), (P.array_state, [_u(), _u(), 0], (0, 1)),
    (P.array_state, [_u(), _u(), 1], (0, 1)),
    (P.array_branchy, [_u(), 8], (0,)), (P.array_branchy, [-np.abs(_u()) - 0.5, 8], (0,)),
]
IDS = [f"{f.__name__}-{i}" for i, (f, _, _) in enumerate(CASES)]


def _budgets_in_turn(cases, ids, budgets, every: tuple = ()) -> list:
    """``budgets`` x ``cases`` (ids ``budget-case``): in the default run each
    case with the budgets in ``every`` and one other in turn (case k with
    ``others[k % len(others)]``, the first case with all), so every case and
    every budget is run; every pair with ``--soak``."""
    others = [b for b in budgets if b not in every]
    return [(pytest.param if b in every or k == 0 or b == others[k % len(others)] else soak)(
        *case, b, id=f"{b}-{ids[k]}") for b in budgets for k, case in enumerate(cases)]


@pytest.mark.parametrize("fn, args, wrt, budget",
                         _budgets_in_turn(CASES, IDS, [True, 1, 2, 3, 5], every=(True,)))
def test_checkpointed_gradient_equals_taped_and_finite_differences(fn, args, wrt, budget):
    taped = _flat(s2s_ad.grad(fn, wrt=wrt, checkpoint=False)(*args))
    got = _flat(s2s_ad.grad(fn, wrt=wrt, checkpoint=budget)(*args))
    assert len(got) == len(taped)
    for g, t in zip(got, taped):
        assert g.shape == t.shape
        np.testing.assert_allclose(g, t, rtol=1e-12, atol=1e-300)
    for g, w in zip(got, _fd(fn, args, wrt)):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-7)
    value, again = s2s_ad.value_and_grad(fn, wrt=wrt, checkpoint=budget)(*args)
    np.testing.assert_allclose(value, fn(*args), rtol=1e-13)
    for g, t in zip(_flat(again), taped):
        np.testing.assert_allclose(g, t, rtol=1e-12, atol=1e-300)


def _generated(fn, wrt, budget, args):
    arrays = [n for n, a in zip(fn.__code__.co_varnames, args) if isinstance(a, np.ndarray)]
    text = s2s_ad.gradient_source(fn, wrt=wrt, checkpoint=budget, arrays=arrays)
    ns: dict = {}
    exec(compile(text, f"<{fn.__name__}>", "exec"), ns)
    return ns[f"grad_{fn.__name__}"], text


SCALAR = [c for c in CASES if not any(isinstance(a, (np.ndarray, list)) for a in c[1])]


@pytest.mark.parametrize("fn, args, wrt, budget", _budgets_in_turn(
    SCALAR, [f"{c[0].__name__}-{i}" for i, c in enumerate(SCALAR)], [1, 2, 4]))
def test_one_iteration_blocks_give_the_same_gradient(fn, args, wrt, budget, monkeypatch):
    # loops of numbers tape 32 iterations at a time; with blocks of one the
    # schedule is the textbook one (as for arrays): the same gradient
    monkeypatch.setattr(checkpoint, "NUMBER_BLOCK", 1)
    grad, text = _generated(fn, wrt, budget, args)
    assert "last block" not in text
    taped = _flat(s2s_ad.grad(fn, wrt=wrt, checkpoint=False)(*args))
    got = _flat(grad(*args))
    for g, t in zip(got, taped):
        np.testing.assert_allclose(g, t, rtol=1e-12, atol=1e-300)


def test_every_case_with_a_tape_is_checkpointed():
    # (else the comparison above would compare the taped code with itself)
    for fn, args, wrt in CASES:
        arrays = [n for n, a in zip(fn.__code__.co_varnames, args) if isinstance(a, np.ndarray)]
        text = s2s_ad.gradient_source(fn, wrt=wrt, checkpoint=True, arrays=arrays)
        assert "_snaps = []" in text, fn.__name__


# -- positions: pragmas, helpers, vjp, the CLI's file ----------------------------

def test_pragma_checkpoints_only_its_loop_with_its_budget():
    text = s2s_ad.gradient_source(P.marked, wrt=("x", "a"))
    assert "at most 3 snapshots" in text and "3 - len(y_snaps)" in text
    assert "_snaps" not in s2s_ad.gradient_source(P.marked, wrt=("x", "a"), checkpoint=False)
    assert "100 - len(y_snaps)" in s2s_ad.gradient_source(P.marked_default, wrt=("x", "a"))
    assert "_snaps" not in s2s_ad.gradient_source(P.recurrence, wrt=("x", "a"))
    for n in (0, 1, 2, 5, 30):
        got = s2s_ad.grad(P.marked, wrt=("x", "a"))(0.3, 0.9, n)
        want = [central_difference(P.marked, [0.3, 0.9, n], i) for i in (0, 1)]
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)


def test_with_block_checkpoints_its_loops_and_runs_as_plain_python():
    assert P.with_block(0.3, 0.9, 5) == pytest.approx(4.036162595245175, rel=1e-14)
    text = s2s_ad.gradient_source(P.with_block, wrt=("x", "a"))
    assert "at most 4 snapshots" in text and "checkpoint(" not in text.split('"""')[-1]
    assert "s2s_ad" not in text.split('"""', 2)[2]
    for n in (0, 1, 2, 10, 70):
        args = [0.3, 0.9, n]
        got = s2s_ad.grad(P.with_block, wrt=(0, 1))(*args)
        taped = s2s_ad.grad(P.with_block, wrt=(0, 1), checkpoint=False)(*args)
        np.testing.assert_allclose(got, taped, rtol=1e-12, atol=1e-300)
        want = [central_difference(P.with_block, args, i) for i in (0, 1)]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
    with pytest.raises(ValueError, match="snapshots"):
        s2s_ad.checkpoint(0)


def test_pragma_in_a_helper_through_vjp():
    for args in ([0.3, 0.7, 9], [-0.3, 0.7, 0]):
        text = s2s_ad.vjp_source(P.calls_looping_helper)
        assert "x_1_snaps" in text
        value, vjp_fn = s2s_ad.vjp(P.calls_looping_helper, *args)
        assert value == pytest.approx(P.calls_looping_helper(*args), rel=1e-13)
        for cot in (1.0, -2.5):
            got = vjp_fn(cot)
            want = [cot * central_difference(P.calls_looping_helper, args, i) for i in (0, 1)]
            np.testing.assert_allclose(got[:2], want, rtol=1e-6, atol=1e-9)
    value, vjp_fn = s2s_ad.vjp(P.marked, 0.3, 0.9, 12)
    np.testing.assert_allclose(vjp_fn(1.0)[:2], s2s_ad.grad(P.marked, wrt=(0, 1),
                                                             checkpoint=False)(0.3, 0.9, 12),
                               rtol=1e-12)


def test_cli_checkpoint_file_imports_in_a_fresh_interpreter(tmp_path):
    out = tmp_path / "grad_two.py"
    env = dict(os.environ, PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, "-m", "s2s_ad", "grad", "tests/checkpoint_src.py:two_carried",
                        "--wrt", "x,v,dt", "--checkpoint", "--snapshots", "4", "-o", str(out)],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert "at most 4 snapshots" in text and "def next_snapshot(" in text
    code = ("import grad_two, sys; g = grad_two.grad_two_carried(0.4, -0.2, 0.05, 40); "
            "assert 's2s_ad' not in sys.modules; print(repr(g))")
    p = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                       text=True, env={"PATH": os.environ.get("PATH", "")})
    assert p.returncode == 0, p.stderr
    got = eval(p.stdout)
    want = [central_difference(P.two_carried, [0.4, -0.2, 0.05, 40], i) for i in (0, 1, 2)]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)


def test_cli_snapshots_needs_checkpoint_and_a_positive_budget():
    env = dict(os.environ, PYTHONPATH=ROOT)
    for extra in (["--snapshots", "3"], ["--checkpoint", "--snapshots", "0"]):
        r = subprocess.run([sys.executable, "-m", "s2s_ad", "grad",
                            "tests/checkpoint_src.py:recurrence", *extra],
                           cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        assert r.returncode == 2 and "snapshot" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("bad", [0, -3, 2.5, "yes"])
def test_bad_checkpoint_option_is_refused(bad):
    with pytest.raises(ValueError, match="checkpoint="):
        s2s_ad.grad(P.recurrence, checkpoint=bad)


# -- refusals, located ---------------------------------------------------------------

@pytest.mark.parametrize("fn, line, words", [
    (P.nested_marked, "for j in range(n):  # s2s-ad: checkpoint", "inside another loop"),
    (P.writes_in_place, "for i in range(n):  # s2s-ad: checkpoint", "writes into an array"),
    (P.unrolled, "for i in range(3):  # s2s-ad: checkpoint", "unrolls it"),
    (P.appends_at_run_time, "for i in range(n):  # s2s-ad: checkpoint(3)", "appends to a list"),
    (P.with_no_loop, "with s2s_ad.checkpoint():", "holds no loop"),
    (P.with_other, 'with open("f") as f:', "`with` is not supported"),
])
def test_loops_checkpointing_cannot_handle_are_refused_located(fn, line, words):
    with pytest.raises(SourceError) as info:
        s2s_ad.gradient_source(fn, wrt=0)
    text = str(info.value)
    assert "checkpoint_src.py:" in text and words in text and line in text and "^" in text


# -- what it costs: forward runs and memory ----------------------------------------

class _Counting:
    """``math`` with ``sin`` counted: the recurrence calls it once per forward run
    of an iteration (its reverse calls ``cos``)."""

    def __init__(self):
        self.sin_calls = 0

    def __getattr__(self, name):
        return getattr(math, name)

    def sin(self, x):
        self.sin_calls += 1
        return math.sin(x)


def _counted(fn, **options):
    text = s2s_ad.gradient_source(fn, wrt=("x", "a"), **options)
    counter = _Counting()
    ns = {"__name__": "counted"}
    exec(compile(text.replace("import math\n", ""), "counted", "exec"), ns)
    ns["math"] = counter
    return ns[f"grad_{fn.__name__}"], counter


@pytest.mark.parametrize("n, k", [(1, 3), (2, 2), (10, 1), (50, 3), (300, 4), (1000, 10),
                                  (3000, 2), (5000, 1)])
def test_binomial_forward_runs_are_as_predicted(n, k):
    grad, counter = _counted(P.recurrence, checkpoint=k)
    grad(0.3, 0.9, n)
    unit = checkpoint.NUMBER_BLOCK  # a loop of numbers tapes 32 iterations at a time
    # the forward pass (n), the schedule's untaped runs from its snapshots, one taped run each
    predicted = n + _schedule_runs(n, k, _forward_snapshots(n, k, unit), unit) + n
    assert counter.sin_calls == predicted
    # against the optimum over blocks (whose first descent is the forward pass, less the
    # block after its last snapshot, which the forward pass runs once more)
    blocks = -(-n // unit)
    r = checkpoint.repetitions(blocks, k)
    assert predicted <= unit * (checkpoint.forward_steps(blocks, k) + 1 + r) + n
    assert predicted <= (r + 1) * n + unit


def test_segments_run_each_iteration_forward_twice():
    text = s2s_ad.gradient_source(P.grows, wrt=("x", "limit"), checkpoint=True)
    counter = _Counting()
    ns: dict = {}
    exec(compile(text.replace("import math\n", ""), "counted", "exec"), ns)
    ns["math"] = counter
    ns["grad_grows"](0.5, 1e4)
    y, n = 0.5, 0
    while y < 1e4:
        y, n = y * 1.1 + 0.1 * math.sin(y), n + 1
    assert n > 60 and counter.sin_calls == 2 * n


def _peak(call) -> int:
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_of_a_scalar_recurrence_is_bounded_by_the_snapshots():
    n = 20000
    taped = s2s_ad.grad(P.recurrence, wrt=("x", "a"), checkpoint=False)
    ckpt = s2s_ad.grad(P.recurrence, wrt=("x", "a"), checkpoint=20)
    taped(0.3, 0.9, 10), ckpt(0.3, 0.9, 10)  # compiled before measuring
    full, small = _peak(lambda: taped(0.3, 0.9, n)), _peak(lambda: ckpt(0.3, 0.9, n))
    assert full > 2 * 32 * n * 0.9       # two floats per iteration on the tape
    assert small < 20 * 200 + 4096        # 20 snapshots (a tuple, an int, a float) and O(1)


def test_memory_of_an_array_state_is_k_states_plus_constant():
    m, n = 2000, 60
    u, w = RNG.uniform(-1, 1, m), RNG.uniform(-1, 1, m)
    state = 8 * m
    taped = s2s_ad.grad(P.array_state, wrt=("u", "w"), checkpoint=False)
    taped(u, w, 2)
    full = _peak(lambda: taped(u, w, n))
    assert full > 2 * n * state * 0.9    # u and tanh(...) taped every iteration
    peaks = {}
    for k in (4, 8):
        ckpt = s2s_ad.grad(P.array_state, wrt=("u", "w"), checkpoint=k)
        ckpt(u, w, 2)
        for steps in (30, n, 2 * n):
            peaks[k, steps] = _peak(lambda: ckpt(u, w, steps)) / state
        np.testing.assert_allclose(ckpt(u, w, n), taped(u, w, n), rtol=1e-12)
    # k snapshots, one taped iteration (two arrays), and the sweep's own temporaries:
    # the same for 30 or 120 iterations, and 4 states more with 4 more snapshots
    assert peaks[4, n] <= 4 + 12, peaks
    assert abs(peaks[4, 2 * n] - peaks[4, 30]) < 0.5, peaks
    assert 3.5 < peaks[8, 2 * n] - peaks[4, 2 * n] < 4.5, peaks


def test_header_says_bytes_per_iteration_and_the_schedule():
    text = " ".join(s2s_ad.gradient_source(P.recurrence, wrt=("x", "a"), checkpoint=5).split())
    assert "records 2 values per iteration (y, t1), about 64 bytes per iteration" in text
    assert "at most 5 snapshots of (y)" in text and "r = 1 up to n = 192" in text
    assert "tapes 32 iterations at a time" in text
    text = " ".join(s2s_ad.gradient_source(P.array_state, wrt=("u", "w"), checkpoint=False,
                                           arrays=["u", "w"]).split())
    assert "8 bytes per element of each of its 2 arrays" in text
    text = " ".join(s2s_ad.gradient_source(P.grows, checkpoint=True).split())
    assert "√n segments" in text and "runs forward twice" in text


def test_check_proves_a_checkpointed_gradient_with_sympy():
    # check runs the generated module (checkpointed: the comment) on symbols
    assert "_snaps" in s2s_ad.gradient_source(P.marked, wrt=("x", "a"))
    verdict = s2s_ad.check(P.marked, wrt=("x", "a"), args={"n": 2})
    assert verdict.status == "proved", str(verdict)


# -- random loops with branches, nested loops and early exits ------------------------

import test_control_flow_random as cfr  # noqa: E402


@pytest.mark.parametrize("seed", beyond(range(0, 240, 3), 15))
def test_random_programs_checkpointed_equal_taped(seed, tmp_path, monkeypatch):
    # (tests/test_control_flow_random.py checks these programs' taped gradients
    # against central differences)
    text = cfr.program(seed)
    f = cfr._load(seed, text, str(tmp_path))
    taped = s2s_ad.grad(f, wrt=("x", "y"), checkpoint=False)
    rng = np.random.default_rng(seed)
    points = [[rng.uniform(-1, 1), rng.uniform(-1, 1), n] for n in (0, 1, 2, 3, 4, 45, 70)]
    for budget in (True, 1, 2):
        for block in (checkpoint.NUMBER_BLOCK, 1):
            monkeypatch.setattr(checkpoint, "NUMBER_BLOCK", block)
            grad, _ = _generated(f, ("x", "y"), budget, [0.0, 0.0, 0])
            for args in points:
                try:
                    want = taped(*args)
                except (OverflowError, ValueError, ZeroDivisionError):
                    continue
                got = grad(*args)
                np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300,
                                           err_msg=f"seed {seed} {args} K={budget}\n{text}")


def test_most_random_programs_have_a_loop_to_checkpoint(tmp_path):
    # (else the test above would mostly compare the taped code with itself)
    count = 0
    for seed in range(0, 240, 3):
        f = cfr._load(seed, cfr.program(seed), str(tmp_path))
        count += "_snaps = []" in s2s_ad.gradient_source(f, wrt=("x", "y"), checkpoint=True)
    assert count >= 50, count
