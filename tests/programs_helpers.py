"""Random programs whose work is done in helpers (issue 12's metamorphic forms).

Contract: :func:`helper_program` draws a program of another family — scalar
code with branches and loops (:func:`tests.programs.program`), the
condition programs (:mod:`tests.programs_conditions`) or a NumPy loop that
fills an array by subscript assignment (:func:`tests.programs_numpy.
numpy_loop_program`) — and moves its function into a helper ``h``, called
from a new top-level ``f`` with the same signature in one of these forms:

* ``direct``: ``return h(...)``;
* ``nested``: through a second helper, ``mid``, that calls ``h``;
* ``twice``: ``h`` at the point and at another (every float argument scaled
  by 0.5 or shifted by 0.25), the results combined;
* ``loop``: ``h`` called in a ``for`` loop, its counter passed to the
  helper's integer parameter;
* ``branch``: ``h`` called in both sides of an ``if`` on the first
  parameter, with different arguments.

The helper also gets one or two parameters that carry no derivative, each
used by a line put at the top of the helper (``_scale`` multiplies every
``return``): an integer used as a ``range`` bound, in ``== 0`` or through
``float()``; a float that enters only a comparison (the caller passes an
expression of the active parameters, so its adjoint must be zero, not
missing); in NumPy code, ``np.sign`` of such a float and an integer used as
a shape (``np.ones(_k + 1)``). In a NumPy helper, every ``return E`` may become
``return y * E``, so the helper returns the array its loop fills, and ``f``
reduces it (``np.sum(...)`` or ``np.sum(... * b)``).

The point and the parameters differentiated are the base program's, so a
program's gradient is the base program's gradient pushed through the
wrapping; the runner compares it with finite differences of ``f`` like any
other. Every helper is called with keyword arguments, so keyword-only
parameters and defaults of the base program carry over.
"""

from __future__ import annotations

import ast
from dataclasses import replace

from tests.programs import chance, choice, program
from tests.programs_conditions import condition_program
from tests.programs_numpy import numpy_loop_program

FORMS = ("direct", "nested", "twice", "loop", "branch")


class _Returns(ast.NodeTransformer):
    """Every ``return E`` of the helper becomes ``return (E) * _scale``, or
    ``return y * ((E) * _scale)`` to hand back the array the loop fills;
    with ``items``, a tuple of that and ``(E) * _scale * 0.5``."""

    def __init__(self, array: bool, items: bool = False):
        self.array = array
        self.items = items

    def visit_Return(self, node):
        scaled = ast.BinOp(node.value, ast.Mult(), ast.Name("_scale", ast.Load()))
        value = scaled
        if self.array:
            value = ast.BinOp(ast.Name("y", ast.Load()), ast.Mult(), value)
        if self.items:
            value = ast.Tuple([value, ast.BinOp(scaled, ast.Mult(), ast.Constant(0.5))],
                              ast.Load())
        return ast.copy_location(ast.Return(value), node)


def _returns_in_loop(fn: ast.FunctionDef) -> bool:
    """Does a ``return`` of ``fn`` sit inside one of its loops?"""
    return any(isinstance(n, ast.Return) for loop in ast.walk(fn)
               if isinstance(loop, (ast.For, ast.While)) for n in ast.walk(loop))


def _inactive(d, numpy: bool) -> tuple[list[str], list[str]]:
    """The extra parameters (``_k`` an int, ``_c`` a float) and the line
    setting ``_scale`` from them."""
    forms = [(["_k"], ["_scale = 1.0", "for _j in range(_k):", "    _scale = _scale * 0.75"]),
             (["_k"], ["_scale = 2.0 if _k == 0 else 1.0"]),
             (["_k"], ["_scale = float(_k) + 0.5"]),
             (["_c"], ["_scale = 1.5 if _c > 0.0 else 0.5"]),
             (["_k", "_c"], ["_scale = 1.0", "if _c < 0.0 and _k == 1:", "    _scale = -1.0"])]
    if numpy and chance(d, 40):
        forms = [(["_c"], ["_scale = np.sign(_c) + 2.0"]),
                 (["_k"], ["_scale = np.sum(np.ones(_k + 1)) * 0.5"])]
    return choice(d, forms)


def _call(name: str, params: list[str], extra: list[str], *, k: str, c: str,
          scale: str | None = None) -> str:
    args = [f"{p}={p}" if scale is None else f"{p}={p} {scale}" for p in params]
    args += [f"_k={k}" if e == "_k" else f"_c={c}" for e in extra]
    return f"{name}({', '.join(args)})"


