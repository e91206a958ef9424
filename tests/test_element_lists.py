"""Reverse loops run on Python lists of array elements
(s2s_ad/reverse/element_lists.py): gradients against central differences at
top level, in helpers, loops and branches, through vjp and the CLI's file;
the same numbers as the same loop on the arrays, bit for bit, and the arrays
themselves wherever a list would change a dtype (float32, complex, Dask)."""

import os
import subprocess
import sys

import numpy as np
import pytest

import element_lists_src as src
import s2s_ad
from array_oracle import assert_gradients, fd_gradient, make_function, rand
from s2s_ad.rules.numpy_helpers import HELPERS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RNG = np.random.default_rng(97)

CASES = [  # function, arguments, whether its reverse loop runs on lists
    (src.fill, lambda: [rand(RNG, (7,)), 0.8], True),
    (src.two_back, lambda: [rand(RNG, (7,)), 0.7], False),  # pops np.tanh(...), x[i] taped
    (src.weighted, lambda: [rand(RNG, (6,)), rand(RNG, (6,))], True),  # w[i], x[i] read again
    (src.branch_in_loop, lambda: [rand(RNG, (8,)), 0.9], True),
    (src.in_branch, lambda: [rand(RNG, (6,)), 0.6], True),
    (src.in_branch, lambda: [rand(RNG, (6,)), -0.6], True),
    (src.divides, lambda: [rand(RNG, (6,)), 1.3], False),
    (src.rows, lambda: [rand(RNG, (4, 3)), 0.7], False),
    (src.in_helper, lambda: [rand(RNG, (6,)), 0.8], True),
    (src.in_helper_of_helper, lambda: [rand(RNG, (6,)), 0.8], True),
    (src.helper_in_loop, lambda: [rand(RNG, (6,)), 0.5], True),
]
IDS = [f"{fn.__name__}-{k}" for k, (fn, _, _) in enumerate(CASES)]


