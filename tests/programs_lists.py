"""Random programs over lists of a run-time length, in code of numbers and NumPy code.

Contract: :func:`list_program` draws a program (a
:class:`tests.programs_numpy.NumpyProgram`, run as the NumPy families are:
every element's partial derivative against central differences) whose
function ``f`` grows a list by ``append`` inside a ``for`` loop over a range
known only when the code runs (``range(n)``, ``range(1, n + 1)``, a range
bound to a name, ``r = range(n)``) or a ``while`` loop, and then reads it the
ways docs/subset.md and docs/structures.md say are supported: by index
(``xs[i]``, ``xs[i + 1]``, ``xs[i - 1]``, ``xs[-1]``, ``xs[len(xs) // 2]``),
``sum``, ``len``, ``for``/``enumerate``/``zip``/``reversed``, comprehensions
over it (with an ``if`` too), passed to a helper, a second list appended to
in a branch, a list ``[0.0] * len(xs)`` written by index (``ys[i] = ...``,
``ys[i] += ys[i + 1] * w``, ``ys[-1] = ...``; in NumPy code an array
``np.zeros(len(hs))``, a list ``[0.0] * len(hs)`` whose items become arrays,
and items of the grown list replaced, ``hs[j] = np.tanh(hs[j]) * b``,
``hs[-1] = hs[-1] + a``); in NumPy code the items are
arrays, also stacked (``np.stack(hs)``, ``np.array(hs)``, ``np.stack`` of a
comprehension), read through an integer array's element (``hs[parents[i]]``)
and beside comprehensions over an array's rows.

Two kinds, drawn half and half: ``f(x, w, n)`` of numbers (``n`` an int,
0..4, not differentiated; ``x`` and ``w`` are), and ``f(a, b, s, n)`` with
``a``, ``b`` float vectors of 2..4 elements and ``s`` a float. Growth is
damped (``tanh``, ``sin``, a factor 0.5) so that the values stay of order 1.
"""

from __future__ import annotations

import numpy as np

from tests.programs import chance, choice
from tests.programs_numpy import NumpyProgram


def _loop(d, n_expr: str, body: list[str], index: str = "i") -> list[str]:
    """A loop over a run-time range running ``body`` with ``index`` 0, 1, ...
    (``i`` read in the body is the item's position before the append)."""
    form = d.integer(0, 3)
    if form == 0:
        return [f"for {index} in range({n_expr}):"] + ["    " + s for s in body]
    if form == 1:
        return [f"for k in range(1, {n_expr} + 1):", f"    {index} = k - 1"] + \
            ["    " + s for s in body]
    if form == 2:
        return [f"r = range({n_expr})", f"for {index} in r:"] + ["    " + s for s in body]
    return [f"{index} = 0", f"while {index} < {n_expr}:"] + ["    " + s for s in body] + \
        [f"    {index} = {index} + 1"]


def _number_grow(d) -> str:
    inner = choice(d, ["xs[-1] * w", "xs[i] * w + x", "xs[-1] + xs[i] * 0.5",
                       "xs[len(xs) - 1] * w - i * 0.25", "xs[0] * xs[-1]"])
    return choice(d, [f"math.tanh({inner})", f"math.sin({inner}) * w", f"{inner} * 0.5"])


def _number_uses(d) -> list[list[str]]:
    uses = [
        ["t = t + sum(xs)"],
        ["for j, v in enumerate(xs):", "    t = t + v * (j + 1.0)"],
        ["for u, v in zip(xs, reversed(ys)):", "    t = t + u * v"],
        ["for v in reversed(xs):", "    t = t * 0.5 + v"],
        ["zs = [v * w + 1.0 for v in xs]", "t = t + sum(zs) * zs[-1]"],
        ["zs = [math.sin(u * v) for u, v in zip(xs, ys)]", "t = t + sum(zs)"],
        ["zs = [v * v for v in xs if v > 0.0]", "t = t + sum(zs) + len(zs)"],
        ["t = t + total(xs, w)"],
        ["t = t + xs[-1] * xs[0] + xs[len(xs) // 2]"],
        ["for j in range(len(xs) - 1):", "    t = t + xs[j + 1] * xs[j]"],
        ["for j in range(1, len(ys)):", "    t = t + ys[j - 1] * ys[j]"],
        ["if t > 0.0:", "    t = t + ys[0] * w", "else:", "    t = t - xs[-1]"],
        ["hs = []", "for v in xs:", "    if v > 0.0:", "        hs.append(v * w)",
         "t = t + sum(hs)"],
        ["k = 0", "while k < len(xs):", "    t = t + xs[k] * ys[k]", "    k = k + 1"],
    ]
    return _distinct(d, uses)


def _distinct(d, uses: list) -> list:
    """One to four of ``uses``, none twice (an array bound twice in a function
    with loops is refused by design: docs/numpy.md, "Filling an array in a loop")."""
    picked = []
    for _ in range(d.integer(1, 4)):
        use = choice(d, uses)
        if use not in picked:
            picked.append(use)
    return picked


