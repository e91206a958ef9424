"""Integer index arrays computed from ints: one op, computed as written.

Contract: in array mode, an expression that builds an integer array only
from ints — int parameters and locals, int literals, ``len(x)``,
``x.shape[k]``, ``x.ndim``, ``x.size``, index arrays made before, integer
arithmetic (``+ - * // %``, unary minus), comprehensions over ``range`` —
with NumPy's ``np.arange``, ``np.repeat`` (repeats an array or an int),
``np.concatenate``/``np.stack``/``np.hstack``/``np.vstack`` (of a list
written out or of a comprehension) and ``np.tril_indices``/``np.triu_indices``
is lowered to one ``index.expr`` op: no derivative, its forward computation
the expression itself (``attrs["code"]``, the operands as ``x0, x1, ...``,
NumPy as ``np``, comprehension variables renamed). It is taken where the
per-function rules cannot: repeats given by an array, JAX's
``total_repeat_length=``, a comprehension over a range known only when the
code runs, the triangle indices. The value it makes is an *index value*
(``lo.index_values``); so are ``np.arange`` of ints and arithmetic,
slices and joins of index values (:func:`note`), and what a helper returns
that is one (:func:`call_result`); an array literal, ``np.array([0, 0,
1])``, is not (an assignment by it stays refused). An unannotated
parameter read where NumPy takes one int is checked to be an int where the
code runs, and has no gradient. An index value may index a subscript assignment
(``z[:, rows, cols] = v``): the generated code then checks, where it runs,
that no element is written twice (:func:`distinct_check`), since NumPy's
last write would win where JAX's ``.add`` adds up.

Before → after::

    rows = np.concatenate([np.arange(c + 1, d)     rows = index.expr d
                           for c in range(d - 1)])        code='np.concatenate([np.arange(_c0 + 1, x0)
                                                                  for _c0 in range(x0 - 1)])'
"""

from __future__ import annotations

import ast
import copy
import builtins

import numpy

from s2s_ad import ir
from s2s_ad.errors import SourceError
from s2s_ad.frontend.runtime_checks import raise_unless
from s2s_ad.syntax_walk import walk

SEQUENCES = {numpy.concatenate: ("axis",), numpy.stack: ("axis",), numpy.hstack: (),
             numpy.vstack: ()}
MAKERS = {numpy.arange: (), numpy.repeat: ("axis", "total_repeat_length"),
          numpy.tril_indices: ("k", "m"), numpy.triu_indices: ("k", "m"), **SEQUENCES}
"""NumPy functions an index expression may call, with the keywords each takes."""
ARITHMETIC = {ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod}
INDEX_PRIMS = frozenset({"add", "sub", "mul", "floordiv", "mod", "neg", "pos",
                         "np.concatenate", "np.stack", "np.hstack", "np.vstack", "np.repeat",
                         "np.tile", "np.flip", "np.ravel", "np.reshape", "array.getitem",
                         "np.transpose", "np.copy"})
"""Primitives whose result is an index value when every operand is an int or
an index value (and one, the first for the NumPy ones, an index value)."""


LIKE_PRIMS = frozenset({"np.zeros_like", "np.ones_like", "np.empty_like"})
"""Arrays of another array's dtype: integers when it holds integers."""

KEEPS_INTEGERS = LIKE_PRIMS | INDEX_PRIMS | {"array.setitem"}
"""Primitives whose result holds integers when their (first) array does."""


def refuse_write(lo, base: ir.Value, value, target: ast.AST, name: str) -> None:
    """``name[...] = value`` into an array of integers: NumPy converts a
    float written there to an integer, which has no derivative; refused,
    located (an int written there is kept as it is)."""
    if integers(lo, base) and not is_int(lo, value):
        raise lo.src.error(target, f"`{name}` holds integers (made from ints, without a float "
                           "dtype): NumPy would cut the value written into it to an integer, "
                           "which has no derivative. Make it a float array (`np.arange(3.0)`, "
                           "`dtype=float`, `.astype(float)`)")


class NotIndex(Exception):
    """``node`` is not part of an integer index expression (``why``)."""

    def __init__(self, node: ast.AST, why: str):
        super().__init__(why)
        self.node, self.why = node, why


def is_int(lo, a) -> bool:
    return isinstance(a, ir.Const) and type(a.value) is int or \
        isinstance(a, ir.Value) and (a.kind == "int" or id(a) in lo.index_values)


