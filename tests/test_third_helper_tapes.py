"""Third derivatives through files of programs whose helpers keep lists on
their tapes: ``s2s-ad grad src.py:f -o g1.py``, a probe ``½ Σ |grad_f|²``
calling ``g1``, ``s2s-ad grad probe.py:probe -o g2.py`` (``H·∇f``), then
``g2``'s function differentiated again, by ``s2s_ad.jvp`` (forward over the
file) and ``s2s_ad.vjp`` (reverse over it), and ``jvp(grad(probe))`` made in
memory, each against central differences (float64) of ``g2``'s function
along a direction. Each shape was refused in ``g2`` read back:

* ``numpy_list_parameters``: a NumPy helper's backward function keeps the
  forward pass's tape lists it was given on its own tape (``return ...,
  (a, b, t9_tape, ...)``), read as the arguments where each call binds them
  (``s2s_ad/frontend/tape_params.py``; it said "returning a list of any
  length the caller passed is not supported").
* ``arm_lists``: a looping helper called in each arm of a branch: its tape
  lists start at a placeholder (or ``()``) where the arm that makes them
  does not run, a φ of a list and an empty list
  (``s2s_ad/frontend/control.py``; "`h_fwd_1_tape_2` is a list in one branch
  only"), and the tangent of that empty side is ``()`` too
  (``s2s_ad/forward/transform.py``, the ``jvp(grad(probe))`` route).
* ``passed_on``: the lists passed on to another helper's backward function
  (``h`` calling ``inner``), kept on both tapes.

Where the shape cannot be taken (such a helper called in a loop of the
module), the refusal is located and says so."""

from __future__ import annotations

import ast

import numpy as np
import pytest

import s2s_ad
from s2s_ad import cli
from s2s_ad.frontend import taped_lists
from tests.fuzz_checks import _tangent_names
from tests.modules import import_source

NUMPY_LIST_PARAMETERS = '''import numpy as np


def h(a, b):
    y = np.zeros(len(a))
    for i in range(len(a)):
        if np.sum(y * b) + a[i] > 0:
            y[i] = np.sin(a[i]) * b[i] + y[i - 1]
        else:
            y[i] = 0.5 * a[i]
    return y * np.sum(b)


def f(a, b):
    return np.sum(h(a, b) * a)
'''

ARM_LISTS = '''import math


def h(x, n):
    s = x
    for i in range(n):
        if math.sin(s) > 0.0:
            s = s + math.cos(s) * x
    return s * x


def f(x):
    if x > 0.0:
        r = h(x, 3)
    else:
        r = h(0.5 * x, 2) * 2.0
    return r
'''

PASSED_ON = '''import numpy as np


def inner(a, b):
    y = np.ones_like(b)
    for i in range(len(a)):
        if np.sum(y) > 0.0:
            y[i] = y[i - 1] * np.sin(a[i]) + b[i]
    return np.sum(y * y)


def h(a, b):
    v = inner(a, b)
    return v, v * 0.5


def f(a, b):
    r = h(a, b)
    return r[0] * np.sum(a) + r[1]
'''

CASES = {
    "numpy_list_parameters": (NUMPY_LIST_PARAMETERS, [
        {"a": np.array([0.3, -0.4, 0.9, 0.2]), "b": np.array([0.5, 1.1, -0.7, 0.4])}]),
    "arm_lists": (ARM_LISTS, [{"x": 0.8}, {"x": -0.6}]),  # each arm taken
    "passed_on": (PASSED_ON, [
        {"a": np.array([0.3, -0.4, 0.9]), "b": np.array([0.5, 1.1, -0.7])}]),
}


def _second(folder, label: str, source: str, point: dict):
    """The probe module and ``g2``'s function, written by the CLI and imported."""
    names = list(point)
    arrays = [k for k, v in point.items() if np.ndim(v)]
    option = ["--array", ",".join(arrays)] if arrays else []
    src, g1 = folder / f"{label}_src.py", f"{label}_g1"
    src.write_text(source, encoding="utf-8")
    assert cli.main(["grad", f"{src}:f", "--wrt", ",".join(names), *option,
                     "-o", str(folder / f"{g1}.py")]) == 0
    outs = ", ".join(f"g{k}" for k in range(len(names)))
    terms = " + ".join(f"np.sum(g{k} * g{k})" if arrays else f"g{k} * g{k}"
                       for k in range(len(names)))
    probe = import_source(str(folder), ("import numpy as np\n" if arrays else "")
                          + f"from {g1} import grad_f\n\n\n"
                          f"def probe({', '.join(names)}):\n"
                          f"    {outs} = grad_f({', '.join(names)})\n"
                          f"    return 0.5 * ({terms})\n", f"{label}_probe").probe
    second = folder / f"{label}_g2.py"
    assert cli.main(["grad", f"{folder / f'{label}_probe.py'}:probe", "--wrt", ",".join(names),
                     *option, "-o", str(second)]) == 0
    g2 = import_source(str(folder), second.read_text(encoding="utf-8"), f"{label}_g2m")
    return probe, g2.grad_probe


