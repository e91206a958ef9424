"""Names bound to a piece of an array written in place, with loops or branches.

Contract: :func:`problem` decides, from the source, whether the names bound
to a piece of an array ``A`` that the function writes in place (``x = A[i]``,
``r, s = A[0], A[1]``, ``x = A[i][1:]``, ``x = A[i] if c else z``, ``(x :=
A[i])``, ``for row in A``, and names bound to those in turn) are read only
where NumPy's view holds what the SSA form reads: the values of ``A`` when
the name was bound. In NumPy ``x = A[i]`` is a view, so a write into ``A``
between the binding and a read of ``x`` changes what the read sees, while
s2s-ad's SSA value ``x`` keeps the row as it was. It returns None when, on
every path through the function (loops' back edges and branches included),
no write into ``A`` can run between a binding of such a name and a read of
it; else (the node, why not): the read that may see a write, or a place the
piece goes that the analysis cannot follow (a list, a nested function, a
method that may keep it).

The analysis is conservative: any write into ``A`` (``A[j] = v``,
``A[j] += v``, ``A += v``) counts as touching every piece bound, whatever
the indices. The lowering keeps ``A`` the sole owner of its array
(:func:`s2s_ad.frontend.numpy_index._sole_owner`), so no other name writes
into it; a name bound to a piece is never written through (``x[0] = v`` and
``x += v`` are refused where ``x`` does not own a new array).

Accepted (GradBench's LSTM: the call reads ``x`` before its writes, and the
next iteration, like the ``return``, reads the row bound after them)::

    s2 = np.copy(s)
    for i in range(0, len(s), 2):
        (s2[i], s2[i + 1]) = lstm(w[i], w[i + 1], s[i], s[i + 1], x)
        x = s2[i]
    return x * w2[1] + w2[2], s2

Refused at the read of ``r`` (the write of line 3 reaches it)::

    r = y[0]
    for k in range(n):
        y[0] = r * a[k]      # reads r after the previous iteration's write
"""

from __future__ import annotations

import ast

from s2s_ad.frontend.int_names import int_names, is_int, one_axis
from s2s_ad.rules.numpy import einsum_keeps_an_index
from s2s_ad import syntax_walk
from s2s_ad.syntax_walk import walk

SCALAR_ATTRS = frozenset({"shape", "size", "ndim", "dtype", "nbytes", "itemsize"})
FRESH_METHODS = frozenset({
    "sum", "mean", "prod", "max", "min", "copy", "dot", "std", "var", "cumsum", "cumprod",
    "argsort", "argmax", "argmin", "trace", "take", "astype", "item", "tolist", "clone",
    "numel", "dim", "pow", "exp", "log", "sqrt", "abs", "norm", "any", "all"})
"""Methods of an array (NumPy's or torch's) whose result is a new value,
never the array or a view of it; any other method of a piece of ``A`` is
taken to return a view."""
VIEW_FUNCTIONS = frozenset({
    "swapaxes", "moveaxis", "diagonal", "diag", "flip", "fliplr", "flipud", "rot90", "real",
    "imag", "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_to", "broadcast_arrays",
    "split", "array_split", "hsplit", "vsplit", "dsplit", "permute_dims", "matrix_transpose",
    "unstack", "reshape", "transpose", "ravel", "squeeze", "expand_dims", "asarray",
    "asanyarray"})
"""NumPy functions whose result may be (or hold) a view of an argument: a
piece of ``A`` when given one, whatever ``makes_new`` says of them."""


def _einsum_view(call: ast.Call) -> bool:
    """``np.einsum(subscripts, A)`` of one operand keeping an index: a view of ``A``."""
    head = call.args[0] if call.args else None
    return len(call.args) == 2 and einsum_keeps_an_index(
        head.value if isinstance(head, ast.Constant) else None)


def parents_of(tree: ast.AST) -> dict[int, ast.AST]:
    """id(node) -> the node it is a child of."""
    return syntax_walk.parents(tree)