def note(lo, prim: str, args: list, out: ir.Value, attrs: dict) -> None:
    """Record ``out`` as an index value when ``prim`` makes one of ints."""
    if prim == "np.arange":
        if all(is_int(lo, a) for a in args) and attrs.get("dtype") in (
                None, "int64", "int32", "intp", "int16", "int8"):
            lo.index_values.add(id(out))
    elif prim in INDEX_PRIMS and args and all(is_int(lo, a) for a in args):
        first = args[0] if prim.startswith(("np.", "array.")) else None
        if (id(first) in lo.index_values) if first is not None else \
                any(id(a) in lo.index_values for a in args):
            lo.index_values.add(id(out))
    if prim == "index_array" and all(is_int(lo, a) for a in args) or \
            prim == "np.full" and len(args) > 1 and \
            isinstance(args[1], ir.Const) and type(args[1].value) is int and \
            attrs.get("dtype") is None:
        lo.int_arrays.add(id(out))  # np.array([1, 2]), np.full(n, 2): integers
    elif prim in KEEPS_INTEGERS and args \
            and (integers(lo, args[0]) if prim.startswith(("np.", "array.")) else
                 any(integers(lo, a) for a in args)) and attrs.get("dtype") is None \
            and (prim not in INDEX_PRIMS or all(is_int(lo, a) or integers(lo, a) for a in args)):
        lo.int_arrays.add(id(out))  # (array.setitem: an int written into it, refuse_write)


def holds_ints(lo, seq: ir.Value) -> bool:
    """Does ``seq``, a list grown at run time, hold ints only: is every item
    appended to it, through the loops and branches that carry it, an int or
    an item read from such a list (``keep = [j for j in range(n) if j !=
    k]``, ``list(range(a, b))``, slices and sums of those)? ``np.array`` of it
    is then the integer array NumPy makes, an index array."""
    defs: dict = {}
    sites = {id(ops): ops for ops in lo.op_site.values()}
    sites[id(lo.ops)] = lo.ops
    for ops in sites.values():
        for node in ir.walk(ir.Region(ops, [])):
            if isinstance(node, ir.Op):
                defs[id(node.out)] = node
            elif isinstance(node, ir.If):
                defs.update((id(o), [r.yields[k] for r in node.regions])
                            for k, o in enumerate(node.outs))
            else:  # a loop: what it starts with and what each iteration yields
                defs.update((id(o), [node.body.yields[k], node.inits[k]])
                            for k, o in enumerate(node.outs))
                defs.update((id(c), [node.body.yields[k], node.inits[k]])
                            for k, c in enumerate(node.carried))
    todo, seen = [seq], set()
    while todo:
        v = todo.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        d = defs.get(id(v)) if isinstance(v, ir.Value) else None
        if isinstance(d, list):
            todo += d
        elif d is None or d.prim not in ("list.new", "list.append"):
            return False
        elif d.prim == "list.append":
            todo.append(d.args[0])
            item = d.args[1]
            made = defs.get(id(item)) if isinstance(item, ir.Value) else None
            if isinstance(made, ir.Op) and made.prim == "getitem":
                todo.append(made.args[0])  # an item of another list of ints
            elif not is_int(lo, item):
                return False
    return True


def integers(lo, v) -> bool:
    """Is ``v`` an array of integers the function made (an index value, or
    an array of ints it builds and writes into)?"""
    return id(v) in lo.index_values or id(v) in lo.int_arrays


def results(lo, outputs) -> frozenset:
    """Which of a function's ``outputs`` are index values (ir.Function.index_results)."""
    known = getattr(lo, "index_values", ())
    return frozenset(k for k, o in enumerate(outputs) if isinstance(o, ir.Value) and id(o) in known)


def call_result(lo, out: ir.Value, callee: ir.Function) -> None:
    """``out``, the result of a call of ``callee``: an index value where the
    callee returns one; a tuple's items where they are (read by ``item``)."""
    if not callee.index_results:
        return
    if callee.outputs is None:
        lo.index_values.add(id(out))
    else:
        lo.__dict__.setdefault("index_items", {})[id(out)] = callee.index_results


def _resolve(lo, node: ast.expr):
    try:
        return lo.resolve(node)
    except SourceError:  # a local name, or an attribute of one: not a callee here
        return None