def _numbers(d) -> NumpyProgram:
    lines = [choice(d, ["xs = [x]", "xs = [x, w]"])]
    grow = [f"xs.append({_number_grow(d)})"]
    if chance(d, 30):
        grow.append(f"xs.append({_number_grow(d)})")
    lines += _loop(d, "n", grow)
    lines.append("ys = [0.0] * len(xs)")
    fill = [f"ys[i] = {choice(d, ['xs[i] * w', 'math.cos(xs[i])', 'xs[i] + x'])}"]
    lines += [f"for i in range(len(xs)):"] + ["    " + s for s in fill]
    if chance(d, 50):
        lines += ["for i in range(len(xs) - 1):", "    ys[i] += ys[i + 1] * 0.5"]
    if chance(d, 40):
        lines.append(choice(d, ["ys[-1] = ys[0] * w", "ys[0] *= w", "ys[len(ys) - 1] += x"]))
    lines.append("t = 0.0")
    for use in _number_uses(d):
        lines += use
    lines.append(choice(d, ["return t", "return t + xs[-1] * w", "return t * w + sum(ys)"]))
    text = "import math\n\n\ndef total(vs, w):\n    t = 0.0\n    for v in vs:\n" \
        "        t = t + math.sin(v) * w\n    return t\n\n\ndef f(x, w, n):\n"
    text += "".join(f"    {line}\n" for line in lines)
    point = {"x": round(d.real(-1.0, 1.0), 4), "w": round(d.real(-1.2, 1.2), 4),
             "n": d.integer(0, 4)}
    return NumpyProgram(text, point, len(lines), wrt=("x", "w"))


def _array_grow(d) -> str:
    inner = choice(d, ["hs[-1] * s + b", "hs[i] * b + hs[-1] * 0.5", "hs[-1] * hs[0] + s",
                       "np.sin(hs[len(hs) - 1]) * s"])
    return choice(d, [f"np.tanh({inner})", f"np.sin({inner}) * 0.5", f"({inner}) * 0.5"])


def _array_uses(d) -> list[list[str]]:
    uses = [
        ["H = np.stack(hs)", "t = t + np.sum(H * H) * s"],
        ["H = np.array(hs)", "t = t + np.sum(np.sin(H) * b)"],
        ["H = np.stack([h * s + b for h in hs])", "t = t + np.sum(np.tanh(H))"],
        ["for j, h in enumerate(hs):", "    t = t + np.sum(h * b) * (j + 1.0)"],
        ["for h, g in zip(hs, reversed(hs)):", "    t = t + np.sum(h * g)"],
        ["vals = [np.sum(h * b) for h in hs]", "t = t + sum(vals) * vals[-1]"],
        ["M = np.outer(a, b)", "rows = [np.sum(row * a) for row in M]", "t = t + sum(rows)"],
        ["t = t + total(hs, b)"],
        ["t = t + np.sum(hs[-1] * hs[0]) + np.sum(hs[len(hs) // 2])"],
        ["t = t + np.sum(sum(hs) * b)"],
        ["for j in range(len(hs) - 1):", "    t = t + np.sum(hs[j + 1] * hs[j])"],
        ["gs = []", "for h in hs:", "    if np.sum(h) > 0.0:", "        gs.append(h * b)",
         "t = t + len(gs) + sum([np.sum(g) for g in gs])"],
        ["ys = np.zeros(len(hs))", "for j in range(len(hs)):", "    ys[j] = np.sum(hs[j] * a)",
         "for j in range(len(hs) - 1):", "    ys[j] += ys[j + 1] * s", "t = t + np.sum(ys)"],
        ["for j in range(len(hs)):", "    hs[j] = np.tanh(hs[j]) * b",
         "t = t + np.sum(hs[-1] * hs[0])"],
        ["hs[0] = hs[-1] * s", "hs[-1] = hs[-1] + a * 0.5",
         "t = t + np.sum(hs[0]) + np.sum(hs[-1] * b)"],
        ["for j in range(len(hs) - 1):", "    hs[j + 1] = hs[j + 1] + hs[j] * s",
         "t = t + total(hs, a)"],
        ["ds = [0.0] * len(hs)", "for j in range(len(hs)):", "    ds[j] = ds[j] + hs[j] * s",
         "t = t + np.sum(ds[-1] * b) + np.sum(ds[0])"],
        ["parents = np.array([0, 0, 1, 1, 2, 3])", "ps = [b * s]",
         "for j in range(1, len(parents)):", "    ps.append(np.tanh(ps[parents[j]] + a * j))",
         "t = t + np.sum(np.stack(ps) * a)"],
    ]
    return _distinct(d, uses)


def _arrays(d) -> NumpyProgram:
    lines = [choice(d, ["hs = [a]", "hs = [a, b * s]", "hs = []\nhs.append(a * s)"])]
    lines = [line for text in lines for line in text.split("\n")]
    lines += _loop(d, "n", [f"hs.append({_array_grow(d)})"])
    lines.append("t = 0.0")
    for use in _array_uses(d):
        lines += use
    lines.append(choice(d, ["return t", "return t + np.sum(hs[-1] * a)",
                            "return t * s + np.sum(hs[0])"]))
    text = "import numpy as np\n\n\ndef total(hs, b):\n    t = 0.0\n    for h in hs:\n" \
        "        t = t + np.sum(h * b)\n    return t\n\n\ndef f(a, b, s, n):\n"
    text += "".join(f"    {line}\n" for line in lines)
    k = d.integer(2, 4)
    point = {"a": np.array([round(d.real(-1.0, 1.0), 4) for _ in range(k)]),
             "b": np.array([round(d.real(-1.0, 1.0), 4) for _ in range(k)]),
             "s": round(d.real(-1.2, 1.2), 4), "n": d.integer(0, 4)}
    return NumpyProgram(text, point, len(lines), wrt=("a", "b", "s"))


def list_program(d) -> NumpyProgram:
    """A program of either kind (module docstring)."""
    return _numbers(d) if chance(d, 50) else _arrays(d)
