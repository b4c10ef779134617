"""The Gaussian classifier with per-class variances (class_variance="per-class"; docs/gaussian.md eq. P18–P23):
the v_j update, simulation-based calibration, predictions against a dense computation, estimator API."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from hdbayes.mcmc import Schedule
from hdbayes.selection_bias.gaussian import _draw_log_v, class_statistics, per_class_chain, per_feature_chain

# proper, moderate priors: the simulation-based checks draw parameters from them (as tests/test_gaussian.py)
PRIOR = dict(alpha_x=6.0, w_x=1.0, alpha_mu=6.0, w_mu=0.25, alpha_nu=6.0, w_nu=0.25)
ALPHA = dict(alpha1_mu=3.0, alpha1_x=10.0, alpha2_x=4.0)


# ----- the v_j conditional (eq. P21) -----


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
