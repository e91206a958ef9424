"""Random, valid, differentiable programs for differential testing.

Contract: :func:`program` draws a :class:`Program` — the text of a module
defining one function in the supported subset, the point to evaluate it at
and the parameters to differentiate — from a *drawer*: either
:class:`RandomDraw` (a seeded ``random.Random``, for the long soak, where a
seed reproduces a program) or :class:`HypothesisDraw` (hypothesis's ``data``
object, for the test suite, where failures shrink towards the first option of
every choice, so options are listed simplest first).

What the programs exercise:

* expression DAGs over the scalar primitives: ``+ - * / ** %  //``, unary
  minus, ``abs``/``max``/``min``/``pow``/``float``/``round``/``int`` and the
  ``math`` functions of the rule table, with *fan-out* (a variable read by
  several later statements, or twice in one expression);
* reassignment (``x = x * y``), augmented assignment (``x += ...``), tuple
  assignment and swaps, annotated assignment, dead statements;
* control flow: ``if``/``elif``/``else`` on comparisons (with ``and``/``or``/
  ``not`` now and then), ``for i in range(...)`` with 0 to 3 trips (reading
  ``i``, with an early ``break`` now and then) and counted ``while`` loops,
  their bodies assigning only variables that exist before them;
* the three ways of naming ``math`` (``import math``, ``import math as m``,
  ``from math import sin, ...``), module constants, parameters with defaults
  and keyword-only parameters;
* adversarial names that look like generated ones (``dx``, ``dout``,
  ``tape``, ``grad_f``, ``t1``, ``_t0``, ``out``, ``x_1``...) for parameters,
  locals and the function itself.

Inputs are domain-safe by construction where a rule has a restricted domain:
``log``'s argument is ``e*e + c``, ``exp(e)``, ``abs(e) + c`` or
``hypot(e, c)``; ``asin``'s is ``0.9 * tanh(e)``; a divisor is such a positive
form or a non-zero constant. What construction can't rule out (overflow,
a quotient by a small ``e*e + c`` that blows up) is rejected at evaluation time
by the runner, never silently compared.

>>> p = program(RandomDraw(0))
>>> p.source.startswith(("import math", "from math", "import math as"))
True
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

PLAIN_NAMES = ["x", "y", "z", "a", "b", "w", "u", "v"]
ADVERSARIAL_NAMES = ["dx", "dy", "dout", "tape", "grad_f", "t1", "t2", "_t0", "out", "x_1",
                     "dt1", "d_x", "dz", "value_and_grad_f", "da", "out_1"]
FUNCTION_NAMES = ["f", "g", "grad_f", "loss", "dx", "out"]

# Unary math functions defined on all reals (name, safe argument scale):
# exp/sinh/cosh grow fast, so their argument is damped with tanh.
SMOOTH_UNARY = ["sin", "cos", "atan", "tanh", "erf", "erfc", "asinh", "degrees", "radians"]
GROWING_UNARY = ["exp", "sinh", "cosh", "expm1", "exp2"]
POSITIVE_UNARY = ["log", "sqrt", "log2", "log10", "cbrt"]
UNIT_UNARY = ["asin", "acos", "atanh"]
# Piecewise constant or kinked: a finite difference across a jump is caught by
# the runner's consistency check, not mistaken for a wrong gradient.
STEP_UNARY = ["floor", "ceil", "trunc"]


class RandomDraw:
    """Draws from a seeded ``random.Random``."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def real(self, lo: float, hi: float) -> float:
        return self.rng.uniform(lo, hi)


class HypothesisDraw:
    """Draws through hypothesis's ``data.draw`` (so failures shrink)."""

    def __init__(self, data):
        from hypothesis import strategies as st

        self.data = data
        self.st = st

    def integer(self, lo: int, hi: int) -> int:
        return self.data.draw(self.st.integers(lo, hi))

    def real(self, lo: float, hi: float) -> float:
        return self.data.draw(self.st.floats(lo, hi, allow_nan=False, allow_infinity=False))


def choice(d, options):
    return options[d.integer(0, len(options) - 1)]


def chance(d, percent: int) -> bool:
    return d.integer(0, 99) >= 100 - percent


@dataclass
class Program:
    source: str
    name: str
    params: list[str]
    point: dict[str, float]
    wrt: object
    """What to pass as ``wrt``: None, an int, a name, or a tuple of them."""
    wrt_names: list[str] = field(default_factory=list)
    """The parameters ``wrt`` selects, in gradient order."""
    ops: int = 0
    """Rough count of operations, to bound the symbolic check."""


