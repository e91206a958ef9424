"""PyTorch-flavoured code (tests/torch_src.py) read as NumPy: torch functions
and tensor methods rewritten as NumPy with torch's meaning. Each gradient is
compared with central differences (float64) of the function itself, run on
float64 tensors by torch where it is installed and on tests/torch_standin.py
otherwise, and with torch.autograd where torch is installed; at the top
level, in helpers, a helper of a helper, a loop, a branch, through
``s2s_ad.vjp`` and ``s2s_ad.jvp``, and through the CLI's ``grad -o`` file
imported in a fresh interpreter. The generated code calls NumPy only."""

import inspect
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import s2s_ad
import torch_src as m
from array_oracle import fd_gradient
from s2s_ad.errors import SourceError

HERE = os.path.dirname(__file__)
ROOT = os.path.dirname(HERE)
rng = np.random.default_rng(11)
k, d, n = 3, 4, 5

CASES = {
    "log_sum_exp": ([rng.normal(size=6)], [0]),
    "nearest_cost": ([rng.normal(size=(7, 2)), rng.normal(size=(3, 2))], [0, 1]),
    "mixture_loss": ([rng.normal(size=k), rng.normal(size=(k, d)),
                      0.3 * rng.normal(size=(k, d + d * (d - 1) // 2)), rng.normal(size=(n, d)),
                      1.3, 2], [0, 1, 2]),
    "mixture_loss_rows": ([rng.normal(size=k), rng.normal(size=(k, d)), 0.3 * rng.normal(size=(k, d)),
                           rng.normal(size=(k, d * (d - 1) // 2)), rng.normal(size=(n, d))],
                          [0, 1, 2, 3]),
    "reprojection_cost": ([np.concatenate([0.1 * rng.normal(size=3), rng.normal(size=3), [1.5],
                                           rng.normal(size=4)]),
                           rng.normal(size=3) + [0.0, 0.0, 5.0], 0.8, rng.normal(size=2)],
                          [0, 1, 2]),
    "lstm_loss": ([rng.normal(size=(4, 12)), rng.normal(size=(3, 3)), rng.normal(size=(4, 3)),
                   rng.normal(size=(4, 3))], [0, 1, 2]),
    "lstm_loss_rows": ([rng.normal(size=(4, 12)), rng.normal(size=(3, 3)), rng.normal(size=(4, 3)),
                        rng.normal(size=(5, 3))], [0, 1, 2]),
    "posed_points": ([rng.normal(size=2), rng.normal(size=(4, 3)), rng.random(size=(2, 4))],
                     [0, 1, 2]),
    "statistics": ([rng.normal(size=(3, 4)), rng.normal(size=(3, 4))], [0, 1]),
    "activations_and_losses": ([rng.normal(size=(3, 4)), rng.normal(size=(3, 4))], [0, 1]),
    "shapes": ([rng.normal(size=(4, 4)), rng.normal(size=4)], [0, 1]),
    "helper_of_helper": ([rng.normal(size=4)], [0]),
    "in_a_loop": ([rng.normal(size=3), 3], [0]),
    "in_a_branch": ([rng.normal(size=3), 1], [0]),
    "item_scale": ([rng.normal(size=3)], [0]),
    "detach_scale": ([rng.normal(size=4)], [0]),
    "stacked_rows": ([rng.normal(size=(4, 2)), rng.normal(size=(4, 2))], [0, 1]),
    "annotated": ([rng.normal(size=3), 1.5], [0]),
}
NOT_AUTOGRAD = {"item_scale"}
"""torch.autograd treats ``.item()`` as a constant; the function's derivative
(central differences, s2s-ad) does not."""
NOT_FD = {"detach_scale": lambda x: [0.5 * x + np.sin(x)]}
"""``.detach()`` makes a constant of the derivative, which central
differences of the function cannot see: the reference is the derivative
written out (and torch.autograd)."""
TESTED = {"array.detach"}
"""The rules these tests exercise (tests/test_numpy_rules_table.py checks
every NumPy rule is tested somewhere)."""


def tensor(a):
    """A float64 tensor (or the stand-in's) of ``a``; other values as they are."""
    if not isinstance(a, np.ndarray):
        return a
    if m.REAL_TORCH:
        return m.torch.tensor(a, dtype=m.torch.float64)
    from torch_standin import Tensor
    return np.array(a, dtype=np.float64).view(Tensor)


def original(f):
    """``f`` run on float64 tensors: the reference."""
    def run(*args):
        out = f(*[tensor(a) for a in args])
        return np.asarray(out.detach() if m.REAL_TORCH else out, dtype=np.float64)
    return run


def assert_matches_fd(f, args, wrt, got, *, rtol=1e-5, atol=1e-7):
    for i, g in zip(wrt, got):
        want = fd_gradient(original(f), args, i)
        assert np.shape(g) == np.shape(args[i])
        np.testing.assert_allclose(np.asarray(g, dtype=np.float64), want, rtol=rtol, atol=atol,
                                   err_msg=f"gradient with respect to argument {i}")


def autograd(f, args, wrt):
    """torch.autograd's gradient of ``f`` at ``args`` (float64)."""
    torch = m.torch
    ts = [torch.tensor(np.asarray(a, dtype=np.float64), requires_grad=True)
          if i in wrt else tensor(a) for i, a in enumerate(args)]
    f(*ts).sum().backward()
    return [np.zeros(np.shape(args[i])) if ts[i].grad is None else ts[i].grad.numpy()
            for i in wrt]


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_matches_references(name):
    args, wrt = CASES[name]
    f = getattr(m, name)
    got = s2s_ad.grad(f, wrt=tuple(wrt))(*args)
    if name in NOT_FD:
        for g, want in zip(got, NOT_FD[name](*args)):
            np.testing.assert_allclose(g, want, rtol=1e-12)
    else:
        assert_matches_fd(f, args, wrt, got)
    value, _ = s2s_ad.value_and_grad(f, wrt=tuple(wrt))(*args)
    np.testing.assert_allclose(value, original(f)(*args), rtol=1e-12)
    if m.REAL_TORCH and name not in NOT_AUTOGRAD:
        for g, want in zip(got, autograd(f, args, wrt)):
            np.testing.assert_allclose(g, want, rtol=1e-9, atol=1e-12)


def test_other_sizes_and_the_other_arm():
    """One generated module serves every shape (and the branch's other arm:
    the rotation by a zero vector, ``torch.cross`` without ``dim``)."""
    k2, d2 = 2, 3
    args = [rng.normal(size=k2), rng.normal(size=(k2, d2)),
            0.3 * rng.normal(size=(k2, d2 + d2 * (d2 - 1) // 2)), rng.normal(size=(6, d2)), 0.7, 1]
    assert_matches_fd(m.mixture_loss, args, [0, 1, 2],
                      s2s_ad.grad(m.mixture_loss, wrt=(0, 1, 2))(*args))
    cam = CASES["reprojection_cost"][0][0].copy()
    cam[0:3] = 0.0
    args = [cam] + CASES["reprojection_cost"][0][1:]
    assert_matches_fd(m.reprojection_cost, args, [1, 2],
                      s2s_ad.grad(m.reprojection_cost, wrt=(1, 2))(*args))
    x = rng.normal(size=4)
    assert_matches_fd(m.in_a_branch, [x, 0], [0], s2s_ad.grad(m.in_a_branch, wrt=(0,))(x, 0))


def test_vjp_of_the_reprojection_error():
    """Bundle adjustment's residual is a vector: ``vjp`` gives the Jacobian's
    rows, against central differences of ``v · f``."""
    args = CASES["reprojection_cost"][0]
    value, vjp_fn = s2s_ad.vjp(m.reprojection, *args)
    np.testing.assert_allclose(value, original(m.reprojection)(*args), rtol=1e-12)
    v = np.array([0.3, -1.2])
    cotangents = vjp_fn(v)

    def along(*a):
        return np.dot(v, original(m.reprojection)(*a))
    for i in (0, 1, 2):
        np.testing.assert_allclose(cotangents[i], fd_gradient(along, args, i), rtol=1e-5,
                                   atol=1e-7)


def test_vjp_of_the_lstm_step_writing_rows():
    """The step whose rows are written and read back as a view (GradBench's
    ``predict``): ``vjp`` of both results, the prediction and the new state,
    against central differences of ``u · pred + v · state`` (and
    torch.autograd where torch is installed)."""
    args = [rng.normal(size=(4, 12)), rng.normal(size=(3, 3)), rng.normal(size=(4, 3)),
            rng.normal(size=3)]
    (pred, new), back = s2s_ad.vjp(m.lstm_predict_rows, *args)
    want_pred, want_new = [np.asarray(t.detach() if m.REAL_TORCH else t, dtype=np.float64)
                           for t in m.lstm_predict_rows(*[tensor(a) for a in args])]
    np.testing.assert_allclose(pred, want_pred, rtol=1e-12)
    np.testing.assert_allclose(new, want_new, rtol=1e-12)
    u, v = rng.normal(size=pred.shape), rng.normal(size=new.shape)
    got = back((u, v))

    def along(*a):
        p, s = m.lstm_predict_rows(*[tensor(x) for x in a])
        if m.REAL_TORCH:
            p, s = p.detach(), s.detach()
        return float(np.sum(u * np.asarray(p)) + np.sum(v * np.asarray(s)))
    for i in range(4):
        np.testing.assert_allclose(got[i], fd_gradient(along, args, i), rtol=1e-5, atol=1e-7)
    if m.REAL_TORCH:
        torch = m.torch
        ts = [torch.tensor(a, requires_grad=True) for a in args]
        p, s = m.lstm_predict_rows(*ts)
        (torch.sum(torch.tensor(u) * p) + torch.sum(torch.tensor(v) * s)).backward()
        for g, t in zip(got, ts):
            np.testing.assert_allclose(g, t.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_lstm_rows_grad_o_file_in_a_fresh_interpreter(tmp_path):
    """GradBench's LSTM form through the CLI: the generated file, imported in
    a fresh interpreter (no torch), against central differences."""
    out = tmp_path / "grad_torch_lstm_rows.py"
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad",
                           "tests/torch_src.py:lstm_loss_rows", "--wrt", "weights,extra,state",
                           "--array", "weights,extra,state,sequence", "-o", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    args = CASES["lstm_loss_rows"][0]
    script = textwrap.dedent(f"""
        import sys
        import numpy as np
        sys.path[:0] = [{HERE!r}, {str(tmp_path)!r}]
        import grad_torch_lstm_rows as g
        args = [np.array(a) for a in {[a.tolist() for a in args]!r}]
        got = g.grad_lstm_loss_rows(*args)
        assert "torch" not in sys.modules, "the generated module imported torch"
        from array_oracle import fd_gradient
        from test_torch_numpy import original
        import torch_src as m
        for i in range(3):
            want = fd_gradient(original(m.lstm_loss_rows), args, i)
            np.testing.assert_allclose(got[i], want, rtol=1e-5, atol=1e-7)
        print("ok")
    """)
    run = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0 and "ok" in run.stdout, run.stderr


@pytest.mark.parametrize("name", ["log_sum_exp", "in_a_loop", "shapes"])
def test_jvp_matches_finite_differences(name):
    """Forward mode reads the same rewritten code."""
    args, wrt = CASES[name]
    f = getattr(m, name)
    direction = rng.normal(size=np.shape(args[0]))
    first = list(inspect.signature(f).parameters)[0]
    value, tangent = s2s_ad.jvp(f, wrt=0)(*args, **{f"d{first}": direction})
    want = np.sum(fd_gradient(original(f), args, 0) * direction)
    np.testing.assert_allclose(tangent, want, rtol=1e-5, atol=1e-7)


def test_generated_code_calls_numpy_only():
    for name in CASES:
        f = getattr(m, name)
        args, wrt = CASES[name]
        arrays = [p for p, a in zip(inspect.signature(f).parameters, args)
                  if isinstance(a, np.ndarray)]
        text = s2s_ad.gradient_source(f, wrt=wrt, arrays=arrays)
        code = "\n".join(line.split("#")[0] for line in text.splitlines())
        code = re.sub(r"'[^'\n]*'|\"[^\"\n]*\"", "''", code)  # (a check's message names torch)
        assert not re.search(r"\btorch\b", code), name
        assert "import numpy" in text


def test_grad_o_file_in_a_fresh_interpreter(tmp_path):
    out = tmp_path / "grad_torch_helper_of_helper.py"
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad",
                           "tests/torch_src.py:helper_of_helper", "--wrt", "x", "--array", "x",
                           "-o", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert not re.search(r"\btorch\b", "".join(line.split("#")[0]
                                                for line in out.read_text().splitlines()))
    x = CASES["helper_of_helper"][0][0]
    script = textwrap.dedent(f"""
        import sys
        import numpy as np
        sys.path[:0] = [{HERE!r}, {str(tmp_path)!r}]
        import grad_torch_helper_of_helper as g
        got = g.grad_helper_of_helper(np.array({x.tolist()!r}))
        assert "torch" not in sys.modules, "the generated module imported torch"
        from array_oracle import fd_gradient
        from test_torch_numpy import original
        import torch_src as m
        want = fd_gradient(original(m.helper_of_helper), [np.array({x.tolist()!r})], 0)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
        print("ok")
    """)
    run = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0 and "ok" in run.stdout, run.stderr


REFUSED = {
    "detach_then_write": ("`.detach()` shares the tensor's storage", ".clone().detach()"),
    "max_of_two": ("a dimension or a second tensor?", "torch.maximum"),
    "unmapped_function": ("torch.special.zeta", "has no NumPy reading"),
    "sum_with_dtype": ("the argument `dtype` is not supported", "torch.sum"),
    "expand_minus_one": ("`expand` with -1", "x.shape[k]"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_with_location(name):
    what, more = REFUSED[name]
    f = getattr(m, name)
    args = [rng.normal(size=3) for _ in inspect.signature(f).parameters]
    with pytest.raises(SourceError) as info:
        s2s_ad.grad(f)(*args)
    text = str(info.value)
    assert "torch_src.py:" in text and "^" in text and what in text and more in text, text


# Each mapping of the table in docs/numpy.md ("PyTorch-flavoured code"), as
# one expression of x (3x4, entries in (0.5, 1.5)) and y (3x4, normal), against
# torch.autograd and central differences of the torch expression (torch needed:
# the stand-in has only the corpus's functions).
MAPPINGS = [
    "torch.exp(x) + torch.log(x) + torch.sqrt(x) + torch.rsqrt(x) + torch.square(y)",
    "torch.sin(y) * torch.cos(y) + torch.tan(0.3 * y) + torch.sinh(y) - torch.cosh(y)",
    "torch.asin(0.5 * x - 0.4) + torch.acos(0.3 * y.clamp(-1, 1)) + torch.atan(y) + torch.neg(y)",
    "torch.log1p(x) + torch.expm1(y) + torch.log2(x) + torch.log10(x) + torch.exp2(y)",
    "torch.abs(y) * torch.sign(y) + torch.reciprocal(x) + torch.absolute(y)",
    "torch.sigmoid(y) + torch.relu(y) + F.relu(-y) + torch.tanh(y) + F.sigmoid(2 * y)",
    "torch.erf(y) + torch.lgamma(x) + torch.special.gammaln(x + 1)",
    "torch.add(x, y) * torch.sub(x, y) + torch.mul(x, y) - torch.div(y, x) + torch.true_divide(y, x)",
    "torch.pow(x, 3) + x.pow(y) + torch.float_power(x, 2.0) + torch.maximum(x, y) - torch.minimum(x, y)",
    "torch.atan2(y, x) + torch.hypot(x, y) + torch.logaddexp(x, y)",
    "torch.matmul(x, y.T) + torch.mm(x, y.t()) + x @ y.mT",
    "torch.dot(x[0], y[0]) + torch.outer(x[0], y[1]).sum() + torch.inner(x, y).sum()",
    "torch.einsum('ij,kj->ik', x, y) + torch.einsum('ij,kj->ik', [y, x])",
    "torch.linalg.cross(x[:, :3], y[:, :3]) + torch.cross(x[:, 1:], y[:, 1:], dim=-1)",
    "torch.sum(x, dim=1, keepdim=True) + torch.mean(y, 0) + torch.prod(x, dim=-1, keepdim=True)",
    "torch.amax(y, dim=1) + torch.amin(y, dim=(0, 1)) + x.max() * y.min()",
    "torch.max(y, dim=1).values + torch.min(y, 1)[0] + torch.max(y, dim=0, keepdim=True)[0].sum()",
    "y[torch.arange(3), torch.argmax(y, dim=1)] + y[torch.argmin(y, dim=0), torch.arange(4)].sum()",
    "torch.var(y) + torch.std(y, dim=1) + torch.var(y, 0, unbiased=False).sum() + torch.std(y, correction=0)",
    "torch.logsumexp(y, 1) + torch.special.logsumexp(y, dim=1, keepdim=True).sum()",
    "F.softmax(y, dim=1) * x + torch.log_softmax(y, 0) + F.log_softmax(y, dim=-1)",
    "torch.cumsum(y, dim=1) + torch.cumprod(x, 0)",
    "torch.norm(y) + torch.norm(y, dim=1) + torch.linalg.norm(y, dim=0).sum() + torch.linalg.vector_norm(y)",
    "torch.linalg.vector_norm(y, 3) + torch.linalg.vector_norm(y, 1, dim=1) + torch.linalg.vector_norm(y, dim=(0, 1))",
    "torch.trace(x) + torch.linalg.det(x[:, :3]) + torch.inverse(x[:, :3] + 3 * torch.eye(3, dtype=torch.float64)).sum()",
    "torch.linalg.solve(x[:, :3] + 3 * torch.eye(3, dtype=torch.float64), y[:, 0]).sum() + torch.linalg.slogdet(x[:, 1:] + 2 * torch.eye(3, dtype=torch.float64))[1]",
    "torch.cat([x, y], dim=1).sum(1) + torch.stack((x, y), 2).sum((1, 2)) + torch.hstack([x, y])[0].sum() + torch.vstack([x, y])[:3, 0]",
    "torch.reshape(x, (4, 3)).T + y.view(4, 3).t() + x.flatten().view(2, 6).reshape(3, 4) + y.view_as(x)",
    "torch.squeeze(x[:, :1], 1).unsqueeze(0) + torch.unsqueeze(y[0], 0).sum() + x[:, 2:3].squeeze()",
    "torch.transpose(x, 0, 1) + y.permute(1, 0) + torch.swapaxes(x, 1, 0) + torch.movedim(y, 0, 1)",
    "x[0].expand(3, 4) + y[:, :1].expand_as(x) + torch.broadcast_to(x[1], (3, 4))",
    "x[0].repeat(2) + torch.tile(y[1], (2,)) + torch.repeat_interleave(y[2], 2)",
    "torch.flip(x, dims=(1,)) + torch.roll(y, 1, dims=0) + torch.tril(x) + torch.triu(y, 1) + torch.diag(x[0]).sum()",
    "torch.diagonal(x, 1) + torch.diagonal(y, offset=-1, dim1=1, dim2=0)[:3] + torch.where(y > 0, x, y)[0, :3]",
    "torch.clamp(y, min=-0.5) + torch.clamp(y, -0.3, 0.4) + torch.clamp(y, max=0.2)",
    "F.pad(x, (1, 2), value=0.5).sum(1) + torch.nn.functional.pad(y, (1, 0, 0, 2)).sum(1)[:3]",
    "torch.zeros(3, 4, dtype=torch.float64) + torch.ones((3, 4), dtype=torch.float64) * x + torch.full((3, 4), 2.0, dtype=torch.float64) * y",
    "torch.zeros_like(x) + torch.ones_like(y) * x + torch.full_like(x, 3.0) * y + torch.empty_like(x) * 0.0",
    "torch.arange(4, dtype=torch.float64) * x + torch.linspace(0, 1, 4, dtype=torch.float64) * y + torch.eye(3, 4, dtype=torch.float64) * x",
    "torch.tensor([[1.0, 2.0, 3.0, 4.0]], dtype=torch.float64) * x + torch.tensor(2.5, dtype=torch.float64) * y",
    "x.clone() * y.contiguous() + x.size(1) * y + x.dim() * x.numel() * y + torch.pi * x",
]


@pytest.mark.parametrize("expr", MAPPINGS)
def test_mapping(expr):
    if not m.REAL_TORCH:
        pytest.skip("torch is not installed: the mapping table is checked against torch itself")
    from array_oracle import make_function
    f = make_function(f"def f(x, y):\n    return ({expr}).sum()\n",
                      env={"torch": m.torch, "F": m.F})
    x = rng.uniform(0.5, 1.5, size=(3, 4))
    y = rng.normal(size=(3, 4))
    got = s2s_ad.grad(f, wrt=(0, 1))(x, y)
    want = autograd(f, [x, y], [0, 1])
    for i, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-10)
        np.testing.assert_allclose(g, fd_gradient(original(f), [x, y], i), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(s2s_ad.value_and_grad(f, wrt=0)(x, y)[0], original(f)(x, y),
                               rtol=1e-12)


def test_stack_of_a_comprehension_of_values():
    """``np.stack([... for i in range(3)])`` of arrays with a gradient (not an
    integer index array) is a join of the rows; one over a range known only
    when the code runs is the loop it stands for (frontend/list_stacks.py)."""
    from array_oracle import make_function
    f = make_function("def f(x):\n    return np.sum(np.stack([x[i] * x[i + 1] for i in "
                      "range(2)], axis=1) ** 2)\n")
    x = rng.normal(size=(3, 2))
    np.testing.assert_allclose(s2s_ad.grad(f)(x), fd_gradient(f, [x], 0), rtol=1e-6, atol=1e-9)
    g = make_function("def g(x):\n    return np.sum(np.stack([x[i] * 2.0 for i in "
                      "range(x.shape[0])]))\n", "g")
    np.testing.assert_allclose(s2s_ad.grad(g)(x), fd_gradient(g, [x], 0), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("expr, what", [
    ("torch.sum(x, dim=())", "an empty `dim`"),
    ("torch.linalg.vector_norm(x, 1, dim=(0, 1))", "for ord=2 only"),
    ("torch.linalg.vector_norm(x, keepdim=True)", "give `dim`"),
    ("torch.max(x, y)", "a dimension or a second tensor?"),
    ("torch.nn.functional.pad(x, (1, -1))", "non-negative int literals"),
    ("x.add_(1.0)", "`.add_()`"),
    ("torch.no_grad", "has no NumPy reading"),
])
def test_mapping_refused_with_location(expr, what):
    from array_oracle import make_function
    f = make_function(f"def f(x, y):\n    return torch.sum({expr})\n",
                      env={"torch": m.torch, "F": m.F})
    with pytest.raises(SourceError) as info:
        s2s_ad.grad(f, wrt=0)(rng.normal(size=(3, 4)), rng.normal(size=(3, 4)))
    text = str(info.value)
    assert ":2:" in text and "^" in text and what in text, text


def test_sigmoid_without_scipy(monkeypatch):
    """Without SciPy, ``torch.sigmoid`` is read as ``0.5 + 0.5 * tanh(x / 2)``."""
    from array_oracle import make_function
    monkeypatch.setitem(sys.modules, "scipy.special", None)  # import scipy.special fails
    f = make_function("def f(x):\n    return torch.sum(torch.sigmoid(x) * x)  # no scipy\n",
                      env={"torch": m.torch})
    text = s2s_ad.gradient_source(f, wrt=0, arrays=["x"])
    assert "np.tanh" in text and "scipy" not in text.split('"""', 2)[2]
    x = rng.normal(size=5) * 3
    np.testing.assert_allclose(s2s_ad.grad(f)(x), fd_gradient(original(f), [x], 0), rtol=1e-6,
                               atol=1e-9)


def test_global_tensor_refused_with_location():
    from array_oracle import make_function
    f = make_function("def f(x):\n    return torch.sum(W * x)\n",
                      env={"torch": m.torch, "W": tensor(np.ones(3))})
    with pytest.raises(SourceError) as info:
        s2s_ad.grad(f)(np.ones(3))
    text = str(info.value)
    assert ":2:" in text and "^" in text and "pass it as an argument" in text, text


def test_docs_name_every_mapping():
    """docs/numpy.md's "PyTorch-flavoured code" table names each torch function
    and tensor method the rewrite reads."""
    from s2s_ad.frontend.torch_forms import FUNCTIONS, METHODS
    with open(os.path.join(ROOT, "docs", "numpy.md"), encoding="utf-8") as f:
        page = f.read()
    section = page.split("## PyTorch-flavoured code", 1)[1].split("\n## ", 1)[0]
    words = set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", section))
    missing = sorted(k for k in set(FUNCTIONS) | set(METHODS) if k.rpartition(".")[2] not in words)
    assert not missing, missing