def numpy_made(tree: ast.FunctionDef, name: str) -> bool:
    """Every binding of ``name`` but ``name op= ...`` is a NumPy call
    (``np.zeros_like(x)``): it holds an array or a NumPy number, never a list."""
    binds = [n for n in walk(tree) if isinstance(n, ast.Name) and n.id == name
             and not isinstance(n.ctx, ast.Load)]
    parents = parents_of(tree)
    for b in binds:
        holder = parents.get(id(b))
        if isinstance(holder, ast.AugAssign) and holder.target is b:
            continue
        value = holder.value if isinstance(holder, ast.Assign) and holder.targets == [b] else None
        if isinstance(value, ast.BinOp) and isinstance(value.right, ast.Constant) \
                and type(value.right.value) is float:
            value = value.left  # ``np.zeros_like(x) + 0.0``
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
                and isinstance(value.func.value, ast.Name)
                and value.func.value.id in ("np", "numpy")):
            return False
    return bool(binds) and not any(isinstance(a, ast.arg) and a.arg == name for a in walk(tree))


def problem(tree: ast.FunctionDef, name: str, makes_new, globals_: dict | None = None):
    """None when every name bound to a piece of ``name``'s array is read only
    while that piece is unchanged; else (the node, why not). ``makes_new(call,
    k)``: the call returns a new value, never its argument ``k`` or a view of
    it (:meth:`s2s_ad.frontend.aliasing.InPlaceNames.makes_new`)."""
    pieces = _Pieces(tree, name, makes_new, globals_)
    if not pieces.views:
        return None
    found = pieces.escape()
    if found is not None:
        return found
    flow = _Flow(name, pieces)
    flow.block(tree.body, _State())
    return flow.found


