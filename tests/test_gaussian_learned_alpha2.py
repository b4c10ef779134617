"""α2_x learned (``alpha2_x="learn"``; docs/gaussian.md eq. P35–P37): the class-variance marginal against
quadrature, the stacked adjustment factors, simulation-based calibration of the grid moves, estimator and CLI."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats
from sklearn.utils._param_validation import InvalidParameterError

from hdbayes import BiasCorrectedGaussianClassifier
from hdbayes.selection_bias.gaussian._scales_kernel import _log_class_variance_marginal, stacked_kernel_arguments
from hdbayes.selection_bias.gaussian.per_class import (
    ALPHA2_GRID,
    ClassVarianceGridAdjustment,
    PerClassVariance,
    PerClassVarianceAdjustment,
)
from hdbayes.selection_bias.gaussian.per_feature import PerFeatureGaussianAdjustment

PRIOR = dict(alpha_x=6.0, w_x=1.0, alpha_mu=6.0, w_mu=0.25, alpha_nu=6.0, w_nu=0.25)
ALPHA1 = dict(alpha1_mu=3.0, alpha1_x=10.0)


# ----- the marginal of the class variances (eq. P35) -----


def _marginal_by_quadrature(alpha2, residual, count, level):
    """log ∫ w^{−n/2} e^{−R/(2w)} Inv-χ²(w; α2, v) dw by adaptive quadrature in log w."""
    prior = stats.invgamma(alpha2 / 2.0, scale=alpha2 * level / 2.0)

    def integrand(log_w):
        w = math.exp(log_w)
        return math.exp(-0.5 * count * log_w - 0.5 * residual / w + prior.logpdf(w) + log_w)

    value, _ = integrate.quad(integrand, -30.0, 30.0, limit=400, epsabs=0.0, epsrel=1e-12)
    return math.log(value)


@pytest.mark.parametrize("alpha2", [1.0, 4.0, 64.0])
def test_class_variance_marginal_against_quadrature(alpha2):
    rng = np.random.default_rng(0)
    counts = np.array([5.0, 9.0, 3.0])
    residuals = rng.gamma(2.0, 2.0, size=(3, 4))
    level = rng.gamma(3.0, 0.5, size=4)
    expected = sum(_marginal_by_quadrature(alpha2, residuals[g, j], counts[g], level[j])
                   for g in range(3) for j in range(4))  # fmt: skip
    ones = np.ones(3)
    assert _log_class_variance_marginal(alpha2, residuals, counts, level, ones) == pytest.approx(expected, rel=1e-9)
    # with class scales s_g the prior of class g is centred on s_g v_j (eq. P40)
    scale = np.array([2.0, 0.5, 1.5])
    expected = sum(_marginal_by_quadrature(alpha2, residuals[g, j], counts[g], scale[g] * level[j])
                   for g in range(3) for j in range(4))  # fmt: skip
    assert _log_class_variance_marginal(alpha2, residuals, counts, level, scale) == pytest.approx(expected, rel=1e-9)


def test_class_variance_marginal_at_infinity_is_the_limit():
    """α2_x = ∞ (equal class variances w_gj = v_j) is the limit of the finite values: the Normal likelihood."""
    rng = np.random.default_rng(1)
    counts = np.array([6.0, 4.0])
    residuals = rng.gamma(2.0, 1.0, size=(2, 3))
    level = np.array([0.5, 1.0, 2.0])
    ones = np.ones(2)
    at_infinity = _log_class_variance_marginal(np.inf, residuals, counts, level, ones)
    expected = float(np.sum(-0.5 * counts[:, None] * np.log(level) - 0.5 * residuals / level))
    assert at_infinity == pytest.approx(expected, rel=1e-14)
    assert _log_class_variance_marginal(1e6, residuals, counts, level, ones) == pytest.approx(at_infinity, abs=1e-4)
    assert abs(_log_class_variance_marginal(8.0, residuals, counts, level, ones) - at_infinity) > 0.1
    scale = np.array([3.0, 0.25])
    variance = scale[:, None] * level
    scaled = _log_class_variance_marginal(np.inf, residuals, counts, level, scale)
    expected = float(np.sum(-0.5 * counts[:, None] * np.log(variance) - 0.5 * residuals / variance))
    assert scaled == pytest.approx(expected, rel=1e-14)
    assert _log_class_variance_marginal(1e6, residuals, counts, level, scale) == pytest.approx(scaled, abs=1e-4)


# ----- the factors of the grid (eq. P37) -----


def test_grid_adjustment_rows_are_the_factors_of_each_value():
    grid = (4.0, math.inf)
    adjustment = ClassVarianceGridAdjustment.create(6.0, (12, 9, 10), alpha2_grid=grid, n_pool=8)
    log_rho = np.array([-2.0, 0.0, 1.5])
    rows = adjustment.log_discard_probability(log_rho)
    for row, value in zip(rows, grid, strict=True):
        if math.isinf(value):
            single = PerFeatureGaussianAdjustment.create(6.0, (12, 9, 10), **ALPHA1)
        else:
            single = PerClassVarianceAdjustment.create(6.0, (12, 9, 10), **ALPHA1, alpha2_x=value, n_pool=8)
        np.testing.assert_array_equal(row, single.log_discard_probability(log_rho))
    v0s, h, log_a, lengths, *_ = stacked_kernel_arguments(adjustment)
    assert v0s.shape == lengths.shape == (2,) and log_a.shape == (2, lengths.max()) and h == 0.5
    shorter = int(np.argmin(lengths))
    assert np.all(np.isneginf(log_a[shorter, lengths[shorter] :]))
    assert np.all(np.isfinite(log_a[shorter, : lengths[shorter]]))
    assert adjustment.threshold == 6.0


def test_per_class_factor_tends_to_the_pooled_one():
    """A(ρ; α2_x) → the pooled per-feature factor as α2_x → ∞ (measured: 8e-6 at α2_x = 1e5, 1.6e-3 at 1e3)."""
    log_rho = np.array([-3.0, 0.0, 3.0])
    pooled = PerFeatureGaussianAdjustment.create(9.0, (37, 8, 10)).log_discard_probability(log_rho)
    near = PerClassVarianceAdjustment.create(9.0, (37, 8, 10), alpha2_x=1e5, n_pool=64)
    np.testing.assert_allclose(near.log_discard_probability(log_rho), pooled, atol=1e-4)
    far = PerClassVarianceAdjustment.create(9.0, (37, 8, 10), alpha2_x=4.0, n_pool=64)
    assert np.max(np.abs(far.log_discard_probability(log_rho) - pooled)) > 0.1


def test_grid_adjustment_refuses_a_bad_grid():
    with pytest.raises(ValueError, match="alpha2_grid"):
        ClassVarianceGridAdjustment.create(6.0, (12, 9, 10), alpha2_grid=(4.0, 2.0))


# ----- simulation-based calibration of the learned α2_x -----


def _draw(rng, n_classes=3, n_per_class=10, p=8):
    """(grid index of α2_x, log s_x, X, y) with every parameter from the prior, α2_x uniform on the grid."""
    index = int(rng.integers(len(ALPHA2_GRID)))
    alpha2 = ALPHA2_GRID[index]
    s_mu = 1.0 / rng.gamma(PRIOR["alpha_mu"] / 2.0, 2.0 / (PRIOR["alpha_mu"] * PRIOR["w_mu"]))
    s_x = 1.0 / rng.gamma(PRIOR["alpha_x"] / 2.0, 2.0 / (PRIOR["alpha_x"] * PRIOR["w_x"]))
    tau_nu = rng.gamma(PRIOR["alpha_nu"] / 2.0, 2.0 / (PRIOR["alpha_nu"] * PRIOR["w_nu"]))
    w_mu = ALPHA1["alpha1_mu"] * s_mu / rng.chisquare(ALPHA1["alpha1_mu"], size=p)
    v = ALPHA1["alpha1_x"] * s_x / rng.chisquare(ALPHA1["alpha1_x"], size=p)
    w_x = np.broadcast_to(v, (n_classes, p)) if math.isinf(alpha2) else (
        alpha2 * v / rng.chisquare(alpha2, size=(n_classes, p)))  # fmt: skip
    nu = rng.normal(0.0, 1.0 / np.sqrt(tau_nu), size=p)
    mu = nu + rng.standard_normal((n_classes, p)) * np.sqrt(w_mu)
    y = np.repeat(np.arange(n_classes), n_per_class)
    X = mu[y] + rng.standard_normal((y.shape[0], p)) * np.sqrt(w_x[y])
    return index, np.log(s_x), X, y


def _sbc(n_replicates, seed, correct=False, k=None, p=8, n_iter=60):
    rng = np.random.default_rng(seed)
    truth, draws = [], []
    for r in range(n_replicates):
        index, log_s_x, X, y = _draw(rng, p=p)
        model = BiasCorrectedGaussianClassifier(
            n_features_to_select=k, correct=correct, variant=PerClassVariance(alpha2_x="learn", **PRIOR, **ALPHA1),
            n_iter=n_iter, burn_in=n_iter - 1, thin=1, n_mc=32, random_state=r,
        ).fit(X, y)  # fmt: skip
        truth.append((index, log_s_x))
        draws.append((ALPHA2_GRID.index(float(model.trace_["alpha2_x"][0, -1])), model.trace_["log_s_x"][0, -1]))
    return np.array(truth), np.array(draws)


def test_learned_alpha2_is_calibrated_without_selection():
    """All 8 features kept, 300 replicates: the last draw of α2_x's grid index has the prior's uniform law
    (chi-square over the 9 values; measured p = 0.42) and log s_x the prior's (KS, measured p = 0.99), and the
    draws follow the truth (rank correlation of true and drawn index, measured 0.83; 0 if the data were
    ignored)."""
    truth, draws = _sbc(300, seed=3)
    counts = np.bincount(draws[:, 0].astype(int), minlength=len(ALPHA2_GRID))
    assert stats.chisquare(counts).pvalue > 0.001, counts
    assert stats.ks_2samp(truth[:, 1], draws[:, 1]).pvalue > 0.001
    assert stats.spearmanr(truth[:, 0], draws[:, 0]).statistic > 0.3


@pytest.mark.slow
def test_learned_alpha2_corrected_is_calibrated_after_selection():
    """The top 5 of 40 by F, corrected with the grid's factors (pool 32): the index of α2_x and log s_x keep the
    prior's law (measured: chi-square p = 0.079, KS p = 0.48; uncorrected, KS p = 2e-4 for log s_x). Slow:
    every fit computes 8 per-class factors."""
    truth, draws = _sbc(120, seed=4, correct=True, k=5, p=40, n_iter=100)
    counts = np.bincount(draws[:, 0].astype(int), minlength=len(ALPHA2_GRID))
    assert stats.chisquare(counts).pvalue > 0.001, counts
    assert stats.ks_2samp(truth[:, 1], draws[:, 1]).pvalue > 0.001


# ----- estimator and command line -----


def _data(seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(3), (8, 10, 12))
    X = rng.normal(size=(30, 12)) * np.array([0.5, 1.0, 3.0])[y][:, None]
    X[:, :3] += 2.0 * y[:, None]
    return X, y


def test_estimator_learns_alpha2_and_builds_one_factor_per_value():
    X, y = _data()
    model = BiasCorrectedGaussianClassifier(
        n_features_to_select=4, variant=PerClassVariance(alpha2_x="learn", **PRIOR), n_iter=300,
        burn_in=100, thin=2, n_mc=16, random_state=0,
    ).fit(X, y)  # fmt: skip
    draws = model.trace_["alpha2_x"]
    assert draws.shape == (1, 100) and set(np.unique(draws)) <= set(ALPHA2_GRID)
    assert isinstance(model.adjustment_, ClassVarianceGridAdjustment)
    assert len(model.adjustment_.adjustments) == len(ALPHA2_GRID)
    assert model.trace_.sample_stats["alpha2_acceptance_rate"].shape == (1, 100)
    # class standard deviations 0.5, 1 and 3: the data favour unequal variances (small α2_x)
    assert np.median(draws) <= 16.0
    proba = model.predict_proba(X)
    assert np.allclose(proba.sum(axis=1), 1.0)
    again = BiasCorrectedGaussianClassifier(**model.get_params(deep=False)).fit(X, y)
    np.testing.assert_array_equal(again.trace_["alpha2_x"], draws)


def test_fixed_alpha2_draws_are_unchanged_by_the_grid_machinery():
    """A fixed α2_x makes no grid moves: the trace has no alpha2_x and no acceptance rate of its moves."""
    X, y = _data(1)
    model = BiasCorrectedGaussianClassifier(
        n_features_to_select=4, variant=PerClassVariance(alpha2_x=4.0), correct=False,
        n_iter=100, burn_in=20, thin=2, random_state=0,
    ).fit(X, y)  # fmt: skip
    assert "alpha2_x" not in model.trace_.posterior
    assert "alpha2_acceptance_rate" not in model.trace_.sample_stats


def test_alpha2_must_be_positive_or_learn():
    X, y = _data()
    for bad in ("learned", 0.0):
        with pytest.raises(InvalidParameterError, match="alpha2_x"):
            BiasCorrectedGaussianClassifier(variant=PerClassVariance(alpha2_x=bad)).fit(X, y)
