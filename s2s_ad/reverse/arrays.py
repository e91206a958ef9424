"""Reverse mode, NumPy part: what arrays need beyond ``out̄ · ∂out/∂x``.

Contract: :class:`ArraySweep` is consulted by :func:`s2s_ad.reverse.transform`
for functions in array mode (those that use NumPy). It guarantees that

* every adjoint has the shape of its value: a contribution to an operand
  that NumPy broadcast is summed back to the operand's shape — by
  ``np.sum`` for a scalar operand, by the generated module's own
  ``unbroadcast`` helper between two arrays — and only there, so scalar code
  stays as it was;
* no adjoint array is ever changed in place unless this sweep created it:
  accumulation is ``da = da + c`` (``da += c`` would write into the caller's
  seed or into another adjoint sharing the array); the adjoint of an indexed
  read is the generated module's ``scatter`` helper (a fresh array of the
  operand's shape), of a subscript assignment ``gather``/``zeroed``
  (arrays written in place are :mod:`s2s_ad.reverse.inplace`'s);
* an operand is read for its shape only when an ``unbroadcast`` needs it, so
  a value read for nothing else stays off the tape.

Before → after, for ``t = x[i]; y = np.sum(t * w)`` with respect to ``x, w``::

    t = x[i]
    t1 = t * w
    dt1 = spread(dy, t1)        (np.sum: dy in t1's shape)
    dt = unbroadcast(dt1 * w, t)
    dw = unbroadcast(dt1 * t, w)
    dx = scatter(dt, x, i)
"""

from __future__ import annotations

import ast
import copy

from s2s_ad.reverse import analysis
from s2s_ad.reverse.analysis import scalar as _scalar, shape_classes
from s2s_ad.reverse.flat_shapes import FlatShapes
from s2s_ad.reverse.ranks import ELEMENTWISE as ELEMENTWISE_RANKS, zero_d
from s2s_ad import ir
from s2s_ad.emit.code import Stmt

from s2s_ad.names import Namer
from s2s_ad.rules import RULES, forward_template
from s2s_ad.rules.more_helpers import MORE_HELPERS
from s2s_ad.rules.numpy import BROADCASTING, SAME_SHAPE
from s2s_ad.rules.numpy_helpers import define
from s2s_ad.emit.optimize import factor_first, simplify
from s2s_ad.rules.templates import index_expr, index_operands, instantiate, operand_expr
from s2s_ad.syntax_walk import walk

NO_READ = ir.Value("<none>", "array")
"""What :meth:`ArraySweep._spread_by_its_use` returns when the adjoint needs
no value of ``x``'s shape at all (``np.sum``)."""

SPECIAL = {"array.getitem", "array.setitem"}
"""Indexing: its adjoint is a scatter or a gather, not a product with a local derivative."""


def _name(n: str) -> ast.Name:
    return ast.Name(n, ast.Load())


def _call(module: str, fn: str, *args: ast.expr) -> ast.Call:
    return ast.Call(ast.Attribute(_name(module), fn, ast.Load()), list(args), [])


