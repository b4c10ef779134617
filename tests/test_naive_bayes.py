"""Tests for hdbayes.selection_bias.naive_bayes (Bayesian naive Bayes with bias correction)."""

import itertools
import math
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from scipy import integrate, stats
from scipy.special import gammaln, logsumexp
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import parametrize_with_checks

from hdbayes import BiasCorrectedNaiveBayes
from hdbayes.exceptions import InputValueError
from hdbayes.metrics import average_minus_log_probability, error_rate, expected_error_rate
from hdbayes.quadrature import QuadratureRule, inverse_gamma_midpoint_grid, simpson_rule
from hdbayes.selection import abs_correlation
from hdbayes.selection_bias.adjustment import naive_bayes_log_discard_probability
from hdbayes.selection_bias.naive_bayes import alpha_posterior, feature_integrals, log_class_numerators
from hdbayes.special import log_beta_bernoulli, log_rising_factorial, log_rising_factorial_table


def gauss_legendre_rule(n_points):
    """Gauss–Legendre on [0, 1]; exact for the polynomial-in-θ integrands of this model."""
    x, w = np.polynomial.legendre.leggauss(n_points)
    return QuadratureRule((x + 1) / 2, w / 2)


def log_u(f1, f0, n1, n0):
    """log U by the product form, scalar arguments (thesis eq. 2.30)."""
    with np.errstate(divide="ignore"):  # log 0 = −inf at the endpoints θ ∈ {0, 1}
        terms = [np.log(f0 + l) for l in range(n0)] + [np.log(f1 + l) for l in range(n1)]
        terms += [-np.log(f0 + f1 + l) for l in range(n0 + n1)]
    return float(np.sum(terms)) if terms else 0.0


def train_likelihood(theta, alpha, ones, sizes):
    """L_j(θ, α) = ∏_c U(αθ, α(1 − θ), I_c, N_c − I_c) for one feature (eq. 2.33)."""
    return np.exp(
        sum(log_beta_bernoulli(alpha * theta, alpha * (1 - theta), ones[c], sizes[c] - ones[c]) for c in (0, 1))
    )


def brute_force_predict_proba(X_train, y_train, X_test, selected, *, n_total, correct, f0, f1, a, b, n_alpha, n_theta):
    """P(y* = 1 | x*, train[, S]) by direct loops over test cases, classes, α points and features.

    Thesis eq. 2.34–2.44 with the quadratures of §2.3.3 / §2.3.5; the adjustment factor is computed by
    enumerating every binary column of length n (so n must be small).
    """
    n = X_train.shape[0]
    sizes = [int(np.sum(y_train == 0)), int(np.sum(y_train == 1))]
    alphas = stats.invgamma.ppf((np.arange(n_alpha) + 0.5) / n_alpha, a, scale=b)
    h = 1.0 / (n_theta - 1)
    thetas = np.linspace(0, 1, n_theta)
    weights = np.array([1.0 if t in (0, n_theta - 1) else (4.0 if t % 2 else 2.0) for t in range(n_theta)]) * h / 3
    k = len(selected)
    ones = [[int(np.sum(X_train[y_train == c, j])) for j in selected] for c in (0, 1)]

    # log adjustment: (p − k) log q(α), q by enumeration of all 2^n columns
    log_adjust = np.zeros(n_alpha)
    if correct and n_total > k:
        gamma = min(abs_correlation(X_train[:, selected], y_train))
        scores_all = abs_correlation(X_train, y_train)
        strict = not np.any(np.isclose(np.delete(scores_all, selected), gamma, rtol=1e-12, atol=0))
        columns = np.array(list(itertools.product([0, 1], repeat=n))).T
        col_scores = abs_correlation(columns, y_train)
        tol = 1e-9 * gamma
        discarded = col_scores < gamma - tol if strict else col_scores <= gamma + tol
        col_ones = [(columns[y_train == c][:, discarded]).sum(axis=0) for c in (0, 1)]
        for m, alpha in enumerate(alphas):
            q = 0.0
            for theta, w in zip(thetas, weights):
                probs = np.exp(
                    sum(
                        log_beta_bernoulli(alpha * theta, alpha * (1 - theta), col_ones[c], sizes[c] - col_ones[c])
                        for c in (0, 1)
                    )
                )
                q += w * probs.sum()
            log_adjust[m] = (n_total - k) * np.log(q)

    # Q_j(α_m, c) for x*_j = 1 and x*_j = 0 (eq. 2.40), by loops over θ nodes
    q_table = np.zeros((n_alpha, k, 2, 2))  # [m, j, c, x*_j]
    for m, alpha in enumerate(alphas):
        for j in range(k):
            for theta, w in zip(thetas, weights):
                lik = train_likelihood(theta, alpha, [ones[0][j], ones[1][j]], sizes)
                for c in (0, 1):
                    phi_hat = (alpha * theta + ones[c][j]) / (alpha + sizes[c])
                    q_table[m, j, c, 1] += w * lik * phi_hat
                    q_table[m, j, c, 0] += w * lik * (1 - phi_hat)

    psi_hat = [(f0 + sizes[0]) / (f0 + f1 + n), (f1 + sizes[1]) / (f0 + f1 + n)]
    out = []
    for x in X_test[:, selected]:
        numerators = []
        for c in (0, 1):
            terms = []
            for m in range(n_alpha):
                log_prod = sum(np.log(q_table[m, j, c, x[j]]) for j in range(k))
                terms.append(log_adjust[m] + log_prod)
            numerators.append(np.log(psi_hat[c]) + logsumexp(terms) - np.log(n_alpha))
        out.append(np.exp(numerators[1] - logsumexp(numerators)))
    return np.array(out)


# ---------------------------------------------------------------------------
# feature_integrals
# ---------------------------------------------------------------------------

FEATURES = np.array([[0, 3, 7, 2], [5, 1, 7, 9]])  # I_{c,j}: rows c = 0, 1
SIZES = (8, 11)
ALPHAS = np.array([0.7, 2.6, 27.99, 2543.14])


def _quad_integrals(alpha, ones, sizes):
    def marginal(theta):
        return train_likelihood(theta, alpha, ones, sizes)

    def times_phi(c, one):
        def f(theta):
            phi = (alpha * theta + ones[c]) / (alpha + sizes[c])
            return marginal(theta) * (phi if one else 1 - phi)

        return f

    kwargs = dict(epsabs=0, epsrel=1e-12, limit=200)
    m = integrate.quad(marginal, 0, 1, **kwargs)[0]
    one = [integrate.quad(times_phi(c, True), 0, 1, **kwargs)[0] for c in (0, 1)]
    zero = [integrate.quad(times_phi(c, False), 0, 1, **kwargs)[0] for c in (0, 1)]
    return np.log(m), np.log(one), np.log(zero)


def test_feature_integrals_against_scipy_quad():
    """With an exact rule for polynomials in θ, the integrals are the exact ones of the docstring."""
    log_marginal, log_one, log_zero = feature_integrals(FEATURES, SIZES, ALPHAS, gauss_legendre_rule(30))
    assert log_marginal.shape == (4, 4) and log_one.shape == log_zero.shape == (4, 4, 2)
    for m, alpha in enumerate(ALPHAS):
        for j in range(FEATURES.shape[1]):
            expected = _quad_integrals(alpha, FEATURES[:, j], SIZES)
            assert log_marginal[m, j] == pytest.approx(expected[0], abs=1e-9)
            np.testing.assert_allclose(log_one[m, j], expected[1], rtol=0, atol=1e-9)
            np.testing.assert_allclose(log_zero[m, j], expected[2], rtol=0, atol=1e-9)


