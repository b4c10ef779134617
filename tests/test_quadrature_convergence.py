"""Quadrature accuracy on the colon data, by doubling the α and θ grids (issue 2).

Midpoint rule in the prior quantiles of α (thesis §2.3.3) and Simpson's rule in θ.
Measured (k = 5, random_state=0, predictions for all 62 cases):

- corrected:   30/21 -> 60/41 points changes P(y=1) by at most 1.7e-6;
- uncorrected: 30/21 -> 60/41 changes it by 1.6e-4, almost all from the α grid (θ alone: 2.4e-6),
  because the uncorrected posterior of α is concentrated at small α where the prior's quantiles are
  sparse; 60/41 -> 120/81 changes it by 5.7e-5.
"""

from __future__ import annotations

import numpy as np
import pytest

from hdbayes import BiasCorrectedNaiveBayes


@pytest.fixture(scope="module")
def colon():
    from hdbayes.datasets import load_colon

    try:
        return load_colon(binarize=True)
    except OSError as error:
        pytest.skip(f"colon data unavailable: {error}")


def _proba(data, correct, n_alpha, n_theta, k=5):
    model = BiasCorrectedNaiveBayes(n_features=k, correct=correct, n_alpha=n_alpha, n_theta=n_theta, random_state=0)
    return model.fit(data.data, data.target).predict_proba(data.data)[:, 1]


def test_doubling_the_grids_changes_corrected_predictions_by_less_than_1e_4(colon):
    coarse = _proba(colon, True, 30, 21)
    fine = _proba(colon, True, 60, 41)
    assert np.abs(coarse - fine).max() < 1e-4


def test_theta_rule_converges_for_both_models(colon):
    for correct in (True, False):
        assert np.abs(_proba(colon, correct, 30, 21) - _proba(colon, correct, 30, 41)).max() < 1e-4


def test_uncorrected_alpha_grid_converges(colon):
    coarse = np.abs(_proba(colon, False, 30, 21) - _proba(colon, False, 60, 41)).max()
    finer = np.abs(_proba(colon, False, 60, 41) - _proba(colon, False, 120, 81)).max()
    assert coarse < 1e-3
    assert finer < 1e-4
    assert finer < coarse
