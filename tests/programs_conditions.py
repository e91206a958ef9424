"""Random scalar programs whose conditions short-circuit through conditional expressions.

Contract: :func:`condition_program` draws a :class:`tests.programs.Program`,
from the same drawers as :func:`tests.programs.program`, whose control flow
leans on what the lowering of ``and``/``or`` and of conditional expressions
must get right (issue 17: a conditional expression inside an operand of
``or`` was taken as a constant, nested ones crashed with ``KeyError
'<ifexp>'``/``'<bool>'``):

* ``if``/``elif``/``while`` conditions combining comparisons with ``and``,
  ``or`` and ``not``, nested, whose sides are conditional expressions
  (``(x > 1.0) or ((x if x < 0.0 else 1.5) < 0.2)``), whose own conditions
  use ``and``/``or`` (``(x if (x < 0.2) or (x < 0.1) else 2.0) > 0.2``);
* ``while`` loops bounded by a counter on one side of the ``and``/``or``
  (``while k < 3 and (...)``, ``while k < 1 or (k < 3 and (...))``), so they
  end whatever the other side says;
* conditional expressions nested in either arm
  (``a if c1 else (b if c2 else d)``), anywhere an expression goes, and
  clamps reassigning their own variable
  (``t = 0.0 if t < 0.0 else (1.0 if t > 1.0 else t)``).

Everything else (the expression primitives, names, signatures, points, wrt)
is :mod:`tests.programs`'s, so the runner (``python -m tests.fuzz
--conditions``) checks these as it checks the others.

>>> from tests.programs import RandomDraw
>>> any(" if " in condition_program(RandomDraw(s)).source.split("def ")[1] for s in range(5))
True
"""

from __future__ import annotations

from tests.programs import _Gen, chance, choice, program

COMPARISONS = ["<", ">", "<=", ">="]


class ConditionGen(_Gen):
    COMPOUND_FROM = 6  # four statements in ten are compound (the base: one)

    def expr(self, env: list[str], depth: int = 0) -> str:
        if depth < self.max_depth and chance(self.d, 12):
            return self.ifexp(env, depth)
        return super().expr(env, depth)

    def ifexp(self, env: list[str], depth: int) -> str:
        """``a if c else b``, either arm (or both) nested now and then."""
        self.ops += 1
        test = self.boolean(env, depth + 1, 1)
        return f"({self.arm(env, depth)} if {test} else {self.arm(env, depth)})"

    def arm(self, env: list[str], depth: int) -> str:
        if depth < self.max_depth and chance(self.d, 35):
            return self.ifexp(env, depth + 1)
        return super().expr(env, depth + 1)

    def comparison(self, env: list[str], depth: int) -> str:
        d = self.d
        nested = depth < self.max_depth and chance(d, 30)
        left = self.ifexp(env, depth) if nested else super().expr(env, depth + 1)
        right = self.leaf(env) if chance(d, 60) else self.expr(env, depth + 1)
        return f"{left} {choice(d, COMPARISONS)} {right}"

    def boolean(self, env: list[str], depth: int, nesting: int = 2) -> str:
        """Comparisons joined by ``and``/``or``, each side possibly a nested
        ``and``/``or`` or ``not``, up to ``nesting`` levels."""
        d = self.d
        if nesting == 0 or chance(d, 30):
            return self.comparison(env, depth)
        op = choice(d, ["and", "or"])
        sides = [self.boolean(env, depth, nesting - 1)
                 for _ in range(2 if nesting > 1 else d.integer(2, 3))]
        test = f" {op} ".join(f"({s})" for s in sides)
        return f"not ({test})" if chance(d, 15) else test

    def condition(self, env: list[str]) -> str:
        return self.boolean(env, 1)

    def clamp(self, env: list[str], indent: str) -> str:
        """``t = lo if t < lo else (hi if t > hi else t)`` or a nested
        conditional expression reassigning ``t`` from itself."""
        d = self.d
        t = choice(d, env)
        self.ops += 2
        form = d.integer(0, 2)
        if form == 0:
            lo, hi = choice(d, [("0.0", "1.0"), ("(-1.0)", "0.5"), ("(-2.0)", "2.0")])
            return f"{indent}{t} = {lo} if {t} < {lo} else ({hi} if {t} > {hi} else {t})"
        if form == 1:
            lo = choice(d, ["0.0", "(-0.5)", "1.0"])
            return (f"{indent}{t} = ({t} * {self.const()} if {t} > {lo} else {t}) if "
                    f"{self.boolean(env, 2, 1)} else {self.arm(env, 1)}")
        return (f"{indent}{t} = {self.arm(env, 1)} if {self.boolean(env, 2, 1)} else "
                f"({self.arm(env, 1)} if {self.comparison(env, 2)} else {t})")

    def simple(self, env: list[str], indent: str) -> str:
        if chance(self.d, 30):
            return self.clamp(env, indent)
        return super().simple(env, indent)

    def compound(self, env: list[str]) -> list[str]:
        d = self.d
        form = d.integer(0, 4)
        if form == 0:
            return [self.clamp(env, "")]
        if form == 1:  # a while loop the counter ends, whatever the other side says
            counter = "k"
            while counter in env:
                counter += "k"
            test = self.boolean(env, 2, 1)
            header = choice(d, [f"{counter} < 3 and ({test})", f"({test}) and {counter} < 3",
                                f"{counter} < 1 or ({counter} < 3 and ({test}))"])
            body = [self.simple(env, "    ") for _ in range(d.integer(1, 2))]
            return [f"{counter} = 0", f"while {header}:"] + body + [f"    {counter} = {counter} + 1"]
        return super().compound(env)


def condition_program(d, *, max_params: int = 3, max_stmts: int = 5, max_depth: int = 3):
    """A :class:`tests.programs.Program` drawn by :class:`ConditionGen`."""
    return program(d, max_params=max_params, max_stmts=max_stmts, max_depth=max_depth,
                   generator=ConditionGen)
