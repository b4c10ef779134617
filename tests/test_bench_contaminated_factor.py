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

from hdbayes.selection_bias.gaussian._factor import per_class_log_discard_probability_given  # noqa: E402


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


def test_factor_table_increases_as_the_spread_shrinks():
    """(p − k) log b(τ^μ) rises towards 0 as τ^μ grows (class means closer: fewer features pass γ) and is ≤ 0."""
    grid = np.linspace(-2.0, 5.0, 8)
    values = factor.log_factor_table([12, 6, 8], 20.0, 500, 0.02, 25.0, 2.0, 0.3, grid, n_pool=16)
    assert np.all(values <= 0.0) and np.all(np.diff(values) > 0.0)


def test_corrected_prototype_shrinks_the_spread():
    """With a factor that penalises a large spread the corrected chain's τ^μ draws sit higher than the uncorrected
    chain's (same data, same seed), and stay inside the factor's grid."""
    bench = pytest.importorskip("bench_gaussian_real")
    rng = np.random.default_rng(0)
    codes = np.repeat(np.arange(3), 12)
    X = rng.normal(0.0, 1.5, size=(3, 4))[codes] + rng.standard_normal((36, 4))
    prior = {"alpha_x": 2.0, "w_x": 0.3, "alpha_mu": 1.5, "w_mu": 0.01, "alpha_nu": 1.5, "w_nu": 0.01}
    mcmc = {"n_iter": 400, "burn_in": 100, "thin": 1}
    grid = np.linspace(-4.0, 6.0, 41)
    steep = (grid, -200.0 * np.exp(-grid))  # (p − k) log b ≈ −(p − k) r · const: strongly against a large spread
    spreads = {}
    for correct in (False, True):
        mus, _ = bench.two_level_t_gibbs(X, codes, 3, np.inf, np.inf, prior, mcmc, np.random.default_rng(1),
                                         cell_mix=(0.02, 25.0), log_factor=steep if correct else None)  # fmt: skip
        spreads[correct] = np.mean(np.var(mus, axis=1))  # spread of the class means, averaged over draws
    assert spreads[True] < 0.5 * spreads[False]


def test_corrected_case_prototype_consults_the_factor_of_each_count_vector():
    """The corrected contaminated-case chain asks the factor for valid count vectors (0 ≤ c_g ≤ n_g), and a factor
    that costs 1000 nats per outlying case keeps the chain at no outlying case."""
    bench = pytest.importorskip("bench_gaussian_real")
    rng = np.random.default_rng(0)
    codes = np.repeat(np.arange(3), 10)
    X = rng.normal(0.0, 2.0, size=(3, 4))[codes] + rng.standard_normal((30, 4))
    X[0] += 8.0  # an outlying case, which the uncorrected chain would flag
    prior = {"alpha_x": 2.0, "w_x": 0.3, "alpha_mu": 1.5, "w_mu": 0.01, "alpha_nu": 1.5, "w_nu": 0.01}
    mcmc = {"n_iter": 60, "burn_in": 10, "thin": 1}
    grid = np.linspace(-4.0, 6.0, 11)
    calls = []

    def penalty(outlying):
        calls.append(outlying)
        return grid, np.full(grid.shape, -1000.0 * sum(outlying))

    bench.two_level_t_gibbs(X, codes, 3, np.inf, np.inf, prior, mcmc, np.random.default_rng(1), case_mix=(0.1, 4.0),
                            case_factor=penalty)  # fmt: skip
    assert all(0 <= c <= 10 for vector in calls for c in vector)
    per_sweep = 2 * X.shape[0] + 1  # two proposals per case, then the τ^μ step's current vector
    assert len(calls) == per_sweep * mcmc["n_iter"]
    assert all(vector == (0, 0, 0) for vector in calls[per_sweep - 1 :: per_sweep])
