"""The tapes and reversed loops of s2s-ad's own generated code, in the subset.

Contract: ``normalise(tree)`` rewrites, in place, the statements of a function
definition that use the idioms s2s-ad's reverse sweep writes into constructs
the rest of the frontend lowers, so that a generated gradient read back from
its file is differentiated like any other function. Every rewrite computes
the same values on every path as the code it replaces; a statement that does
not have exactly the shape below is left alone (and refused, located, by the
lowering as before). Idempotent: a rewritten tree is left as it is.

* An element of an array written in place, put on a tape (``t = y[i]``,
  ``t_tape.append(t)``, or ``y_old.append(y[i])`` before a write) or read
  after a write into the array (``dt = dz[i]``, ``dz[j] = ...``, then
  ``dt``), is read through the module's ``own`` helper
  (``t = own(y[i])``; ``y[i] * 1.0`` where the module has no ``own``): the
  same value (s2s-ad tapes such a piece uncopied only where it is one
  element), which the lowering then knows is no view.
* In a generated NumPy module, ``du += c`` on a name that is no adjoint
  buffer (none made by ``float_zeros`` or ``np.zeros...``, none written by
  index) is ``du = du + c``: s2s-ad adds in place only into arrays it made
  for that, so this is a helper of numbers, where ``+=`` binds a new number.
* A tape of slots, ``T = [None] * n`` written once per iteration, as the
  first thing that can happen in it, by ``T[i] = v`` directly in the body of
  ``for i in range(n)`` (from 0, step 1, no ``continue``/``break`` before the
  write; the loop after ``T = ...`` in the same block, so it runs once per
  list): the writes are in order, one per iteration, so the list is the
  list grown by ``T.append(v)`` (a list grown at run time,
  :mod:`s2s_ad.frontend.runtime_lists`), read as before by ``T[i]``.
* A stack tape, ``v = T.pop()``, ``v += T.pop()`` or ``y[i] = T.pop()`` (an adjoint
  list ``dT = [0.0] * len(T)`` popped too, its items read or written between
  the pops at ``T[top - 1]`` for ``T[-1]`` and ``T[k % top]`` for ``T[k]``; after the last
  ``T.append``, and ``T`` used by nothing else from there on, at the top
  level or in loops and branches; its length ``len(T)`` and its truth ``while T:``
  read too, as ``T_top`` and ``T_top > 0``): pops return the items last to first,
  so with ``T_top = len(T)`` taken before the first statement that pops,
  each pop is ``T_top -= 1; v = T[T_top]`` (the list is never shortened:
  nothing reads its length again; :mod:`s2s_ad.frontend.pop_counters`).
* A list of numbers of a known length, ``dc = [0.0] * 4`` (the adjoint of a
  list parameter of that length), is the list ``[0.0, 0.0, 0.0, 0.0]``: a list
  built in the function, written by index (``dc[i] = ds``; ``dc[i] += v`` is
  ``dc[i] = dc[i] + v``)
  in the reverse sweep's loop, which is unrolled for it
  (:mod:`s2s_ad.frontend.unroll`).
* A reverse loop run on Python lists of array elements,
  ``y_l, dy_l = float_lists((y,), (dy,), (a,))`` then the loop reading and
  writing ``y_l[k]``, ``dy_l[k]``, then ``put_floats(dy, dy_l)`` (the
  helpers recognised by their exact text, :mod:`s2s_ad.reverse.element_lists`),
  is the same loop on the arrays: the lists hold their elements' values, and
  what the loop writes into them is put back. The two statements go, and the
  loop reads and writes ``y[k]``, ``dy[k]``.
* The result of a ``value_and_grad_FN`` module differentiated,
  ``return value, (dx, dr)``, is the flat ``return value, dx, dr``
  (``output=0`` the value, ``output=1`` the first gradient item, ...); called
  by the function differentiated, it stays nested, as its caller unpacks it.
* A checkpointed loop (snapshots and a driver recomputing it) is the taped
  loop it stands for (:mod:`s2s_ad.frontend.checkpointed`).
* The adjoint added to every item of a list, ``dys[:] = [d + g for d in
  dys]`` and ``dys[:] = [a + b for a, b in zip(dys, dys_1)]``, is the loop
  ``for k in range(len(dys)): dys[k] = dys[k] + g`` (``+ dys_1[k]``).
* Reversed loops: ``for i in reversed(range(a, b, s))`` (``s`` a constant)
  is ``for i in range(a + (L - 1) * s, a - s, -s)`` with ``L`` the number of
  items, and the first ``t`` items of a range, ``range(a, b, s)[:t]`` (a loop
  that stopped early, reversed), are ``range(a, a + min(t, L) * s, s)``.

Before → after::

    z_tape = [None] * 3                     z_tape = []
    for i in range(3):                      for i in range(3):
        z_tape[i] = z                           z_tape.append(z)
        ...                                     ...
    for i in reversed(range(3)):            for i in range(3 - 1, -1, -1):
        z = z_tape[i]                           z = z_tape[i]

    for _ in range(n_iter):                 x_tape_top = len(x_tape)
        x = x_tape.pop()                    for _ in range(n_iter):
                                                x_tape_top -= 1
                                                x = x_tape[x_tape_top]
"""

