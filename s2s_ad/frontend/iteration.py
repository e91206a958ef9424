"""What a ``for`` loop iterates over, and the names a loop body assigns.

Contract: :class:`Iteration` is mixed into the lowering (through
:class:`s2s_ad.frontend.control.ControlFlow`) and turns the iterable of a
``for`` loop into an index loop: ``for x in reversed(xs)``, ``for row in A``
(the rows of an array), ``for i, x in enumerate(xs)`` and ``for x, y in
zip(xs, ys)`` become ``for k in range(n)`` whose body first binds each name
from ``k`` (``x = xs[n - 1 - k]``, ``row = A[k]``, ``i = k + start``, or ``k`` itself
for a start of 0);
:meth:`Iteration.iteration` gives a plain ``range`` or sequence loop its
bounds. :func:`assigned_names` lists what a loop body assigns (its carried
values).

Before → after (the body's first ops bind the names)::

    for i, x in enumerate(xs):       for k in range(len(xs)):
        s = s + i * x                    x = getitem xs k      (i is k itself)
                                         t1 = mul k x
                                         s_1 = add s t1
"""

from __future__ import annotations

import ast
import builtins
import types

from s2s_ad import ir
from s2s_ad.frontend import ranges, run_time_index, runtime_lists, structures
from s2s_ad.syntax_walk import walk


def assigned_names(stmts: list[ast.stmt], subscripts: bool = False) -> list[str]:
    """Variables a statement list may assign, in order of first appearance;
    with ``subscripts`` (NumPy code), ``y[i] = v`` (and ``y[i][j] = v``)
    assigns ``y`` too: it makes a new version of the array."""
    out: dict[str, None] = {}
    for stmt in stmts:
        for node in walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                out[node.id] = None
            elif subscripts and isinstance(node, ast.Subscript) \
                    and isinstance(node.ctx, ast.Store):
                base = node.value
                while isinstance(base, ast.Subscript):  # `y[i][j] = v` writes into y
                    base = base.value
                if isinstance(base, ast.Name):
                    out[base.id] = None
            elif subscripts and _adds_into(node):
                out[node.args[0].id] = None  # np.add.at(y, index, v): a new version of y
    return list(out)


def _adds_into(node: ast.AST) -> bool:
    """``np.add.at(y, ...)``, or s2s-ad's own ``add_at(y, ...)`` /
    ``add_scattered(y, ...)``: a call that adds into the array named ``y``."""
    if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Name)):
        return False
    f = node.func
    return isinstance(f, ast.Name) and f.id in ("add_at", "add_scattered") \
        or isinstance(f, ast.Attribute) and f.attr == "at" \
        and isinstance(f.value, ast.Attribute) and f.value.attr == "add"


