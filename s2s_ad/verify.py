"""Verification: prove or refute a generated gradient with sympy.

Contract: :func:`check` runs the *original function* and the *generated
gradient source* on sympy symbols — ``math.sin`` becomes ``sympy.sin`` and so
on (:mod:`s2s_ad.verify_sympy`) — and compares ``sympy.diff(original, x)``
with the generated expression for each parameter
(:mod:`s2s_ad.verify_proof`). The verdict is

* ``proved``: the difference is zero, exactly (polynomial normal form over
  the rationals, ``expand``) or by ``simplify``;
* ``agrees``: sympy could not decide, and the two agree to 1e-10 (relative)
  at N random points evaluated with 50-digit arithmetic — the verdict says so;
* ``mismatch``: they differ; the verdict shows both expressions.

Comparisons (``max``, ``abs`` at a branch, user ``if`` s) are decided at a
point. The check decides them at the sample point and at ``explore`` random
points, and proves the gradient on each distinct path found
(:mod:`s2s_ad.verify_paths`); the verdict lists the paths.

Symbolic execution has a time budget (``timeout``, 20 s by default), shared
by the paths: a program whose expressions swell (a converging ``while``
loop, a long recurrence) is checked against central differences instead,
and the verdict says it is not a proof.
"""

from __future__ import annotations

import ast
import time

from s2s_ad import api, verify_trees
from s2s_ad.frontend import source as source_mod, targets
from s2s_ad.verdict import ParamResult, PathResult, Verdict
from s2s_ad.errors import S2SError
from s2s_ad.verify_paths import EXPLORE, check_symbolic
from s2s_ad.verify_proof import SIMPLIFY_LIMIT
from s2s_ad.verify_sympy import (_Branches, _Comparisons, _deadline, _OutOfTime, _Symbolic,
                                 SYMPY_HELPERS, SYMPY_MATH, sympy_math)
from s2s_ad.syntax_walk import walk

__all__ = ["check", "Verdict", "ParamResult", "PathResult", "TIMEOUT", "EXPLORE",
           "SIMPLIFY_LIMIT", "SYMPY_HELPERS", "SYMPY_MATH", "sympy_math", "_Branches", "_Comparisons",
           "_deadline", "_OutOfTime", "_Symbolic"]

TIMEOUT = 20.0
"""Seconds of symbolic work before :func:`check` falls back to numbers."""


def _uses_numpy(fn, lengths) -> bool:
    if lengths:
        return False
    try:
        return "numpy" in api.lower(fn).modules
    except Exception:  # the symbolic path reports the problem with its context
        return False


