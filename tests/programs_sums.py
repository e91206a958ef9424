"""Random NumPy programs whose loops sum independent iterations (s2s-ad
computes such a loop at once: s2s_ad/frontend/loop_batching.py), and near
misses that must stay loops.

Contract: :func:`sums_program` draws a module defining ``f(a, b, s)`` (``a``,
``b`` float arrays of shape ``(n,)``, n in 3..5, ``s`` a float) with one or
two ``for`` loops over a drawn ``range``: assignments to names of the
iteration, ``acc += e`` / ``acc -= e`` / ``acc = acc + e`` updates of a
number and an array accumulator, calls of a nested helper and of a module
helper with the loop variable, ``float(i)``, a nested helper writing into an
array it makes with ``np.full``, rows written at the loop's index
(``rows[i] = ...``, ``M[i] = ...``) from arrays read at it (``a[i]``,
``b[i - 1]``), and, with some chance, something that makes the loop carry a
value (a name read before the body assigns it, an accumulator read by the
body, a name of the body read after the loop) so that it must stay a loop.
Every program is differentiable at its point; the fuzzer compares it with
central differences.

>>> from tests.programs import RandomDraw
>>> "for i in range(" in sums_program(RandomDraw(0)).source
True
"""

from __future__ import annotations

import numpy as np

from tests.programs import chance, choice
from tests.programs_numpy import NumpyProgram, _Gen

RANGES = ["range(len(a))", "range(3)", "range(1, len(a))", "range(len(a), 0, -1)",
          "range(0, 7, 2)", "range(2, 2)", "range(len(a) - 1, -1, -2)", "range(n)"]
INDEXED = ["range(1, len(a))", "range(1, n)", "range(1, len(a), 2)"]
"""Ranges a loop reading a[i] and b[i - 1] may take."""