class _Gen:
    COMPOUND_FROM = 9
    """A statement is compound when its kind (0-9) is at least this (with control flow)."""

    def __init__(self, d, max_stmts: int, max_depth: int, control: bool = False):
        self.d = d
        self.control = control
        self.max_depth = max_depth
        self.max_stmts = max_stmts
        self.ops = 0
        style = d.integer(0, 2)
        self.math_prefix = {0: "math.", 1: "m.", 2: ""}[style]
        self.style = style
        self.used_bare: set[str] = set()
        self.constants: dict[str, float] = {}

    # -- names ---------------------------------------------------------------

    def fresh_name(self, taken: set[str]) -> str:
        pool = PLAIN_NAMES + ADVERSARIAL_NAMES
        if self.style != 0:
            pool = pool + ["math"]  # `math` is not the module's name here: a legal local
        for _ in range(20):
            name = choice(self.d, pool)
            if name not in taken:
                return name
        i = 0
        while f"v{i}" in taken:
            i += 1
        return f"v{i}"

    # -- expressions -----------------------------------------------------------

    def call(self, fn: str, *args: str) -> str:
        self.ops += 1
        if self.style == 2:
            self.used_bare.add(fn)
            return f"{fn}({', '.join(args)})"
        return f"{self.math_prefix}{fn}({', '.join(args)})"

    def const(self) -> str:
        c = choice(self.d, ["2.0", "0.5", "3", "1.5", "-1.25", "0.1", "2", "-3.0", "K"])
        if c == "K":
            name = choice(self.d, ["K", "SCALE", "C0"])
            self.constants.setdefault(name, choice(self.d, [0.75, 1.5, -0.5, 2]))
            return name
        return f"({c})" if c.startswith("-") else c

    def leaf(self, env: list[str]) -> str:
        if env and not chance(self.d, 20):
            return choice(self.d, env)
        return self.const()

    def positive(self, env: list[str], depth: int) -> str:
        """An expression that is > 0.05 for every real value of its parts."""
        e = self.expr(env, depth + 1)
        kind = self.d.integer(0, 4)
        self.ops += 2
        if kind == 0:
            return f"({e} * {e} + 0.5)"
        if kind == 1:
            return self.call("exp", self.call("tanh", e))
        if kind == 2:
            return f"(abs({e}) + 0.25)"
        if kind == 3:
            return self.call("hypot", e, "0.5")
        return f"(1.5 + {self.call('sin', e)})"

    def damped(self, env: list[str], depth: int, scale: str = "2.0") -> str:
        """An expression in (-scale, scale)."""
        self.ops += 1
        return f"({scale} * {self.call('tanh', self.expr(env, depth + 1))})"

    def expr(self, env: list[str], depth: int = 0) -> str:
        d = self.d
        if depth >= self.max_depth or chance(d, 25):
            return self.leaf(env)
        kind = d.integer(0, 13)
        self.ops += 1
        if kind <= 3:  # + - *
            op = choice(d, ["+", "*", "-"])
            return f"({self.expr(env, depth + 1)} {op} {self.expr(env, depth + 1)})"
        if kind == 4:  # division by something safely away from zero
            den = self.positive(env, depth) if chance(d, 70) else choice(d, ["2.0", "(-4)", "0.5"])
            return f"({self.expr(env, depth + 1)} / {den})"
        if kind == 5:  # powers
            form = d.integer(0, 4)
            if form == 0:
                return f"({self.expr(env, depth + 1)} ** {choice(d, ['2', '3', '2.0', '1', '0'])})"
            if form == 1:
                return f"({self.positive(env, depth)} ** {choice(d, ['0.5', '-1', '-0.5', '1.5'])})"
            if form == 2:
                return f"({self.positive(env, depth)} ** {self.damped(env, depth, '1.5')})"
            if form == 3:
                return f"pow({self.positive(env, depth)}, {self.damped(env, depth, '1.5')})"
            return self.call("pow", self.positive(env, depth), self.damped(env, depth, "1.5"))
        if kind == 6:
            return f"(-{self.expr(env, depth + 1)})"
        if kind == 7:
            return self.call(choice(d, SMOOTH_UNARY), self.expr(env, depth + 1))
        if kind == 8:
            fn = choice(d, GROWING_UNARY)
            return self.call(fn, self.damped(env, depth))
        if kind == 9:
            return self.call(choice(d, POSITIVE_UNARY), self.positive(env, depth))
        if kind == 10:
            fn = choice(d, UNIT_UNARY)
            return self.call(fn, self.damped(env, depth, "0.9"))
        if kind == 11:
            fn = choice(d, ["abs", "max", "min", "max3", "float", "fabs"])
            a = self.expr(env, depth + 1)
            if fn == "abs":
                return f"abs({a})"
            if fn == "fabs":
                return self.call("fabs", a)
            if fn == "float":
                return f"float({a})"
            b = self.expr(env, depth + 1)
            if fn == "max3":
                return f"max({a}, {b}, {self.expr(env, depth + 1)})"
            return f"{fn}({a}, {b})"
        if kind == 12:
            form = d.integer(0, 5)
            a = self.expr(env, depth + 1)
            if form == 0:
                return self.call("atan2", a, self.positive(env, depth))
            if form == 1:
                return self.call("hypot", a, self.positive(env, depth))
            if form == 2:
                return self.call("log", self.positive(env, depth), choice(d, ["2.0", "10", "3.5"]))
            if form == 3:
                return self.call("copysign", a, choice(d, ["1.0", "-2.0"]))
            if form == 4:
                return f"({a} % {choice(d, ['1.0', '2.5', '0.75'])})"
            return self.call("fmod", a, choice(d, ["1.0", "2.5"]))
        # steps: zero derivative almost everywhere
        form = d.integer(0, 3)
        a = self.expr(env, depth + 1)
        if form == 0:
            return f"({a} // {choice(d, ['1.0', '0.5'])})"
        if form == 1:
            return f"round({a})"
        if form == 2:
            return f"int({a})"
        return self.call(choice(d, STEP_UNARY), a)

    # -- statements ------------------------------------------------------------

    def simple(self, env: list[str], indent: str) -> str:
        """An assignment to a variable that already exists (a branch or a loop
        body must not introduce a name that is unbound when it does not run)."""
        d = self.d
        target = choice(d, env)
        kind = d.integer(0, 2)
        self.ops += 1
        if kind == 0:
            return f"{indent}{target} = {self.expr(env, 1)}"
        if kind == 1:
            return f"{indent}{target} = {target} {choice(d, ['*', '+', '-'])} {self.expr(env, 2)}"
        op = choice(d, ["+=", "*=", "-="])
        value = self.expr(env, 2) if op != "*=" else self.damped(env, 2, "1.2")
        return f"{indent}{target} {op} {value}"

    def condition(self, env: list[str]) -> str:
        d = self.d
        left = self.expr(env, 2)
        right = self.leaf(env) if chance(d, 50) else self.expr(env, 2)
        test = f"{left} {choice(d, ['<', '>', '<=', '>='])} {right}"
        if chance(d, 15):
            test = f"{test} {choice(d, ['and', 'or'])} {choice(d, env)} > {self.const()}"
        if chance(d, 10):
            test = f"not ({test})"
        return test

    def compound(self, env: list[str]) -> list[str]:
        """``if``/``else`` on a comparison, ``for`` over a small ``range``, or
        a counted ``while``; bodies of one or two simple assignments."""
        d = self.d
        form = d.integer(0, 3)
        body = lambda indent: [self.simple(env, indent) for _ in range(d.integer(1, 2))]
        if form <= 1:
            lines = [f"if {self.condition(env)}:"] + body("    ")
            if chance(d, 60):
                if chance(d, 30):
                    lines += [f"elif {self.condition(env)}:"] + body("    ")
                lines += ["else:"] + body("    ")
            return lines
        if form == 2:
            trips = choice(d, ["range(3)", "range(2)", "range(1, 4)", "range(4, 0, -2)", "range(0)"])
            lines = [f"for i in {trips}:"]
            # The loop index is an int: read it now and then (no adjoint flows to it).
            inner = body("    ")
            if chance(d, 40):
                target = choice(d, env)
                inner.append(f"    {target} = {target} + 0.25 * i")
            if chance(d, 15):
                inner = [f"    if {self.condition(env)}:", "        " + self.simple(env, "").strip(),
                         "        break"] + inner
            return lines + inner
        counter = "k"
        while counter in env:
            counter += "k"
        return ([f"{counter} = 0", f"while {counter} < {choice(d, ['2', '3'])}:"] + body("    ")
                + [f"    {counter} = {counter} + 1"])

    def body(self, params: list[str]) -> tuple[list[str], str]:
        d = self.d
        env = list(params)
        lines: list[str] = []
        if chance(d, 10):
            lines.append('"""A generated function."""')
        for _ in range(d.integer(0, self.max_stmts)):
            kind = d.integer(0, 9 if self.control else 8)
            if kind >= self.COMPOUND_FROM and self.control and env:
                lines += self.compound(env)
            elif kind <= 3 or not env:  # new or overwritten variable
                target = choice(d, env) if env and chance(d, 30) else self.fresh_name(set(env))
                value = self.expr(env, 0)
                annotated = chance(d, 8)
                lines.append(f"{target}: float = {value}" if annotated else f"{target} = {value}")
                if target not in env:
                    env.append(target)
            elif kind <= 5:  # x = x op e: reassignment reading the old value
                target = choice(d, env)
                op = choice(d, ["*", "+", "-"])
                lines.append(f"{target} = {target} {op} {self.expr(env, 1)}")
                self.ops += 1
            elif kind <= 7:  # augmented assignment
                target = choice(d, env)
                op = choice(d, ["+=", "*=", "-=", "/=", "**="])
                if op == "/=":
                    value = self.positive(env, 1)
                elif op == "**=":
                    value = choice(d, ["2", "3", "1"])
                else:
                    value = self.expr(env, 1)
                lines.append(f"{target} {op} {value}")
                self.ops += 1
            elif kind == 8:  # tuple assignment, possibly a swap
                if len(env) >= 2 and chance(d, 50):
                    a, b = choice(d, env), choice(d, env)
                    if a != b:
                        lines.append(f"{a}, {b} = {b}, {a}")
                        continue
                t1 = self.fresh_name(set(env))
                t2 = self.fresh_name(set(env) | {t1})
                lines.append(f"{t1}, {t2} = {self.expr(env, 1)}, {self.expr(env, 1)}")
                env += [n for n in (t1, t2) if n not in env]
            else:
                lines.append("pass")
        form = d.integer(0, 9)
        if form == 0:
            result = choice(d, env)
        elif form == 1 and chance(d, 30):
            result = self.const()
        else:
            result = self.expr(env, 0)
            # Read the last assigned variables so most statements matter.
            for name in env[-2:]:
                if chance(d, 60):
                    op = choice(d, ["+", "*", "-"])
                    result = f"({result} {op} {name})"
        return lines, result


