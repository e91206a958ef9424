"""Lists grown at run time in the reverse sweep: one adjoint list per list.

Contract: the versions of a list grown at run time (a ``list.new`` or
``list.fill`` op, a helper's list result or a list item of its tuple, the
``list.append`` and ``list.set`` ops after it, and the loop-carried values,
loop results and φs between them; :mod:`s2s_ad.frontend.runtime_lists`,
:mod:`s2s_ad.frontend.list_writes`) are one Python list
in the generated code, so :func:`families` groups them and gives the group
one forward name and one adjoint name. The reverse sweep

* creates the adjoint once, after the forward pass, with the list's final
  length: ``dxs = [0.0] * len(xs)`` (NumPy code: ``np.zeros_like`` of each
  item, so an item nothing reads still gets an adjoint of its shape);
* adds the adjoint of ``xs[i]`` into ``dxs[i]`` (as for a list parameter);
* reverses ``xs.append(v)`` by ``dv = dxs.pop()``: from the end backwards the
  adjoint list always has the length the list had at that point, so a
  negative index (``xs[-1]``) names the same item backwards as forwards;
* reverses ``xs = [a, b]`` by ``da = dxs[0]; db = dxs[1]``;
* reverses ``xs[k] = v`` by ``dv = dxs[k]; dxs[k] = 0.0`` (the item before the
  write reaches nothing the items after it reach), and ``xs = [c] * n`` by
  ``dc = sum(dxs)``. In NumPy code, where a list has such writes, an item's
  adjoint read as a value's (``da = dxs[0]``, ``dv = dxs.pop()``) is
  ``unbroadcast(dxs[0], a)``: the ``0.0`` a write left is zeros of ``a``'s
  shape (the item before the write may have had another), an array of that
  shape is itself. A pop is then a statement of its own (``dv_item =
  dxs.pop()``), as the reader of generated code takes pops.

Nothing of the list goes on the tape: the reads the rules need (``xs[i]``
used in a product) are values of their own, taped where they are read inside
a loop (never read again from the list, which a later ``xs[k] = v`` may have
changed: :mod:`s2s_ad.reverse.structured` recomputes no read of such a list).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from s2s_ad import ir
from s2s_ad.emit.code import Stmt, call as _call
from s2s_ad.rules.templates import copy_expr
from s2s_ad.syntax_walk import walk


@dataclass(eq=False)
class ListFamily:
    root: ir.Value
    """The value the ``list.new`` op defines."""
    members: list[ir.Value] = field(default_factory=list)
    adj: str = ""
    """The name of the adjoint list, once the sweep made it."""
    home: ir.Region | None = None
    """The region whose reverse code makes the adjoint list: the outermost
    one defining a version of the list itself (a list a branch made and a
    φ carries past the ``if`` has its adjoint before the ``if``)."""
    written: bool = False
    """Some version replaces an item (``list.set``), whose reverse leaves
    ``0.0`` in the item's place."""

    @property
    def name(self) -> str:
        return self.root.name


def families(func: ir.Function) -> dict[int, ListFamily]:
    """id(version of a run-time list) -> its family."""
    parent: dict[int, int] = {}
    values: dict[int, ir.Value] = {}
    roots: dict[int, ir.Value] = {}

    def find(k: int) -> int:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    def add(v) -> bool:
        if not (isinstance(v, ir.Value) and v.kind == "list"):
            return False
        if id(v) not in parent:
            parent[id(v)] = id(v)
            values[id(v)] = v
        return True

    def join(a, b) -> None:
        if add(a) and add(b):
            parent[find(id(a))] = find(id(b))

    params = {id(p.value) for p in func.params}
    for node in ir.walk(func.body):
        if isinstance(node, ir.Op):
            if node.prim in ("list.new", "list.fill") \
                    or (node.callee is not None or node.prim == "item") \
                    and node.out.kind == "list":
                # (a helper's result: a list of any length it grew)
                add(node.out)
                roots[id(node.out)] = node.out
            elif node.prim in ("list.append", "list.set"):
                join(node.out, node.args[0])
        elif isinstance(node, ir.If):
            for o, a, b in zip(node.outs, node.then.yields, node.orelse.yields):
                join(o, a)
                join(o, b)
        else:
            for c, init, y, o in zip(node.carried, node.inits, node.body.yields, node.outs):
                join(c, init)
                join(c, y)
                join(o, c)
    out: dict[int, ListFamily] = {}
    by_root: dict[int, ListFamily] = {}
    for k, root in roots.items():
        by_root[find(k)] = ListFamily(root)
    sets = {find(id(node.out)) for node in ir.walk(func.body)
            if isinstance(node, ir.Op) and node.prim == "list.set"}
    for k, v in values.items():
        if k in params:
            continue
        fam = by_root.get(find(k))
        if fam is None:
            continue
        fam.members.append(v)
        fam.written = fam.written or find(k) in sets
        out[k] = fam
    _place(func.body, list({id(f): f for f in out.values()}.values()))
    return out