def _items(r) -> list:
    return [np.asarray(x, dtype=float) for x in (r if isinstance(r, tuple) else (r,))]


@pytest.mark.parametrize("label", list(CASES))
def test_third_derivative_through_the_second_file(label, tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    source, points = CASES[label]
    rng = np.random.default_rng(48)
    for k, point in enumerate(points):
        names = list(point)
        probe, g2 = _second(tmp_path, f"third48_{label}_{k}", source, point)
        v = {n: rng.uniform(-1.0, 1.0, np.shape(x)) if np.ndim(x) else float(rng.uniform(-1, 1))
             for n, x in point.items()}
        c = [rng.uniform(-1.0, 1.0, np.shape(x)) for x in point.values()]

        def along(t):
            return _items(g2(**{n: point[n] + t * v[n] for n in names}))
        h = 1e-5
        want = [(a - b) / (2 * h) for a, b in zip(along(h), along(-h))]
        scale = max(1.0, max(float(np.max(np.abs(w))) for w in want))
        # forward over the file (∂³f[∇f, v] + H·H·v)
        j = s2s_ad.jvp(g2, tuple(names))
        tangents = _tangent_names(j, names)
        got = _items(j(**point, **{tangents[n]: v[n] for n in names})[1])
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, atol=1e-6 * scale, err_msg=f"{label} jvp")
        # reverse over the file: c·(J v)
        _, vjp_fn = s2s_ad.vjp(g2, **point)
        back = _items(vjp_fn(c if len(c) > 1 else c[0]))
        got = sum(float(np.sum(b * v[n])) for b, n in zip(back, names))
        assert abs(got - sum(float(np.sum(ci * w)) for ci, w in zip(c, want))) <= 1e-6 * scale
        # jvp(grad(probe)), made in memory from the probe (which calls g1)
        j2 = s2s_ad.jvp(s2s_ad.grad(probe, tuple(names)), tuple(names))
        tangents = _tangent_names(j2, names)
        got = _items(j2(**point, **{tangents[n]: v[n] for n in names})[1])
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, atol=1e-6 * scale, err_msg=f"{label} api")


LOOPED = '''import math


def g(x, n):
    u = x * 0.5
    for j in range(n):
        u = math.cos(u) * x + u
    return u * u


def f(x):
    total = x
    for k in range(2):
        total = g(x * (k + 1.0), 3) + total * x
    return total
'''


def test_a_helper_keeping_its_lists_called_in_a_loop_is_refused_saying_why(tmp_path):
    """``g_bwd_fwd`` of the second module keeps the lists it was given on its
    tape and is called in a loop: refused, located at its ``return``, naming
    it and saying why (it said "return a number computed from it, or build a
    new list", advice for code of one's own)."""
    src = tmp_path / "third48_looped.py"
    src.write_text(LOOPED, encoding="utf-8")
    first, second = tmp_path / "third48_looped_1.py", tmp_path / "third48_looped_2.py"
    assert cli.main(["grad", f"{src}:f", "--wrt", "x", "-o", str(first)]) == 0
    assert cli.main(["grad", f"{first}:grad_f", "--wrt", "x", "-o", str(second)]) == 0
    g2 = import_source(str(tmp_path), second.read_text(encoding="utf-8"), "third48_looped_2m")
    with pytest.raises(s2s_ad.SourceError) as info:
        s2s_ad.grad(g2.grad_grad_f, "x")
    text = str(info.value)
    assert "third48_looped_2m.py:" in text and "^" in text
    assert "`g_bwd_fwd` of this gradient module keeps a list its caller passed" in text
    assert "calls it in a loop" in text and "s2s_ad.hessian" in text


