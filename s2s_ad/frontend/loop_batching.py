"""Frontend: a NumPy loop whose iterations are independent, summed into
accumulators or written row by row at its index, computed once over all
iterations.

Contract: :func:`desugar` rewrites, in place and before lowering, each loop
of ``src.tree`` of the form::

    for i in range(a, b, s):        # range(n), range(a, b), s a constant
        t = ... x[i + c] ...        # names of this iteration (read only here),
                                    # arrays of the function read at the index
        acc += e                    # or acc -= e, acc = acc + e, acc = acc - e
        out[i] = r                  # a row at the index (a >= 0, s > 0)

whose body calls NumPy, where every statement has a batching rule
(:mod:`s2s_ad.frontend.jax_batching`, the rules of ``jax.vmap``; calls of
your own functions are batched through their bodies), into::

    def loop_sum(i_all):            # the body once over every i, rows last:
        ...                         # x[i + c] is x[a + c:a + c + B * s:s]
        return np.sum(e_all, axis=-1), np.moveaxis(r_all, -1, 0)
    stop = index(b)                 # operator.index: an int, as range takes it
    if stop > a:                    # Python's loop runs at least once
        summed, rows = loop_sum(np.arange(a, stop, s, dtype=np.float64))
        acc += summed
        out[a:stop:s] = rows        # after a check that the rows fit

A read or a write past the end raises IndexError where the code runs, as the
loop does. The function computing the loop is lowered as a helper of the
function; where that fails for the kinds a call gives it (a list read at the
index), :class:`CalleeFailed` has the program made again without the rewrite
(:func:`retrying`).

The gradient, the forward mode and every position then come with the NumPy
code, and a Python loop of ``n`` iterations, each paying NumPy's call costs
on small arrays, becomes a few calls on arrays of ``n`` rows (the GradBench
least-squares objective, a loop of 256 residuals: its gradient goes from
1.4x the loop's time to 0.05x).

What keeps the loop (the rewrite is an optimisation; it never refuses):

* a body with anything else (a write ``t[idx] = v`` into an array the
  iteration made is fine, and so is a branch in a function the body calls
  or in the body, its arms assigning names of the iteration; a branch
  updating an accumulator or writing a row, a loop, a call that is not a NumPy
  function with a batching rule or a function of yours, ``break``, an
  expression statement), or with no NumPy call (scalar code keeps Python's
  float arithmetic and its errors);
* an array read at an index computed from the loop's variable other than
  ``i + c`` (``x[2 * i]``: an int in the loop, a float here); an index read
  at the loop's index (``cams[obs[i, 0]]``) is fine;
* a name of the body read before the body assigns it (it carries a value
  from one iteration to the next), an accumulator read in the body other
  than by its own update, the loop variable or a name of the body read after
  the loop or by a nested function or lambda anywhere in the function;
* an accumulator that may be a list (``acc = []``: ``+=`` extends it);
* an array made from an integer value of the loop (``np.full(m, i)``): the
  loop makes an array of integers, the batched code one of floats;
* a reduction, cumulative function or roll given an axis (``np.sum(t,
  axis=0)``): NumPy takes axis 0 of a number, which the iterations' axis
  would take instead, and the rank of an iteration's value is not known here;
* a loop marked ``# s2s-ad: loop`` on its line (kept as written: its
  tape, one slot per iteration, can then be checkpointed or read in
  ``explain``), or marked for checkpointing (``# s2s-ad: checkpoint``, or
  inside a ``with`` block);
* a rewrite the frontend then cannot lower: :func:`undo` restores the loops
  and the function is lowered as written.

The loop variable is a float array (``np.arange(..., dtype=np.float64)``),
exact for every count below 2**53, so arithmetic on it cannot overflow as
int64 would (``i ** 5``). The sums are NumPy's (pairwise), so a result may
differ from the loop's in the last bits.
"""

from __future__ import annotations

import ast
import builtins
import re
import copy
import operator
import types

import numpy

from s2s_ad.errors import SourceError
from s2s_ad.frontend import runtime_checks
from s2s_ad.frontend.checkpoint import checkpoint_pragma
from s2s_ad.frontend.jax_batch_rules import NoRule, SAME_SHAPE, described
from s2s_ad.frontend.jax_batching import _Batch, located
from s2s_ad.frontend.jax_forms import _Desugar
from s2s_ad.syntax_walk import walk