from __future__ import annotations

import ast

from s2s_ad.frontend import (checkpointed, list_forms, own_helpers, pair_layout, pairs,
                             pop_counters, pop_order, readback_forms, scatter_calls,
                             shape_flags, tape_flatten, tape_lengths, tape_offsets,
                             tape_params, taped_lists)
from s2s_ad.frontend.int_names import slots
from s2s_ad.frontend.pop_counters import int_const
from s2s_ad.names import Namer, identifiers
from s2s_ad import syntax_walk
from s2s_ad.syntax_walk import walk

__all__ = ["normalise", "normalise_source"]


def normalise_source(src, helper: bool = False) -> None:
    """:func:`normalise` of ``src``'s function; what it leaves that the
    lowering would misread is refused here, located: a forward function whose
    tape is not split into the items its backward function (and so every
    call site) takes, a snapshot of a checkpointed loop not rewritten."""
    pop_order.hoist(src)  # `a = xs.pop() * 2.0`: the pop a statement of its own
    unsplit = normalise(src.tree, src.globals, helper)
    if unsplit is not None:
        raise src.error(*unsplit)
    checkpointed.refuse_leftover(src)


_UNSPLIT = ("the tape this forward function returns is not split into the values its "
            "backward function takes (a helper's tape held in a way the split does not "
            "follow) and is not supported yet; differentiate the original function, or its "
            "module generated again")


def normalise(tree: ast.FunctionDef, globals_: dict | None = None,
              helper: bool = False) -> tuple | None:
    """Rewrite ``tree``'s tapes and reversed ranges in place (see the module);
    ``globals_``: the module's names, where helper pairs are found; ``helper``:
    ``tree`` is lowered as a function the one differentiated calls (which
    reads a ``value_and_grad`` module's result as it is, nested). Returns
    ``(node, reason)`` where a helper's tape is held in a way the split does
    not follow (a forward function's ``return``, a list of lists of its
    tape), else None."""
    namer = Namer(reserved=identifiers(tree))
    unsplit = None
    if globals_:
        _unlist(tree, globals_)
        unsplit = pairs.split(tree, globals_, namer)
        if unsplit is not None:
            unsplit = unsplit, _UNSPLIT
        else:
            tape_params.rewrite(tree, globals_, namer)
            unsplit = tape_offsets.rewrite(tree, globals_, namer)
        tape_flatten.rewrite(tree, globals_, namer, pair_layout.pairs_of(globals_))
        scatter_calls.plain_zeros(tree, globals_)
        scatter_calls.added_sums(tree, globals_)
        shape_flags.unflag(tree, globals_)
        scatter_calls.rewrite(tree, globals_, namer)
        scatter_calls.in_place_sums(tree, globals_)
    if not helper:
        _value_and_grad_return(tree)
    checkpointed.untape(tree, globals_)
    if globals_ and own_helpers.written_by_s2s_ad(globals_):
        taped_lists.rewrite(tree)  # `ys = []; ys_tape.append(ys)`, then filled
    tape_lengths.rewrite(tree, namer, globals_)
    list_forms.desugar(tree, namer, globals_)  # list(e), xs += ys, xs.copy()
    _owned_tape_reads(tree, globals_ or {})
    _parameter_sums(tree, globals_ or {})
    _slots(tree)
    _placeholder_lists(tree)
    given = pairs.int_tapes_given(tree, globals_) if globals_ else set()
    pop_counters.rewrite(tree, namer, globals_, given)
    readback_forms.int_items(tree, globals_, given,
                             pairs.int_items_given(tree, globals_) if globals_ else set())
    _zeros(tree)
    _item_sums(tree, namer)
    for node in walk(tree):
        if isinstance(node, ast.For):
            new = _range_iter(node.iter)
            if new is not None:
                node.iter = ast.copy_location(new, node.iter)
                ast.fix_missing_locations(node)
    return unsplit


