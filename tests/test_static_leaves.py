"""Static leaves in structure parameters (tests/static_leaves_src.py): a
string, None or bool inside a dict, list, tuple, NamedTuple or dataclass
selects code as a static argument does. Each gradient is compared with
central differences (float64) over every number of every leaf; the
gradient keeps the argument's static values; code generated for one value
is never run for another."""

import os
import subprocess
import sys

import numpy as np
import pytest

import s2s_ad
import static_leaves_src as src

H = 1e-6


def _layers(acts, seed=0):
    rng = np.random.default_rng(seed)
    return [src.Layer(rng.normal(size=(3, 3)) * 0.8, rng.normal(size=3), a) for a in acts]


def _fd_layers(f, layers, x):
    """Central differences with respect to every W and b of every layer."""
    out = []
    for i, L in enumerate(layers):
        grads = {}
        for field in ("W", "b"):
            a = getattr(L, field)
            g = np.zeros_like(a)
            for k in np.ndindex(a.shape):
                vals = []
                for s in (H, -H):
                    moved = a.copy()
                    moved[k] += s
                    new = list(layers)
                    new[i] = L._replace(**{field: moved})
                    vals.append(f(new, x))
                g[k] = (vals[0] - vals[1]) / (2 * H)
            grads[field] = g
        out.append(grads)
    return out


