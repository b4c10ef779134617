"""The bias-corrected binary mixture model (thesis §2.4): sampler correctness and estimator API."""

from __future__ import annotations

import itertools
import pickle

import numpy as np
import pytest
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import parametrize_with_checks

from hdbayes.datasets import simulate_mixture
from hdbayes.exceptions import InputValueError
from hdbayes.metrics import average_minus_log_probability, error_rate, expected_error_rate
from hdbayes.quadrature import gauss_legendre_rule
from hdbayes.selection_bias.mixture import BiasCorrectedMixture, MixtureSampler
from hdbayes.selection_bias.mixture_adjustment import mixture_log_discard_probability
from hdbayes.special import log_beta_bernoulli


def _exact_alpha_posterior(model, X, y):
    """Posterior of α on its grid by summing over all 2^n label vectors (eq. 2.89–2.96, 2.97–2.105)."""
    data = np.column_stack([y, X[:, model.selected_features_]]).astype(int)
    n, width = data.shape
    rule = gauss_legendre_rule(n + 2)  # the θ integrands are polynomials of degree n
    n0, n1 = int((y == 0).sum()), int((y == 1).sum())
    p_minus_k = model.selection_.n_discarded if model.correct else 0
    log_joint = np.full((2**n, model.alpha_grid_.shape[0], model.alpha0_grid_.shape[0]), -np.inf)
    for index, labels in enumerate(itertools.product((0, 1), repeat=n)):
        z = np.array(labels)
        sizes = np.array([(z == 0).sum(), (z == 1).sum()])
        log_prior = log_beta_bernoulli(1.0, 1.0, sizes[1], sizes[0])  # class_pseudo_count=1

        def feature_log_marginal(alpha, j):
            ones = np.array([data[z == c, j].sum() for c in (0, 1)])
            a, b = alpha * rule.nodes, alpha * (1 - rule.nodes)
            integrand = sum(log_beta_bernoulli(a, b, ones[c], sizes[c] - ones[c]) for c in (0, 1))
            return np.log(np.exp(integrand) @ rule.weights)

        per_alpha = np.array([sum(feature_log_marginal(a, j) for j in range(1, width)) for a in model.alpha_grid_])
        if p_minus_k:
            key = (int(((z == 1) & (y == 0)).sum()), int(((z == 1) & (y == 1)).sum()))
            per_alpha = per_alpha + p_minus_k * mixture_log_discard_probability(
                model.alpha_grid_, n0, n1, *key, model.threshold_, strict=model.selection_.strict,
                theta_rule=rule,
            )  # fmt: skip
        per_alpha0 = np.array([feature_log_marginal(a, 0) for a in model.alpha0_grid_])
        log_joint[index] = log_prior + per_alpha[:, None] + per_alpha0[None, :]
    marginal = np.logaddexp.reduce(log_joint.reshape(2**n, -1), axis=0).reshape(log_joint.shape[1:])
    alpha_marginal = np.logaddexp.reduce(marginal, axis=1)
    return np.exp(alpha_marginal - np.logaddexp.reduce(alpha_marginal))


@pytest.mark.parametrize("correct", [True, False])
def test_gibbs_posterior_of_alpha_matches_enumeration(correct):
    """10 cases, 3 of 60 features kept (ties at γ: the inclusive event). Exact posteriors of α:
    corrected (0.626, 0.142, 0.116, 0.115), uncorrected (0.719, 0.109, 0.087, 0.086); the sampler
    matched them within 0.005 and 0.011 with 7800 draws (seed 0, the chain's own Generator)."""
    rng = np.random.default_rng(3)
    n, p = 10, 60
    y = np.array([0] * 5 + [1] * 5)
    X = (rng.uniform(size=(n, p)) < 0.5).astype(int)
    X[:, :3] = (rng.uniform(size=(n, 3)) < np.where(y[:, None] == 1, 0.85, 0.15)).astype(int)
    model = BiasCorrectedMixture(
        n_features_to_select=3, correct=correct, n_iter=8000, burn_in=200, thin=1, random_state=0,
        sampler=MixtureSampler(n_alpha=4, n_label_sweeps=1, n_theta_updates=3),
    ).fit(X, y)  # fmt: skip
    exact = _exact_alpha_posterior(model, X, y)
    draws = model.trace_["alpha"][0]
    assert draws.shape == (7800,)  # post-burn-in draws only
    frequency = np.array([(draws == a).mean() for a in model.alpha_grid_])
    standard_error = np.sqrt(exact * (1 - exact) / (draws.shape[0] / 4))  # allows for autocorrelation
    assert np.all(np.abs(frequency - exact) < 4 * standard_error), (frequency, exact)


@pytest.fixture(scope="module")
def simulation():
    return simulate_mixture(n_features=500, n_samples=120, n_test=800, random_state=1)


def test_correction_moves_alpha_up_and_calibrates(simulation):
    d = simulation
    results = {}
    for correct in (True, False):
        model = BiasCorrectedMixture(
            n_features_to_select=20, correct=correct, n_iter=120, burn_in=40, thin=2, random_state=0
        )
        model.fit(d.X, d.y)
        proba = model.predict_proba(d.X_test)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)
        results[correct] = (
            expected_error_rate(proba) - error_rate(d.y_test, proba),
            average_minus_log_probability(d.y_test, proba),
            model.trace_["log_alpha"][0].mean(),
        )
    (c_gap, c_amlp, c_alpha), (u_gap, u_amlp, u_alpha) = results[True], results[False]
    assert abs(c_gap) < abs(u_gap)
    assert u_gap < -0.1
    assert c_amlp < u_amlp
    assert c_alpha > u_alpha + 1.0


