"""Class scales of the per-class-variance model (class_scale=; docs/gaussian.md eq. P38–P41): the plug-in
estimate, the scaled adjustment factor against exact identities and simulation, the chain's calibration with
known scales, and the estimator's contract."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from scipy import stats
from scipy.special import digamma
from sklearn.utils.estimator_checks import parametrize_with_checks

from hdbayes import BiasCorrectedGaussianClassifier
from hdbayes.exceptions import InputValueError
from hdbayes.mcmc import Schedule
from hdbayes.selection_bias.gaussian.per_class import (
    ClassVarianceGridAdjustment,
    PerClassVariance,
    PerClassVarianceAdjustment,
    class_variance_pool,
    per_class_chain,
    plug_in_class_scale,
)
from hdbayes.selection_bias.gaussian.per_feature import PerFeatureGaussianAdjustment
from hdbayes.statistics.gaussian_moments import class_statistics

PRIOR = dict(alpha_x=6.0, w_x=1.0, alpha_mu=6.0, w_mu=0.25, alpha_nu=6.0, w_nu=0.25)
ALPHA = dict(alpha1_mu=3.0, alpha1_x=10.0, alpha2_x=4.0)
SHORT = dict(n_iter=200, burn_in=50, thin=5)
COUNTS = (12, 7, 9)
SCALE = np.array([3.0, 1.0, 1.0 / 3.0])


def _simulate(rng, scale, counts=COUNTS, p=40, alpha2_x=4.0):
    """(log s_μ, log s_x, log v_0, log w_00), X, y from the prior of eq. P38 with known class scales."""
    n_classes = len(counts)
    s_mu = 1.0 / rng.gamma(PRIOR["alpha_mu"] / 2.0, 2.0 / (PRIOR["alpha_mu"] * PRIOR["w_mu"]))
    s_x = 1.0 / rng.gamma(PRIOR["alpha_x"] / 2.0, 2.0 / (PRIOR["alpha_x"] * PRIOR["w_x"]))
    tau_nu = rng.gamma(PRIOR["alpha_nu"] / 2.0, 2.0 / (PRIOR["alpha_nu"] * PRIOR["w_nu"]))
    w_mu = ALPHA["alpha1_mu"] * s_mu / rng.chisquare(ALPHA["alpha1_mu"], size=p)
    v = ALPHA["alpha1_x"] * s_x / rng.chisquare(ALPHA["alpha1_x"], size=p)
    w_x = np.asarray(scale)[:, None] * alpha2_x * v / rng.chisquare(alpha2_x, size=(n_classes, p))
    nu = rng.normal(0.0, 1.0 / np.sqrt(tau_nu), size=p)
    mu = nu + rng.standard_normal((n_classes, p)) * np.sqrt(w_mu)
    y = np.repeat(np.arange(n_classes), counts)
    X = mu[y] + rng.standard_normal((y.shape[0], p)) * np.sqrt(w_x[y])
    return np.log([s_mu, s_x, v[0], w_x[0, 0]]), X, y


def _scatter(X, y):
    return np.stack([((X[y == g] - X[y == g].mean(axis=0)) ** 2).sum(axis=0) for g in np.unique(y)])


# ----- the plug-in estimate (eq. P41) -----


def test_plug_in_recovers_the_class_scales_and_needs_its_digamma_term():
    """p = 20 000 features with class sizes 3, 5 and 30 and true scales 3 : 1 : 1/3 (centred): ŝ within 0.03 in
    log (measured 0.01). Without the E log χ²_ν/ν term the small classes' scales are off by more than 0.2 (the
    check can fail)."""
    rng = np.random.default_rng(0)
    counts = (3, 5, 30)
    _, X, y = _simulate(rng, SCALE, counts=counts, p=20_000)
    scatter = _scatter(X, y)
    estimate = plug_in_class_scale(scatter, counts)
    truth = SCALE / np.exp(np.log(SCALE).mean())
    assert np.max(np.abs(np.log(estimate) - np.log(truth))) < 0.03
    assert abs(np.log(estimate).sum()) < 1e-12
    dof = np.asarray(counts) - 1.0
    naive = np.log(scatter / dof[:, None]).mean(axis=1)
    naive -= naive.mean()
    assert np.max(np.abs(naive - np.log(truth))) > 0.2
    np.testing.assert_allclose(digamma(dof / 2.0) - np.log(dof / 2.0),
                               [np.log(stats.chi2(d).rvs(400_000, random_state=1) / d).mean() for d in dof],
                               atol=0.01)  # fmt: skip


def test_plug_in_skips_features_constant_in_a_class_and_refuses_when_none_vary():
    rng = np.random.default_rng(1)
    scatter = rng.gamma(3.0, size=(3, 50))
    with_constant = np.concatenate([scatter, [[0.0], [1.0], [2.0]], [[np.inf], [1.0], [1.0]]], axis=1)
    expected = plug_in_class_scale(scatter, (4, 5, 6))
    np.testing.assert_array_equal(plug_in_class_scale(with_constant, (4, 5, 6)), expected)
    with pytest.raises(InputValueError, match="varies within every class"):
        plug_in_class_scale(np.zeros((3, 4)), (4, 5, 6))
    with pytest.raises(ValueError, match="G class sizes"):
        plug_in_class_scale(scatter, (4, 5))


# ----- the scaled adjustment factor (eq. P39) -----


def test_scaled_pool_and_the_infinite_alpha2():
    pool = class_variance_pool(4.0, 3, n_pool=64)
    np.testing.assert_array_equal(class_variance_pool(4.0, 3, n_pool=64, class_scale=SCALE), pool * SCALE)
    np.testing.assert_array_equal(class_variance_pool(np.inf, 3, class_scale=SCALE), SCALE[None, :])
    with pytest.raises(ValueError, match="one value per class"):
        class_variance_pool(4.0, 3, class_scale=[1.0, 2.0])
    with pytest.raises(ValueError, match="finite and > 0"):
        class_variance_pool(4.0, 3, class_scale=[1.0, 0.0, 2.0])


def test_a_common_scale_shifts_the_factor_by_its_log():
    """F is free of the data's units, so multiplying every ε_g by c is dividing r by c:
    log b(r; c ε) = log b(r/c; ε) (eq. P39), to rounding."""
    log_r = np.linspace(-6.0, 4.0, 11)
    plain = PerClassVarianceAdjustment.create(3.0, COUNTS, alpha2_x=4.0, n_pool=32)
    scaled = PerClassVarianceAdjustment.create(3.0, COUNTS, alpha2_x=4.0, n_pool=32, class_scale=[2.5, 2.5, 2.5])
    np.testing.assert_allclose(scaled.log_discard_probability_given_ratio(log_r),
                               plain.log_discard_probability_given_ratio(log_r - np.log(2.5)), rtol=1e-12)  # fmt: skip
    assert scaled.class_scale == (2.5, 2.5, 2.5) and plain.class_scale is None


def test_infinite_alpha2_with_unit_scales_is_the_pooled_factor():
    """α2_x = ∞ with all scales 1 is a pool of one point ε = 1: the pooled model's exact noncentral-F factor."""
    log_r = np.linspace(-5.0, 3.0, 9)
    ones = PerClassVarianceAdjustment.create(3.0, COUNTS, alpha2_x=np.inf, class_scale=[1.0, 1.0, 1.0])
    pooled = PerFeatureGaussianAdjustment.create(3.0, COUNTS)
    np.testing.assert_allclose(ones.log_discard_probability_given_ratio(log_r),
                               pooled.log_discard_probability_given_ratio(log_r), rtol=1e-9, atol=1e-13)  # fmt: skip


