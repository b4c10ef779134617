"""Checks of benchmarks/bench_contaminated_factor.py, the exact adjustment factor of the Gaussian model with
per-class variances and contaminated cells (issue 13; docs/gaussian_real_data.md, eq. R2–R6): each term against a
dense n × n oracle, the o = 0 term against the library's per-class factor, and the truncation bound."""

import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
factor = pytest.importorskip("bench_contaminated_factor")
dense = pytest.importorskip("bench_cell_weight_factor")

from hdbayes.selection_bias.gaussian_adjustment import per_class_log_discard_probability_given  # noqa: E402


@pytest.mark.parametrize("log_r", [-5.0, -1.0, 0.5, 3.0])
@pytest.mark.parametrize("outliers", [(0, 0, 0), (1, 0, 0), (0, 2, 1), (3, 1, 0), (7, 0, 4), (0, 5, 2)])
def test_term_equals_dense_oracle(log_r, outliers):
    """a(r; ε, o) from the reduced (G − 1 + mixed)-dimensional problem equals the dense n × n eigenproblem with the
    first o_g cells of class g given variance κ ε_g (which cells does not matter: the cases are exchangeable)."""
    counts, gamma, kappa = (7, 5, 4), 6.0, 25.0
    epsilon = np.array([1.3, 0.5, 2.2])
    codes, Z, M = dense.design(counts, gamma)
    lam = np.ones(codes.shape[0])
    start = 0
    for g, o in enumerate(outliers):
        lam[start : start + o] = 1.0 / kappa
        start += counts[g]
    oracle = dense.log_a(log_r, epsilon, lam, codes, Z, M)
    ours = factor.contaminated_log_a(log_r, epsilon, np.asarray(counts, float), np.asarray(outliers, float), kappa,
                                     gamma)  # fmt: skip
    assert ours == pytest.approx(oracle, rel=1e-12)


def test_no_outlier_term_is_the_per_class_factor():
    counts = np.array([37.0, 9.0, 10.0])
    rng = np.random.default_rng(0)
    for log_r in (-6.0, -2.0, 0.0, 2.0, 8.0):
        epsilon = rng.gamma(2.0, 1.0, size=3)
        ours = factor.contaminated_log_a(log_r, epsilon, counts, np.zeros(3), 25.0, 12.0)
        reference = per_class_log_discard_probability_given(log_r, epsilon, counts, 12.0)
        assert ours == pytest.approx(reference, rel=1e-12)


def test_truncation_bound_holds():
    """The omitted binomial mass bounds the change of b when more count vectors are added, and the weights are
    the product of the classes' binomial probabilities."""
    counts, share, kappa, gamma = (12, 6, 8), 0.05, 25.0, 8.0
    epsilon = np.array([[1.0, 0.6, 1.8]])
    fine, fine_w, fine_omitted = factor.outlier_configurations(counts, share, 1e-13)
    coarse, coarse_w, coarse_omitted = factor.outlier_configurations(counts, share, 1e-4)
    assert coarse_omitted <= 1e-4 and fine_omitted <= 1e-13
    row = coarse[-1].astype(int)
    assert coarse.shape[0] < fine.shape[0]
    np.testing.assert_array_equal(fine[: coarse.shape[0]], coarse)  # a prefix of one order of decreasing weight
    assert coarse_w[-1] == pytest.approx(sum(stats.binom.logpmf(o, n, share) for o, n in zip(row, counts)))
    c = np.asarray(counts, float)
    for log_r in (-3.0, 0.0):
        b_fine = np.exp(factor.contaminated_log_b(log_r, epsilon, c, fine, fine_w, kappa, gamma))
        b_coarse = np.exp(factor.contaminated_log_b(log_r, epsilon, c, coarse, coarse_w, kappa, gamma))
        assert 0.0 <= b_fine - b_coarse <= coarse_omitted + 1e-14
