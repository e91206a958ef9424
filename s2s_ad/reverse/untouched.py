"""Adjoints a branch leaves untouched: zeros by structure, not by value.

A value read only in one arm of a branch gets an adjoint only when that arm
ran. The sweep starts such an adjoint at ``0.0`` before the branch
(``zero_outer``); when the other arm ran, it stays that zero, and the local
derivatives of the value's own producer are then multiplied by it:

    r = math.sqrt(x * x + y * y)
    if r < 1e-4:
        return 1.0 + x          # r not read
    return math.sin(r) / r + x

At ``x = y = 0`` the first arm runs, ``dr`` stays ``0.0`` and ``dr / (2 * r)``
divides by zero, although no path from ``r`` reaches the result: the
gradient of the code that ran is ``(1, 0)``. JAX (a symbolic zero) and
PyTorch (no backward node on the path) never evaluate that product.

The sweep does the same with the branch's own condition: after the branch,
the adjoint is *untouched* exactly when the arm that holds no contribution
to it ran (a static fact about the two arms, so the test is sound: it is
never true when a contribution was made). The backward of the value's
producer, where a local derivative can be infinite (a division, a power, a
call), runs only when the adjoint was touched:

    if not t4:                    # only where dr got a contribution
        dt3 = dr / (2 * r)
    else:
        dt3 = 0.0                 # dt3: no contribution either

and a new adjoint it starts (``dt3``) is untouched under the same test, so
nested roots and logarithms are covered too; so is one an unguarded backward
starts from the untouched adjoint alone (``dg = dt * 0.5``), so that a
shape op further on (``np.moveaxis``, ``np.reshape`` of the adjoint), which
cannot take the number ``0.0`` for an array, is guarded as well and gives
zeros of its operand's shape. Any other contribution to the
adjoint (outside the branch) ends this: it is no longer a structural zero.

The guard is placed by a pass over a region's reverse statements, after they
are made (:func:`guard_region`): it sees every statement between the branch
and the producer, so an adjoint written anywhere in between (a contribution
outside the branch, a loop's carry) is no longer taken as untouched.

The guard tests recorded control decisions, not adjoint values: an adjoint
that is zero by arithmetic keeps IEEE's and Python's behaviour, and
differentiating the generated code again sees an ordinary branch.
"""

from __future__ import annotations

import ast
import copy

from s2s_ad import ir
from s2s_ad.emit.code import Block, Stmt, may_be_infinite
from s2s_ad.syntax_walk import walk


def _stored(node: ast.AST, seen: dict) -> frozenset:
    """Names ``node`` assigns, walked once per node for all the adjoints
    one branch asks about (``seen``: id of node -> (node, names); the node
    kept, so that no later node gets its id while the cache lives)."""
    entry = seen.get(id(node))
    if entry is None or entry[0] is not node:
        entry = seen[id(node)] = (node, frozenset(
            n.id for n in walk(node) if type(n) is ast.Name and isinstance(n.ctx, ast.Store)))
    return entry[1]


def _stored_by(s, seen: dict) -> frozenset:
    """Names the statement or block ``s`` assigns: a block's are its head's
    and its statements' (``Block.node`` builds a new tree on every read, so
    a block is taken apart instead: each statement is walked once however
    deep it is nested)."""
    if not isinstance(s, Block):
        return frozenset() if s.node is None else _stored(s.node, seen)
    entry = seen.get(id(s))
    if entry is None or entry[0] is not s:
        head = s.head
        parts = [head.target] if isinstance(head, ast.For) else []
        if isinstance(head, (ast.If, ast.While)):
            parts.append(head.test)  # (a walrus in the test)
        names = set()
        for part in parts:
            names |= _stored(part, seen)
        for inner in s.body + s.orelse:
            names |= _stored_by(inner, seen)
        entry = seen[id(s)] = (s, frozenset(names))
    return entry[1]


def _negate(test: ast.expr) -> ast.expr:
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return copy.deepcopy(test.operand)
    return ast.UnaryOp(ast.Not(), copy.deepcopy(test))


