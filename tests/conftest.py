"""Shared test helpers, and the XLA flags and garbage-collector setting the suite runs with."""

import gc
import os
import platform
import re

# The suite's time is mostly XLA compiling. Two XLA flags trade run time for compile time, the trade a test wants
# and a user does not, so only the tests set them (each measured against XLA's default, a process a setting:
# docs/design/performance.md, "Suite time" sections):
# - without XLA's CPU fusion emitters a program compiles faster and runs a little slower (the 16-ball break's
#   compile 0.77-0.92x, its run 0.93-1.30x over four runs; the suite 9 min 43 s -> 8 min 10 s);
# - with LLVM's optimisation off (-O0) it compiles faster again and runs about 2.8x as long (the break's compile
#   0.61x of the default against 0.80x without it; the suite in-tree 9 min 6 s -> 6 min 42 s).
# They change how XLA generates code, not what it computes; they are read when JAX's CPU backend starts, before
# any test runs (and passed on to the CLI's children).
os.environ["XLA_FLAGS"] = (
    os.environ.get("XLA_FLAGS", "") + " --xla_cpu_use_fusion_emitters=false --xla_backend_optimization_level=0"
).strip()

# The command lines the tests run (in-process and as children) compile afresh and leave the user's cache folder
# alone: tests/test_cli.py checks the cache on folders of its own.
os.environ["DIFFIMPACT_NO_CACHE"] = "1"

import diffimpact  # noqa: E402

diffimpact.configure()  # float64 and the CPU cap, as a user's first call would

import jax  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

# Property tests draw the same examples on every run and machine (derandomize; no example database carried
# between runs): a run on a fresh clone is reproducible, and an example that breaks a claim is found by a search
# and then kept as a test of its own (tests/impulse/test_plus.py), not met by chance in CI.
settings.register_profile("reproducible", derandomize=True, database=None)
settings.load_profile("reproducible")


def _central_difference(fn, point, argnum, relative_step=1e-5):
    """Central finite difference of a scalar ``fn(*point)`` with respect to argument ``argnum``."""
    h = relative_step * point[argnum]
    plus, minus = list(point), list(point)
    plus[argnum] += h
    minus[argnum] -= h
    return (float(fn(*plus)) - float(fn(*minus))) / (2 * h)


@pytest.fixture(scope="session")
def central_difference():
    return _central_difference


def _central_jacobian(fn, point, h):
    """Central differences of a vector ``fn(point)`` w.r.t. every component of the vector ``point`` (columns)."""
    point = np.asarray(point, dtype=float)
    return np.stack([(np.asarray(fn(point + h * e)) - np.asarray(fn(point - h * e))) / (2 * h)
                     for e in np.eye(point.size)], axis=1)


@pytest.fixture(scope="session")
def central_jacobian():
    return _central_jacobian


def _assert_same_tree(a, b):
    """``a`` and ``b`` have the same tree structure and leaves, dtype and bits."""
    assert jax.tree.structure(a) == jax.tree.structure(b)
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True):
        assert x.dtype == y.dtype
        np.testing.assert_array_equal(x, y)


@pytest.fixture(scope="session")
def assert_same_tree():
    return _assert_same_tree


def _run_at_defaults(command, name, out):
    """``diffimpact COMMAND NAME --out OUT`` at its defaults (not ``--quick``), as a user first runs it: it
    succeeds and writes a CSV and a PNG. JAX's caches are cleared after: the ~25 runs of the two files that use
    this, in one process, would otherwise accumulate compiled code until LLVM cannot allocate more."""
    from diffimpact.cli import main

    try:
        assert main([command, name, "--out", str(out)]) == 0
        written = {path.suffix for path in out.iterdir() if path.stat().st_size > 0}
        assert {".csv", ".png"} <= written
    finally:
        jax.clear_caches()


@pytest.fixture(scope="session")
def run_at_defaults():
    return _run_at_defaults


def _check_fit_jacobian(problem, theta, h, rtol, atol_fraction, **options):
    """J of ``fitting.linearise(*problem, theta, **options)`` against central differences of z, column by column.

    The tolerance of column k is ``rtol`` relative plus ``atol_fraction`` of its largest entry.
    """
    from fitting import linearise

    _, jac = linearise(*problem, theta, **options)
    for k in range(theta.size):
        step = np.zeros(theta.size)
        step[k] = h
        difference = (linearise(*problem, theta + step, **options)[0]
                      - linearise(*problem, theta - step, **options)[0]) / (2 * h)
        np.testing.assert_allclose(jac[:, k], difference, rtol=rtol, atol=atol_fraction * np.abs(jac[:, k]).max())