class _Pieces:
    """Which expressions may share memory with ``A`` (``name``), and which
    names may hold such a piece (``views``), from the whole function."""

    def __init__(self, tree, name, makes_new, globals_):
        self.tree, self.name, self.makes_new = tree, name, makes_new
        self.parents = parents_of(tree)
        self.globals = globals_
        self._ints = None  # (the int names, whether A has one axis), when first asked
        self.views: set[str] = set()
        while True:
            self.memo: dict[int, bool] = {}
            found = {n for target, value in _bindings(tree) if self.aliases(value)
                     for n in _names(target)}
            if found <= self.views:
                break
            self.views |= found

    def element(self, index) -> bool:
        """``A[index]`` is an element of an array of one axis."""
        if self._ints is None:
            ints = int_names(self.tree, self.globals)
            self._ints = (ints, one_axis(self.tree, self.name, ints))
        return self._ints[1] and is_int(index, self._ints[0])

    def aliases(self, node) -> bool:
        """``node`` may be (a view of) ``A``'s array, or hold one."""
        if node is None:
            return False
        key = id(node)
        if key not in self.memo:
            self.memo[key] = False  # (no node contains itself)
            self.memo[key] = self._aliases(node)
        return self.memo[key]

    def _aliases(self, node) -> bool:
        if isinstance(node, ast.Name):
            return node.id == self.name or node.id in self.views
        if isinstance(node, ast.Subscript):
            if isinstance(node.value, ast.Name) and node.value.id == self.name \
                    and self.element(node.slice):
                return False  # an element of an array of one axis: a NumPy scalar, a copy
            return self.aliases(node.value)
        if isinstance(node, ast.Attribute):
            return node.attr not in SCALAR_ATTRS and self.aliases(node.value)
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and self.aliases(f.value):
                return f.attr not in FRESH_METHODS
            args = [(k, a) for k, a in enumerate(node.args)] + \
                [(None, kw.value) for kw in node.keywords]
            view = isinstance(f, ast.Attribute) and (f.attr in VIEW_FUNCTIONS or f.attr == "einsum"
                                                     and _einsum_view(node))
            return any(self.aliases(a) and (view or not self.makes_new(node, k))
                       for k, a in args)
        if isinstance(node, ast.IfExp):
            return self.aliases(node.body) or self.aliases(node.orelse)
        if isinstance(node, ast.NamedExpr):
            return self.aliases(node.value)
        if isinstance(node, ast.Starred):
            return self.aliases(node.value)
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return any(self.aliases(e) for e in node.elts)
        if isinstance(node, ast.Dict):
            return any(self.aliases(v) for v in node.values)
        if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            return self.aliases(node.elt)
        if isinstance(node, ast.DictComp):
            return self.aliases(node.value)
        return False

    def escape(self):
        """The first place a piece of ``A`` goes that the flow analysis does
        not follow: (node, why), or None."""
        for node in walk(self.tree):
            if isinstance(node, (ast.FunctionDef, ast.Lambda)) and node is not self.tree:
                for n in walk(node):
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) \
                            and n.id in self.views:
                        return n, (f"`{n.id}` may hold a piece of `{self.name}` (a view), and "
                                   "a nested function reads it when it is called; pass it "
                                   "as an argument, or bind a copy (`np.copy(...)`)")
            if not isinstance(node, ast.expr) or isinstance(node, ast.Name) \
                    and not isinstance(node.ctx, ast.Load) or not self.aliases(node):
                continue
            why = self._goes(node)
            if why is not None:
                return node, why
        return None

    def _goes(self, node):
        """Why the piece ``node`` cannot be followed where it goes (None: it
        can: a new value is made of it, it is bound to names, copied into an
        array, returned, or goes on inside a larger piece checked itself)."""
        parent = self.parents.get(id(node))
        if isinstance(parent, ast.keyword):
            parent = self.parents.get(id(parent))
        if isinstance(parent, ast.Call) and node is not parent.func \
                and self._local_method(parent.func) and not self.makes_new(
                    parent, next((k for k, a in enumerate(parent.args) if a is node), None)):
            # (a function returns what it keeps: its result is followed as a piece)
            return (f"a piece of `{self.name}` (a view) is passed to "
                    f"`{ast.unparse(parent.func)}`, which may keep it; pass a copy "
                    "(`np.copy(...)`)")
        if isinstance(parent, (ast.Assign, ast.AugAssign, ast.AnnAssign)) \
                and parent.value is node:
            targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
            for t in targets:
                for sub in _stores(t):
                    base = sub.value
                    while isinstance(base, ast.Subscript):
                        base = base.value
                    if not isinstance(base, ast.Name) or _container(self.tree, base.id):
                        return (f"a piece of `{self.name}` (a view) is stored into "
                                f"`{ast.unparse(sub)}`, which may be a list that keeps it; "
                                "store a copy (`np.copy(...)`)")
            if isinstance(parent, ast.AugAssign) and isinstance(node, (ast.List, ast.Tuple)):
                return (f"a list holding a piece of `{self.name}` (a view) is added to "
                        f"`{ast.unparse(parent.target)}`; add a copy (`np.copy(...)`)")
        return None

    def _local_method(self, f) -> bool:
        """``xs.append``: a method of a value of the function (not of a
        module, nor of a piece of ``A``), which may keep its argument."""
        if not isinstance(f, ast.Attribute) or self.aliases(f.value):
            return False
        root = f.value
        while isinstance(root, (ast.Attribute, ast.Subscript, ast.Call)):
            root = root.func if isinstance(root, ast.Call) else root.value
        return isinstance(root, ast.Name) and root.id in _local_names(self.tree)


def _local_names(tree) -> set:
    return {n.id for n in walk(tree) if isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Store)} | {a.arg for a in walk(tree.args)
                                                 if isinstance(a, ast.arg)}


def _container(tree, name: str) -> bool:
    """``name`` may hold a list, tuple or dict (a binding to a display, a
    comprehension, ``[c] * n``, ``list(...)``, ``dict(...)``), which would keep
    an array stored into it; arrays copy what is stored."""
    for target, value in _bindings(tree):
        if name not in _names(target):
            continue
        if isinstance(value, ast.BinOp):
            value = value.left
        if isinstance(value, (ast.List, ast.Tuple, ast.Dict, ast.ListComp, ast.DictComp)) or (
                isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                and value.func.id in ("list", "dict", "tuple")):
            return True
    return False