def test_feature_integrals_simpson_equals_direct_sum():
    """With the default Simpson rule (endpoints included: exact limits at θ ∈ {0, 1})."""
    rule = simpson_rule(21)
    log_marginal, log_one, log_zero = feature_integrals(FEATURES, SIZES, ALPHAS, rule)
    for m, alpha in enumerate(ALPHAS):
        for j in range(FEATURES.shape[1]):
            ones = FEATURES[:, j]
            lik = np.array(
                [
                    np.exp(sum(log_u(alpha * t, alpha * (1 - t), ones[c], SIZES[c] - ones[c]) for c in (0, 1)))
                    for t in rule.nodes
                ]
            )
            # (1e-10: the code's log Γ(α + N)/Γ(α) by gammaln loses ~1e-12 per class at α ≈ 2500)
            assert log_marginal[m, j] == pytest.approx(np.log(rule.weights @ lik), abs=1e-10)
            for c in (0, 1):
                phi = (alpha * rule.nodes + ones[c]) / (alpha + SIZES[c])
                assert log_one[m, j, c] == pytest.approx(np.log(rule.weights @ (lik * phi)), abs=1e-10)
                assert log_zero[m, j, c] == pytest.approx(np.log(rule.weights @ (lik * (1 - phi))), abs=1e-10)


def test_feature_integrals_one_plus_zero_is_marginal():
    rng = np.random.default_rng(0)
    sizes = (37, 55)
    ones = np.vstack([rng.integers(0, sizes[0] + 1, 50), rng.integers(0, sizes[1] + 1, 50)])
    ones[:, 0] = 0
    ones[:, 1] = sizes  # all-zero and all-one features: integrands vanish at one endpoint
    alpha = inverse_gamma_midpoint_grid(0.5, 5.0, 30).nodes
    log_marginal, log_one, log_zero = feature_integrals(ones, sizes, alpha, simpson_rule(21))
    for c in (0, 1):
        np.testing.assert_allclose(
            np.logaddexp(log_one[..., c], log_zero[..., c]), log_marginal, rtol=1e-13, atol=1e-12
        )
    assert np.all(np.isfinite(log_one)) and np.all(np.isfinite(log_zero))
    assert np.all(log_marginal < 0)


def test_feature_integrals_marginal_is_a_distribution_over_columns():
    """Σ over all binary columns of P(x_j^train | α, y) = 1 (for any θ rule with weights summing to 1)."""
    sizes = (3, 4)
    ones = np.array([[i0, i1] for i0 in range(sizes[0] + 1) for i1 in range(sizes[1] + 1)]).T
    multiplicity = np.array([math.comb(sizes[0], i0) * math.comb(sizes[1], i1) for i0, i1 in ones.T])
    log_marginal, _, _ = feature_integrals(ones, sizes, np.array([0.3, 5.0, 400.0]), simpson_rule(11))
    np.testing.assert_allclose(np.exp(log_marginal) @ multiplicity, 1.0, rtol=1e-12)


# ---------------------------------------------------------------------------
# log_class_numerators
# ---------------------------------------------------------------------------


@pytest.fixture
def integrals():
    rng = np.random.default_rng(5)
    k, n_alpha = 6, 5
    log_one = rng.normal(-1.0, 0.5, size=(n_alpha, k, 2))
    log_zero = rng.normal(-1.5, 0.5, size=(n_alpha, k, 2))
    log_adjustment = rng.normal(0, 3, size=n_alpha)
    prior = np.log([0.4, 0.6])
    return log_one, log_zero, log_adjustment, prior


def test_log_class_numerators_equals_loops(integrals):
    log_one, log_zero, log_adjustment, prior = integrals
    n_alpha, k, _ = log_one.shape
    X = np.random.default_rng(6).integers(0, 2, size=(9, k))
    out = log_class_numerators(X, log_one, log_zero, log_adjustment, prior)
    assert out.shape == (9, 2)
    for i, x in enumerate(X):
        for c in (0, 1):
            terms = [
                log_adjustment[m] + sum(log_one[m, j, c] if x[j] else log_zero[m, j, c] for j in range(k))
                for m in range(n_alpha)
            ]
            assert out[i, c] == pytest.approx(prior[c] + logsumexp(terms) - np.log(n_alpha), abs=1e-12)


@pytest.mark.parametrize("p", [8, 40])  # 4k ≥ p: dense multiply by zero weights; 4k < p: gather columns
@pytest.mark.parametrize("kind", ["dense", "csr", "csc"])
def test_log_class_numerators_columns_equal_explicit_selection(integrals, p, kind):
    log_one, log_zero, log_adjustment, prior = integrals
    k = log_one.shape[1]
    rng = np.random.default_rng(p)
    X = rng.integers(0, 2, size=(11, p)).astype(np.float64)
    columns = rng.choice(p, size=k, replace=False)
    expected = log_class_numerators(X[:, columns], log_one, log_zero, log_adjustment, prior)
    Xk = X if kind == "dense" else sp.csr_matrix(X).asformat(kind)
    got = log_class_numerators(Xk, log_one, log_zero, log_adjustment, prior, columns=columns)
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-12)
    # a sparse matrix without the column argument gives the same too
    np.testing.assert_allclose(
        log_class_numerators(sp.csr_matrix(X[:, columns]), log_one, log_zero, log_adjustment, prior),
        expected,
        rtol=1e-13,
        atol=1e-12,
    )


def test_huge_number_of_discarded_features_stays_finite():
    """(p − k) = 10^7: q^{p−k} underflows by far, the log-space computation does not."""
    alpha = inverse_gamma_midpoint_grid(0.5, 5.0, 30).nodes
    rule = simpson_rule(21)
    log_q = naive_bayes_log_discard_probability(alpha, 100, 100, 0.27, theta_rule=rule)
    log_adjustment = 1e7 * log_q
    assert np.all(np.isfinite(log_adjustment)) and np.all(np.exp(log_adjustment) == 0.0)
    rng = np.random.default_rng(7)
    ones = np.vstack([rng.integers(20, 80, 10), rng.integers(20, 80, 10)])
    _, log_one, log_zero = feature_integrals(ones, (100, 100), alpha, rule)
    X = rng.integers(0, 2, size=(50, 10))
    prior = np.log([0.5, 0.5])
    numerators = log_class_numerators(X, log_one, log_zero, log_adjustment, prior)
    assert np.all(np.isfinite(numerators))
    proba = np.exp(numerators - logsumexp(numerators, axis=1, keepdims=True))
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-14)
    # q is increasing on the grid, so the posterior collapses on the largest α point
    last = log_class_numerators(X, log_one[-1:], log_zero[-1:], np.zeros(1), prior)
    np.testing.assert_allclose(proba, np.exp(last - logsumexp(last, axis=1, keepdims=True)), atol=1e-12)


# ---------------------------------------------------------------------------
# the estimator: exact agreement with the model's formulas
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_problem():
    rng = np.random.default_rng(11)
    n, p = 10, 7
    y = np.array([0, 1] * 5)
    rng.shuffle(y)
    X = (rng.uniform(size=(n, p)) < np.where(y[:, None] == 1, 0.7, 0.35)).astype(int)
    X_test = np.array(list(itertools.product([0, 1], repeat=p)))[::5]
    return X, y, X_test


