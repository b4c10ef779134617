"""Shared fixtures for the selection-bias test modules."""

from __future__ import annotations

import numpy as np
import pytest


def simulate_binary_naive_bayes(n_features, n_train, n_test, alpha=300.0, seed=0):
    """Data from the thesis's naive Bayes model (§2.3.5) with α fixed and i.i.d. labels.

    A thin wrapper over :func:`hdbayes.datasets.simulate_naive_bayes` returning
    X_train, y_train, X_test, y_test.
    """
    from hdbayes.datasets import simulate_naive_bayes

    data = simulate_naive_bayes(
        alpha=alpha, n_features=n_features, n_train=n_train, n_test=n_test, balanced=False, random_state=seed
    )
    return data.X_train, data.y_train, data.X_test, data.y_test


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
