"""Conjugate models (Murphy §3.3–3.4, §3.5.5): exact values T1–T3, T8 (docs/discrete.md) and scipy oracles."""

from __future__ import annotations

import itertools
import pickle
from fractions import Fraction as F

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from hdbayes.discrete.conjugate import BetaBinomial, DirichletMultinomial, dirichlet_multinomial_log_pmf

T1_PMF = [F(3059, 21576), F(10925, 43152), F(10925, 43152), F(76475, 420732), F(21413, 210366), F(21413, 467480),
          F(4655, 280488), F(665, 140244), F(95, 93496), F(19, 129456), F(7, 647280)]  # fmt: skip


# --- T1: Beta(2, 2), N1 = 3, N0 = 17 ------------------------------------------------------------


@pytest.fixture
def t1_posterior():
    return BetaBinomial(F(2), F(2)).update(3, 17)


def test_t1_posterior_summaries_exact(t1_posterior):
    assert t1_posterior == BetaBinomial(5, 19)
    assert t1_posterior.mean() == F(5, 24)
    assert t1_posterior.mode() == F(2, 11)
    assert BetaBinomial.mle(F(3), 17) == F(3, 20)
    assert t1_posterior.var() == F(19, 2880)
    mle = F(3, 20)
    assert mle * (1 - mle) / 20 == F(51, 8000)  # the large-N approximation of the variance (Murphy §3.3.3)
    assert t1_posterior.predictive_proba() == F(5, 24)


def test_t1_convex_combination():
    prior = BetaBinomial(F(2), F(2))
    lam = prior.shrinkage_weight(20)
    assert lam == F(1, 6)
    assert lam * prior.mean() + (1 - lam) * BetaBinomial.mle(F(3), 17) == F(5, 24)


def test_t1_predictive_pmf_m10_exact_and_scipy(t1_posterior):
    k = np.arange(11)
    pmf = t1_posterior.predictive_pmf(k, 10)
    np.testing.assert_allclose(pmf, [float(v) for v in T1_PMF], rtol=1e-12)
    np.testing.assert_allclose(pmf, stats.betabinom.pmf(k, 10, 5, 19), rtol=1e-12)
    assert sum(T1_PMF) == 1
    assert t1_posterior.predictive_mean(10) == F(25, 12)
    assert t1_posterior.predictive_var(10) == F(323, 144)
    assert float(pmf @ k) == pytest.approx(25 / 12, rel=1e-12)


def test_t1_plugin_has_lighter_tails(t1_posterior):
    k = np.arange(11)
    plugin = t1_posterior.plugin_pmf(k, 10, estimate="map")
    np.testing.assert_allclose(plugin[:3], [0.13443063, 0.29873474, 0.29873474], rtol=1e-7)
    assert plugin[-1] == pytest.approx(3.948e-8, rel=1e-3)
    assert t1_posterior.predictive_pmf(k, 10)[6:].sum() > plugin[6:].sum()


def test_t1_sequential_equals_batch():
    sequential = BetaBinomial(2, 2).update(1, 7).update(2, 10)
    assert sequential == BetaBinomial(2, 2).update(3, 17) == BetaBinomial(5, 19)
    assert BetaBinomial(2, 2).update_from([1, 0, 0, 1]) == BetaBinomial(4, 4)


# --- T2: black swan ------------------------------------------------------------------------------


def test_t2_black_swan_and_laplace_rule():
    assert BetaBinomial.mle(0, 3) == 0
    laplace = BetaBinomial(F(1), F(1)).update(0, 3).predictive_proba()
    assert laplace == F(1, 5)
    assert laplace != F(1, 4)  # the seed's misprinted (N1 + 1)/(N0 + N1 + 1)


# --- T3: Dirichlet-multinomial -------------------------------------------------------------------


def test_t3_dirichlet_multinomial():
    prior = DirichletMultinomial([2, 2, 2])
    posterior = prior.update([3, 0, 1])
    np.testing.assert_array_equal(posterior.alpha, [5, 2, 3])
    np.testing.assert_allclose(posterior.mean(), [1 / 2, 1 / 5, 3 / 10], rtol=1e-12)
    np.testing.assert_allclose(posterior.predictive_proba(), posterior.mean(), rtol=0)
    np.testing.assert_allclose(posterior.mode(), [4 / 7, 1 / 7, 2 / 7], rtol=1e-12)
    np.testing.assert_allclose(DirichletMultinomial.mle([3, 0, 1]), [3 / 4, 0, 1 / 4], rtol=1e-12)
    np.testing.assert_allclose(posterior.var(), [1 / 44, 4 / 275, 21 / 1100], rtol=1e-12)
    np.testing.assert_allclose(posterior.var(), posterior.to_scipy().var(), rtol=1e-12)
    assert prior.update_from(np.array([0, 0, 2, 0])) == posterior