@pytest.mark.parametrize("correct", [True, False])
@pytest.mark.parametrize("k", [3, 7])
def test_estimator_equals_brute_force_model(tiny_problem, correct, k):
    X, y, X_test = tiny_problem
    params = dict(class_pseudo_count=(1.3, 0.8), alpha_shape=0.5, alpha_scale=5.0, n_alpha=6, n_theta=9)
    model = BiasCorrectedNaiveBayes(
        n_features_to_select=k, correct=correct, random_state=0, alpha_rule="midpoint", theta_rule="simpson", **params
    ).fit(X, y)
    params = dict(f0=1.3, f1=0.8, a=0.5, b=5.0, n_alpha=6, n_theta=9)
    expected = brute_force_predict_proba(
        X, y, X_test, model.selected_features_, n_total=X.shape[1], correct=correct, **params
    )
    np.testing.assert_allclose(model.predict_proba(X_test)[:, 1], expected, rtol=1e-10, atol=1e-12)
    if k < X.shape[1] and correct:
        assert np.all(model.log_adjustment_ < 0)
    else:
        np.testing.assert_array_equal(model.log_adjustment_, 0.0)


def test_fitted_attributes(tiny_problem):
    X, y, _ = tiny_problem
    model = BiasCorrectedNaiveBayes(
        n_features_to_select=3, alpha_rule="midpoint", n_alpha=12, theta_rule="simpson", random_state=0
    ).fit(X, y)
    r = abs_correlation(X, y)
    np.testing.assert_array_equal(model.classes_, [0, 1])
    assert model.n_features_in_ == 7
    assert model.selected_features_.shape == (3,)
    assert model.threshold_ == pytest.approx(np.sort(r)[-3])
    assert model.selection_.n_total == 7 and model.selection_.n_discarded == 4
    np.testing.assert_allclose(model.alpha_grid_, inverse_gamma_midpoint_grid(0.5, 5.0, 12).nodes)
    # posterior of α ∝ q^{p−k} · ∏_j P(x_j^train | α, y)
    log_marginal, _, _ = feature_integrals(
        np.vstack([X[y == 0][:, model.selected_features_].sum(0), X[y == 1][:, model.selected_features_].sum(0)]),
        (5, 5),
        model.alpha_grid_,
        simpson_rule(21),
    )
    np.testing.assert_allclose(model.log_marginal_likelihood_, log_marginal.sum(axis=1), rtol=1e-13)
    log_post = model.log_adjustment_ + model.log_marginal_likelihood_
    np.testing.assert_allclose(model.alpha_posterior_, np.exp(log_post - logsumexp(log_post)), rtol=1e-12)
    assert model.alpha_posterior_.sum() == pytest.approx(1.0, abs=1e-14)
    prior_density = stats.invgamma.pdf(model.alpha_grid_, 0.5, scale=5.0)
    np.testing.assert_allclose(
        model.posterior_density_of_log_alpha_, 12 * model.alpha_posterior_ * model.alpha_grid_ * prior_density
    )
    np.testing.assert_allclose(model.class_log_prior_, np.log([(1 + 5) / 12, (1 + 5) / 12]))


def test_posterior_density_of_log_alpha_integrates_to_one(nb_data):
    """With a fine α grid the density of log α (thesis Fig. 2.7) integrates to ≈ 1."""
    X, y, _, _ = nb_data
    model = BiasCorrectedNaiveBayes(n_features_to_select=10, alpha_rule="midpoint", n_alpha=2000, random_state=0)
    model.fit(X, y)
    total = np.trapezoid(model.posterior_density_of_log_alpha_, np.log(model.alpha_grid_))
    assert total == pytest.approx(1.0, abs=0.02)
    # the adaptive rule: the density times the rule's weights is the posterior (weights in prior mass)
    adaptive = BiasCorrectedNaiveBayes(n_features_to_select=10, random_state=0).fit(X, y)
    log_t = np.log(adaptive.alpha_grid_)
    assert np.trapezoid(adaptive.posterior_density_of_log_alpha_, log_t) == pytest.approx(1.0, abs=1e-5)


# ---------------------------------------------------------------------------
# scikit-learn compatibility
# ---------------------------------------------------------------------------


@parametrize_with_checks([BiasCorrectedNaiveBayes()])
def test_sklearn_compatible(estimator, check):
    """scikit-learn's checks pass with the defaults (binarize=0.0, as BernoulliNB)."""
    check(estimator)


def test_binarize_options():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 4))
    y = np.r_[np.zeros(10), np.ones(10)]
    # the default binarizes at 0, as BernoulliNB: the same model as the 0/1 data
    a = BiasCorrectedNaiveBayes().fit(X, y).predict_proba(X)
    b = BiasCorrectedNaiveBayes(binarize=None).fit((X > 0).astype(int), y).predict_proba((X > 0).astype(int))
    np.testing.assert_array_equal(a, b)
    # None: the data must already be 0/1
    with pytest.raises(InputValueError, match=r"binary features \(0/1\).*binarize"):
        BiasCorrectedNaiveBayes(binarize=None).fit(X, y)
    # "median": training medians, stored and applied to test data
    shifted = X + np.array([0.0, 10.0, -3.0, 100.0])
    model = BiasCorrectedNaiveBayes(binarize="median").fit(shifted, y)
    np.testing.assert_allclose(model.binarize_thresholds_, np.median(shifted, axis=0))
    median_01 = (shifted > np.median(shifted, axis=0)).astype(int)
    expected = BiasCorrectedNaiveBayes(binarize=None).fit(median_01, y).predict_proba(median_01)
    np.testing.assert_array_equal(model.predict_proba(shifted), expected)
    with pytest.raises(InvalidParameterError, match="The 'binarize' parameter .* among {'median'}"):
        BiasCorrectedNaiveBayes(binarize="mean").fit(X, y)
    # a value other than 0/1 without binarize: its column is named, as the user knows it
    frame = pd.DataFrame((X > 0).astype(int), columns=["a", "b", "c", "d"])
    frame.loc[3, "c"] = 2
    with pytest.raises(InputValueError, match=r"^X must hold binary features \(0/1\): feature 'c' has the value 2;"):
        BiasCorrectedNaiveBayes(binarize=None).fit(frame, y)
    for matrix in (frame.to_numpy(), sp.csr_matrix(frame.to_numpy())):
        with pytest.raises(InputValueError, match=r"feature 2 has the value 2;"):
            BiasCorrectedNaiveBayes(binarize=None).fit(matrix, y)


def test_pickle_round_trip(nb_data):
    X, y, X_test, _ = nb_data
    model = BiasCorrectedNaiveBayes(n_features_to_select=15, random_state=3).fit(X, y)
    clone = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(clone.predict_proba(X_test), model.predict_proba(X_test))
    np.testing.assert_array_equal(clone.selected_features_, model.selected_features_)


def _k_with_boundary_ties(X, y):
    r = np.sort(abs_correlation(X, y))[::-1]
    for k in range(5, len(r) - 1):
        if np.isclose(r[k - 1], r[k], rtol=1e-12) and r[k - 1] > 0:
            return k
    raise AssertionError("no ties in the fixture")


def test_random_state_controls_tie_breaking(nb_data):
    X, y, X_test, _ = nb_data
    k = _k_with_boundary_ties(X, y)
    first = BiasCorrectedNaiveBayes(n_features_to_select=k, random_state=42).fit(X, y)
    again = BiasCorrectedNaiveBayes(n_features_to_select=k, random_state=42).fit(X, y)
    assert first.selection_.strict is False
    np.testing.assert_array_equal(first.selected_features_, again.selected_features_)
    np.testing.assert_array_equal(first.predict_proba(X_test), again.predict_proba(X_test))
    selections = {
        tuple(sorted(BiasCorrectedNaiveBayes(n_features_to_select=k, random_state=s).fit(X, y).selected_features_))
        for s in range(15)
    }
    assert len(selections) > 1


