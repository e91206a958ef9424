"""The shape flags of s2s_ad/reverse/flat_shapes.py: operators between arrays
of different shape classes in a function's straight-line code get
``g if flat else unbroadcast(g, x)``, ``flat = same_shapes(...)`` computed
once. Each gradient against central differences, with arguments of one shape
(the flag holds) and arguments that broadcast (it does not), at top level, in
a helper, a helper of a helper, a loop and a branch, through vjp, on Dask,
the ``grad -o`` file in a fresh interpreter, and that file read back and
differentiated again."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import flat_shapes_src as src
import s2s_ad
from array_oracle import fd_gradient
from modules import import_source
from soak import beyond

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RNG = np.random.default_rng(77)


def _u(*shape):
    return RNG.uniform(0.2, 1.3, shape)


# (function, arguments, what the flag says at run time)
CASES = [
    (src.mix, lambda: [_u(4), _u(4), _u(4)], "one shape"),
    (src.mix, lambda: [_u(3, 4), _u(4), _u(3, 1)], "broadcast"),
    (src.mix, lambda: [_u(4), _u(1), _u(4)], "broadcast"),
    (src.cell_sum, lambda: [_u(9), _u(3), _u(3)], "one shape"),
    (src.cell_sum, lambda: [_u(9), _u(3), _u(2, 3)], "broadcast"),
    (src.cell_sum, lambda: [_u(9), _u(3), _u(1)], "broadcast"),
    (src.run, lambda: [_u(9), _u(3), _u(3)], "one shape"),
    (src.branch, lambda: [_u(9), _u(3), _u(3)], "one shape"),
    (src.branch, lambda: [_u(9), _u(3), -_u(3)], "one shape"),
    (src.chain, lambda: [_u(4), _u(4), _u(4)], "one shape"),
    (src.chain, lambda: [_u(4), _u(4), -_u(4)], "one shape"),
    (src.chain, lambda: [_u(2, 4), _u(4), _u(1)], "broadcast"),
    (src.affine, lambda: [_u(3, 4), _u(4), _u(4)], "broadcast"),
    (src.affine, lambda: [_u(4), _u(4), _u(4)], "one shape"),
    (src.dense, lambda: [_u(5, 3), _u(3, 2), _u(2), _u(5, 2)], "a bias"),
    (src.dense, lambda: [_u(5, 3), _u(3, 2), _u(5, 2), _u(5, 2)], "one shape"),
    (src.dense, lambda: [_u(5, 3), _u(3, 2), _u(2), _u(2)], "a bias and a target"),
    (src.dense, lambda: [_u(3), _u(3, 2), _u(2), _u(5, 2)], "a target"),
    (src.dense, lambda: [_u(5, 3), _u(3, 1), _u(1, 1), _u(5, 4)], "a target"),
]
IDS = [f"{f.__name__}-{k}-{what}" for k, (f, _, what) in enumerate(CASES)]


@pytest.mark.parametrize("fn,make,what", CASES, ids=IDS)
def test_gradient_against_finite_differences(fn, make, what):
    args = make()
    wrt = tuple(range(len(args)))
    got = s2s_ad.grad(fn, wrt=wrt)(*args)
    for i, g in zip(wrt, got):
        assert np.shape(g) == np.shape(args[i])
        np.testing.assert_allclose(g, fd_gradient(fn, args, i), rtol=1e-5, atol=1e-7,
                                   err_msg=f"{fn.__name__}: argument {i}")
    value, pull = s2s_ad.vjp(fn, *args)
    assert np.isclose(value, fn(*args))
    for i, g in enumerate(pull(0.5)):
        np.testing.assert_allclose(g, 0.5 * fd_gradient(fn, args, i), rtol=1e-5, atol=1e-7)


def test_the_flags_are_written_where_shapes_cannot_be_told():
    """One flag per group of operations, read once; the contributions under it
    are the expression itself, unbroadcast in the other arm only."""
    text = s2s_ad.gradient_source(src.mix, wrt=(0, 1, 2))
    assert text.count("= same_shapes(") == 1 and " if flat else unbroadcast(" in text, text
    text = s2s_ad.gradient_source(src.run, wrt=(0, 1, 2))
    # the cell's backward pass: c, a parameter, is compared by a flag of its own
    # (the parameter's flag first: where it holds, one call decides both), which
    # compares c itself, not t12 = c * f (of c's and f's shape where they agree)
    assert "flat_1 = same_shapes(f, u, o, c)" in text, text
    assert "flat = flat_1 or same_shapes(f, t12, u, o)" in text, text
    assert text.count("if flat else unbroadcast(") >= 6, text


def test_a_parameter_has_a_flag_of_its_own():
    """A bias and a target (parameters, where shapes broadcast if anywhere)
    are compared by a second flag: the first holds for H @ W + b and P - Y
    though b is a row, and the other contributions need no unbroadcast. The
    parameters' flag compares b and Y, not P = H + b and t2 = P - Y, which
    have H's shape where b and Y do."""
    text = s2s_ad.gradient_source(src.dense, wrt=(0, 1, 2, 3))
    assert "flat_1 = same_shapes(H, b, Y)" in text, text
    assert "flat = flat_1 or same_shapes(H, P, t2)" in text, text
    assert "db = dP if flat_1 else unbroadcast(dP, b)" in text, text
    assert "dH = dH + (dP if flat else unbroadcast(dP, H))" in text, text