def test_credible_intervals_match_scipy():
    lo, hi = BetaBinomial(5, 19).credible_interval(0.9)
    assert (lo, hi) == pytest.approx(stats.beta(5, 19).ppf([0.05, 0.95]), rel=1e-12)
    intervals = DirichletMultinomial([5, 2, 3]).credible_intervals(0.95)
    np.testing.assert_allclose(intervals[1], stats.beta(2, 8).ppf([0.025, 0.975]), rtol=1e-12)


def test_marginal_likelihoods():
    prior = BetaBinomial(2.0, 3.0)
    # sequence: ∫ θ^1 (1-θ)^2 Beta(θ|2,3) dθ = B(3, 5)/B(2, 3)
    expected = float(F(1, 105) / F(1, 12))
    assert np.exp(prior.log_marginal_likelihood(1, 2)) == pytest.approx(expected, rel=1e-12)
    assert np.exp(prior.log_marginal_likelihood(1, 2, kind="counts")) == pytest.approx(
        stats.betabinom.pmf(1, 3, 2, 3), rel=1e-12
    )
    dm = DirichletMultinomial([2.0, 3.0])
    assert dm.log_marginal_likelihood([1, 2]) == pytest.approx(prior.log_marginal_likelihood(1, 2), rel=1e-12)
    assert dm.log_marginal_likelihood([1, 2], kind="counts") == pytest.approx(
        stats.dirichlet_multinomial.logpmf([1, 2], [2.0, 3.0], 3), rel=1e-12
    )


# --- Beta mode rules (this library's, docs/discrete.md, "Conjugate models") -----------------------------


def test_beta_mode_boundaries():
    assert BetaBinomial(0.5, 2).mode() == 0
    assert BetaBinomial(2, 0.5).mode() == 1
    with pytest.raises(ValueError, match="no unique mode"):
        BetaBinomial(1, 1).mode()
    with pytest.raises(ValueError, match="no unique mode"):
        BetaBinomial(0.5, 0.5).mode()
    with pytest.raises(ValueError, match="no unique interior mode"):
        DirichletMultinomial([1, 1, 1]).mode()


# --- T8: DCM / Pólya ---------------------------------------------------------------------------------


def test_t8_dcm_values():
    assert DirichletMultinomial([1, 1]).predictive_pmf([2, 0]) == pytest.approx(1 / 3, rel=1e-12)
    assert stats.binom.pmf(2, 2, 0.5) == pytest.approx(1 / 4)
    # Pólya urn: colours (1, 1, 2) with α = (1, 1): 1/2 · 2/3 · 1/4 = 1/12; three orders → 1/4
    assert DirichletMultinomial([1, 1]).predictive_pmf([2, 1]) == pytest.approx(3 * (1 / 2) * (2 / 3) * (1 / 4))
    assert DirichletMultinomial([3, 4, 5]).predictive_pmf([1, 2, 3]) == pytest.approx(75 / 884, rel=1e-12)
    bursty = [DirichletMultinomial([s, s]).predictive_pmf([2, 0]) for s in (0.1, 1, 10, 100)]
    np.testing.assert_allclose(bursty, [11 / 24, 1 / 3, 0.261905, 0.251244], rtol=2e-6)
    assert np.all(np.diff(bursty) < 0)
    assert DirichletMultinomial([5, 19]).predictive_pmf([3, 7]) == pytest.approx(76475 / 420732, rel=1e-12)


@pytest.mark.parametrize(("n", "alpha"), [(4, [0.3, 1.0, 2.5]), (6, [0.05, 0.2, 7.0, 1.0])])
def test_dcm_sums_to_one_over_compositions(n, alpha):
    K = len(alpha)
    compositions = np.array([c for c in itertools.product(range(n + 1), repeat=K) if sum(c) == n])
    total = np.exp(dirichlet_multinomial_log_pmf(compositions, alpha)).sum()
    assert total == pytest.approx(1.0, rel=1e-12)