def check(fn, wrt=None, *, args: dict | None = None, at: dict | None = None,
          points: int = 8, seed: int = 0, output: int | None = None,
          lengths: dict | None = None, shapes: dict | None = None,
          timeout: float | None = TIMEOUT, mode: str = "reverse",
          explore: int = EXPLORE, order: int = 1, like: dict | None = None) -> Verdict:
    """Check the gradient s2s-ad generates for ``fn`` against ``sympy.diff``.

    Parameters
    ----------
    fn : function
        The function to check.
    wrt : int, str, sequence of them, or None
        The parameters whose partial derivatives are checked (default: all).
    args : dict, optional
        Concrete values for parameters that must stay numbers (trip counts).
    at : dict, optional
        The sample point that decides comparisons (default: 0.5, 0.7, ... per
        parameter); the first path checked is the one this point takes.
    points : int
        How many random points the numeric fallback evaluates.
    output : int, optional
        For a function returning a tuple or list: the item to check.
    lengths : dict, optional
        Lengths of list or tuple parameters (``{"xs": 3}``); each item is a
        symbol ``xs_0``, ``xs_1``, ... and is checked on its own.
    shapes : dict, optional
        For a function that uses NumPy: the shape of each array parameter
        (``{"W": (3, 4), "x": (4,)}``). sympy cannot run NumPy code, so such a
        function gets a numeric check against central differences instead
        (:mod:`s2s_ad.verify_arrays`), and the verdict says so.
    timeout : float or None
        Seconds the whole check may take, wall clock (default 20; None or 0:
        no limit). Symbolic work gets half; past it, a function of floats is
        checked against central differences in what is left, and the verdict
        says it is not a proof. Running out raises :class:`S2SError`.
    mode : "reverse" or "forward"
        Which generated code to check: the gradient (``grad``), or the
        forward-mode module (``jvp``), run once per parameter with a unit
        tangent there (and per item of a list parameter). Forward mode is
        checked symbolically only: for functions of numbers, within the
        symbolic budget.

    explore : int
        How many seeded random points (``seed``) also decide the comparisons
        of a function that makes any (default 16; 0: the sample point only).
        Each distinct path found is proved on its own, within an equal share
        of what is left of the symbolic budget, and the verdict lists the
        paths (``verdict.paths``).

    like : dict, optional
        For a parameter receiving a dict, list, tuple, NamedTuple or
        dataclass of numbers: an example value (``{"params": EXAMPLE}``),
        whose structure the gradient is generated for, as ``grad`` does
        with the value it is called with. Each number leaf is a symbol
        named by its path (``params['w']``, ``p.b``) and is checked on its
        own (:mod:`s2s_ad.verify_trees`); ``at={"params": VALUE}`` gives
        the sample point of its leaves. First derivatives (``order=1``) in
        reverse mode only.

    order : 1 or 2
        2 checks second derivatives instead: every entry of the Hessian that
        :func:`s2s_ad.hvp` computes (forward over reverse) against
        ``sympy.diff`` twice, for functions of numbers whose gradient module
        ``hvp`` takes (:mod:`s2s_ad.verify_order2`).

    Returns
    -------
    Verdict
        ``.status`` is "proved", "agrees" or "mismatch"; ``str()`` is a report.
    """
    if isinstance(points, bool) or not isinstance(points, int) or points < 1:
        raise S2SError(f"points must be a positive whole number, got {points!r} "
                       "(--points N / points=N, e.g. 8)")
    if timeout is not None and not timeout >= 0:
        raise S2SError(f"timeout must be 0 or more seconds, got {timeout!r} "
                       "(--timeout S / timeout=S; 0 or None for no limit)")
    if isinstance(explore, bool) or not isinstance(explore, int) or explore < 0:
        raise S2SError(f"explore must be 0 or a positive whole number, got {explore!r} "
                       "(--explore N / explore=N, e.g. 16; 0: the sample point only)")
    if order not in (1, 2) or isinstance(order, bool):
        raise S2SError(f"order must be 1 (the gradient) or 2 (second derivatives), got "
                       f"{order!r} (--order N / order=N)")
    lengths = verify_trees.likes(like, lengths)
    trees = verify_trees.specs(lengths)
    if trees and (order != 1 or mode != "reverse" or shapes is not None):
        raise S2SError("a structure parameter (like=/--like) is checked in first order and "
                       "reverse mode, on numbers: it takes no order=2/--order 2, "
                       "mode='forward'/--mode forward or shapes=/--shape")
    if order == 2 and (mode != "reverse" or shapes is not None or lengths):
        raise S2SError("order=2 (--order 2) checks the Hessian of a function of numbers "
                       "(s2s_ad.hvp); it takes no mode=/--mode, shapes=/--shape or "
                       "lengths=/--length")
    timeout = timeout or None
    if mode not in ("reverse", "forward"):
        raise S2SError(f"mode must be 'reverse' or 'forward', got {mode!r}")
    # A leaf of a structure parameter may be given by its name ("p.w").
    leaves = {leaf for n, spec in trees.items() for leaf in verify_trees.leaf_names(spec, n)}
    _known_parameters(fn, args=args, at={n: v for n, v in (at or {}).items() if n not in leaves},
                      shapes=shapes)
    if targets.captured_values(fn) or targets.methods.is_bound(fn):
        raise S2SError(f"check does not run {fn.__name__}: it reads data from a closure or "
                       "is a bound method (self), or reads module-level arrays, "
                       "which sympy cannot stand in for; check a "
                       "function taking them as parameters, or compare with central "
                       "differences")
    ints = _int_parameters(fn, wrt, args, lengths, shapes)
    # Without an int parameter to choose, or with only defaults, one run.
    values = INT_VALUES if any(d is None for _, d in ints.values()) else INT_VALUES[:1]
    try:
        with _deadline(timeout):
            for k, value in enumerate(values):
                chosen = {n: value if d is None else d for n, (_, d) in ints.items()}
                given = {**(args or {}), **chosen}
                try:
                    if order == 2:
                        verdict = _check_second(fn, wrt, given, at, points, seed, timeout)
                    elif mode == "forward":
                        verdict = _check_forward(fn, wrt, given, at, points, seed, output,
                                                 lengths, shapes, timeout, explore)
                    else:
                        verdict = _check_within(fn, wrt, given, at, points, seed, output,
                                                lengths, shapes, timeout, explore)
                except IndexError as exc:
                    if not ints:
                        raise
                    if k + 1 < len(values):
                        continue  # the value indexes past a list (xs[n] with n = 3): less
                    raise S2SError(
                        f"checking {fn.__name__} failed with its int parameters at "
                        f"{', '.join(f'{n}={v}' for n, v in chosen.items())} (not given in "
                        f"args=/--args): IndexError: {exc}; give the values to check with "
                        f"({' '.join(f'--args {n}=K' for n in chosen)}, args={{...}})") from None
                verdict.notes.extend(_chosen_note(n, chosen[n], use, default)
                                     for n, (use, default) in ints.items())
                return verdict
    except _OutOfTime:
        raise S2SError(f"checking {fn.__name__} took more than its {timeout:g} s budget "
                       "(evaluating it and its gradient did not finish); give smaller "
                       "values (--args/args=) or a larger --timeout/timeout=") from None
    except RecursionError:
        src = source_mod.locate(fn)
        loop = next((n for n in walk(src.tree) if isinstance(n, (ast.For, ast.While))),
                    src.tree)
        raise src.error(loop, f"checking {fn.__name__} nests too deeply for Python (a loop of "
                        "many iterations builds one symbolic expression per step); check it "
                        "with fewer iterations (--args/args=) or against finite differences "
                        "(tests/oracle.py)") from None


