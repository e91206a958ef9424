"""Gradient checks for test suites: :func:`assert_gradient` fails a test with
a readable diff when s2s-ad's gradient of a function is wrong.

Contract: :func:`assert_gradient` runs :func:`s2s_ad.check` and raises
:class:`AssertionError` unless every partial derivative is proved (or agrees
numerically, unless ``proof=True``). The message names each derivative that
differs, its reference (``sympy.diff``'s expression, or central differences
for NumPy code), the generated expression and a point where they disagree,
then the whole verdict.

``check`` takes a user derivative rule (``defvjp``) as given: the rule
becomes an undefined sympy function, so a wrong backward would still be
"proved". When the verdict rests on rules, the gradient is therefore also
compared with central differences of the function itself (float64, which
runs the rule's primal, never its backward) at the sample point; a wrong
backward fails there, and the message says which rule disagrees with finite
differences of its function.

>>> import math
>>> def f(x, y):
...     return math.sin(x) * y
>>> assert_gradient(f, at={"x": 0.5, "y": 2.0}).status   # doctest: +SKIP
'proved'

The pytest plugin (:mod:`s2s_ad.pytest_plugin`) runs the same check for a
test marked ``@pytest.mark.s2s_check(f, wrt="x", at={"x": 0.5})``.
"""

from __future__ import annotations

import math

from s2s_ad import api, verify, verify_trees
from s2s_ad.rules import user as user_rules
from s2s_ad.verdict import ParamResult, Verdict

RTOL = 1e-5
"""Relative tolerance (to max(1, |gradient|)) of the finite-difference
comparison that covers user rules."""


def assert_gradient(fn, *, wrt=None, at: dict | None = None, shapes: dict | None = None,
                    args: dict | None = None, output: int | None = None,
                    lengths: dict | None = None, points: int = 8, seed: int = 0,
                    timeout: float | None = verify.TIMEOUT, explore: int = verify.EXPLORE,
                    proof: bool = False, like: dict | None = None) -> Verdict:
    """Fail (``AssertionError``) unless s2s-ad's gradient of ``fn`` is right.

    Parameters
    ----------
    fn : function
        The function whose generated gradient is checked.
    wrt, at, shapes, args, output, lengths, points, seed, timeout, explore, like
        As for :func:`s2s_ad.check`: the parameters to check (default all),
        the sample point deciding comparisons (``{"x": 0.5}``), the shapes of
        a NumPy function's arrays (``{"W": (3, 4)}``), parameters that stay
        numbers (``{"n": 5}``), the returned item, list lengths, the numeric
        fallback's points and seed, the time budget, the random points whose
        paths are proved too, examples of structure parameters.
    proof : bool
        Require a symbolic proof: a gradient that only agrees numerically
        (sympy could not decide, NumPy code, a numeric fallback) fails too.

    Returns
    -------
    Verdict
        The verdict of :func:`s2s_ad.check`, when the gradient is right.

    Raises
    ------
    AssertionError
        A derivative differs from its reference (the message shows both and a
        point where they disagree), is undecided, or (``proof=True``) is not
        proved.
    """
    __tracebackhide__ = True  # pytest: show the failing test, not this frame
    verdict = verify.check(fn, wrt, args=args, at=at, points=points, seed=seed, output=output,
                           lengths=lengths, shapes=shapes, timeout=timeout, explore=explore,
                           like=like)
    accepted = ("proved",) if proof else ("proved", "agrees")
    problems = [_describe(verdict.function, r) for r in verdict.results
                if r.status not in accepted]
    if not problems and verdict.rules:
        problems, point = _against_differences(fn, wrt, args or {}, at or {}, output,
                                               verify_trees.likes(like, lengths),
                                               verdict.function)
        if not problems:
            verdict.notes.append(f"assert_gradient: the gradient agrees with central differences of "
                                 f"{verdict.function} at {point}, which run the rules' "
                                 "functions (not their backward)")
    if problems:
        raise AssertionError(f"the gradient s2s-ad generates for {verdict.function} is wrong:\n"
                             + "\n".join(problems)
                             + "\n\ns2s_ad.check's verdict:\n" + _indent(str(verdict)))
    return verdict


def _describe(function: str, r: ParamResult) -> str:
    name = f"d{function}/d{r.name}"
    if r.status == "mismatch":
        reference = ("sympy.diff " if r.expected != "central differences"
                     else "reference  ")
        lines = [f"{name} differs from its reference",
                 f"    {reference}: {r.expected}",
                 f"    generated  : {r.got}",
                 f"    where      : {r.detail}"]
    elif r.status == "undecided":
        lines = [f"{name} is undecided: {r.detail}; pass at={{...}} inside the function's domain"]
    else:  # proof=True and only numeric agreement
        lines = [f"{name} is not proved (proof=True): it agrees numerically {r.detail}"]
    return "\n".join(lines)


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