ARRAY_OF = {numpy.full, numpy.full_like, numpy.zeros_like, numpy.ones_like, numpy.empty_like,
            numpy.copy, numpy.array, numpy.asarray}
"""NumPy functions whose result takes its dtype from an argument."""


KEEP = re.compile(r"#\s*s2s-ad:\s*loop\b")
"""The comment that keeps a loop a loop (``for i in range(n):  # s2s-ad: loop``)."""

REFUSED: set = set()
"""Keys (:func:`_key`) of functions whose loops computed at once hold
something the frontend refused in the function computing them: written as
loops from then on."""


class CalleeFailed(SourceError):
    """The function computing a loop at once (``loop_sum``) could not be
    lowered: the function it was made for is lowered again with its loops
    (:func:`retrying`); ``original`` is the refusal."""

    def __init__(self, key, original: SourceError):
        super().__init__(str(original))
        self.key, self.original = key, original


def retrying(make):
    """``make()``, made again without the rewrite of a function whose
    ``loop_sum`` could not be lowered (a list read at the loop's index, say:
    known only from the call's arguments, after the function itself was
    lowered)."""
    while True:
        try:
            return make()
        except CalleeFailed as failed:
            if failed.key in REFUSED:
                raise failed.original from None
            REFUSED.add(failed.key)


def check_callee(src, error: SourceError) -> None:
    """Raise :class:`CalleeFailed` where ``src`` is a ``loop_sum`` this
    module made (``error`` its refusal); else nothing."""
    key = getattr(src.tree, "s2s_loop_sum_for", None)
    if key is not None and not isinstance(error, CalleeFailed):
        raise CalleeFailed(key, error) from None


def _key(src) -> tuple:
    return (src.file, getattr(src.tree, "lineno", 0), getattr(src.tree, "name", ""))


def desugar(src) -> None:
    """Rewrite the independent summing loops of ``src.tree`` (see the module
    docstring); the tree as it was is kept for :func:`undo`."""
    if getattr(src, "loops_batched", None) is not None:
        return
    if _key(src) in REFUSED or not any(isinstance(n, ast.For) and _summing(n) is not None
                                       for n in walk(src.tree)):
        src.loops_batched = False  # (no copy of a tree without a loop of the form rewritten)
        return
    before = copy.deepcopy(src.tree)
    loops = _Loops(src)
    loops.function(src.tree)
    if loops.rewritten:
        src.loops_batched, src.unbatched_tree = True, before
    else:
        src.loops_batched = False


def undo(src) -> bool:
    """Restore the loops :func:`desugar` rewrote in ``src``; whether it had."""
    if getattr(src, "loops_batched", None) is not True:
        return False
    src.tree, src.loops_batched = src.unbatched_tree, False
    return True