@pytest.mark.parametrize("fn, args, lists", CASES, ids=IDS)
def test_gradient_agrees_with_finite_differences(fn, args, lists):
    a = args()
    assert_gradients(fn, a, [0, 1])
    _, pull = s2s_ad.vjp(fn, *a)
    for i, g in enumerate(pull(1.0)):
        np.testing.assert_allclose(g, fd_gradient(fn, a, i), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("fn, args, lists", CASES, ids=IDS)
def test_which_reverse_loops_run_on_lists(fn, args, lists):
    text = s2s_ad.gradient_source(fn)
    assert ("float_lists((" in text) is lists, text
    assert ("put_floats(" in text) is lists, text


def _twice(fn):
    """The generated gradient of ``fn``, and the same module with its loops
    kept on the arrays (``float_lists`` giving the arrays back)."""
    text = s2s_ad.gradient_source(fn, wrt=(0, 1))
    made, kept = {}, {}
    exec(compile(text, "<grad>", "exec"), made)
    exec(compile(text, "<grad>", "exec"), kept)
    kept["float_lists"] = lambda reads, writes, numbers: reads + writes
    made["took"] = took = []
    lists = made["float_lists"]

    def recording(reads, writes, numbers):
        got = lists(reads, writes, numbers)
        took.append(all(type(g) is list for g in got))
        return got
    made["float_lists"] = recording
    return made[f"grad_{fn.__name__}"], kept[f"grad_{fn.__name__}"], took


def _same(got, want):
    assert type(got) is type(want) or (isinstance(got, float) and isinstance(want, float)), \
        (type(got), type(want))
    assert np.asarray(got).dtype == np.asarray(want).dtype
    assert np.array_equal(got, want), (got, want)


@pytest.mark.parametrize("fn", [src.fill, src.branch_in_loop, src.in_branch, src.in_helper,
                                src.weighted],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtypes", [("f8", "f8"), ("f4", "f8"), ("f8", "f4"), ("f4", "f4")],
                         ids=lambda d: "-".join(d))
def test_lists_compute_what_the_arrays_compute(fn, dtypes):
    """Bit for bit, in the dtype the arrays give: float64 arguments take the
    lists, a float32 array or number keeps the arrays."""
    made, kept, took = _twice(fn)
    x = rand(RNG, (9,), -0.5, 0.5).astype(dtypes[0])
    a = np.float32(0.8) if dtypes[1] == "f4" else 0.8
    if fn is src.weighted:  # w: an array, float32 or float64
        a = rand(RNG, (9,), 0.5, 0.9).astype(dtypes[1])
    got, want = made(x, a), kept(x, a)
    assert took and all(took) is (dtypes == ("f8", "f8")), took
    _same(got[0], want[0])
    assert np.array_equal(got[1], want[1]) and np.asarray(got[1]).dtype == \
        np.asarray(want[1]).dtype
    assert got[0].dtype == x.dtype


def _float_lists():
    env = {"np": np}
    exec(HELPERS["float_lists"], env)
    return env["float_lists"]


def test_float_lists_only_for_float64_arrays_that_own_their_data():
    float_lists = _float_lists()
    y, dy = np.arange(4.0), np.zeros(4)
    numbers = (0.5, 2, np.float64(1.5), True, np.array(0.25))
    assert float_lists((y,), (dy,), numbers) == [y.tolist(), dy.tolist()]
    given_back = [
        ((y.astype(np.float32),), (dy,), ()),          # float32
        ((y + 0j,), (dy,), ()),                        # complex
        ((np.zeros((2, 2)),), (dy,), ()),              # 2-d
        ((y,), (dy,), (np.float32(0.5),)),             # a float32 number
        ((y,), (dy,), (np.array(0.5, dtype=np.float32),)),  # a 0-d float32 array
        ((y,), (dy,), (np.ones(2),)),                  # an array
        ((y,), (np.zeros(8)[::2],), ()),               # a view written into
        ((dy[1:],), (dy,), ()),                        # a read of what is written
        ((y,), (dy, dy), ()),                          # the same array twice
        ((y.tolist(),), (dy,), ()),                    # not an ndarray
    ]
    for reads, writes, numbers in given_back:
        got = float_lists(reads, writes, numbers)
        assert all(g is a for g, a in zip(got, reads + writes)), (reads, writes, numbers)


@pytest.mark.parametrize("fn", [src.fill, src.in_helper, src.weighted], ids=lambda f: f.__name__)
def test_dask_arrays_keep_their_loop(fn):
    """A Dask argument's adjoint is a Dask array (float_lists gives it back
    unchanged), equal to the NumPy gradient."""
    da = pytest.importorskip("dask.array")
    x = rand(RNG, (7,))
    other = np.linspace(0.5, 0.9, 7) if fn is src.weighted else 0.8
    want = s2s_ad.grad(fn, wrt=(0, 1))(x, other)
    dother = da.from_array(other, chunks=3) if fn is src.weighted else other
    got = s2s_ad.grad(fn, wrt=(0, 1))(da.from_array(x, chunks=3), dother)
    assert isinstance(got[0], da.Array)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-12, atol=1e-14)


def test_explain_reads_the_loop_on_the_arrays():
    text = s2s_ad.explain(src.fill, wrt=("x", "a"))
    assert "dy[i]" in text and "_l[" not in text and "float_lists" not in text


