"""Names assigned in one branch only, read again under the same condition.

Contract: a name assigned in one branch of an ``if`` only (and not before)
is undefined after it, and reading it there stays refused; but an arm of a
later ``if`` on the same condition value (the same SSA value, or its
``not``, or a guarded copy of it) defines it again, as the value it had.
s2s-ad's own gradients read the forward pass's temporaries so
(``if t1: t2 = a * x`` forward, ``if t1: dx += dy * t2`` in the reverse
sweep). Such a name is kept with the conditions under which it holds its
value (nested ``if``s: one condition per level, outermost first); its φ,
whose other side is a placeholder never read, is made only when an arm
reads it, so a name never read again adds nothing to the code.

Before → after::

    if t1:                                  t2_1 = if t1
        t2 = a * x                              t2 = mul a x     yield t2
    ...                                         (else)           yield 0.0
    if t1:                                  if t1
        y = t2 * x                              y = mul t2_1 x

State on the lowering (``lo``): ``guarded`` (name -> (conditions, (kind,
getter))), ``guard_of`` (id of a guarded φ -> the value it stands for) and
``negations`` (id of ``not c`` -> ``c``).
"""

from __future__ import annotations

from s2s_ad import ir
from s2s_ad.frontend import runtime_lists, structures

PLACEHOLDERS = {"float": 0.0, "int": 0, "bool": False, "array": 0.0, "list": ()}
"""The value a guarded name's φ takes on the side that never assigns it (a
list of any length: an empty one, whose adjoint the reverse sweep can make
before it knows which side ran)."""


def keep(lo, pending: list, var: str, cond, side: int, value, conds: tuple) -> None:
    """Keep ``var``, assigned on ``side`` of the ``if`` on ``cond`` only (to
    ``value``: an operand, a list known while lowering of them, or the entry
    of a name guarded inside that side under ``conds``), once the ``if`` op
    is made (:func:`commit`)."""
    if not isinstance(cond, ir.Value):
        return
    holder: list = []  # the If op, once made
    entry = _entry(lo, var, side, value, holder)
    if entry is None:
        return
    pending.append((var, ((polar(lo, cond, side == 0),) + tuple(conds), entry), holder))


CONSTANT = "constant"
"""The kind of the entry of a constant item of a guarded list."""

STATIC_LIST = "static list"
"""The kind of an entry for a list known while lowering (the tape items of a
helper's loop, unrolled, that s2s-ad's own ``H_fwd`` returns): its items are
guarded one by one, each a φ of its own, made when an arm reads the list."""


STATIC_TUPLE = "static tuple"
"""The kind of an entry for a tuple of operands (``(n, np.shape(x)[-1])``
kept on a helper's tape): its items guarded one by one, as a list's."""


def _entry(lo, var: str, side: int, value, holder: list):
    """``(kind, getter)`` for a guarded value, ``(STATIC_LIST, entries)`` for
    a list of them, or None where the value cannot be guarded."""
    if isinstance(value, structures.StaticList):
        # a constant item is the same on both sides: no φ
        items = [(CONSTANT, lambda v=v: v) if isinstance(v, ir.Const) else
                 _entry(lo, var, side, v, holder) for v in value.items]
        return None if any(e is None for e in items) else (STATIC_LIST, items)
    if isinstance(value, tuple) and value and value[0] in (STATIC_LIST, STATIC_TUPLE):
        items = [e if e[0] == CONSTANT else _entry(lo, var, side, e, holder) for e in value[1]]
        return None if any(e is None for e in items) else (value[0], items)
    if isinstance(value, tuple) and all(isinstance(v, (ir.Value, ir.Const, tuple))
                                        and not isinstance(v, str) for v in value) \
            and not (value and isinstance(value[0], str)):
        # a tuple of operands (a shape, the items of a helper's tape): item by item
        items = [(CONSTANT, lambda v=v: v) if isinstance(v, ir.Const) else
                 _entry(lo, var, side, v, holder) for v in value]
        return None if any(e is None for e in items) else (STATIC_TUPLE, items)
    kind = value[0] if isinstance(value, tuple) else getattr(value, "kind", None)
    if kind not in PLACEHOLDERS or (not isinstance(value, tuple)
                                    and not isinstance(value, ir.Value)):
        return None
    made: list = []

    def get():
        if not made:
            inner = value[1]() if isinstance(value, tuple) else value
            out = ir.Value(lo.namer.fresh(var), inner.kind)
            op = holder[0]
            op.outs.append(out)
            op.regions[side].yields.append(inner)
            op.regions[1 - side].yields.append(ir.Const(PLACEHOLDERS[kind]))
            lo.guard_of[id(out)] = lo.guard_of.get(id(inner), inner)
            if runtime_lists.is_grown(lo, inner) or structures.is_runtime(lo, inner):
                # the same list, of any length
                runtime_lists.register(lo, out, inner)
            made.append(out)
        return made[0]

    return (kind, get)