def test_one_operation_gets_no_flag():
    """A single operation between two classes keeps its unbroadcast calls (a
    flag would cost what it saves)."""
    text = s2s_ad.gradient_source(src.affine, wrt=(0, 1, 2))
    assert "same_shapes" not in text or text.count(" if flat") >= 2, text


@pytest.mark.parametrize("values,expected", [
    ((np.ones(3), np.ones(3), np.ones(3)), True),
    ((np.ones(3), np.ones((1, 3))), False),
    ((np.ones(3), 2.0), False),
    ((1.0, np.float64(2.0)), True),
    ((np.ones((2, 3)), np.ones((2, 3))), True),
])
def test_same_shapes_helper(values, expected):
    from s2s_ad.rules.numpy_helpers import HELPERS
    ns = {"np": np}
    exec(HELPERS["same_shapes"], ns)
    assert ns["same_shapes"](*values) is expected


def test_same_shapes_of_lengths_not_known_yet():
    """Dask arrays whose lengths are not known (nan) are never of one shape."""
    da = pytest.importorskip("dask.array")
    from s2s_ad.rules.numpy_helpers import HELPERS
    ns = {"np": np}
    exec(HELPERS["same_shapes"], ns)
    x = da.from_array(np.arange(6.0), chunks=3)
    unknown = x[x > 2]
    assert ns["same_shapes"](x, x) is True
    assert ns["same_shapes"](unknown, unknown) is False


@pytest.mark.parametrize("k", [0, 3, 6, 14, 16, 17])
def test_on_dask(k):
    da = pytest.importorskip("dask.array")
    fn, make, _ = CASES[k]
    args = make()
    df = s2s_ad.grad(fn, wrt=tuple(range(len(args))))
    got = df(*[da.from_array(a, chunks=2) for a in args])
    for g, want in zip(got, df(*args)):
        np.testing.assert_allclose(np.asarray(g), want, rtol=1e-12, atol=1e-14)


def _grad_o(tmp_path, name, wrt=()):
    (tmp_path / "flatsrc.py").write_text(open(src.__file__, encoding="utf-8").read(),
                                         encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{ROOT}{os.pathsep}"
                                      f"{os.path.join(ROOT, 'tests')}")
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad", f"flatsrc.py:{name}", "-o",
                           f"flat_{name}_grad.py"] + (["--wrt", ",".join(wrt)] if wrt else []),
                          cwd=str(tmp_path), capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    assert "= same_shapes(" in (tmp_path / f"flat_{name}_grad.py").read_text(encoding="utf-8")
    return env


