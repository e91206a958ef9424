"""Everyday Python in objective functions: input checks kept in the generated
code (`assert`, `if c: raise E(f"...")`), tuple and list defaults of numbers,
`match` on a static value, conditions over lists and `isinstance`.

Gradients are compared with central differences of the original function
(tests/oracle.py); a check must raise in the generated code — through
`grad`, `vjp`, `jvp` and the `grad -o` file imported in a fresh interpreter
without s2s-ad — exactly when, and with exactly the exception and message
that, the original raises."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys

import pytest

import s2s_ad
from s2s_ad.errors import SourceError
from tests import everyday_src as E
from tests.array_oracle import make_function
from tests.oracle import central_difference, close
from tests.soak import rows_beyond

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _fd(fn, args, i, kwargs=None):
    kwargs = kwargs or {}
    return central_difference(lambda *a: fn(*a, **kwargs), list(args), i)


def _raised(call):
    try:
        call()
    except Exception as exc:  # noqa: BLE001 — the exception is what is compared
        return type(exc), str(exc)
    return None


# (function, arguments, indices of the float parameters differentiated)
GOOD = [
    (E.checked, [1.7, 0.6], (0, 1)),
    (E.checked, [0.3, -4.0], (0, 1)),
    (E.checked_elif, [1.2, 3.0], (0, 1)),
    (E.checked_else, [2.5], (0,)),
    (E.raise_after_returns, [1.5], (0,)),
    (E.raise_after_returns, [0.4], (0,)),
    (E.in_helper, [1.3, 0.7], (0, 1)),
    (E.in_helper_of_helper, [1.3, 0.7], (0, 1)),
    (E.helper_result_unused, [1.3, 0.7], (0, 1)),
    (E.in_loop, [0.9, 4], (0,)),
    (E.in_loop_unused, [0.9, 4], (0,)),
    (E.in_branch, [0.8, 1.1], (0, 1)),
    (E.in_branch, [-0.8, -1.1], (0, 1)),
    (E.in_while, [37.0], (0,)),
    (E.match_in_helper, [1.3], (0,)),
    (E.match_in_loop, [2.3, 5], (0,)),
    (E.poly, [1.3], (0,)),
    (E.poly_of_default, [0.7], (0,)),
    (E.all_positive, [1.5, 0.5], (0, 1)),
    (E.all_positive, [1.5, -0.5], (0, 1)),
    (E.flags_all, [1.5, 2.5], (0, 1)),
    (E.flags_all, [1.5, 12.5], (0, 1)),
    (E.flags_all, [-1.5, 2.5], (0, 1)),
    (E.all_in_loop, [2.5, 4], (0,)),
    (E.all_in_loop, [0.5, 3], (0,)),
    (E.number_or_not, [1.3], (0,)),
    (E.number_in_helper, [1.3, -0.4], (0, 1)),
    (E.guarded_match, [2.0], (0,)),
    (E.guarded_match, [-2.0], (0,)),
    (E.guarded_match, [2.0, "b", False], (0,)),
    (E.walrus, [2.0, 0.5], (0, 1)),
    (E.walrus, [0.2, 0.5], (0, 1)),
    (E.countdown, [0.7, 4], (0,)),
    (E.countdown, [1.9, 0], (0,)),
    (E.truth_of_difference, [0.7, 1.3], (0, 1)),
    (E.truth_of_difference, [0.7, 2.6], (0, 1)),
]

# (function, arguments): the original raises there
BAD = [
    (E.checked, [-1.0, 0.5]),
    (E.checked, [1.0, -6.5]),
    (E.checked_elif, [-0.25, 1.0]),
    (E.checked_elif, [1.0, 11.0]),
    (E.checked_else, [-2.0]),
    (E.raise_after_returns, [-0.5]),
    (E.in_helper, [0.0, 1.0]),
    (E.in_helper_of_helper, [1.0, -1.0]),
    (E.helper_result_unused, [1.0, 200.0]),
    (E.in_loop, [3.0, 40]),
    (E.in_loop_unused, [0.9, 9]),
    (E.in_branch, [1.0, -2.0]),
    (E.in_while, [1e9]),
    (E.guarded_match, [200.0, "a", False]),
    (E.truth_of_difference, [10.0, 1.3]),
]


def _name(case):
    return f"{case[0].__name__}{case[1]}"


@pytest.mark.parametrize("fn,args,wrt", GOOD, ids=[_name(c) for c in GOOD])
def test_gradient_matches_central_differences(fn, args, wrt):
    got = s2s_ad.grad(fn, wrt=wrt)(*args)
    for k, i in enumerate(wrt):
        assert close(got[k], _fd(fn, args, i), rtol=1e-5), (fn.__name__, i, got, args)


@pytest.mark.parametrize("fn,args,wrt", GOOD, ids=[_name(c) for c in GOOD])
def test_vjp_and_jvp_match_central_differences(fn, args, wrt):
    value, vjp_fn = s2s_ad.vjp(fn, *args)
    assert close(value, fn(*args))
    cot = vjp_fn(1.0)
    names = fn.__code__.co_varnames[:fn.__code__.co_argcount]
    for i in wrt:
        want = _fd(fn, args, i)
        assert close(cot[i], want, rtol=1e-5)
        seeds = {f"d{names[j]}": 1.0 if j == i else 0.0 for j in wrt}
        v, tangent = s2s_ad.jvp(fn, wrt=tuple(names[j] for j in wrt))(*args, **seeds)
        assert close(v, fn(*args)) and close(tangent, want, rtol=1e-5)


@pytest.mark.parametrize("fn,args", BAD, ids=[_name(c) for c in BAD])
def test_checks_raise_what_the_original_raises(fn, args):
    want = _raised(lambda: fn(*args))
    assert want is not None, "the case must make the original raise"
    assert _raised(lambda: s2s_ad.grad(fn, wrt=0)(*args)) == want
    assert _raised(lambda: s2s_ad.value_and_grad(fn, wrt=0)(*args)) == want
    assert _raised(lambda: s2s_ad.vjp(fn, *args)) == want
    name = fn.__code__.co_varnames[0]
    assert _raised(lambda: s2s_ad.jvp(fn, wrt=name)(*args, **{f"d{name}": 1.0})) == want


def test_a_check_decided_while_lowering_is_dropped_or_kept():
    f = make_function("def f(x, mode='a'):\n"
                      "    assert mode in ('a', 'b'), f'bad mode {mode}'\n"
                      "    return x * x\n")
    text = s2s_ad.gradient_source(f, wrt="x")
    assert "AssertionError" not in text
    assert s2s_ad.grad(f, wrt="x")(1.5) == pytest.approx(3.0)
    assert _raised(lambda: s2s_ad.grad(f, wrt="x")(1.5, mode="c")) == (AssertionError,
                                                                       "bad mode c")


def _cli(*argv):
    done = subprocess.run([sys.executable, "-m", "s2s_ad", *argv], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, env=dict(os.environ, PYTHONPATH=ROOT))
    return done


def _fresh(folder, module, function, args, kwargs=None):
    """``module.function(*args)`` in a fresh interpreter without s2s-ad:
    ``("ok", value)`` or ``("raise", exception class name, message)``."""
    probe = (f"import sys, {module}\n"
             "try:\n"
             f"    out = {module}.{function}(*{args!r}, **{kwargs or {}!r})\n"
             "except Exception as exc:\n"
             "    out = ('raise', type(exc).__name__, str(exc))\n"
             "else:\n"
             "    out = ('ok', out)\n"
             "assert 's2s_ad' not in sys.modules\n"
             "print(repr(out))\n")
    run = subprocess.run([sys.executable, "-c", probe], cwd=str(folder), capture_output=True,
                         text=True, env={"PATH": os.environ.get("PATH", "")}, timeout=120)
    assert run.returncode == 0, run.stderr
    return ast.literal_eval(run.stdout.strip())


@pytest.mark.parametrize("fn,good,bad", rows_beyond([
    (E.checked, [1.7, 0.6], [[-1.0, 0.5], [1.0, -6.5]]),
    (E.in_helper_of_helper, [1.3, 0.7], [[1.0, -1.0], [0.0, 1.0]]),
    (E.in_loop, [0.9, 4], [[3.0, 40]]),
    (E.raise_after_returns, [0.4], [[-0.5]]),
], 2))  # (the last two with --soak: both raise, and are differentiated, in-process above)
def test_the_grad_file_raises_in_a_fresh_interpreter(fn, good, bad, tmp_path):
    """`s2s-ad grad -o`: the file, imported without s2s-ad, computes the
    gradient and raises the original's exception with its message."""
    out = tmp_path / "checked_grad.py"
    done = _cli("grad", f"tests/everyday_src.py:{fn.__name__}", "--wrt", "0,", "-o", str(out))
    assert done.returncode == 0, done.stderr
    status, got = _fresh(tmp_path, "checked_grad", f"grad_{fn.__name__}", good)
    assert status == "ok" and close(got[0], _fd(fn, good, 0), rtol=1e-5)
    for args in bad:
        kind, message = _raised(lambda: fn(*args))
        assert _fresh(tmp_path, "checked_grad", f"grad_{fn.__name__}", args) == \
            ("raise", kind.__name__, message)


