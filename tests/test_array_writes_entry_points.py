"""A function that never names NumPy and writes into an array: grad, vjp,
jvp and the CLI's module (--array) take the same positions. Writes into
arrays the function made are differentiated by each, against central
differences; a write into the caller's array (the parameter, a slice of it,
an item of a list the caller passed, through a helper) is refused by each
with the same located message."""

import numpy as np
import pytest

import array_writes_src as src
import s2s_ad
from array_oracle import fd_gradient
from s2s_ad import cli

ACCEPTED = ["written_product", "written_method_copy", "rebound_parameter", "written_in_a_loop",
            "written_slice", "added_into", "through_a_helper", "item_copied"]
REFUSED = {"into_the_parameter": "assigning into `a` would change an array the caller passed in",
           "into_a_slice_of_it": "assigning into `b` would change an array the caller passed in",
           "helper_into_the_parameter": "assigning into `b` would change an array the caller "
                                        "passed in",
           "into_an_item_of_it": "assigning into `xs[0]` would change an array the caller "
                                 "passed in (through `xs`)"}


def arguments(name):
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=3) + 2.0, rng.normal(size=3) + 2.0
    return ([a, b],) if name in ("item_copied", "into_an_item_of_it") else (a,)


def copies(args):
    return [[np.copy(x) for x in a] if isinstance(a, list) else np.copy(a) for a in args]


def reference(f, args):
    if isinstance(args[0], list):
        xs = args[0]
        return [fd_gradient(lambda x, k=k: f([x if j == k else np.copy(v)
                                               for j, v in enumerate(xs)]), [xs[k]], 0)
                for k in range(len(xs))]
    return fd_gradient(lambda x: f(np.copy(x)), list(args), 0)


def close(got, want):
    if isinstance(want, list):
        return all(np.allclose(g, w, rtol=1e-5, atol=1e-7) for g, w in zip(got, want))
    return np.allclose(got, want, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name", ACCEPTED)
def test_grad_vjp_and_jvp_differentiate_it(name):
    f = getattr(src, name)
    args = arguments(name)
    want = reference(f, args)
    assert close(s2s_ad.grad(f)(*copies(args)), want)
    value, back = s2s_ad.vjp(f, *copies(args))
    assert np.isclose(value, f(*copies(args))) and close(back(1.0)[0], want)
    direction = ([np.ones(3), np.full(3, 0.5)] if isinstance(args[0], list) else np.ones(3),)
    out = s2s_ad.jvp(f)(*copies(args), **{"d" + f.__code__.co_varnames[0]: direction[0]})
    tangent = out[1] if isinstance(out, tuple) else out
    expected = (sum(float(np.sum(w * d)) for w, d in zip(want, direction[0]))
                if isinstance(want, list) else float(np.sum(want * direction[0])))
    assert np.isclose(tangent, expected, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name", ["written_product", "written_in_a_loop", "through_a_helper"])
def test_the_cli_module_with_array(name, tmp_path):
    f = getattr(src, name)
    out = tmp_path / f"cli_{name}.py"
    assert cli.main(["grad", f"{src.__file__}:{name}", "--array", "a", "-o", str(out)]) == 0
    namespace = {}
    exec(compile(out.read_text(), str(out), "exec"), namespace)
    args = arguments(name)
    got = namespace[f"grad_{name}"](*copies(args))
    assert close(got, reference(f, args))


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_write_into_the_callers_array_is_refused_alike(name, tmp_path, capsys):
    f = getattr(src, name)
    args = arguments(name)
    messages = []
    for make in (lambda: s2s_ad.grad(f)(*copies(args)),
                 lambda: s2s_ad.vjp(f, *copies(args)),
                 lambda: s2s_ad.jvp(f)(*copies(args))):
        with pytest.raises(s2s_ad.SourceError) as err:
            make()
        messages.append(str(err.value))
    param = f.__code__.co_varnames[0]
    assert cli.main(["grad", f"{src.__file__}:{name}", "--array", param,
                     "-o", str(tmp_path / "out.py")]) == 2
    messages.append(capsys.readouterr().err.strip())
    assert len(set(messages)) == 1, messages
    assert REFUSED[name] in messages[0] and "array_writes_src.py:" in messages[0] \
        and "^" in messages[0], messages[0]
