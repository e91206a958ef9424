"""Checkpointed loops: snapshots of the carried values instead of a tape
of every iteration, and the loop recomputed from them in the reverse sweep.

Contract: a loop marked ``checkpoint = K`` (:mod:`s2s_ad.frontend.checkpoint`)
whose reverse reads something from a tape gets, instead of one forward loop
that tapes every iteration and one reverse loop,

* in the **forward pass**, the user's loop without tape, keeping snapshots of
  its carried values (all of them: they are the loop's whole state) at some
  iterations;
* in the **reverse sweep**, a driver loop that goes back to the last snapshot,
  runs the loop forward again from it (without tape) to place a new snapshot,
  or, when none is free, runs forward to the last iteration not yet reversed,
  runs that part again taping it, and reverses it. Each iteration is taped
  and reversed exactly once; the adjoints carried between iterations simply
  carry on from one reversed part to the one before.

Two schedules:

* ``for i in range(...)`` (or over a list) that never stops early: its trip
  count ``n`` is known when it starts, and the snapshots follow Griewank's
  binomial schedule with ``K`` snapshots (the state before the first
  iteration is one of them) over blocks of iterations taped at once: one
  iteration when the loop carries an array (its tape is as large as a
  state), 32 when it carries numbers only (32 iterations of tape are a few
  hundred bytes, and the driver's own work per block would cost more than
  one iteration of a scalar loop). Each iteration runs forward at most
  ``r + 1`` times, ``r`` the least number with ``C(K + r, r) >= blocks``
  (:func:`repetitions`), and no schedule with ``K`` snapshots runs fewer
  blocks (:func:`forward_steps`);
* a ``while`` loop, or a ``for`` loop that may stop early, whose trip count
  is known only when it ends: a snapshot every ``e`` iterations, ``e``
  doubling (and every other snapshot dropped) whenever there are more than
  ``e`` of them, so about √n snapshots and parts of about √n iterations,
  each taped and reversed in turn: two forward runs of each iteration.

The forward statements (:mod:`s2s_ad.reverse.primal`) are made after the
reverse sweep has decided what it reads, so the driver made here holds empty
statement lists the forward pass fills (:class:`Plan`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from s2s_ad import ir
from s2s_ad.emit.code import Block, Stmt

# Module-level helper of the generated code: where the binomial schedule
# takes its next snapshot. Derivation: with s snapshots (the one held
# included) and r repetitions, beta(s, r) = C(s + r, r) iterations can be
# reversed; splitting l iterations at m, the part after m is reversed with
# s - 1 snapshots and the part before with s snapshots and one repetition
# fewer (it has just been run), so m must satisfy l - beta(s - 1, r) <= m <=
# beta(s, r - 1); taking m >= beta(s, r - 2) as well keeps both parts at
# their full repetition counts, which makes the total number of iterations
# run forward r * l - C(s + r, r - 1), the least possible.
HELPER = '''
def next_snapshot(k, end, free, unit):
    """The iteration at which to take the next snapshot when iterations k to
    end - 1 are to be reversed from a snapshot taken before iteration k, with
    `free` more snapshots allowed (binomial checkpointing over blocks of
    `unit` iterations, each taped at once); `end` when there is no snapshot
    to take (no free snapshot, or one block left)."""
    steps, snaps = -(-(end - k) // unit), free + 1  # blocks, snapshots
    if free < 1 or steps < 2:
        return end
    r, reach = 0, 1  # the least r with C(snaps + r, r) >= steps, and that binomial
    while reach < steps:
        r += 1
        reach = reach * (snaps + r) // r
    after = reach * snaps // (snaps + r)           # C(snaps - 1 + r, r)
    before = reach * r // (snaps + r)              # C(snaps + r - 1, r - 1)
    least = before * (r - 1) // (snaps + r - 1)    # C(snaps + r - 2, r - 2)
    return k + max(1, steps - after, least) * unit
'''.strip("\n")


def repetitions(n: int, snapshots: int) -> int:
    """The least ``r`` with ``C(snapshots + r, r) >= n``."""
    r, reach = 0, 1
    while reach < n:
        r += 1
        reach = reach * (snapshots + r) // r
    return r


def repetitions_table(snapshots: int, rows: int = 4) -> list[tuple[int, int]]:
    """(r, the most iterations reversed with r repetitions) for r = 1, 2, ...:
    ``C(snapshots + r, r)``."""
    out, reach = [], 1
    for r in range(1, rows + 1):
        reach = reach * (snapshots + r) // r
        out.append((r, reach))
    return out


def forward_steps(n: int, snapshots: int) -> int:
    """Iterations the binomial schedule runs forward without tape to reverse
    ``n`` iterations from one snapshot with ``snapshots`` in all (Griewank's
    ``r * n - C(snapshots + r, r - 1)``): the least of any schedule."""
    r = repetitions(n, snapshots)
    if r == 0:
        return 0
    binom = 1
    for j in range(1, r):  # C(snapshots + r, r - 1)
        binom = binom * (snapshots + 1 + j) // j
    return r * n - binom


@dataclass(eq=False)
class Plan:
    """One checkpointed loop: the names its driver uses and the statement
    lists the forward pass fills."""

    node: object
    binomial: bool
    snapshots: int
    snaps: str
    names: dict
    advance: list = field(default_factory=list)
    """Bodies of ``for`` blocks running the loop forward without tape."""
    taped: list = field(default_factory=list)
    """The body of the ``for`` block running the loop forward, taping it."""
    state: list = field(default_factory=list)
    """The forward names of the carried values, in snapshot order."""
    helper: str = ""
    """The generated name of :data:`HELPER`'s function (binomial schedule)."""
    unit: int = 1
    """Iterations taped at once (a block of the binomial schedule)."""