def sums_program(d, *, max_stmts: int = 4) -> NumpyProgram:
    g = _Gen(d, 2)
    env = ["a", "b", "s"]
    helpers = ["def g(k, v):", f"    w = v * {choice(d, ['0.5', 'np.tanh(k * 0.3)', 'k'])}",
               f"    return {choice(d, ['np.sum(np.sin(w) * v)', 'np.tanh(w)', 'w * w'])}"]
    lines = ["n = len(a)", "acc = 0.0", "vec = np.zeros(len(a))"]
    if chance(d, 30):
        lines.append("def h(k):")
        lines.append(f"    return np.sum(np.cos(a * k * 0.25 + {g.expr(['b', 's'], 1)}))")
    carried = chance(d, 25)
    stays = carried or chance(d, 10)
    if carried:
        lines.append("t = np.copy(b)")
    lines += ["rows = np.zeros(len(a))", "M = np.zeros((len(a), len(a)))"]
    for _ in range(d.integer(1, 2)):
        indexed = chance(d, 40)  # rows written and arrays read at the loop's index
        lines.append(f"for i in {choice(d, INDEXED if indexed else RANGES)}:")
        body = [f"u = i * {choice(d, ['0.5', '1.0 / n', '0.25'])} + "
                f"{choice(d, ['0.0', 's', 'float(i) * 0.1'])}"]
        names = list(env)
        if indexed:
            body.append(f"ai = a[i] * {choice(d, ['u', 's', '0.5'])} + b[{choice(d, ['i', 'i - 1', '0'])}]")
            names.append("ai")
            if not stays or chance(d, 50):
                body.append(f"rows[i] = np.sum({g.expr(names, 1)}) * 0.5 + np.sin(ai)")
            if chance(d, 50):
                body.append(f"M[i] = {g.expr(names, 1)} * u + b")
        for _ in range(d.integer(1, max_stmts)):
            form = d.integer(0, 9)
            if form == 0:
                body.append(f"t = {g.expr(names, 1)} * u")
                names.append("t")
            elif form == 1:
                body.append(f"acc += np.sum({g.expr(names, 1)} * np.sin(u))")
            elif form == 2:
                body.append(f"acc = acc - np.mean({g.expr(names, 1)}) * u")
            elif form == 3:
                body.append(f"vec {choice(d, ['+=', '-='])} {g.expr(names, 1)} * u")
            elif form == 4:
                body.append("acc = acc + np.sum(g(i, b * u))" if chance(d, 50)
                            else "vec = vec + g(u, a)")
            elif form == 5 and any(line.startswith("def h") for line in lines):
                body.append("acc += h(i)")
            elif form == 6:  # through a helper: a loop that stays (a reduction given an
                # axis keeps it too) cannot write into an array made in its body
                body.append("acc += fill(u)")
                if "    def fill(k):" not in [f"    {x}" for x in lines]:
                    lines[3:3] = ["def fill(k):", "    p = np.full(len(a), k * 0.5)",
                                  "    p[0] = s", "    return np.sum(p * a)"]
            elif form == 7:  # a helper with a branch on each iteration's value
                body.append(f"acc += np.sum(br({g.expr(names, 1)} * u, s))")
                if not any(h.startswith("def br") for h in helpers):
                    helpers += [""] + _branching(d)
            elif form == 8:  # a branch in the body, its arms assigning a name of the iteration
                # one item (the lines inserted below must not fall between its own)
                body += [f"if np.sum({g.expr(names, 1)}) > s:\n            q = "
                         f"{g.expr(names, 1)} * u\n        else:\n            q = "
                         f"np.tanh({g.expr(names, 1)})",
                         f"{choice(d, ['acc += np.sum(q * b)', 'vec = vec + q'])}"]
            else:
                body.append(f"acc += np.sum(np.cumsum({g.expr(names, 1)} * u) * b)")
        if carried and chance(d, 60):
            body.insert(1, "acc += np.sum(t * a) * 0.1")  # t of the previous iteration
        if stays and not carried:
            body.insert(d.integer(1, len(body)), choice(d, [
                "acc = acc * 0.9 + np.sum(a) * 0.01",  # reads acc: stays a loop
                "t = vec * 0.5 + acc"]))  # reads both accumulators before they are updated
        lines += ["    " + line for line in body]
    result = choice(d, ["acc + np.sum(vec * b)", "acc * s + np.sum(np.sin(vec))",
                        "np.sum(vec * vec) + acc"]) + " + np.sum(rows * rows * b) + np.sum(np.tanh(M) * a)"
    if carried and chance(d, 50) and "t = " in "\n".join(lines[4:]):
        result += " + np.sum(t)"  # a name of the body read after the loop
    text = "import numpy as np\n\n\n" + "\n".join(helpers) + "\n\n\ndef f(a, b, s):\n"
    text += "".join(f"    {line}\n" for line in lines) + f"    return {result}\n"
    n = d.integer(3, 5)
    a = np.array([round(d.real(-2.0, 2.0), 4) for _ in range(n)])
    b = np.array([round(d.real(-2.0, 2.0), 4) for _ in range(n)])
    return NumpyProgram(text, {"a": a, "b": b, "s": round(d.real(-2.0, 2.0), 4)}, len(lines))


def _branching(d) -> list:
    """``def br(v, c):`` with an ``if`` on its argument's value: both arms
    returning, an early return, or a name one arm assigns again. The first
    arm may divide by what its test keeps away from zero. Or each arm writes
    into an array made before the ``if`` (each iteration sees its own arm's
    write only)."""
    test, first = choice(d, [("np.sum(v * v) > 0.25", "v / np.sqrt(m)"),
                             ("np.max(v) < c", "np.tanh(v) * c"),
                             ("np.sum(v) > c", "np.log(np.sum(v * v) + 1.0) * v")])
    other = choice(d, ["v * v", "np.sin(v) + c", "v * 0.5"])
    lines = ["def br(v, c):", "    m = np.sum(v * v)", f"    if {test}:"]
    form = d.integer(0, 3)
    if form == 3:  # each arm writes into an array made before the `if`
        return ["def br(v, c):", "    m = np.sum(v * v)", "    p = np.zeros(2)",
                "    p[0] = np.sum(v) * 0.5",
                f"    if {test}:", f"        p[1] = np.sum({first})", "    else:",
                f"        p[0] = np.sum({other})", "    return np.sum(p * p) * v"]
    if form == 0:
        lines += [f"        return {first}", "    else:", f"        return {other}"]
    elif form == 1:
        lines += [f"        return {first}", f"    w = {other}", "    return w * 0.5"]
    else:
        lines[2:2] = [f"    w = {other}"]
        lines += [f"        w = {first}", "    return np.sin(w) + m"]
    return lines
