"""Where torch's result shares a tensor's storage (tests/torch_storage_src.py):
``x.double()`` of a float64 tensor is ``x``, ``x.expand(...)``,
``x.expand_as``, ``torch.broadcast_to`` views of it, ``torch.from_numpy(a)``
and ``torch.as_tensor(a)`` the array itself. s2s-ad reads ``double`` and
``expand`` as new arrays, so a write through either name would change one
array in torch and not in the generated code: refused, located, in a
function that writes into arrays unless a ``.clone()`` makes the copy
explicit; ``from_numpy``/``as_tensor`` are read as ``np.asarray``, which the
in-place analysis follows. Gradients against central differences of the
functions themselves (run on tests/torch_standin.py, whose ``double``,
``from_numpy`` and ``view`` share memory as torch's do), at the top level,
through ``vjp`` and in a helper called in a loop."""

import inspect

import numpy as np
import pytest

import s2s_ad
import torch_storage_src as m
from array_oracle import fd_gradient
from s2s_ad.errors import SourceError
from test_torch_numpy import original

rng = np.random.default_rng(5)
ARGS = [rng.normal(size=4), rng.normal(size=4), 0.7]

ACCEPTED = ["double_then_clone_written", "clone_then_double_written",
            "count_double_in_writing_function", "double_read_only", "expand_read_only",
            "contiguous_written", "from_numpy_written", "permute_one_axis"]


def copies():
    return [np.array(a) if isinstance(a, np.ndarray) else a for a in ARGS]


def _ndarray_times_tensor() -> bool:
    """Whether ``ndarray * Tensor`` runs (the stand-in's does; torch 2.13 with
    NumPy 2.4 raises TypeError), which ``from_numpy_written``'s reference needs."""
    try:
        np.zeros(1) * m.torch.ones(1, dtype=m.torch.float64)
    except TypeError:
        return False
    return True


@pytest.mark.parametrize("name", ACCEPTED)
def test_gradient_against_central_differences(name):
    f = getattr(m, name)
    if name == "from_numpy_written" and not _ndarray_times_tensor():
        pytest.skip("this torch cannot multiply an ndarray by a Tensor: no reference")
    got = s2s_ad.grad(f, wrt=(0, 1, 2))(*copies())
    for i, g in enumerate(got):
        want = fd_gradient(original(f), copies(), i)
        np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-8, err_msg=f"{name} d/d{i}")


@pytest.mark.parametrize("name", ["clone_then_double_written", "from_numpy_written"])
def test_through_vjp_and_in_a_helper_in_a_loop(name, tmp_path):
    f = getattr(m, name)
    if name == "from_numpy_written" and not _ndarray_times_tensor():
        pytest.skip("this torch cannot multiply an ndarray by a Tensor: no reference")
    value, pull = s2s_ad.vjp(f, *copies())
    np.testing.assert_allclose(value, float(original(f)(*copies())), rtol=1e-12)
    grads = pull(-0.5)
    for i in range(3):
        want = fd_gradient(original(f), copies(), i)
        np.testing.assert_allclose(grads[i], -0.5 * np.asarray(want), rtol=1e-6, atol=1e-8)
    from modules import import_source
    src = inspect.getsource(m).split("# -- refused")[0] + f"""

def looped(a, b, s):
    t = 0.0
    for k in range(3):
        t = t + {name}(a * (k + 1.0), b, s) * (k + 0.5)
    return t
"""
    g = import_source(str(tmp_path), src, f"looped_{name}").looped
    got = s2s_ad.grad(g, wrt=(0, 1, 2))(*copies())
    for i in range(3):
        want = fd_gradient(original(g), copies(), i)
        np.testing.assert_allclose(got[i], want, rtol=1e-6, atol=1e-8)


REFUSED = {
    "double_written": "`double` may share the tensor's storage",
    "zeros_double_written": "`double` may share the tensor's storage",
    "expand_written": "`expand` may share the tensor's storage",
    "as_tensor_float64_written": "`as_tensor` may share the tensor's storage",
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_with_location(name):
    with pytest.raises(SourceError) as info:
        s2s_ad.grad(getattr(m, name), wrt=(0, 1, 2))(*copies())
    text = str(info.value)
    assert "torch_storage_src.py:" in text and "^" in text and REFUSED[name] in text, text
    assert ".clone()" in text, text