def test_the_gradient_of_the_grad_file_keeps_its_checks(tmp_path):
    """The generated module read back and differentiated again: its checks
    are checks of the subset, kept in the second gradient."""
    out = tmp_path / "first_grad.py"
    assert _cli("grad", "tests/everyday_src.py:checked", "--wrt", "x", "-o",
                str(out)).returncode == 0
    second = tmp_path / "second_grad.py"
    done = _cli("grad", f"{out}:grad_checked", "--wrt", "x", "-o", str(second))
    assert done.returncode == 0, done.stderr
    args = [1.7, 0.6]
    h = 1e-5
    fd = (s2s_ad.grad(E.checked, wrt="x")(args[0] + h, args[1])
          - s2s_ad.grad(E.checked, wrt="x")(args[0] - h, args[1])) / (2 * h)
    status, got = _fresh(tmp_path, "second_grad", "grad_grad_checked", args)
    assert status == "ok" and close(got, fd, rtol=1e-5)
    assert _fresh(tmp_path, "second_grad", "grad_grad_checked", [-1.0, 0.5]) == \
        ("raise", "AssertionError", "x must be positive")


# -- match on a static value -------------------------------------------------

@pytest.mark.parametrize("mode,x", [("l2", 1.3), ("l1", -0.7), ("abs", 0.4), ("huber", 0.6),
                                    ("huber", -2.5), (None, 0.9)])