def wanted(lo, fn, node: ast.Call) -> bool:
    """Is ``node`` (a call of ``fn``) one only an index expression can take?
    ``np.repeat`` with repeats that are not a literal int (or given
    ``total_repeat_length``), a join of a comprehension, the triangle indices."""
    if fn is numpy.tril_indices or fn is numpy.triu_indices:
        return True
    if fn is numpy.arange:
        # of a parameter without an annotation (JAX's `*, d`): an int, checked
        return any(_untyped_param(lo, n) for a in node.args for n in walk(a))
    if fn is numpy.repeat:
        repeats = node.args[1] if len(node.args) > 1 else next(
            (k.value for k in node.keywords if k.arg == "repeats"), None)
        if any(k.arg == "total_repeat_length" for k in node.keywords):
            return True
        # counts known only when the code runs: a call, or a name bound to a value
        # (a constant, or arithmetic on constants, is the rule's attribute)
        return repeats is not None and any(
            isinstance(n, (ast.Call, ast.Subscript, ast.Attribute)) or isinstance(n, ast.Name)
            and isinstance(lo.env.get(n.id), ir.Value) for n in walk(repeats))
    if any(fn is f for f in SEQUENCES):
        return len(node.args) >= 1 and isinstance(node.args[0], (ast.ListComp, ast.GeneratorExp))
    return False


def _constant_ranges(lo, comp) -> bool:
    """Whether every loop of the comprehension ``comp`` is over ``range(...)``
    of int literals (or names bound to constant ints)."""
    def constant(a) -> bool:
        if isinstance(a, ast.UnaryOp) and isinstance(a.op, ast.USub):
            a = a.operand
        if isinstance(a, ast.Name):
            value = lo.env.get(a.id)
            return isinstance(value, ir.Const) and type(value.value) is int
        return isinstance(a, ast.Constant) and type(a.value) is int
    return all(isinstance(g.iter, ast.Call) and isinstance(g.iter.func, ast.Name)
               and g.iter.func.id == "range" and not g.iter.keywords
               and all(constant(a) for a in g.iter.args) for g in comp.generators)


def _untyped_param(lo, node: ast.AST) -> bool:
    """A name bound to a parameter of NumPy code without an annotation."""
    value = lo.env.get(node.id) if isinstance(node, ast.Name) else None
    return isinstance(value, ir.Value) and value.kind in ("array", "float") \
        and lo._is_param(value)


def lower(lo, fn, node: ast.Call, var, hint):
    """``node`` as an ``index.expr`` op (a pair of them for the triangle
    indices); None to leave it to the rules (a repeat of an array that is
    not an index value); a located refusal where nothing else can take it."""
    if not wanted(lo, fn, node):
        return None
    reader = _Reader(lo)
    total = None
    try:
        if fn is numpy.repeat:
            total = next((k.value for k in node.keywords if k.arg == "total_repeat_length"),
                         None)
            call = ast.Call(node.func, node.args, [k for k in node.keywords
                                                   if k.arg != "total_repeat_length"])
            code = reader.read(ast.copy_location(call, node))
            if total is not None:
                reader.read(total, True)
                if any(k.arg == "axis" for k in node.keywords) or len(node.args) > 2:
                    raise NotIndex(total, "`total_repeat_length` is read for a flattened "
                                          "repeat only (no axis)")  # an int expression, checked here, lowered below
        else:
            code = reader.read(node)
    except NotIndex as e:
        if fn is numpy.arange:
            return None  # the rule's: a constant range
        if any(fn is f for f in SEQUENCES) and (_constant_ranges(lo, node.args[0]) or not any(
                isinstance(n, ast.Call) and lo.resolve(n.func) in MAKERS
                for n in walk(node.args[0].elt))):
            # not only ints: a join of values (with a gradient), which the
            # rules take (the comprehension a list known while lowering, or
            # one of any length: frontend/list_stacks.py)
            return None
        what = ast.unparse(node.func)
        if fn is numpy.repeat and total is None and not getattr(node, "as_take", False):
            taken = _repeat_as_take(node)
            if taken is not None:
                return lo.expr(taken)
            raise lo.src.error(e.node, f"`{what}` takes a constant number of repeats, or "
                               "repeats known only when the code runs for an integer index "
                               "array computed from ints (`np.repeat(np.arange(d), counts)`), "
                               f"not for values with a gradient: {e.why}")
        raise lo.src.error(e.node, f"`{what}` here builds an integer index array, which "
                           "s2s-ad computes as written when every value in it is an int "
                           f"(int parameters, literals, len, shapes, range, np.arange): {e.why}")
    text = f"{var} = {ast.unparse(node)}" if var else ast.unparse(node)
    for value, name in reader.params.values():
        _int_check(lo, value, name)
        lo.mark_int(value, name, "an integer index array is computed from it")
    if fn is numpy.tril_indices or fn is numpy.triu_indices:
        # a pair of index arrays: each its own op
        return tuple(_emit(lo, reader, ast.Subscript(code, ast.Constant(k), ast.Load()),
                           node, None, hint or "index", text) for k in (0, 1))
    out = _emit(lo, reader, code, node, var, hint, text)
    if total is not None:
        _total_check(lo, out, lo.expr(total), node, text)
    return out