INT_VALUES = (3, 2, 1, 0)
"""The values :func:`check` tries, in turn, for an int parameter that
``args`` does not give and has no int default (a ``range`` bound: three
iterations); the next is tried when the run indexes past a list."""


def _int_parameters(fn, wrt, args, lengths, shapes) -> dict:
    """Parameter -> (how it is used, its int default or None) for each
    parameter of ``fn`` that its code uses as an integer (a ``range`` bound,
    a list index, a size: ``ir.Function.integers``, helpers included) and
    that ``args`` does not give: sympy cannot stand in for it (``range(n)`` of
    a symbol), so :func:`check` runs with a number there, and says so. A
    parameter named in ``wrt`` is left alone: differentiating it is
    refused, located, by the gradient's own lowering."""
    import inspect
    from s2s_ad.frontend import calls
    try:
        func = api.lower(fn, lengths, tuple(shapes or ()))
        calls.collect(func, targets.locate(fn))  # marks what helpers use as integers too
        params = inspect.signature(fn).parameters
    except Exception:  # noqa: BLE001 - the check itself reports it, with its context
        return {}
    order = list(params)
    named = {order[w] if isinstance(w, int) and 0 <= w < len(order) else w
             for w in ([wrt] if isinstance(wrt, (int, str)) else list(wrt or ()))}
    ints = {}
    for name, err in func.integers.items():
        if name in (args or {}) or name in func.statics or name in named \
                or name not in params or name in (lengths or {}):
            continue
        default = params[name].default
        line = f" on line {err.line}" if getattr(err, "line", 0) > 0 else ""
        ints[name] = (getattr(err, "use", "used as an integer") + line,
                      default if isinstance(default, int) and not isinstance(default, bool)
                      else None)
    return ints


def _chosen_note(name: str, value: int, use: str, default) -> str:
    whence = "its default" if default is not None else "a value s2s-ad chose"
    return (f"{name}={value} is {whence} for the int parameter {name} ({use}), which "
            f"--args/args= does not give: the gradient is checked for {name}={value} only "
            f"(--args {name}=K, args={{{name!r}: K}}, for another value)")