def _against_differences(fn, wrt, args: dict, at: dict, output, lengths,
                         function: str) -> tuple[list[str], str]:
    """The generated gradient against central differences of ``fn`` at the
    sample point ``check`` used (the check that sees inside user rules): what
    differs, and the point."""
    _, _, graph = api.program(fn, wrt, tuple_result=True, output=output,
                                      lengths=lengths, runtime_lists=False)
    func = graph.main
    values, _ = api.resolve_wrt(func, wrt)
    trees = verify_trees.specs(lengths)
    at = verify_trees.expand_at(at, trees) or {}
    call, index = {}, 0
    for p in func.params:
        name = p.value.var
        if name in args:
            call[name] = args[name]
        elif name in trees:  # a structure: its leaves by name, as check samples them
            leaves = verify_trees.leaf_names(trees[name], name)
            call[name] = verify_trees.build(trees[name], [
                float(at.get(leaf, 0.5 + 0.2 * (index + k))) for k, leaf in enumerate(leaves)])
            index += len(leaves)
        elif p.items is not None:
            call[name] = [float(at.get(f"{name}[{k}]", 0.5 + 0.2 * (index + k)))
                          for k in range(len(p.items))]
            if p.value.kind != "list":
                call[name] = tuple(call[name])
            index += len(p.items)
        else:
            call[name] = float(at.get(name, 0.5 + 0.2 * index))
            index += 1

    def value(c: dict) -> float:
        out = fn(**c)
        return float(out if output is None else list(out)[output])

    point = ", ".join(f"{n}={c!r}" for n, c in call.items())
    gradient = api.grad(fn, wrt=tuple(v.var for v in values), output=output,
                        lengths=lengths)(**call)
    problems = []
    for v, g in zip(values, gradient):
        if v.var in trees:
            spec = trees[v.var]
            items = list(enumerate(verify_trees.leaves_of(spec, g)))
        else:
            items = (list(enumerate(g)) if isinstance(g, (list, tuple)) else [(None, g)])
        for k, got in items:
            if v.var in trees:
                reference = _central_leaf(value, call, v.var, trees[v.var], k)
                label = verify_trees.leaf_names(trees[v.var], v.var)[k]
            else:
                reference = _central(value, call, v.var, k)
                label = v.var if k is None else f"{v.var}[{k}]"
            if not math.isclose(got, reference, rel_tol=RTOL, abs_tol=RTOL):
                problems.append(
                    f"d{function}/d{label} differs from central differences of {function}\n"
                    f"    reference  : {reference!r} (central differences in float64; they run "
                    f"the rules' functions, not their backward)\n"
                    f"    generated  : {got!r}\n"
                    f"    where      : at {point}")
    if problems:
        for rule in graph.rules:
            try:
                user_rules.check_rule(rule)
            except user_rules.RuleError as exc:
                problems.append(f"the user rule is wrong: {exc}")
            except (ArithmeticError, ValueError) as exc:  # outside its domain
                problems.append(f"the rule of {rule.describe()} could not be checked at its "
                                f"default points ({exc})")
        problems.append("s2s_ad.check takes user rules as given, so it cannot see this; "
                        "the gradient rests on: " + "; ".join(r.describe() for r in graph.rules))
    return problems, point


def _central(value, call: dict, name: str, k: int | None) -> float:
    x = call[name] if k is None else call[name][k]
    h = 1e-6 * max(1.0, abs(x))

    def at(shift: float) -> float:
        c = dict(call)
        if k is None:
            c[name] = x + shift
        else:
            items = list(c[name])
            items[k] = x + shift
            c[name] = type(call[name])(items)
        return value(c)

    return (at(h) - at(-h)) / (2 * h)


def _central_leaf(value, call: dict, name: str, spec, k: int) -> float:
    """Central difference in leaf ``k`` of the structure parameter ``name``."""
    leaves = verify_trees.leaves_of(spec, call[name])
    x = leaves[k]
    h = 1e-6 * max(1.0, abs(x))

    def at(shift: float) -> float:
        moved = list(leaves)
        moved[k] = x + shift
        return value({**call, name: verify_trees.build(spec, moved)})

    return (at(h) - at(-h)) / (2 * h)
