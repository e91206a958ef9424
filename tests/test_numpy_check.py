"""`check` on NumPy functions: a numeric check that says so, a clear refusal
without shapes, and a mismatch when a rule is wrong."""

import os
import subprocess
import sys

import pytest

import s2s_ad
from array_oracle import make_function
from s2s_ad import S2SError
from s2s_ad.rules import RULES, Rule

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_numeric_check_agrees_and_never_claims_proof():
    from tied_weights import tied
    v = s2s_ad.check(tied, shapes={"W": (4, 3), "x": (3,), "t": (3,)})
    assert v.status == "agrees" and v.ok
    text = str(v)
    assert "not a proof" in text and "PROVED" not in text and "proved" not in text.lower()


def test_check_needs_shapes():
    from mlp import mlp_loss
    with pytest.raises(S2SError, match="--shape W1=..."):
        s2s_ad.check(mlp_loss)


def test_wrong_rule_is_a_mismatch(monkeypatch):
    wrong = Rule("np.sin", "np.sin(x)", ("np.sin(x)",), "array")
    monkeypatch.setitem(RULES, "np.sin", wrong)
    f = make_function("def f(x):\n    return np.sum(np.sin(x) * 3.0)  # wrong rule\n")
    v = s2s_ad.check(f, shapes={"x": (2, 2)})
    assert v.status == "mismatch" and "central difference" in str(v)


def test_cli_check_with_shapes():
    env = dict(os.environ, PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, "-m", "s2s_ad", "check", "examples/softmax_xent.py:softmax_xent",
                        "--shape", "W=4x3,X=5x4", "--shape", "T=5x3", "--wrt", "W"],
                       cwd=ROOT, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "AGREES NUMERICALLY" in r.stdout and "not a proof" in r.stdout
    r = subprocess.run([sys.executable, "-m", "s2s_ad", "check", "examples/mlp.py:mlp_loss"],
                       cwd=ROOT, env=env, capture_output=True, text=True)
    assert r.returncode == 2 and "--shape" in r.stderr and "Traceback" not in r.stderr