@pytest.mark.parametrize("name", beyond(["run", "chain", "mix"], 1))  # all with --soak
def test_grad_o_file_in_a_fresh_interpreter(tmp_path, name):
    """The ``grad -o`` module, flags in it, imported in a fresh interpreter:
    against central differences with arguments of one shape and arguments
    that broadcast."""
    env = _grad_o(tmp_path, name)
    script = textwrap.dedent(f"""
        import numpy as np
        from array_oracle import fd_gradient
        from flatsrc import {name} as fn
        from flat_{name}_grad import grad_{name} as grad
        rng = np.random.default_rng(5)
        n = 9 if "{name}" == "run" else 3
        for c in (rng.uniform(0.2, 1.3, 3), rng.uniform(0.2, 1.3, 1)):
            args = [rng.uniform(0.2, 1.3, n), rng.uniform(0.2, 1.3, 3), c]
            for i, g in enumerate(grad(*args)):
                np.testing.assert_allclose(g, fd_gradient(fn, args, i), rtol=1e-5, atol=1e-7)
        print("ok")
    """)
    run_ = subprocess.run([sys.executable, "-c", script], cwd=str(tmp_path), capture_output=True,
                          text=True, timeout=300, env=env)
    assert run_.returncode == 0 and run_.stdout.strip() == "ok", run_.stderr


@pytest.mark.parametrize("name", ["chain", "mix"])
def test_grad_o_file_read_back_and_differentiated(tmp_path, name):
    """The ``grad -o`` module read back from its file and differentiated again
    (its flags taken out, each contribution read as its unbroadcast): the
    second-order gradient of a probe through grad and vjp against central
    differences."""
    _grad_o(tmp_path, name)
    sys.path.insert(0, str(tmp_path))
    try:
        probe = import_source(str(tmp_path), f"import numpy as np\nfrom flat_{name}_grad import "
                              f"grad_{name}\n\n\ndef probe(a, b, c, v):\n"
                              f"    da, db, dc = grad_{name}(a, b, c)\n"
                              "    return np.sum(da * v) + np.sum(db * dc)\n", f"flat_{name}_probe")
        rng = np.random.default_rng(31)  # its own: the arguments do not depend on test order

        def u(*shape):
            return rng.uniform(0.5, 1.3, shape)

        for c in (u(4), u(1)):
            args = [u(4), u(4), c, rng.normal(size=4)]
            for i in (0, 1, 2):
                want = fd_gradient(probe.probe, args, i)
                np.testing.assert_allclose(s2s_ad.grad(probe.probe, wrt=i)(*args), want,
                                           rtol=1e-5, atol=1e-7)
                _, pull = s2s_ad.vjp(probe.probe, *args)
                np.testing.assert_allclose(pull(1.0)[i], want, rtol=1e-5, atol=1e-7)
    finally:
        sys.path.remove(str(tmp_path))
        for m in (f"flat_{name}_grad", "flatsrc", f"flat_{name}_probe"):
            sys.modules.pop(m, None)


def test_dense_grad_o_file_read_back_and_differentiated(tmp_path):
    """dense's module, with a flag and its parameters' flag (``flat = flat_1
    or same_shapes(...)``), read back and differentiated again: both flags
    taken out; against central differences with a bias that broadcasts and
    one that does not."""
    _grad_o(tmp_path, "dense")
    _probe_against_fd(tmp_path, "dense", "def probe(X, W, b, Y):\n"
                      "    dX, dW, db, dY = grad_dense(X, W, b, Y)\n"
                      "    return np.sum(dX * X) + np.sum(dW * dW) + np.sum(db * b)"
                      " + np.sum(dY)\n",
                      [[_u(5, 3), _u(3, 2), b, _u(5, 2)] for b in (_u(2), _u(5, 2))])


def _probe_against_fd(tmp_path, name, probe_source, arg_sets):
    """``probe`` (reading ``grad_<name>`` of the module ``_grad_o`` wrote)
    differentiated at each argument list against central differences."""
    sys.path.insert(0, str(tmp_path))
    try:
        probe = import_source(str(tmp_path), f"import numpy as np\nfrom flat_{name}_grad import "
                              f"grad_{name}\n\n\n" + probe_source, f"flat_{name}_probe")
        for args in arg_sets:
            wrt = tuple(range(len(args)))
            for i, g in zip(wrt, s2s_ad.grad(probe.probe, wrt=wrt)(*args)):
                np.testing.assert_allclose(g, fd_gradient(probe.probe, args, i),
                                           rtol=1e-5, atol=1e-7)
    finally:
        sys.path.remove(str(tmp_path))
        for m in (f"flat_{name}_grad", "flatsrc", f"flat_{name}_probe"):
            sys.modules.pop(m, None)