@pytest.fixture(scope="session")
def check_fit_jacobian():
    return _check_fit_jacobian


def _check_gamma_against_second_difference(model, q0, v0, a0, t0=0.4, h=1e-4):
    """Φ̈ = D a − γ along q(t) = q0 + v0 t + a0 t²/2 (eqs. (2.10)–(2.11)), against a second difference of Φ."""

    def phi(dt):
        return model.constraint(q0 + v0 * dt + 0.5 * a0 * dt**2, t0 + dt)

    second_difference = (phi(h) - 2 * phi(0.0) + phi(-h)) / h**2
    exact = jax.jit(lambda q, v, a: model.jacobian(q, t0) @ a - model.gamma(q, v, t0))(q0, v0, a0)
    assert np.max(np.abs(exact)) > 1.0
    np.testing.assert_allclose(second_difference, exact, atol=1e-5)


@pytest.fixture(scope="session")
def check_gamma():
    return _check_gamma_against_second_difference


def _without_fma():
    """Whether XLA's CPU code has no fused multiply-adds: x86-64 capped at AVX or below (``diffimpact.configure``)."""
    isa = re.search(r"--xla_cpu_max_isa=(\w+)", os.environ.get("XLA_FLAGS", ""))
    return platform.machine().lower() in ("x86_64", "amd64") and isa is not None and isa.group(1) in ("AVX", "SSE4_2")


# The files that take longest (seconds summed over their tests, `pytest -m "not slow" -n 2 --dist loadfile
# --durations=0`), run first: xdist's --dist loadfile hands the workers whole files in collection
# order, so a long file collected last runs alone at the end (55 s of 900 there). A file missing from this list
# keeps its place after them; the list only orders, it selects nothing.
LONGEST_FIRST = (
    "reproduce/test_reproductions_at_defaults.py",  # slow only: 7 min
    "fitting/test_fits_at_defaults.py",  # slow only: 4 min
    "test_examples.py",  # slow only: 2.6 min
    "multibody/test_contact.py",  # 270 s
    "multibody/test_spatial_contact.py",  # 148 s
    "multibody/test_contact_family.py",  # 100 s
    "impact/test_central.py",  # 97 s
    "test_rigid_spheres.py",  # 78 s
    "reproduce/test_break_study.py",  # 56 s
    "impact/test_damping.py",  # 55 s
    "fitting/test_sensitivity_two_pendulum.py",  # 52 s
    "reproduce/test_double_pendulum_obstacle.py",  # 52 s
    "impulse/test_max_dissipation.py",  # 52 s
    "multibody/test_proximity.py",  # 49 s
    "multibody/test_spatial_bodies.py",  # 47 s
    "scenes/test_billiard_gradient.py",  # 47 s
)


def _file_rank(item):
    path = item.nodeid.split("::")[0].removeprefix("tests/")
    return LONGEST_FIRST.index(path) if path in LONGEST_FIRST else len(LONGEST_FIRST)


def pytest_collection_modifyitems(config, items):
    """Run the longest files first (stable: each file's tests keep their order); skip the ``without_fma`` tests
    where XLA may fuse multiply-adds (ARM, or another ISA set in ``XLA_FLAGS``)."""
    items.sort(key=_file_rank)
    if _without_fma():
        return
    skip = pytest.mark.skip(reason="XLA's CPU code may use fused multiply-adds here, which round mirror images apart")
    for item in items:
        if "without_fma" in item.keywords:
            item.add_marker(skip)


def pytest_runtest_logfinish(nodeid, location):
    """After each test, move every object the garbage collector tracks into its permanent generation
    (``gc.freeze``).

    The heap of a worker grows with every program JAX keeps (its caches of traces, lowerings and executables, to
    some 5 GB by the end of the suite), and Python's full collections walk all of it: 27-29 of them took 20-25 s
    of each worker's 257 s, and 5-6 s frozen (docs/design/performance.md, "The garbage collector's full
    collections"). Frozen, a collection walks only what the tests since the last freeze made.
    Cyclic garbage still young at a test's end is kept; the workers' peak memory stayed the same (5.0 and 5.4 GB
    against 5.6 and 4.2 GB).
    """
    gc.freeze()