def test_sparse_dense_and_dataframe_inputs_agree(nb_data):
    X, y, X_test, _ = nb_data
    dense = BiasCorrectedNaiveBayes(n_features_to_select=12, random_state=0).fit(X, y)
    expected = dense.predict_proba(X_test)
    for fmt in ("csr", "csc"):
        model = BiasCorrectedNaiveBayes(n_features_to_select=12, random_state=0).fit(sp.csr_matrix(X).asformat(fmt), y)
        np.testing.assert_array_equal(model.selected_features_, dense.selected_features_)
        np.testing.assert_allclose(model.predict_proba(sp.csr_matrix(X_test).asformat(fmt)), expected, rtol=1e-12)
        np.testing.assert_allclose(model.predict_proba(X_test), expected, rtol=1e-12)
    names = [f"gene{j}" for j in range(X.shape[1])]
    frame_model = BiasCorrectedNaiveBayes(n_features_to_select=12, random_state=0)
    frame_model.fit(pd.DataFrame(X, columns=names), y)
    np.testing.assert_array_equal(frame_model.feature_names_in_, names)
    np.testing.assert_allclose(frame_model.predict_proba(pd.DataFrame(X_test, columns=names)), expected, rtol=1e-12)


def test_string_labels(nb_data):
    X, y, X_test, _ = nb_data
    labels = np.array(["healthy", "tumour"])[y]
    model = BiasCorrectedNaiveBayes(n_features_to_select=8, random_state=0).fit(X, labels)
    reference = BiasCorrectedNaiveBayes(n_features_to_select=8, random_state=0).fit(X, y)
    np.testing.assert_array_equal(model.classes_, ["healthy", "tumour"])
    np.testing.assert_array_equal(model.predict(X_test), np.array(["healthy", "tumour"])[reference.predict(X_test)])


def test_predict_decisions(nb_data):
    X, y, X_test, _ = nb_data
    model = BiasCorrectedNaiveBayes(n_features_to_select=20, random_state=0).fit(X, y)
    proba = model.predict_proba(X_test)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-14)
    np.testing.assert_allclose(model.predict_log_proba(X_test), np.log(proba), atol=1e-14)
    np.testing.assert_array_equal(model.predict(X_test), model.classes_[np.argmax(proba, axis=1)])
    loss = np.array([[0.0, 1.0], [6.0, 0.0]])  # missing class 1 costs six times as much
    decisions = model.predict(X_test, loss=loss)
    np.testing.assert_array_equal(decisions, model.classes_[np.argmin(proba @ loss, axis=1)])
    # class 1 whenever P(1) > 1/7: different from the 0-1 decision on this data
    np.testing.assert_array_equal(decisions, (proba[:, 1] > 1 / 7).astype(int))
    assert np.any(decisions != model.predict(X_test))
    np.testing.assert_array_equal(model.predict(X_test, loss=1 - np.eye(2)), model.predict(X_test))


def test_exact_ties_go_to_the_first_class():
    # both classes have the same counts in every feature: every prediction is exactly 1/2
    X = np.array([[0, 1], [0, 1], [1, 0], [1, 0]])
    model = BiasCorrectedNaiveBayes().fit(X, ["b", "a", "b", "a"])
    jll = model.predict_joint_log_proba(X)
    assert np.all(jll[:, 0] == jll[:, 1])
    np.testing.assert_array_equal(model.predict(X), ["a"] * 4)


# ---------------------------------------------------------------------------
# correction versus no correction
# ---------------------------------------------------------------------------


def test_no_correction_needed_when_all_features_are_kept(nb_data):
    X, y, X_test, _ = nb_data
    p = X.shape[1]
    corrected = BiasCorrectedNaiveBayes(n_features_to_select=p, correct=True).fit(X, y)
    uncorrected = BiasCorrectedNaiveBayes(n_features_to_select=p, correct=False).fit(X, y)
    default = BiasCorrectedNaiveBayes().fit(X, y)
    np.testing.assert_array_equal(corrected.log_adjustment_, 0.0)
    np.testing.assert_array_equal(corrected.predict_proba(X_test), uncorrected.predict_proba(X_test))
    np.testing.assert_array_equal(corrected.predict_proba(X_test), default.predict_proba(X_test))


def test_wide_sparse_problem(sparse_binary):
    """60 × 200000 sparse: p − k ≈ 2·10^5 discarded features, probabilities finite and normalised."""
    X = sparse_binary(60, 200_000, 2e-3, seed=2)
    y = np.r_[np.zeros(30), np.ones(30)].astype(int)
    model = BiasCorrectedNaiveBayes(n_features_to_select=10, random_state=0).fit(X, y)
    assert model.selection_.n_discarded == 199_990
    assert np.all(model.log_adjustment_ < -1e4)  # q^{p−k} would underflow
    proba = model.predict_proba(X)
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-14)
    uncorrected = BiasCorrectedNaiveBayes(n_features_to_select=10, correct=False, random_state=0)
    uncorrected = uncorrected.fit(X, y).predict_proba(X)
    # pure-noise data: the correction pulls the predictions to the class frequencies
    assert np.abs(proba[:, 1] - 0.5).max() < 0.05 < np.abs(uncorrected[:, 1] - 0.5).max()


def test_threshold_selection_in_the_estimator(nb_data):
    X, y, X_test, _ = nb_data
    model = BiasCorrectedNaiveBayes(threshold=0.3, binarize=None).fit(X, y)
    r = abs_correlation(X, y)
    np.testing.assert_array_equal(np.sort(model.selected_features_), np.flatnonzero(r > 0.3))
    assert model.threshold_ == 0.3 and model.selection_.strict is False
    log_q = naive_bayes_log_discard_probability(model.alpha_grid_, int(np.sum(y == 0)), int(np.sum(y == 1)), 0.3)
    np.testing.assert_allclose(model.log_adjustment_, (X.shape[1] - len(model.selected_features_)) * log_q)
    # nothing above the threshold: refused in the user's terms
    with pytest.raises(InputValueError, match=r"no feature's \|correlation\| exceeds the threshold 0.99$"):
        BiasCorrectedNaiveBayes(threshold=0.99).fit(X, y)


@pytest.fixture(scope="module")
def calibration_study(simulate_nb):
    """Thesis §2.3.5 in small: α = 300, p = 2000, n = 200, k = 20, 2000 test cases."""
    X, y, X_test, y_test = simulate_nb(2000, 200, 2000, alpha=300.0, seed=0)
    models = {
        correct: BiasCorrectedNaiveBayes(n_features_to_select=20, correct=correct, random_state=0).fit(X, y)
        for correct in (True, False)
    }
    probas = {correct: model.predict_proba(X_test) for correct, model in models.items()}
    return models, probas, y_test


def test_correction_moves_alpha_posterior_up(calibration_study, simulate_nb):
    models, _, _ = calibration_study
    means = {c: m.alpha_posterior_ @ np.log(m.alpha_grid_) for c, m in models.items()}
    assert means[True] > means[False] + 1.0
    # on a common grid: q(α) increases, so the corrected posterior is stochastically larger
    X, y = simulate_nb(2000, 200, 2000, alpha=300.0, seed=0)[:2]
    common = {
        c: BiasCorrectedNaiveBayes(n_features_to_select=20, correct=c, alpha_rule="midpoint", random_state=0).fit(X, y)
        for c in (True, False)
    }
    corrected, uncorrected = common[True].alpha_posterior_, common[False].alpha_posterior_
    assert np.all(np.cumsum(corrected)[:-1] <= np.cumsum(uncorrected)[:-1] + 1e-12)