class _Loops(_Desugar):
    def __init__(self, src):
        super().__init__(src)
        self.rewritten = 0
        self.saw_numpy = False
        self.defs: list = []
        """The functions computing the loops of the function being rewritten."""

    def index_name(self) -> str:
        """A global name bound to ``operator.index`` (range bounds are ints)."""
        return self.global_for(operator.index, "index")

    def resolve(self, node):
        obj = super().resolve(node)
        module = getattr(obj, "__module__", None) or ""
        if isinstance(obj, numpy.ufunc) or module.split(".")[0] in ("numpy", "scipy"):
            self.saw_numpy = True
        return obj

    # -- walking the function ---------------------------------------------------

    def function(self, fn: ast.FunctionDef) -> None:
        outer, current = self.locals, self.current
        self.locals = outer | {a.arg for a in walk(fn.args) if isinstance(a, ast.arg)} \
            | {t.id for n in walk(fn) if isinstance(n, (ast.Assign, ast.AugAssign, ast.For,
                                                              ast.AnnAssign))
               for t in walk(n.targets[0] if isinstance(n, ast.Assign) else n.target)
               if isinstance(t, ast.Name)}
        self.current = fn
        defs, self.defs = self.defs, []
        fn.body = self.block(fn.body, fn)
        if self.defs:  # at the top of the body, where the frontend takes nested functions
            first = 1 if fn.body and isinstance(fn.body[0], ast.Expr) and isinstance(
                fn.body[0].value, ast.Constant) else 0
            fn.body[first:first] = self.defs
        self.locals, self.current, self.defs = outer, current, defs

    def block(self, stmts: list, fn: ast.FunctionDef) -> list:
        out = []
        for s in stmts:
            if isinstance(s, ast.FunctionDef):
                self.function(s)
            elif isinstance(s, ast.For):
                made = self.batched(s, fn)
                if made is not None:
                    out += made
                    continue
                s.body, s.orelse = self.block(s.body, fn), self.block(s.orelse, fn)
            elif isinstance(s, (ast.If, ast.While)):
                s.body, s.orelse = self.block(s.body, fn), self.block(s.orelse, fn)
            # a `with` block (checkpointing) and anything else: as written
            out.append(s)
        return out

    # -- one loop -------------------------------------------------------------------

    def batched(self, loop: ast.For, fn: ast.FunctionDef):
        """The statements replacing ``loop``, or None (the loop stays)."""
        shape = _summing(loop)
        bounds = self.bounds(loop)
        line = self.src.line(loop.lineno)
        if shape is None or bounds is None or checkpoint_pragma(line) or KEEP.search(line):
            return None
        temps, sums, outs = shape
        mine = temps | {loop.target.id}
        start, _, step = bounds
        if outs and not (isinstance(start, ast.Constant) and start.value >= 0 and step > 0):
            return None  # rows written as a slice: start:stop:step with start >= 0, step > 0
        if not _private(fn, loop, mine, temps | sums | outs | {loop.target.id}) \
                or any(_may_be_list(fn, acc) for acc in sums):
            return None
        body, parts, names = [], [], []
        for s in loop.body:
            if isinstance(s, ast.Pass):
                continue
            acc, op, value = _update(s, temps)
            if acc is None and _written(s) in outs and _at_index(s, loop.target.id):
                acc, op, value = _written(s), None, s.value  # a row: op None
            if acc is None:
                body.append(s)
                continue
            names.append(self.fresh("summand" if op is not None else "row"))
            body.append(ast.copy_location(ast.Assign([ast.Name(names[-1], ast.Store())],
                                                     value), s))
            parts.append((acc, op, s))
        body.append(ast.copy_location(ast.Return(ast.Tuple(
            [ast.Name(n, ast.Load()) for n in names], ast.Load())), loop))
        param = self.fresh(f"{loop.target.id}_all")
        self.saw_numpy = False
        helpers = False
        for n in walk(loop):
            if isinstance(n, ast.Call):
                obj = self.resolve(n.func)  # NumPy called on values of every iteration alike
                helpers = helpers or isinstance(n.func, ast.Name) and (
                    isinstance(obj, types.FunctionType)  # of the module, or nested, or a local
                    or obj is None and not hasattr(builtins, n.func.id))
        if not (self.saw_numpy or helpers):
            return None  # numbers and `math` only: Python's loop, as written
        original = copy.deepcopy(loop)
        batch = _LoopBatch(self, loop, param, bounds)
        try:
            result = batch.inlined([loop.target.id], [(ast.Name(param, ast.Load()), True)], body)
        except (NoRule, SourceError, OSError, TypeError):
            return None
        if not self.saw_numpy or any(not batched and any(
                isinstance(n, ast.JoinedStr) or isinstance(n, ast.Constant)
                and isinstance(n.value, (str, bytes)) for n in walk(e))
                for e, batched in result):
            return None
        returned = []  # what loop_sum returns for each part
        for (e, batched), (_, op, _) in zip(result, parts):
            if op is None:  # the rows written, iterations first
                if not batched:  # one value for every iteration: a row each
                    e = ast.BinOp(batch.trailing(e), ast.Add(),
                                  batch.call("zeros", batch.count()))
                returned.append(batch.rows_first(e))
            elif batched:
                returned.append(batch.call("sum", e, axis=ast.Constant(-1)))
            else:  # a summand the same in every iteration: that many times itself
                returned.append(ast.BinOp(e, ast.Mult(), batch.count()))
        statements, fallback = batch.out, None
        if batch.fits is not None:  # rows that may not fit one array: the loop as written then
            statements = [ast.fix_missing_locations(located(ast.Assign(
                [ast.Name(batch.fits, ast.Store())], ast.Constant(True)), loop))] + statements
            returned.append(ast.Name(batch.fits, ast.Load()))
            fallback = original
        return self.rewrite(loop, param, bounds, statements, returned, parts, fallback)

    def bounds(self, loop: ast.For):
        """``(start, stop, step)`` of ``range(...)`` (expressions; step an int
        constant), or None for any other iteration."""
        it = loop.iter
        if not isinstance(loop.target, ast.Name) or loop.orelse \
                or not isinstance(it, ast.Call) or not isinstance(it.func, ast.Name) \
                or it.func.id != "range" or "range" in self.locals \
                or "range" in self.src.globals or it.keywords or not 1 <= len(it.args) <= 3 \
                or any(isinstance(a, ast.Starred) for a in it.args):
            return None
        args = list(it.args)
        step = 1
        if len(args) == 3:
            step = _int_constant(args.pop())
            if not step:
                return None
        start, stop = (ast.Constant(0), args[0]) if len(args) == 1 else args
        return start, stop, step

    def rewrite(self, loop, param, bounds, statements, returned, parts, fallback=None) -> list:
        np_ = self.numpy_name()
        name = self.fresh("loop_sum")
        made = ast.FunctionDef(
            name=name, args=ast.arguments(posonlyargs=[], args=[ast.arg(param)], vararg=None,
                                          kwonlyargs=[], kw_defaults=[], kwarg=None,
                                          defaults=[]),
            body=statements + [ast.Return(returned[0] if len(returned) == 1
                                          else ast.Tuple(returned, ast.Load()))],
            decorator_list=[], returns=None, type_comment=None)
        made.s2s_loop_sum_for = _key(self.src)
        self.defs.append(ast.fix_missing_locations(located(made, loop)))
        out = []
        start, stop, step = bounds
        named = []
        for e, base in ((start, "start"), (stop, "stop")):
            if not (isinstance(e, ast.Constant) and type(e.value) is int):
                # an int, as `range` takes it: a gradient with respect to what it is
                # computed from is refused, and a float raises TypeError as `range` does
                fresh = self.fresh(base)
                checked = ast.Call(ast.Name(self.index_name(), ast.Load()), [e], [])
                checked.range_bound = True  # so the frontend's messages say so
                out.append(ast.Assign([ast.Name(fresh, ast.Store())], checked))
                e = ast.Name(fresh, ast.Load())
            named.append(e)
        start, stop = named
        arange = _np_call(np_, "arange", copy.deepcopy(start), copy.deepcopy(stop),
                          ast.Constant(step), dtype=ast.Attribute(
                              ast.Name(np_, ast.Load()), "float64", ast.Load()))
        totals = [self.fresh("summed") for _ in parts]
        fits = [self.fresh("fits")] if fallback is not None else []
        targets = totals + fits
        first = ast.Assign([ast.Name(targets[0], ast.Store()) if len(targets) == 1 else ast.Tuple(
            [ast.Name(t, ast.Store()) for t in targets], ast.Store())],
            ast.Call(ast.Name(name, ast.Load()), [arange], []))
        updates = []
        for total, (acc, op, s) in zip(totals, parts):
            read = ast.Name(total, ast.Load())
            if op is None:  # out[start:stop:step] = the rows, after a check the last exists
                last = ast.BinOp(copy.deepcopy(start), ast.Add(), ast.BinOp(ast.BinOp(
                    _length(np_, read), ast.Sub(), ast.Constant(1)), ast.Mult(),
                    ast.Constant(step)))
                message = (f"`{ast.unparse(s.targets[0])}` (line {s.lineno}) writes past the "
                           "end of the array: index out of range (the loop raises IndexError "
                           "here)")
                updates.append(ast.copy_location(runtime_checks.bound_check(ast.Compare(
                    last, [ast.GtE()], [_length(np_, ast.Name(acc, ast.Load()))]),
                    "IndexError", message), s))
                rows = ast.Subscript(ast.Name(acc, ast.Load()), ast.Slice(
                    copy.deepcopy(start), copy.deepcopy(stop), ast.Constant(step)), ast.Store())
                updates.append(ast.copy_location(ast.Assign([rows], read), s))
                continue
            if isinstance(s, ast.AugAssign):  # in place where the accumulator is an array
                updates.append(ast.copy_location(ast.AugAssign(
                    ast.Name(acc, ast.Store()), op(), read), s))
            else:
                updates.append(ast.copy_location(ast.Assign(
                    [ast.Name(acc, ast.Store())],
                    ast.BinOp(ast.Name(acc, ast.Load()), op(), read)), s))
        if fallback is not None:  # a branch's arms gave rows of two shapes: the loop
            updates = [ast.If(ast.Compare(ast.Name(fits[0], ast.Load()), [ast.Eq()],
                                          [ast.Constant(True)]), updates, [fallback])]
        lo, hi = (start, stop) if step > 0 else (stop, start)
        test = ast.Compare(copy.deepcopy(hi), [ast.Gt()], [copy.deepcopy(lo)])
        out.append(ast.If(test, [first] + updates, []))
        self.rewritten += 1
        return [ast.fix_missing_locations(located(s, loop)) for s in out]


