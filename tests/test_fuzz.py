"""Random programs, differentiated by s2s-ad, against finite differences and sympy.

The generator (tests/programs.py) and the runner (tests/fuzz.py) are shared
with the long soak, ``python -m tests.fuzz --n 10000``; here hypothesis drives
the generator with a bounded number of examples so the suite stays fast, and
shrinks any failure to a small program.
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz import report, run_numpy_one, run_one
from tests.programs import HypothesisDraw, RandomDraw, program
from tests.programs_numpy import numpy_loop_program, numpy_program

FAST = settings(max_examples=150, deadline=None, derandomize=True, database=None,
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


@settings(max_examples=60, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_random_numpy_programs_match_finite_differences(data, tmp_path_factory):
    prog = numpy_program(HypothesisDraw(data))
    label = f"n{abs(hash(prog.source)) % 10**12}"
    outcome = run_numpy_one(prog, str(tmp_path_factory.mktemp("np")), label)
    assert outcome.status != "mismatch", f"{prog.source}\nat {prog.point}\n{outcome.detail}"


@settings(max_examples=40, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_random_numpy_loops_filling_arrays_match_finite_differences(data, tmp_path_factory):
    prog = numpy_loop_program(HypothesisDraw(data))
    label = f"l{abs(hash(prog.source)) % 10**12}"
    outcome = run_numpy_one(prog, str(tmp_path_factory.mktemp("npl")), label)
    assert outcome.status != "mismatch", f"{prog.source}\nat {prog.point}\n{outcome.detail}"
