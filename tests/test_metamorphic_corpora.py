"""Every test corpus, reached eight more ways: the same gradient, or a located refusal.

The functions of the scalar, control-flow, structure, call and iterable
corpora (and their points) are each called from a small wrapper written
around them, and the wrapper is differentiated:

* ``helper``: ``f(p) = g(p)``;
* ``helper_of_helper``: ``f(p) = h(p)``, ``h(p) = g(p)``;
* ``twice``: ``f(p) = g(p) + 0.5 * g(p')``, ``p'`` with every number scaled by 0.97;
* ``loop``: ``g`` called in a two-trip loop, its results weighted and summed;
* ``branch``: ``g`` called on both sides of an ``if`` on an extra parameter;
* ``vjp``: the helper form pulled back through ``s2s_ad.vjp`` with a cotangent of 0.7;
* ``lambda``: ``f = lambda p: g(p)``, the lambda itself the target;
* ``partial``: ``f = functools.partial(f0, scale=1.0)`` of ``f0(p, scale) = g(p) * scale``.

Each form's gradient is compared with central differences of the wrapper run
as plain Python (the independent reference), and with the direct gradient of
``g`` combined as the wrapper combines it (1e-10 relative: the same
arithmetic, reached another way). A form may also be refused, with a located
message; an internal error — anything that is not an :class:`s2s_ad.S2SError`
— fails.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

import calls_src
import cf_programs
import comprehensions_src
import corpus_scalar
import fill_in_loops_src
import forward_lists_src
import inner_lists_src
import list_slices_src
import iterables_src
import lists_across_calls_src
import passing_src
import s2s_ad
import structures_src
from array_oracle import make_function
from soak import soak

CORPUS: list[tuple[str, object, list, list[int]]] = []
for _f, _points in corpus_scalar.CASES.items():
    CORPUS.append((f"scalar.{_f.__name__}", _f, list(_points[0]), list(range(len(_points[0])))))
for _name, (_f, _args, _wrt) in cf_programs.PROGRAMS.items():
    CORPUS.append((f"control.{_name}", _f, list(_args), list(_wrt)))
for _f, _args in [(structures_src.swap_pack, [0.3, -0.7]), (structures_src.comp, [0.4, 1.2]),
                  (structures_src.comp_over_list, [0.5, -0.9]),
                  (structures_src.appended, [0.8, 0.6]),
                  (structures_src.with_dict, [0.7, -0.2, 1.3]),
                  (structures_src.sliced, [0.2, 0.9, -1.1])]:
    CORPUS.append((f"structures.{_f.__name__}", _f, _args, list(range(len(_args)))))
for _f, _args in [(calls_src.twice_sq, [0.7, -1.3]), (calls_src.cube_plus, [0.4, 1.7]),
                  (calls_src.nested, [0.3, 0.8]), (calls_src.same_arg, [0.9]),
                  (calls_src.constant_call, [1.5])]:
    CORPUS.append((f"calls.{_f.__name__}", _f, _args, list(range(len(_args)))))
for _f, _args in [(iterables_src.weighted, [[0.3, -1.2, 2.0], 0.7]),
                  (iterables_src.dot_sin, [[0.3, -1.2, 2.0], [1.0, 0.5]]),
                  (iterables_src.nested, [[0.3, -1.2, 2.0], [0.1, 0.5, -1.0], 1.3])]:
    CORPUS.append((f"iterables.{_f.__name__}", _f, _args, list(range(len(_args)))))
for _name, _args in [("list_to_looping_helper", [0.3, 0.7]),
                     ("list_indexed_in_helper", [0.3, 0.7]),
                     ("dict_to_helper", [0.3, 0.7, 0.4]), ("namedtuple_built", [0.3, 0.7, 0.4]),
                     ("dataclass_built", [0.3, 0.7, 0.4]), ("nested_structure", [0.3, 0.7]),
                     ("structure_through_helpers", [0.3, 0.7, 0.4]),
                     ("structure_in_loop", [0.3, 0.7, 3]), ("structure_in_branch", [0.9, -0.4]),
                     ("static_in_structure", [0.3, 0.7]), ("star_args", [0.3, 0.7]),
                     ("kwargs_helper", [0.3, 0.7]), ("star_forward", [0.3, 0.7]),
                     ("returns_dict", [0.3, 0.7]), ("returns_namedtuple", [0.3, 0.7]),
                     ("returns_nested", [0.3, 0.7]),
                     ("forward_structure_parameter", [0.3, 0.7, 0.4]),
                     ("sorted_weights", [0.35, 0.7, 0.4]), ("sorted_plain", [0.3, 0.7, 0.4]),
                     ("closest_point", [0.33, 0.7, 0.4]),
                     ("grown_to_helper", [0.3, 0.8, 3]), ("grown_in_loop", [0.4, 4]),
                     ("list_param_to_helper", [[0.5, 1.0, -2.0], 0.7]),
                     ("star_kwargs_forwarding", [0.3, 0.7])]:
    CORPUS.append((f"passing.{_name}", getattr(passing_src, _name), _args,
                   [i for i, a in enumerate(_args) if isinstance(a, (float, list))]))

for _name, _args in [("rollout_indexed", [0.3, 0.8, 3]), ("rollout_iterated", [0.3, 0.8, 3]),
                     ("rollout_passed_on", [0.3, 0.8, 3]),
                     ("rollout_called_in_loops", [0.3, 0.8, 2]),
                     ("sorted_grown", [0.45, 0.6, 6]), ("sorted_key_reverse", [0.45, 0.6, 6]),
                     ("min_max_keyed", [0.45, 0.6, 6]),
                     ("sorted_in_loops_and_branches", [0.45, 0.6, 6]),
                     ("sorted_param", [[0.5, -1.0, 2.0, 0.25], 0.7])]:
    CORPUS.append((f"lists_across_calls.{_name}", getattr(lists_across_calls_src, _name), _args,
                   [i for i, a in enumerate(_args) if isinstance(a, (float, list))]))

for _module, _cases in [
        (fill_in_loops_src, [("in_loop", [0.4, 0.7, 3]), ("in_branch", [0.4, 0.7, 3]),
                             ("in_while", [0.4, 0.7, 3]), ("filled_with_active", [0.4, 0.7, 3]),
                             ("grown_after_fill", [0.4, 0.7, 3]),
                             ("passed_in_loop", [0.4, 0.7, 3]), ("in_a_helper", [0.4, 0.7, 3]),
                             ("nested_loops", [0.4, 0.7, 3])]),
        (comprehensions_src, [(_name, [[0.3, -0.5, 0.8], 0.7]) for _name in (
            "poly", "filtered", "zipped", "in_helper", "in_loop", "in_branch",
            "of_a_returned_list", "of_a_grown_list", "nested")]),
        (forward_lists_src, [("param_passed", [[0.4, -0.7, 1.1], 0.6]),
                             ("param_passed_on", [[0.4, -0.7, 1.1], 0.6]),
                             ("grown_passed", [0.3, 0.8, 3]), ("filled_passed", [0.3, 0.8, 3]),
                             ("grown_in_loop_passed", [0.3, 0.8, 3])]),
        (inner_lists_src, [(_name, [0.4, 0.7, 3]) for _name in (
            "in_loop", "in_branch", "in_while", "passed", "branch_in_loop",
            "appended_in_branch", "in_a_helper")]),
        (list_slices_src, [(_name, [0.4, 0.7, 3]) for _name in (
            "grown", "grown_in_loop", "passed_to_helper")] + [
            (_name, [[0.3, -0.5, 0.8, 1.1], 0.7]) for _name in (
                "tail", "differences", "backwards", "every_other")])]:
    for _name, _args in _cases:
        CORPUS.append((f"{_module.__name__}.{_name}", getattr(_module, _name), _args,
                       [i for i, a in enumerate(_args) if isinstance(a, (float, list))]))

REFUSED: set[str] = set()
"""The corpus functions refused, located, in every form (none today: the 66
refusals of lists passed to helpers and the 12 of a loop with `return` over
a list known while lowering are gone). Every other refusal fails the test,
and so does one of these that stops being refused (then take it out)."""

SCALE = 0.97


def _params(n: int) -> list[str]:
    return [f"p{i}" for i in range(n)]


def _scaled(args: list) -> list[str]:
    """The second call's arguments: numbers scaled, lists and integers as they are."""
    return [f"p{i} * {SCALE}" if isinstance(a, float) else f"p{i}" for i, a in enumerate(args)]


