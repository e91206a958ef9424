"""Random NumPy programs aimed at two analyses of the reverse transform.

Contract: :func:`shift_program` draws a module defining
``f(z, w, c, r, v, s)`` — ``z``, ``w`` of shape ``(n, k)`` (or ``(2, n, k)``:
then axis 1 is not axis -1, and axis 2 exists), a column ``c``
``(n, 1)``, a row ``r`` ``(1, k)``, a vector ``v`` ``(k,)`` and ``s`` (a
float, sometimes annotated ``s: float``) — returning a number, or a tuple of
numbers one of which is differentiated (``output``). Two families, often in
one program:

* **shifts** (:mod:`s2s_ad.reverse.shifts`): a stable log-sum-exp, softmax or
  log-softmax ``m = np.max(Z, axis=A, keepdims=True); ... np.exp(Z - m) ...``
  written the way that cancels, then perturbed at random so that it may not:
  ``m`` read again (summed, returned in a tuple, through ``np.maximum``), a
  scaled or doubled shift, a sum over another axis or dropping its axes, an
  operand of another shape (the column, the row, the vector, ``Z`` plus a
  broadcast), ``np.min`` for ``np.max``, a ``+ 1.0`` inside the log, the
  whole block inside a ``for`` loop or an ``if`` branch, the shift before a
  loop that reads it;
* **unspread reductions** (``ArraySweep._spread_by_its_use``): ``np.sum`` /
  ``np.mean`` (all axes or one) of an elementwise expression whose operands
  have random shape relationships — same-shape parameters, broadcast columns
  and rows, scalars, ``x * x``, ``np.where``, ``np.maximum``, a value read by
  one reduction or by two.

The point is continuous random data (no ties in a maximum, almost surely),
so the functions are smooth there; the runner's finite differences
(``tests.fuzz.run_numpy_one``) still skip a point where they are unreliable.

>>> from tests.programs import RandomDraw
>>> p = shift_program(RandomDraw(3))
>>> sorted(p.point) == sorted(p.wrt)
True
"""

from __future__ import annotations

import re

import numpy as np

from tests.programs import chance, choice
from tests.programs_numpy import NumpyProgram

PARAMS = ("z", "w", "c", "r", "v", "s")
FULL = ["z", "w"]
"""Parameters of shape (n, k) or (2, n, k)."""
FULL_NAME = re.compile(r"\b(z|w|y\d+|x\d+)\b")
"""A name of shape (n, k) (the temporaries y1, x2... are such arrays)."""
SMALL = ["c", "r", "v", "s"]
"""Parameters that broadcast against them: (n, 1), (1, k), (k,), a float."""