def test_reproducible_independent_of_n_jobs_and_pickles(simulation):
    d = simulation
    kwargs = dict(n_features_to_select=5, n_iter=30, burn_in=10, thin=2, n_chains=2, random_state=4)
    a = BiasCorrectedMixture(**kwargs).fit(d.X, d.y)
    b = BiasCorrectedMixture(n_jobs=2, **kwargs).fit(d.X, d.y)
    np.testing.assert_array_equal(a.trace_["alpha"], b.trace_["alpha"])
    np.testing.assert_array_equal(a.trace_.warmup["log_alpha"], b.trace_.warmup["log_alpha"])
    np.testing.assert_array_equal(a.predict_proba(d.X_test), b.predict_proba(d.X_test))
    clone = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(clone.predict_proba(d.X_test), a.predict_proba(d.X_test))
    idata = a.to_inference_data()
    assert idata.posterior["log_alpha"].shape == (2, 10)
    assert idata.warmup_posterior["log_alpha"].shape == (2, 10)


@pytest.mark.parametrize(
    "X, y, kwargs, message",
    [
        (np.array([[0, 1], [1, 0], [1, 1], [0, 0]]) * 0.5, [0, 1, 0, 1], {"binarize": None}, "binary"),
        (np.array([[0, 1], [1, 0], [1, 1], [0, 0]]), [1, 1, 1, 1], {}, "single class"),
        (np.array([[0, 1], [1, 0], [1, 1], [0, 0]]), [0, 1, 2, 1], {}, "binary"),
        (np.array([[0, 1], [1, 0], [1, 1], [0, 0]]), [0, 1, 0, 1], {"n_features_to_select": 3}, "larger than"),
        (
            np.array([[0, 1], [1, 0], [1, 1], [0, 0]]),
            [0, 1, 0, 1],
            {"n_theta": 10, "theta_rule": "simpson"},
            "odd",
        ),
        (np.array([[0, 1]]), [0], {}, "1 sample"),
        (np.zeros((4, 2)), [0, 1, 0, 1], {"n_features_to_select": 1}, "every feature is constant"),
        (np.array([[0, 1], [1, 0], [1, 1], [0, 0]]), [0, 1, 0, 1], {"threshold": 1.0}, "exceeds the threshold 1$"),
        (np.array([[0, np.nan], [1, 0], [1, 1], [0, 0]]), [0, 1, 0, 1], {}, "NaN"),
    ],
)
def test_bad_input(X, y, kwargs, message):
    with pytest.raises(InputValueError, match=message):
        BiasCorrectedMixture(**kwargs).fit(X, y)


@pytest.mark.parametrize(
    ("name", "value"),
    [("theta_rule", "gauss"), ("n_features_to_select", 0), ("class_pseudo_count", -1.0), ("n_iter", 0),
     ("progress", "yes"), ("sampler", "default")],
)  # fmt: skip
def test_parameters_are_checked_by_their_constraints(name, value):
    with pytest.raises(InvalidParameterError, match=f"The '{name}' parameter of BiasCorrectedMixture"):
        BiasCorrectedMixture(**{name: value}).fit(np.array([[0, 1], [1, 0], [1, 1], [0, 0]]), [0, 1, 0, 1])


def test_trace_summary_and_class_pseudo_counts(simulation):
    d = simulation
    kwargs = dict(n_features_to_select=5, n_iter=14, burn_in=4, thin=2, n_chains=2, random_state=1)
    model = BiasCorrectedMixture(**kwargs).fit(d.X, d.y)
    assert model.trace_["theta"].shape == (2, 5, 6) and model.trace_["ones"].shape == (2, 5, 2, 6)
    assert model.trace_.warmup["log_alpha"].shape == (2, 4)
    np.testing.assert_array_equal(model.trace_["log_alpha"], np.log(model.trace_["alpha"]))
    assert list(model.mcmc_summary()) == ["log_alpha", "log_alpha0", "smaller_component"]
    assert model.n_adjustment_keys_.shape == (2,) and np.all(model.n_adjustment_keys_ >= 1)
    pair = BiasCorrectedMixture(class_pseudo_count=(1.0, 1.0), **kwargs).fit(d.X, d.y)
    np.testing.assert_array_equal(pair.predict_proba(d.X_test), model.predict_proba(d.X_test))
    uneven = BiasCorrectedMixture(class_pseudo_count=(1.0, 30.0), **kwargs).fit(d.X, d.y)
    assert not np.array_equal(uneven.predict_proba(d.X_test), model.predict_proba(d.X_test))
    with pytest.raises(InputValueError, match="class_pseudo_count must be a positive number or 2 positive"):
        BiasCorrectedMixture(class_pseudo_count=[1.0, 2.0, 3.0]).fit(d.X, d.y)


@parametrize_with_checks([BiasCorrectedMixture()])
def test_sklearn_compatible(estimator, check):
    """All of scikit-learn's checks pass with the defaults (binarize=0.0, as BernoulliNB)."""
    check(estimator)


@pytest.mark.slow  # 60-90 s: the corrected fits compute the whole table of q(α; z) with the exact θ rule
def test_mixture_simulation_small():
    from hdbayes.experiments import mixture_simulation

    report = mixture_simulation.run(full=False, random_state=0, progress=False)
    for k in (10, 100):
        for claim in ("corrected |expected - actual error| smaller than uncorrected", "corrected AMLP at least"):
            [passed] = [value for key, value in report.checks.items() if key.startswith(f"k={k}: {claim}")]
            assert passed, (k, claim, report.checks)
    assert set(report.figures) == {"fig2_13_error_rates", "fig2_14_amlp_brier", "alpha_traces"}