def test_match_selects_code_like_an_if_chain(mode, x):
    g = s2s_ad.grad(E.loss, wrt="x")
    assert close(g(x, mode=mode), _fd(E.loss, [x], 0, {"mode": mode}), rtol=1e-5)
    value, tangent = s2s_ad.jvp(E.loss, wrt="x")(x, mode, dx=1.0)
    assert close(value, E.loss(x, mode)) and close(tangent, g(x, mode=mode))


def test_match_falls_to_the_wildcard_case_that_raises():
    assert _raised(lambda: s2s_ad.grad(E.loss, wrt="x")(1.0, mode="zz")) == \
        (ValueError, "unknown mode zz")


def test_match_through_the_cli_with_a_static(tmp_path):
    out = tmp_path / "loss_grad.py"
    done = _cli("grad", "tests/everyday_src.py:loss", "--wrt", "x", "--static", "mode=huber",
                "-o", str(out))
    assert done.returncode == 0, done.stderr
    status, got = _fresh(tmp_path, "loss_grad", "grad_loss", [0.6], {"mode": "huber"})
    assert status == "ok" and close(got, 0.6)


@pytest.mark.parametrize("body,message,col", [
    ("    match x:\n        case 'a':\n            return x\n        case _:\n"
     "            return 2.0 * x\n", "a value computed when the code runs", 11),
    ("    match mode:\n        case [a, b]:\n            return x\n        case _:\n"
     "            return x\n", "this `case` pattern is not supported", 14),
    ("    match mode:\n        case other:\n            return x * len(other)\n",
     "this `case` pattern is not supported", 14),
])
def test_match_refusals_are_located(body, message, col):
    f = make_function("def f(x, mode='a'):\n" + body)
    with pytest.raises(SourceError, match=message) as err:
        s2s_ad.grad(f, wrt="x")(1.0)
    assert err.value.col + 1 == col