def test_dcm_matches_scipy_dense_sparse_and_many_alphas():
    rng = np.random.default_rng(3)
    X = rng.integers(0, 25, size=(30, 6)) * (rng.random((30, 6)) < 0.6)  # counts above the layer cut-off too
    X[0] = 0  # an empty document: DCM = 1
    alpha = rng.uniform(0.05, 4.0, size=(3, 6))
    expected = np.array([[stats.dirichlet_multinomial.logpmf(x, a, x.sum()) if x.sum() else 0.0 for a in alpha]
                         for x in X])  # fmt: skip
    np.testing.assert_allclose(dirichlet_multinomial_log_pmf(X, alpha), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dirichlet_multinomial_log_pmf(sp.csr_matrix(X), alpha), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dirichlet_multinomial_log_pmf(sp.csc_matrix(X), alpha[1]), expected[:, 1], rtol=1e-12,
                               atol=1e-12)  # fmt: skip
    without = dirichlet_multinomial_log_pmf(X, alpha, include_coefficient=False)
    coefficient = stats.multinomial.logpmf(X, X.sum(axis=1), np.full(6, 1 / 6)) + X.sum(axis=1) * np.log(6)
    np.testing.assert_allclose(expected - without, np.repeat(coefficient[:, None], 3, axis=1), atol=1e-10)


def test_dcm_bad_input():
    with pytest.raises(ValueError, match="non-negative counts"):
        dirichlet_multinomial_log_pmf([[1, -1]], [1.0, 1.0])
    with pytest.raises(ValueError, match="integer counts"):
        dirichlet_multinomial_log_pmf([[1.5, 1]], [1.0, 1.0])
    with pytest.raises(ValueError, match="NaN"):
        dirichlet_multinomial_log_pmf([[np.nan, 1]], [1.0, 1.0])
    with pytest.raises(ValueError, match="columns"):
        dirichlet_multinomial_log_pmf([[1, 1, 1]], [1.0, 1.0])
    with pytest.raises(ValueError, match="concentrations > 0"):
        dirichlet_multinomial_log_pmf([[1, 1]], [0.0, 1.0])


def test_conjugate_bad_parameters():
    with pytest.raises(ValueError, match="a must be a finite number > 0"):
        BetaBinomial(0, 1)
    with pytest.raises(TypeError, match="b must be a real number"):
        BetaBinomial(1, "2")
    with pytest.raises(ValueError, match="n1 must be a finite count"):
        BetaBinomial().update(-1, 2)
    with pytest.raises(ValueError, match="0/1"):
        BetaBinomial().update_from([0, 2])
    with pytest.raises(ValueError, match="future trials"):
        BetaBinomial().predictive_pmf(0, -1)
    with pytest.raises(ValueError, match="N = 0"):
        BetaBinomial.mle(0, 0)
    with pytest.raises(ValueError, match="K >= 2"):
        DirichletMultinomial([1.0])
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        DirichletMultinomial([1, 1, 1]).update([1, 2])
    with pytest.raises(ValueError, match="kind"):
        BetaBinomial().log_marginal_likelihood(1, 1, kind="nope")


def test_pickle_and_immutability():
    model = DirichletMultinomial([1.0, 2.0])
    assert pickle.loads(pickle.dumps(model)) == model
    assert pickle.loads(pickle.dumps(BetaBinomial(2, 3))) == BetaBinomial(2, 3)
    with pytest.raises(ValueError):
        model.alpha[0] = 5.0


def test_dcm_huge_alpha_is_the_multinomial_without_cancellation():
    # α = s·p with s → ∞ gives Mu(x | N, p); the sums of logarithms stay exact where
    # log Γ(x + α) − log Γ(α) would lose every digit
    p = np.array([0.2, 0.3, 0.5])
    X = np.array([[3, 0, 12], [1, 1, 1], [0, 25, 0]])
    expected = stats.multinomial.logpmf(X, X.sum(axis=1), p)
    np.testing.assert_allclose(dirichlet_multinomial_log_pmf(X, 1e12 * p), expected, rtol=1e-9)
    np.testing.assert_allclose(dirichlet_multinomial_log_pmf(X, 1e3 * p), expected, rtol=0.05)
