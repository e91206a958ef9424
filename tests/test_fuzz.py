"""Random programs, differentiated by s2s-ad, against finite differences and sympy.

The generator (tests/programs.py) and the runner (tests/fuzz.py) are shared
with the long soak, ``python -m tests.fuzz --n 10000``; here hypothesis drives
the generator with a bounded number of examples so the suite stays fast, and
shrinks any failure to a small program.
"""

import re
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import s2s_ad
from tests.fuzz import import_program, report, run_helper_one, run_numpy_one, run_one
from tests.fuzz_checks import CHECKS, Subject, known_failure, run_checks
from tests.programs_conditions import condition_program
from tests.programs_helpers import helper_program
from tests.programs_kinds import kinds_program
from tests.programs import HypothesisDraw, RandomDraw, program
from tests.array_oracle import make_function
from tests.programs_numpy import numpy_loop_program, numpy_program
from tests.programs_rules import rules_program
from tests.programs_shifts import shift_program
from tests.soak import beyond, breadth

FAST = settings(max_examples=breadth(30, 150), deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))
SYMBOLIC = settings(max_examples=15, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))


def _check(data, tmp_path, use_sympy, **sizes):
    prog = program(HypothesisDraw(data), **sizes)
    label = f"h{abs(hash(prog.source)) % 10**12}"
    outcome = run_one(prog, str(tmp_path), label, use_sympy=use_sympy)
    assert outcome.status != "mismatch", report(label, prog, outcome)


@FAST
@given(data=st.data())
def test_random_programs_match_finite_differences(data, tmp_path_factory):
    _check(data, tmp_path_factory.mktemp("fd"), False)


@FAST
@given(data=st.data())
def test_larger_random_programs_match_finite_differences(data, tmp_path_factory):
    _check(data, tmp_path_factory.mktemp("fd"), False, max_stmts=10, max_depth=4)


@SYMBOLIC
@given(data=st.data())
def test_random_programs_match_sympy(data, tmp_path_factory):
    _check(data, tmp_path_factory.mktemp("sym"), True, max_stmts=3, max_depth=2)


@pytest.mark.parametrize("seed", range(0, 4000, 800))
def test_soak_seeds_replay(seed, tmp_path):
    """The soak's programs are reproducible from their seed."""
    a, b = program(RandomDraw(seed)), program(RandomDraw(seed))
    assert a.source == b.source and a.point == b.point
    outcome = run_one(a, str(tmp_path), f"s{seed}", use_sympy=False)
    assert outcome.status != "mismatch", report(f"seed {seed}", a, outcome)