def _known_parameters(fn, **given) -> None:
    """Every name in ``args``, ``at`` and ``shapes`` is a parameter of ``fn``."""
    import inspect
    try:
        params = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return  # not a plain function: locate() refuses it with its own message
    for keyword, names in given.items():
        for name in names or {}:
            if name not in params:
                flag = {"shapes": "--shape"}.get(keyword, f"--{keyword}")
                raise S2SError(f"{keyword}={{{name!r}: ...}} ({flag} {name}=...): {fn.__name__} "
                               f"has no parameter {name!r} (parameters: {', '.join(params)})")


def _check_within(fn, wrt, args, at, points, seed, output, lengths, shapes, timeout, explore):
    """:func:`check` inside its whole budget: symbolic work gets half of it,
    the numeric fallback what is left."""
    if shapes is not None or _uses_numpy(fn, lengths):
        from s2s_ad import verify_arrays
        return verify_arrays.check(fn, wrt, shapes=shapes or {}, args=args,
                                   points=min(points, 3), seed=seed)
    symbolic = None if timeout is None else timeout / 2
    started = time.monotonic()
    try:
        # The symbolic half bounds the runs and the exact steps; the
        # 50-digit comparisons share what is left (up to 0.9 of the budget,
        # the rest for central differences where one of them runs out).
        return check_symbolic(fn, wrt, args, at, points, seed, output, lengths,
                              None if symbolic is None else started + symbolic,
                              explore=explore,
                              end=None if timeout is None else started + 0.9 * timeout)
    except (_OutOfTime, RecursionError) as exc:
        # sympy walks its expressions recursively: a long chain of updates
        # (a = a * x + y, a thousand times) nests deeper than Python's stack.
        why = (f"took more than {symbolic:g} s (its expressions swell)"
               if isinstance(exc, _OutOfTime) else
               "nests its expressions deeper than sympy can recurse")
        if lengths:
            raise S2SError(f"symbolic execution of {fn.__name__} {why}; check it with finite "
                           "differences (tests/oracle.py) or a smaller --length") from None
        from s2s_ad import verify_arrays
        return verify_arrays.check(
            fn, wrt, shapes={}, args=args, points=min(points, 3), seed=seed, positive=True,
            reason=f"symbolic execution {why}, so this is a numeric check (central differences "
                   "of the original function in float64), not a proof")


def _check_second(fn, wrt, args, at, points, seed, timeout):
    """:func:`check` with ``order=2``: symbolic, with the 50-digit fallback."""
    if _uses_numpy(fn, None):
        raise S2SError(f"check --order 2 runs {fn.__name__}'s second derivatives on sympy "
                       "symbols, which NumPy code cannot take; s2s_ad.hessian's tests compare "
                       "with central second differences (docs/forward.md)")
    from s2s_ad import verify_order2
    try:
        return verify_order2.check_second(
            fn, wrt, args, at, points, seed,
            None if timeout is None else time.monotonic() + timeout / 2)
    except (_OutOfTime, RecursionError):
        raise S2SError(f"symbolic execution of {fn.__name__}'s second derivatives did not "
                       "finish in half the time budget; give a larger --timeout/timeout= or "
                       "smaller values (--args)") from None


def _check_forward(fn, wrt, args, at, points, seed, output, lengths, shapes, timeout,
                   explore):
    """:func:`check` of the forward-mode module: symbolic only."""
    if shapes is not None or _uses_numpy(fn, lengths):
        raise S2SError(f"check --mode forward runs {fn.__name__}'s JVP on sympy symbols, which "
                       "NumPy code cannot take; test it against finite differences "
                       "(docs/forward.md)")
    try:
        return check_symbolic(fn, wrt, args, at, points, seed, output, lengths,
                              None if timeout is None else time.monotonic() + timeout / 2,
                              forward=True, explore=explore)
    except RecursionError:
        raise S2SError(f"symbolic execution of {fn.__name__}'s JVP nests its expressions "
                       "deeper than sympy can recurse; give smaller values (--args)") from None