class ArraySweep:
    def __init__(self, func: ir.Function, namer: Namer):
        self.func = func
        self.namer = namer
        self.np = func.modules["numpy"]
        self.helpers: dict[str, str] = {}
        """Helper name as generated -> its source."""
        self.owned: set[str] = set()
        """Adjoint variables holding an array this sweep created (safe to write into)."""
        self.zero_d, self.elements = zero_d(func)
        """ids of the values the code makes 0-d, and of the writes into one
        element (s2s_ad.reverse.ranks): their adjoints need no un-broadcasting."""
        self.shapes = shape_classes(func, self.zero_d)
        self._uses = analysis.uses(func)
        self._made_by = {id(op.out): op for op in ir.walk(func.body) if isinstance(op, ir.Op)}
        """The op making each value, in loops and branches too."""
        self._helper_names: dict[str, str] = {}
        self.unspread: set[int] = set()
        """ids of the values whose adjoint a reduction left unspread
        (:meth:`_spread_by_its_use`): it may be a number, not of their shape."""
        self.buffers: set[int] = set()
        """ids of array versions written in place (s2s_ad.reverse.inplace): read only
        by the ops whose reverse the buffer's state was kept for."""
        self.flat = FlatShapes(self)
        """Flags under which operators between arrays need no unbroadcast
        (s2s_ad.reverse.flat_shapes)."""
        self.shape_read = None
        """The sweep's reader of an operand needed only for its shape where a
        flag does not hold (s2s_ad.reverse.structured.StructuredSweep.shape_read)."""
        self.shape_source = lambda v: v
        """The value read for an operand's shape where no flag is there
        (s2s_ad.reverse.structured.StructuredSweep.shape_source)."""

    def number(self, a: ir.Operand) -> bool:
        """Is ``a`` known to be 0-d (a float, an int, or an array value the
        code makes 0-d)?"""
        return _scalar(a) or id(a) in self.zero_d

    # -- helpers in the generated module --------------------------------------

    def helper(self, base: str) -> str:
        """The generated name of helper ``base``, defining it on first use."""
        return define(base, self.np, self.namer.fresh, self._helper_names, self.helpers)

    def named(self, base: str) -> str | None:
        """The generated name of helper ``base`` if it is defined, else None."""
        return self._helper_names.get(base)

    def seed(self, result: ast.expr, seed: str) -> Stmt:
        """``dy = dy * np.ones_like(y)``: an array result's seed (1.0 by default)
        takes the result's shape, so every adjoint has its value's shape."""
        self.owned.add(seed)
        node = ast.Assign([ast.Name(seed, ast.Store())],
                          ast.BinOp(_name(seed), ast.Mult(),
                                    _call(self.np, "ones_like", result)))
        return Stmt(node, "the seed takes the result's shape")

    def zero(self, v: ir.Value) -> ast.expr:
        """The gradient of a parameter the result does not depend on."""
        if v.kind == "array":
            return _call(self.np, "zeros_like", _name(v.name))
        return ast.Constant(0.0)

    def gradient(self, v: ir.Value, expr: ast.expr) -> ast.expr:
        """An array parameter's gradient as returned: in the parameter's dtype
        (``astype_like``), whatever dtype the sweep computed it in."""
        if v.kind != "array" or not isinstance(expr, ast.Name):
            return expr
        return ast.Call(_name(self.helper("astype_like")), [expr, _name(v.name)], [])

    # -- contributions ----------------------------------------------------------

    def _spread_by_its_use(self, op: ir.Op) -> ir.Value | None:
        """Can the reduction's adjoint stay unspread (``keep(g)``, which
        broadcasts against ``x``)? Yes when ``x`` is read only by this
        reduction and comes from an elementwise op each of whose local
        derivatives provably has ``x``'s shape: then every contribution
        ``dx * ∂x/∂a`` broadcasts to that shape by itself, equal element by
        element to the spread array's, and the spread would be a copy made to
        be multiplied once. ``dt5 = spread(s, t5); dt4 = dt5 * (2 * t4)``
        becomes ``dt5 = s; dt4 = dt5 * (2 * t4)``.

        A derivative of another shape will do where the contribution is summed
        to its operand's shape by ``unbroadcast`` and the derivative reads the
        operation's other operands (``x = a * b``: ``unbroadcast(g * b, a)``):
        ``g * b`` and ``a`` broadcast to ``x``'s shape together, and
        ``unbroadcast`` sums ``g * b`` over the axes along which ``a`` was
        broadcast and spreads it along those ``g * b`` lacks, as the spread
        array would be summed. A number times ``x`` on the way (``np.mean(a
        * b * 2)``, see :meth:`_scaled`) leaves the adjoint unspread: ``a *
        b`` decides. And an elementwise function of one array
        (``x = np.exp(a)``) has a derivative of its shape where it reads that
        array or ``x`` elementwise (``x``), whatever their shape class.
        Returns a value of ``x``'s shape those derivatives read (``t4``),
        NO_READ (``np.sum`` needs none), or None."""
        x = op.args[0]
        while True:
            if not isinstance(x, ir.Value) or x.kind != "array" or self._uses.get(id(x)) != 1:
                return None
            producer = self._made_by.get(id(x))
            if producer is None or producer.callee is not None or producer.prim not in RULES \
                    or producer.prim in SPECIAL or RULES[producer.prim].adjoint:
                return None
            scaled = self._scaled(producer)
            if scaled is None:
                break
            x = scaled  # x = a * 2: a's producer decides, as a has x's shape
        rule = RULES[producer.prim]
        cls = self.shapes.get(id(x))
        values = {a.name: a for a in producer.args if isinstance(a, ir.Value)}
        values[x.name] = x
        read: list[ir.Value] = []
        # x = f(a) elementwise (other operands numbers): a and x have x's shape
        own = ({id(producer.args[0]), id(x)} if producer.prim in SAME_SHAPE
               and producer.prim != "array.setitem"
               and all(_scalar(a) for a in producer.args[1:]) else set())
        for i, a in enumerate(producer.args):
            if not rule.flows(i) or not isinstance(a, ir.Value) or a.kind in ("int", "bool"):
                continue
            local = instantiate(rule.partial_asts[i], producer.args, producer.out,
                                self.func.modules)
            if not _shaped_like(local, cls, values, self.shapes, self.np):
                if self._summed_back(producer, i) and _covers(local, producer, i, values,
                                                              self.np):
                    continue
                reads = _elementwise_reads(local, values, self.np) if i == 0 and own else None
                if reads and all(id(v) in own or _scalar(v) for v in reads) \
                        and any(id(v) in own for v in reads):
                    read += [v for v in reads if id(v) in own]
                    continue
                return None
            read += [values[n.id] for n in walk(local)
                     if isinstance(n, ast.Name) and n.id in values
                     and self.shapes.get(id(values[n.id])) is cls]
        read = [v for v in read if id(v) not in self.buffers]
        if read:
            same = read[0]
        elif op.prim == "np.sum":
            # np.sum's adjoint reads no shape: the values of x's shape may be
            # arrays written in place (y * y), never read for it
            same = NO_READ
        elif id(op.args[0]) not in self.buffers:
            same = op.args[0]  # np.mean's reads the operand for its size, as the spread would
        else:
            return None
        self.unspread.add(id(x))
        return same

    def _scaled(self, op: ir.Op) -> ir.Value | None:
        """The one array operand ``a`` of an elementwise ``op`` whose other
        operands are numbers and whose local derivative with respect to ``a``
        is a number (``a * 2``, ``a / n``, ``-a``, ``a + c``), else None. The
        contribution to ``a`` is then the adjoint times a number: an unspread
        adjoint stays unspread, and ``a`` (of ``op``'s shape) is judged in
        turn by :meth:`_spread_by_its_use`."""
        if op.prim not in BROADCASTING and op.prim not in SAME_SHAPE or op.prim in SPECIAL:
            return None
        arrays = [(i, a) for i, a in enumerate(op.args) if not self.number(a)]
        if len(arrays) != 1 or not isinstance(arrays[0][1], ir.Value):
            return None
        i, a = arrays[0]
        rule = RULES[op.prim]
        if not rule.flows(i) or id(a) in self.buffers:
            return None
        values = {v.name: v for v in op.args if isinstance(v, ir.Value)} | {op.out.name: op.out}
        local = instantiate(rule.partial_asts[i], op.args, op.out, self.func.modules)
        reads = _elementwise_reads(local, values, self.np)
        if reads is None or not all(_scalar(v) for v in reads):
            return None
        for j, c in enumerate(op.args):
            # a number's contribution is summed whole (total(g * a) for a * s): its
            # local derivative must read a, or the unspread g is summed once, not per element
            if j != i and isinstance(c, ir.Value) and c.kind not in ("int", "bool") \
                    and rule.flows(j) and not _covers(instantiate(
                        rule.partial_asts[j], op.args, op.out, self.func.modules), op, j,
                        values, self.np):
                return None
        return a

    def _helper_calls(self, expr: ast.expr) -> ast.expr:
        """Calls in a rule's template to the generated module's helpers, under
        their generated names."""
        return helper_calls(expr, self.helper)

    def _concatenate(self, op: ir.Op, i: int, g: ast.expr, attrs: dict,
                     exprs: list | None = None) -> ast.expr:
        """``g[..., n0 + ... + n(i-1):n0 + ... + ni, ...]`` (the slice along
        ``axis``), nk the operands' lengths: a basic slice, a view, where
        ``np.split`` would make every part to keep one."""
        axis = attrs.get("axis", 0)
        exprs = exprs or [operand_expr(a, self.func.modules) for a in op.args]
        if axis == 0 and all(p.value.name != "len" for p in self.func.params):
            # np.concatenate refuses 0-d operands: len(e) is e's length along axis 0,
            # a builtin call where np.shape(e)[0] is a NumPy function (no parameter
            # named len shadows the builtin)
            sizes = [ast.Call(ast.Name("len", ast.Load()), [copy.deepcopy(e)], [])
                     for e in exprs[:i + 1]]
        else:
            sizes = [ast.Subscript(_call(self.np, "shape", copy.deepcopy(e)),
                                   ast.Constant(axis) if axis >= 0
                                   else ast.UnaryOp(ast.USub(), ast.Constant(-axis)),
                                   ast.Load())
                     for e in exprs[:i + 1]]
        bounds, acc = [], None
        for s in sizes:
            acc = s if acc is None else ast.BinOp(copy.deepcopy(acc), ast.Add(), s)
            bounds.append(copy.deepcopy(acc))
        start = bounds[i - 1] if i > 0 else None
        stop = bounds[i] if i < len(exprs) - 1 else None
        part = ast.Slice(start, stop, None)
        full = ast.Slice(None, None, None)
        if axis >= 0:
            items = [copy.deepcopy(full) for _ in range(axis)] + [part]
        else:
            items = [ast.Constant(Ellipsis), part] + [copy.deepcopy(full)
                                                      for _ in range(-axis - 1)]
        index = items[0] if len(items) == 1 else ast.Tuple(items, ast.Load())
        return ast.Subscript(g, index, ast.Load())

    def _einsum(self, i: int, g: ast.expr, attrs: dict, exprs: list) -> ast.expr:
        """``np.einsum(adjoint, g, *others)`` with the subscripts the frontend
        wrote for operand ``i``, summed back over the axes NumPy broadcast
        from length 1 (``unbroadcast``: at once where the shapes agree); or,
        where the frontend left them to the run (``...``, a repeated or
        alone-summed letter), ``einsum_adjoint``, which works them out there."""
        if attrs["adjoints"][i] is None:
            return ast.Call(_name(self.helper("einsum_adjoint")),
                            [g, ast.Constant(attrs["subscripts"]), ast.Constant(i)]
                            + [copy.deepcopy(e) for e in exprs], [])
        subscripts, _ = attrs["adjoints"][i]
        others = [copy.deepcopy(e) for k, e in enumerate(exprs) if k != i]
        contrib = ast.Call(_name(self.helper("contract")),
                           [ast.Constant(subscripts), g] + others, [])
        return ast.Call(_name(self.helper("unbroadcast")), [contrib, copy.deepcopy(exprs[i])], [])

    def unbroadcast(self, op: ir.Op, i: int, contrib: ast.expr, arg_expr=None) -> ast.expr:
        """``contrib`` summed back to operand ``i``'s shape where NumPy may have
        broadcast it; unchanged where shapes cannot differ. ``arg_expr()``
        reads the operand, called only when its shape is needed (a read may
        put it on the tape)."""
        contrib = self._fold(contrib)
        arg = op.args[i]
        if not self._summed_back(op, i):
            return contrib
        # -sum(g), not sum(-g): the negation on the summed (smaller) array; the
        # two differ only in the sign of an exactly-zero sum
        negate = isinstance(contrib, ast.UnaryOp) and isinstance(contrib.op, ast.USub)
        if negate:
            contrib = contrib.operand
        if self.number(arg):
            summed = ast.Call(_name(self.helper("total")), [contrib], [])
        else:
            flag = self.flat.flag(op, i)
            if arg_expr is None:
                shape = operand_expr(arg, self.func.modules)
            elif flag is not None and self.shape_read is not None:
                shape = self.shape_read(self.shape_source(arg))  # in the arm that sums back only
            else:
                shape = arg_expr()
            summed = ast.Call(_name(self.helper("unbroadcast")), [contrib, shape], [])
            if flag is not None:  # g itself where the flag says shapes are one
                summed = ast.IfExp(_name(flag), copy.deepcopy(contrib), summed)
        return ast.UnaryOp(ast.USub(), summed) if negate else summed

    def _summed_back(self, op: ir.Op, i: int) -> bool:
        """Does :meth:`unbroadcast` sum operand ``i``'s contributions to its
        shape (``unbroadcast``, ``total``), as shapes may differ? Not where
        they cannot: there the contribution is used as it is."""
        rule = RULES[op.prim]
        if not (op.prim in BROADCASTING or rule.broadcast):
            return False
        arg = op.args[i]
        if id(op.out) in self.zero_d and op.prim in ELEMENTWISE_RANKS:
            return False  # a 0-d result: every operand is 0-d too (s2s_ad.reverse.ranks)
        others = [a for j, a in enumerate(op.args) if j != i]
        same = self.shapes.get(id(arg))
        # the others are numbers, 0-d values the code makes (ypred - np.log(s) with s a
        # sum), the operand itself or of its shape class: the result has its shape
        if all(self.number(a) or a is arg or (same is not None and self.shapes.get(id(a)) is same)
               for a in others):
            return False
        # the operand has the result's shape (see shape_classes)
        return same is None or self.shapes.get(id(op.out)) is not same

    def _fold(self, contrib: ast.expr) -> ast.expr:
        """``np.log(2.0)`` → ``0.6931471805599453``: a NumPy function of a
        literal is a NumPy float64 scalar, which (unlike a Python float) would
        turn float32 arrays into float64."""
        np_name = self.np

        class Fold(ast.NodeTransformer):
            def visit_Call(self, node):
                self.generic_visit(node)
                f = node.func
                if (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
                        and f.value.id == np_name and len(node.args) == 1 and not node.keywords
                        and isinstance(node.args[0], ast.Constant)
                        and type(node.args[0].value) in (int, float)
                        and f.attr in ("log", "exp", "sqrt", "sin", "cos", "tan", "tanh",
                                       "arctan", "sinh", "cosh", "log1p", "expm1", "sign")):
                    import numpy
                    with numpy.errstate(all="ignore"):
                        value = float(getattr(numpy, f.attr)(node.args[0].value))
                    if numpy.isfinite(value):
                        return ast.Constant(value)
                return node

        return Fold().visit(contrib)

    def accumulate(self, target: str, contrib: ast.expr, first: bool) -> ast.stmt:
        """``target = contrib`` or ``target = target + contrib``: never in place."""
        store = ast.Name(target, ast.Store())
        if first:
            fresh = (isinstance(contrib, ast.Call) and isinstance(contrib.func, ast.Name)
                     and contrib.func.id == self._helper_names.get("spread"))
            if fresh or isinstance(contrib, (ast.BinOp, ast.UnaryOp)):
                self.owned.add(target)
            else:
                self.owned.discard(target)
            return ast.Assign([store], contrib)
        self.owned.add(target)
        if isinstance(contrib, ast.UnaryOp) and isinstance(contrib.op, ast.USub):
            return ast.Assign([store], ast.BinOp(_name(target), ast.Sub(), contrib.operand))
        return ast.Assign([store], ast.BinOp(_name(target), ast.Add(), contrib))

    # -- indexing -----------------------------------------------------------------

    def _basic(self, op: ir.Op, index: tuple) -> bool:
        """No integer-array index: a plain ``dx[idx] += g`` cannot repeat an element."""
        for item in index:
            parts = [item] if item[0] == "op" else [p for p in item[1:] if p is not None] \
                if item[0] == "slice" else []
            for p in parts:
                a = op.args[p[1]]
                if isinstance(a, ir.Value) and a.kind not in ("int", "bool"):
                    return False
        return True

    # -- contributions as expressions (s2s_ad.reverse) ------------------------------

    def expression(self, op: ir.Op, i: int, g: ast.expr, ref) -> tuple[ast.expr, str]:
        """Operand ``i``'s contribution as one expression, and the local
        derivative's text, for the reverse sweep of loops and branches:
        ``ref(v)`` reads a value there (a popped one inside a reverse loop).
        Indexing becomes ``scatter``/``zeroed`` calls, and the accumulation
        ``dv = dv + contribution`` never writes into an array in place."""
        rule = RULES[op.prim]
        needed = _operands_read(op, i)
        # a value of x's shape the reduction's adjoint reads instead of x, if any
        same = self._spread_by_its_use(op) if op.prim in ("np.sum", "np.mean") else None
        if same is not None:
            needed = needed - {0}
        exprs = [ref(a) if k in needed else ast.Constant(None) for k, a in enumerate(op.args)]
        index = op.attrs.get("index")
        if op.prim == "array.getitem":
            idx = _as_value(index_expr(index, exprs))
            return ast.Call(_name(self.helper("scatter")), [g, exprs[0], idx], []), "scatter"
        if op.prim == "array.setitem":
            idx = index_expr(index, exprs)
            base = ref(op.args[0])  # measured only: its shape
            if i == 0:
                return (ast.Call(_name(self.helper("zeroed")), [g, _as_value(idx), base], []),
                        "the overwritten elements get none")
            gathered = ast.Call(_name(self.helper("gather")), [copy.deepcopy(g), _as_value(idx),
                                                               base], [])
            value = op.args[1]
            if id(op) in self.elements:  # one element: g[idx] is the value's adjoint
                contrib = gathered
            elif self.number(value):
                contrib = ast.Call(_name(self.helper("total")), [gathered], [])
            else:
                contrib = ast.Call(_name(self.helper("unbroadcast")), [gathered, exprs[1]], [])
            return contrib, "the assigned elements"
        attrs = {**dict(rule.attrs), **op.attrs}
        if rule.adjoint:
            if op.prim == "np.concatenate":
                contrib = self._concatenate(op, i, g, attrs, exprs)
            elif op.prim == "np.einsum":
                contrib = self._einsum(i, g, attrs, exprs)
            else:
                template = rule.partial_asts[min(i, len(rule.partial_asts) - 1)]
                if rule.variadic:  # the operand's position (np.stack: which slice of g)
                    attrs = {**attrs, "i": i}
                uses_out = any(isinstance(n, ast.Name) and n.id == "out"
                               for n in walk(template))
                if same is not None:  # see _spread_by_its_use: x itself is not read
                    exprs[0] = ast.Constant(None) if same is NO_READ else ref(same)
                contrib = instantiate(template, op.args, op.out, self.func.modules, g=g,
                                      attrs=attrs, exprs=exprs,
                                      out_expr=ref(op.out) if uses_out else None)
                if same is not None:
                    contrib = contrib.args[0]
                contrib = self._helper_calls(contrib)
            text = rule.math or "the vector-Jacobian product"
        else:
            template = rule.partial_asts[i]
            uses_out = any(isinstance(n, ast.Name) and n.id == "out" for n in walk(template))
            local = simplify(instantiate(template, op.args, op.out, self.func.modules,
                                         exprs=exprs, out_expr=ref(op.out) if uses_out else None))
            contrib = ast.BinOp(g, ast.Mult(), local)
            text = ast.unparse(local)
        contrib = simplify(contrib)
        if op.prim in ("pow", "array.pow", "np.square"):  # 2 * x: the factor onto the (smaller) adjoint
            contrib = factor_first(contrib)
        arg = op.args[i]
        return self.unbroadcast(op, i, contrib,
                                (lambda: ref(self.shape_source(arg)))
                                if not self.number(arg) else None), text

    def forward_expr(self, op: ir.Op, expr) -> ast.expr:
        """The forward computation of ``op`` as one expression, operands read
        through ``expr``; a subscript assignment is ``assign(y, index, v)``, a
        copy, so that each version of the array stays what it was."""
        return forward_expr(op, [expr(a) for a in op.args], self.func.modules, self.helper)


