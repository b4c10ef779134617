"""A new model written only from the public core (docs/architecture.md, "How a model plugs in").

The model: feature j of a case of class c is N(μ_cj, 1); μ_cj ~ N(0, s²); log s ~ N(0, 1); class
probabilities ~ Dirichlet(class_pseudo_count). Gibbs sampling: μ | s, data is conjugate Normal; log s | μ by
the core's slice sampler. Prediction averages the class-conditional densities over the draws.
"""

import math
from numbers import Real

import numba
import numpy as np
from scipy import integrate, stats
from scipy.special import logsumexp
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval
from sklearn.utils.estimator_checks import check_estimator

from hdbayes.base import MCMC_PARAMETER_CONSTRAINTS, BayesianClassifier, MCMCMixin
from hdbayes.mcmc import ChainDraws, slice_sample


@numba.njit
def _log_s_density(log_s, args):  # log p(log s | μ): N(0, 1) prior times ∏ N(μ | 0, s²)
    (mu,) = args
    return -0.5 * log_s**2 - mu.size * log_s - 0.5 * np.sum(mu**2) * math.exp(-2.0 * log_s)


@numba.njit
def _gibbs(counts, sums, n_iter, rng, out_mu, out_log_s):
    log_s, current = 0.0, 0.0
    mu = np.zeros(sums.shape)
    for it in range(n_iter):
        for c in range(sums.shape[0]):
            precision = counts[c] + math.exp(-2.0 * log_s)
            for j in range(sums.shape[1]):
                mu[c, j] = sums[c, j] / precision + rng.standard_normal() / math.sqrt(precision)
        current = _log_s_density(log_s, (mu,))
        log_s, current = slice_sample(log_s, current, _log_s_density, (mu,), 1.0, 50, -np.inf, np.inf, rng)
        out_mu[it], out_log_s[it] = mu, log_s


class ShrunkMeansClassifier(MCMCMixin, BayesianClassifier):
    _parameter_constraints = {"class_pseudo_count": [Interval(Real, 0, None, closed="neither")],
                              **MCMC_PARAMETER_CONSTRAINTS}  # fmt: skip

    def __init__(self, class_pseudo_count=1.0, *, n_iter=200, burn_in=50, thin=1, n_chains=1, n_jobs=None,
                 random_state=None, progress=None):  # fmt: skip
        self.class_pseudo_count, self.n_iter, self.burn_in, self.thin = class_pseudo_count, n_iter, burn_in, thin
        self.n_chains, self.n_jobs, self.random_state, self.progress = n_chains, n_jobs, random_state, progress

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        X, codes = self._validate_classification_data(X, y)
        Y = np.eye(self.classes_.size)[codes]
        counts, sums = Y.sum(axis=0), Y.T @ X

        def chain(rng, schedule, advance):
            mu, log_s = np.empty((schedule.n_iter,) + sums.shape), np.empty(schedule.n_iter)
            _gibbs(counts, sums, schedule.n_iter, rng, mu, log_s)
            advance(schedule.n_iter)
            keep = schedule.saved_iterations
            return ChainDraws({"mu": mu[keep], "log_s": log_s[keep]}, warmup={"log_s": log_s[: schedule.burn_in]})

        self._run_chains(chain, desc="shrunk means", trace_options={"monitored": ("log_s",)})
        self.class_log_prior_ = np.log((counts + self.class_pseudo_count) / (counts.sum() + self.class_pseudo_count
                                                                            * counts.size))  # fmt: skip
        return self

    def _joint_log_likelihood(self, X):
        mu = self.trace_.flat("mu")  # (draws, classes, features)
        log_densities = -0.5 * ((X[None, :, None, :] - mu[:, None]) ** 2).sum(axis=-1)  # (draws, cases, classes)
        return logsumexp(log_densities, axis=0) - np.log(mu.shape[0]) + self.class_log_prior_


# -- the tests ---------------------------------------------------------------------------------


def test_the_plugged_in_model_is_a_full_hdbayes_estimator():
    check_estimator(ShrunkMeansClassifier(n_iter=40, burn_in=10))
    X = np.random.default_rng(0).normal(size=(30, 3))
    y = np.repeat([0, 1], 15)
    model = ShrunkMeansClassifier(n_chains=2, random_state=1).fit(X, y)
    idata = model.to_inference_data()
    assert idata.posterior["mu"].dims[:2] == ("chain", "draw") and idata.posterior.sizes["draw"] == 150
    assert idata.warmup_posterior.sizes["draw"] == 50
    assert set(model.mcmc_summary()) == {"log_s"}
    np.testing.assert_allclose(model.predict_proba(X).sum(axis=1), 1.0)


def test_the_plugged_in_sampler_matches_quadrature():
    """Posterior mean of log s against the exact marginal: x̄_c ~ N(0, s² + 1/n_c) with μ integrated out.
    The margin 0.05 is about 4 Monte Carlo standard errors of 8 chains × 1,500 draws (autocorrelated)."""
    rng = np.random.default_rng(3)
    X = np.concatenate([rng.normal(0.8, 1, (10, 1)), rng.normal(-0.5, 1, (12, 1))])
    y = np.repeat([0, 1], [10, 12])
    means, counts = np.array([X[:10, 0].mean(), X[10:, 0].mean()]), np.array([10, 12])

    def log_posterior(log_s):
        return stats.norm.logpdf(log_s) + stats.norm.logpdf(means, 0, np.sqrt(np.exp(2 * log_s) + 1 / counts)).sum()

    mass = integrate.quad(lambda t: np.exp(log_posterior(t)), -8, 5, points=[0])[0]
    exact = integrate.quad(lambda t: t * np.exp(log_posterior(t)), -8, 5, points=[0])[0] / mass
    model = ShrunkMeansClassifier(n_iter=1600, burn_in=100, n_chains=8, random_state=0).fit(X, y)
    assert abs(model.trace_["log_s"].mean() - exact) < 0.05
