"""User-defined derivative rules: functions s2s-ad treats as primitives.

Contract: a function with a registered rule is never lowered; every call to
it in a differentiated function becomes a ``call`` op, and the generated code
imports and calls the user's own pair, shaped like JAX's ``custom_vjp``:

* ``fwd(*args) -> (value, residuals)``: the value, and whatever ``bwd`` needs;
* ``bwd(residuals, g) -> tuple``: one cotangent per positional argument of
  the function, for the output cotangent ``g``.

The pair is attached to the function as the attribute ``__s2s_ad_vjp__``, so
a module can register a rule without importing s2s-ad (assign a
``(fwd, bwd)`` tuple) and generated code never imports s2s-ad.

>>> import math
>>> def softplus(x):
...     return math.log1p(math.exp(x))
>>> def softplus_fwd(x):
...     return softplus(x), x
>>> def softplus_bwd(x, g):
...     return (g / (1.0 + math.exp(-x)),)
>>> defvjp(softplus, softplus_fwd, softplus_bwd, check=True) is softplus
True
"""

from __future__ import annotations

import inspect
import math
import numbers
import sys
from dataclasses import dataclass, field
from typing import Callable, Sequence

from s2s_ad.errors import S2SError

ATTRIBUTE = "__s2s_ad_vjp__"


class RuleError(S2SError, ValueError):
    """A user rule is malformed, cannot be imported by generated code, or
    disagrees with finite differences."""


@dataclass(eq=False)
class UserRule:
    fn: Callable
    fwd: Callable
    bwd: Callable
    checked_at: list[tuple] = field(default_factory=list)
    """The points where ``bwd`` was checked against finite differences."""

    @property
    def where(self) -> str:
        code = getattr(self.fn, "__code__", None)
        if code is None:
            return _dotted(self.fn)
        return f"{code.co_filename}:{code.co_firstlineno}"

    def describe(self) -> str:
        checked = (f"checked against finite differences at {len(self.checked_at)} point(s)"
                   if self.checked_at else "not checked (register it with check=True)")
        return (f"{_dotted(self.fn)} uses the user rule {_dotted(self.fwd)}/{_dotted(self.bwd)}, "
                f"{checked}")


def _dotted(f) -> str:
    return f"{getattr(f, '__module__', '?')}.{getattr(f, '__qualname__', getattr(f, '__name__', '?'))}"


def importable(f: Callable) -> tuple[str, str]:
    """``(module, name)`` such that ``from module import name`` gives ``f``;
    :class:`RuleError` otherwise (generated code must be able to import it)."""
    module = getattr(f, "__module__", None)
    qualname = getattr(f, "__qualname__", "")
    if module is None or "." in qualname or "<" in qualname:
        raise RuleError(f"{_dotted(f)}: the functions of a derivative rule must be defined at the "
                        "top level of a module, so that generated code can import them")
    owner = sys.modules.get(module)
    if owner is not None and getattr(owner, qualname, None) is not f:
        raise RuleError(f"{_dotted(f)}: module {module} has no top-level {qualname!r} that is "
                        "this function; generated code could not import it")
    return module, qualname


def lookup(fn) -> UserRule | None:
    """The rule registered for ``fn``, if any."""
    rule = getattr(fn, ATTRIBUTE, None)
    if rule is None or isinstance(rule, UserRule):
        return rule
    if isinstance(rule, tuple) and len(rule) == 2 and all(callable(r) for r in rule):
        return UserRule(fn, rule[0], rule[1])
    raise RuleError(f"{_dotted(fn)}.{ATTRIBUTE} must be a (fwd, bwd) pair of functions")