def forward_expr(op: ir.Op, exprs: list, modules: dict, helper) -> ast.expr:
    """The forward computation of ``op`` over the operand expressions
    ``exprs``; ``helper(base)`` names a module-level helper (``assign``)."""
    rule = RULES[op.prim]
    index = op.attrs.get("index")
    if op.prim == "array.getitem":
        return ast.Subscript(exprs[0], index_expr(index, exprs), ast.Load())
    if op.prim == "array.setitem":
        return ast.Call(_name(helper("assign")),
                        [exprs[0], _as_value(index_expr(index, exprs)), exprs[1]], [])
    e = instantiate(forward_template(op), op.args, None, modules,
                    attrs={**dict(rule.attrs), **op.attrs}, given=op.attrs, exprs=exprs)
    if op.prim.startswith("own.") or op.prim == "list.index_array":
        e = helper_calls(e, helper)  # s2s-ad's own helpers, under the module's names
    return e


def helper_calls(expr: ast.expr, helper) -> ast.expr:
    """``expr`` (an instantiated template) with its calls to the generated
    module's helpers under their names there (``helper(base)`` names one,
    defining it on first use)."""
    for base in TEMPLATE_HELPERS:
        if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == base
               for n in walk(expr)):
            expr = _rename_calls(expr, base, helper(base))
    return expr