class Iteration:
    """Mixed into ``frontend._Lowering`` through :class:`ControlFlow`; uses its
    ``src``, ``env``, ``expr``, ``emit`` and ``resolve``."""

    def _item(self, seq, k, name: ast.Name):
        """``name = seq[k]`` bound at the top of an iteration, from the list as
        it is then (``iterated``: the version the loop carries)."""
        now = self.iterated(seq)
        return self.emit("getitem", [now, k], name, name.id,
                         text=f"{name.id} = {now.name}[{k.name}]")

    def reversed_list(self, it: ast.expr, name: ast.Name):
        """``for x in reversed(xs)`` over a list parameter: ``len(xs)``
        iterations, ``x`` bound to ``xs[len(xs) - 1 - k]``. None otherwise."""
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name)
                and it.func.id not in self.env and self.resolve(it.func) is builtins.reversed
                and len(it.args) == 1 and not it.keywords and isinstance(it.args[0], ast.Name)):
            return None
        param = self.sequence_param(self.env.get(it.args[0].id))
        if param is None:
            structures._param_used_as_sequence(self, self.env.get(it.args[0].id), it.args[0],
                                               ("float", "array"))
            return None
        seq = param.value
        n = self.seq_len(seq, it)
        last = (ir.Const(n.value - 1) if isinstance(n, ir.Const)
                else self.emit("sub", [n, ir.Const(1)], it, text=f"len({seq.name}) - 1"))

        def bind(k):
            at = self.emit("sub", [last, k], it, text=f"{ast.unparse(it)}: position")
            return self._item(seq, at, name)
        return n, (name, bind)

    def array_rows(self, it: ast.expr, name: ast.Name, loop: ast.For):
        """``for row in X`` over an array: ``len(X)`` iterations, and ``row``
        bound to ``X[k]`` at the top of the body. None if ``it`` is not an
        array."""
        base = it
        while isinstance(base, (ast.Subscript, ast.Attribute)):
            base = base.value  # `for y in obs[1:]`, `for col in X.T`: a piece of an array
        value = self.env.get(base.id) if isinstance(base, ast.Name) else None
        if not (getattr(self, "array_mode", False) and isinstance(value, ir.Value)
                and value.kind == "array"):
            return None
        if base.id in assigned_names(loop.body, subscripts=True):
            raise self.src.error(it, f"`{base.id}` is changed inside the loop that iterates over "
                                 "it; iterate over `range(len(...))` instead")
        if it is not base:  # evaluated once, before the loop, as Python does
            value = self.expr(it)
            if not (isinstance(value, ir.Value) and value.kind == "array"):
                return None
        text = ast.unparse(it)
        n = self.emit("len", [value], it)
        return n, (name, lambda k: self.emit("array.getitem", [value, k], name, name.id,
                                             attrs={"index": (("op", 1),)},
                                             text=f"{name.id} = {text}[{k.name}]"))

    def iteration(self, node: ast.For):
        it = node.iter
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id not in self.env \
                and self.resolve(it.func) is builtins.range:
            return None, ranges.call_bounds(self, it)
        if isinstance(it, ast.Name) and ranges.is_range(self.env.get(it.id)):
            return None, ranges.bounds(self.env[it.id])  # `for t in r`, `r = range(...)`
        param = self.sequence_param(self.env.get(it.id)) if isinstance(it, ast.Name) else None
        if param is not None:
            return param.value, None
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) \
                and it.func.id not in self.env and (
                    it.func.id in self.local_fns
                    or isinstance(self.src.globals.get(it.func.id), types.FunctionType)):
            value = self.expr(it)  # `for v in rollout(x, n)`: a list a helper returned
            if id(value) in self.returned_lists:
                return value, None
        if isinstance(it, ast.Name):
            structures._param_used_as_sequence(self, self.env.get(it.id), it)
            if any(isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
                   and isinstance(n.value.func, ast.Name) and n.value.func.id == "range"
                   and any(isinstance(t, ast.Name) and t.id == it.id for t in n.targets)
                   for n in walk(self.src.tree)):
                raise self.src.error(it, f"`{it.id}` is a range bound again in a loop or "
                                     "branch (or not bound on every path to here); a range "
                                     "bound to a name is read while lowering: bind it once, "
                                     "before loops and branches, or iterate over "
                                     "`range(...)` itself")
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) \
                and it.func.id not in self.env \
                and self.resolve(it.func) in (builtins.sorted, builtins.reversed):
            for a in it.args:  # `for k in sorted(d)`, d a parameter lowered as a number
                if isinstance(a, ast.Name):
                    structures._param_used_as_sequence(self, self.env.get(a.id), a)
        raise self.src.error(it, "a `for` loop must iterate over `range(...)`, a list or tuple "
                             "(a parameter, a display, one built in the function, a slice of "
                             "one), an array's rows, or `enumerate`/`zip`/`reversed`/`sorted` "
                             "of those (docs/subset.md): this iterable is none of them; make "
                             "the list first (`xs = [...]`) and iterate over it")

    def tuple_iteration(self, it: ast.expr, target: ast.Tuple, loop: ast.For) -> tuple:
        """``for i, x in enumerate(xs, start)``, ``for x, y in zip(xs, ys)`` and
        their nesting (``for i, (x, y) in enumerate(zip(xs, ys))``) over list or
        tuple parameters or arrays: the trip count (an operand), and per name of
        the target a function
        of the loop index that binds it (``x = xs[k]``, ``i = k + start``) at the
        top of the body."""
        fn = (self.resolve(it.func) if isinstance(it, ast.Call) and isinstance(it.func, ast.Name)
              and it.func.id not in self.env else None)
        if fn not in (builtins.enumerate, builtins.zip):
            if isinstance(it, ast.Name):  # for W, b in layers: a structure parameter
                structures._param_used_as_sequence(self, self.env.get(it.id), it,
                                                   ("float", "array"))
            raise self.src.error(target, "a tuple as the loop variable needs `enumerate(xs)` or "
                                 "`zip(xs, ys)` over list or tuple parameters")
        if any(k.arg != "start" or fn is builtins.zip for k in it.keywords):
            raise self.src.error(it, f"`{it.func.id}`: only `enumerate(xs, start)` takes a "
                                 "keyword (`start`)")
        args = list(it.args) + [k.value for k in it.keywords]
        n_seqs = len(it.args) if fn is builtins.zip else 1
        if n_seqs < 1 or (fn is builtins.enumerate and not 1 <= len(args) <= 2):
            raise self.src.error(it, f"`{it.func.id}` takes one to two arguments here"
                                 if fn is builtins.enumerate else "`zip` needs a sequence")
        names = target.elts
        if len(names) != (2 if fn is builtins.enumerate else n_seqs):
            raise self.src.error(target, f"the loop variable unpacks {len(names)} names, but "
                                 f"`{it.func.id}` gives {2 if fn is builtins.enumerate else n_seqs}")
        lengths, binds = [], []
        seq_targets = names[1:] if fn is builtins.enumerate else names
        for arg, name in zip(args[:n_seqs], seq_targets):
            if isinstance(name, ast.Tuple):
                n, inner = self.tuple_iteration(arg, name, loop)
                lengths.append(n)
                binds += inner
                continue
            if not isinstance(name, ast.Name):
                raise self.src.error(name, "only names can be unpacked in the loop variable")
            rows = self.reversed_list(arg, name) or self.array_rows(arg, name, loop) \
                or ranges.zipped(self, arg, name)  # zip(range(n), xs)
            if rows is not None:
                lengths.append(rows[0])
                binds.append(rows[1])
                continue
            param = (self.sequence_param(self.env.get(arg.id)) if isinstance(arg, ast.Name)
                     else None)
            if param is None and isinstance(arg, ast.Name) \
                    and structures.module_numbers(self, arg.id):
                # zip(COEFFS, xs), xs of any length: COEFFS as a list of its constants
                param = ir.Param(runtime_lists.module_list(self, arg.id, arg))
            if param is None:
                made = run_time_index.zip_column(self, arg)  # zip(xs, [x, x * x])
                param = None if made is None else ir.Param(made)
            if param is None:
                if isinstance(arg, ast.Name):
                    structures._param_used_as_sequence(self, self.env.get(arg.id), arg)
                raise self.src.error(arg, f"`{it.func.id}` in a `for` loop iterates over list "
                                     "or tuple parameters (unchanged) or arrays only")
            lengths.append(self.seq_len(param.value, arg))
            binds.append((name, lambda k, seq=param.value, name=name: self._item(seq, k, name)))
        if fn is builtins.enumerate:
            first = names[0]
            if not isinstance(first, ast.Name):
                raise self.src.error(first, "the index of `enumerate` must be a name")
            start = self.expr(args[1]) if len(args) == 2 else ir.Const(0)
            if not (isinstance(start, ir.Const) and type(start.value) is int):
                raise self.src.error(args[1], "the start of `enumerate` must be an integer "
                                     "constant")
            binds.insert(0, (first, lambda k, first=first, start=start: k if start.value == 0
                             else self.emit("add", [k, start], first, first.id,
                                            text=f"{first.id} = {k.name} + {start.value}")))
        n = lengths[0]
        for other in lengths[1:]:  # zip stops at the shortest
            if isinstance(n, ir.Const) and isinstance(other, ir.Const):
                n = ir.Const(min(n.value, other.value))
            else:
                n = self.emit("min", [n, other], it)
        return n, binds