def _place(r: ir.Region, homeless: list) -> None:
    """Set each family's ``home``, outermost regions first."""
    for fam in homeless:
        ids = {id(m) for m in fam.members}
        if any(id(v) in ids for node in r.ops for v in ir.defined(node)):
            fam.home = r
    homeless = [f for f in homeless if f.home is None]
    for node in r.ops:
        if homeless and not isinstance(node, ir.Op):
            for inner in node.regions:
                _place(inner, homeless)


def spread(sweep) -> None:
    """A family is active as a whole when any version is: every append must
    be popped for the adjoint list to keep its length, and every version
    must run in the forward pass."""
    for fam in {id(f): f for f in sweep.lists.values()}.values():
        ids = {id(m) for m in fam.members}
        if ids & sweep.act:
            sweep.act |= ids
            sweep.keep |= ids


def adjoints(sweep) -> list:
    """``dxs = [0.0] * len(xs)`` for each active family, made after the
    forward pass (the list has its final length there)."""
    out = []
    for fam in {id(f): f for f in sweep.lists.values()}.values():
        if id(fam.root) not in sweep.act:
            continue
        seed = next((sweep.adj[id(m)] for m in fam.members if id(m) in sweep.adj), None)
        fam.adj = sweep.namer.fresh(f"d{fam.name}")
        for m in fam.members:
            sweep.adj[id(m)] = fam.adj
        if fam.home is not sweep.func.body:
            continue  # a helper's list returned inside a loop or branch: region_adjoints
        xs = sweep.ref(fam.root)
        if seed is not None:
            # a helper returning the list: its adjoint starts as the caller's
            # (a copy: the reverse of each append pops from it)
            out.append(seeded(fam.adj, seed, f"the list {fam.name}"))
            continue
        out.append(_zeros(sweep, fam, xs))
    return out


def seeded(adj: str, seed: str, what: str) -> Stmt:
    """``dxs = list(seed)``: a returned list's adjoint starts as a copy of the
    cotangent the caller passed."""
    copy = _call("list", [ast.Name(seed, ast.Load())])
    return Stmt(ast.Assign([ast.Name(adj, ast.Store())], copy),
                f"the adjoint of {what}, returned: the caller's", role="seed")


def zeros_of(sweep, xs: ast.expr) -> ast.expr:
    """``[0.0] * len(xs)`` (NumPy: ``np.zeros_like`` of each item)."""
    if sweep.arrays is not None:
        item = sweep.namer.fresh("item")
        return ast.ListComp(
            _call(f"{sweep.arrays.np}.zeros_like", [ast.Name(item, ast.Load())]),
            [ast.comprehension(ast.Name(item, ast.Store()), xs, [], 0)])
    return ast.BinOp(ast.List([ast.Constant(0.0)], ast.Load()), ast.Mult(), _call("len", [xs]))


def _zeros(sweep, fam: ListFamily, xs: ast.expr) -> Stmt:
    """``dxs = [0.0] * len(xs)``: :func:`zeros_of`."""
    return Stmt(ast.Assign([ast.Name(fam.adj, ast.Store())], zeros_of(sweep, xs)),
                f"the adjoint of the list {fam.name}, an item per item", role="zero")


def region_adjoints(sweep, r: ir.Region) -> list:
    """The adjoint of each list made in ``r`` (a loop's body or a branch: a
    call's result, ``[c] * n``, a sorted list), made where ``r``'s reverse
    code starts: each run of ``r`` has a list of its own, which nothing
    outside ``r`` reads."""
    out = []
    for fam in {id(f): f for f in sweep.lists.values()}.values():
        if fam.adj and fam.home is r:
            out.append(_zeros(sweep, fam, sweep.ref(fam.root)))
    return out


def _summed_back(sweep, fam: ListFamily, v) -> bool:
    """Is an item of ``fam``'s adjoint list, read as ``v``'s adjoint, read
    through ``unbroadcast(item, v)``? In NumPy code, where the reverse of an
    item's replacement left ``0.0`` in its place (a number: the item before
    the write may have had another shape): zeros of ``v``'s shape there, the
    item itself where it is an array of that shape already."""
    return sweep.arrays is not None and fam.written and isinstance(v, ir.Value) \
        and not sweep.arrays.number(v)


def _item_adjoint(sweep, fam: ListFamily, v, item: ast.expr) -> ast.expr:
    """``item``, an item of the adjoint list read as ``v``'s adjoint
    (:func:`_summed_back`)."""
    if not _summed_back(sweep, fam, v):
        return item
    return _call(sweep.arrays.helper("unbroadcast"), [item, sweep.ref(v)])