def test_correction_calibrates_predictions(calibration_study):
    _, probas, y_test = calibration_study
    spread = {c: np.mean(np.abs(p[:, 1] - 0.5)) for c, p in probas.items()}
    assert spread[True] < spread[False]
    gap = {c: abs(expected_error_rate(p) - error_rate(y_test, p)) for c, p in probas.items()}
    assert gap[True] < gap[False]
    assert gap[True] < 0.05 and gap[False] > 0.1  # uncorrected: far too confident
    assert expected_error_rate(probas[False]) < error_rate(y_test, probas[False])
    amlp = {c: average_minus_log_probability(y_test, p) for c, p in probas.items()}
    assert amlp[True] < amlp[False]


# ---------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------


@pytest.fixture
def small():
    X = np.array([[0, 1, 1], [1, 0, 1], [0, 0, 1], [1, 1, 0], [1, 0, 0], [0, 1, 0]])
    y = np.array([0, 0, 0, 1, 1, 1])
    return X, y


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"n_features_to_select": 4}, "n_features_to_select=4 is larger than the number of features p=3"),
        ({"n_features_to_select": 2, "threshold": 0.1}, "at most one of n_features_to_select and threshold"),
        ({"n_theta": 20, "theta_rule": "simpson"}, "n_theta must be odd"),
        ({"n_theta": 1, "theta_rule": "simpson"}, "n_theta must be at least 3"),
        ({"n_alpha": 2}, "n_alpha must be at least 3"),
        ({"class_pseudo_count": [1.0, 2.0, 3.0]}, "class_pseudo_count must be a positive number or 2 positive"),
        ({"class_pseudo_count": [1.0, 0.0]}, "class_pseudo_count must be a positive number or 2 positive"),
    ],
)
def test_bad_parameters(small, params, match):
    X, y = small
    with pytest.raises(InputValueError, match=match):
        BiasCorrectedNaiveBayes(**params).fit(X, y)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("n_features_to_select", 0),
        ("n_features_to_select", 2.5),
        ("threshold", -0.2),
        ("n_theta", 0),
        ("n_alpha", 0),
        ("alpha_rule", "gauss"),
        ("theta_rule", "gauss"),
        ("alpha_resolution", 0.0),
        ("class_pseudo_count", 0.0),
        ("class_pseudo_count", "1"),
        ("alpha_shape", 0),
        ("alpha_scale", -5.0),
        ("alpha_scale", np.inf),
        ("binarize", "mean"),
        ("correct", "yes"),
    ],
)
def test_parameters_are_checked_by_their_constraints(small, name, value):
    X, y = small
    with pytest.raises(InvalidParameterError, match=f"The '{name}' parameter of BiasCorrectedNaiveBayes"):
        BiasCorrectedNaiveBayes(**{name: value}).fit(X, y)


def test_class_pseudo_count_per_class(small):
    X, y = small
    model = BiasCorrectedNaiveBayes(class_pseudo_count=[2.0, 0.5]).fit(X, y)
    np.testing.assert_allclose(model.class_log_prior_, np.log(np.array([2.0 + 3, 0.5 + 3]) / (2.5 + 6)))
    same = BiasCorrectedNaiveBayes(class_pseudo_count=1.5).fit(X, y)
    pair = BiasCorrectedNaiveBayes(class_pseudo_count=(1.5, 1.5)).fit(X, y)
    np.testing.assert_array_equal(same.predict_proba(X), pair.predict_proba(X))


def test_bad_data(small):
    X, y = small
    model = BiasCorrectedNaiveBayes(n_features_to_select=2, binarize=None)
    with pytest.raises(InputValueError, match="binary"):
        model.fit(X * 2, y)
    with pytest.raises(InputValueError, match="binary"):
        model.fit(sp.csr_matrix(X * 2), y)
    Xnan = X.astype(float)
    Xnan[0, 0] = np.nan
    with pytest.raises(InputValueError, match="NaN"):
        model.fit(Xnan, y)
    Xinf = X.astype(float)
    Xinf[0, 0] = np.inf
    with pytest.raises(InputValueError, match="infinity"):
        model.fit(Xinf, y)
    with pytest.raises(InputValueError, match="single class"):
        model.fit(X, np.zeros(6))
    with pytest.raises(InputValueError, match="Only binary classification is supported.*3 classes"):
        model.fit(X, [0, 1, 2, 0, 1, 2])
    with pytest.raises(InputValueError, match="Unknown label type"):
        model.fit(X, np.linspace(0, 1, 6))
    with pytest.raises(InputValueError, match="inconsistent numbers of samples"):
        model.fit(X, y[:5])
    with pytest.raises(InputValueError, match="1 sample"):
        model.fit(X[:1], y[:1])
    with pytest.raises(InputValueError, match="single class"):
        BiasCorrectedNaiveBayes().fit(X[:2], y[:2])


def test_bad_data_at_predict_time(small):
    X, y = small
    with pytest.raises(NotFittedError):
        BiasCorrectedNaiveBayes().predict_proba(X)
    model = BiasCorrectedNaiveBayes(n_features_to_select=2, binarize=None).fit(X, y)
    with pytest.raises(InputValueError, match="X has 2 features, but BiasCorrectedNaiveBayes is expecting 3"):
        model.predict_proba(X[:, :2])
    with pytest.raises(InputValueError, match="binary"):
        model.predict(X + 1)
    with pytest.raises(InputValueError, match="NaN"):
        model.predict(np.full((1, 3), np.nan))
    with pytest.raises(InputValueError, match="loss"):
        model.predict(X, loss=np.ones((3, 3)))


# ---------------------------------------------------------------------------
# exact θ integration (theta_rule="exact")
# ---------------------------------------------------------------------------


def test_exact_theta_rule_integrates_the_polynomial_integrands_exactly(nb_data):
    from hdbayes.quadrature import gauss_legendre_rule

    X, y, _, _ = nb_data
    ones = np.vstack([X[y == 0].sum(axis=0), X[y == 1].sum(axis=0)]).astype(int)[:, :40]
    sizes = (int((y == 0).sum()), int((y == 1).sum()))
    alpha = np.array([0.5, 30.0, 300.0, 3000.0])
    m = (sum(sizes) + 3) // 2
    exact = feature_integrals(ones, sizes, alpha, gauss_legendre_rule(m))
    more = feature_integrals(ones, sizes, alpha, gauss_legendre_rule(m + 25))
    for a, b in zip(exact, more):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-10)


def test_exact_theta_rule_matches_a_very_fine_simpson_rule(simulate_nb):
    X, y, X_test, _ = simulate_nb(400, 100, 50, alpha=300.0, seed=4)
    for k in (5, 400):
        common = dict(n_features_to_select=k, alpha_rule="midpoint", random_state=0)
        exact = BiasCorrectedNaiveBayes(theta_rule="exact", **common).fit(X, y)
        fine = BiasCorrectedNaiveBayes(theta_rule="simpson", n_theta=4001, **common).fit(X, y)
        np.testing.assert_allclose(exact.predict_proba(X_test), fine.predict_proba(X_test), atol=1e-6)


def test_exact_theta_rule_removes_the_overconfidence_of_21_simpson_points_at_large_alpha():
    """With all 2000 features and α = 300, 21 Simpson points bias α low (measured: expected
    error 0.141 vs actual 0.198 for seed 0); exact integration is calibrated (0.182 vs 0.195)."""
    from hdbayes.datasets import simulate_naive_bayes

    data = simulate_naive_bayes(n_features=2000, n_samples=200, n_test=2000, random_state=0)
    gaps = {}
    for rule in ("simpson", "exact"):
        model = BiasCorrectedNaiveBayes(theta_rule=rule).fit(data.X, data.y)
        proba = model.predict_proba(data.X_test)[:, 1]
        gaps[rule] = expected_error_rate(proba) - error_rate(data.y_test, proba)
    assert gaps["simpson"] < -0.04
    assert abs(gaps["exact"]) < 0.03


