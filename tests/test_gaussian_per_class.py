"""The Gaussian classifier with per-class variances (class_variance="per-class"; docs/gaussian.md eq. P18–P19, P31–P34):
the v_j update, simulation-based calibration, predictions against a dense computation, estimator API."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp
from sklearn.utils.estimator_checks import parametrize_with_checks

from hdbayes import BiasCorrectedGaussianClassifier
from hdbayes.exceptions import InputValueError
from hdbayes.mcmc import Schedule
from hdbayes.selection_bias.gaussian._scales_kernel import _draw_log_v
from hdbayes.selection_bias.gaussian.per_class import PerClassVariance, PerClassVarianceAdjustment, per_class_chain
from hdbayes.selection_bias.gaussian.per_feature import per_feature_chain
from hdbayes.statistics.gaussian_moments import class_statistics

# proper, moderate priors: the simulation-based checks draw parameters from them (as tests/test_gaussian.py)
PRIOR = dict(alpha_x=6.0, w_x=1.0, alpha_mu=6.0, w_mu=0.25, alpha_nu=6.0, w_nu=0.25)
ALPHA = dict(alpha1_mu=3.0, alpha1_x=10.0, alpha2_x=4.0)
SHORT = dict(n_iter=200, burn_in=50, thin=5)


# ----- the v_j conditional (eq. P32) -----


@pytest.mark.parametrize("lam, chi, psi", [(-2.0, 10.0, 12.0), (13.0, 3.0, 40.0), (0.5, 0.2, 0.05)])
def test_log_v_update_leaves_the_generalised_inverse_gaussian_invariant(lam, chi, psi):
    """v ∝ v^{λ−1} exp(−(χ/v + ψv)/2) is scipy's geninvgauss(p = λ, b = √(χψ), scale = √(χ/ψ)). Started from
    exact draws, one slice update must return exact draws (invariance); started from a fixed bad point, 15
    updates must reach the law (the pairs of replicates are independent, so KS applies)."""
    law = stats.geninvgauss(lam, np.sqrt(chi * psi), scale=np.sqrt(chi / psi))
    rng = np.random.default_rng(1)
    start = law.rvs(size=1500, random_state=rng)
    after_one = np.exp([_draw_log_v(np.log(v), lam, chi, psi, rng) for v in start])
    assert stats.kstest(after_one, law.cdf).pvalue > 0.001
    assert np.corrcoef(start, after_one)[0, 1] < 0.9  # the update moves
    eta = np.full(1500, np.log(law.mean()) + 4.0)
    for _ in range(15):
        eta = np.array([_draw_log_v(e, lam, chi, psi, rng) for e in eta])
    assert stats.kstest(np.exp(eta), law.cdf).pvalue > 0.001


def test_log_v_update_detects_a_wrong_law():
    """The invariance test above can fail: the draws are not those of λ − 1 (the density without the Jacobian)."""
    lam, chi, psi = -2.0, 10.0, 12.0
    wrong = stats.geninvgauss(lam - 1.0, np.sqrt(chi * psi), scale=np.sqrt(chi / psi))
    rng = np.random.default_rng(1)
    start = stats.geninvgauss(lam, np.sqrt(chi * psi), scale=np.sqrt(chi / psi)).rvs(size=1500, random_state=rng)
    after_one = np.exp([_draw_log_v(np.log(v), lam, chi, psi, rng) for v in start])
    assert stats.kstest(after_one, wrong.cdf).pvalue < 1e-6


# ----- the chain -----


def _data(seed=0, n_per_class=(8, 10, 12), p=6, scales=(1.0, 0.5, 2.0)):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(len(n_per_class)), n_per_class)
    means = rng.normal(0.0, 1.0, size=(len(n_per_class), p))
    X = means[y] + rng.standard_normal((y.shape[0], p)) * np.asarray(scales)[y, None]
    return X, y


def test_per_class_chain_shapes_and_the_pooled_limit():
    """The chain saves (S, G, k) class variances and (S, k) levels; class 2 (sd 2) gets larger variances than
    class 1 (sd 0.5). As α2_x → ∞ every class variance equals v_j and the chain's s_x matches the pooled
    per-feature chain's in distribution (means of log s_x within 0.15, measured difference 0.02)."""
    X, y = _data(p=30)
    counts, sums, squares = class_statistics(X, y, 3)
    prior = {**PRIOR, **ALPHA}
    schedule = Schedule(n_iter=3000, burn_in=500, thin=5)
    draws = per_class_chain(np.random.default_rng(0), schedule, counts=counts, sums=sums, squares=squares,
                            prior=prior)  # fmt: skip
    assert draws.posterior["w_x"].shape == (500, 3, 30) and draws.posterior["v"].shape == (500, 30)
    log_w = np.log(draws.posterior["w_x"]).mean(axis=(0, 2))
    assert log_w[2] > log_w[0] > log_w[1]
    assert log_w[2] - log_w[1] > 1.2  # true difference log 16 = 2.77, shrunk by the prior: measured 1.88
    limit = per_class_chain(np.random.default_rng(1), schedule, counts=counts, sums=sums, squares=squares,
                            prior={**prior, "alpha2_x": 1e7})  # fmt: skip
    ratio = limit.posterior["w_x"] / limit.posterior["v"][:, None, :]
    assert np.max(np.abs(np.log(ratio))) < 0.01
    pooled = per_feature_chain(np.random.default_rng(1), schedule, counts=counts, sums=sums, squares=squares,
                               prior=prior)  # fmt: skip
    assert abs(limit.posterior["log_s_x"].mean() - pooled.posterior["log_s_x"].mean()) < 0.15