def _bindings(tree):
    """(target, value) for every binding of names in ``tree``: an assignment
    (element by element where a tuple is unpacked from a tuple), ``:=``, a
    ``for`` or a comprehension's target (bound to an item of its iterable:
    ``value`` is the iterable, whose items are pieces where it is one)."""
    for node in walk(tree):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                yield from _pairs(t, node.value)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            yield from _pairs(node.target, node.value)
        elif isinstance(node, ast.NamedExpr):
            yield node.target, node.value
        elif isinstance(node, (ast.For, ast.comprehension)):
            yield node.target, node.iter


def _pairs(target, value):
    if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) \
            and len(target.elts) == len(value.elts) \
            and not any(isinstance(e, ast.Starred) for e in target.elts + value.elts):
        for t, v in zip(target.elts, value.elts):
            yield from _pairs(t, v)
    else:
        yield target, value


def _names(target) -> list[str]:
    return [n.id for n in walk(target) if isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Store)]


def _stores(target):
    """The subscripts a target stores into."""
    if isinstance(target, ast.Subscript):
        yield target
    elif isinstance(target, (ast.Tuple, ast.List)):
        for e in target.elts:
            yield from _stores(e)
    elif isinstance(target, ast.Starred):
        yield from _stores(target.value)


class _State:
    """At a point of the function: the names that may hold a piece of ``A``
    (their binding's line) and those of them a write into ``A`` may have
    reached since (the write's line)."""

    def __init__(self, bound=None, dirty=None):
        self.bound: dict[str, tuple] = dict(bound or {})
        self.dirty: dict[str, int] = dict(dirty or {})

    def key(self):
        return frozenset(self.bound), frozenset(self.dirty)

    def copy(self) -> "_State":
        return _State(self.bound, self.dirty)


def _join(*states) -> "_State | None":
    live = [s for s in states if s is not None]
    if not live:
        return None
    out = live[0].copy()
    for s in live[1:]:
        for k, v in s.bound.items():
            out.bound.setdefault(k, v)
        for k, v in s.dirty.items():
            out.dirty.setdefault(k, v)
    return out


