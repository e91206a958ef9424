"""`check` of functions taking structures (dict, list, NamedTuple,
dataclass): each number leaf is a symbol named by its path and its entry of
the gradient is proved against sympy.diff (s2s_ad.verify_trees)."""

import math
import os
import re
import subprocess
import sys

import pytest

import check_trees_src as src
import s2s_ad
from oracle import central_difference, close
from s2s_ad import verify_paths
from s2s_ad.errors import S2SError
from s2s_ad.verify_sympy import _OutOfTime

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "tests", "check_trees_src.py")


def run_cli(*args):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-m", "s2s_ad", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def _entries(verdict) -> dict:
    return {r.name: r for r in verdict.results}


def _agrees_with_differences(verdict, fn, example, rebuild_at, x):
    """Each leaf's generated expression, at the sample point, against central
    differences of fn itself (independent of sympy and of s2s-ad)."""
    import sympy
    results = _entries(verdict)
    leaves = [n for n in results if n != "x"]
    point = {sympy.Symbol(n, real=True): v for n, v in zip(leaves, rebuild_at)}
    point[sympy.Symbol("x", real=True)] = x
    for i, name in enumerate(leaves):
        def f(*values):
            return fn(src_build(example, values[:-1]), values[-1])
        fd = central_difference(f, list(rebuild_at) + [x], i)
        got = float(sympy.sympify(results[name].got).evalf(30, subs=point))
        assert close(got, fd), (name, got, fd)


def src_build(example, leaves):
    from s2s_ad.tree_values import flatten
    return flatten(example)[1](list(leaves))


def test_a_dataclass_parameter_is_proved_leaf_by_leaf():
    verdict = s2s_ad.check(src.dataclass_loss, like={"p": src.PARAMS})
    assert verdict.status == "proved", str(verdict)
    assert [r.name for r in verdict.results] == ["p.w", "p.b", "x"]
    assert "dataclass_loss/dp.w: proved" in str(verdict)
    _agrees_with_differences(verdict, src.dataclass_loss, src.PARAMS, [0.5, 0.7], 0.9)


def test_a_dict_holding_a_list_is_proved_leaf_by_leaf():
    verdict = s2s_ad.check(src.dict_loss, like={"params": src.DICT})
    assert verdict.status == "proved", str(verdict)
    assert [r.name for r in verdict.results] == [
        "params['w']", "params['c'][0]", "params['c'][1]", "x"]
    _agrees_with_differences(verdict, src.dict_loss, src.DICT, [0.5, 0.7, 0.9], 1.1)


def test_namedtuples_in_a_dataclass_through_helpers_and_a_loop():
    verdict = s2s_ad.check(src.model_loss, like={"m": src.MODEL}, wrt="m")
    assert verdict.status == "proved", str(verdict)
    assert [r.name for r in verdict.results] == [
        "m.layers[0].w", "m.layers[0].b", "m.layers[1].w", "m.layers[1].b", "m.scale"]


def test_branches_on_a_leaf_are_paths_and_at_takes_the_structure_or_a_leaf():
    verdict = s2s_ad.check(src.namedtuple_branch, like={"l": src.LAYER})
    assert verdict.status == "proved" and len(verdict.paths) == 2, str(verdict)
    assert "l.w > 1.0" in str(verdict) and "l.w <= 1.0" in str(verdict)
    given = s2s_ad.check(src.namedtuple_branch, like={"l": src.LAYER},
                         at={"l": src.Layer(2.0, 0.3)}, explore=0)
    assert given.paths[0].point.startswith("l.w=2, l.b=0.3"), str(given)
    by_leaf = s2s_ad.check(src.namedtuple_branch, like={"l": src.LAYER},
                           at={"l.w": 2.0}, explore=0)
    assert by_leaf.paths[0].decisions == ["l.w > 1.0"], str(by_leaf)