class _LoopBatch(_Batch):
    """The batching rewrite with the loop variable's values as the one mapped
    argument, tracking the names that may hold integers."""
    ROW = "value of one iteration of the loop"
    RAISES = "the loop raises"

    def __init__(self, forms, loop, param: str, bounds):
        super().__init__(forms, loop, [ast.Name(param, ast.Load())], [0])
        self.ints = {param}
        self.fits = None
        """The flag cleared where a branch's arms give rows of two shapes."""
        self.counters = {param}
        """Names computed from the loop's index (floats here, ints in the loop)."""
        self.param = param
        self.start, _, self.step = bounds

    def expr(self, node):
        if isinstance(node, ast.Subscript) and self.reads_batched(node.slice):
            index = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            offset = self.offset(index[0])
            if offset is not None:  # x[i + c, ...]; else x[k], k read at i
                return self.gathered(node, offset)
        return super().expr(node)

    def gathered(self, node: ast.Subscript, offset: int):
        """``x[i + c]`` (``x[i + c, ...]``), ``x`` the same in every iteration
        and ``i`` the loop's index: the rows ``x[lo:lo + B * step:step]`` (``lo =
        start + c``), iterations last, after a check where the code runs that
        the last row exists (the loop raises IndexError where it does not)."""
        index = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        rest = index[1:]
        if self.reads_batched(node.value) or not (
                isinstance(self.start, ast.Constant) and self.start.value + offset >= 0
                and self.step > 0) or any(
                self.reads_batched(r) or _ellipsis_or_new(r) for r in rest):
            raise NoRule
        x = self.named(self.verbatim(node.value), "gathered")
        lo = self.start.value + offset
        count = self.count()
        last = ast.BinOp(ast.Constant(lo), ast.Add(), ast.BinOp(
            ast.BinOp(count, ast.Sub(), ast.Constant(1)), ast.Mult(), ast.Constant(self.step)))
        size = ast.Subscript(self.call("shape", copy.deepcopy(x)), ast.Constant(0), ast.Load())
        message = (f"{described(node)} reads past the end of the array: index out of range "
                   "(the loop raises IndexError here)")
        self.emit(runtime_checks.bound_check(ast.Compare(last, [ast.GtE()], [size]),
                                             "IndexError", message))
        upper = ast.BinOp(ast.Constant(lo), ast.Add(), ast.BinOp(
            copy.deepcopy(count), ast.Mult(), ast.Constant(self.step)))
        rows = ast.Slice(ast.Constant(lo), upper, ast.Constant(self.step))
        picked = ast.Subscript(copy.deepcopy(x), ast.Tuple([rows] + [self.verbatim(r) for r in rest],
                                                           ast.Load()) if rest else rows,
                               ast.Load())
        rows = self.assign("gathered", self.rows_last(picked))
        self.ints.add(rows.id)  # x may hold integers (np.full of them would be floats here)
        return rows, True

    def offset(self, node):
        """``c`` of an index ``i``, ``i + c``, ``i - c`` (``i`` the loop's index
        as this body names it, ``c`` an int constant), else None."""
        def loop_index(n) -> bool:
            return isinstance(n, ast.Name) and self.env.get(n.id) == (self.param, True)
        if loop_index(node):
            return 0
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            c = _int_constant(node.right)
            if loop_index(node.left) and c is not None:
                return c if isinstance(node.op, ast.Add) else -c
            c = _int_constant(node.left)
            if loop_index(node.right) and c is not None and isinstance(node.op, ast.Add):
                return c
        return None

    def reduced(self, name: str, callee, x, args: list, keywords: list, method: bool):
        if _axis_given(args[0] if args else None, keywords):
            # NumPy takes axis 0 (and -1) of a number: np.sum(2.0, axis=0) is 2.0. With
            # the iterations on the last axis, a row that is a number would be summed
            # over the iterations instead; its rank is not known here: keep the loop
            raise NoRule
        return super().reduced(name, callee, x, args, keywords, method)

    def rolled(self, fn, node: ast.Call):
        if _axis_given(node.args[2] if len(node.args) > 2 else None, node.keywords):
            raise NoRule  # as for reductions
        return super().rolled(fn, node)

    def assign(self, base: str, value) -> ast.Name:
        name = super().assign(base, value)
        if _may_be_int(value, self.ints):
            self.ints.add(name.id)
        if _reads(value, self.counters):
            self.counters.add(name.id)
        return name

    def mismatched(self, s: ast.If) -> list:
        if self.fits is None:
            self.fits = self.forms.fresh("fits")
        return [ast.Assign([ast.Name(self.fits, ast.Store())], ast.Constant(False))]

    def index_rows(self, k) -> None:
        if _reads(k, self.counters):
            raise NoRule  # x[2 * i]: an int in the loop, a float here

    def integer(self, node) -> bool:
        held = {user for user, (fresh, _) in self.env.items() if fresh in self.ints}
        return _may_be_int(node, held)

    def called(self, node: ast.Call):
        obj = None if self.reads_batched(node.func) or isinstance(node.func, ast.Name) \
            and node.func.id in self.env else self.callee(node.func)
        if obj is builtins.float and len(node.args) == 1 and not node.keywords:
            e, batched = self.expr(node.args[0])  # every value here is a float64 already
            return (ast.BinOp(e, ast.Add(), ast.Constant(0.0)), True) if batched \
                else (ast.Call(self.verbatim(node.func), [e], []), False)
        if any(obj is f for f in ARRAY_OF) or id(obj) in SAME_SHAPE:
            given = node.args[1:2] if obj in (numpy.full, numpy.full_like) else node.args[:1]
            if any(self.reads_batched(a) and self.integer(a) for a in given):
                raise NoRule  # the loop would make an array of integers
        return super().called(node)


