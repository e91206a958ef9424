"""Opt-in: google/tangent's corpus of test functions (its tests/functions.py),
read unmodified from a tangent checkout: each function not written for
TensorFlow differentiated by s2s-ad's grad, vjp and jvp (and, for the
``gradgrad_*`` ones, hessian and grad of grad) against central differences at
the points tangent's own harness fills in, or its refusal located in
functions.py (tests/tangent_files.py has the points, the checks and the
table of refusals).

Runs only when S2S_AD_TANGENT names the root of a tangent checkout (holding
``tests/functions.py``); otherwise the module is skipped before anything is
imported:

    S2S_AD_TANGENT=/path/to/tangent \\
        python -m pytest -m tangent_files tests/test_tangent_files.py
"""

import inspect
import os

import pytest

from opt_in import checkout

tf = checkout("S2S_AD_TANGENT", "tangent's test functions (the root of a tangent checkout)",
              "tangent_files")

pytestmark = pytest.mark.tangent_files

FUNCTIONS = {f.__name__: f for f in tf.functions()}
AGREE = [n for n in FUNCTIONS if n not in tf.REFUSED]
REFUSED = [n for n in FUNCTIONS if n in tf.REFUSED]


def test_the_table_names_functions_of_the_file():
    assert set(tf.REFUSED) <= set(FUNCTIONS), set(tf.REFUSED) - set(FUNCTIONS)
    assert len(FUNCTIONS) > 100, sorted(FUNCTIONS)


@pytest.mark.parametrize("name", AGREE)
def test_derivatives_against_central_differences(name):
    r = tf.run(FUNCTIONS[name])
    assert r.points > 0, f"{name}: no point compared ({r.skipped} not smooth or not finite)"
    for check, worst in r.worst.items():
        assert worst <= tf.tolerance(check), (
            f"{name}: s2s-ad's {check} differs from central differences by {worst:.3g} "
            "(relative)")


@pytest.mark.parametrize("name", REFUSED)
def test_refusal_is_located_in_the_function(name):
    fn = FUNCTIONS[name]
    message = tf.refusal(fn)
    phrase, _ = tf.REFUSED[name]
    first = message.splitlines()[0]
    lines, start = inspect.getsourcelines(fn)
    path = os.path.join(tf.root(), "tests", "functions.py")
    assert phrase in message, message
    assert "^" in message, message
    assert first.startswith(path + ":"), message
    assert start <= int(first[len(path) + 1:].split(":")[0]) < start + len(lines), message
