"""Deciding whether two sympy expressions are equal: exact first, then
``simplify``, then numbers.

Contract: :func:`compare` returns a :class:`ParamResult` whose status is

* ``proved`` when one of these says the difference is zero, tried in order,
  each within its share of the time budget:

  1. :func:`normal_form` of both sides is the same (exact: every float read
     as the decimal it prints as, 15 significant digits, then products and
     sums multiplied out over the rationals, memoized over shared
     subexpressions; each ``sin(...)``, ``tanh(...)``, ``u**(1/2)``, ... is
     an independent indeterminate keyed by the normal form of its argument);
  2. ``sympy.expand`` of the rationalized difference is 0;
  3. ``sympy.simplify`` of the difference is 0 (skipped above
     :data:`SIMPLIFY_LIMIT` operations);

* ``agrees`` when sympy could not decide and both sides agree to 1e-10
  (relative) at random points evaluated with 50-digit arithmetic (near the
  path's point when the function branches, so that every sample stays on
  its path);
* ``mismatch`` when they differ there, ``undecided`` when no point in the
  domain was found.

Steps 1 and 2 are sound: an identity of polynomials in independent
indeterminates holds for every value of them, so a zero there is a proof;
a non-zero only means that these steps cannot tell (``sqrt(u)**2`` is not
``u`` to them) and the next step decides.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction

import sympy

from s2s_ad.verdict import ParamResult
from s2s_ad.verify_sympy import _deadline, _OutOfTime

SIMPLIFY_LIMIT = 400
"""Above this many operations, simplify() is skipped for the numeric check:
sympy's cost grows far faster than the expression (see docs/verification.md)."""

EXACT = True
"""Try the exact normal form and ``expand`` before ``simplify`` (tests turn
it off to exercise the later steps)."""


EXACT_FLOOR = 0.25
"""Seconds the exact normal form gets even when the symbolic budget is spent
(``expand`` half of it)."""


class _Unsupported(Exception):
    """An expression the normal form does not take (nan, infinities)."""


class _NormalForm:
    """Polynomials over the rationals in indeterminates found on the way.

    A polynomial is a dict ``{monomial: Fraction}``; a monomial a sorted
    tuple of ``(indeterminate, exponent)``, exponents possibly negative
    (``x**-1`` times ``x`` is 1: Laurent polynomials are a ring too).
    Indeterminates are numbered as they are met and keyed by what they are
    (a symbol; a function applied to normal forms; a power with a
    non-integer exponent), so the same key on both sides is the same
    indeterminate."""

    def __init__(self):
        self.keys: dict = {}
        self.memo: dict = {}

    def of(self, expr) -> dict:
        expr = sympy.sympify(expr)
        found = self.memo.get(expr)
        if found is None:
            found = self.memo[expr] = self._convert(expr)
        return found

    def _indeterminate(self, key) -> dict:
        index = self.keys.setdefault(key, len(self.keys))
        return {((index, 1),): Fraction(1)}

    def _convert(self, e) -> dict:
        if e.is_Rational:
            return _constant(Fraction(int(e.p), int(e.q)))
        if e.is_Float:
            value = float(e)
            if not math.isfinite(value):
                raise _Unsupported(e)
            return _constant(Fraction(format(value, ".15g")))
        if e.is_Symbol:
            return self._indeterminate(("symbol", e))
        if e.is_Add:
            total: dict = {}
            for a in e.args:
                total = _add(total, self.of(a))
            return total
        if e.is_Mul:
            product = _constant(Fraction(1))
            for a in e.args:
                product = _mul(product, self.of(a))
            return product
        if e.is_Pow:
            base, exponent = e.args
            if exponent.is_Float and math.isfinite(float(exponent)):
                exponent = sympy.Rational(format(float(exponent), ".15g"))
            b = self.of(base)
            if not b and not (exponent.is_Integer and exponent >= 0):
                raise _Unsupported(e)  # 0 to a negative or fractional power: no value
            if exponent.is_Integer:
                return self._power(b, int(exponent))
            if exponent.is_Rational:  # (u**(1/q))**p
                root = self._indeterminate(("root", _frozen(b), int(exponent.q)))
                return self._power(root, int(exponent.p))
            return self._indeterminate(("pow", _frozen(b), _frozen(self.of(exponent))))
        if e in (sympy.nan, sympy.zoo, sympy.oo, -sympy.oo):
            raise _Unsupported(e)
        if isinstance(e, sympy.Function) and e.args and not isinstance(e, sympy.Piecewise):
            return self._indeterminate(("call", e.func,
                                        tuple(_frozen(self.of(a)) for a in e.args)))
        if isinstance(e, sympy.Function):  # an undefined function of no arguments
            return self._indeterminate(("call", e.func, ()))
        if e.has(sympy.nan, sympy.zoo, sympy.oo, -sympy.oo):
            raise _Unsupported(e)
        return self._indeterminate(("expr", e))  # structurally equal or not

    def _power(self, p: dict, n: int) -> dict:
        if n >= 0:
            return _pow(p, n)
        if len(p) == 1:  # a monomial: negative exponents
            ((mono, c),) = p.items()
            return {tuple((g, k * n) for g, k in mono): c ** n}
        inverse = self._indeterminate(("inverse", _frozen(p)))
        return _pow(inverse, -n)


def _constant(c: Fraction) -> dict:
    return {(): c} if c else {}