# -- refusals that stay ------------------------------------------------------

class CustomError(Exception):
    pass


@pytest.mark.parametrize("body,message", [
    ("    try:\n        y = x * x\n    except ValueError:\n        y = x\n    return y\n",
     "`try` is not differentiable"),
    ("    if x < 0:\n        raise ValueError('neg') from None\n    return x\n",
     "`raise ... from ...` is not supported"),
    ("    if x < 0:\n        raise CustomError('neg')\n    return x\n",
     "only Python's own exceptions"),
    ("    if x < 0:\n        raise ValueError('neg', x)\n    return x\n",
     "at most one argument"),
    ("    if x < 0:\n        raise ValueError('neg %s' % x)\n    return x\n",
     "a string or an f-string"),
    ("    y = x * x\n    raise ValueError('always')\n", "`raise` is supported as a check"),
    ("    if x > 0:\n        y = x\n    raise ValueError('no')\n",
     "`raise` is supported as a check"),
    ("    xs = [x, x]\n    assert x > 0, f'{xs}'\n    return x\n",
     "may format numbers and arrays"),
])
def test_refusals_of_what_stays_refused(body, message):
    f = make_function("def f(x):\n" + body, env={"CustomError": CustomError})
    with pytest.raises(SourceError, match=message) as err:
        s2s_ad.grad(f)(1.0)
    assert err.value.line >= 2 and "^" in str(err.value)


# -- tuple and list defaults of numbers ---------------------------------------

@pytest.mark.parametrize("coeffs", [None, [2.0], [1.0, -1.0, 0.5, 0.25], (0.5, 1.5)])
def test_a_tuple_default_is_a_list_parameter(coeffs):
    args = [1.3] if coeffs is None else [1.3, coeffs]
    g = s2s_ad.grad(E.poly, wrt=("x", "coeffs"))(*args)
    assert close(g[0], _fd(E.poly, args, 0), rtol=1e-5)
    items = list(E.poly.__defaults__[0] if coeffs is None else coeffs)
    for k in range(len(items)):
        def along(c, k=k):
            cs = list(items)
            cs[k] = c
            return E.poly(1.3, cs)
        assert close(g[1][k], central_difference(along, [items[k]], 0), rtol=1e-5)
    value, tangent = s2s_ad.jvp(E.poly, wrt="x")(*args, dx=1.0)
    assert close(value, E.poly(*args)) and close(tangent, g[0])


def test_a_list_default_in_a_helper_and_given_by_a_caller():
    for args in ([0.7], [-1.1]):
        assert close(s2s_ad.grad(E.poly_of_default)(*args), _fd(E.poly_of_default, args, 0),
                     rtol=1e-5)
    g = s2s_ad.grad(E.poly_given, wrt=("x", "y"))(0.7, 1.9)
    for i in (0, 1):
        assert close(g[i], _fd(E.poly_given, [0.7, 1.9], i), rtol=1e-5)


