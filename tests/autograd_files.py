"""HIPS autograd's examples, read from an autograd checkout as they are
written: for each example, the objective autograd's ``grad`` is applied to
(with its helpers, closures and factories as the file writes them) is
differentiated by ``s2s_ad.grad`` and compared with central finite
differences of the same function in float64 and, where autograd imports,
with ``autograd.grad`` of it; or its refusal is checked to be located in the
example's file and to say why.

An objective the file defines inside ``if __name__ == "__main__":`` is made
by running that block's statements as written (each compiled at its own
lines in the file, so s2s-ad reads the file's text) up to the statement that
binds it, with the data the block loads (MNIST, images, text files) made up
at small sizes instead; plotting goes to a stand-in for matplotlib that does
nothing. Nothing of autograd is copied here: the checkout is named by the
environment variable S2S_AD_AUTOGRAD (the repository's root, holding
``autograd/`` and ``examples/``). ``tests/test_autograd_files.py`` runs the
cases under pytest; ``python tests/autograd_files.py`` prints the table."""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import io
import os
import sys
import types
from dataclasses import dataclass
from typing import Callable

import numpy as np

from opt_in import modules_replaced

ENV = "S2S_AD_AUTOGRAD"
FD_TOL = 1e-6        # s2s-ad against central differences (h = 1e-6), relative to the largest
AUTOGRAD_TOL = 1e-10  # s2s-ad against autograd.grad, relative to the largest
PLOTTING = ("matplotlib", "matplotlib.pyplot", "matplotlib.cm", "matplotlib.image")


def root() -> str | None:
    """The directory named by S2S_AD_AUTOGRAD, or None."""
    path = os.environ.get(ENV)
    return os.path.abspath(path) if path else None


def check_root(path: str) -> str | None:
    """Why ``path`` is not an autograd checkout, or None."""
    for part in ("autograd/__init__.py", "examples/neural_net.py"):
        if not os.path.isfile(os.path.join(path, part)):
            return f"{ENV}={path}: no {part} there (name the root of an autograd checkout)"
    return None


class _Inert(types.ModuleType):
    """matplotlib's stand-in: every attribute, call and unpacking gives itself."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self

    def __call__(self, *args, **kwargs):
        return self

    def __iter__(self):
        return iter((self, self))


@contextlib.contextmanager
def _quiet():
    """matplotlib a stand-in and the examples' printing dropped, meanwhile."""
    standins = {m: _Inert(m) for m in PLOTTING}
    standins["matplotlib"].__path__ = []
    with modules_replaced(standins), contextlib.redirect_stdout(io.StringIO()):
        yield


def load(rel: str) -> types.ModuleType:
    """examples/<rel>, imported as written."""
    name = "autograd_example_" + rel[:-3].replace("/", "_")
    if name in sys.modules:
        return sys.modules[name]
    base = root()
    folder = os.path.dirname(os.path.join(base, "examples", rel))
    for p in (base, os.path.join(base, "examples"), folder):
        if p not in sys.path:
            sys.path.append(p)  # (after the installed autograd, when there is one)
    cwd = os.getcwd()
    try:
        spec = importlib.util.spec_from_file_location(name, os.path.join(folder,
                                                                         os.path.basename(rel)))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        os.chdir(folder)  # (a file that writes a picture writes it beside itself)
        with _quiet():
            spec.loader.exec_module(module)
        return module
    except BaseException:
        sys.modules.pop(name, None)
        raise
    finally:
        os.chdir(cwd)