def has_tape(sweep, node) -> bool:
    """Does the reverse of ``node`` pop anything (else there is nothing to
    checkpoint)?"""
    regions = [r for n in ir.walk(node.body) if not isinstance(n, ir.Op) for r in n.regions]
    return any(sweep.popped.get(id(r)) for r in [node.body, *regions])


NUMBER_BLOCK = 32
"""Iterations a checkpointed loop of numbers tapes at once."""


def _parse(text: str) -> ast.stmt:
    return ast.parse(text).body[0]


def _state(names: list[str]) -> str:
    return ", ".join(names) + ("," if len(names) == 1 else "")


def reverse(sweep, node, body: list) -> list:
    """The driver of a checkpointed loop's reverse sweep; ``body`` is the
    reverse of one iteration (pops included)."""
    inside = sweep.inside(node)
    read = [a for r in node.regions for a in r.yields]
    for r in node.regions:  # the forward pass runs again here: keep what it reads
        for n in ir.walk(r):
            read += ir.operands(n)
            if not isinstance(n, ir.Op):
                read += [a for r2 in n.regions for a in r2.yields]
    for a in read:
        if isinstance(a, ir.Value) and id(a) not in inside:
            sweep.ref(a)
    base = sweep.fwd(node.carried[0]) if node.carried else "loop"
    binomial = isinstance(node, ir.For) and not node.exit
    names = {k: sweep.namer.fresh(f"{base}_{k}") for k in
             (("next", "end", "k", "mid", "last") if binomial else ("every", "end", "start"))}
    plan = Plan(node, binomial, node.checkpoint, sweep.namer.fresh(f"{base}_snaps"), names)
    plan.state = [sweep.fwd(c) for c in node.carried]
    if binomial:
        plan.helper = sweep.checkpoint_helper()
        # Numbers: a block of iterations taped at once costs little memory and
        # saves the driver's own work per iteration, which would cost more than
        # the iteration; arrays: one iteration at a time (its tape is a state).
        numbers = all(c.kind in ("float", "int", "bool") for c in node.carried)
        plan.unit = NUMBER_BLOCK if numbers else 1
    sweep.ckpts[id(node)] = plan
    index = node.index.name if isinstance(node, ir.For) and id(node.index) in sweep.reads \
        else sweep.discard()
    line = node.loc.line
    if binomial:
        return _binomial(sweep, node, plan, body, index, line)
    return _segments(sweep, node, plan, body, index, line)


def _range(sweep, node) -> str:
    return "range(" + ", ".join(ast.unparse(sweep.ref(a)) for a in ir.range_args(node)) + ")"


def _for(target: str, it: str, body: list, comment: str, node=None) -> Block:
    head = _parse(f"for {target} in {it}: pass")
    head.body = []
    return Block(head, body, [], comment, node)