def test_theta_rule_is_validated(nb_data):
    X, y, _, _ = nb_data
    with pytest.raises(ValueError, match="theta_rule"):
        BiasCorrectedNaiveBayes(theta_rule="trapezoid").fit(X, y)


# ---------------------------------------------------------------------------
# selections that cannot work, and messages in the user's terms
# ---------------------------------------------------------------------------


def test_every_feature_constant_after_binarize_is_refused():
    """`naive-bayes --binarize 500` on data below 500 used to keep ten random features silently."""
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 100, size=(20, 30))
    y = np.r_[np.zeros(10), np.ones(10)]
    with pytest.raises(InputValueError, match=r"every feature is constant on the training data after binarize=500"):
        BiasCorrectedNaiveBayes(n_features_to_select=10, binarize=500).fit(X, y)
    with pytest.raises(InputValueError, match=r"^every feature is constant on the training data; nothing to select$"):
        BiasCorrectedNaiveBayes(n_features_to_select=3, binarize=None).fit(np.ones((20, 5)), y)
    with pytest.raises(InputValueError, match="every feature is constant"):
        BiasCorrectedNaiveBayes(threshold=0.1, binarize=None).fit(sp.csr_matrix((20, 5)), y)


def test_selected_features_with_zero_statistic_warn_once_naming_them():
    y = np.r_[np.zeros(6), np.ones(6)]
    X = pd.DataFrame(
        {"signal": y, "noise": np.r_[1, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1], "flat": 0, "flat2": 1, "x": 0, "z": 0}
    )
    with pytest.warns(UserWarning, match=r"^3 of the 5 selected features have \|correlation\| 0") as record:
        model = BiasCorrectedNaiveBayes(n_features_to_select=5, binarize=None, random_state=0).fit(X, y)
    assert len(record) == 1
    message = str(record[0].message)
    assert "feature 'flat'" in message or "feature 'x'" in message or "feature 'z'" in message
    assert np.isfinite(model.predict_proba(X)).all()
    # kept features that carry information: no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        BiasCorrectedNaiveBayes(n_features_to_select=2, binarize=None).fit(X, y)


def test_one_class_and_one_row_are_input_errors():
    X = np.array([[0, 1], [1, 0], [1, 1]])
    with pytest.raises(InputValueError, match="single class"):
        BiasCorrectedNaiveBayes().fit(X, [1, 1, 1])
    with pytest.raises(InputValueError, match="1 sample"):
        BiasCorrectedNaiveBayes().fit(X[:1], [1])
    with pytest.raises(InputValueError, match="loss must have shape"):
        BiasCorrectedNaiveBayes().fit(X, [0, 1, 0]).predict(X, loss=np.ones((3, 3)))


def test_non_finite_outputs_are_refused_with_the_cause(monkeypatch):
    X = np.array([[0, 1], [1, 0], [1, 1], [0, 0]])
    y = [0, 1, 0, 1]
    model = BiasCorrectedNaiveBayes().fit(X, y)
    model.log_integral_one_ = np.full_like(model.log_integral_one_, np.nan)
    with pytest.raises(InputValueError, match="the joint log-likelihood is not finite; a class has zero"):
        model.predict_proba(X)
    import hdbayes.selection_bias.naive_bayes as module

    monkeypatch.setattr(
        module, "naive_bayes_log_discard_probability", lambda alpha, *a, **k: np.full(alpha.shape, -np.inf)
    )
    with pytest.raises(InputValueError, match="the log posterior of α is not finite; the posterior of α underflowed"):
        BiasCorrectedNaiveBayes(n_features_to_select=1).fit(X, y)


def test_feature_integrals_computed_once_per_count_pair_equal_the_per_feature_integrals():
    """Features with the same (I_0, I_1) share their integrals; the shortcut changes no bit."""
    from hdbayes.quadrature import gauss_legendre_rule
    from hdbayes.selection_bias.naive_bayes import _integrate_features

    rng = np.random.default_rng(3)
    ones = np.stack([rng.integers(0, 7, 40), rng.integers(0, 9, 40)])  # many repeated pairs
    sizes, alpha, rule = np.array([6, 8]), np.exp(np.linspace(-2.0, 8.0, 7)), gauss_legendre_rule(8)
    a, b = alpha[:, None] * rule.nodes[None], alpha[:, None] * (1.0 - rule.nodes[None])
    per_feature = _integrate_features(
        np.ascontiguousarray(ones), sizes, np.ascontiguousarray(ones), np.ascontiguousarray(sizes[:, None] - ones),
        alpha, rule.nodes, rule.log_weights, log_rising_factorial_table(a, 8),
        log_rising_factorial_table(b, 8), np.stack([log_rising_factorial(alpha, int(s)) for s in sizes], axis=1),
    )  # fmt: skip
    for shared, direct in zip(feature_integrals(ones, sizes, alpha, rule), per_feature):
        np.testing.assert_array_equal(shared, direct)


def _brute_force_alpha_posterior(alpha, log_weights, log_marginal, log_adjustment, shape, scale):
    """The α posterior without logs: w_m q^{p−k} L(α_m) / E and P(α_m) α_m q^{p−k} L(α_m) / E."""
    unnormalised = np.exp(log_weights) * np.exp(log_adjustment) * np.exp(log_marginal)
    evidence = unnormalised.sum()
    prior = stats.invgamma.pdf(alpha, shape, scale=scale)
    return unnormalised / evidence, prior * alpha * np.exp(log_adjustment) * np.exp(log_marginal) / evidence


def test_alpha_posterior_matches_a_brute_force_computation():
    rng = np.random.default_rng(3)
    for K in (1, 2, 9):
        alpha = np.sort(np.exp(rng.uniform(-1.0, 8.0, size=K)))
        log_weights = np.log(rng.dirichlet(np.ones(K)))
        log_marginal = rng.uniform(-30.0, 0.0, size=K)
        log_adjustment = rng.uniform(-20.0, 0.0, size=K)
        posterior, density = alpha_posterior(alpha, log_weights, log_marginal, log_adjustment, 0.5, 5.0)
        expected_posterior, expected_density = _brute_force_alpha_posterior(
            alpha, log_weights, log_marginal, log_adjustment, 0.5, 5.0
        )
        np.testing.assert_allclose(posterior, expected_posterior, rtol=1e-12)
        np.testing.assert_allclose(density, expected_density, rtol=1e-12)
        assert posterior.sum() == pytest.approx(1.0, abs=1e-14)


def test_alpha_posterior_survives_a_likelihood_far_below_the_smallest_double():
    """Only ratios matter: shifting every log term by −10^5 (exp underflows to 0) changes nothing."""
    alpha = np.array([1.0, 10.0, 100.0, 1000.0])
    log_weights = np.log(np.full(4, 0.25))
    log_marginal = np.array([-3.0, -1.0, -2.0, -6.0])
    log_adjustment = np.array([-0.5, -0.1, 0.0, 0.0])
    reference = alpha_posterior(alpha, log_weights, log_marginal, log_adjustment, 0.5, 5.0)
    shifted = alpha_posterior(alpha, log_weights, log_marginal - 1e5, log_adjustment - 1e5, 0.5, 5.0)
    for got, want in zip(shifted, reference):
        assert np.all(np.isfinite(got))
        np.testing.assert_allclose(got, want, rtol=1e-9)
    with pytest.raises(InputValueError, match="posterior of α underflowed"):
        alpha_posterior(alpha, log_weights, log_marginal, np.full(4, -np.inf), 0.5, 5.0)