def _check_layers(got, f, layers, x):
    assert isinstance(got, list) and len(got) == len(layers)
    for g, L, want in zip(got, layers, _fd_layers(f, layers, x)):
        assert isinstance(g, src.Layer) and g.act == L.act
        np.testing.assert_allclose(g.W, want["W"], rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(g.b, want["b"], rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("f", [src.net, src.net_helper], ids=["loop", "helper"])
def test_layers_by_activation_name(f):
    g = s2s_ad.grad(f, wrt=0)
    x = np.random.default_rng(9).normal(size=3)
    # the same structure (two layers) with the names swapped, then three layers,
    # then the first again: each call gets the code for its own names
    for acts in (["tanh", "linear"], ["linear", "tanh"], ["softplus", "tanh", "linear"],
                 ["tanh", "linear"]):
        if f is src.net_helper and "softplus" in acts:
            continue
        layers = _layers(acts)
        _check_layers(g(layers, x), f, layers, x)


def test_vjp_and_value_and_grad_of_layers():
    layers, x = _layers(["tanh", "linear"]), np.random.default_rng(3).normal(size=3)
    value, back = s2s_ad.vjp(src.net, layers, x)
    assert value == pytest.approx(src.net(layers, x))
    _check_layers(back(1.0)[0], src.net, layers, x)
    value, got = s2s_ad.value_and_grad(src.net, wrt="layers")(layers, x)
    assert value == pytest.approx(src.net(layers, x))
    _check_layers(got, src.net, layers, x)


def test_jvp_and_hvp_of_layers():
    layers, x = _layers(["tanh", "linear"]), np.random.default_rng(4).normal(size=3)
    rng = np.random.default_rng(5)
    t = [L._replace(W=rng.normal(size=L.W.shape), b=rng.normal(size=L.b.shape)) for L in layers]
    _, tangent = s2s_ad.jvp(src.net, wrt=0)(layers, x, dlayers=t)
    grads = _fd_layers(src.net, layers, x)
    want = sum(np.sum(g["W"] * d.W) + np.sum(g["b"] * d.b) for g, d in zip(grads, t))
    assert tangent == pytest.approx(want, rel=1e-5)
    hv = s2s_ad.hvp(src.net, wrt=0)(layers, x, t)
    # H·t against central differences of the gradient along t
    g = s2s_ad.grad(src.net, wrt=0)
    plus = [L._replace(W=L.W + H * d.W, b=L.b + H * d.b) for L, d in zip(layers, t)]
    minus = [L._replace(W=L.W - H * d.W, b=L.b - H * d.b) for L, d in zip(layers, t)]
    gp, gm = g(plus, x), g(minus, x)
    for h, a, b, L in zip(hv, gp, gm, layers):
        assert h.act == L.act
        np.testing.assert_allclose(h.W, (a.W - b.W) / (2 * H), rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(h.b, (a.b - b.b) / (2 * H), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("cfg", [src.Config(2.0), src.Config(2.0, "l1"),
                                 src.Config(2.0, "l2", True, 0.5), src.Config(1.5, "l1", True, None)],
                         ids=["l2", "l1", "l2-bias", "l1-bias-None"])
def test_dataclass_switches(cfg):
    x = 1.3
    got_cfg, got_x = s2s_ad.grad(src.penalty, wrt=(0, 1))(cfg, x)
    assert (got_cfg.mode, got_cfg.use_bias) == (cfg.mode, cfg.use_bias)

    def moved(**kw):
        return src.Config(**{**cfg.__dict__, **kw})
    want_scale = (src.penalty(moved(scale=cfg.scale + H), x)
                  - src.penalty(moved(scale=cfg.scale - H), x)) / (2 * H)
    assert got_cfg.scale == pytest.approx(want_scale, rel=1e-6)
    if cfg.bias is None:
        assert got_cfg.bias is None
    else:
        want_bias = (src.penalty(moved(bias=cfg.bias + H), x)
                     - src.penalty(moved(bias=cfg.bias - H), x)) / (2 * H)
        assert got_cfg.bias == pytest.approx(want_bias, rel=1e-6)
    want_x = (src.penalty(cfg, x + H) - src.penalty(cfg, x - H)) / (2 * H)
    assert got_x == pytest.approx(want_x, rel=1e-6)
    # wrt the number only: the structure still decides the code
    assert s2s_ad.grad(src.penalty, wrt="x")(cfg, x) == pytest.approx(want_x, rel=1e-6)


def test_dict_with_a_string():
    rng = np.random.default_rng(6)
    x = rng.normal(size=3)
    for act in ("tanh", "none"):
        p = {"W": rng.normal(size=(3, 2)), "act": act, "s": 0.7}
        got = s2s_ad.grad(src.dict_params, wrt=0)(p, x)
        assert list(got) == ["W", "act", "s"] and got["act"] == act
        want = np.zeros_like(p["W"])
        for k in np.ndindex(p["W"].shape):
            a, b = p["W"].copy(), p["W"].copy()
            a[k] += H
            b[k] -= H
            want[k] = (src.dict_params({**p, "W": a}, x) - src.dict_params({**p, "W": b}, x)) / (2 * H)
        np.testing.assert_allclose(got["W"], want, rtol=1e-5, atol=1e-7)
        assert got["s"] == pytest.approx(1.4)


def test_a_closure_capturing_a_structure_with_a_string():
    for mode, w in (("l2", 0.8), ("l1", -0.8)):
        loss = src.make_loss(src.Config(3.0, mode))
        want = (loss(w + H) - loss(w - H)) / (2 * H)
        assert s2s_ad.grad(loss)(w) == pytest.approx(want, rel=1e-6)


def test_the_code_refuses_another_value_than_it_was_generated_for():
    layers, x = _layers(["tanh", "linear"]), np.random.default_rng(7).normal(size=3)
    g = s2s_ad.grad(src.net, wrt=0)
    g(layers, x)
    text = s2s_ad.source_of(g)
    assert "if layers[0].act != 'tanh':" in text and "act=layers[0].act" in text
    space: dict = {}
    exec(compile(text, "<generated>", "exec"), space)
    fn = space["grad_net"]
    fn(layers, x)
    with pytest.raises(ValueError, match=r"generated for layers\[1\].act='linear'"):
        fn(_layers(["tanh", "tanh"]), x)


def test_cli_like_with_a_string_field(tmp_path):
    here = os.path.dirname(os.path.abspath(__file__))
    out = tmp_path / "grad_net.py"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([here, os.environ.get("PYTHONPATH", "")])}
    subprocess.run([sys.executable, "-m", "s2s_ad", "grad", os.path.join(here, "static_leaves_src.py") + ":net",
                    "--wrt", "layers", "--like", "layers=EXAMPLE_LAYERS", "-o", str(out)],
                   check=True, env=env, capture_output=True, text=True)
    code = (
        "import sys, numpy as np\n"
        f"sys.path[:0] = [{str(tmp_path)!r}, {here!r}]\n"
        "import grad_net, static_leaves_src as src\n"
        "rng = np.random.default_rng(1)\n"
        "layers = [src.Layer(rng.normal(size=(3, 3)), rng.normal(size=3), 'tanh'),\n"
        "          src.Layer(rng.normal(size=(3, 2)), rng.normal(size=2), 'linear')]\n"
        "x = rng.normal(size=3)\n"
        "g = grad_net.grad_net(layers, x)\n"
        "print(repr(g[0].W.tolist()), g[1].act)\n")
    res = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    rng = np.random.default_rng(1)
    layers = [src.Layer(rng.normal(size=(3, 3)), rng.normal(size=3), "tanh"),
              src.Layer(rng.normal(size=(3, 2)), rng.normal(size=2), "linear")]
    x = rng.normal(size=3)
    want = _fd_layers(src.net, layers, x)[0]["W"]
    got_text, act = res.stdout.strip().rsplit(" ", 1)
    assert act == "linear"
    np.testing.assert_allclose(np.array(eval(got_text)), want, rtol=1e-5, atol=1e-7)


def test_hessian_and_jacobian_of_a_dataclass_with_switches():
    cfg, x = src.Config(2.0, "l1", True, 0.5), 1.3
    (h_cc, h_cx), (h_xc, h_xx) = s2s_ad.hessian(src.penalty, wrt=(0, 1))(cfg, x)
    g = s2s_ad.grad(src.penalty, wrt=(0, 1))
    # columns of the Hessian: central differences of the gradient
    up, down = g(src.Config(2.0 + H, "l1", True, 0.5), x), g(src.Config(2.0 - H, "l1", True, 0.5), x)
    assert h_cx.scale == pytest.approx((up[1] - down[1]) / (2 * H), rel=1e-5)
    assert h_cc.scale.mode == "l1" and h_cc.bias is not None
    up, down = g(cfg, x + H), g(cfg, x - H)
    assert h_xc.scale == pytest.approx((up[0].scale - down[0].scale) / (2 * H), rel=1e-5)
    assert h_xc.bias == pytest.approx((up[0].bias - down[0].bias) / (2 * H), rel=1e-5)
    assert h_xx == pytest.approx((up[1] - down[1]) / (2 * H), abs=1e-6)
    jac = s2s_ad.jacobian(src.penalty, wrt=0)(cfg, x)
    assert (jac.scale, jac.bias, jac.mode) == (pytest.approx(abs(x)), pytest.approx(x), "l1")


@pytest.mark.parametrize("cfg", [src.Config(2.0, "l1", True, 0.5), src.Config(2.0)], ids=["l1-bias", "l2"])
def test_check_proves_a_dataclass_with_switches(cfg):
    verdict = s2s_ad.check(src.penalty, like={"cfg": cfg})
    assert verdict.ok and "proved" in str(verdict)
    assert ("cfg.bias" in str(verdict)) == (cfg.bias is not None)


def test_cli_hessian_with_a_string_field(tmp_path):
    here = os.path.dirname(os.path.abspath(__file__))
    out = tmp_path / "hess_pen.py"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([here, os.environ.get("PYTHONPATH", "")])}
    subprocess.run([sys.executable, "-m", "s2s_ad", "hessian",
                    os.path.join(here, "static_leaves_src.py") + ":penalty", "--wrt", "cfg,x",
                    "--like", "cfg=EXAMPLE_CONFIG", "-o", str(out)],
                   check=True, env=env, capture_output=True, text=True)
    code = (
        "import sys\n"
        f"sys.path[:0] = [{str(tmp_path)!r}, {here!r}]\n"
        "import hess_pen, static_leaves_src as src\n"
        "(cc, cx), (xc, xx) = hess_pen.hessian_penalty(src.EXAMPLE_CONFIG, 1.3)\n"
        "print(cx.scale, cx.bias, cx.mode, xx)\n"
        "try:\n"
        "    hess_pen.hessian_penalty(src.Config(2.0, 'l2', True, 0.5), 1.3)\n"
        "except ValueError as e:\n"
        "    print('refused', e)\n")
    res = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    first, second = res.stdout.strip().splitlines()
    scale, bias, mode, xx = first.split()
    # penalty = scale * |x| + bias * x: d²/dx dscale = sign(x), d²/dx dbias = 1, d²/dx² = 0
    assert (float(scale), float(bias), mode, float(xx)) == (1.0, 1.0, "l1", 0.0)
    assert second == "refused generated for cfg.mode='l1'"


def test_the_code_refuses_a_structure_of_another_length():
    # the code reads the items it was generated for: a third layer, or a dict
    # with one key more, would be left out silently
    layers, x = _layers(["tanh", "linear"]), np.random.default_rng(8).normal(size=3)
    g = s2s_ad.grad(src.net, wrt=0)
    g(layers, x)
    space: dict = {}
    exec(compile(s2s_ad.source_of(g), "<generated>", "exec"), space)
    with pytest.raises(ValueError, match="generated for layers of length 2"):
        space["grad_net"](_layers(["tanh", "linear", "linear"]), x)
    # through the API, each length gets its own code
    three = _layers(["tanh", "linear", "linear"])
    _check_layers(g(three, x), src.net, three, x)
    p = {"W": np.ones((3, 2)), "act": "tanh", "s": 0.7}
    gd = s2s_ad.grad(src.dict_params, wrt=0)
    gd(p, x)
    space = {}
    exec(compile(s2s_ad.source_of(gd), "<generated>", "exec"), space)
    with pytest.raises(ValueError, match="generated for params of length 3"):
        space["grad_dict_params"]({**p, "extra": 1.0}, x)