def value_of(entry):
    """The operand (or list of them) a guarded entry stands for, its φs
    made now."""
    if entry[0] == STATIC_LIST:
        return structures.StaticList([value_of(e) for e in entry[1]])
    if entry[0] == STATIC_TUPLE:
        return tuple(value_of(e) for e in entry[1])
    return entry[1]()


def nested(lo, pending: list, cond, guarded: list, before: dict, envs: list) -> None:
    """Names guarded inside either arm of the ``if`` on ``cond`` (by an inner
    ``if``): guarded after it too, under ``cond`` as well."""
    for side in (0, 1):
        for var, entry in guarded[side].items():
            if var in lo.env or var in envs[side] or entry is before.get(var):
                continue
            if var in before and entry[1] is before[var][1]:
                # the arm only entered some of its conditions (enter_arm): its
                # guard before the `if` still holds
                continue
            keep(lo, pending, var, cond, side, entry[1], entry[0])


def commit(lo, pending: list, op: ir.If) -> None:
    """The ``if`` op is made and kept: its names are guarded from here."""
    for var, entry, holder in pending:
        holder.append(op)
        lo.guarded[var] = entry


def polar(lo, cond: ir.Value, polarity: bool) -> tuple:
    """``(c, polarity)`` with ``not`` and guarded copies taken off ``cond``."""
    while True:
        if id(cond) in lo.guard_of:
            cond = lo.guard_of[id(cond)]
        elif id(cond) in lo.negations:
            cond, polarity = lo.negations[id(cond)], not polarity
        else:
            return (cond, polarity)


def enter_arm(lo, cond, polarity: bool) -> dict:
    """Entering the arm of an ``if`` on ``cond`` taken when it is ``polarity``:
    the names guarded by that condition are defined again. Returns them
    (name -> the operand the arm reads), so that the ``if`` can tell them
    from names the arm assigns (:func:`regained`)."""
    if not lo.guarded or not isinstance(cond, ir.Value):
        return {}
    test = polar(lo, cond, polarity)
    defined = {}
    for var, (conds, value) in list(lo.guarded.items()):
        if var in lo.env or conds[0][0] is not test[0] or conds[0][1] != test[1]:
            continue
        if len(conds) == 1:
            lo.env[var] = defined[var] = value_of(value)
        else:
            lo.guarded[var] = (conds[1:], value)
    return defined


def regained(defined: dict, var: str, value) -> bool:
    """Is ``value``, what an arm leaves in ``var``, the guarded value the arm
    only read again (``defined``: what :func:`enter_arm` returned for it)?
    Then the ``if`` assigned nothing to ``var``: it stays guarded by its own
    conditions, as before the ``if``, and is not guarded anew by this one's
    (``c and (not t or u)``, a test inside an ``or``, would otherwise leave
    ``t`` readable only where that ``or`` took its second operand)."""
    return var in defined and value is defined[var]