@pytest.mark.parametrize("log_r", [-2.0, 0.5])
def test_scaled_factor_against_simulated_f_statistics(log_r):
    """a(r; s) at α2_x = ∞ (class variances exactly s_g) against 200 000 simulated features: class means
    N(0, r), class g's values N(mean, s_g); P(F ≤ γ) within 4 standard errors."""
    threshold = 2.0
    factor = PerClassVarianceAdjustment.create(threshold, COUNTS, alpha2_x=np.inf, class_scale=SCALE)
    exact = np.exp(factor.log_discard_probability_given_ratio(np.array([log_r]))[0])
    rng = np.random.default_rng(2)
    m, n = 200_000, np.asarray(COUNTS)
    means = rng.standard_normal((m, 3)) * np.exp(0.5 * log_r)
    sample_means = means + rng.standard_normal((m, 3)) * np.sqrt(SCALE / n)
    ssw = (SCALE * rng.chisquare(n - 1, size=(m, 3))).sum(axis=1)
    grand = (sample_means * n).sum(axis=1) / n.sum()
    ssb = (n * (sample_means - grand[:, None]) ** 2).sum(axis=1)
    f = (ssb / 2.0) / (ssw / (n.sum() - 3))
    hits = (f <= threshold).mean()
    assert abs(hits - exact) < 4.0 * np.sqrt(exact * (1 - exact) / m), (hits, exact)


def test_grid_with_scales_uses_the_per_class_factor_at_infinity():
    grid = ClassVarianceGridAdjustment.create(3.0, COUNTS, alpha2_grid=(4.0, np.inf), n_pool=16, class_scale=SCALE)
    assert all(isinstance(member, PerClassVarianceAdjustment) for member in grid.adjustments)
    assert all(member.class_scale == tuple(SCALE) for member in grid.adjustments)
    plain = ClassVarianceGridAdjustment.create(3.0, COUNTS, alpha2_grid=(4.0, np.inf), n_pool=16)
    assert isinstance(plain.adjustments[1], PerFeatureGaussianAdjustment)


