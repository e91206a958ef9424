"""``vjp_fn`` gives the gradient at the point ``vjp`` was called at, even when
the caller changes an argument or the value in place before calling it
(``pred -= y``, ``x[0] = 0.0``): the forward pass keeps them on its tape, so
``vjp`` gives it copies of its own (``callplan.private``). Each case against
central differences at the original point, on the first call of ``vjp``
(the slow way) and on later ones (the plan's table, its quick path)."""

import copy

import numpy as np
import pytest

import s2s_ad
from tests import vjp_private_src as src


def _differences(fn, args, cotangent, h=1e-6):
    """Σ cotangent · ∂value/∂(each float element of each array or list argument)."""
    out = []
    for k, a in enumerate(args):
        if isinstance(a, (list, np.ndarray)):
            g = np.zeros(np.shape(a))
            for idx in np.ndindex(np.shape(a)):
                up, down = copy.deepcopy(list(args)), copy.deepcopy(list(args))
                for moved, step in ((up, h), (down, -h)):
                    if isinstance(a, list):
                        moved[k][idx[0]] += step
                    else:
                        moved[k][idx] += step
                g[idx] = (_dot(fn(*up), cotangent) - _dot(fn(*down), cotangent)) / (2 * h)
            out.append(g)
        elif isinstance(a, float):
            up, down = list(args), list(args)
            up[k] += h
            down[k] -= h
            out.append((_dot(fn(*up), cotangent) - _dot(fn(*down), cotangent)) / (2 * h))
        else:
            out.append(None)
    return out


def _dot(value, cotangent):
    if isinstance(value, tuple):
        return sum(_dot(v, c) for v, c in zip(value, cotangent))
    return float(np.sum(np.asarray(value) * np.asarray(cotangent)))


def _check(got, want):
    for g, w in zip(got, want):
        if w is not None:
            assert np.allclose(np.asarray(g, dtype=float), w, rtol=1e-6, atol=1e-7)


RNG = np.random.default_rng(3)


def _cases():
    x = RNG.normal(size=3)
    w = RNG.normal(size=(3, 2))
    return [
        ("value changed", src.exp_value, (x,), np.ones(3),
         lambda args, value: value.__imul__(100.0)),
        ("argument changed", src.exp_value, (x,), np.ones(3),
         lambda args, value: args[0].__setitem__(0, 5.0)),
        ("matrix changed", src.tanh_matvec, (x, w), np.ones(2),
         lambda args, value: (args[1].__setitem__(slice(None), 2.0), value.__iadd__(1.0))),
        ("list changed", src.sines, ([0.1, 0.2, 0.3], 0.7), 1.0,
         lambda args, value: args[0].__setitem__(0, 5.0)),
        ("tuple value changed", src.identity_rows, (x,), (np.ones(3), 2.0),
         lambda args, value: value[0].__imul__(-3.0)),
    ]


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c[0])
@pytest.mark.parametrize("call", ["first", "later"])
def test_changes_after_vjp_do_not_reach_vjp_fn(case, call):
    _, fn, args, cotangent, change = case
    want = _differences(fn, copy.deepcopy(args), cotangent)
    s2s_ad.clear_cache()
    if call == "later":  # the plan's table, then its quick path
        for _ in range(3):
            s2s_ad.vjp(fn, *copy.deepcopy(args))[1](cotangent)
    mine = copy.deepcopy(args)
    value, vjp_fn = s2s_ad.vjp(fn, *mine)
    change(mine, value)
    _check(vjp_fn(cotangent), want)


def test_a_dict_argument_changed_after_vjp():
    w = np.array([1.0, 2.0])
    value, vjp_fn = s2s_ad.vjp(src.cubes, {"w": w.copy(), "b": 0.5})
    right = vjp_fn(1.0)[0]["w"]
    p = {"w": w.copy(), "b": 0.5}
    value, vjp_fn = s2s_ad.vjp(src.cubes, p)
    p["w"][0] = 10.0
    got = vjp_fn(1.0)[0]["w"]
    assert np.allclose(got, 3 * w ** 2 + 0.5)
    assert np.allclose(got, right)


@pytest.mark.parametrize("kind", [src.Params, src.Pair])
def test_a_structure_argument_changed_after_vjp(kind):
    w = np.array([0.3, -0.4, 1.1])
    p = kind(w.copy(), 1.5)
    value, vjp_fn = s2s_ad.vjp(src.dataclass_loss, p, 0.7)
    p.w[:] = 9.0
    dp, dx = vjp_fn(1.0)
    assert np.allclose(dp.w, np.cos(w * 0.7) * 0.7 * 1.5)
    assert np.isclose(dx, np.sum(np.cos(w * 0.7) * w) * 1.5)


def test_a_gradients_vjp_keeps_its_point():
    g = s2s_ad.grad(src.sines, wrt=1)
    c = [0.1, 0.2, 0.3]
    x = 0.7
    value, vjp_fn = s2s_ad.vjp(g, c, x)
    c[0] = 5.0  # the second derivative is asked for at the original c
    second = vjp_fn(1.0)[1]
    want = -sum(ci * ci * np.sin(ci * x) for ci in (0.1, 0.2, 0.3))
    assert np.isclose(second, want)


def test_numbers_are_passed_as_they_are():
    value, vjp_fn = s2s_ad.vjp(src.scalar_square, 1.5, 2.0)
    assert value == 4.5
    assert vjp_fn(1.0) == (6.0, 2.25)