class _ShiftGen:
    def __init__(self, d, ndim: int):
        self.d = d
        self.ndim = ndim
        self.axes = ["0", "1", "-1", "-2"] + (["2"] if ndim == 3 else [])
        """The axes of z and w."""
        self.temps = 0
        self.extra: list[str] = []
        """Further outputs (tuple items) that read a shift."""

    def fresh(self, base: str) -> str:
        self.temps += 1
        return f"{base}{self.temps}"

    # -- elementwise expressions (the unspread reductions' operands) ---------

    def leaf(self, env: list[str]) -> str:
        d = self.d
        if chance(d, 70):
            return choice(d, env)
        return choice(d, SMALL + ["2.0", "0.5"])

    def elementwise(self, env: list[str], depth: int = 0) -> str:
        d = self.d
        if depth >= 2 or chance(d, 25):
            return self.leaf(env)
        sub = lambda: self.elementwise(env, depth + 1)  # noqa: E731
        kind = d.integer(0, 9)
        if kind <= 2:
            return f"({sub()} {choice(d, ['+', '-', '*'])} {sub()})"
        if kind == 3:
            x = sub()
            return choice(d, [f"({x} * {x})", f"({x} ** 2)", f"np.square({x})"])
        if kind == 4:
            return f"{choice(d, ['np.sin', 'np.tanh', 'np.cos', 'np.negative'])}({sub()})"
        if kind == 5:
            return f"np.exp(np.tanh({sub()}))"
        if kind == 6:
            return f"({sub()} / ({sub()} ** 2 + 1.0))"
        if kind == 7:
            return f"np.where({sub()} > 0, {sub()}, {sub()})"
        if kind == 8:
            return f"np.{choice(d, ['maximum', 'minimum'])}({sub()}, {sub()})"
        return f"np.log({sub()} ** 2 + 0.5)"

    def reduction(self, env: list[str], lines: list[str]) -> str:
        """A number: a reduction of an elementwise expression, the value
        maybe named and read twice."""
        d = self.d
        x = self.elementwise(env)
        if not FULL_NAME.search(x):
            # all of shape (n, 1), (1, k), (k,) or scalars: an axis may not exist
            # (np.sum(s, axis=0) of a float is a NumPy quirk, not the target here)
            x = f"({x} {choice(d, ['+', '*'])} {choice(d, FULL)})"
        if chance(d, 40):
            name = self.fresh("x")
            lines.append(f"{name} = {x}")
            x = name
        red = choice(d, ["np.sum", "np.mean"])
        form = d.integer(0, 5)
        if form <= 1:
            out = f"{red}({x})"
        elif form == 2:
            axis = choice(d, self.axes)
            out = f"np.sum({red}({x}, axis={axis}) * {choice(d, ['1.5', 'v', 's', 'c'])})"
        elif form == 3:
            out = f"np.sum({red}({x}, axis={choice(d, ['0', '1'])}, keepdims=True) * " \
                  f"{choice(d, FULL + SMALL)})"
        elif form == 4:
            out = f"{red}({x} * {choice(d, FULL + SMALL)})"
        else:
            out = f"{red}({x}) * {red}({x})"
        if x.isidentifier() and chance(d, 30):
            out += f" + np.sum({x} * {choice(d, FULL + SMALL)})"  # x read twice
        return out

    # -- shifts --------------------------------------------------------------

    def base(self, env: list[str], loop: bool) -> str:
        """Z, an array of shape (n, k)."""
        d = self.d
        options = ["z", "z", "w", "(z * w)", "(np.sin(z) * 2.0)", "(z + s)", "(z * c)",
                   "(z + r)", "(z - 0.5 * w)", "(np.tanh(z) + w)", "(z + v)",
                   "(c * r)", "(c - r)", "c"]  # (n, k) even when z is (2, n, k)
        if self.ndim == 3 and chance(d, 40):
            return choice(d, ["(c * r)", "(c - r)", "(c + v)"])  # then z, w add an axis
        if loop:
            options += ["(z * (i + 1.0))", "(z + i)"]
        return choice(d, options + [n for n in env if n.startswith(("x", "y"))])

    def shift(self, env: list[str], lines: list[str], loop: bool, inner: bool = False) -> str:
        """Lines computing a log-sum-exp, softmax or log-softmax of some
        Z with its shift; returns a number. ``loop``: inside a loop over
        ``i``; ``inner``: inside a loop or a branch (nothing is read after it)."""
        d = self.d
        Z = self.base(env, loop)
        if not Z.isidentifier() or chance(d, 30):
            name = self.fresh("y")
            lines.append(f"{name} = {Z}")
            Z = name
        A = choice(d, ["1"] + self.axes + ["None"])
        keep = chance(d, 85)
        fn = "max" if chance(d, 75) else "min"
        m = self.fresh("m")
        if chance(d, 15):
            args = [f"axis={A}"] if A != "None" else []
            args += ["keepdims=True"] if keep else []
            args = ", ".join(args)
            lines.append(f"{m} = {Z}.{fn}({args})")
        else:
            kd = ", keepdims=True" if keep else ""
            lines.append(f"{m} = np.{fn}({Z}, axis={A}{kd})")
        if chance(d, 8):
            lines.append(f"{m} = np.maximum({m}, {choice(d, ['0.0', 'c', 's'])})")
        elif chance(d, 5):
            lines.append(f"{m} = {m} + 0.0")
        self.hoist_at = len(lines)
        """Where a loop may start, the shift computed before it."""
        # the shifted values
        other = Z
        if chance(d, 12):
            other = choice(d, FULL + ["c", "r", "v", f"({Z} + c)", f"({Z} + r)", f"{Z}[::-1]",
                               f"{Z}[:, ::-1]", f"{Z}.T", f"({Z} * 1.0)"])
        sh = choice(d, [f"{other} - {m}"] * 16 + [
            f"{other} - 2.0 * {m}", f"({other} - {m}) * 0.5", f"{other} - {m} * s",
            f"-({m} - {other})", f"{other} + {m}", f"{other} - {m} + c",
            f"{other} - np.maximum({m}, 0.0)", f"{other} - {m} - {m} + {m}",
            f"{other} - {m} + 0.0 * w", f"{other} - {m} + z"])  # z, w: maybe of higher rank
        if chance(d, 10):
            sh = f"{sh} + {choice(d, ['0.0 * w', 'z', 'np.sin(w)'])}"
        dz = self.fresh("d")
        lines.append(f"{dz} = {sh}")
        if chance(d, 5):  # a second shift, of the shifted values
            lines.append(f"{dz} = {dz} - np.max({dz}, axis={choice(d, ['0', '1', 'None'])}, "
                         f"keepdims=True)")
        elif chance(d, 4):
            lines.append(f"{dz} = {dz} - {dz} + {dz}")
        A2 = A if chance(d, 90) else choice(d, self.axes + ["None"])
        kd2 = ", keepdims=True" if (A == "None" or chance(d, 90)) else ""
        e = self.fresh("e")
        scale = choice(d, [""] * 12 + [" * 2.0", " / 3.0", " * s", f" * np.sin({Z})",
                                      " * w", " * z", " + 1.0"])
        lines.append(f"{e} = np.exp({dz}){scale}")
        red = "np.sum" if chance(d, 90) else "np.mean"
        S = self.fresh("S")
        if chance(d, 10):
            lines.append(f"{S} = {e}.sum(axis={A2}{kd2})")
        else:
            lines.append(f"{S} = {red}({e}, axis={A2}{kd2}){' + 1.0' if chance(d, 5) else ''}")
        form = d.integer(0, 3) if chance(d, 92) else 4
        out = self.fresh("o")
        if form == 0:  # log-sum-exp
            lse = choice(d, [f"{m} + np.log({S})", f"np.log({S}) + {m}",
                             f"np.log({S}) - (-{m})", f"np.log({S}) + {m} * 1.0"])
            lines.append(f"{out} = {lse}")
            result = choice(d, [f"np.sum(w * ({Z} - {out}))", f"np.sum({out})",
                                f"np.sum({out} * {choice(d, ['c', 'r', 'v', 's', 'w'])})"])
        elif form == 1:  # softmax
            lines.append(f"{out} = {e} / {S}")
            result = choice(d, [f"np.sum(w * {out})", f"np.sum({out} * {out})",
                                f"np.sum(np.log({out}) * w)", f"np.sum({out} * {Z})"])
        elif form == 2:  # log-softmax
            lines.append(f"{out} = {dz} - np.log({S})")
            result = choice(d, [f"np.sum(w * {out})", f"np.mean({out} * {out})",
                                f"np.sum({out} * r)", f"np.sum({dz}[0] * {out}[0])"])
        elif form == 3:  # softmax by a log
            lines.append(f"{out} = np.exp({dz} - np.log({S}))")
            result = f"np.sum({out} * w)"
        else:  # the shifted exponentials alone: they do depend on m
            lines.append(f"{out} = {e} * {choice(d, ['1.0', Z, 'w'])}")
            result = choice(d, [f"np.sum({out})", f"np.log(np.sum({out}))",
                                f"np.sum({S} * {out})"])
        # m read again
        again = d.integer(0, 39)
        if again == 0:
            result += f" + np.sum({m})"
        elif again == 1:
            result += f" + np.sum({m} * {choice(d, ['c', 'w', 'r'])})"
        elif again in (2, 3):
            item = f"np.sum({m if again == 2 else S})"
            if loop or inner:  # read after a loop or branch it would be refused (maybe undefined)
                result += f" + {item}"
            else:
                self.extra.append(item)
        elif again == 4:
            result += f" + np.sum(np.maximum({m}, 0.0))"
        if chance(d, 10):
            env.append(out if form != 0 or kd2 else Z)
        return result