def _emit(lo, reader, code: ast.expr, node, var, hint, text) -> ir.Value:
    out = lo.emit("index.expr", list(reader.operands), node, var, hint=hint, text=text,
                  attrs={"code": ast.unparse(code)})
    lo.index_values.add(id(out))
    return out


def _total_check(lo, out: ir.Value, total, node: ast.Call, text: str) -> None:
    """JAX's ``total_repeat_length=T`` cuts or pads the repeat to T items;
    NumPy's repeat has its own length. The generated code checks the two
    agree (they do where T is the repeats' sum, as it is meant to be)."""
    same = lo.emit("index.same_size", [out, total], node, hint="same_length", text=text)
    raise_unless(lo, same, node, text, "ValueError",
                 "`total_repeat_length` differs from the number of items the repeats give "
                 "(JAX would cut or pad the result; s2s-ad computes NumPy's repeat)")


def _int_check(lo, value: ir.Value, name: ast.Name) -> None:
    """``value``, a parameter an index expression reads, must be an int where
    the code runs: from a float the expression could make floats
    (``np.arange(0.5, d)``) whose derivative it does not have. Checked before
    each expression that reads it (one may be in a branch the other skips)."""
    int_check(lo, value, name, f"`{name.id}` is used to build an integer index array "
              f"(line {name.lineno}), so it must be an int")


def int_check(lo, value: ir.Operand, node: ast.expr, message: str,
              prim: str = "index.is_int", exc: str = "TypeError") -> None:
    """A check where the code runs that ``value`` is an int (not a bool; with
    ``prim`` ``index.is_index``, anything Python's list takes as an index);
    ``exc(message)`` otherwise."""
    is_int = lo.emit(prim, [value], node, hint="is_int")
    raise_unless(lo, is_int, node, f"{ast.unparse(node)}: an int", exc, message)


def distinct_check(lo, base: ir.Value, operands: list, index: tuple, target: ast.AST) -> None:
    """``base[index] = v`` with an index array among ``index``'s operands
    (``operands[k]``, the op's operands after ``base`` and the value): a
    check that no element of ``base`` is written twice, where NumPy keeps the
    last write (and its adjoint, the gather ``g[index]``, would give each
    write one)."""
    args = [base] + operands[2:]
    shifted = _shift(index, -1)
    same = lo.emit("index.distinct", args, target, hint="distinct",
                   attrs={"index": shifted})
    raise_unless(lo, same, target, ast.unparse(target), "ValueError",
                 f"`{ast.unparse(target)}` writes an element more than once (an index array "
                 "repeats a position); s2s-ad differentiates writes into distinct elements only")


def _shift(index: tuple, by: int) -> tuple:
    def one(p):
        return p if p is None or p[0] != "op" else ("op", p[1] + by)
    return tuple(("slice",) + tuple(one(p) for p in item[1:]) if item[0] == "slice"
                 else one(item) if item[0] == "op" else item for item in index)


