"""Shared fixtures: simulated naive Bayes data, sparse matrices, and the identical-outputs check of experiments."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest


def pytest_configure(config):
    """Under pytest-xdist every worker is a process of its own: one BLAS thread each, so that two workers on
    two cores do not start four BLAS threads (OpenBLAS threads cost up to 100x on small matrices under load)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # BLAS libraries loaded later, and child processes
        import scipy.linalg  # noqa: F401  (loads scipy's own OpenBLAS, so that the limit below reaches it)
        from threadpoolctl import threadpool_limits

        threadpool_limits(1, user_api="blas")


def simulate_binary_naive_bayes(n_features, n_train, n_test, alpha=300.0, seed=0):
    """Data from the thesis's naive Bayes model (§2.3.5) with α fixed and i.i.d. labels.

    A thin wrapper over :func:`hdbayes.datasets.simulate_naive_bayes` returning
    X_train, y_train, X_test, y_test.
    """
    from hdbayes.datasets import simulate_naive_bayes

    data = simulate_naive_bayes(
        alpha=alpha, n_features=n_features, n_samples=n_train, n_test=n_test, balanced=False, random_state=seed
    )
    return data.X, data.y, data.X_test, data.y_test


def random_sparse_binary(n_rows, n_cols, density, seed=0, fmt="csc"):
    """A 0/1 sparse matrix built without ever forming n_rows × n_cols (or n_rows·n_cols draws)."""
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    nnz = int(round(n_rows * n_cols * density))
    rows = rng.integers(0, n_rows, size=nnz)
    cols = rng.integers(0, n_cols, size=nnz)
    X = sp.coo_matrix((np.ones(nnz), (rows, cols)), shape=(n_rows, n_cols)).tocsc()
    X.sum_duplicates()
    X.data[:] = 1.0
    return X.asformat(fmt)


@pytest.fixture(scope="session")
def nb_data():
    """A small naive Bayes problem: p=300 features, 60 training and 40 test cases."""
    return simulate_binary_naive_bayes(n_features=300, n_train=60, n_test=40, alpha=50.0, seed=1)


@pytest.fixture(scope="session")
def simulate_nb():
    """The simulator :func:`simulate_binary_naive_bayes` as a fixture."""
    return simulate_binary_naive_bayes


@pytest.fixture(scope="session")
def sparse_binary():
    """The builder :func:`random_sparse_binary` as a fixture."""
    return random_sparse_binary


def assert_identical_outputs(first, second, folder):
    """Write two experiment reports into ``folder`` and assert byte-identical files, timings excepted.

    ``summary.md``, every result CSV and every PNG other than ``timing*`` must agree byte for byte;
    the timing CSVs must exist in both with the same columns. Give reports not written before: saving
    a constrained-layout figure a second time can move its layout by a pixel.
    """
    folder = Path(folder)
    one, two = first.write(folder / "first"), second.write(folder / "second")
    names = sorted(p.name for p in one.iterdir())
    assert names == sorted(p.name for p in two.iterdir())
    assert "summary.md" in names and any(n.endswith(".csv") and not n.startswith("timing") for n in names)
    for name in names:
        a, b = (one / name).read_bytes(), (two / name).read_bytes()
        if name.startswith("timing"):
            if name.endswith(".csv"):
                assert a.splitlines()[0] == b.splitlines()[0], name
            continue
        assert a == b, f"{name} differs between two runs with the same seed"
    for name in names:
        if name == "summary.md" or (name.endswith(".csv") and not name.startswith("timing")):
            assert "seconds" not in (one / name).read_text(encoding="utf-8"), f"a time in {name}"


@pytest.fixture(scope="session")
def identical_outputs():
    """The check :func:`assert_identical_outputs` as a fixture."""
    return assert_identical_outputs