def test_alpha_posterior_density_of_log_alpha_integrates_to_one():
    """With the trapezoidal rule in log α (weights in prior mass) the density integrates to 1 by that rule."""
    log_alpha = np.linspace(-4.0, 16.0, 401)
    alpha, h = np.exp(log_alpha), log_alpha[1] - log_alpha[0]
    trapezoid = np.full(log_alpha.shape, h)
    trapezoid[[0, -1]] = h / 2
    log_weights = np.log(trapezoid) + stats.invgamma.logpdf(alpha, 0.5, scale=5.0) + log_alpha
    log_marginal = -0.5 * ((log_alpha - 5.7) / 0.4) ** 2
    posterior, density = alpha_posterior(alpha, log_weights, log_marginal, np.zeros_like(alpha), 0.5, 5.0)
    assert np.trapezoid(density, log_alpha) == pytest.approx(1.0, abs=1e-12)
    assert posterior @ log_alpha == pytest.approx(np.trapezoid(density * log_alpha, log_alpha), abs=1e-12)


@pytest.mark.parametrize("alpha_rule", ["adaptive", "midpoint"])
def test_fit_stores_the_alpha_posterior_of_the_pure_function(nb_data, alpha_rule):
    X, y = nb_data[:2]
    model = BiasCorrectedNaiveBayes(n_features_to_select=5, alpha_rule=alpha_rule).fit(X, y)
    posterior, density = alpha_posterior(
        model.alpha_grid_, model.alpha_log_weights_, model.log_marginal_likelihood_, model.log_adjustment_, 0.5, 5.0
    )
    assert np.any(model.log_adjustment_ < 0)
    np.testing.assert_array_equal(model.alpha_posterior_, posterior)
    np.testing.assert_array_equal(model.posterior_density_of_log_alpha_, density)


# ---------------------------------------------------------------------------
# sufficient statistics and partial_fit (issue 14)
# ---------------------------------------------------------------------------


def chunks(n, sizes):
    """Row slices of sizes cycling through ``sizes`` (which need not divide n)."""
    start, q = 0, 0
    while start < n:
        yield slice(start, start + sizes[q % len(sizes)])
        start += sizes[q % len(sizes)]
        q += 1


def test_fit_keeps_the_sufficient_statistics(nb_data):
    from hdbayes.statistics import BinaryClassCounts

    X, y, _, _ = nb_data
    model = BiasCorrectedNaiveBayes(n_features_to_select=10).fit(X, y)
    assert model.statistics_ == BinaryClassCounts.from_data(X, np.searchsorted(model.classes_, y))
    np.testing.assert_array_equal(model.selection_.scores, abs_correlation(X, np.searchsorted(model.classes_, y)))


@pytest.mark.parametrize(
    "params",
    [
        dict(n_features_to_select=10),
        dict(n_features_to_select=25, correct=False),
        dict(threshold=0.25),
        dict(),
        dict(n_features_to_select=8, alpha_rule="midpoint", theta_rule="simpson"),
        dict(n_features_to_select=12, binarize=None),
    ],
)
@pytest.mark.parametrize("kind", ["dense", "csr", "dataframe"])
def test_partial_fit_equals_fit_on_the_concatenated_chunks(nb_data, params, kind):
    X, y, X_test, _ = nb_data
    labels = np.array(["neg", "pos"])[y]
    frame = pd.DataFrame(X, columns=[f"g{j}" for j in range(X.shape[1])])
    data = {"dense": X, "csr": sp.csr_matrix(X), "dataframe": frame}[kind]
    test = pd.DataFrame(X_test, columns=data.columns) if kind == "dataframe" else X_test
    batch = BiasCorrectedNaiveBayes(**params, random_state=0).fit(data, labels)
    stream = BiasCorrectedNaiveBayes(**params, random_state=0)
    for rows in chunks(X.shape[0], [7, 13, 1]):  # n = 60: sizes that do not divide it, a one-row chunk
        part = data.iloc[rows] if kind == "dataframe" else data[rows]
        stream.partial_fit(part, labels[rows], classes=["pos", "neg"])
    assert stream.statistics_ == batch.statistics_
    np.testing.assert_array_equal(stream.classes_, batch.classes_)
    np.testing.assert_array_equal(stream.selected_features_, batch.selected_features_)
    np.testing.assert_allclose(stream.predict_proba(test), batch.predict_proba(test), rtol=0, atol=1e-12)
    np.testing.assert_allclose(stream.alpha_posterior_, batch.alpha_posterior_, rtol=0, atol=1e-12)


def test_partial_fit_after_fit_continues_and_fit_starts_again(nb_data):
    X, y, X_test, _ = nb_data
    batch = BiasCorrectedNaiveBayes(n_features_to_select=10, random_state=0).fit(X, y)
    model = BiasCorrectedNaiveBayes(n_features_to_select=10, random_state=0).fit(X[:23], y[:23])
    model.partial_fit(X[23:], y[23:])
    np.testing.assert_allclose(model.predict_proba(X_test), batch.predict_proba(X_test), rtol=0, atol=1e-12)
    model.fit(X[:23], y[:23])
    assert model.statistics_.n_samples == 23


def test_partial_fit_waits_for_both_classes(nb_data):
    X, y, X_test, _ = nb_data
    order = np.argsort(y, kind="stable")  # all of class 0 first
    X, y = X[order], y[order]
    model = BiasCorrectedNaiveBayes(n_features_to_select=10, random_state=0)
    model.partial_fit(X[:11], y[:11], classes=[0, 1])
    assert model.statistics_.class_counts.tolist() == [11, 0]
    with pytest.raises(NotFittedError):
        model.predict_proba(X_test)
    for rows in chunks(X.shape[0] - 11, [17]):
        model.partial_fit(X[11:][rows], y[11:][rows])
    batch = BiasCorrectedNaiveBayes(n_features_to_select=10, random_state=0).fit(X, y)
    np.testing.assert_allclose(model.predict_proba(X_test), batch.predict_proba(X_test), rtol=0, atol=1e-12)


def test_partial_fit_input_errors(small):
    X, y = small
    with pytest.raises(InputValueError, match="classes must be passed on the first call"):
        BiasCorrectedNaiveBayes().partial_fit(X, y)
    with pytest.raises(InputValueError, match="not 'median'"):
        BiasCorrectedNaiveBayes(binarize="median").partial_fit(X, y, classes=[0, 1])
    with pytest.raises(InputValueError, match="classes must hold two labels, got 3"):
        BiasCorrectedNaiveBayes().partial_fit(X, y, classes=[0, 1, 2])
    with pytest.raises(InputValueError, match="the label 2, which is not in classes"):
        BiasCorrectedNaiveBayes().partial_fit(X, np.where(y == 1, 2, 0), classes=[0, 1])
    model = BiasCorrectedNaiveBayes(n_features_to_select=2).partial_fit(X, y, classes=[0, 1])
    with pytest.raises(InputValueError, match=r"classes=\[0, 2\] differs from the classes of the first call \[0, 1\]"):
        model.partial_fit(X, y, classes=[0, 2])
    with pytest.raises(InputValueError, match="binary features"):
        BiasCorrectedNaiveBayes(binarize=None).partial_fit(X * 2, y, classes=[0, 1])


@pytest.mark.parametrize(
    "bad",
    [
        lambda X, y: (X[:, :2], y),  # another number of features
        lambda X, y: (np.where(X == 1, np.nan, X), y),  # NaN
        lambda X, y: (X, np.full(y.shape, 7)),  # an unknown label
        lambda X, y: (X, y[:-1]),  # X and y of different lengths
    ],
)
def test_a_failed_partial_fit_leaves_the_estimator_as_it_was(small, bad):
    X, y = small
    model = BiasCorrectedNaiveBayes(n_features_to_select=2, random_state=0).partial_fit(X, y, classes=[0, 1])
    before = pickle.dumps(model)
    proba = model.predict_proba(X)
    with pytest.raises(InputValueError):
        model.partial_fit(*bad(X.astype(float), y))
    assert pickle.dumps(model) == before
    np.testing.assert_array_equal(model.predict_proba(X), proba)


