"""Random NumPy programs whose array code sits in helpers that never name NumPy.

Contract: :func:`kinds_program` draws a module of one to three helpers and a
function ``f(a, b, s)``, as a :class:`~tests.programs_numpy.NumpyProgram`
(``a``, ``b`` float arrays of one shape, ``s`` a float). No helper mentions
``np``: each is arithmetic (``+ - * /``, ``**``, ``abs``, unary ``-``) over
its parameters, may call an earlier helper (a helper of a helper), may
accumulate over a ``for`` loop, may update a fresh local with ``+=``, and may
have a numeric default that a call site overrides with an array. ``f`` calls
the helpers with arrays, with numbers (``np.sum(a)``, constants, ``s``
annotated ``s: float`` in some programs) and with both at different sites,
so one helper gets an array and a scalar specialisation. In a third of the
programs ``f`` itself never names NumPy either: it walks ``a`` and ``b``
(then 1-D) element by element and also reads an item of a helper's array
result, so the kinds come from the arguments ``grad`` is called with.

>>> from tests.programs import RandomDraw
>>> "np." not in kinds_program(RandomDraw(0)).source.split("def f")[0].split("import numpy")[1]
True
"""

from __future__ import annotations

import numpy as np

from tests.programs import chance, choice
from tests.programs_numpy import NumpyProgram

SHAPES = [(3,), (2, 3), (4,)]


class _Helpers:
    """Draws helper definitions without NumPy."""

    def __init__(self, d):
        self.d = d
        self.ops = 0
        self.helpers: list[tuple[str, list[str], int]] = []
        """(name, parameters, how many have no default)."""

    def expr(self, env: list[str], depth: int, calls: bool) -> str:
        d = self.d
        if depth >= 3 or chance(d, 30):
            return choice(d, env) if chance(d, 80) else choice(d, ["0.5", "2.0", "1.5"])
        self.ops += 1
        sub = lambda: self.expr(env, depth + 1, calls)  # noqa: E731
        kind = d.integer(0, 7)
        if kind <= 2:
            return f"({sub()} {choice(d, ['+', '-', '*'])} {sub()})"
        if kind == 3:
            e = sub()
            return f"({sub()} / (1.0 + {e} * {e}))"
        if kind == 4:
            return f"({sub()} ** {choice(d, ['2', '3'])})"
        if kind == 5:
            return f"abs({sub()})" if chance(d, 50) else f"(-{sub()})"
        if kind == 6 and calls and self.helpers:
            return self.call(env, depth, choice(d, self.helpers))
        return f"({sub()} * {choice(d, ['0.5', '-1.5', '3.0'])})"

    def call(self, env: list[str], depth: int, helper) -> str:
        name, params, required = helper
        n = self.d.integer(required, len(params))
        args = [self.expr(env, depth + 1, False) for _ in range(n)]
        return f"{name}({', '.join(args)})"

    def define(self, index: int) -> str:
        d = self.d
        name = f"h{index}"
        params = ["u", "v", "w"][:d.integer(1, 3)]
        default = len(params) > 1 and chance(d, 30)
        sig = ", ".join(params[:-1] + [f"{params[-1]}=0.5"]) if default else ", ".join(params)
        lines, env = [], list(params)
        form = d.integer(0, 3)
        if form == 1:
            lines += ["acc = 0.0", "for i in range(2):",
                      f"    acc = acc + {self.expr(env + ['i'], 1, True)}"]
            env.append("acc")
        elif form == 2:
            lines += [f"z = {params[0]} * {self.expr(env, 1, True)}",
                      f"z {choice(d, ['+=', '-=', '*='])} {self.expr(env, 1, True)}"]
            env.append("z")
        elif form == 3:
            lines.append(f"t = {self.expr(env, 0, True)}")
            env.append("t")
        lines.append(f"return {self.expr(env, 0, True)}")
        self.helpers.append((name, params, len(params) - (1 if default else 0)))
        return f"def {name}({sig}):\n" + "".join(f"    {line}\n" for line in lines)


def kinds_program(d) -> NumpyProgram:
    h = _Helpers(d)
    defs = [h.define(k) for k in range(d.integer(1, 3))]
    plain = chance(d, 33)
    if plain:
        body, shape = _plain_main(d, h), choice(d, [(3,), (4,)])
    else:
        body, shape = _numpy_main(d, h), choice(d, SHAPES)
    annotate = not plain and chance(d, 50)
    text = "import numpy as np\n\n\n" + "\n\n".join(defs) + "\n\n"
    text += f"def f(a, b, s{': float' if annotate else ''}):\n"
    text += "".join(f"    {line}\n" for line in body)
    size = int(np.prod(shape))
    a = np.array([round(d.real(-2.0, 2.0), 4) for _ in range(size)]).reshape(shape)
    b = np.array([round(d.real(-2.0, 2.0), 4) for _ in range(size)]).reshape(shape)
    return NumpyProgram(text, {"a": a, "b": b, "s": round(d.real(-2.0, 2.0), 4)}, h.ops)


def _numpy_main(d, h: _Helpers) -> list[str]:
    """``f`` in NumPy: helpers called with arrays, numbers, and both."""
    arrays = ["a", "b", "np.tanh(b)", "(a * s)"]
    numbers = ["s", "np.sum(a)", "np.mean(b)", "0.5", "2.0"]
    lines, env = [], ["a", "b"]
    for k in range(d.integer(1, 3)):
        name, params, required = choice(d, h.helpers)
        args = [choice(d, arrays + env if chance(d, 60) else numbers)
                for _ in range(d.integer(required, len(params)))]
        lines.append(f"c{k} = {name}({', '.join(args)})")
        env.append(f"c{k}")
    name, params, required = choice(d, h.helpers)
    scalar = f"{name}({', '.join(choice(d, numbers) for _ in range(required))})"
    total = " * ".join(choice(d, env) for _ in range(d.integer(1, 2)))
    lines.append(f"return np.{choice(d, ['sum', 'mean'])}({total} * a) + {scalar}")
    return lines


def _plain_main(d, h: _Helpers) -> list[str]:
    """``f`` without NumPy: elements of ``a`` and ``b`` (1-D), and an item
    of a helper's result on the whole arrays."""
    name, params, required = choice(d, h.helpers)
    args = ", ".join(choice(d, ["a[i]", "b[i]", "s", "(a[i] * b[i])"])
                     for _ in range(required))
    whole = ", ".join(choice(d, ["a", "b", "s"]) for _ in range(required))
    # (a * 0.0 + ...: an array whatever the helper returns, so r[k] is a number)
    return ["acc = 0.0", "for i in range(len(a)):",
            f"    acc = acc + {name}({args}) * {choice(d, ['a[i]', 'b[i]', 's'])}",
            f"r = a * 0.0 + {name}({whole})",
            f"return acc + {choice(d, ['s', 'a[0]', 'b[1]'])} * r[{d.integer(0, 2)}]"]