def _block(g: _ShiftGen, d, env: list[str], lines: list[str]) -> str:
    """Lines appended to ``lines``: a shift or a reduction, maybe inside a
    loop or a branch; returns the number they compute."""
    body: list[str] = []
    acc = g.fresh("acc")
    trips = f"for i in range({choice(d, ['2', '3'])}):"
    if d.integer(0, 9) > 5:
        if chance(d, 80):
            return g.reduction(env, lines)
        t = g.reduction(list(env), body)  # a reduction in a loop
        lines += [f"{acc} = 0.0", trips] + ["    " + b for b in body + [f"{acc} = {acc} + {t}"]]
        return acc
    where = d.integer(0, 19)
    if where >= 7:
        return g.shift(env, lines, False)
    if where < 3:  # the whole shift inside a loop
        t = g.shift(list(env), body, True, True)
        lines += [f"{acc} = 0.0", trips] + ["    " + b for b in body + [f"{acc} = {acc} + {t}"]]
    elif where < 5:  # the shift before a loop, its uses inside
        t = g.shift(list(env), body, False, True)
        lines += body[:g.hoist_at] + [f"{acc} = 0.0", trips]
        lines += ["    " + b for b in body[g.hoist_at:] + [f"{acc} = {acc} + {t} * (i + 1.0)"]]
    else:  # inside a branch
        t = g.shift(list(env), body, False, True)
        cond = choice(d, ["np.sum(z) > 0", "np.max(w) > 0.5", "np.sum(c) < 0"])
        lines += [f"if {cond}:"] + ["    " + b for b in body + [f"{acc} = {t}"]]
        lines += ["else:", f"    {acc} = np.sum(z * w)"]
    return acc