def test_the_default_of_the_grad_file(tmp_path):
    out = tmp_path / "poly_grad.py"
    done = _cli("grad", "tests/everyday_src.py:poly", "--wrt", "x", "-o", str(out))
    assert done.returncode == 0, done.stderr
    status, got = _fresh(tmp_path, "poly_grad", "grad_poly", [1.3])
    assert status == "ok" and close(got, _fd(E.poly, [1.3], 0), rtol=1e-5)


# -- conditions people write ---------------------------------------------------

@pytest.mark.parametrize("xs", [[1.0, 2.0], [1.0, -2.0, 3.0], [0.5], [-0.5]])
def test_any_over_a_list_parameter(xs):
    g = s2s_ad.grad(E.any_negative)(xs)
    assert len(g) == len(xs)
    for k in range(len(xs)):
        def along(v, k=k):
            ys = list(xs)
            ys[k] = v
            return E.any_negative(ys)
        assert close(g[k], central_difference(along, [xs[k]], 0), rtol=1e-5)


@pytest.mark.parametrize("ws", [[], [1.0, 2.5], (0.5,)])
def test_a_list_is_true_when_not_empty(ws):
    got = s2s_ad.grad(E.empty_or_not, wrt="x")(1.3, ws)
    assert close(got, _fd(E.empty_or_not, [1.3, ws], 0), rtol=1e-5)


def test_all_any_short_circuit_like_python():
    """An item after the first false one is not evaluated: log of a
    negative number would raise."""
    f = make_function("import math\n"
                      "def f(x, y):\n"
                      "    if all(math.log(v) > 0 for v in (x, y)):\n"
                      "        return x * y\n"
                      "    return x\n", env={})
    assert f(1.0, -2.0) == 1.0
    assert s2s_ad.grad(f, wrt="x")(1.0, -2.0) == 1.0
    assert close(s2s_ad.grad(f, wrt="x")(2.0, 3.0), 3.0)


def test_isinstance_is_decided_and_checked_when_the_code_runs():
    """`isinstance(x, float)` is decided for a float; an int, for which the
    original takes the other branch, is refused by the generated code."""
    g = s2s_ad.grad(E.number_or_not)
    assert close(g(1.3), _fd(E.number_or_not, [1.3], 0), rtol=1e-5)
    kind, message = _raised(lambda: g(2))
    assert kind is TypeError and "isinstance(x, float)" in message
    # isinstance(v, (float, int)) is the same for both: no check is generated
    assert "TypeError" not in s2s_ad.gradient_source(E.number_in_helper)


def test_isinstance_gives_a_number_and_an_array_their_own_code():
    import numpy as np
    from tests import everyday_np_src as N
    g = s2s_ad.grad(N.scalar_or_array)
    assert close(g(1.3), 3 * 1.3 ** 2)
    x = np.array([0.5, -1.5, 2.0])
    np.testing.assert_allclose(g(x), 2 * x)
    value, tangent = s2s_ad.jvp(N.scalar_or_array)(x, dx=np.array([1.0, 0.0, 0.0]))
    assert close(value, float(np.sum(x * x))) and close(tangent, 1.0)
    value, tangent = s2s_ad.jvp(N.scalar_or_array)(1.3, dx=1.0)
    assert close(value, 1.3 ** 3) and close(tangent, 3 * 1.3 ** 2)


def test_conditions_in_the_grad_file(tmp_path):
    for fn, args in ((E.all_positive, [1.5, 0.5]), (E.number_or_not, [1.3])):
        out = tmp_path / f"{fn.__name__}_grad.py"
        done = _cli("grad", f"tests/everyday_src.py:{fn.__name__}", "--wrt", "0,", "-o",
                    str(out))
        assert done.returncode == 0, done.stderr
        status, got = _fresh(tmp_path, f"{fn.__name__}_grad", f"grad_{fn.__name__}", args)
        assert status == "ok" and close(got[0], _fd(fn, args, 0), rtol=1e-5)
    status, kind, message = _fresh(tmp_path, "number_or_not_grad", "grad_number_or_not", [2])
    assert (status, kind) == ("raise", "TypeError")


