"""The block-sparse signal simulator (docs/spike_slab.md, "Experiments")."""

from __future__ import annotations

import numpy as np
import pytest

from hdbayes.datasets.regression import measurement_rows, simulate_block_sparse


def test_block_sparse_signal():
    data = simulate_block_sparse(n_samples=100, n_test=20, random_state=0)
    assert data.X.shape == (100, 512) and data.X_test.shape == (20, 512)
    np.testing.assert_allclose(np.linalg.norm(data.X, axis=1), 1.0)
    assert data.active_groups.shape == (10,) and np.all(np.diff(data.active_groups) > 0)
    nonzero_groups = np.unique(data.groups[data.coef != 0])
    np.testing.assert_array_equal(nonzero_groups, data.active_groups)
    assert np.count_nonzero(data.coef) == 40
    residual = data.y - data.X @ data.coef
    assert 0.003 < residual.std() < 0.007  # σ0 = 0.005
    again = simulate_block_sparse(n_samples=100, n_test=20, random_state=0)
    np.testing.assert_array_equal(again.y, data.y)


def test_measurement_rows_are_unit_norm():
    np.testing.assert_allclose(np.linalg.norm(measurement_rows(5, 7, 0), axis=1), 1.0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"n_features": 10, "group_size": 4}, "multiple of group_size"), ({"n_active_groups": 200}, "exceeds"),
     ({"noise_std": -1.0}, "noise_std"), ({"n_samples": 0}, "n_samples must be at least 1")],
)
def test_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        simulate_block_sparse(**kwargs)