def test_a_failed_first_partial_fit_leaves_the_estimator_unfitted():
    X = np.zeros((4, 3))  # every feature constant: nothing to select
    model = BiasCorrectedNaiveBayes(n_features_to_select=1)
    with pytest.raises(InputValueError, match="every feature is constant"):
        model.partial_fit(X, [0, 1, 0, 1], classes=[0, 1])
    assert not hasattr(model, "statistics_") and not hasattr(model, "n_features_in_")


def test_fit_statistics_of_shards_equals_fit_on_their_union(nb_data):
    from hdbayes.statistics import BinaryClassCounts

    X, y, X_test, _ = nb_data
    names = [f"g{j}" for j in range(X.shape[1])]
    frame, test = pd.DataFrame(X, columns=names), pd.DataFrame(X_test, columns=names)
    labels = np.array(["neg", "pos"])[y]
    shards = [slice(0, 17), slice(17, 17), slice(17, 60)]
    counts = sum(BinaryClassCounts.from_data(frame.iloc[rows], y[rows]) for rows in shards)
    model = BiasCorrectedNaiveBayes(n_features_to_select=10, random_state=0).fit_statistics(counts, ["neg", "pos"])
    batch = BiasCorrectedNaiveBayes(n_features_to_select=10, random_state=0).fit(frame, labels)
    np.testing.assert_array_equal(model.predict_proba(test), batch.predict_proba(test))
    assert list(model.feature_names_in_) == names and model.n_features_in_ == X.shape[1]
    assert list(model.predict(test)) == list(batch.predict(test))


def test_fit_statistics_input_errors():
    from hdbayes.exceptions import InputTypeError
    from hdbayes.statistics import BinaryClassCounts

    counts = BinaryClassCounts([2, 3], [[1, 0], [2, 3]])
    with pytest.raises(InputTypeError, match="BinaryClassCounts"):
        BiasCorrectedNaiveBayes().fit_statistics(np.zeros((2, 2)))
    with pytest.raises(InputValueError, match="increasing order"):
        BiasCorrectedNaiveBayes().fit_statistics(counts, ["b", "a"])
    with pytest.raises(InputValueError, match="not 'median'"):
        BiasCorrectedNaiveBayes(binarize="median").fit_statistics(counts)
    with pytest.raises(InputValueError, match="one class only"):
        BiasCorrectedNaiveBayes().fit_statistics(BinaryClassCounts([0, 3], [[0, 0], [2, 3]]))


def test_feature_integrals_compact_tables_for_few_features_and_many_cases(monkeypatch):
    """Few features, many cases: only the counts the pairs need are tabulated (by _log_rising_factorial_at), in α
    chunks; the integrals are those of the full tables of every count to ~1e-12, and the chunking
    changes no bit."""
    from hdbayes.selection_bias import naive_bayes as module

    rng = np.random.default_rng(5)
    sizes = (700, 900)
    ones = np.stack([rng.integers(0, 701, 6), rng.integers(0, 901, 6)])
    ones[:, 0] = (0, 900)  # the extreme counts
    alpha = np.array([0.05, 1.7, 2.0, 27.99, 2543.14, 3e5])
    rule = simpson_rule(81)
    compact = feature_integrals(ones, sizes, alpha, rule)
    # the full tables, as for many features (every count tabulated by cumulative sums of logs)
    a, b = alpha[:, None] * rule.nodes[None], alpha[:, None] * (1.0 - rule.nodes[None])
    sizes_array = np.array(sizes)
    full = module._integrate_features(
        np.ascontiguousarray(ones), sizes_array, np.ascontiguousarray(ones),
        np.ascontiguousarray(sizes_array[:, None] - ones), alpha, rule.nodes, rule.log_weights,
        log_rising_factorial_table(a, 900), log_rising_factorial_table(b, 900),
        np.stack([log_rising_factorial(alpha, s) for s in sizes], axis=1),
    )  # fmt: skip
    # both are differences of log-Gamma sums of size ~5e3, each exact to a few ulps of it: ~1e-12 absolute
    for got, want in zip(compact, full):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-11)
    monkeypatch.setattr(module, "_TABLE_ENTRIES", 1)  # one α at a time
    for got, want in zip(feature_integrals(ones, sizes, alpha, rule), compact):
        np.testing.assert_array_equal(got, want)


def test_default_adjustment_rule_is_converged_when_the_exact_one_is_large(monkeypatch):
    """The estimator's default θ rule of log q: exact up to 1025 nodes, beyond that converged until
    (p − k) log q changes by at most 1e-6 (here with the thresholds lowered: an exact rule of 101 nodes)."""
    from hdbayes.selection_bias import adjustment

    monkeypatch.setattr(adjustment, "_CONVERGED_FROM", 20)
    monkeypatch.setattr(adjustment, "_CONVERGED_FIRST", 8)
    sizes = []  # the θ rules of log q
    original = adjustment._log_q_with_rule

    def spy(alpha, n0, n1, runs, rule):
        sizes.append(rule.nodes.size)
        return original(alpha, n0, n1, runs, rule)

    monkeypatch.setattr(adjustment, "_log_q_with_rule", spy)
    rng = np.random.default_rng(11)
    y = np.repeat([0, 1], 100)
    X = (rng.random((200, 400)) < 0.4).astype(np.int8)
    X[:, :5] ^= (rng.random((200, 5)) < 0.3).astype(np.int8) * y[:, None].astype(np.int8)
    model = BiasCorrectedNaiveBayes(n_features_to_select=5).fit(X, y)
    assert sizes[:2] == [8, 16] and max(sizes) < 101  # converged before the exact rule
    selection = model.selection_
    exact = selection.n_discarded * naive_bayes_log_discard_probability(
        model.alpha_grid_, 100, 100, selection.threshold, strict=selection.strict
    )
    np.testing.assert_allclose(model.log_adjustment_, exact, rtol=0, atol=1e-6)
    # an explicit rule is used as given
    sizes.clear()
    BiasCorrectedNaiveBayes(n_features_to_select=5, n_theta=31).fit(X, y)
    assert set(sizes) == {31}


def test_log_rising_factorial_at_is_log_rising_factorial():
    """The compiled table of a few counts uses the formulas of log_rising_factorial: on both sides of the switch
    to Stirling's series (a = 15), at a = 0 and for counts up to 10^4, to a few ulps of log Γ(a + I)."""
    from hdbayes.selection_bias.naive_bayes import _log_rising_factorial_at

    a = np.array([[0.0, 1e-9, 0.3, 2.0, 14.999], [15.0, 15.001, 300.0, 2.5e4, 1e12]])
    counts = np.array([0, 1, 2, 17, 999, 10_000])
    got = _log_rising_factorial_at(a, counts)
    want = log_rising_factorial(a[..., None], counts)
    assert got.shape == (2, 5, 6)
    np.testing.assert_array_equal(np.isneginf(got), np.isneginf(want))
    finite = np.isfinite(want)
    scale = np.abs(gammaln(a[..., None] + counts)) + 1.0
    np.testing.assert_array_less(np.abs(got - want)[finite], 1e-14 * np.broadcast_to(scale, got.shape)[finite])
    with pytest.raises(ValueError, match="2-D"):
        _log_rising_factorial_at(np.ones(3), counts)