# ----- the chain (eq. P40) -----


def _statistics(seed=0, p=12):
    _, X, y = _simulate(np.random.default_rng(seed), SCALE, p=p)
    return class_statistics(X, y, 3)


def test_unit_scales_give_the_draws_of_the_model_without_them():
    counts, sums, squares = _statistics()
    schedule = Schedule(n_iter=150, burn_in=50, thin=5)
    prior = {**PRIOR, **ALPHA}
    for alpha2_x in (4.0, "learn"):
        kwargs = dict(counts=counts, sums=sums, squares=squares, prior={**prior, "alpha2_x": alpha2_x})
        plain = per_class_chain(np.random.default_rng(3), schedule, **kwargs)
        ones = per_class_chain(np.random.default_rng(3), schedule, **kwargs, class_scale=np.ones(3))
        for name, values in plain.posterior.items():
            np.testing.assert_array_equal(ones.posterior[name], values, err_msg=name)
        scaled = per_class_chain(np.random.default_rng(3), schedule, **kwargs, class_scale=SCALE)
        assert not np.array_equal(scaled.posterior["w_x"], plain.posterior["w_x"])


def test_chain_refuses_a_factor_of_other_scales():
    counts, sums, squares = _statistics()
    factor = PerClassVarianceAdjustment.create(3.0, COUNTS, alpha2_x=4.0, n_pool=8)
    with pytest.raises(ValueError, match="other class scales"):
        per_class_chain(np.random.default_rng(0), Schedule(n_iter=10, burn_in=0, thin=1), counts=counts, sums=sums,
                        squares=squares, prior={**PRIOR, **ALPHA}, adjustment=factor, n_discarded=5,
                        class_scale=SCALE)  # fmt: skip


def test_scaled_chain_at_infinite_alpha2_keeps_the_class_ratios():
    counts, sums, squares = _statistics(p=8)
    draws = per_class_chain(np.random.default_rng(0), Schedule(n_iter=100, burn_in=20, thin=4), counts=counts,
                            sums=sums, squares=squares, prior={**PRIOR, **ALPHA, "alpha2_x": np.inf},
                            class_scale=SCALE)  # fmt: skip
    ratio = draws.posterior["w_x"] / draws.posterior["v"][:, None, :]
    np.testing.assert_allclose(ratio, np.broadcast_to(SCALE[None, :, None], ratio.shape), rtol=1e-15)


def _scaled_sbc(n_replicates, seed, correct=False, k=None, p=8, n_iter=100, class_scale=SCALE):
    """Prior draws with the known scales → data → (top k by F) → one posterior draw of (log s_μ, log s_x,
    log v_0, log w_00) per data set (the last two when feature 0 is kept)."""
    rng = np.random.default_rng(seed)
    truth, draws = [], []
    for r in range(n_replicates):
        values, X, y = _simulate(rng, SCALE, p=p)
        model = BiasCorrectedGaussianClassifier(
            n_features_to_select=k, correct=correct, n_iter=n_iter, burn_in=n_iter - 1, thin=1, n_mc=32,
            random_state=r, variant=PerClassVariance(class_scale=class_scale, **PRIOR, **ALPHA),
        ).fit(X, y)  # fmt: skip
        trace = model.trace_
        last = [trace["log_s_mu"][0, -1], trace["log_s_x"][0, -1]]
        kept = np.flatnonzero(model.selected_features_ == 0)
        if kept.size:
            last += [np.log(trace["v"][0, -1, kept[0]]), np.log(trace["w_x"][0, -1, 0, kept[0]])]
        truth.append(values[: len(last)])
        draws.append(last)
    return truth, draws


def test_scaled_sampler_is_calibrated_without_selection():
    """All 8 features kept, known scales 3 : 1 : 1/3, 150 replicates: the last draws of log s_μ, log s_x, log v_0
    and log w_00 are prior-distributed (two-sample KS p > 0.01; measured 0.36, 0.98, 0.89, 0.95)."""
    truth, draws = map(np.array, _scaled_sbc(150, seed=4))
    for column in range(4):
        assert stats.ks_2samp(truth[:, column], draws[:, column]).pvalue > 0.01, column