@pytest.mark.parametrize("body,message", [
    ("    xs = []\n    for i in range(n):\n        xs.append(x * i)\n"
     "    if all(v > 0 for v in xs):\n        return x\n    return 2.0 * x\n",
     "over a list grown when the code runs"),
    ("    if isinstance(x, type(x)):\n        return x\n    return 2.0 * x\n",
     "takes a class or a tuple of classes"),
    ("    if all(v > 0 for v in (x, x) if v < 3):\n        return x\n    return 2.0 * x\n",
     "one `for` and no `if`"),
    ("    if x and n:\n        return x\n    return 2.0 * x\n", "must be a comparison"),
])
def test_condition_refusals_are_located(body, message):
    f = make_function("def f(x, n=3):\n" + body)
    with pytest.raises(SourceError, match=message):
        s2s_ad.grad(f, wrt="x")(1.0)


def test_match_on_a_parameter_without_a_default():
    """A parameter a `match` selects on is static when the call passes a
    string; given a number, it is refused, located at the subject."""
    g = s2s_ad.grad(E.match_no_default, wrt="x")
    assert close(g(1.3, "l2"), _fd(E.match_no_default, [1.3, "l2"], 0), rtol=1e-5)
    assert close(g(-1.3, "l1"), _fd(E.match_no_default, [-1.3, "l1"], 0), rtol=1e-5)
    with pytest.raises(SourceError, match="`match` on `mode`"):
        g(1.3, 2.0)



# -- print and := ----------------------------------------------------------------

def test_print_is_kept_once_per_call(capsys):
    E.printing(0.5, 3)
    want = capsys.readouterr().out
    assert want.count("step") == 3
    g = s2s_ad.grad(E.printing, wrt="x")
    for run in (lambda: g(0.5, 3), lambda: s2s_ad.jvp(E.printing, wrt="x")(0.5, 3, dx=1.0),
                lambda: s2s_ad.grad(E.printing, wrt="x", checkpoint=2)(0.5, 3),
                lambda: s2s_ad.vjp(E.printing, 0.5, 3)):
        capsys.readouterr()
        run()
        assert capsys.readouterr().out == want
    assert close(g(0.5, 3), _fd(E.printing, [0.5, 3], 0), rtol=1e-5)