def _binomial(sweep, node, plan: Plan, body: list, index: str, line: int) -> list:
    n = plan.names
    rng = _range(sweep, node)
    snaps, state = plan.snaps, _state(plan.state)
    i = node.index.name
    budget, unit = plan.snapshots, plan.unit
    end, k, mid, last = n["end"], n["k"], n["mid"], n["last"]
    block = "the last iteration" if unit == 1 else "the last block"
    plan.advance = [[], []]
    to_mid = _for(i, f"{rng}[{k}:{mid}]", plan.advance[0],
                  "forward again, untaped, to the next snapshot")
    to_last = _for(i, f"{rng}[{k}:{last}]", plan.advance[1],
                   f"forward again, untaped, to {block} not reversed")
    taped = _for(i, f"{rng}[{last}:{end}]", plan.taped, "taped")
    back = _for(index, f"reversed({rng}[{last}:{end}])", body,
                f"line {line}: {node.text}, backwards ("
                + ("one iteration" if unit == 1 else f"a block of at most {unit} iterations")
                + ")", node)
    pop = Block(_parse(f"if {end} == {k}: pass"), [Stmt(_parse(f"{snaps}.pop()"))], [],
                "every iteration after this snapshot is reversed")
    start = f"{end} - 1" if unit == 1 else f"{k} + ({end} - {k} - 1) // {unit} * {unit}"
    place = Block(_parse(f"if {mid} < {end}: pass"),
                  [to_mid, Stmt(_parse(f"{snaps}.append(({mid}, {state}))"), "a snapshot there")],
                  [Stmt(_parse(f"{last} = {start}"),
                        f"where {block} not reversed starts" if unit > 1 else ""),
                   to_last, taped, back, Stmt(_parse(f"{end} = {last}")), pop],
                  "a free snapshot: take it where the schedule says")
    driver = [
        Stmt(_parse(f"{k}, {state} = {snaps}[-1]"), "back to the last snapshot"),
        Stmt(_parse(f"{mid} = {plan.helper}({k}, {end}, {budget} - len({snaps}), {unit})"),
             "binomial schedule"),
        place,
    ]
    return [Stmt(_parse(f"{end} = len({rng})"), f"iterations of line {line} to reverse"),
            Block(_parse(f"while {end} > 0: pass"), driver, [],
                  f"line {line}: {node.text}, backwards: checkpointed, at most {budget} "
                  "snapshots", node)]


def _segments(sweep, node, plan: Plan, body: list, index: str, line: int) -> list:
    n = plan.names
    snaps, state = plan.snaps, _state(plan.state)
    end, start = n["end"], n["start"]
    if isinstance(node, ir.For):
        rng = _range(sweep, node)
        again = _for(node.index.name, f"{rng}[{start}:{end}]", plan.taped,
                     "the segment again, taped")
        back = _for(index, f"reversed({rng}[{start}:{end}])", body,
                    f"line {line}: {node.text}, backwards (one segment)", node)
    else:
        again = _for(sweep.discard(), f"range({end} - {start})", plan.taped,
                     "the segment again, taped")
        back = _for(sweep.discard(), f"range({end} - {start})", body,
                    f"line {line}: {node.text}, backwards (one segment)", node)
    trips = ast.unparse(sweep.ref(node.trips))
    driver = [
        Stmt(_parse(f"{state} = {snaps}.pop()"), "back to the snapshot the segment starts at"),
        Stmt(_parse(f"{start} = len({snaps}) * {n['every']}"), "its iteration"),
        again, back,
        Stmt(_parse(f"{end} = {start}"), ""),
    ]
    return [Stmt(_parse(f"{end} = {trips}"), f"iterations of line {line} to reverse"),
            Block(_parse(f"while {snaps}: pass"), driver, [],
                  f"line {line}: {node.text}, backwards: checkpointed, a segment of about "
                  "√n iterations at a time, last first", node)]


# -- the forward pass ------------------------------------------------------------

def forward_snapshot(plan: Plan, counter: str, total: str) -> list:
    """The statements at the start of an iteration of the forward loop that
    keep its snapshots (``counter``: iterations done; ``total``: the trip
    count, for the binomial schedule)."""
    n, snaps, state = plan.names, plan.snaps, _state(plan.state)
    if plan.binomial:
        take = [Stmt(_parse(f"{snaps}.append(({counter}, {state}))"), "a snapshot"),
                Stmt(_parse(f"{n['next']} = {plan.helper}({counter}, {total}, "
                            f"{plan.snapshots} - len({snaps}), {plan.unit})"),
                     "where the next one goes")]
        return [Block(_parse(f"if {counter} == {n['next']}: pass"), take, [],
                      "binomial schedule")]
    every = n["every"]
    thin = Block(_parse(f"if len({snaps}) > {every}: pass"),
                 [Stmt(_parse(f"del {snaps}[1::2]"), "keep every other one"),
                  Stmt(_parse(f"{every} *= 2"), "")], [], f"more than {every}: about √n")
    return [Block(_parse(f"if {counter} % {every} == 0: pass"),
                  [Stmt(_parse(f"{snaps}.append(({state}))")),
                   thin], [], f"a snapshot every {every} iterations")]


def forward_start(plan: Plan) -> list:
    """The snapshot list (and the schedule's state) before the forward loop."""
    n = plan.names
    out = [Stmt(_parse(f"{plan.snaps} = []"),
                f"snapshots of ({', '.join(plan.state)}), line {plan.node.loc.line} is "
                "checkpointed")]
    if plan.binomial:
        out.append(Stmt(_parse(f"{n['next']} = 0"), "the iteration of the next snapshot"))
    else:
        out.append(Stmt(_parse(f"{n['every']} = 1"), "iterations between snapshots"))
    return out
