"""Which adjoints each helper's backward pass must return.

Contract: :func:`needed_adjoints` takes the call graph (after inlining) and
the parameters the gradient is taken with respect to, and returns, per
helper specialisation, the positions of the parameters whose adjoint some
call site reads: those given an argument that is active in the caller
(:func:`s2s_ad.reverse.analysis.active`). A helper's pair is then
transformed with respect to those parameters only, so its backward pass
neither computes nor tapes what no caller uses (the other adjoints are
``None``, which every call site discards). The activity of a caller depends
on what its own callers need, so the sets grow to a fixed point from the
function differentiated down; recursion converges the same way.

Before → after, for ``h = step(x, dt)`` where the caller differentiates
only with respect to ``x``::

    dx, ddt = step_bwd(h_tape, dh)      dx, _ = step_bwd(h_tape, dh)
    (ddt computed in step_bwd)          (step_bwd returns None for dt)
"""

from __future__ import annotations

from s2s_ad import ir
from s2s_ad.reverse import analysis


def needed_adjoints(graph, wrt: list[ir.Value]) -> dict:
    """Specialisation key -> frozenset of parameter positions (see the
    module docstring). ``graph`` is a :class:`s2s_ad.frontend.calls.CallGraph`."""
    specs = {key: f for key, f in graph.lowered.items()
             if any(f is c for c in graph.callees)}
    needed: dict = {key: set() for key in specs}

    def active_args(func: ir.Function, wrt: list[ir.Value]):
        containers = [v for v in wrt if v.kind in ("list", "tuple")]
        act = analysis.active(func, func.scalars(wrt) + containers)
        for op in ir.walk(func.body):
            if isinstance(op, ir.Op) and op.callee is not None and op.callee.key in needed:
                for k, a in enumerate(op.args):
                    if isinstance(a, ir.Value) and id(a) in act:
                        yield op.callee.key, k

    changed = True
    while changed:
        changed = False
        work = [(graph.main, wrt)] + [
            (f, [f.param_values[k] for k in sorted(needed[key])]) for key, f in specs.items()]
        for func, of in work:
            if not of:
                continue
            for key, k in list(active_args(func, of)):
                if k not in needed[key]:
                    needed[key].add(k)
                    changed = True
    return {key: frozenset(ks) for key, ks in needed.items()}
