"""The command line against the API on the fuzzer's programs (issue 16): for
each family, ``S2S_SOAK_N`` programs (default 200, seeds from
``S2S_SOAK_SEED``, default 0) through ``s2s-ad grad FILE:FN -o OUT``, ``OUT``
imported and called in a fresh interpreter, its gradient equal to the API's
(1e-12) — the fuzzer's ``cli`` check (tests/fuzz_checks.py), after ``grad``
agreed with finite differences. An interpreter per program makes this slow
(0.2-0.5 s a program), so it runs only with ``pytest --soak``;
``python -m tests.fuzz --checks cli [--numpy ...]`` is the same from the
command line. tests/test_cli_differential.py does it for every example in
the default run."""

import io
import os

import pytest

from tests.fuzz import soak

FAMILIES = {"scalar": {}, "conditions": {"conditions": True}, "numpy": {"numpy": True},
            "numpy-loops": {"loops": True}, "numpy-shifts": {"shifts": True},
            "numpy-aliasing": {"aliasing": True}, "numpy-kinds": {"kinds": True},
            "numpy-rules": {"rules": True}, "helpers": {"helpers": True}}


@pytest.mark.soak
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_cli_module_in_a_fresh_interpreter_gives_the_api_gradient(family):
    n = int(os.environ.get("S2S_SOAK_N", "200"))
    first = int(os.environ.get("S2S_SOAK_SEED", "0"))
    out = io.StringIO()
    tally = soak(range(first, first + n), use_sympy=False, out=out, checks=("grad", "cli"),
                 **FAMILIES[family])
    assert not tally.failures, out.getvalue()
    assert tally.by_check["cli"]["agree"] >= n // 3, tally.summary(0.0)
