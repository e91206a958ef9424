"""Transform time grows linearly with the program: checked structurally, by
counting work, never by a clock.

* The number of Python function calls ``gradient_source`` makes is counted
  (``sys.setprofile``) for a program and for one twice its size, in each
  family of ``benchmarks/transform_time.py``: a linear transform about
  doubles it; nested ``if``s were exponential (depth 20 took 5.7 s) and
  sequential loops quadratic or worse, which these ratios catch.
* The indexed copy elimination of :mod:`s2s_ad.emit.peephole` makes exactly the
  rewrites of the naive search it replaced (:mod:`tests.peephole_reference`),
  on the reverse sweeps of real programs and on random statement lists built
  to contain many copies, accumulators and conflicts.
"""

from __future__ import annotations

import ast
import copy
import importlib.util
import os
import random
import sys
from collections import Counter

import pytest

import s2s_ad
from s2s_ad.emit import module as emit
from s2s_ad.emit import peephole
from s2s_ad.reverse import transform as reverse
from s2s_ad.emit.code import Block, Stmt
from tests import cf_programs, peephole_reference
from tests.modules import import_source
from tests.programs import RandomDraw, program

_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                     "benchmarks", "transform_time.py")
_spec = importlib.util.spec_from_file_location("bench_transform_time", _PATH)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def calls(fn) -> int:
    """Python function calls made by ``gradient_source(fn)``."""
    n = 0

    def profile(frame, event, arg):
        nonlocal n
        if event == "call":
            n += 1

    old = sys.getprofile()
    sys.setprofile(profile)
    try:
        s2s_ad.gradient_source(fn)
    finally:
        sys.setprofile(old)
    return n


# Measured ratios: straight 2.0, loops 2.0, nested 2.3 (each level of
# nesting still looks at what it contains once: statements × depth). An
# exponential or quadratic pass gives 4 or far more.
@pytest.mark.parametrize("family, size, bound", [
    ("straight", 40, 2.4),
    ("loops", 15, 2.4),
    ("nested", 10, 3.0),
])
def test_work_grows_linearly(tmp_path, family, size, bound):
    make = getattr(bench, family)
    small = bench.load(make(size), str(tmp_path), f"{family}_{size}")
    large = bench.load(make(2 * size), str(tmp_path), f"{family}_{2 * size}")
    ratio = calls(large) / calls(small)
    assert ratio < bound, f"{family}: doubling the program multiplied the work by {ratio:.2f}"


def test_deep_nesting_transforms(tmp_path):
    """50 nested ifs: no RecursionError, and the gradient is right."""
    fn = bench.load(bench.nested(50), str(tmp_path), "nested_50")
    g = s2s_ad.grad(fn, wrt=None)
    x, y, h = 0.9, 0.4, 1e-6
    gx, gy = g(x, y)
    assert gx == pytest.approx((fn(x + h, y) - fn(x - h, y)) / (2 * h), rel=1e-6)
    assert gy == pytest.approx((fn(x, y + h) - fn(x, y - h)) / (2 * h), rel=1e-6)


# -- the indexed copy elimination against the naive one ----------------------------


def _text(stmts: list) -> str:
    return "\n".join(emit._body(stmts, ""))


def _both(stmts: list, counts: Counter) -> None:
    mine, theirs = copy.deepcopy(stmts), copy.deepcopy(stmts)
    mine_counts, their_counts = Counter(counts), Counter(counts)
    peephole.run(mine, mine_counts)
    peephole_reference.run(theirs, their_counts)
    assert _text(mine) == _text(theirs), _text(stmts)
    assert +mine_counts == +their_counts


def _captured(fns) -> list:
    """The (statements, counts) each transform of ``fns`` gives copy elimination."""
    seen = []
    real = peephole.run

    def capture(stmts, counts):
        seen.append((copy.deepcopy(stmts), Counter(counts)))
        real(stmts, counts)

    reverse.peephole.run = capture
    try:
        for fn, wrt in fns:
            try:
                s2s_ad.gradient_source(fn, wrt)
            except s2s_ad.S2SError:
                pass
    finally:
        reverse.peephole.run = real
    return seen


def test_same_rewrites_on_real_sweeps(tmp_path):
    fns = [(f, None) for name, f in sorted(vars(cf_programs).items())
           if callable(f) and getattr(f, "__module__", "") == cf_programs.__name__]
    for seed in range(60):
        p = program(RandomDraw(seed), max_stmts=8)
        fns.append((getattr(import_source(tmp_path, p.source, f"peep{seed}"), p.name), p.wrt))
    for n in (3, 8):
        fns.append((bench.load(bench.loops(n), str(tmp_path), f"loops_{n}"), None))
        fns.append((bench.load(bench.nested(n), str(tmp_path), f"nested_{n}"), None))
    captured = _captured(fns)
    assert len(captured) > 60
    for stmts, counts in captured:
        _both(stmts, counts)


NAMES = ["a", "b", "c", "d", "e", "f"]


def _name(r, ctx=ast.Load):
    return ast.Name(r.choice(NAMES), ctx())


def _stmt(r) -> Stmt:
    kind = r.randrange(7)
    if kind <= 1:
        node = ast.Assign([_name(r, ast.Store)], _name(r))
    elif kind == 2:
        node = ast.Assign([_name(r, ast.Store)], ast.BinOp(_name(r), ast.Mult(), _name(r)))
    elif kind == 3:
        node = ast.AugAssign(_name(r, ast.Store), ast.Add(), _name(r))
    elif kind == 4:
        node = ast.AugAssign(ast.Subscript(_name(r), _name(r), ast.Store()), ast.Add(), _name(r))
    elif kind == 5:
        node = ast.Assign([ast.Tuple([_name(r, ast.Store), _name(r, ast.Store)], ast.Store())],
                          ast.Tuple([_name(r), _name(r)], ast.Load()))
    else:
        node = ast.Expr(ast.Call(ast.Name("g", ast.Load()), [_name(r), _name(r)], []))
    return Stmt(node, "")


def _stmts(r, depth: int = 0) -> list:
    out = []
    for _ in range(r.randrange(1, 12)):
        if depth < 2 and r.random() < 0.15:
            head = ast.If(_name(r), [], []) if r.random() < 0.5 else \
                ast.For(_name(r, ast.Store), _name(r), [], [], None)
            out.append(Block(head, _stmts(r, depth + 1),
                             _stmts(r, depth + 1) if isinstance(head, ast.If) else []))
        else:
            out.append(_stmt(r))
    return out


@pytest.mark.parametrize("seed", range(300))
def test_same_rewrites_on_random_blocks(seed):
    r = random.Random(seed)
    stmts = _stmts(r)
    counts = peephole.names_in(Block(ast.If(ast.Constant(True), [], []), stmts))
    # Names read elsewhere in the function (the forward pass, the return).
    for name in r.sample(NAMES, r.randrange(3)):
        counts[name] += 1
    _both(stmts, counts)