def test_a_list_taped_where_it_is_made_is_taped_once_filled():
    """``b = []; b_tape.append(b)`` then filled: the tape's append after the
    last statement naming ``b`` (the same object on the same tape); not past
    a ``break``, a read of the tape or a new binding of ``b``."""
    tree = ast.parse('''def f(v, k, r):
    b = []
    b_tape.append(b)
    for i in range(k):
        b.append(v[i])
    r.append(b[0])
    t = 1.0
''').body[0]
    taped_lists.rewrite(tree)
    assert [ast.unparse(s) for s in tree.body][1:] == [
        "for i in range(k):\n    b.append(v[i])", "r.append(b[0])", "b_tape.append(b)",
        "t = 1.0"]
    for between in ("if k > 1:\n            break\n        b.append(1.0)",
                    "n = len(b_tape) + len(b)", "b = [1.0]"):
        kept = ast.parse(f'''def f(v, k):
    for j in range(3):
        b = []
        b_tape.append(b)
        b.append(v[j])
        {between}
''').body[0]
        loop = kept.body[0]
        before = ast.unparse(loop)
        taped_lists.rewrite(kept)
        assert ast.unparse(loop) == before, between


UNUSED = '''import math as m


def h(out_1, u, b, *, _c):
    _scale = 1.5 if _c > 0.0 else 0.5
    u *= m.pow(1.5 + m.sin(u), 1.5 * m.tanh(out_1 - out_1))
    tape, y = (m.cbrt(m.exp2(2.0 * m.tanh(2.0)) + 0.5), int(u))
    return (u * tape - y) * _scale


def f(out_1, u, b):
    return (h(out_1=out_1, u=u, b=b, _c=out_1 * 0.5 + 1.0)
            - 0.5 * h(out_1=out_1 * 0.5, u=u * 0.5, b=b * 0.5, _c=out_1 * 0.5 + 1.0)
            + b * b * b * out_1)
'''


def test_a_forward_mode_module_has_no_pairs(tmp_path, monkeypatch):
    """``jvp(grad(probe))`` with respect to ``b``, which ``h`` is passed and
    does not read: the forward-mode module of ``grad(probe)`` holds
    ``jvp_h_fwd`` and ``jvp_h_bwd(dout, ddout)``, the tangents of the pair
    ``h_fwd``/``h_bwd``, which were read back as a pair of their own (an
    empty tape: "the tape this forward function returns is not split").
    Against central differences of ``grad(probe)``."""
    monkeypatch.syspath_prepend(str(tmp_path))
    src = tmp_path / "third48_unused.py"
    src.write_text(UNUSED, encoding="utf-8")
    assert cli.main(["grad", f"{src}:f", "--wrt", "b", "-o",
                     str(tmp_path / "third48_unused_g1.py")]) == 0
    probe = import_source(str(tmp_path), "from third48_unused_g1 import grad_f\n\n\n"
                          "def probe(out_1, u, b):\n    g = grad_f(out_1, u, b)\n"
                          "    return 0.5 * g * g\n", "third48_unused_probe").probe
    second = s2s_ad.grad(probe, "b")
    point, h = (1.937237, 0.777417, -0.491598), 1e-5
    want = (second(*point[:2], point[2] + h) - second(*point[:2], point[2] - h)) / (2 * h)
    value, tangent = s2s_ad.jvp(second, "b")(*point, db=1.0)
    assert value == pytest.approx(second(*point), rel=1e-12)
    assert abs(want) > 1.0 and tangent == pytest.approx(want, rel=1e-6)


ONE_ARM = '''import math


def h(x, n):
    ys = []
    for i in range(n):
        ys.append(x * math.sin(x + i))
    return x * x, ys


def f(x, n):
    c = x > 0.0
    if c:
        y, t = h(x, n)
    else:
        y, t = x, ()
    s = y
    if c:
        for v in t:
            s = s + v * v
    for v in t:
        s = s + 0.5 * v
    return s
'''


def test_a_list_in_one_arm_and_an_empty_tuple_in_the_other(tmp_path):
    """The φ the second modules need, in code of one's own: ``t`` a list of
    any length where its arm ran, ``()`` where the other did (was refused:
    "`t` is a list in one branch only"). Each arm, against central
    differences."""
    f = import_source(str(tmp_path), ONE_ARM, "third48_one_arm").f
    g = s2s_ad.grad(f, "x")
    for x in (0.7, -0.4):
        want = (f(x + 1e-6, 3) - f(x - 1e-6, 3)) / 2e-6
        assert g(x, 3) == pytest.approx(want, rel=1e-7, abs=1e-9)