# --- adjoints added to every item of a list ------------------------------------

def _item_sums(tree: ast.FunctionDef, namer: Namer) -> None:
    """``dys[:] = [d + g for d in dys]`` (the adjoint of ``sum(ys)``) and
    ``dys[:] = [a + b for a, b in zip(dys, dys_1)]`` (a helper's adjoint list
    added), which write a slice, as the loops writing each item:
    ``for k in range(len(dys)): dys[k] = dys[k] + g`` (``+ dys_1[k]``). The
    same values, in the same list, added in the same order."""
    for node in syntax_walk.blocks(tree):
        for field in ("body", "orelse"):
            stmts = getattr(node, field, None)
            if not isinstance(stmts, list):
                continue
            for i, stmt in enumerate(stmts):
                loop = _item_sum_loop(stmt, namer)
                if loop is not None:
                    stmts[i] = ast.fix_missing_locations(ast.copy_location(loop, stmt))


def _item_sum_loop(stmt, namer: Namer) -> ast.For | None:
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
        return None
    t, v = stmt.targets[0], stmt.value
    if not (isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name)
            and isinstance(t.slice, ast.Slice) and t.slice.lower is None
            and t.slice.upper is None and t.slice.step is None
            and isinstance(v, ast.ListComp) and len(v.generators) == 1
            and not v.generators[0].ifs and isinstance(v.elt, ast.BinOp)
            and isinstance(v.elt.op, ast.Add)):
        return None
    name, gen = t.value.id, v.generators[0]
    k = namer.fresh("k")

    def item(n: str) -> ast.Subscript:
        return ast.Subscript(ast.Name(n, ast.Load()), ast.Name(k, ast.Load()), ast.Load())

    if isinstance(gen.target, ast.Name) and isinstance(gen.iter, ast.Name) \
            and gen.iter.id == name and isinstance(v.elt.left, ast.Name) \
            and v.elt.left.id == gen.target.id \
            and not {n.id for n in walk(v.elt.right) if isinstance(n, ast.Name)} \
            & {name, gen.target.id}:
        added = v.elt.right  # d + g, for d in dys
    elif isinstance(gen.target, ast.Tuple) and len(gen.target.elts) == 2 \
            and all(isinstance(e, ast.Name) for e in gen.target.elts) \
            and isinstance(gen.iter, ast.Call) and isinstance(gen.iter.func, ast.Name) \
            and gen.iter.func.id == "zip" and len(gen.iter.args) == 2 \
            and all(isinstance(a, ast.Name) for a in gen.iter.args) \
            and gen.iter.args[0].id == name \
            and [getattr(x, "id", None) for x in (v.elt.left, v.elt.right)] \
            == [e.id for e in gen.target.elts]:
        added = item(gen.iter.args[1].id)  # a + b, for a, b in zip(dys, dys_1)
    else:
        return None
    write = ast.Assign([ast.Subscript(ast.Name(name, ast.Load()), ast.Name(k, ast.Load()),
                                      ast.Store())], ast.BinOp(item(name), ast.Add(), added))
    return ast.For(ast.Name(k, ast.Store()),
                   ast.Call(ast.Name("range", ast.Load()),
                            [ast.Call(ast.Name("len", ast.Load()), [ast.Name(name, ast.Load())],
                                      [])], []), [write], [], None)