def test_print_in_the_grad_file(tmp_path):
    out = tmp_path / "printing_grad.py"
    done = _cli("grad", "tests/everyday_src.py:printing", "--wrt", "x", "-o", str(out))
    assert done.returncode == 0, done.stderr
    run = subprocess.run([sys.executable, "-c", "import printing_grad as m; "
                          "m.grad_printing(0.5, 3)"], cwd=str(tmp_path), capture_output=True,
                         text=True, env={"PATH": os.environ.get("PATH", "")}, timeout=120)
    here = subprocess.run([sys.executable, "-c", "from tests import everyday_src as E; "
                           "E.printing(0.5, 3)"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert run.returncode == 0 and run.stdout == here.stdout and "step 2" in run.stdout


def test_walrus_in_a_loop_over_a_list():
    for xs in ([0.1, 1.0, 3.0], [2.0]):
        g = s2s_ad.grad(E.walrus_in_loop, wrt="x")(2.0, xs)
        assert close(g, _fd(E.walrus_in_loop, [2.0, xs], 0), rtol=1e-5)


@pytest.mark.parametrize("body,message", [
    ("    return x if x > 0 else (y := 2 * x)\n", "in an arm of a conditional expression"),
    ("    if x > 0 and (y := x * 2) > 1:\n        return y\n    return x\n",
     "after the first"),
    ("    while (y := x * 2) > 100:\n        x = x / 2\n    return x\n", "`while` test"),
    ("    print(x, file=None)\n    return x\n", "`sep=` and `end=` constant strings"),
    ("    xs = [x, x]\n    print(xs)\n    return x\n", "remove the print"),
])
def test_print_and_walrus_refusals_are_located(body, message):
    f = make_function("def f(x):\n" + body)
    with pytest.raises(SourceError, match=message):
        s2s_ad.grad(f)(1.0)


def test_a_length_check_of_a_list_parameter():
    """Code per length: the check is decided for each length given."""
    g = s2s_ad.grad(E.three_coefficients, wrt=("x", "c"))
    got = g(0.7, [1.0, -2.0, 0.5])
    assert close(got[0], _fd(E.three_coefficients, [0.7, [1.0, -2.0, 0.5]], 0), rtol=1e-5)
    assert [round(v, 12) for v in got[1]] == [1.0, 0.7, round(0.7 * 0.7, 12)]
    want = _raised(lambda: E.three_coefficients(0.7, [1.0, 2.0, 3.0, 4.0]))
    assert _raised(lambda: g(0.7, [1.0, 2.0, 3.0, 4.0])) == want == (
        ValueError, "expected 3 coefficients, got 4")


@pytest.mark.parametrize("fn", [E.checked_elif, E.raise_after_returns, E.in_helper_of_helper,
                                E.all_positive, E.walrus, E.number_or_not, E.number_in_helper],
                         ids=lambda f: f.__name__)
def test_proved_by_sympy(fn):
    """`check` runs the original and the generated code on symbols: checks,
    `all`/`any`, `:=` and `isinstance` (a symbol stands for a float) too."""
    assert s2s_ad.check(fn).status == "proved"


def test_max_of_numbers_is_not_a_list_read():
    """`max(x, y, 0.25)` compares numbers: `x` is not read as a list there, so
    a float operand of `and` is refused as a condition (it once made `x` a
    list parameter, refused only when the gradient was called)."""
    f = make_function("def f(x, y):\n    v = x and y\n    q = max(x, y, 0.25)\n"
                      "    return q * y\n")
    with pytest.raises(SourceError, match="a condition must be a comparison") as info:
        s2s_ad.grad(f)
    assert info.value.line == 2
    g = make_function("def g(x, y):\n    q = max(x, y, 0.25)\n    return q * y\n", name="g")
    assert close(s2s_ad.grad(g, wrt=(0, 1))(0.3, 0.7)[1], 0.7 + 0.7)


@pytest.mark.parametrize("x,y", [(0.7, 1.3), (1.2, 2.0), (2.1, 0.4)])
def test_the_truth_of_a_number_is_its_difference_from_zero(x, y):
    """`if r:`, `while n:`, `not r` and `assert r` on numbers test `r != 0`,
    as Python does; at `r == 0` exactly the other branch runs, in the
    generated code as in the original."""
    g = s2s_ad.grad(E.countdown, wrt=0)
    for n in (0, 3):
        assert close(g(x, n), _fd(E.countdown, [x, n], 0), rtol=1e-6)
    value, both = s2s_ad.value_and_grad(E.truth_of_difference, wrt=(0, 1))(x, y)
    assert value == E.truth_of_difference(x, y)  # y == k (y = 2.0): the same branch
    assert close(both[0], _fd(E.truth_of_difference, [x, y], 0), rtol=1e-6)
    if y not in (0.0, 1.0, 2.0):  # at y == k the function jumps: no slope in y
        assert close(both[1], _fd(E.truth_of_difference, [x, y], 1), rtol=1e-6)
    text = s2s_ad.gradient_source(E.countdown, wrt=0)
    assert re.search(r"while \w+ != 0(\.0)?:", text) and re.search(r"= r != 0\.0", text)


def test_an_and_of_numbers_stays_refused_where_its_value_is_used():
    """`x and y` is one of its operands, not a bool: refused as a value."""
    f = make_function("def f(x, y):\n    v = x and y\n    return v * x\n")
    with pytest.raises(SourceError, match="a condition must be a comparison"):
        s2s_ad.grad(f)