# ----- simulation-based calibration (as tests/test_gaussian.py's per-feature SBC) -----


def _draw_from_per_class_prior(rng, n_classes=3, n_per_class=10, p=40):
    """(log s_μ, log s_x, log v_0, log w_00, X, y) with every parameter drawn from the prior (eq. P18, P1–P4)."""
    s_mu = 1.0 / rng.gamma(PRIOR["alpha_mu"] / 2.0, 2.0 / (PRIOR["alpha_mu"] * PRIOR["w_mu"]))
    s_x = 1.0 / rng.gamma(PRIOR["alpha_x"] / 2.0, 2.0 / (PRIOR["alpha_x"] * PRIOR["w_x"]))
    tau_nu = rng.gamma(PRIOR["alpha_nu"] / 2.0, 2.0 / (PRIOR["alpha_nu"] * PRIOR["w_nu"]))
    w_mu = ALPHA["alpha1_mu"] * s_mu / rng.chisquare(ALPHA["alpha1_mu"], size=p)
    v = ALPHA["alpha1_x"] * s_x / rng.chisquare(ALPHA["alpha1_x"], size=p)
    w_x = ALPHA["alpha2_x"] * v / rng.chisquare(ALPHA["alpha2_x"], size=(n_classes, p))
    nu = rng.normal(0.0, 1.0 / np.sqrt(tau_nu), size=p)
    mu = nu + rng.standard_normal((n_classes, p)) * np.sqrt(w_mu)
    y = np.repeat(np.arange(n_classes), n_per_class)
    X = mu[y] + rng.standard_normal((y.shape[0], p)) * np.sqrt(w_x[y])
    return np.log([s_mu, s_x, v[0], w_x[0, 0]]), X, y


def _per_class_sbc(n_replicates, seed, correct=False, k=None, p=8, n_iter=100, n_mc=64):
    """Prior draws → data → (the top k of p by F) → one posterior draw of (log s_μ, log s_x, log v_j, log w_0j)
    per data set, j the first original feature when it is kept (all kept when k is None)."""
    rng = np.random.default_rng(seed)
    truth, draws = [], []
    for r in range(n_replicates):
        values, X, y = _draw_from_per_class_prior(rng, p=p)
        model = BiasCorrectedGaussianClassifier(
            n_features_to_select=k, correct=correct, variant=PerClassVariance(**PRIOR, **ALPHA),
            n_iter=n_iter, burn_in=n_iter - 1, thin=1, n_mc=n_mc, random_state=r,
        ).fit(X, y)  # fmt: skip
        kept = np.flatnonzero(model.selected_features_ == 0)
        j = int(kept[0]) if kept.size else None
        trace = model.trace_
        last = [trace["log_s_mu"][0, -1], trace["log_s_x"][0, -1]]
        if j is not None:
            last += [np.log(trace["v"][0, -1, j]), np.log(trace["w_x"][0, -1, 0, j])]
        truth.append(values[: len(last)] if j is not None else values[:2])
        draws.append(last)
    return truth, draws


def test_per_class_sampler_is_calibrated_without_selection():
    """All p = 8 features kept, 150 replicates: the draws of log s_μ, log s_x, log v_0 and log w_00 after 100
    iterations are prior-distributed (two-sample KS; measured p = see docs/gaussian.md)."""
    truth, draws = _per_class_sbc(150, seed=2)
    truth, draws = np.array(truth), np.array(draws)
    for column in range(4):
        assert stats.ks_2samp(truth[:, column], draws[:, column]).pvalue > 0.01, column