# loops: (function, arguments, what the flag says on each reverse iteration)
LOOP_CASES = [
    (src.euler, lambda: [_u(4), _u(4), 3], "one shape"),
    (src.euler, lambda: [_u(3, 4), _u(4), 3], "broadcast on the first iteration"),
    (src.euler, lambda: [_u(4), _u(1), 2], "broadcast on the first iteration"),
    (src.euler, lambda: [_u(1), _u(4), 3], "a parameter that broadcasts"),
    (src.euler, lambda: [_u(4), _u(4), 1], "one iteration"),
    (src.unread, lambda: [_u(4), _u(4), 3], "a carried adjoint that starts as 0.0"),
    (src.unread, lambda: [_u(2, 4), _u(4), 2], "broadcast on the first iteration"),
]
LOOP_IDS = [f"{f.__name__}-{k}-{what}" for k, (f, _, what) in enumerate(LOOP_CASES)]


@pytest.mark.parametrize("fn,make,what", LOOP_CASES, ids=LOOP_IDS)
def test_loop_flags_against_finite_differences(fn, make, what):
    """A loop's flag, tested on each reverse iteration, against central
    differences through grad and vjp, where it holds on every iteration, on
    some only, and where a carried adjoint is still the number 0.0."""
    args = make()
    got = s2s_ad.grad(fn, wrt=(0, 1))(*args)
    for i, g in zip((0, 1), got):
        assert np.shape(g) == np.shape(args[i])
        np.testing.assert_allclose(g, fd_gradient(fn, args, i), rtol=1e-5, atol=1e-7,
                                   err_msg=f"{fn.__name__}: argument {i}")
    value, pull = s2s_ad.vjp(fn, *args)
    assert np.isclose(value, fn(*args))
    for i in (0, 1):
        np.testing.assert_allclose(pull(0.5)[i], 0.5 * fd_gradient(fn, args, i),
                                   rtol=1e-5, atol=1e-7)


def test_a_loops_flag_is_tested_per_iteration():
    """The reverse loop of euler tests its shapes once per iteration, the
    carried adjoint among them; a value read only for its shape is computed
    in the arm that sums back, not on every iteration; a loop's parameter bound (s) is 0-d, so h and its
    multiples are numbers to the flag."""
    text = s2s_ad.gradient_source(src.euler, wrt=(0, 1))
    loop = text.split("for _ in reversed(range(s)):")[1].split("return ")[0]
    flag = [line for line in loop.splitlines() if "flat = " in line]
    assert len(flag) == 1 and "same_shapes(" in flag[0] and "y_1, " in flag[0] \
        and ", dy)" in flag[0], loop  # (and flat_1, x compared too: a parameter)
    # recomputed: x * np.roll(y, 1), twice, where x (a parameter, compared by
    # the wide flag) may have widened it; k1, k2, h * k1 not
    assert loop.count("recomputed, not taped") == 2 and "\n        k1 = " not in loop, loop
    assert loop.count(" if flat else unbroadcast(") >= 6, loop
    assert "dk1 = dk1 + dt1 * h " in loop, loop


@pytest.mark.parametrize("k", [0, 1, 5])
def test_loop_flags_on_dask(k):
    da = pytest.importorskip("dask.array")
    fn, make, _ = LOOP_CASES[k]
    args = make()
    df = s2s_ad.grad(fn, wrt=(0, 1))
    got = df(*[da.from_array(a, chunks=2) for a in args[:2]], args[2])
    for g, want in zip(got, df(*args)):
        np.testing.assert_allclose(np.asarray(g), want, rtol=1e-12, atol=1e-14)


def test_loop_flags_read_back_and_differentiated(tmp_path):
    """euler's ``grad -o`` module, a flag inside its reverse loop, read back
    from its file and differentiated again (the flag taken out): a probe of
    its gradient against central differences, arguments of one shape and
    arguments that broadcast."""
    _grad_o(tmp_path, "euler", ("x", "y"))
    _probe_against_fd(tmp_path, "euler", "def probe(x, y, v):\n"
                      "    dx, dy = grad_euler(x, y, 2)\n"
                      "    return np.sum(dx * v) + np.sum(dy * dy)\n",
                      [[x, y, RNG.normal(size=np.shape(x))]
                       for x, y in ((_u(4), _u(4)), (_u(3, 4), _u(4)))])