def reverse(sweep, op: ir.Op) -> list:
    """The reverse of ``list.new``, ``list.append``, ``list.fill`` or ``list.set``."""
    fam = sweep.lists.get(id(op.out))
    if fam is None or not fam.adj:
        return []
    whole = ast.Name(fam.adj, ast.Load())
    out = []
    if op.prim == "list.set":
        # ys[k] = v: v's adjoint is the item's; the item before the write
        # gets none from the items after it
        seq, index, v = op.args
        k = sweep.ref(index)
        if isinstance(v, ir.Value) and id(v) in sweep.act:
            item = _item_adjoint(sweep, fam, v, ast.Subscript(whole, k, ast.Load()))
            out += sweep.accumulate(v, item, False,
                                    f"line {op.loc.line}: {op.text}, ∂/∂{v.name} = 1", op, 2, "1")
        zero = ast.Assign([ast.Subscript(ast.Name(fam.adj, ast.Load()), copy_expr(k),
                                         ast.Store())], ast.Constant(0.0))
        out.append(Stmt(zero, f"line {op.loc.line}: {op.text}, backwards: the item overwritten",
                        op, 0, "0", fam.adj))
        return out
    if op.prim == "list.fill":
        c = op.args[0]
        if isinstance(c, ir.Value) and id(c) in sweep.act:
            out += sweep.accumulate(c, _call("sum", [whole]), False,
                                    f"line {op.loc.line}: {op.text}, ∂/∂{c.name} = 1 for every "
                                    "item", op, 0, "1")
        return out
    if op.prim == "list.append":
        v = op.args[1]
        pop = _call(f"{fam.adj}.pop", [])
        comment = f"line {op.loc.line}: {op.text}, backwards: the item's adjoint"
        if isinstance(v, ir.Value) and id(v) in sweep.act:
            item = pop
            if _summed_back(sweep, fam, v):  # the pop a statement of its own, as read back
                popped = sweep.namer.fresh(f"d{v.name}_item")
                out.append(Stmt(ast.Assign([ast.Name(popped, ast.Store())], pop), comment, op))
                item = _item_adjoint(sweep, fam, v, ast.Name(popped, ast.Load()))
            out += sweep.accumulate(v, item, False, comment, op, 1, "1")
        else:
            out.append(Stmt(ast.Expr(pop), comment, op))
        return out
    for k, v in enumerate(op.args):
        if isinstance(v, ir.Value) and id(v) in sweep.act:
            item = _item_adjoint(sweep, fam, v,
                                 ast.Subscript(whole, ast.Constant(k), ast.Load()))
            out += sweep.accumulate(v, item, False, f"line {op.loc.line}: {op.text}: item {k}",
                                    op, k, "1")
    return out


def reverse_sum(sweep, op: ir.Op, g: ast.expr) -> list:
    """``dxs[:] = [d + g for d in dxs]``: the adjoint of ``sum(xs)`` added to
    every item's (in place: a list parameter's adjoint is returned as is)."""
    seq = op.args[0]
    adj = sweep.adj[id(seq)]
    d = sweep.namer.fresh("d")
    value = ast.ListComp(ast.BinOp(ast.Name(d, ast.Load()), ast.Add(), g),
                         [ast.comprehension(ast.Name(d, ast.Store()), ast.Name(adj, ast.Load()),
                                            [], 0)])
    target = ast.Subscript(ast.Name(adj, ast.Load()), ast.Slice(None, None, None), ast.Store())
    return [Stmt(ast.Assign([target], value),
                 f"line {op.loc.line}: {op.text}, ∂/∂{seq.name}[k] = 1 for every k", op, 0, "1",
                 adj)]


def fuse_sum(sweep, stmts: list) -> None:
    """``dxs = [0.0] * len(xs)`` followed, with nothing reading or writing
    ``dxs`` between, by ``dxs[:] = [d + g for d in dxs]`` (the adjoint of
    ``sum(xs)`` first): one statement, ``dxs = [g] * len(xs)``, at the second
    one's place. Top-level statements of the reverse sweep only."""
    names = {f.adj for f in sweep.lists.values() if f.adj}
    for name in names:
        start = next((k for k, s in enumerate(stmts) if isinstance(s, Stmt)
                      and s.role == "zero" and isinstance(s.node, ast.Assign)
                      and _target(s.node) == name), None)
        if start is None:
            continue
        for k in range(start + 1, len(stmts)):
            s = stmts[k]
            node = s.node if isinstance(s, Stmt) else None
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Subscript) \
                    and isinstance(node.targets[0].slice, ast.Slice) \
                    and _target(node) == name and isinstance(node.value, ast.ListComp) \
                    and isinstance(node.value.generators[0].iter, ast.Name) \
                    and node.value.generators[0].iter.id == name:
                g = node.value.elt.right
                size = stmts[start].node.value.right
                if sweep.arrays is not None or not isinstance(size, ast.Call):
                    break
                s.node = ast.Assign([ast.Name(name, ast.Store())],
                                    ast.BinOp(ast.List([g], ast.Load()), ast.Mult(), size))
                del stmts[start]
                break
            if name in {n.id for n in walk(node or ast.Pass())
                        if isinstance(n, ast.Name)} or not isinstance(s, Stmt):
                break


def _target(node: ast.Assign) -> str | None:
    t = node.targets[0]
    while isinstance(t, ast.Subscript):
        t = t.value
    return t.id if isinstance(t, ast.Name) else None