def _operands_read(op: ir.Op, i: int) -> set[int]:
    """Positions of the operands operand ``i``'s contribution may read."""
    rule = RULES[op.prim]
    idx = {k for k, _ in index_operands(op.attrs.get("index", ()))}
    if op.prim == "array.getitem":
        return {0} | idx
    if op.prim == "array.setitem":
        return idx | ({1} if i == 1 else set())
    if rule.variadic or op.prim in ("np.concatenate", "np.einsum"):
        return set(range(len(op.args)))  # (their adjoints read every operand's expression)
    # an adjoint rule reads the operands its template names (np.roll's, none)
    template = rule.partial_asts[min(i, len(rule.partial_asts) - 1)]
    if template is None:
        return set(range(len(op.args)))
    names = {n.id for n in walk(template) if isinstance(n, ast.Name)}
    out = {k for k, p in enumerate(("x", "y")) if p in names}
    return out | {k for k in range(len(op.args)) if f"x{k}" in names}


def _as_value(idx: ast.expr) -> ast.expr:
    """A subscript as an ordinary expression: ``1:`` becomes ``slice(1, None)``."""
    def one(e):
        if isinstance(e, ast.Slice):
            parts = [p if p is not None else ast.Constant(None) for p in (e.lower, e.upper, e.step)]
            while len(parts) > 2 and isinstance(parts[-1], ast.Constant) and parts[-1].value is None:
                parts.pop()
            return ast.Call(_name("slice"), parts, [])
        return e
    if isinstance(idx, ast.Tuple):
        return ast.Tuple([one(e) for e in idx.elts], ast.Load())
    return one(idx)


