"""Opt-in: HIPS autograd's examples, read unmodified from an autograd
checkout: each objective's gradient by s2s-ad against central differences
and ``autograd.grad``, or its refusal located in the example's file
(tests/autograd_files.py has the cases and how each objective is made).

Runs only when S2S_AD_AUTOGRAD names the root of an autograd checkout
(holding ``autograd/`` and ``examples/``); otherwise the module is skipped
before anything is imported:

    S2S_AD_AUTOGRAD=/path/to/autograd \\
        python -m pytest -m autograd_files tests/test_autograd_files.py
"""

import os

import pytest

from opt_in import checkout

ag = checkout("S2S_AD_AUTOGRAD", "autograd's examples (the root of an autograd checkout)",
              "autograd_files")

pytestmark = pytest.mark.autograd_files

AGREE = [c for c in ag.CASES if not c.refused]
REFUSED = [c for c in ag.CASES if c.refused]


@pytest.mark.parametrize("case", AGREE, ids=[c.id for c in AGREE])
def test_gradient_against_differences_and_autograd(case):
    r = ag.run(case)
    assert r.vs_fd <= ag.FD_TOL, (
        f"{case.id}: s2s-ad differs from central differences by {r.vs_fd:.3g} (relative)")
    if r.vs_autograd is not None:
        assert r.vs_autograd <= ag.AUTOGRAD_TOL, (
            f"{case.id}: s2s-ad differs from autograd.grad by {r.vs_autograd:.3g} (relative)")


@pytest.mark.parametrize("case", REFUSED, ids=[c.id for c in REFUSED])
def test_refusal_is_located_in_the_example(case):
    message = ag.refusal(case)
    first = message.splitlines()[0]
    assert case.refused in message, message
    assert "^" in message, message
    assert os.path.basename(case.at or case.file) + ":" in first, message