def wrapper(form: str, args: list) -> str:
    ps = ", ".join(_params(len(args)))
    if form == "helper" or form == "vjp":
        return f"def f({ps}):\n    return g({ps})\n"
    if form == "lambda":
        return f"f = lambda {ps}: g({ps})\n"
    if form == "partial":
        return (f"def f0({ps}, scale=2.0):\n    return g({ps}) * scale\n\n\n"
                "f = functools.partial(f0, scale=1.0)\n")
    if form == "helper_of_helper":
        return f"def h({ps}):\n    return g({ps})\n\n\ndef f({ps}):\n    return h({ps})\n"
    if form == "twice":
        return f"def f({ps}):\n    return g({ps}) + 0.5 * g({', '.join(_scaled(args))})\n"
    if form == "loop":
        return (f"def f({ps}):\n    s = 0.0\n    for k in range(2):\n"
                f"        s = s + g({ps}) * (k + 1.0)\n    return s\n")
    if form == "branch":
        return (f"def f({ps}, sel):\n    if sel > 0.5:\n        r = g({ps}) * 2.0\n"
                f"    else:\n        r = g({ps}) - 1.0\n    return r\n")
    raise AssertionError(form)


def points(form: str, args: list) -> list[list]:
    return [args + [1.0], args + [0.0]] if form == "branch" else [args]


