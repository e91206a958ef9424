"""Structure parameters (tests/pytrees_src.py): dict, list, tuple, NamedTuple
and dataclass arguments, nested. Each gradient is compared with central
differences of the original function over every number of every leaf
(float64), through `grad` and `vjp`; the gradient has the argument's
structure (a dict for a dict, an instance of the same class for a dataclass
or NamedTuple). The flattening below is the test's own, independent of
s2s-ad's."""

import copy
import dataclasses

import numpy as np
import pytest

import pytrees_src as src
import s2s_ad


def _flatten(tree):
    """(leaves, rebuild) for the structures the tests use."""
    if dataclasses.is_dataclass(tree):
        names = [f.name for f in dataclasses.fields(tree)]
        parts = [_flatten(getattr(tree, n)) for n in names]
        return _join(parts, lambda vals: type(tree)(**dict(zip(names, vals))))
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        parts = [_flatten(v) for v in tree]
        return _join(parts, lambda vals: type(tree)(*vals))
    if isinstance(tree, dict):
        keys = list(tree)
        parts = [_flatten(tree[k]) for k in keys]
        return _join(parts, lambda vals: dict(zip(keys, vals)))
    if isinstance(tree, (list, tuple)):
        parts = [_flatten(v) for v in tree]
        return _join(parts, lambda vals: type(tree)(vals))
    return [tree], lambda vals: vals[0]


def _join(parts, make):
    leaves = [leaf for p, _ in parts for leaf in p]
    sizes = [len(p) for p, _ in parts]

    def rebuild(vals):
        out, k = [], 0
        for (_, sub), n in zip(parts, sizes):
            out.append(sub(vals[k:k + n]))
            k += n
        return make(out)
    return leaves, rebuild


def _fd_tree(f, args, k, h=1e-6):
    """Central differences of f with respect to every number of args[k]."""
    leaves, rebuild = _flatten(args[k])
    grads = []
    for j, leaf in enumerate(leaves):
        a = np.asarray(leaf, dtype=float)
        g = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            vals = []
            for sign in (1, -1):
                moved = [np.array(v, dtype=float) if isinstance(v, np.ndarray) else v
                         for v in copy.deepcopy(leaves)]
                if isinstance(leaf, np.ndarray):
                    moved[j][idx] += sign * h
                else:
                    moved[j] = leaf + sign * h
                new = list(args)
                new[k] = rebuild(moved)
                vals.append(f(*new))
            g[idx] = (vals[0] - vals[1]) / (2 * h)
        grads.append(g if isinstance(leaf, np.ndarray) else float(g))
    return grads


def _same_structure(got, like):
    assert type(got) is type(like), (type(got), type(like))
    if dataclasses.is_dataclass(like) or isinstance(like, (list, tuple, dict)):
        g_leaves, _ = _flatten(got)
        l_leaves, _ = _flatten(like)
        assert len(g_leaves) == len(l_leaves)


def _check(got, f, args, k):
    _same_structure(got, args[k])
    leaves, _ = _flatten(got)
    for g, want in zip(leaves, _fd_tree(f, args, k)):
        np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-6)


def _rng(seed=0):
    return np.random.default_rng(seed)


def _layers(n, cls=src.Layer, seed=0):
    rng = _rng(seed)
    return [cls(rng.normal(size=(3, 3)) * 0.7, rng.normal(size=3)) for _ in range(n)]


def _model():
    rng = _rng(1)
    return src.Model(rng.normal(size=(3, 3)), rng.normal(size=3),
                     src.Head(rng.normal(size=3), 1.5))


CASES = [
    ("scalar_dataclass", lambda: (src.Scalars(0.5, -0.3), 0.7)),
    ("dict_mlp", lambda: ({"W1": _rng().normal(size=(4, 3)), "b1": _rng(2).normal(size=4),
                           "W2": _rng(3).normal(size=(2, 4))}, _rng(4).normal(size=3))),
    ("pairs_mlp", lambda: ([tuple(layer) for layer in _layers(3)], _rng(5).normal(size=3))),
    ("pairs_mlp", lambda: ([tuple(layer) for layer in _layers(1)], _rng(5).normal(size=3))),
    ("pairs_mlp", lambda: ([], _rng(5).normal(size=3))),
    ("namedtuple_mlp", lambda: (_layers(2), _rng(6).normal(size=3))),
    ("namedtuple_mlp", lambda: (tuple(_layers(3)), _rng(6).normal(size=3))),
    ("indexed_layers", lambda: (_layers(2), _rng(7).normal(size=3))),
    ("nested_model", lambda: (_model(), _rng(8).normal(size=3))),
    ("enumerate_zip_layers", lambda: (_layers(2), [0.5, 0.7], _rng(9).normal(size=3))),
    ("helper_gets_fields", lambda: (src.Scalars(0.5, -0.3), 0.7)),
    ("nested_dicts", lambda: ({"layers": [{"W": _rng(1).normal(size=(2, 2)), "s": 0.5},
                                          {"W": _rng(2).normal(size=(2, 2)), "s": 1.5}],
                               "bias": 0.3}, _rng(3).normal(size=2))),
    ("unused_leaf", lambda: ({"a": _rng(1).normal(size=2), "b": _rng(2).normal(size=3)},
                             _rng(3).normal(size=2))),
    ("lists_of_arrays", lambda: ([_rng(i).normal(size=(3, 3)) for i in range(3)],
                                 [_rng(i + 5).normal(size=3) for i in range(3)],
                                 _rng(9).normal(size=3))),
]