def _np_call(np_: str, attr: str, *args, **keywords) -> ast.Call:
    """``np.attr(*args, **keywords)``, ``np_`` the global name bound to NumPy."""
    return ast.Call(ast.Attribute(ast.Name(np_, ast.Load()), attr, ast.Load()), list(args),
                    [ast.keyword(k, v) for k, v in keywords.items()])


def _length(np_: str, e: ast.expr) -> ast.expr:
    """``np.shape(e)[0]``."""
    return ast.Subscript(_np_call(np_, "shape", copy.deepcopy(e)), ast.Constant(0), ast.Load())


def _ellipsis_or_new(node) -> bool:
    """``...`` or ``None``/``np.newaxis`` in an index (they move the rows' axis)."""
    return any(isinstance(n, ast.Constant) and (n.value is Ellipsis or n.value is None)
               or isinstance(n, ast.Attribute) and n.attr == "newaxis" for n in walk(node))


def _axis_given(positional, keywords: list) -> bool:
    """Whether a call is given an axis other than None."""
    axis = positional if positional is not None else next(
        (k.value for k in keywords if k.arg == "axis"), None)
    return axis is not None and not (isinstance(axis, ast.Constant) and axis.value is None)


def _summing(loop: ast.For):
    """``(temps, accumulators, arrays written at the index)`` of a loop body
    of assignments to names, writes into arrays the iteration made, sums into
    accumulators and rows written at the loop's index (see the module
    docstring), each a set of names, or None."""
    if not isinstance(loop.target, ast.Name):
        return None
    temps: set = set()
    sums: set = set()
    outs: set = set()
    for s in loop.body:
        if isinstance(s, ast.Pass):
            continue
        acc, _, value = _update(s, temps)
        if acc is not None:
            if acc in temps or _loads(value) & _assigned_later(loop.body, s):
                return None
            sums.add(acc)
            continue
        written = _written(s)
        if written is not None and written not in temps and _at_index(s, loop.target.id):
            # out[i] = e: row i of an array of the function, once per iteration
            if written in outs or written in sums \
                    or _loads(s.value) & _assigned_later(loop.body, s):
                return None
            outs.add(written)
            continue
        if written is not None:  # t[idx] = v, t[idx] op= v into an array of the iteration
            if written not in temps or _loads(s) & _assigned_later(loop.body, s):
                return None
            continue
        if isinstance(s, ast.If):  # assignments to names of the iteration in each arm
            names = _branch_names(s, _assigned_before(loop.body, s) | temps)
            if names is None or names & sums or _loads(s) & (
                    _assigned_later(loop.body, s) - names):
                return None
            temps |= names
            continue
        names = _names_assigned(s)
        if not (isinstance(s, ast.Assign) and len(s.targets) == 1 and names) or names & sums:
            return None
        if _loads(s.value) & _assigned_later(loop.body, s):
            return None  # read before the body assigns it: carried from the last iteration
        temps |= names
    if not (sums or outs) or loop.target.id in temps | sums | outs or outs & (temps | sums):
        return None
    for s in loop.body:  # an accumulator is read by its own updates only, an array
        acc, _, value = _update(s, temps)  # written at the index not at all
        if acc is not None:
            reads = _loads(value)
        elif _written(s) in outs and _at_index(s, loop.target.id):
            reads = _loads(s.value)
        else:
            reads = _loads(s)
        if reads & (sums | outs):
            return None
    return temps, sums, outs