# --- value and gradient -------------------------------------------------------

def _value_and_grad_return(tree: ast.FunctionDef) -> None:
    """``return value, (dx, dr)`` in ``value_and_grad_FN`` as the flat
    ``return value, dx, dr``: the same numbers, one item each, so that
    ``output=K`` picks the value (0) or a gradient item (``K = 1 + k``)."""
    if not tree.name.startswith("value_and_grad_"):
        return
    returns = [n for n in walk(tree) if isinstance(n, ast.Return)]
    if not returns or not all(
            isinstance(r.value, ast.Tuple) and len(r.value.elts) == 2
            and isinstance(r.value.elts[1], ast.Tuple) for r in returns):
        return
    for r in returns:
        r.value.elts = [r.value.elts[0]] + list(r.value.elts[1].elts)


# --- loops run on lists of array elements ------------------------------------

def _helper_call(node, globals_: dict, base: str) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords
            and own_helpers.is_helper(globals_.get(node.func.id), base))


def _unlist(tree: ast.FunctionDef, globals_: dict) -> None:
    for node in syntax_walk.blocks(tree):
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            k = 0
            while k + 1 < len(block):
                names = _lists_made(block[k], globals_)
                loop = block[k + 1]
                if names is None or not isinstance(loop, ast.For):
                    k += 1
                    continue
                for n in walk(loop):
                    if isinstance(n, ast.Name) and n.id in names:
                        n.id = names[n.id]
                end = k + 2
                while end < len(block) and isinstance(block[end], ast.Expr) \
                        and _helper_call(block[end].value, globals_, "put_floats") \
                        and [ast.unparse(a) for a in block[end].value.args] in (
                            [[a, l] for l, a in names.items()]):
                    end += 1
                block[k:end] = [loop]
                k += 1