class _Reader:
    """Checks an expression is an integer index expression and writes its
    code over placeholders ``x0, x1, ...`` for the values it reads."""

    def __init__(self, lo):
        self.lo = lo
        self.operands: list[ir.Value] = []
        self.bound: dict[str, str] = {}
        self.comprehensions = 0
        self.params: dict[int, tuple[ir.Value, ast.Name]] = {}
        """Parameters read as ints that the generated code must check are."""

    def operand(self, value: ir.Value) -> ast.Name:
        for k, a in enumerate(self.operands):
            if a is value:
                return ast.Name(f"x{k}", ast.Load())
        self.operands.append(value)
        return ast.Name(f"x{len(self.operands) - 1}", ast.Load())

    def name(self, node: ast.Name, shape_only: bool = False, scalar: bool = False
             ) -> ast.expr:
        if node.id in self.bound:
            return ast.Name(self.bound[node.id], ast.Load())
        lo = self.lo
        if node.id in lo.env:
            value = lo.env[node.id]
            if isinstance(value, ir.Const) and type(value.value) is int:
                return ast.Constant(value.value)
            if isinstance(value, ir.Value) and (is_int(lo, value) or shape_only
                                                and value.kind in ("array", "float")):
                return self.operand(value)
            if scalar and isinstance(value, ir.Value) and value.kind in ("array", "float") \
                    and lo._is_param(value):
                # a parameter of NumPy code without an annotation (JAX's `*, d, k`):
                # an int where the code runs, which the generated code checks
                self.params.setdefault(id(value), (value, node))
                return self.operand(value)
            raise NotIndex(node, f"`{node.id}` is not an int or an integer index array "
                                 "made from ints")
        obj = lo.src.globals.get(node.id)
        if type(obj) is int:
            return ast.Constant(obj)
        raise NotIndex(node, f"`{node.id}` is not an int")

    def read(self, node: ast.expr, scalar: bool = False) -> ast.expr:
        """``node`` over placeholders; ``scalar``: where NumPy takes one int
        (a bound of ``np.arange`` or ``range``, a count), so that a parameter
        of NumPy code without an annotation is read as an int there."""
        if isinstance(node, ast.Constant):
            if type(node.value) is not int:
                raise NotIndex(node, f"{node.value!r} is not an int")
            return ast.Constant(node.value)
        if isinstance(node, ast.Name):
            return self.name(node, scalar=scalar)
        if isinstance(node, ast.BinOp) and type(node.op) in ARITHMETIC:
            return ast.BinOp(self.read(node.left, scalar), node.op, self.read(node.right, scalar))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            return ast.UnaryOp(node.op, self.read(node.operand, scalar))
        if isinstance(node, (ast.List, ast.Tuple)):
            return type(node)([self.read(e) for e in node.elts], ast.Load())
        if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
            return self.comprehension(node)
        if isinstance(node, ast.Attribute) and node.attr in ("ndim", "size") \
                and isinstance(node.value, ast.Name):
            return ast.Call(ast.Attribute(ast.Name("np", ast.Load()), node.attr, ast.Load()),
                            [self.name(node.value, shape_only=True)], [])
        if isinstance(node, ast.Subscript):
            return self.subscript(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        raise NotIndex(node, f"`{ast.unparse(node)}` is not integer arithmetic")

    def subscript(self, node: ast.Subscript) -> ast.expr:
        value = node.value
        if isinstance(value, ast.Attribute) and value.attr == "shape" \
                and isinstance(value.value, ast.Name):
            base = ast.Call(ast.Attribute(ast.Name("np", ast.Load()), "shape", ast.Load()),
                            [self.name(value.value, shape_only=True)], [])
        elif isinstance(value, ast.Name):
            base = self.name(value)
        else:
            raise NotIndex(node, f"`{ast.unparse(node)}` is not integer arithmetic")
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        out = []
        for item in items:
            if isinstance(item, ast.Slice):
                out.append(ast.Slice(*(None if p is None else self.read(p, True)
                                       for p in (item.lower, item.upper, item.step))))
            else:
                out.append(self.read(item, True))
        index = out[0] if len(out) == 1 else ast.Tuple(out, ast.Load())
        return ast.Subscript(base, index, ast.Load())

    def call(self, node: ast.Call) -> ast.expr:
        fn = _resolve(self.lo, node.func)
        if fn is builtins.len and len(node.args) == 1 and not node.keywords \
                and isinstance(node.args[0], ast.Name):
            return ast.Call(ast.Name("len", ast.Load()),
                            [self.name(node.args[0], shape_only=True)], [])
        maker = next((f for f in MAKERS if f is fn), None)
        if maker is None:
            raise NotIndex(node, f"`{ast.unparse(node.func)}` is not one of np.arange, "
                                 "np.repeat, np.concatenate, np.stack, np.hstack, np.vstack, "
                                 "np.tril_indices, np.triu_indices, len")
        keywords = []
        for k in node.keywords:
            if k.arg not in MAKERS[maker] or k.arg == "total_repeat_length":
                raise NotIndex(k.value, f"the keyword {k.arg!r} is not supported here")
            keywords.append(ast.keyword(k.arg, self.read(k.value, True)))
        # the array a repeat or a join takes is an array; every other argument one int
        # (a repeat's counts may be either)
        arrays = 1 if maker is numpy.repeat else len(node.args) if maker in SEQUENCES else 0
        args = [self.read(a, k >= arrays) for k, a in enumerate(node.args)]
        if any(isinstance(a, ast.Starred) for a in node.args):
            raise NotIndex(node, "`*args` is not supported here")
        func = ast.Attribute(ast.Name("np", ast.Load()), maker.__name__, ast.Load())
        return ast.Call(func, args, keywords)

    def comprehension(self, node: ast.ListComp | ast.GeneratorExp) -> ast.expr:
        saved = dict(self.bound)
        generators = []
        for gen in node.generators:
            if gen.ifs or gen.is_async or not isinstance(gen.target, ast.Name):
                raise NotIndex(gen, "a comprehension here takes `for c in range(...)` only")
            it = gen.iter
            if not (isinstance(it, ast.Call) and _resolve(self.lo, it.func) is builtins.range
                    and not it.keywords and 1 <= len(it.args) <= 3):
                raise NotIndex(it, "a comprehension here iterates over `range(...)`")
            bounds = [self.read(a, True) for a in it.args]
            name = f"_c{self.comprehensions}"
            self.comprehensions += 1
            self.bound[gen.target.id] = name
            generators.append(ast.comprehension(
                ast.Name(name, ast.Store()),
                ast.Call(ast.Name("range", ast.Load()), bounds, []), [], 0))
        elt = self.read(node.elt)
        self.bound = saved
        return ast.ListComp(elt, generators)


def _repeat_as_take(node: ast.Call) -> ast.expr | None:
    """``np.repeat(x, n, axis=k)`` of a value with a gradient, ``n`` known
    only when the code runs (``inputs.shape[1]``, an int parameter), as ``np.take(x, np.repeat(np.arange(np.shape(x)[k]), n), axis=k)``
    (``axis`` absent: of ``np.ravel(x)``): the same array, its index array
    computed from ints and its adjoint gathered back with ``np.add.at``; an
    ``x`` that is not a name is bound by ``:=`` to read its shape. None where
    the call is not of that shape (then it is refused)."""
    if not (isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)) \
            or any(isinstance(a, ast.Starred) for a in node.args) or len(node.args) > 3:
        return None
    given = dict(zip(("a", "repeats", "axis"), node.args))
    for k in node.keywords:
        if k.arg not in ("a", "repeats", "axis") or k.arg in given:
            return None
        given[k.arg] = k.value
    if "a" not in given or "repeats" not in given:
        return None
    axis = given.get("axis")
    if axis is not None and not (isinstance(axis, ast.Constant) and (
            axis.value is None or type(axis.value) is int)):
        return None
    np_name = node.func.value.id

    def np(name, *args, **kw):
        return ast.Call(ast.Attribute(ast.Name(np_name, ast.Load()), name, ast.Load()),
                        list(args), [ast.keyword(k, v) for k, v in kw.items()])
    x = given["a"]
    if not isinstance(x, ast.Name):  # read once, its shape from the name it is bound to
        name = f"repeated_{node.lineno}_{node.col_offset}"
        x, first = ast.Name(name, ast.Load()), ast.NamedExpr(ast.Name(name, ast.Store()), x)
    else:
        first = x
    if axis is None or axis.value is None:
        size = ast.Attribute(copy.deepcopy(x), "size", ast.Load())
        out = np("take", np("ravel", first), np("repeat", np("arange", size), given["repeats"]))
    else:
        length = ast.Subscript(ast.Attribute(copy.deepcopy(x), "shape", ast.Load()),
                               ast.Constant(axis.value), ast.Load())
        out = np("take", first, np("repeat", np("arange", length), given["repeats"]),
                 axis=ast.Constant(axis.value))
    out.args[1].as_take = True  # (the index array's repeat: never rewritten again)
    for sub in walk(out):
        if not hasattr(sub, "lineno") and isinstance(sub, ast.expr):
            ast.copy_location(sub, node)
            sub.end_lineno, sub.end_col_offset = node.end_lineno, node.end_col_offset
    return out