def _written(s):
    """The name ``t`` of ``t[idx] = v`` or ``t[idx] op= v``, else None."""
    target = s.targets[0] if isinstance(s, ast.Assign) and len(s.targets) == 1 else \
        s.target if isinstance(s, ast.AugAssign) else None
    if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
        return target.value.id
    return None


def _at_index(s, index: str) -> bool:
    """Whether ``s`` is ``out[index] = v`` (a plain assignment at the loop's
    own index)."""
    return isinstance(s, ast.Assign) and len(s.targets) == 1 \
        and isinstance(s.targets[0], ast.Subscript) and isinstance(s.targets[0].slice, ast.Name) \
        and s.targets[0].slice.id == index


def _update(s, temps: set):
    """``(accumulator, op, summand)`` of ``acc += e`` (``-=``) or ``acc = acc
    + e`` (``-``) on a name that is not one of the body's own, else
    ``(None, None, None)``."""
    if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name) \
            and isinstance(s.op, (ast.Add, ast.Sub)) and s.target.id not in temps:
        return s.target.id, type(s.op), s.value
    if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) \
            and isinstance(s.value, ast.BinOp) and isinstance(s.value.op, (ast.Add, ast.Sub)) \
            and isinstance(s.value.left, ast.Name) and s.value.left.id == s.targets[0].id \
            and s.targets[0].id not in temps:
        return s.targets[0].id, type(s.value.op), s.value.right
    return None, None, None