def _and(a: ast.expr, b: ast.expr) -> ast.expr:
    if isinstance(b, ast.Constant) and b.value is True:
        return a
    if isinstance(a, ast.Constant) and a.value is True:
        return b
    return ast.BoolOp(ast.And(), [a, b])


def _either(test: ast.expr, then: ast.expr | None, orelse: ast.expr | None) -> ast.expr | None:
    """True when the branch on ``test`` left the adjoint untouched: its arm
    that ran did (``then``/``orelse``: when each arm leaves it untouched,
    None for never). Short-circuit order: an arm's tests are read only
    where that arm ran, so every name they read was set."""
    if then is not None and orelse is not None \
            and all(isinstance(u, ast.Constant) and u.value is True for u in (then, orelse)):
        return ast.Constant(True)
    sides = []
    if then is not None:
        sides.append(_and(copy.deepcopy(test), then))
    if orelse is not None:
        sides.append(_and(_negate(test), orelse))
    if not sides:
        return None
    return sides[0] if len(sides) == 1 else ast.BoolOp(ast.Or(), sides)


def _untouched_when(stmts: list, name: str, seen: dict) -> ast.expr | None:
    """An expression true exactly where running ``stmts`` assigned nothing
    to ``name`` (None: it always may): branches that assign it in one arm
    give their test; any other statement or loop assigning it, None."""
    out: ast.expr = ast.Constant(True)
    for s in stmts:
        if name not in _stored_by(s, seen):
            continue
        if not (isinstance(s, Block) and isinstance(s.head, ast.If)):
            return None
        part = _either(s.head.test, _untouched_when(s.body, name, seen),
                       _untouched_when(s.orelse, name, seen))
        if part is None:
            return None
        out = _and(out, part)
    return out


def mark(sweep, block, pre: list, then: list, orelse: list, cond: ast.expr) -> None:
    """Record, for the reversed branch ``block``, each adjoint ``pre``
    started at zero with the test true where it is untouched after the
    branch: the arm that ran (or the arms nested in it) added nothing."""
    marks = {}
    # one cache for every branch of the sweep: the arms' statements are done
    # when their branch is marked, and a branch nested in another is asked
    # again by the outer one (each statement walked once, not once a level)
    seen = sweep.stored_names
    for s in pre:
        name = s.target
        if not name:
            continue
        test = _either(cond, _untouched_when(then, name, seen),
                       _untouched_when(orelse, name, seen))
        if test is not None:
            marks[name] = test
    if marks:
        origin = block.origin if isinstance(block, Block) else None
        sweep.untouched_after[id(block)] = {n: (t, origin) for n, t in marks.items()}


def _reads(node: ast.AST, name: str) -> bool:
    return any(type(n) is ast.Name and n.id == name and isinstance(n.ctx, ast.Load)
               for n in walk(node))