def _lists_made(stmt, globals_: dict) -> dict | None:
    """list name -> array name for ``y_l, dy_l = float_lists((y,), (dy,), (a,))``."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Tuple)
            and _helper_call(stmt.value, globals_, "float_lists")
            and len(stmt.value.args) == 3
            and all(isinstance(a, ast.Tuple) for a in stmt.value.args)):
        return None
    arrays = stmt.value.args[0].elts + stmt.value.args[1].elts
    lists = stmt.targets[0].elts
    if len(arrays) != len(lists) or not all(isinstance(e, ast.Name) for e in arrays + lists):
        return None
    return {l.id: a.id for l, a in zip(lists, arrays)}


# --- elements put on a tape ----------------------------------------------------

def _owned_tape_reads(tree: ast.FunctionDef, globals_: dict) -> None:
    """``t = y[i]`` then ``t_tape.append(t)`` (or ``t_tape[k] = t``), or a
    read of ``t`` after a statement of the same block wrote into ``y``, is
    ``t = own(y[i])``, and so is the element ``y_old.append(y[i])`` pushes
    before a write into ``y``, with the module's own ``own`` helper
    (``y[i] * 1.0``, exact, in a generated module without it). s2s-ad keeps
    a piece of an array it writes into uncopied, where a later write could
    change it, only where it knows the piece is one element (a NumPy scalar,
    which no write changes), and ``own`` returns an element as it is: the
    same values, which the lowering, not knowing the array's rank, would
    otherwise refuse as a view a tape keeps or a write changes."""
    own = next((k for k, v in globals_.items() if own_helpers.is_helper(v, "own")), None)
    if own is None and not own_helpers.generated_module(globals_):
        return
    written = own_helpers.indexed_names(tree)
    # lists written by index (`ds = [0.0] * n`, an adjoint list, a tape of
    # slots) hold Python numbers too, which are no views and which `own` is not for
    written -= {t.id for n in walk(tree) if isinstance(n, ast.Assign) and _made_list(n.value)
                for t in n.targets if isinstance(t, ast.Name)}
    if not written:
        return

    def owned(e: ast.expr) -> ast.expr:  # the same value, no view
        value = ast.Call(ast.Name(own, ast.Load()), [e], []) if own is not None \
            else ast.BinOp(e, ast.Mult(), ast.Constant(1.0))
        return ast.fix_missing_locations(ast.copy_location(value, e))

    for node in walk(tree):
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            last: dict = {}  # name -> its latest binding in this block, `t = y[i]`
            stale: set = set()  # names of `last` whose array a statement since wrote into
            for stmt in block:
                pushed = _pushed_element(stmt, written)
                if pushed is not None:  # y_old.append(y[i]): an element put back later
                    pushed.args[0] = owned(pushed.args[0])
                kept = _taped_name(stmt)
                loads = {n.id for n in walk(stmt)
                         if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
                for name in [kept] + sorted(loads & stale):
                    # taped, or read after a write into its array
                    read = last.pop(name, None)
                    if read is not None:
                        read.value = owned(read.value)
                into = own_helpers.indexed_names(stmt)
                stale |= {name for name, b in last.items() if b.value.value.id in into}
                for n in walk(stmt):
                    if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
                        last.pop(n.id, None)
                        stale.discard(n.id)
                if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                        and isinstance(stmt.targets[0], ast.Name) \
                        and isinstance(stmt.value, ast.Subscript) \
                        and isinstance(stmt.value.value, ast.Name) \
                        and stmt.value.value.id in written:
                    last[stmt.targets[0].id] = stmt


def _made_list(value) -> bool:
    """``[...]``, a list comprehension, ``[c] * n``, ``list(...)``."""
    return isinstance(value, (ast.List, ast.ListComp)) or isinstance(value, ast.BinOp) \
        and isinstance(value.op, ast.Mult) and (isinstance(value.left, ast.List)
                                                or isinstance(value.right, ast.List)) \
        or isinstance(value, ast.Call) and isinstance(value.func, ast.Name) \
        and value.func.id == "list"


def _parameter_sums(tree: ast.FunctionDef, globals_: dict) -> None:
    """In a generated NumPy module, ``du = dz`` then ``du += c`` is ``du = du +
    c`` where ``du`` is no adjoint buffer: s2s-ad adds in place (``+=`` on a
    name) only into the arrays it made to be added into (``float_zeros``, the
    buffers written by index); any other ``+=`` is code of numbers (a helper
    of numbers in a NumPy module), where it binds a new number. Read as NumPy
    code it would add into an array the other names (``dz``) hold, or the
    caller passed (``du = dout``), which the lowering refuses or, for an
    alias, follows: another function than the module computes on numbers."""
    if not own_helpers.generated_module(globals_):
        return
    indexed = own_helpers.indexed_names(tree)
    buffers = {t.id for n in walk(tree) if isinstance(n, ast.Assign) and _zeros_made(n.value)
               for t in n.targets if isinstance(t, ast.Name)}
    for node in walk(tree):
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            for k, stmt in enumerate(block if isinstance(block, list) else []):
                if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) \
                        and stmt.target.id not in indexed | buffers \
                        and isinstance(stmt.op, (ast.Add, ast.Sub)):
                    plain = ast.Assign([ast.Name(stmt.target.id, ast.Store())],
                                       ast.BinOp(ast.Name(stmt.target.id, ast.Load()), stmt.op,
                                                 stmt.value))
                    block[k] = ast.fix_missing_locations(ast.copy_location(plain, stmt))


def _zeros_made(value) -> bool:
    """An array of zeros made to be added into: ``float_zeros(x)``,
    ``np.zeros_like(x) + 0.0``, ``np.zeros(...)``, ``np.zeros_like(x)``."""
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add) \
            and isinstance(value.right, ast.Constant):
        value = value.left
    if not isinstance(value, ast.Call):
        return False
    f = value.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    return name.startswith("float_zeros") or name in ("zeros", "zeros_like", "empty",
                                                       "empty_like", "full", "full_like")


def _pushed_element(stmt, written: set):
    """The call ``y_old.append(y[i])`` (``..._old``: the stack of what a write
    overwrites, ``y`` written into), or None."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
            and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr == "append" \
            and isinstance(stmt.value.func.value, ast.Name) \
            and stmt.value.func.value.id.endswith("_old") and len(stmt.value.args) == 1 \
            and isinstance(stmt.value.args[0], ast.Subscript) \
            and isinstance(stmt.value.args[0].value, ast.Name) \
            and stmt.value.args[0].value.id in written:
        return stmt.value
    return None