def main_block(module: types.ModuleType, through: str, given: dict) -> dict:
    """The names ``module``'s ``if __name__ == "__main__":`` block binds, its
    statements run as written up to the one binding ``through``, each
    compiled at its own lines in the file; a statement that binds only names
    in ``given`` (data the file loads) is skipped, ``given`` binding them."""
    path = module.__file__
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    block = next(n for n in tree.body if isinstance(n, ast.If)
                 and "__main__" in ast.unparse(n.test))
    # the file's imports compiled with each statement: Python compiles
    # `np.sum(x)` of an imported `np` otherwise than of another name, and
    # s2s-ad checks a lambda's code against its file's
    imports = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    space = dict(vars(module))
    space.update(given)
    for node in block.body:
        bound = set()
        if isinstance(node, ast.Assign):
            bound = {n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        if bound and bound <= set(given):
            continue
        code = compile(ast.Module(imports + [node], []), path, "exec", dont_inherit=True)
        with _quiet():
            exec(code, space)
        if through in bound or getattr(node, "name", None) == through:
            return space
    raise KeyError(f"{path}: nothing binds {through} in the __main__ block")


# ---------------------------------------------------------------- references

def leaves(tree) -> list:
    """The arrays and numbers of a structure, in order (dict items by key, as
    autograd's flatten takes them)."""
    if isinstance(tree, dict):
        return [x for k in sorted(tree) for x in leaves(tree[k])]
    if isinstance(tree, (list, tuple)):
        return [x for item in tree for x in leaves(item)]
    return [tree]


def rebuilt(tree, values: list):
    """``tree`` with its leaves taken from ``values`` (consumed in order)."""
    if isinstance(tree, dict):
        return {k: rebuilt(tree[k], values) for k in sorted(tree)}
    if isinstance(tree, (list, tuple)):
        return type(tree)(rebuilt(item, values) for item in tree)
    value = values.pop(0)
    return value if np.ndim(tree) else float(value)


def central_differences(fn, args: list, i: int, h: float = 1e-6) -> list:
    """∂ sum(fn(*args)) / ∂ args[i], leaf by leaf, element by element."""
    parts = [np.array(x, dtype=np.float64) for x in leaves(args[i])]
    out = [np.zeros_like(p) for p in parts]
    for j, part in enumerate(parts):
        for k in np.ndindex(*part.shape):
            values = []
            for step in (h, -h):
                moved = [p.copy() for p in parts]
                moved[j][k] += step
                a = list(args)
                a[i] = rebuilt(args[i], moved)
                values.append(float(np.sum(fn(*a))))
            out[j][k] = (values[0] - values[1]) / (2 * h)
    return out


def relative(got: list, want: list) -> float:
    scale = max(max(float(np.max(np.abs(w))) for w in want), 1e-300)
    return max(float(np.max(np.abs(np.asarray(g, np.float64) - w))) for g, w in zip(got, want)) \
        / scale


def autograd_grad(fn, args: list, i: int):
    """autograd.grad of ``fn`` (summed where it returns an array), or None
    when autograd does not import."""
    try:
        import autograd
        import autograd.numpy as anp
    except ImportError:
        return None
    return [np.asarray(x, np.float64) for x in
            leaves(autograd.grad(lambda *a: anp.sum(fn(*a)), i)(*args))]


# ---------------------------------------------------------------- the cases

@dataclass
class Case:
    file: str                  # examples/<file>
    objective: str             # what autograd differentiates, as the file names it
    make: Callable             # rng -> (function, arguments, position differentiated)
    refused: str = ""          # a phrase of s2s-ad's refusal, where it refuses
    why: str = ""              # the table's note
    at: str = ""               # the example file the refusal points into, if not `file`

    @property
    def id(self) -> str:
        return f"{self.file[:-3]}-{self.objective}".replace("/", "-")


def _main(file, through, given=None):
    return main_block(load(file), through, given or {})


def rosenbrock(rng):
    return load("rosenbrock.py").rosenbrock, [rng.normal(size=2)], 0


def logistic(rng):
    return load("logistic_regression.py").training_loss, [rng.normal(size=3) * 0.3], 0


def tanh(rng):
    return load("tanh.py").tanh, [rng.normal(size=5)], 0  # elementwise: egrad's sum


def sinusoid(rng):
    return load("sinusoid.py").fun, [float(rng.uniform(-3, 3))], 0  # the Taylor series


def negbin(rng):
    data = rng.poisson(rng.gamma(5.0, 1.0, size=30)).astype(float)
    return _main("negative_binomial_maxlike.py", "loglike", {"data": data})["loglike"], \
        [4.0, 0.4], 0


def negbin_p(rng):
    fn, args, _ = negbin(rng)
    return fn, args, 1


def gaussian_process(rng):
    space = _main("gaussian_process.py", "objective")
    return space["objective"], [rng.normal(size=space["num_params"]) * 0.3], 0


def gmm(rng):
    module = load("gmm.py")
    space = main_block(module, "objective", {"data": rng.normal(size=(12, 2))})
    return space["objective"], [module.init_gmm_params(3, 2, 0.3, np.random.RandomState(1))], 0


def _text_model(file, make_params, rng):
    inputs = np.eye(5)[rng.integers(0, 5, (4, 3))]  # 4 characters, 3 sequences, one-hot
    space = _main(file, "training_loss", {"train_inputs": inputs, "num_chars": 5})
    params = make_params(input_size=5, output_size=5, state_size=4, param_scale=0.3,
                         rs=np.random.RandomState(2))
    return space["training_loss"], [params, 0], 0


def rnn(rng):
    return _text_model("rnn.py", load("rnn.py").create_rnn_params, rng)


def lstm(rng):
    return _text_model("lstm.py", load("lstm.py").init_lstm_params, rng)


def _hmm_params(module, rng):
    return [np.log(module.normalize(rng.uniform(size=s))) for s in [(3,), (3, 3), (3, 4)]]


def hmm_sequence(rng):
    module = load("hmm_em.py")
    return module.log_partition_function, [_hmm_params(module, rng), rng.integers(0, 4, 6)], 0


def hmm_sequences(rng):
    module = load("hmm_em.py")
    data = [rng.integers(0, 4, 5), rng.integers(0, 4, 3)]
    return module.log_partition_function, [_hmm_params(module, rng), data], 0


def _mnist_like(rng, n=8, d=6, k=3):
    images = rng.uniform(size=(n, d))
    labels = np.eye(k)[rng.integers(0, k, n)]
    return {"N": n, "train_images": images, "train_labels": labels, "test_images": images,
            "test_labels": labels, "layer_sizes": [d, 4, k], "batch_size": 4}


def neural_net(rng):
    space = _main("neural_net.py", "objective", _mnist_like(rng))
    return space["objective"], [space["init_params"], 1], 0


def neural_net_posterior(rng):
    space = _main("neural_net.py", "objective", _mnist_like(rng))
    return load("neural_net.py").log_posterior, [space["init_params"],
                                                  space["train_images"][:4],
                                                  space["train_labels"][:4], 1.0], 0


def neural_net_regression(rng):
    module = load("neural_net_regression.py")
    space = main_block(module, "objective", {})
    return space["objective"], [module.init_random_params(0.3, [1, 4, 1]), 0], 0


def ica(rng):
    space = _main("ica.py", "objective", {"observed_dimension": 5, "n_samples": 7})
    return space["objective"], [rng.normal(size=space["total_num_params"]) * 0.3], 0


def ica_logprob(rng):
    _, _, logprob, _ = load("ica.py").make_ica_funs(4, 2)
    return logprob, [rng.normal(size=(4, 2)), rng.normal(size=(2, 6)), 0.7,
                     rng.normal(size=(6, 4))], 2


def black_box_svi(rng):
    space = _main("black_box_svi.py", "objective")
    return space["objective"], [rng.normal(size=4) * 0.3, 0], 0


def bayesian_neural_net(rng):
    space = _main("bayesian_neural_net.py", "objective")
    return space["objective"], [rng.normal(size=2 * space["num_weights"]) * 0.3, 0], 0


def mixture_vi(rng):
    space = _main("mixture_variational_inference.py", "objective")
    return space["objective"], [space["init_var_params"](2)], 0


def vae(rng):
    space = _main("variational_autoencoder.py", "objective",
                  {**_mnist_like(rng), "_": None, "latent_dim": 2, "data_dim": 6, "gen_layer_sizes": [2, 4, 6],
                   "rec_layer_sizes": [6, 4, 4]})
    return space["objective"], [space["combined_init_params"], 1], 0


def fluidsim(rng, n=5):
    space = _main("fluidsim/fluidsim.py", "objective",
                  {"simulation_timesteps": 2, "init_smoke": rng.uniform(size=(n, n)),
                   "target": rng.uniform(size=(n, n))})
    return space["objective"], [rng.normal(size=2 * n * n) * 0.3], 0


def fixed_points(rng):
    return load("fixed_points.py").sqrt, [2.0], 0


def ode_net(rng):
    space = _main("ode_net.py", "train_loss", {"N": 6})
    module = load("ode_net.py")
    return space["train_loss"], [module.init_nn_params(0.1, [2, 4, 2])], 0


CASES = [
    Case("rosenbrock.py", "rosenbrock", rosenbrock),
    Case("logistic_regression.py", "training_loss", logistic),
    Case("tanh.py", "tanh", tanh, why="elementwise: `grad` of an array value is `egrad`'s"),
    Case("sinusoid.py", "fun", sinusoid,
         why="the Taylor series: a loop to 1000 with `print` and a `break` on `np.abs`"),
    Case("negative_binomial_maxlike.py", "loglike", negbin, why="the lambda, `r` (gammaln)"),
    Case("negative_binomial_maxlike.py", "loglike", negbin_p, why="the lambda, `p`"),
    Case("gaussian_process.py", "objective", gaussian_process,
         why="`mvn.logpdf` of autograd.scipy.stats (fixed: read as SciPy's distribution)"),
    Case("gmm.py", "objective", gmm,
         why="`zip(*unpack_gmm_params(params))`, `mvn.logpdf` (fixed)"),
    Case("fluidsim/fluidsim.py", "objective", fluidsim,
         why="`np.floor(x).astype(int)`, an integer index array, and `np.mod` of it (fixed)"),
    Case("rnn.py", "training_loss", rnn),
    Case("lstm.py", "training_loss", lstm),
    Case("hmm_em.py", "log_partition_function", hmm_sequence, why="one sequence (an array)"),
    Case("hmm_em.py", "log_partition_function", hmm_sequences,
         refused="`partial(log_partition_function, natural_params)` is not supported as a callee",
         why="a list of sequences: the function maps a `partial` of itself over them"),
    Case("neural_net.py", "objective", neural_net, refused="is a slice object, which s2s-ad reads",
         why="`batch_indices` returns `slice(...)`: a slice object is read as an index in the "
         "function that makes it (pass its bounds)"),
    Case("neural_net.py", "log_posterior", neural_net_posterior,
         why="what `objective` computes for a batch; `l2_norm`'s `flatten` (fixed)"),
    Case("neural_net_regression.py", "objective", neural_net_regression,
         why="autograd's `flatten` of the parameters, `nonlinearity=np.tanh` (both fixed)"),
    Case("ica.py", "logprob", ica_logprob,
         why="the model `make_ica_funs` returns, with respect to `noise_std`: `t.logpdf` (fixed)"),
    Case("ica.py", "objective", ica,
         why="`unpack_weights`, a closure made by `make_ica_funs`, reads its ints (fixed)"),
    Case("black_box_svi.py", "objective", black_box_svi, refused="draw them outside",
         why="random draws inside the objective (`rs.randn`)"),
    Case("bayesian_neural_net.py", "objective", bayesian_neural_net, refused="draw them outside",
         why="the objective black_box_svi.py makes: random draws inside",
         at="black_box_svi.py"),
    Case("mixture_variational_inference.py", "objective", mixture_vi,
         refused="draw them outside",
         why="random draws inside"),
    Case("variational_autoencoder.py", "objective", vae, refused="draw them outside",
         why="random draws inside (`seed`, a RandomState the objective passes on); "
         "`slice(...)` as in neural_net.py"),

    Case("fixed_points.py", "sqrt", fixed_points,
         refused="(autograd.misc.fixed_points.fixed_point) is autograd-only",
         why="autograd's own primitive with its own vjp"),
    Case("ode_net.py", "train_loss", ode_net, refused="autograd-only",
         why="`odeint` of autograd.scipy.integrate: autograd's own primitive"),
]
"""Not here: rkhs.py differentiates with respect to a function in a vector space
autograd is told about (`VSpace`), convnet.py's objective captures objects (its
layers, a weights parser) and convolves with autograd.scipy.signal (no SciPy twin),
define_gradient.py, dot_graph.py and print_trace.py show autograd's own machinery."""


@dataclass
class Result:
    vs_fd: float
    vs_autograd: float | None


def run(case: Case, seed: int = 48) -> Result:
    """s2s-ad's gradient against central differences and autograd.grad."""
    import s2s_ad
    fn, args, i = case.make(np.random.default_rng(seed))
    with contextlib.redirect_stdout(io.StringIO()):  # (sinusoid.py's Taylor series prints)
        got = [np.asarray(x, np.float64) for x in leaves(s2s_ad.grad(fn, wrt=i)(*args))]
        vs_fd = relative(got, central_differences(fn, args, i))
        want = autograd_grad(fn, args, i)
    return Result(vs_fd, None if want is None else relative(got, want))


def refusal(case: Case, seed: int = 48) -> str:
    """s2s-ad's message for the case's objective (raised by ``grad`` or its
    first call); AssertionError when it is not refused."""
    import s2s_ad
    fn, args, i = case.make(np.random.default_rng(seed))
    try:
        s2s_ad.grad(fn, wrt=i)(*args)
    except s2s_ad.SourceError as exc:
        return str(exc)
    raise AssertionError(f"{case.id}: s2s-ad differentiates it now; move it to the agreeing cases")


def table() -> str:
    rows = ["| example | objective | result |", "| --- | --- | --- |"]
    for case in CASES:
        if case.refused:
            message = refusal(case).splitlines()[0]
            result = f"refused: {case.why} ({message.split('error: ', 1)[-1]})"
        else:
            r = run(case)
            result = f"agrees: {r.vs_fd:.1e} from central differences" + (
                "" if r.vs_autograd is None else f", {r.vs_autograd:.1e} from autograd.grad") + (
                f" ({case.why})" if case.why else "")
        rows.append(f"| `{case.file}` | `{case.objective}` | {result} |")
    return "\n".join(rows)


if __name__ == "__main__":
    if root() is None or check_root(root()):
        sys.exit(check_root(root()) if root() else f"set {ENV} to an autograd checkout")
    print(table())
