"""Collapsed Gibbs sampler for the group spike-and-slab model (docs/spike_slab.md, "Exact references") against
exact enumeration."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from scipy.special import logit
from scipy.stats import multivariate_normal
from sklearn.utils.estimator_checks import parametrize_with_checks

from hdbayes.spike_slab import GroupSpikeSlabGibbs, exact_posterior
from hdbayes.spike_slab.gibbs import collapsed_group_sweep


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(0)
    n, d = 20, 12
    X = rng.normal(size=(n, d))
    w = np.zeros(d)
    w[:3] = [1.0, -0.5, 0.3]
    w[6:9] = [0.2, 0.1, -0.25]
    y = X @ w + 0.5 * rng.normal(size=n)
    return X - X.mean(0), y - y.mean()


def test_conditional_log_odds_identity():
    """The Cholesky form of the collapsed conditional equals the ratio of two Gaussian marginals."""
    rng = np.random.default_rng(1)
    n, noise, vs = 9, 0.3, np.array([1.5, 0.7])
    X, y = rng.normal(size=(n, 5)), rng.normal(size=n)
    starts, ends = np.array([0, 3]), np.array([3, 5])
    for z_other in (False, True):
        z = np.array([True, z_other])
        active = np.concatenate([np.arange(3), np.arange(3, 5) if z_other else np.zeros(0, int)]).astype(int)
        scale = np.repeat(vs, [3, 2])[active]
        C = noise * np.eye(n) + (X[:, active] * scale) @ X[:, active].T
        probabilities = np.zeros(2)
        collapsed_group_sweep(np.ascontiguousarray(X.T), y, starts, ends, logit(np.array([0.3, 0.4])), vs,
                              np.linalg.inv(C), z.copy(), np.array([0]), np.array([2.0]), probabilities)  # fmt: skip
        C_off = C - vs[0] * X[:, :3] @ X[:, :3].T
        log_odds = logit(0.3) + multivariate_normal(np.zeros(n), C).logpdf(y) - multivariate_normal(
            np.zeros(n), C_off).logpdf(y)  # fmt: skip
        assert probabilities[0] == pytest.approx(1 / (1 + np.exp(-log_odds)), rel=1e-9)


def test_gibbs_against_exact_enumeration(problem):
    X, y = problem
    exact = exact_posterior(X, y, np.arange(12) // 3, np.full(4, 0.3), np.ones(4), 0.25)
    sampler = GroupSpikeSlabGibbs(groups=3, prior_inclusion=0.3, noise_variance=0.25, fit_intercept=False,
                                  n_iter=1500, burn_in=200, n_chains=2, random_state=0, progress=False)  # fmt: skip
    sampler.fit(X, y)
    assert np.max(np.abs(sampler.group_inclusion_probabilities_ - exact.group_inclusion_probabilities)) < 0.03
    np.testing.assert_allclose(sampler.coef_, exact.coef_mean, atol=0.03)
    draws = sampler.coef_samples_.reshape(-1, 12)
    np.testing.assert_allclose(draws.var(axis=0), exact.coef_variance, atol=0.03)


def test_estimates_are_averages_over_the_trace(problem):
    """coef_ and group_inclusion_probabilities_ are the Rao–Blackwellised averages of the saved terms."""
    X, y = problem
    sampler = GroupSpikeSlabGibbs(groups=3, prior_inclusion=0.3, noise_variance=0.25, n_iter=80, burn_in=20, thin=3,
                                  random_state=1, progress=False).fit(X, y)  # fmt: skip
    trace = sampler.trace_
    np.testing.assert_allclose(sampler.group_inclusion_probabilities_, trace.flat("inclusion_probability").mean(0))
    np.testing.assert_allclose(sampler.coef_, trace.flat("coef_mean").mean(0))
    assert sampler.intercept_ == pytest.approx(problem[1].mean() - problem[0].mean(0) @ sampler.coef_, abs=1e-12)
    np.testing.assert_array_equal(trace["n_active_groups"], trace["z"].sum(axis=2))
    # inactive groups have exactly zero coefficients in every draw and every conditional mean
    inactive = ~np.repeat(trace["z"], 3, axis=2)
    assert np.all(trace["coef"][inactive] == 0) and np.all(trace["coef_mean"][inactive] == 0)
    assert sampler.z_samples_ is trace["z"] and sampler.coef_samples_ is trace["coef"]


def test_reproducible_and_inference_data(problem):
    X, y = problem
    kwargs = dict(groups=3, prior_inclusion=0.3, noise_variance=0.25, n_iter=60, burn_in=20, n_chains=2,
                  progress=False)  # fmt: skip
    a = GroupSpikeSlabGibbs(random_state=3, **kwargs).fit(X, y)
    b = GroupSpikeSlabGibbs(random_state=3, **kwargs).fit(X, y)
    np.testing.assert_array_equal(a.coef_samples_, b.coef_samples_)
    np.testing.assert_array_equal(a.z_samples_, b.z_samples_)
    c = GroupSpikeSlabGibbs(random_state=4, **kwargs).fit(X, y)
    assert not np.array_equal(a.coef_samples_, c.coef_samples_)
    assert a.z_samples_.shape == (2, 40, 4) and a.z_samples_.dtype == bool and a.coef_samples_.shape == (2, 40, 12)
    assert a.trace_.warmup["z"].shape == (2, 20, 4) and not hasattr(a, "z_trace_")
    assert a.predict(X[:3]).shape == (3,)


def test_inference_data_groups(problem):
    """ArviZ: posterior = the saved post-burn-in draws with dims (chain, draw, ...), warm-up z in its own group."""
    X, y = problem
    sampler = GroupSpikeSlabGibbs(groups=3, prior_inclusion=0.3, noise_variance=0.25, n_iter=50, burn_in=10, thin=2,
                                  n_chains=2, random_state=0, progress=False).fit(X, y)  # fmt: skip
    idata = sampler.to_inference_data()
    assert set(idata.groups()) == {"posterior", "warmup_posterior"}
    posterior = idata.posterior
    assert set(posterior.data_vars) == {"z", "coef", "n_active_groups", "inclusion_probability", "coef_mean"}
    assert posterior["z"].dims == ("chain", "draw", "group") and posterior["z"].shape == (2, 20, 4)
    assert posterior["coef"].dims == ("chain", "draw", "feature") and posterior["coef"].shape == (2, 20, 12)
    assert posterior["n_active_groups"].dims == ("chain", "draw")
    np.testing.assert_array_equal(posterior["z"].values, sampler.z_samples_)
    assert idata.warmup_posterior["z"].shape == (2, 10, 4)
    assert list(sampler.mcmc_summary()) == ["n_active_groups"]
    summary = sampler.mcmc_summary()["n_active_groups"]
    assert summary["mean"] == pytest.approx(sampler.z_samples_.sum(axis=2).mean()) and np.isfinite(summary["r_hat"])


def test_thinning_keeps_every_thin_th_sweep_of_the_same_chain(problem):
    """The chain of z does not depend on thin (w is drawn from its own stream): thin=4 saves sweeps
    burn_in + 4, burn_in + 8, ... of the very chain that thin=1 saves in full."""
    X, y = problem
    kwargs = dict(groups=3, prior_inclusion=0.3, noise_variance=0.25, n_iter=61, burn_in=20, n_chains=2,
                  random_state=5, progress=False)  # fmt: skip
    full = GroupSpikeSlabGibbs(thin=1, **kwargs).fit(X, y)
    thinned = GroupSpikeSlabGibbs(thin=4, **kwargs).fit(X, y)
    assert thinned.z_samples_.shape == (2, 10, 4)
    np.testing.assert_array_equal(thinned.z_samples_, full.z_samples_[:, 3::4])
    np.testing.assert_array_equal(thinned.trace_["inclusion_probability"],
                                  full.trace_["inclusion_probability"][:, 3::4])  # fmt: skip
    np.testing.assert_array_equal(thinned.trace_["coef_mean"], full.trace_["coef_mean"][:, 3::4])
    np.testing.assert_array_equal(thinned.trace_.warmup["z"], full.trace_.warmup["z"])


def test_results_do_not_depend_on_n_jobs(problem):
    X, y = problem
    kwargs = dict(groups=3, prior_inclusion=0.3, noise_variance=0.25, n_iter=40, burn_in=10, n_chains=3,
                  random_state=7, progress=False)  # fmt: skip
    serial = GroupSpikeSlabGibbs(n_jobs=None, **kwargs).fit(X, y)
    for n_jobs in (1, 2, -1):
        parallel = GroupSpikeSlabGibbs(n_jobs=n_jobs, **kwargs).fit(X, y)
        np.testing.assert_array_equal(parallel.z_samples_, serial.z_samples_)
        np.testing.assert_array_equal(parallel.coef_samples_, serial.coef_samples_)
        np.testing.assert_array_equal(parallel.coef_, serial.coef_)
    # the chains are different chains
    assert not np.array_equal(serial.coef_samples_[0], serial.coef_samples_[1])


def test_pickle(problem):
    X, y = problem
    sampler = GroupSpikeSlabGibbs(groups=3, n_iter=30, burn_in=10, random_state=0, progress=False).fit(X, y)
    clone = pickle.loads(pickle.dumps(sampler))
    np.testing.assert_array_equal(clone.predict(X), sampler.predict(X))
    np.testing.assert_array_equal(clone.trace_["z"], sampler.trace_["z"])


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"n_iter": 10, "burn_in": 10}, "n_iter=10, burn_in=10, thin=1 leave no draws"),
        ({"n_iter": 10, "burn_in": 5, "thin": 6}, "n_iter=10, burn_in=5, thin=6 leave no draws"),
        ({"thin": 0}, "'thin' parameter"),
        ({"n_chains": 0}, "'n_chains' parameter"),
        ({"n_jobs": "all"}, "'n_jobs' parameter"),
        ({"burn_in": -1}, "'burn_in' parameter"),
        ({"progress": "yes"}, "'progress' parameter"),
        ({"prior_inclusion": 1.0}, r"'prior_inclusion' parameter .* in the range \(0.0, 1.0\)"),
        ({"groups": 3, "prior_inclusion": [0.1, 0.2]}, "prior_inclusion has 2 values, but there are 4"),
        ({"groups": [list(range(7)), list(range(6, 12))]}, "groups overlap"),
    ],
)
def test_gibbs_errors(problem, params, message):
    from hdbayes.exceptions import is_input_error

    X, y = problem
    with pytest.raises(ValueError, match=message) as info:
        GroupSpikeSlabGibbs(**params).fit(X, y)
    assert is_input_error(info.value)


def test_gibbs_refuses_overflowing_input_and_handles_a_constant_column(problem):
    from hdbayes.exceptions import InputValueError

    X, y = problem
    bad = X.copy()
    bad[1, 2] = 1e308
    with pytest.raises(InputValueError, match="X feature 2 is too large"):
        GroupSpikeSlabGibbs(n_iter=20, burn_in=5, random_state=0).fit(bad, y)
    constant = X.copy()
    constant[:, 2] = 3.0
    model = GroupSpikeSlabGibbs(n_iter=40, burn_in=10, n_chains=1, random_state=0).fit(constant, y)
    assert np.isfinite(model.coef_).all() and np.isfinite(model.group_inclusion_probabilities_).all()


@parametrize_with_checks([GroupSpikeSlabGibbs(n_iter=40, burn_in=10, random_state=0, progress=False)])
def test_sklearn_compatible(estimator, check):
    """scikit-learn's checks with short chains (the sampler's contract does not depend on their length)."""
    check(estimator)


@pytest.mark.slow
@parametrize_with_checks([GroupSpikeSlabGibbs()])
def test_sklearn_compatible_as_shipped(estimator, check):
    """The same checks with the shipped defaults (2 × 1000 sweeps: about 40 s on 2 cores)."""
    check(estimator)