def program(d, *, max_params: int = 3, max_stmts: int = 5, max_depth: int = 3,
            control: bool = True, generator=_Gen) -> Program:
    """Draw a program (see the module docstring); ``control`` adds ``if``,
    ``for`` and ``while`` statements; ``generator``: a subclass of ``_Gen``
    drawing other expressions or statements (tests.programs_conditions)."""
    g = generator(d, max_stmts, max_depth, control)
    nparams = d.integer(1, max_params)
    params: list[str] = []
    for _ in range(nparams):
        params.append(g.fresh_name(set(params)))
    name = choice(d, FUNCTION_NAMES)
    if name in params:
        name = "f"
    lines, result = g.body(params)

    # Signature: trailing defaults and keyword-only parameters now and then.
    parts = []
    kwonly_from = nparams - 1 if nparams > 1 and chance(d, 15) else nparams
    ndefaults = d.integer(0, 1) if chance(d, 20) else 0
    for i, p in enumerate(params):
        if i == kwonly_from:
            parts.append("*")
        if i >= nparams - ndefaults or i >= kwonly_from and chance(d, 50):
            parts.append(f"{p}={choice(d, ['0.5', '1.0', '-0.25'])}")
        else:
            parts.append(p)
    header = {0: ["import math"], 1: ["import math as m"], 2: []}[g.style]
    if g.style == 2:
        names = sorted(g.used_bare | {"sin"})
        header = [f"from math import {', '.join(names)}"]
    header += [f"{k} = {v}" for k, v in sorted(g.constants.items())]
    text = "\n".join(header) + "\n\n\n" + f"def {name}({', '.join(parts)}):\n"
    text += "".join(f"    {line}\n" for line in lines) + f"    return {result}\n"

    point = {p: round(d.real(-2.0, 2.0), 6) for p in params}
    form = d.integer(0, 3)
    if form == 0:
        wrt, wrt_names = None, list(params)
    elif form == 1:
        i = d.integer(0, nparams - 1)
        wrt, wrt_names = i, [params[i]]
    elif form == 2:
        p = choice(d, params)
        wrt, wrt_names = p, [p]
    else:
        chosen = [p for p in params if chance(d, 60)] or [params[0]]
        wrt, wrt_names = tuple(chosen), chosen
    return Program(text, name, params, point, wrt, wrt_names, g.ops)