def central(f, args: list, i: int, h: float = 1e-6):
    """∂f/∂args[i] by central differences: a number, or a list element by element."""
    def at(k, step):
        moved = list(args)
        if isinstance(args[i], (list, tuple)):
            item = list(args[i])
            item[k] += step
            moved[i] = type(args[i])(item)
        else:
            moved[i] = args[i] + step
        return f(*moved)

    if isinstance(args[i], (list, tuple)):
        return [(at(k, h) - at(k, -h)) / (2 * h) for k in range(len(args[i]))]
    return (at(0, h) - at(0, -h)) / (2 * h)


def direct(dg, args: list, form: str, sel: float | None) -> list:
    """The wrapper's gradient from ``g``'s own (``dg``), as the wrapper combines calls."""
    def scale(gr, k):
        return [v * k for v in gr] if isinstance(gr, (list, tuple)) else gr * k

    def add(a, b):
        return [x + y for x, y in zip(a, b)] if isinstance(a, (list, tuple)) else a + b

    one = list(dg(*args))
    if form in ("helper", "helper_of_helper", "vjp", "lambda", "partial"):
        return one
    if form == "loop":
        return [scale(v, 3.0) for v in one]
    if form == "branch":
        return [scale(v, 2.0 if sel > 0.5 else 1.0) for v in one]
    second = list(dg(*[a * SCALE if isinstance(a, float) else a for a in args]))
    return [add(a, scale(b, 0.5 * SCALE if isinstance(arg, float) else 0.5))
            for a, b, arg in zip(one, second, args)]


def _close(got, want, rtol, atol):
    np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(want, dtype=float),
                               rtol=rtol, atol=atol)


FORMS = ["helper", "helper_of_helper", "twice", "loop", "branch", "vjp", "lambda", "partial"]

TARGET_FORMS = ("lambda", "partial")
"""Forms that change how the target is reached, not how ``g`` is lowered (``g``
is the helper of the ``helper`` form in both): in the default run for the
first function of each corpus, for every function with ``--soak``."""
FIRSTS = set(dict((c[0].rsplit(".", 1)[0], c[0]) for c in reversed(CORPUS)).values())
ROTATED = ("helper", "helper_of_helper", "twice", "loop", "branch", "vjp")
"""Positions taken in turn in the default run: the k-th function of the
corpora in ``ROTATED[k % 6]`` (each of these calls ``g`` as a helper), the
first function of each corpus in every form; every function in every form
with ``--soak``. Every function and every position stays in the default run:
each position on the first function of every corpus and on a sixth of the
others."""


def _case(k, case, form):
    if case[0] in FIRSTS:
        default = True
    elif form in TARGET_FORMS:
        default = False
    else:
        default = form == ROTATED[k % len(ROTATED)]
    return (pytest.param if default else soak)(*case, form, id=f"{case[0]}-{form}")


@pytest.mark.parametrize("name,g,args,wrt,form",
                         [_case(k, c, form) for k, c in enumerate(CORPUS) for form in FORMS])
def test_every_position_gives_the_same_gradient(name, g, args, wrt, form):
    f = make_function(wrapper(form, args), env={"g": g, "math": math, "functools": functools})
    dg = s2s_ad.grad(g, wrt=tuple(wrt))
    for point in points(form, args):
        try:
            if form == "vjp":
                value, pull = s2s_ad.vjp(f, *point)
                assert math.isclose(value, g(*point), rel_tol=1e-12, abs_tol=1e-12)
                full = pull(0.7)
                got = [full[i] for i in wrt]
                want_fd = [central(f, point, i) for i in wrt]
                want_fd = [[0.7 * v for v in w] if isinstance(w, (list, tuple)) else 0.7 * w
                           for w in want_fd]
            else:
                got = s2s_ad.grad(f, wrt=tuple(wrt))(*point)
                got = list(got) if isinstance(got, tuple) else [got]
                want_fd = [central(f, point, i) for i in wrt]
        except s2s_ad.S2SError as e:
            # a refusal is allowed only when located: file:line:col and a caret
            text = str(e)
            assert ":" in text and "^" in text, f"{name} as {form}: unlocated refusal {text!r}"
            assert name in REFUSED, f"{name} as {form} is refused: {text}"
            pytest.skip(f"refused, located: {text.splitlines()[0]}")
        assert name not in REFUSED, f"{name} as {form} is no longer refused: tighten REFUSED"
        sel = point[-1] if form == "branch" else None
        want = direct(dg, args, form, sel)
        if form == "vjp":
            want = [[0.7 * v for v in w] if isinstance(w, (list, tuple)) else 0.7 * w
                    for w in want]
        assert len(got) == len(wrt)
        for k, (a, b, c) in enumerate(zip(got, want, want_fd)):
            arg = args[wrt[k]]
            assert isinstance(a, (list, tuple)) == isinstance(arg, (list, tuple)), \
                f"{name} as {form}: the gradient of a list is a list"
            if isinstance(arg, (list, tuple)):
                assert type(a) is type(arg), f"{name} as {form}: {type(a)} for {type(arg)}"
            _close(a, c, rtol=1e-5, atol=1e-7)
            _close(a, b, rtol=1e-10, atol=1e-12)