class _Flow:
    """Program order through the statements: ``block`` returns the state
    after a block (None where every path leaves it by ``return``, ``raise``,
    ``break`` or ``continue``); the first read of a name a write may have
    reached is kept in ``found``."""

    def __init__(self, name: str, pieces: _Pieces):
        self.name, self.pieces = name, pieces
        self.found = None
        self.loops: list[tuple[list, list]] = []  # (breaks, continues) of each loop

    def block(self, stmts, st):
        for s in stmts:
            if st is None:
                return None
            st = self.stmt(s, st)
        return st

    def stmt(self, s, st):
        if isinstance(s, (ast.Assign, ast.AnnAssign)):
            if s.value is None:
                return st
            self.reads(s.value, st)
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            for t in targets:
                for tt, v in _pairs(t, s.value):
                    self.store(tt, v, st, s)
            return st
        if isinstance(s, ast.AugAssign):
            self.reads(s.value, st)
            self.reads(s.target, st, load=True)
            if self.writes_into(s.target):
                self.write(st, s)
            elif isinstance(s.target, ast.Name):
                self.bind(s.target.id, None, st, s)
            return st
        if isinstance(s, (ast.Expr, ast.Assert)):
            for child in ast.iter_child_nodes(s):
                self.reads(child, st)
            return st
        if isinstance(s, (ast.Return, ast.Raise)):
            for child in ast.iter_child_nodes(s):
                self.reads(child, st)
            return None
        if isinstance(s, ast.If):
            self.reads(s.test, st)
            return _join(self.block(s.body, st.copy()), self.block(s.orelse, st.copy()))
        if isinstance(s, (ast.For, ast.While)):
            return self.loop(s, st)
        if isinstance(s, ast.Break):
            self.loops[-1][0].append(st)
            return None
        if isinstance(s, ast.Continue):
            self.loops[-1][1].append(st)
            return None
        if isinstance(s, ast.With):
            for item in s.items:
                self.reads(item.context_expr, st)
            return self.block(s.body, st)
        if isinstance(s, ast.Match):
            self.reads(s.subject, st)
            outs = [st.copy()]
            for case in s.cases:
                entry = st.copy()
                if case.guard is not None:
                    self.reads(case.guard, entry)
                outs.append(self.block(case.body, entry))
            return _join(*outs)
        if isinstance(s, ast.Try):
            return _join(self.block(s.body, st.copy()), *[self.block(h.body, st.copy())
                                                          for h in s.handlers])
        return st  # pass, a nested def (its reads are refused: _Pieces.escape), ...

    def loop(self, s, st):
        head = st.copy()
        while True:
            self.loops.append(([], []))
            entry = head.copy()
            if isinstance(s, ast.For):
                self.reads(s.iter, entry)
                for tt, v in _pairs(s.target, s.iter):
                    self.store(tt, v, entry, s, item=True)
            else:
                self.reads(s.test, entry)
            end = self.block(s.body, entry.copy())
            breaks, continues = self.loops.pop()
            new = _join(st, end, *continues)
            if new.key() == head.key():
                break
            head = new
        after = head.copy()
        if isinstance(s, ast.While):
            self.reads(s.test, after)
        out = _join(after, *breaks)
        return self.block(s.orelse, out) if s.orelse else out

    def reads(self, node, st, load=False):
        """Every name read in the expression ``node`` (bindings by ``:=``
        applied); ``load``: ``node`` is a target read first (``x[i] += v``)."""
        if node is None:
            return
        for n in walk(node):
            if isinstance(n, ast.Name) and (isinstance(n.ctx, ast.Load) or load) \
                    and n.id in st.dirty and self.found is None:
                self.found = (n, self.why(n.id, st))
        for n in walk(node):
            if isinstance(n, ast.NamedExpr):
                self.bind(n.target.id, n.value, st, n)
            elif isinstance(n, ast.comprehension):
                for name in _names(n.target):
                    self.bind(name, n.iter, st, n.iter)

    def store(self, target, value, st, stmt, item=False):
        if isinstance(target, ast.Name):
            self.bind(target.id, value, st, stmt)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for e in target.elts:
                self.store(e, value, st, stmt, item)
        elif isinstance(target, ast.Starred):
            self.store(target.value, value, st, stmt, item)
        elif isinstance(target, ast.Subscript):
            self.reads(target.value, st)
            self.reads(target.slice, st)
            if self.writes_into(target):
                self.write(st, stmt)

    def bind(self, name, value, st, stmt):
        st.dirty.pop(name, None)
        if name in self.pieces.views and value is not None and self.pieces.aliases(value):
            text = ast.unparse(stmt).splitlines()[0]
            if isinstance(stmt, (ast.For, ast.While)):
                text = text.rstrip(":")
            st.bound[name] = (stmt.lineno, text)
        else:
            st.bound.pop(name, None)

    def writes_into(self, target) -> bool:
        base = target
        while isinstance(base, ast.Subscript):
            base = base.value
        return isinstance(base, ast.Name) and (base.id == self.name or (
            base is not target and base.id in self.pieces.views))

    def write(self, st, stmt):
        for name in st.bound:
            st.dirty.setdefault(name, stmt.lineno)

    def why(self, name: str, st) -> str:
        line, text = st.bound[name]
        return (f"`{name}` may hold a piece of `{self.name}` bound on line {line} (`{text}`: "
                f"a view of `{self.name}` in NumPy), and line "
                f"{st.dirty[name]} may write into `{self.name}` between that binding and this "
                f"read, which would see the write; bind a copy (`{name} = np.copy(...)`), or "
                "read it before the write")