def _frozen(p: dict) -> frozenset:
    return frozenset(p.items())


def _add(p: dict, q: dict) -> dict:
    out = dict(p)
    for m, c in q.items():
        s = out.get(m, 0) + c
        if s:
            out[m] = s
        else:
            out.pop(m, None)
    return out


def _mono_mul(a: tuple, b: tuple) -> tuple:
    if not a:
        return b
    if not b:
        return a
    exps = dict(a)
    for g, k in b:
        s = exps.get(g, 0) + k
        if s:
            exps[g] = s
        else:
            del exps[g]
    return tuple(sorted(exps.items()))


def _mul(p: dict, q: dict) -> dict:
    if len(p) == 1 and () in p:
        c = p[()]
        return {m: c * v for m, v in q.items()} if c != 1 else q
    out: dict = {}
    for m1, c1 in p.items():
        for m2, c2 in q.items():
            m = _mono_mul(m1, m2)
            s = out.get(m, 0) + c1 * c2
            if s:
                out[m] = s
            else:
                out.pop(m, None)
    return out


def _pow(p: dict, n: int) -> dict:
    result = _constant(Fraction(1))
    base = p
    while n:
        if n & 1:
            result = _mul(result, base)
        n >>= 1
        if n:
            base = _mul(base, base)
    return result


def normal_form_equal(a, b) -> bool:
    """True when the exact normal forms of ``a`` and ``b`` are the same (a
    proof that they are equal); False when this cannot tell."""
    forms = _NormalForm()
    try:
        return forms.of(a) == forms.of(b)
    except (_Unsupported, OverflowError, ValueError, TypeError, ZeroDivisionError):
        return False


def rationalize(expr):
    """Every float of ``expr`` as the rational it prints as (15 digits)."""
    expr = sympy.sympify(expr)
    return expr.xreplace({f: sympy.Rational(format(float(f), ".15g"))
                          for f in expr.atoms(sympy.Float) if math.isfinite(float(f))})


def _within(seconds: float | None, attempt) -> object:
    """``attempt()``, or None when it runs out of ``seconds`` or sympy fails."""
    if seconds is not None and seconds <= 0:
        return None
    try:
        with _deadline(seconds):
            return attempt()
    except _OutOfTime:
        return None
    except RecursionError:
        return None
    except Exception:  # sympy gives up on some forms; the next step decides
        return None


def compare(name, expected, got, symbols, point, branched, rng, n,
            deadline: float | None = None) -> ParamResult:
    """``expected`` (sympy.diff) against ``got`` (the generated code), within
    ``deadline`` for the symbolic steps; the module docstring says how."""
    def left() -> float | None:
        return None if deadline is None else max(0.0, deadline - time.monotonic())

    difference = expected - got
    if difference == 0:
        return ParamResult(name, "proved", expected, got)
    if EXACT:
        # Each exact step gets at least a moment even when the budget is
        # spent (on a loaded machine, the runs before may have used it): it
        # usually takes milliseconds. The caller's deadline still holds.
        share = None if deadline is None else max(EXACT_FLOOR, left() / 2)
        if _within(share, lambda: normal_form_equal(expected, got)):
            return ParamResult(name, "proved", expected, got)
        share = None if deadline is None else max(EXACT_FLOOR / 2, left() / 2)
        if _within(share, lambda: sympy.expand(rationalize(difference)) == 0):
            return ParamResult(name, "proved", expected, got)
    if sympy.count_ops(difference) <= SIMPLIFY_LIMIT:
        if _within(left(), lambda: sympy.simplify(difference) == 0):
            return ParamResult(name, "proved", expected, got)
    return numeric(name, expected, got, symbols, point, branched, rng, n)


def numeric(name, expected, got, symbols, point, branched, rng, n) -> ParamResult:
    """Both sides at ``n`` random points with 50-digit arithmetic."""
    syms = list(symbols.values())
    tried = 0
    checked = 0
    worst = 0.0
    while checked < n and tried < 50 * n:
        tried += 1
        if branched:
            # Stay on the path the point took.
            sub = {s: point[s] * (1 + rng.uniform(-1e-6, 1e-6)) for s in syms}
        else:
            lo, hi = rng.choice([(0.1, 0.9), (1.1, 3.0), (-0.9, -0.1), (-3.0, -1.1)])
            sub = {s: sympy.Float(rng.uniform(lo, hi), 50) for s in syms}
        e = sympy.sympify(expected).evalf(50, subs=sub)
        g = sympy.sympify(got).evalf(50, subs=sub)
        if not (e.is_real and e.is_finite):
            continue
        checked += 1
        if not (g.is_real and g.is_finite):
            return ParamResult(name, "mismatch", expected, got,
                               f"at {fmt(sub)}: generated gives {g}")
        err = abs(e - g) / max(1, abs(e))
        worst = max(worst, float(err))
        if err > 1e-10:
            return ParamResult(name, "mismatch", expected, got,
                               f"at {fmt(sub)}: sympy {float(e):.17g}, generated {float(g):.17g}")
    if checked == 0:
        return ParamResult(name, "undecided", expected, got,
                           "no random point in the function's domain was found")
    return ParamResult(name, "agrees", expected, got,
                       f"at {checked} random points (largest relative difference {worst:.1e})")


def fmt(sub: dict) -> str:
    return ", ".join(f"{k}={float(v):.6g}" for k, v in sub.items())