TEMPLATE_HELPERS = ("others_product", "matmul_adjoint", "dot_adjoint", "spread",
                    "extreme_adjoint", "cumsum_adjoint", "cumprod_adjoint", "repeat_adjoint",
                    "tile_adjoint", "diag_adjoint", "trace_adjoint", "stacked_part", "stacked_back",
                    "inner_adjoint", "solve_adjoint", "unbroadcast", "tensordot_adjoint",
                    "cholesky_adjoint", "sort_adjoint", "take_adjoint",
                    "take_along_axis_adjoint", "diagonal_adjoint", "pad_adjoint",
                    "cross_product", "rolled", "moved", "eye_matrix", "astype_like", "total",
                    "array_sum", "own", "float_zeros", "seeded", "scatter", "index_array_of"
                    ) + tuple(MORE_HELPERS)
"""Helpers rule templates call by name."""


ELEMENTWISE_CALLS = frozenset({p[len("np."):] for p in SAME_SHAPE if p.startswith("np.")}
                              | {"power", "where"})
"""NumPy functions whose result has the broadcast shape of their operands."""


def _elementwise_reads(expr: ast.expr, values: dict, np_name: str) -> list | None:
    """The values (of ``values``, by name) ``expr`` reads, if it reads
    nothing else and computes with them elementwise only; else None."""
    read = []
    for n in walk(expr):
        if isinstance(n, ast.Call):
            f = n.func
            if not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
                    and f.value.id == np_name and f.attr in ELEMENTWISE_CALLS) or n.keywords:
                return None
        elif isinstance(n, ast.Name):
            if n.id == np_name:
                continue
            v = values.get(n.id)
            if v is None:
                return None
            read.append(v)
        elif isinstance(n, ast.Attribute):
            if not (isinstance(n.value, ast.Name) and n.value.id == np_name):
                return None
        elif not isinstance(n, (ast.BinOp, ast.UnaryOp, ast.Compare, ast.Constant, ast.operator,
                                ast.unaryop, ast.cmpop, ast.expr_context)):
            return None
    return read