def guard_region(sweep, out: list) -> list:
    """``out`` (a region's reverse statements, in order) with each op's
    backward that reads an untouched adjoint, and may meet an infinite local
    derivative, placed under the test that the adjoint was touched; adjoints
    it starts are zero in the other arm, untouched under the same test."""
    if not sweep.untouched_after:
        return out
    state: dict[str, tuple] = {}  # name -> (test, the branch that left it untouched)
    seen: dict = {}
    result = []
    i = 0
    while i < len(out):
        item = out[i]
        origin = getattr(item, "origin", None)
        if isinstance(item, Stmt) and isinstance(origin, ir.Op) and item.node is not None \
                and not item.role and id(origin.out) in sweep.adj \
                and sweep.adj[id(origin.out)] in state:
            j = i
            while j < len(out) and isinstance(out[j], Stmt) and out[j].origin is origin \
                    and out[j].node is not None and not out[j].role:
                j += 1
            group = out[i:j]
            name = sweep.adj[id(origin.out)]
            if any(may_be_infinite(s.node) for s in group):
                result += _guarded(sweep, origin, state, *state[name], group)
            else:
                result += group
                adjoints = set(sweep.adj.values())
                for s in group:
                    node = s.node
                    started = node.targets[0].id if isinstance(node, ast.Assign) \
                        and len(node.targets) == 1 and type(node.targets[0]) is ast.Name \
                        and {n.id for n in walk(node.value) if type(n) is ast.Name
                             and n.id in adjoints} == {name} else None
                    for n in _stored(node, seen):
                        if n == started:  # a multiple of the untouched adjoint alone
                            state[n] = state[name]  # (dg = dt * 0.5): untouched as it is
                        else:
                            state.pop(n, None)
            i = j
            continue
        if isinstance(item, Block) or item.node is not None:
            stored = _stored_by(item, seen)
            for n in [n for n in state if n in stored]:
                still = _untouched_when([item], n, seen)
                if still is None:
                    del state[n]
                else:  # still untouched where the arms that add to it did not run
                    state[n] = (_and(state[n][0], still), state[n][1] or item.origin)
        state.update(sweep.untouched_after.get(id(item), {}))
        result.append(item)
        i += 1
    return result


def _guarded(sweep, op, state: dict, test: ast.expr, branch, group: list) -> list:
    zeros = []
    added = []

    def add_to(n):  # added to under the guard: untouched where it was and the guard held
        if n in state and n not in {z.target for z in zeros}:
            added.append((n, state.pop(n)))
        else:
            state.pop(n, None)

    for s in group:
        node = s.node
        if not isinstance(node, ast.Assign) or len(node.targets) != 1 \
                or type(node.targets[0]) is not ast.Name:
            targets = _stored(node, {})
            for n in targets:
                if isinstance(node, ast.AugAssign) and type(node.target) is ast.Name \
                        and node.target.id == n:
                    add_to(n)
                else:
                    state.pop(n, None)
            if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                    and type(node.targets[0]) is ast.Tuple:
                # adjoints a helper's backward pass starts (`_, dv = h_bwd(...)`): zero
                # where it does not run, as a single one is below
                for n in sorted(targets - {"_"} - {z.target for z in zeros}):
                    if not _reads(node.value, n):
                        zeros.append(_zero_of(sweep, n))
            continue
        target = node.targets[0].id
        if _reads(node.value, target) or target in {z.target for z in zeros}:
            add_to(target)
            continue
        arg = op.args[s.operand] if s.operand is not None and s.operand < len(op.args) else None
        zeros.append(_zero_of(sweep, target, arg))
    if isinstance(test, ast.Constant) and test.value is True:
        body = zeros
    else:
        comment = (f"line {op.loc.line}: " if getattr(op, "loc", None) is not None else "") + \
            f"only where {sweep.adj[id(op.out)]} got a contribution (a local derivative may be infinite)"
        body = [Block(ast.If(_negate(test), [], []), group, zeros, comment, branch)]
    for z in zeros:
        state[z.target] = (copy.deepcopy(test), branch)
    for n, (before, where) in added:
        if n not in {z.target for z in zeros}:
            state[n] = (_and(before, copy.deepcopy(test)), where)
    return body


def _zero_of(sweep, target: str, arg=None) -> Stmt:
    """``target = 0.0`` (zeros of the parameter's shape where ``target`` is
    the adjoint of an array parameter: ``arg``, or the parameter whose
    adjoint ``target`` names)."""
    params = sweep.func.param_values
    if arg is None:
        arg = next((p for p in params if sweep.adj.get(id(p)) == target), None)
    zero = ast.Constant(0.0)
    if sweep.arrays is not None and isinstance(arg, ir.Value) and arg.kind == "array" \
            and id(arg) in {id(p) for p in params}:
        zero = sweep.arrays.zero(arg)
        sweep.ref(arg)  # read: a pair's backward pass has it only from its tape
    return Stmt(ast.Assign([ast.Name(target, ast.Store())], zero),
                f"{target}: no contribution either (the branch left its source at 0)",
                target=target, role="zero")