def _assigned_later(body: list, s) -> set:
    """Names assigned by ``s`` and the statements after it in ``body`` (in
    the arms of an ``if`` too) and by no statement before it."""
    k = body.index(s)
    return {n for t in body[k:] for n in _names_assigned(t)} - _assigned_before(body, s)


def _assigned_before(body: list, s) -> set:
    return {n for t in body[:body.index(s)] for n in _names_assigned(t)}


def _names_assigned(s) -> set:
    """The names ``s`` assigns: ``name = ...``, and those of an ``if``'s arms."""
    if isinstance(s, ast.Assign) and isinstance(s.targets[0], ast.Name):
        return {s.targets[0].id}
    if isinstance(s, ast.Assign) and isinstance(s.targets[0], ast.Tuple) \
            and all(isinstance(t, ast.Name) for t in s.targets[0].elts):
        return {t.id for t in s.targets[0].elts}  # a, b = h(x)
    if isinstance(s, ast.If):
        return {n for t in s.body + s.orelse for n in _names_assigned(t)}
    return set()


def _branch_names(s: ast.If, known: set):
    """The names the arms of ``s`` assign, where each arm (and each ``if``
    in it) holds only assignments to names, each name of them read only
    where it has been assigned in this iteration (before ``s``: ``known``,
    or earlier in the arm, or in both arms of an ``if`` before it); else
    None."""
    names = _names_assigned(s)
    return names if _arms_assign(s, known, names) is not None else None