def _taped_name(stmt) -> str | None:
    """``t`` for ``T.append(t)`` or ``T[k] = t``, ``T`` a tape (``..._tape``)."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
            and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr == "append" \
            and isinstance(stmt.value.func.value, ast.Name) \
            and "_tape" in stmt.value.func.value.id and len(stmt.value.args) == 1 \
            and isinstance(stmt.value.args[0], ast.Name):
        return stmt.value.args[0].id
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], ast.Subscript) \
            and isinstance(stmt.targets[0].value, ast.Name) \
            and "_tape" in stmt.targets[0].value.id and isinstance(stmt.value, ast.Name):
        return stmt.value.id
    return None


# --- tapes of slots ---------------------------------------------------------

def _slot_tape(stmt) -> str | None:
    """``T`` for ``T = [None] * n``."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], ast.Name) and slots(stmt.value):
        return stmt.targets[0].id
    return None


def _slot_write(stmt, tape: str) -> bool:
    return (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Subscript)
            and isinstance(stmt.targets[0].value, ast.Name) and stmt.targets[0].value.id == tape)


def _counts_from_zero(loop: ast.For) -> bool:
    """``for i in range(n)`` / ``range(0, n)`` / ``range(0, n, 1)``."""
    it = loop.iter
    if not (isinstance(loop.target, ast.Name) and isinstance(it, ast.Call)
            and isinstance(it.func, ast.Name) and it.func.id == "range" and not it.keywords
            and 1 <= len(it.args) <= 3):
        return False
    rest = it.args[1:] if len(it.args) > 1 else []
    if rest and not (isinstance(it.args[0], ast.Constant) and it.args[0].value == 0):
        return False
    return len(it.args) < 3 or (isinstance(it.args[2], ast.Constant) and it.args[2].value == 1)


def _placeholder_lists(tree: ast.FunctionDef) -> None:
    """A tape item set to None before the branch that fills it
    (:func:`s2s_ad.frontend.pairs.placeholder`), whose one other binding is a
    new list, ``T = []``, under branches only (no loop around it: it runs at
    most once): ``T = []`` at the top, the list the branch then fills, and no
    binding in the branch. The same values wherever ``T`` is read (under the
    branch's decision), and one list under one name, as the lowering follows
    a list grown at run time."""
    parents = syntax_walk.parents(tree)
    for stmt in tree.body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name) and pairs.is_placeholder(stmt.value)):
            continue
        name = stmt.targets[0].id
        others = [n for n in walk(tree) if isinstance(n, ast.Name) and n.id == name
                  and isinstance(n.ctx, ast.Store) and n is not stmt.targets[0]]
        if len(others) != 1:
            continue
        made = parents.get(id(others[0]))
        if not (isinstance(made, ast.Assign) and made.targets == [others[0]]
                and isinstance(made.value, ast.List) and not made.value.elts):
            continue
        chain, node = [], parents.get(id(made))
        while node is not None and node is not tree:
            chain.append(node)
            node = parents.get(id(node))
        if node is None or not chain or not all(isinstance(n, ast.If) for n in chain):
            continue
        holder = chain[0]
        block = holder.body if any(s is made for s in holder.body) else holder.orelse
        block.remove(made)
        if not block:
            block.append(ast.copy_location(ast.Pass(), made))
        stmt.value = ast.copy_location(ast.List([], ast.Load()), stmt.value)