def shift_program(d) -> NumpyProgram:
    n, k = choice(d, [1, 2, 3, 3, 4]), choice(d, [1, 2, 3, 4, 4])
    full = (2, n, k) if chance(d, 25) else (n, k)  # 3-D: axis 1 is not axis -1
    g = _ShiftGen(d, len(full))
    env = list(FULL)
    lines: list[str] = []
    terms: list[str] = []
    for _ in range(d.integer(1, 3)):
        terms.append(_block(g, d, env, lines))
    result = " + ".join(terms)
    output = None
    if g.extra or chance(d, 10):
        items = [result] + g.extra + ([] if g.extra else ["np.sum(z * z)"])
        order = list(range(len(items)))
        if chance(d, 50):
            order.reverse()
        output = d.integer(0, len(items) - 1)
        result = ", ".join(items[k] for k in order)
    s_param = "s: float" if chance(d, 50) else "s"
    text = f"import numpy as np\n\n\ndef f(z, w, c, r, v, {s_param}):\n"
    text += "".join(f"    {line}\n" for line in lines) + f"    return {result}\n"
    rng = np.random.default_rng(d.integer(0, 2 ** 31))
    point = {"z": rng.uniform(-2, 2, full), "w": rng.uniform(-2, 2, full),
             "c": rng.uniform(-2, 2, (n, 1)), "r": rng.uniform(-2, 2, (1, k)),
             "v": rng.uniform(-2, 2, (k,)), "s": float(rng.uniform(-2, 2))}
    return NumpyProgram(text, point, len(lines), wrt=PARAMS, output=output)