@pytest.mark.slow
def test_per_class_corrected_posterior_draws_are_distributed_as_the_prior():
    """With selection (the top 5 of 40 by F) the corrected draws of log s_μ and log s_x are prior-distributed
    (a pool of 64 class-variance ratios for the factor; measured with 200 replicates: KS p = 0.87 and 0.87,
    mean log s_μ −1.16 against the true −1.18). Slow: each fit computes its own factor (about 0.4 s)."""
    truth, corrected = _per_class_sbc(100, seed=0, correct=True, k=5, p=40, n_iter=150)
    truth, corrected = np.array([t[:2] for t in truth]), np.array([d[:2] for d in corrected])
    for column in range(2):
        assert stats.ks_2samp(truth[:, column], corrected[:, column]).pvalue > 0.01, column


def test_per_class_uncorrected_posterior_draws_are_not_calibrated_after_selection():
    """The same without the correction fails: selection makes the kept features' class means look spread
    (measured with 200 replicates: KS p = 1e-35 for log s_μ, mean draw 0.01 against the true −1.21)."""
    truth, uncorrected = _per_class_sbc(100, seed=1, correct=False, k=5, p=40, n_iter=150)
    truth, uncorrected = np.array([t[:2] for t in truth]), np.array([d[:2] for d in uncorrected])
    assert stats.ks_2samp(truth[:, 0], uncorrected[:, 0]).pvalue < 1e-6
    assert uncorrected[:, 0].mean() > truth[:, 0].mean() + 0.5


def test_per_class_correction_uses_its_factor_and_lowers_the_spread():
    """Corrected, the fit builds the per-class factor (pool size n_mc rounded up to a power of 2) and conditions on
    the discarded features' small F: log s_μ moves down, by 1.5 here (measured; true log s_μ −1.27)."""
    values, X, y = _draw_from_per_class_prior(np.random.default_rng(7), p=60)
    kwargs = dict(n_features_to_select=5, variant=PerClassVariance(**PRIOR, **ALPHA), n_iter=400, burn_in=100,
                  thin=2, n_mc=20, random_state=0)  # fmt: skip
    corrected = BiasCorrectedGaussianClassifier(**kwargs).fit(X, y)
    uncorrected = BiasCorrectedGaussianClassifier(**kwargs, correct=False).fit(X, y)
    assert isinstance(corrected.adjustment_, PerClassVarianceAdjustment) and uncorrected.adjustment_ is None
    assert corrected.adjustment_.epsilon_pool.shape == (32, 3)
    assert corrected.adjustment_.alpha2_x == ALPHA["alpha2_x"]
    assert corrected.trace_["log_s_mu"].mean() < uncorrected.trace_["log_s_mu"].mean() - 1.0
    assert corrected.acceptance_rate_[0] > 0.1

# ----- predictions -----


def test_rao_blackwell_predictions_against_a_dense_computation():
    """predict_proba on a tiny case equals the dense Rao–Blackwellised formula (eq. P34) from the trace:
    per draw, x*_j | g ~ N(m_gj, w_gj + 1/P_gj), P_gj = 1/w^μ_j + n_g/w_gj, m_gj = (ν_j/w^μ_j + S_gj/w_gj)/P_gj,
    averaged over the draws, times the Pólya-urn class predictive."""
    X, y = _data(p=4)
    model = BiasCorrectedGaussianClassifier(variant="per-class", correct=False, random_state=0, **SHORT).fit(X, y)
    test = np.random.default_rng(9).normal(size=(5, 4))
    kept = model.selected_features_  # the trace's feature order
    w_x, w_mu, nu = model.trace_.flat("w_x"), model.trace_.flat("w_mu"), model.trace_.flat("nu")
    counts = np.bincount(y).astype(float)
    sums = np.array([X[y == g][:, kept].sum(axis=0) for g in range(3)])
    log_prior = np.log((counts + 1.0) / (counts.sum() + 3.0))
    expected = np.empty((5, 3))
    for i in range(5):
        for g in range(3):
            per_draw = []
            for s in range(w_x.shape[0]):
                precision = 1.0 / w_mu[s] + counts[g] / w_x[s, g]
                mean = (nu[s] / w_mu[s] + sums[g] / w_x[s, g]) / precision
                per_draw.append(stats.norm.logpdf(test[i, kept], mean, np.sqrt(w_x[s, g] + 1.0 / precision)).sum())
            expected[i, g] = logsumexp(per_draw) - np.log(len(per_draw)) + log_prior[g]
    expected = np.exp(expected - logsumexp(expected, axis=1, keepdims=True))
    np.testing.assert_allclose(model.predict_proba(test), expected, rtol=1e-9)
    samples = model.set_params(predictive="samples").predict_proba(test)
    mu = model.trace_.flat("mu")
    dense = np.empty((5, 3))
    for i in range(5):
        for g in range(3):
            per_draw = stats.norm.logpdf(test[i, kept], mu[:, g], np.sqrt(w_x[:, g])).sum(axis=1)
            dense[i, g] = logsumexp(per_draw) + log_prior[g]
    np.testing.assert_allclose(samples, np.exp(dense - logsumexp(dense, axis=1, keepdims=True)), rtol=1e-9)