def defvjp(fn: Callable, fwd: Callable, bwd: Callable, *, check: bool = False,
           at: Sequence[Sequence[float]] | None = None) -> Callable:
    """Register ``fwd``/``bwd`` as the derivative rule of ``fn``.

    Parameters
    ----------
    fn : function
        The function s2s-ad should treat as a primitive (it may call C code,
        scipy, anything: s2s-ad never reads its source).
    fwd : function
        ``fwd(*args) -> (value, residuals)``: the value of ``fn(*args)`` and
        what ``bwd`` needs to compute cotangents.
    bwd : function
        ``bwd(residuals, g) -> tuple``: the cotangent of each positional
        argument (a tuple, one entry per argument, even for one argument),
        given the output cotangent ``g``.
    check : bool, optional
        Check now that ``fwd`` returns ``fn``'s value and that ``bwd`` agrees
        with central finite differences of ``fn``; raise :class:`RuleError`
        if not. Default False.
    at : sequence of argument tuples, optional
        The points to check at; default two points, ``(0.5, 0.7, ...)`` and
        ``(1.3, 1.1, ...)``.

    Returns
    -------
    function
        ``fn`` itself, unchanged except for the ``__s2s_ad_vjp__`` attribute.

    Raises
    ------
    RuleError
        ``fwd`` or ``bwd`` is not importable from a module's top level, or
        the check failed.
    """
    for f in (fwd, bwd):
        if not callable(f):
            raise RuleError(f"{f!r} is not a function")
        importable(f)
    rule = UserRule(fn, fwd, bwd)
    if check:
        rule.checked_at = check_rule(rule, at)
    setattr(fn, ATTRIBUTE, rule)
    return fn


def custom_vjp(fn: Callable) -> Callable:
    """Decorator: mark ``fn`` as a primitive whose rule is given next.

    Shaped like ``jax.custom_vjp``, but ``fn`` itself is returned (calling it
    costs nothing extra), with a ``defvjp(fwd, bwd, check=False, at=None)``
    attribute that calls :func:`defvjp`.

    Examples
    --------
    >>> import math
    >>> @custom_vjp
    ... def cube(x):
    ...     return x ** 3
    >>> def cube_fwd(x):
    ...     return x ** 3, x
    >>> def cube_bwd(x, g):
    ...     return (3 * x * x * g,)
    >>> _ = cube.defvjp(cube_fwd, cube_bwd, check=True)   # doctest: +SKIP
    """
    def register(fwd, bwd, *, check=False, at=None):
        return defvjp(fn, fwd, bwd, check=check, at=at)

    register.__doc__ = defvjp.__doc__
    fn.defvjp = register
    return fn


def _arity(fn) -> int:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        raise RuleError(f"cannot read the signature of {_dotted(fn)}; pass at=[...]") from None
    return sum(1 for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
               and p.default is p.empty)


def check_rule(rule: UserRule, at=None, rtol: float = 1e-5, atol: float = 1e-7) -> list[tuple]:
    """Compare ``rule.bwd`` with central differences of ``rule.fn`` at the
    points ``at``; return the points, or raise :class:`RuleError`."""
    if at is None:
        n = _arity(rule.fn)
        at = [tuple(0.5 + 0.2 * i for i in range(n)), tuple(1.3 - 0.2 * i for i in range(n))]
    points = [tuple(p) for p in at]
    for x in points:
        value = rule.fn(*x)
        got = rule.fwd(*x)
        if not (isinstance(got, tuple) and len(got) == 2):
            raise RuleError(f"{_dotted(rule.fwd)} must return (value, residuals)")
        if not _close(got[0], value, rtol, atol):
            raise RuleError(f"{_dotted(rule.fwd)}{x} returns the value {got[0]!r}, but "
                            f"{_dotted(rule.fn)}{x} = {value!r}")
        cot = rule.bwd(got[1], 1.0)
        if not isinstance(cot, tuple) or len(cot) != len(x):
            raise RuleError(f"{_dotted(rule.bwd)} must return a tuple of {len(x)} cotangent(s) "
                            f"(one per argument), got {cot!r}")
        for i, xi in enumerate(x):
            if not isinstance(xi, numbers.Real):
                continue
            h = 1e-6 * max(1.0, abs(xi))
            up, down = list(x), list(x)
            up[i] += h
            down[i] -= h
            fd = (rule.fn(*up) - rule.fn(*down)) / (2 * h)
            if not _close(cot[i], fd, rtol, atol):
                raise RuleError(f"the rule of {_dotted(rule.fn)} disagrees with finite differences "
                                f"at {x}: argument {i}: bwd gives {cot[i]!r}, central difference "
                                f"{fd!r}")
    return points


def _close(a, b, rtol, atol) -> bool:
    try:
        return math.isclose(float(a), float(b), rel_tol=rtol, abs_tol=atol)
    except (TypeError, ValueError):
        return False