@settings(max_examples=breadth(30, 60), deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_random_numpy_programs_match_finite_differences(data, tmp_path_factory):
    prog = numpy_program(HypothesisDraw(data))
    label = f"n{abs(hash(prog.source)) % 10**12}"
    outcome = run_numpy_one(prog, str(tmp_path_factory.mktemp("np")), label)
    assert outcome.status != "mismatch", f"{prog.source}\nat {prog.point}\n{outcome.detail}"


@settings(max_examples=breadth(20, 40), deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_random_numpy_loops_filling_arrays_match_finite_differences(data, tmp_path_factory):
    prog = numpy_loop_program(HypothesisDraw(data))
    label = f"l{abs(hash(prog.source)) % 10**12}"
    outcome = run_numpy_one(prog, str(tmp_path_factory.mktemp("npl")), label)
    assert outcome.status != "mismatch", f"{prog.source}\nat {prog.point}\n{outcome.detail}"


@settings(max_examples=breadth(20, 40), deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_random_helpers_without_numpy_called_with_arrays_match_finite_differences(
        data, tmp_path_factory):
    prog = kinds_program(HypothesisDraw(data))
    label = f"k{abs(hash(prog.source)) % 10**12}"
    outcome = run_numpy_one(prog, str(tmp_path_factory.mktemp("npk")), label)
    assert outcome.status != "mismatch", f"{prog.source}\nat {prog.point}\n{outcome.detail}"


def test_kinds_programs_exercise_both_specialisations():
    """The generator keeps hitting its target: helpers that never name NumPy
    lowered as array code and, in the same program, as scalar code, and
    functions without NumPy called with arrays."""
    both = plain = 0
    for seed in range(60):
        prog = kinds_program(RandomDraw(seed))
        fn = make_function(prog.source)
        text = s2s_ad.gradient_source(fn, wrt=list(prog.wrt),
                                      arrays=[k for k, v in prog.point.items()
                                              if isinstance(v, np.ndarray)])
        both += bool(re.search(r"def (h\d)_fwd_1\(", text))
        plain += "np." not in prog.source.split("def f(")[1]
    assert both >= 10 and plain >= 10, (both, plain)


def test_programs_over_the_newer_numpy_rules_match_finite_differences(tmp_path):
    compared = 0
    for seed in range(breadth(20, 40)):
        prog = rules_program(RandomDraw(seed))
        outcome = run_numpy_one(prog, str(tmp_path), f"nr{seed}")
        assert outcome.status != "mismatch", report(f"seed {seed}", prog, outcome)
        compared += outcome.status == "ok"
    assert compared >= breadth(18, 35)


def test_rules_programs_draw_every_newer_rule():
    names = ("arcsin arccos arcsinh arctanh log2 log10 log1p exp2 expm1 cbrt reciprocal tan sinh "
             "cosh power float_power logaddexp hypot arctan2 where clip var std prod amax amin "
             "cumsum cumprod flip roll repeat tile hstack vstack concatenate stack inner cross "
             "einsum linalg.det linalg.inv linalg.solve trace diag tril triu swapaxes "
             "moveaxis").split()
    seen = Counter()
    for seed in range(300):
        source = rules_program(RandomDraw(seed)).source
        seen.update(n for n in names if f"np.{n}(" in source)
    assert min(seen[n] for n in names) >= 5, seen


def test_helper_programs_match_finite_differences(tmp_path):
    for seed in range(breadth(30, 60)):
        prog = helper_program(RandomDraw(seed))
        outcome = run_helper_one(prog, str(tmp_path), f"hp{seed}")
        assert outcome.status != "mismatch", report(f"seed {seed}", prog, outcome)


def test_helpers_returning_tuples_read_by_index_match_finite_differences(tmp_path):
    """``--tuples``: the helper returns a tuple that ``f`` binds and reads by
    index in a loop and in both arms of a branch. Each item's adjoint must
    reach the helper's backward pass (17 of the first 30 seeds from 39000
    were wrong before the items were read next to the call); vjp and jvp on
    each program grad got right."""
    seen = Counter()
    for seed in range(39000, 39000 + breadth(15, 200)):
        prog = helper_program(RandomDraw(seed), items=True)
        assert "r[-1]" in prog.source and "r = h(" in prog.source
        outcome = run_helper_one(prog, str(tmp_path), f"tp{seed}", checks=("grad", "vjp", "jvp"))
        assert outcome.status != "mismatch", report(f"seed {seed}", prog, outcome)
        for kind, c in outcome.checks.items():
            assert c.status in ("agree", "refused", "rejected"), report(f"seed {seed}", prog,
                                                                         outcome)
            seen[kind, c.status] += 1
        seen[outcome.status] += 1
    assert seen["ok"] >= breadth(13, 25) and seen["vjp", "agree"] == seen["ok"], seen


def test_tuples_carried_across_loops_match_finite_differences(tmp_path):
    """``--carried``: the ``--tuples`` programs then carry the helper's tuple
    across a loop's iterations (``r = (r[1] * 0.5 + r[0] * c, r[0])``), leaving
    by ``break`` or skipping by ``continue`` on a test of an item."""
    seen = Counter()
    for seed in range(41000, 41000 + breadth(10, 200)):
        prog = helper_program(RandomDraw(seed), items=True, carried=True)
        assert "for j in range(" in prog.source
        outcome = run_helper_one(prog, str(tmp_path), f"cp{seed}", checks=("grad", "vjp"))
        assert outcome.status != "mismatch", report(f"seed {seed}", prog, outcome)
        seen[outcome.status] += 1
        seen.update(("vjp", c.status) for c in outcome.checks.values())
    assert seen["ok"] >= breadth(9, 18) and seen["vjp", "agree"] == seen["ok"], seen


def test_helper_programs_exercise_every_form():
    """The generator keeps hitting its targets (tests.programs_helpers): each
    way of calling the helper, each parameter without a derivative, helpers
    returning the array they fill, and each base family."""
    marks = {"direct": r"def f\(.*\n    return (np\.sum\()?h\([^\n]*\)\n$", "nested": r"def mid\(",
             "twice": r"\) - 0\.5 \* (np\.sum\()?h\(", "loop": r"_k=i\b",
             "branch": r"\n    if .*:\n        r = ", "range": r"range\(_k\)",
             "equal": r"_k == 0", "float": r"float\(_k\)", "compare": r"_c > 0\.0",
             "both": r"_c < 0\.0 and _k == 1", "sign": r"np\.sign\(_c\)",
             "shape": r"np\.ones\(_k \+ 1\)", "array": r"return y \* \(",
             "numpy": r"import numpy", "scalar": r"math"}
    seen = Counter()
    for seed in range(300):
        source = helper_program(RandomDraw(seed)).source
        seen.update(k for k, pattern in marks.items() if re.search(pattern, source))
    assert min(seen[k] for k in marks) >= 10, seen


SHIFT_SEEDS = range(150)
"""Fixed programs of ``--numpy-shifts`` (a few seconds): the soak runs thousands."""


@pytest.mark.parametrize("first", beyond(range(0, len(SHIFT_SEEDS), 50), 1))
def test_shift_and_reduction_programs_match_finite_differences(first, tmp_path):
    compared = 0
    for seed in SHIFT_SEEDS[first:first + 50]:
        prog = shift_program(RandomDraw(seed))
        outcome = run_numpy_one(prog, str(tmp_path), f"sh{seed}")
        assert outcome.status != "mismatch", report(f"seed {seed}", prog, outcome)
        compared += outcome.status == "ok"
    assert compared >= 35  # most points are inside the functions' domains


def test_shift_programs_exercise_both_analyses(monkeypatch):
    """The generator keeps hitting its targets: shifts that cancel (and ones
    that don't), reductions left unspread (and ones spread)."""
    import s2s_ad
    from s2s_ad.reverse import arrays

    kept = []
    original = arrays.ArraySweep._spread_by_its_use
    monkeypatch.setattr(arrays.ArraySweep, "_spread_by_its_use",
                        lambda self, op: kept.append(original(self, op)) or kept[-1])
    cancelled = extreme = 0
    n = breadth(75, 150)  # programs: the floors below are for 150, scaled to n
    for seed in SHIFT_SEEDS[:n]:
        prog = shift_program(RandomDraw(seed))
        fn = make_function(prog.source)
        text = s2s_ad.gradient_source(fn, wrt=list(prog.wrt), output=prog.output)
        cancelled += "no adjoint: the result does not depend on" in text
        extreme += "extreme_adjoint(" in text[text.index("def grad_f"):]
    unspread = sum(k is not None for k in kept)
    floor = (lambda k: k * n // len(SHIFT_SEEDS))  # noqa: E731
    assert cancelled >= floor(12) and extreme >= floor(40), (cancelled, extreme)
    assert unspread >= floor(40) and len(kept) - unspread >= floor(40), (unspread, len(kept))


# -- the wider checks (tests/fuzz_checks.py): vjp, explain, graph, the drawn graph
# run node by node and the CLI's module in a fresh interpreter, on a few dozen
# programs; the soak (python -m tests.fuzz --soak) runs thousands.

def _wider(make, run, seeds, tmp_path, checks=CHECKS, **kw):
    """Run every check on each seed's program; grad must be right and every
    other failure of a known class (fuzz_checks.KNOWN, with strict xfails in
    test_fuzz_found.py; none now). How often each check agreed."""
    agreed = Counter()
    unknown = []
    for seed in seeds:
        prog = make(RandomDraw(seed))
        label = f"w{seed}"
        o = run(prog, str(tmp_path), label, checks=checks, **kw)
        assert o.status != "mismatch", report(label, prog, o)
        for kind, c in o.checks.items():
            agreed[kind] += c.status == "agree"
            if c.status in ("wrong", "error") and known_failure(kind, c) is None:
                unknown.append(report(label, prog, o))
    assert not unknown, "\n".join(unknown)
    return agreed


def test_wider_checks_on_random_programs(tmp_path):
    seeds = range(breadth(10, 20))
    agreed = _wider(program, run_one, seeds, tmp_path, use_sympy=False)
    assert min(agreed[k] for k in CHECKS if k != "grad") == len(seeds), agreed


def test_wider_checks_on_short_circuit_conditions(tmp_path):
    seeds = range(breadth(5, 20))
    agreed = _wider(condition_program, run_one, seeds, tmp_path, use_sympy=False)
    assert min(agreed[k] for k in CHECKS if k != "grad") == len(seeds), agreed


def test_the_drawn_sweep_of_the_short_circuit_program_the_soak_found_runs(tmp_path):
    """Seed 17 (``--soak``): guards of backward steps a local derivative of
    which may be infinite (``if t51: dt42 = dt43 / (t42 * math.log(2.0))
    else: dt42 = 0.0``), one testing three recorded decisions. The drawing
    dropped the adjoint such a guard starts (no edge brought dt42 to the node
    reading it); grad, checked against finite differences, was right."""
    prog = condition_program(RandomDraw(17))
    o = run_one(prog, str(tmp_path), "w17", use_sympy=False, checks=("grad", "graph", "graphrun"))
    assert o.status == "ok" and {k: c.status for k, c in o.checks.items()} == {
        "graph": "agree", "graphrun": "agree"}, report("w17", prog, o)


def test_wider_checks_on_kinds_programs(tmp_path):
    seeds = range(breadth(4, 8))
    agreed = _wider(kinds_program, run_numpy_one, seeds, tmp_path)
    assert min(agreed[k] for k in CHECKS if k != "grad") >= len(seeds) - 1, agreed


def test_wider_checks_on_helper_programs(tmp_path):
    seeds = range(breadth(6, 12))
    agreed = _wider(helper_program, run_helper_one, seeds, tmp_path)
    assert min(agreed[k] for k in ("vjp", "explain", "graph", "cli")) >= len(seeds) - 1, agreed


def test_wider_checks_on_numpy_rules_programs(tmp_path):
    seeds = range(breadth(4, 8))
    agreed = _wider(rules_program, run_numpy_one, seeds, tmp_path)
    assert min(agreed[k] for k in CHECKS if k != "grad") >= len(seeds) - 1, agreed


def test_wider_checks_on_numpy_programs(tmp_path):
    seeds = range(breadth(4, 8))
    agreed = _wider(numpy_program, run_numpy_one, seeds, tmp_path)
    assert min(agreed[k] for k in CHECKS if k != "grad") >= len(seeds) - 1, agreed


def test_wider_checks_see_a_wrong_gradient(tmp_path):
    """The vjp and CLI checks compare numbers: a gradient off by 1e-6 relative
    (as if grad had been wrong) is reported as wrong by both."""
    prog = program(RandomDraw(0))
    o = run_one(prog, str(tmp_path), "off", use_sympy=False, checks=("grad",))
    assert o.status == "ok"
    fn = import_program(prog, str(tmp_path), "off")
    g = s2s_ad.grad(fn, prog.wrt)(**prog.point)
    grads = [x * (1 + 1e-6) + 1e-9 for x in (g if isinstance(g, tuple) else [g])]
    subject = Subject(fn, str(tmp_path / "fuzzprog_off.py"), prog.point, prog.wrt,
                      prog.wrt_names, grads, fn(**prog.point))
    checks = run_checks(subject, ("vjp", "cli", "jvp"), str(tmp_path), "off")
    assert checks["vjp"].status == checks["cli"].status == checks["jvp"].status == "wrong", \
        checks
    right = Subject(fn, str(tmp_path / "fuzzprog_off.py"), prog.point, prog.wrt,
                    prog.wrt_names, list(g if isinstance(g, tuple) else [g]), fn(**prog.point))
    assert run_checks(right, ("jvp",), str(tmp_path), "off")["jvp"].status == "agree"


def test_second_check_agrees_on_random_programs(tmp_path):
    """The second-order check (the CLI's gradient file read back, its JVP and
    jvp(grad(fn)) against central differences of its gradient) on scalar and
    NumPy-loop programs."""
    agreed = _wider(program, run_one, range(10), tmp_path, checks=("grad", "second"),
                    use_sympy=False)
    assert agreed["second"] == 10, agreed
    # (about 3 s a program: one in the default run, where tests/test_closure_numpy.py reads
    # back the gradient files of nine more NumPy-loop programs and checks their JVPs against
    # central differences of the file's gradient; 6 with --soak)
    seeds = range(breadth(1, 6))
    agreed = _wider(numpy_loop_program, run_numpy_one, seeds, tmp_path,
                    checks=("grad", "second"))
    assert agreed["second"] >= breadth(1, 4), agreed


def jvp_off(real):
    """``s2s_ad.jvp`` whose tangents are off by 1e-3 relative (and 1e-3
    absolute): a wrong second derivative the checks must report."""
    def off(*args, **kwargs):
        j = real(*args, **kwargs)

        def shifted(*a, **k):
            value, tangent = j(*a, **k)
            scale = (lambda t: t * (1 + 1e-3) + 1e-3)
            return value, (tuple(scale(t) for t in tangent) if isinstance(tangent, tuple)
                           else scale(tangent))
        shifted.__s2s_ad_tangents__ = getattr(j, "__s2s_ad_tangents__", None)
        shifted.__signature__ = __import__("inspect").signature(j)
        if shifted.__s2s_ad_tangents__ is None:
            del shifted.__s2s_ad_tangents__
        return shifted
    return off


def test_second_check_sees_a_wrong_product(tmp_path, monkeypatch):
    """A Hessian-vector product off by 1e-3 relative (as if the second
    derivative were wrong) is reported as wrong."""
    from tests import fuzz_checks

    prog = program(RandomDraw(3))
    assert run_one(prog, str(tmp_path), "w2", use_sympy=False).status == "ok"
    fn = import_program(prog, str(tmp_path), "w2")
    g = s2s_ad.grad(fn, prog.wrt)(**prog.point)
    subject = Subject(fn, str(tmp_path / "fuzzprog_w2.py"), prog.point, prog.wrt,
                      prog.wrt_names, list(g if isinstance(g, tuple) else [g]), fn(**prog.point))
    assert run_checks(subject, ("second",), str(tmp_path), "w2")["second"].status == "agree"
    monkeypatch.setattr(fuzz_checks.s2s_ad, "jvp", jvp_off(s2s_ad.jvp))
    assert run_checks(subject, ("second",), str(tmp_path), "w3")["second"].status == "wrong"