def _slots(tree: ast.FunctionDef) -> None:
    tapes = {}
    blocks = {}  # id(statement) -> the statement list holding it
    for node in syntax_walk.blocks(tree):
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            for stmt in block if isinstance(block, list) else []:
                blocks[id(stmt)] = block
                name = _slot_tape(stmt)
                if name is not None:
                    tapes.setdefault(name, []).append(stmt)
    for tape, made in tapes.items():
        if len(made) != 1:
            continue
        writes = [n for n in walk(tree) if isinstance(n, ast.Assign) and _slot_write(n, tape)]
        loops = []
        for loop in (n for n in walk(tree) if isinstance(n, ast.For)):
            mine = [k for k, s in enumerate(loop.body) if _slot_write(s, tape)]
            if not mine:
                continue
            k = mine[0]
            before = loop.body[:k]
            index = loop.target.id if isinstance(loop.target, ast.Name) else None
            target = loop.body[k].targets[0]
            if len(mine) != 1 or not _counts_from_zero(loop) or not (
                    isinstance(target.slice, ast.Name) and target.slice.id == index) or any(
                    isinstance(n, (ast.Continue, ast.Break, ast.Return))
                    for s in before for n in walk(s)):
                loops = None
                break
            loops.append((loop, k))
        if not loops or len(loops) != 1 or len(writes) != 1 \
                or loops[0][0].body[loops[0][1]] is not writes[0] \
                or any(isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
                       and n.value.id == tape and n.attr in ("append", "extend", "pop")
                       for n in walk(tree)):
            continue
        loop, k = loops[0]
        # The loop runs once for each making of the tape: in the same block, after it.
        block = blocks[id(made[0])]
        if blocks.get(id(loop)) is not block or block.index(loop) < block.index(made[0]):
            continue
        made[0].value = ast.copy_location(ast.List([], ast.Load()), made[0].value)
        write = loop.body[k]
        call = ast.Call(ast.Attribute(ast.Name(tape, ast.Load()), "append", ast.Load()),
                        [write.value], [])
        loop.body[k] = ast.copy_location(ast.Expr(ast.copy_location(call, write)), write)
        ast.fix_missing_locations(loop.body[k])


# --- lists of zeros of a known length ------------------------------------------

ZEROS_LIMIT = 1000
"""Most items a list of zeros ``[0.0] * n`` is written out to."""


def _zeros_display(value) -> ast.List | None:
    """``[z, z, ..., z]`` for ``[z] * n`` (``z`` a number, ``n`` an int constant)."""
    if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult)):
        return None
    left, right = value.left, value.right
    if not (isinstance(left, ast.List) and len(left.elts) == 1):
        return None
    z = left.elts[0]
    if not (isinstance(z, ast.Constant) and type(z.value) in (int, float)
            and type(right) is ast.Constant and type(right.value) is int
            and 0 <= right.value <= ZEROS_LIMIT):
        return None
    return ast.List([ast.Constant(z.value) for _ in range(right.value)], ast.Load())