def _arms_assign(s: ast.If, seen: set, names: set):
    """The names surely assigned after ``s`` (by both arms), or None where
    an arm reads one of ``names`` it has not assigned or holds anything but
    assignments to names and ``if`` statements of them."""
    if _loads(s.test) & (names - seen):
        return None
    after = []
    for arm in (s.body, s.orelse):
        here = set(seen)
        for t in arm:
            if isinstance(t, ast.Pass):
                continue
            if isinstance(t, ast.If):
                here = _arms_assign(t, here, names)
                if here is None:
                    return None
                continue
            if not (isinstance(t, ast.Assign) and len(t.targets) == 1
                    and isinstance(t.targets[0], ast.Name)) or _loads(t.value) & (names - here):
                return None
            here.add(t.targets[0].id)
        after.append(here)
    return after[0] & after[1]


def _private(fn: ast.FunctionDef, loop: ast.For, mine: set, all_names: set) -> bool:
    """Whether no name of ``mine`` is read outside ``loop`` in ``fn``, and no
    name of ``all_names`` is read or declared by a nested function, lambda
    or ``global``/``nonlocal`` statement anywhere in ``fn``."""
    todo = [(n, mine) for n in ast.iter_child_nodes(fn)]
    while todo:
        n, names = todo.pop()
        if n is loop:
            continue
        if isinstance(n, (ast.FunctionDef, ast.Lambda, ast.AsyncFunctionDef)):
            if _free(n) & all_names:
                return False
            continue  # its own names are its own
        if isinstance(n, ast.For):  # another loop binding the same names before it reads them
            names = names - _bound_first(n)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in names:
            return False
        if isinstance(n, (ast.Global, ast.Nonlocal)) and set(n.names) & all_names:
            return False
        todo += [(c, names) for c in ast.iter_child_nodes(n)]
    return True


def _bound_first(loop: ast.For) -> set:
    """The names ``loop`` binds (its variable, and names its body assigns at
    its top level) before anything in it reads them."""
    bound = {loop.target.id} if isinstance(loop.target, ast.Name) else set()
    seen: set = set()
    for s in loop.body:
        if isinstance(s, ast.Assign) and len(s.targets) == 1 \
                and isinstance(s.targets[0], ast.Name):
            seen |= _loads(s.value)
            if s.targets[0].id not in seen:
                bound.add(s.targets[0].id)
        seen |= _loads(s)
    return bound


def _free(fn) -> set:
    """The names a nested function or lambda reads from the function around it."""
    bound = {a.arg for a in walk(fn.args) if isinstance(a, ast.arg)} | {
        n.id for n in walk(fn) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    return _loads(fn) - bound


def _may_be_list(fn: ast.FunctionDef, name: str) -> bool:
    """Whether ``name`` is a parameter of ``fn`` (a caller may pass a list),
    or is bound anywhere in ``fn`` to a list or tuple display, a
    comprehension, a constant that is not a number, or ``list(...)``/
    ``tuple(...)`` (``+=`` would extend a list)."""
    for n in walk(fn):
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name
                                             for t in n.targets):
            if isinstance(n.value, (ast.List, ast.ListComp, ast.Tuple, ast.Constant)) \
                    and not (isinstance(n.value, ast.Constant)
                             and type(n.value.value) in (int, float)):
                return True
            if isinstance(n.value, ast.Call) and isinstance(n.value.func, ast.Name) \
                    and n.value.func.id in ("list", "tuple"):
                return True
    return any(isinstance(a, ast.arg) and a.arg == name for a in walk(fn.args))


def _may_be_int(node, held: set) -> bool:
    """Whether ``node`` reads a name of ``held`` and may hold an integer:
    no float constant and no true division in it."""
    if not _reads(node, held):
        return False
    return not any(isinstance(n, ast.Constant) and type(n.value) is float
                   or isinstance(n, ast.Div) for n in walk(node))


def _loads(node) -> set:
    return {n.id for n in walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _reads(node, names: set) -> bool:
    return bool(_loads(node) & names)


def _int_constant(node):
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _int_constant(node.operand)
        return -value if value else None
    return node.value if isinstance(node, ast.Constant) and type(node.value) is int else None