def test_wrong_scales_miscalibrate_the_variance_levels():
    """The same data fitted with the scales reversed (1/3 : 1 : 3): the draws of log s_x are too small (measured:
    KS p = 1e-4, mean draw − truth −0.32; with the true scales above p = 0.98 and −0.02): the calibration check
    can fail.
    (Ignoring the scales, class_scale="equal", is not detected by this design: the geometric mean of 3 : 1 : 1/3
    is 1, and 7–12 cases per class outweigh the prior of a class variance: p = 0.63, mean w_00 shift −0.14.)"""
    truth, draws = map(np.array, _scaled_sbc(150, seed=4, class_scale=SCALE[::-1]))
    assert stats.ks_2samp(truth[:, 1], draws[:, 1]).pvalue < 0.01
    assert (draws[:, 1] - truth[:, 1]).mean() < -0.15


@pytest.mark.slow
def test_scaled_corrected_draws_are_distributed_as_the_prior():
    """With selection (top 5 of 40) and known scales, the corrected draws of log s_μ and log s_x are
    prior-distributed (100 replicates, pool of 32; KS p > 0.01; measured p = 0.28 and 0.91, and uncorrected
    1e-19 and 0.001)."""
    truth, draws = _scaled_sbc(100, seed=5, correct=True, k=5, p=40, n_iter=150)
    truth, draws = np.array([t[:2] for t in truth]), np.array([d[:2] for d in draws])
    for column in range(2):
        assert stats.ks_2samp(truth[:, column], draws[:, column]).pvalue > 0.01, column


# ----- the estimator -----


def _data(seed=0, p=60):
    _, X, y = _simulate(np.random.default_rng(seed), SCALE, p=p)
    return X, y


def test_plug_in_fit_equals_the_same_scales_given_and_pickles():
    X, y = _data()
    kwargs = dict(n_features_to_select=6, random_state=1, n_mc=16, **SHORT)
    plug_in = BiasCorrectedGaussianClassifier(variant=PerClassVariance(class_scale="plug-in"), **kwargs).fit(X, y)
    np.testing.assert_allclose(plug_in.class_scale_, plug_in_class_scale(_scatter(X, y), COUNTS), rtol=1e-12)
    given = BiasCorrectedGaussianClassifier(variant=PerClassVariance(class_scale=plug_in.class_scale_), **kwargs).fit(
        X, y
    )
    for name in ("mu", "w_x", "v", "log_s_mu", "log_s_x"):
        np.testing.assert_array_equal(given.trace_[name], plug_in.trace_[name])
    assert plug_in.adjustment_ is not None and plug_in.adjustment_.adjustments[0].class_scale == tuple(
        plug_in.class_scale_)
    equal = BiasCorrectedGaussianClassifier(variant="per-class", **kwargs).fit(X, y)
    np.testing.assert_array_equal(equal.class_scale_, np.ones(3))
    clone = pickle.loads(pickle.dumps(plug_in))
    np.testing.assert_array_equal(clone.predict_proba(X[:5]), plug_in.predict_proba(X[:5]))
    assert not hasattr(BiasCorrectedGaussianClassifier(3, **SHORT).fit(X, y), "class_scale_")


def test_plug_in_from_moments_equals_the_in_memory_fit():
    """partial_fit (per-class moments of all features) gives the plug-in scales of fit to rounding."""
    X, y = _data(seed=2)
    kwargs = dict(n_features_to_select=5, variant=PerClassVariance(class_scale="plug-in"), correct=False,
                  random_state=0, **SHORT)  # fmt: skip
    whole = BiasCorrectedGaussianClassifier(**kwargs).fit(X, y)
    batches = BiasCorrectedGaussianClassifier(**kwargs)
    order = np.random.default_rng(0).permutation(y.shape[0])
    for part in np.array_split(order, 3):
        batches.partial_fit(X[part], y[part], classes=np.arange(3))
    np.testing.assert_allclose(batches.class_scale_, whole.class_scale_, rtol=1e-10)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(class_scale="plugin"), "class_scale"),
        (dict(class_scale=[1.0, 2.0]), "class_scale has 2 values for 3 classes"),
        (dict(class_scale=[1.0, -2.0, 1.0]), "class_scale must be finite and > 0"),
        (dict(class_scale=[1.0, np.nan, 1.0]), "class_scale must be finite and > 0"),
        (dict(class_scale=["a", "b", "c"]), "class_scale must be numbers"),
    ],
)
def test_class_scale_is_validated(kwargs, message):
    X, y = _data()
    with pytest.raises(ValueError, match=message):
        BiasCorrectedGaussianClassifier(3, variant=PerClassVariance(**kwargs), **SHORT).fit(X, y)


@parametrize_with_checks([BiasCorrectedGaussianClassifier(variant=PerClassVariance(class_scale="plug-in"),
                                                          random_state=0, **SHORT)])  # fmt: skip
def test_plug_in_sklearn_compatible(estimator, check):
    check(estimator)