@pytest.mark.parametrize("name, make", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_grad_has_the_structure_and_matches_finite_differences(name, make):
    f = getattr(src, name)
    args = make()
    got = s2s_ad.grad(f, wrt=tuple(range(len(args))))(*args)
    for k in range(len(args)):
        _check(got[k], f, args, k)


@pytest.mark.parametrize("name, make", CASES[:4] + CASES[5:], ids=lambda x: getattr(x, "__name__", x))
def test_vjp(name, make):
    f = getattr(src, name)
    args = make()
    value, back = s2s_ad.vjp(f, *args)
    assert value == pytest.approx(f(*args))
    got = back(1.0)
    for k in range(len(args)):
        _check(got[k], f, args, k)


def test_wrt_names_the_structure_and_one_module_serves_values_of_that_structure():
    s2s_ad.clear_cache()
    g = s2s_ad.grad(src.nested_model, wrt="model")
    for seed in (1, 2):
        rng = _rng(seed)
        model = src.Model(rng.normal(size=(3, 3)), rng.normal(size=3),
                          src.Head(rng.normal(size=3), 0.5 * seed))
        x = rng.normal(size=3)
        got = g(model, x)
        assert isinstance(got, src.Model) and isinstance(got.head, src.Head)
        _check(got, src.nested_model, (model, x), 0)
    text = s2s_ad.source_of(g)
    assert "model.head.w" in text and "type(model)(" in text


def test_a_dict_gradient_keeps_the_keys_in_order():
    params = {"W2": _rng(3).normal(size=(2, 4)), "W1": _rng().normal(size=(4, 3)),
              "b1": _rng(2).normal(size=4)}
    got = s2s_ad.grad(src.dict_mlp, wrt="params")(params, _rng(4).normal(size=3))
    assert list(got) == ["W2", "W1", "b1"]


def test_an_int_field_bounds_a_loop_and_gets_a_zero_gradient():
    c = src.Config(0.9, 3)
    got = s2s_ad.grad(src.int_field_as_bound, wrt=("c", "x"))(c, 0.4)
    assert isinstance(got[0], src.Config) and got[0].n == 0.0
    h = 1e-6
    want = (src.int_field_as_bound(src.Config(0.9 + h, 3), 0.4)
            - src.int_field_as_bound(src.Config(0.9 - h, 3), 0.4)) / (2 * h)
    assert got[0].w == pytest.approx(want, rel=1e-6)


def test_module_constant_lists_are_constants():
    g = s2s_ad.grad(src.horner_constant)
    for x in (0.0, 0.3, -1.2):
        h = 1e-6
        want = (src.horner_constant(x + h) - src.horner_constant(x - h)) / (2 * h)
        assert g(x) == pytest.approx(want, rel=1e-6, abs=1e-8)


def test_a_structure_passed_whole_to_a_helper_has_the_same_gradient():
    args = (src.Scalars(0.5, 0.2), 0.3)
    got = s2s_ad.grad(src.helper_gets_structure, wrt=(0, 1))(*args)
    _check(got[0], src.helper_gets_structure, args, 0)
    _check(got[1], src.helper_gets_structure, args, 1)


@pytest.mark.parametrize("name, make", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_jvp_takes_a_tangent_of_the_structure(name, make):
    # the directional derivative along a random tangent of the same structure
    # is the dot product of central differences with that tangent
    import inspect
    f = getattr(src, name)
    args = make()
    first = list(inspect.signature(f).parameters)[0]
    leaves, rebuild = _flatten(args[0])
    rng = _rng(11)
    directions = [rng.normal(size=np.shape(leaf)) if isinstance(leaf, np.ndarray)
                  else float(rng.normal()) for leaf in leaves]
    value, tangent = s2s_ad.jvp(f, wrt=first)(*args, **{f"d{first}": rebuild(directions)})
    assert np.allclose(value, f(*args))
    want = sum(float(np.sum(np.asarray(g) * np.asarray(d)))
               for g, d in zip(_fd_tree(f, args, 0), directions))
    assert tangent == pytest.approx(want, rel=1e-5, abs=1e-6)