def helper_program(d, items: bool = False, carried: bool = False):
    """Draw a program (see the module docstring): a
    :class:`tests.programs.Program` for scalar bases, a
    :class:`tests.programs_numpy.NumpyProgram` for NumPy ones. With
    ``items`` (the fuzzer's ``--tuples``) the helper returns a tuple, which
    ``f`` binds to a name and reads by index in a loop and in both arms of a
    branch (``r[0]``, ``r[-1]``, ``r[1]``, ``r[-2]``, or ``r[i % 2]`` at the
    loop's index), and may use whole (passed to a helper, ``use_items(r)``;
    unpacked with a starred name, ``a0, *rest = r``; spliced, ``(*r, 1.5)``);
    a helper whose ``return`` sits in a loop returns the tuple there, or
    through a wrapper; the other draws are the same. With ``carried`` too
    (``--carried``), ``f`` then carries the tuple, or a list of its items,
    across a loop's iterations (``r = (r[1] * 0.5 + r[0] * c, r[0])``),
    leaving it by ``break`` or skipping by ``continue`` on a test of an item."""
    base_kind = d.integer(0, 2)
    if base_kind == 0:
        base = program(d, max_params=3, max_stmts=4, max_depth=3)
    elif base_kind == 1:
        base = condition_program(d, max_params=3, max_stmts=4, max_depth=2)
    else:
        base = numpy_loop_program(d)
    numpy = base_kind == 2
    tree = ast.parse(base.source)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs]
    extra, prelude = _inactive(d, numpy)
    returns_array = numpy and chance(d, 50)
    signature = ast.unparse(fn.args)
    fn.name = "h"
    fn.args.kwonlyargs += [ast.arg(e) for e in extra]
    fn.args.kw_defaults += [None for _ in extra]
    # a `return` inside a loop gives the tuple there (the loop carries it item
    # by item), or, drawn too, returns its number to a wrapper `h` that
    # returns the tuple
    wrapped = items and _returns_in_loop(fn) and chance(d, 40)
    _Returns(returns_array, items and not wrapped).visit(fn)
    doc = 1 if ast.get_docstring(fn) is not None else 0
    fn.body[doc:doc] = ast.parse("\n".join(prelude)).body
    if wrapped:
        fn.name = "h_inner"
        names = [a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs]
        wrapper = ast.parse(f"def h({ast.unparse(fn.args)}):\n"
                            f"    v = h_inner({', '.join(f'{n}={n}' for n in names)})\n"
                            "    return v, v * 0.5\n").body[0]
        tree.body.insert(tree.body.index(fn) + 1, wrapper)
    ast.fix_missing_locations(tree)

    first = params[0]
    active = f"{first} * 0.5 + 1.0" if not numpy else "np.sum(a) + s"
    reduce_ = (lambda e: choice(d, [f"np.sum({e})", f"np.sum({e} * b)"])) if returns_array \
        else (lambda e: e)
    k0 = str(d.integer(0, 2))
    form = choice(d, FORMS)
    call = lambda name="h", k=k0, scale=None: reduce_(  # noqa: E731
        _call(name, params, extra, k=k, c=active, scale=scale))
    other = choice(d, ["* 0.5", "+ 0.25"])
    lines = [f"def f({signature}):"]
    if items:
        whole = (lambda e: f"np.sum({e})") if numpy else (lambda e: e)
        first_item = reduce_("r[0]") if returns_array else whole("r[0]")
        test = f"np.sum({first}) > 0.0" if numpy else f"{first} > 0.0"
        if not returns_array and chance(d, 40):  # an index known as the code runs
            first_item = whole("r[i % 2]")
        lines += [f"    r = {_call('h', params, extra, k=k0, c=active)}", "    total = 0.0",
                  f"    for i in range({d.integer(1, 3)}):",
                  f"        total = total + {first_item} * (i + 1.0)",
                  f"    if {test}:", f"        total = total + {whole('r[-1]')}", "    else:",
                  f"        total = total - {whole('r[1]')} * 0.5 + "
                  f"{reduce_('r[-2]') if returns_array else whole('r[-2]')}"]
        whole_use = choice(d, [None, "passed", "starred", "spliced"])
        if whole_use == "passed":  # the tuple passed whole to a helper
            lines += [f"    total = total + {whole('use_items(r)')}"]
        elif whole_use == "starred":
            lines += ["    a0, *rest = r", f"    total = total + {whole('a0')} * {whole('rest[-1]')}"]
        elif whole_use == "spliced":
            lines += ["    t = (*r, 1.5)", f"    total = total + {whole('t[1]')} * t[-1]"]
        if carried:
            jump = choice(d, ["break", "continue", None])
            as_list = chance(d, 40)  # carried as a list of a fixed length
            if as_list:
                lines += ["    r = [r[0], r[1]]"]
            lines += [f"    for j in range({d.integer(1, 4)}):"]
            if jump is not None:
                lines += [f"        if {whole('r[0]')} > {choice(d, ['0.5', '2.0', '-1.0'])}:",
                          f"            {jump}"]
            new = f"r[1] * 0.5 + r[0] * {choice(d, ['0.25', '-0.75'])}, r[0]"
            lines += [f"        r = [{new}]" if as_list else f"        r = ({new})",
                      f"    total = total + {whole('r[0]')} * {whole('r[-1]')}"]
        lines += ["    return total"]
        if whole_use == "passed":
            lines = ["def use_items(t):", "    return t[0] * 0.5 + t[-1]", "", ""] + lines
    elif form == "direct":
        lines.append(f"    return {call()}")
    elif form == "nested":
        mid = f"mid({', '.join(f'{p}={p}' for p in params)})"
        lines = [f"def mid({signature}):", f"    return {_call('h', params, extra, k=k0, c=active)}",
                 "", ""] + lines + [f"    return {reduce_(mid)}"]
    elif form == "twice":
        lines.append(f"    return {call()} - 0.5 * {call(k='1', scale=other)}")
    elif form == "loop":
        lines += ["    total = 0.0", f"    for i in range({d.integer(1, 3)}):",
                  f"        total = total + {call(k='i')} * (i + 1.0)", "    return total"]
    else:
        test = f"np.sum({first}) > 0.0" if numpy else f"{first} > 0.0"
        lines += [f"    if {test}:", f"        r = {call()}", "    else:",
                  f"        r = {call(k='1', scale=other)} * 2.0", "    return r"]
    source = ast.unparse(tree) + "\n\n\n" + "\n".join(lines) + "\n"
    if numpy:
        return replace(base, source=source)
    return replace(base, source=source, name="f")