def test_cli_file_in_a_fresh_interpreter_and_differentiated_again(tmp_path):
    """``s2s-ad grad -o``: the module runs without s2s-ad, and a function of
    its gradient is differentiated (the loop on lists read back as the loop
    on the arrays), both against central differences."""
    out = tmp_path / "grad_fill.py"
    env = dict(os.environ, PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, "-m", "s2s_ad", "grad", "tests/element_lists_src.py:fill",
                        "--wrt", "x,a", "-o", str(out)],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "float_lists((" in out.read_text()
    x = [0.3, -0.2, 0.5, 0.1, -0.4, 0.25]
    code = ("import grad_fill, sys, numpy as np; "
            f"dx, da = grad_fill.grad_fill(np.array({x!r}), 0.8); "
            "assert 's2s_ad' not in sys.modules; print(repr((dx.tolist(), float(da))))")
    p = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                       text=True, env={"PATH": os.environ.get("PATH", "")})
    assert p.returncode == 0, p.stderr
    dx, da = eval(p.stdout)
    args = [np.array(x), 0.8]
    np.testing.assert_allclose(dx, fd_gradient(src.fill, args, 0), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(da, fd_gradient(src.fill, args, 1), rtol=1e-6, atol=1e-9)
    (tmp_path / "second.py").write_text(
        "import numpy as np\nimport grad_fill\n\n\n"
        "def h(x, a):\n    dx, da = grad_fill.grad_fill(x, a)\n"
        "    return np.sum(dx * dx) + da * da\n")
    code = ("import sys, numpy as np, s2s_ad, second; "
            f"g = s2s_ad.grad(second.h, wrt=(0, 1))(np.array({x!r}), 0.8); "
            "print(repr((np.asarray(g[0]).tolist(), float(g[1]))))")
    p = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                       text=True, env=env)
    assert p.returncode == 0, p.stderr
    g0, g1 = eval(p.stdout)
    sys.path.insert(0, str(tmp_path))
    try:
        import second
        np.testing.assert_allclose(g0, fd_gradient(second.h, args, 0), rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(g1, fd_gradient(second.h, args, 1), rtol=1e-5, atol=1e-7)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("second", None)
        sys.modules.pop("grad_fill", None)


# -- random recurrences: the lists against central differences and against the arrays --------

TERMS = ["y[i - 1] * a", "x[i]", "np.sin(y[i - 1])", "y[i - 2] * y[i - 1]", "a * a",
         "np.cos(y[i - 2]) * 0.5", "-y[i - 2]", "y[i - 1] * y[i - 1] * 0.25", "np.exp(-a)"]


def _recurrence(seed: int) -> str:
    rng = np.random.default_rng(seed)
    terms = list(rng.choice(TERMS, size=int(rng.integers(2, 5)), replace=False))
    body = " + ".join(terms)
    loop = f"        y[i] = {body}\n"
    if rng.random() < 0.4:  # a branch on the state
        other = " - ".join(rng.choice(TERMS, size=2, replace=False))
        loop = (f"        if y[i - 1] > 0.0:\n            y[i] = {body}\n"
                f"        else:\n            y[i] = {other}\n")
    tail = rng.choice(["np.sum(y * y)", "np.sum(np.sin(y))", "np.sum(y) * a"])
    return ("def f(x, a):\n    y = np.zeros(len(x))\n    y[0] = x[0]\n    y[1] = x[1] * a\n"
            f"    for i in range(2, len(x)):\n{loop}    return {tail}\n")


def test_random_recurrences_on_lists():
    """Central differences for the gradient, and bit for bit the same numbers
    as the module with its loops kept on the arrays; most of them run on lists."""
    on_lists = 0
    for seed in range(40):
        source = _recurrence(seed)
        f = make_function(source)
        x = rand(np.random.default_rng(seed), (7,), -0.8, 0.8)
        assert_gradients(f, [x, 0.6], [0, 1])
        text = s2s_ad.gradient_source(f, wrt=(0, 1))
        made, kept = {}, {}
        exec(compile(text, "<grad>", "exec"), made)
        exec(compile(text, "<grad>", "exec"), kept)
        kept["float_lists"] = lambda reads, writes, numbers: reads + writes
        took = []
        lists = made.get("float_lists")
        made["float_lists"] = lambda *a: took.append(lists(*a)) or took[-1]
        got, want = made["grad_f"](x, 0.6), kept["grad_f"](x, 0.6)
        assert np.array_equal(got[0], want[0]) and got[1] == want[1], source
        on_lists += bool(took) and all(type(v) is list for t in took for v in t)
    assert on_lists >= 15, on_lists  # the others read a value the forward pass taped


def test_value_and_grad_returns_the_value_with_the_gradient_on_lists():
    x = rand(RNG, (8,))
    value, (dx, da) = s2s_ad.value_and_grad(src.fill, wrt=(0, 1))(x, 0.9)
    assert value == src.fill(x, 0.9)
    np.testing.assert_allclose(dx, fd_gradient(src.fill, [x, 0.9], 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(da, fd_gradient(src.fill, [x, 0.9], 1), rtol=1e-6, atol=1e-8)


def test_elements_of_parameters_are_read_again_not_taped():
    """``w[i]`` and ``x[i]`` as factors: a parameter is never written, so the
    reverse loop reads its elements again; the loop keeps no tape."""
    text = s2s_ad.gradient_source(src.weighted, wrt=(0, 1))
    assert "records 0 values per iteration" in " ".join(text.split()), text
    assert "_tape" not in text and "read again from w" in text
