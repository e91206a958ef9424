"""The examples run as the docs say, from a directory other than the clone's
root (nothing may need the repository on sys.path): getting-started.md's
`python examples/gaussian_nll.py` and its `grad -o` then import."""

import math
import os
import re
import subprocess
import sys

from oracle import central_difference, close

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "gaussian_nll.py")
LOG_2PI = math.log(2.0 * math.pi)


def nll(x, mu, log_sigma):  # the example's function, written again as the reference
    z = (x - mu) / math.exp(log_sigma)
    return 0.5 * z * z + log_sigma + 0.5 * LOG_2PI


def _env():
    # s2s-ad as installed (pip install -e .), no repository path added.
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def test_gaussian_nll_runs_as_a_script_from_elsewhere(tmp_path):
    done = subprocess.run([sys.executable, EXAMPLE], cwd=tmp_path, env=_env(),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    found = re.search(r"\(dmu, dlog_sigma\) = \(([-\d.e]+), ([-\d.e]+)\)", done.stdout)
    assert found, done.stdout
    dmu, dls = map(float, found.groups())
    assert close(dmu, central_difference(nll, [1.0, 0.2, 0.1], 1))
    assert close(dls, central_difference(nll, [1.0, 0.2, 0.1], 2))
    assert "PROVED: gradient of nll" in done.stdout


def test_getting_started_grad_o_then_import(tmp_path):
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad",
                           os.path.relpath(EXAMPLE, tmp_path) + ":nll", "--wrt", "mu,log_sigma",
                           "-o", "grad_nll.py"], cwd=tmp_path, env=_env(), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    run = subprocess.run([sys.executable, "-c", "from grad_nll import grad_nll; "
                          "print(repr(grad_nll(1.0, 0.2, 0.1)))"], cwd=tmp_path,
                         env={"PATH": os.environ.get("PATH", "")}, capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr
    dmu, dls = eval(run.stdout)
    assert close(dmu, central_difference(nll, [1.0, 0.2, 0.1], 1))
    assert close(dls, central_difference(nll, [1.0, 0.2, 0.1], 2))