def test_a_wrong_rule_is_a_mismatch_on_the_leaf_it_touches(wrong_sin):
    verdict = s2s_ad.check(src.dataclass_loss, like={"p": src.PARAMS})
    assert verdict.status == "mismatch" and not verdict.ok, str(verdict)
    entries = _entries(verdict)
    assert entries["p.w"].status == "mismatch"
    assert entries["p.b"].status == "proved"  # p.b * x * x does not go through sin
    assert "dataclass_loss/dp.w: MISMATCH" in str(verdict)
    dict_verdict = s2s_ad.check(src.dict_loss, like={"params": src.DICT})
    assert _entries(dict_verdict)["params['c'][1]"].status == "mismatch", str(dict_verdict)


def _no_symbolic_comparison(*args, **kwargs):
    raise _OutOfTime()


def test_the_float64_fallback_reads_each_leaf(monkeypatch):
    # When a comparison runs out of time, a leaf is compared with central
    # differences of the function at the path's point.
    monkeypatch.setattr(verify_paths, "compare", _no_symbolic_comparison)
    verdict = s2s_ad.check(src.model_loss, like={"m": src.MODEL})
    assert verdict.status == "agrees", str(verdict)
    assert all("central differences at the path's point" in r.detail for r in verdict.results)


def test_the_float64_fallback_catches_a_wrong_rule_on_a_leaf(monkeypatch, wrong_sin):
    monkeypatch.setattr(verify_paths, "compare", _no_symbolic_comparison)
    verdict = s2s_ad.check(src.dict_loss, like={"params": src.DICT})
    entries = _entries(verdict)
    assert entries["params['c'][1]"].status == "mismatch", str(verdict)
    assert entries["params['c'][0]"].status == "agrees", str(verdict)


def test_refusals_say_why():
    import numpy as np
    with pytest.raises(S2SError, match="first order and reverse mode"):
        s2s_ad.check(src.dataclass_loss, like={"p": src.PARAMS}, order=2)
    with pytest.raises(S2SError, match="first order and reverse mode"):
        s2s_ad.check(src.dataclass_loss, like={"p": src.PARAMS}, mode="forward")
    with pytest.raises(S2SError, match="holds NumPy arrays"):
        s2s_ad.check(src.dataclass_loss, like={"p": src.Params(np.ones(2), 0.5)})
    with pytest.raises(S2SError, match="not a dict, list, tuple, NamedTuple or dataclass"):
        s2s_ad.check(src.dataclass_loss, like={"p": 1.0})
    with pytest.raises(S2SError, match="does not have the structure"):
        s2s_ad.check(src.dataclass_loss, like={"p": src.PARAMS}, at={"p": {"w": 1.0}})


def test_the_command_line_takes_like():
    done = run_cli("check", f"{SRC}:model_loss", "--like", "m=MODEL")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("PROVED: gradient of model_loss")
    assert "dmodel_loss/dm.layers[1].b: proved" in done.stdout
    at = run_cli("check", f"{SRC}:namedtuple_branch", "--like", "l=LAYER", "--at", "l.w=2",
                 "--explore", "0")
    assert at.returncode == 0, at.stderr
    assert "l.w > 1.0" in at.stdout


def test_assert_gradient_takes_like():
    from s2s_ad.testing import assert_gradient
    verdict = assert_gradient(src.model_loss, like={"m": src.MODEL}, proof=True)
    assert verdict.status == "proved"
    # A wrong user rule: check takes it as given, assert_gradient compares each
    # leaf with central differences of the function itself.
    assert s2s_ad.check(src.through_wrong_rule, like={"params": src.RULED}).status == "proved"
    with pytest.raises(AssertionError) as info:
        assert_gradient(src.through_wrong_rule, like={"params": src.RULED})
    text = str(info.value)
    assert "dthrough_wrong_rule/dparams['a'] differs from central differences" in text, text
    assert "dthrough_wrong_rule/dparams['b'] differs" not in text, text  # b skips the rule
    # The reference is the true derivative: x * logistic(a * x) at a=0.5, x=0.9.
    found = re.search(r"dparams\['a'\] differs .*\n    reference  : ([-\d.e]+)", text)
    assert found and close(float(found.group(1)), 0.9 / (1 + math.exp(-0.45))), text
    assert "the user rule is wrong" in text