def _zeros(tree: ast.FunctionDef) -> None:
    made = set()
    # a list returned in a tuple (`return dc, dx`) stays a list of a run-time
    # length (frontend/list_writes.py): a tuple holding a list built in the
    # function is no result s2s-ad differentiates
    returned = {e.id for n in walk(tree) if isinstance(n, ast.Return)
                and isinstance(n.value, ast.Tuple) for e in n.value.elts
                if isinstance(e, ast.Name)}
    for node in walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id not in returned:
            new = _zeros_display(node.value)
            if new is not None:
                node.value = ast.fix_missing_locations(ast.copy_location(new, node.value))
                made.add(node.targets[0].id)
    if not made:
        return
    # ``dc[i] += v`` on such a list is ``dc[i] = dc[i] + v`` (its items are numbers)
    for node in syntax_walk.blocks(tree):
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            for k, stmt in enumerate(block if isinstance(block, list) else []):
                if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Subscript) \
                        and isinstance(stmt.target.value, ast.Name) \
                        and stmt.target.value.id in made \
                        and not isinstance(stmt.target.slice, ast.Slice):
                    read = ast.Subscript(ast.Name(stmt.target.value.id, ast.Load()),
                                         stmt.target.slice, ast.Load())
                    plain = ast.Assign([stmt.target], ast.BinOp(read, stmt.op, stmt.value))
                    block[k] = ast.fix_missing_locations(ast.copy_location(plain, stmt))


# --- reversed ranges ------------------------------------------------------------

def _range(e):
    """``(a, b, s)`` (``s`` an int) of ``range(...)`` or ``range(...)[:t]``, and
    ``t`` (or None); None when ``e`` is neither."""
    cut = None
    if isinstance(e, ast.Subscript) and isinstance(e.slice, ast.Slice) \
            and e.slice.lower is None and e.slice.step is None and e.slice.upper is not None:
        cut, e = e.slice.upper, e.value
    if not (isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "range"
            and not e.keywords and 1 <= len(e.args) <= 3
            and not any(isinstance(a, ast.Starred) for a in e.args)):
        return None
    args = e.args
    if len(args) == 1:
        return (ast.Constant(0), args[0], 1), cut
    step = 1 if len(args) == 2 else int_const(args[2])
    if not step:
        return None
    return (args[0], args[1], step), cut


def _bin(a, op, b):
    return ast.BinOp(a, op, b)


def _count(a, b, s: int):
    """The number of items of ``range(a, b, s)`` (negative for none)."""
    if s > 0:
        span = _bin(_bin(b, ast.Sub(), a), ast.Add(), ast.Constant(s - 1))
        return _bin(span, ast.FloorDiv(), ast.Constant(s)) if s != 1 else _bin(b, ast.Sub(), a)
    span = _bin(_bin(a, ast.Sub(), b), ast.Sub(), ast.Constant(s + 1))
    return _bin(span, ast.FloorDiv(), ast.Constant(-s)) if s != -1 else _bin(a, ast.Sub(), b)


def _range_iter(it):
    """The plain ``range(...)`` a loop over ``reversed(range(...))`` or a
    range's first ``t`` items iterates over, or None."""
    backwards = (isinstance(it, ast.Call) and isinstance(it.func, ast.Name)
                 and it.func.id == "reversed" and len(it.args) == 1 and not it.keywords)
    found = _range(it.args[0] if backwards else it)
    if found is None or (not backwards and found[1] is None):
        return None
    (a, b, s), cut = found
    if not backwards:  # range(a, b, s)[:t]
        n = ast.Call(ast.Name("min", ast.Load()), [cut, _count(a, b, s)], [])
        return ast.Call(ast.Name("range", ast.Load()),
                        [a, _bin(a, ast.Add(), _bin(n, ast.Mult(), ast.Constant(s))),
                         ast.Constant(s)], [])
    if cut is None and s == 1 and isinstance(a, ast.Constant) and a.value == 0:
        return ast.Call(ast.Name("range", ast.Load()),
                        [_bin(b, ast.Sub(), ast.Constant(1)), ast.Constant(-1),
                         ast.Constant(-1)], [])
    n = _count(a, b, s)
    if cut is not None:
        n = ast.Call(ast.Name("min", ast.Load()), [cut, n], [])
    last = _bin(a, ast.Add(), _bin(_bin(n, ast.Sub(), ast.Constant(1)), ast.Mult(),
                                   ast.Constant(s)))
    return ast.Call(ast.Name("range", ast.Load()),
                    [last, _bin(a, ast.Sub(), ast.Constant(s)), ast.Constant(-s)], [])