def test_per_class_variances_separate_a_narrow_class():
    """A case just outside a narrow class's range, on the side of the wide class, belongs to the wide class:
    the per-class model says so, the pooled model (one variance per feature) does not."""
    rng = np.random.default_rng(3)
    wide = rng.normal(0.0, 3.0, size=(30, 5))
    narrow = rng.normal(4.0, 0.3, size=(30, 5))
    X, y = np.vstack([wide, narrow]), np.repeat([0, 1], 30)
    case = np.full((1, 5), 2.6)  # 4.7 narrow sds below the narrow mean, 0.87 wide sds above the wide one
    kwargs = dict(correct=False, random_state=0, n_iter=600, burn_in=100, thin=2)
    per_class = BiasCorrectedGaussianClassifier(variant="per-class", **kwargs).fit(X, y)
    pooled = BiasCorrectedGaussianClassifier(variant="per-feature", **kwargs).fit(X, y)
    assert per_class.predict_proba(case)[0, 0] > 0.99
    assert pooled.predict_proba(case)[0, 0] < 0.25  # nearer the narrow mean in pooled sds


# ----- estimator API -----


def test_reproducible_independent_of_n_jobs_and_picklable():
    X, y = _data(p=40, seed=4)
    kwargs = dict(n_features_to_select=6, variant="per-class", correct=False, n_chains=2, random_state=5,
                  **SHORT)  # fmt: skip
    one = BiasCorrectedGaussianClassifier(**kwargs, n_jobs=1).fit(X, y)
    two = BiasCorrectedGaussianClassifier(**kwargs, n_jobs=2).fit(X, y)
    for name in ("mu", "w_x", "v", "w_mu", "nu", "log_s_mu", "log_s_x", "log_tau_nu"):
        np.testing.assert_array_equal(one.trace_[name], two.trace_[name])
    assert one.trace_["w_x"].shape == (2, 30, 3, 6) and one.trace_["v"].shape == (2, 30, 6)
    assert not np.array_equal(one.trace_["log_s_x"][0], one.trace_["log_s_x"][1])
    assert sorted(one.mcmc_summary()) == ["log_s_mu", "log_s_x", "log_tau_nu"]
    clone = pickle.loads(pickle.dumps(one))
    np.testing.assert_array_equal(clone.predict_proba(X[:7]), one.predict_proba(X[:7]))
    other = BiasCorrectedGaussianClassifier(**{**kwargs, "random_state": 6}).fit(X, y)
    assert not np.array_equal(other.trace_["v"], one.trace_["v"])
    idata = one.to_inference_data()
    assert idata.posterior["w_x"].dims == ("chain", "draw", "class", "feature")


@pytest.mark.parametrize("kwargs", [dict(variant="per class"), dict(variant=PerClassVariance(alpha2_x=0.0))])
def test_parameter_constraints(kwargs):
    X, y = _data()
    with pytest.raises(ValueError, match="variant|alpha2_x"):
        BiasCorrectedGaussianClassifier(**kwargs, **SHORT).fit(X, y)



def test_per_class_correction_refuses_a_zero_threshold():
    """k reaching the constant features (F = 0) leaves γ = 0, where the per-class factor is not defined: an input
    error that says what to do (the pooled model uses the γ → 0⁺ limit)."""
    X, y = _data(p=8)
    X[:, 5:] = 1.0
    kwargs = dict(n_features_to_select=6, variant="per-class", **SHORT)
    with pytest.warns(UserWarning, match="F statistic 0"), pytest.raises(InputValueError, match="keep fewer features"):
        BiasCorrectedGaussianClassifier(**kwargs).fit(X, y)
    with pytest.warns(UserWarning, match="F statistic 0"):
        assert BiasCorrectedGaussianClassifier(**kwargs, correct=False).fit(X, y).threshold_ == 0.0

@parametrize_with_checks([BiasCorrectedGaussianClassifier(variant="per-class", random_state=0, **SHORT)])
def test_per_class_sklearn_compatible(estimator, check):
    check(estimator)