def _shaped_like(expr: ast.expr, cls, values: dict, shapes: dict, np_name: str) -> bool:
    """Does ``expr`` (a local derivative) provably have the shape of the
    values of shape class ``cls``? It must read at least one of them, and
    otherwise only scalars, through elementwise operations."""
    read = _elementwise_reads(expr, values, np_name)
    if read is None:
        return False
    full = False
    for v in read:
        if cls is not None and shapes.get(id(v)) is cls and v.kind == "array":
            full = True
        elif not _scalar(v):
            return False
    return full


def _covers(expr: ast.expr, op: ir.Op, i: int, values: dict, np_name: str) -> bool:
    """Does ``expr`` (operand ``i``'s local derivative in ``op``) broadcast
    with operand ``i`` to the shape of ``op``'s result? It does where it
    reads, elementwise, the result or every other operand not a scalar."""
    read = _elementwise_reads(expr, values, np_name)
    if read is None:
        return False
    names = {v.name for v in read}
    return op.out.name in names or all(
        a.name in names for j, a in enumerate(op.args)
        if j != i and isinstance(a, ir.Value) and not _scalar(a))


def _rename_names(expr: ast.expr, old: str, new: str) -> ast.expr:
    for n in walk(expr):
        if isinstance(n, ast.Name) and n.id == old:
            n.id = new
    return expr


def _rename_calls(expr: ast.expr, old: str, new: str) -> ast.expr:
    for n in walk(expr):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == old:
            n.func.id = new
    return expr
