"""Bayesian naive Bayes family (spec generative-discrete.md §1.5, §1.6, §1.8): T5, T6, T9, scikit-learn oracles."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import logsumexp
from sklearn.naive_bayes import BernoulliNB, CategoricalNB, MultinomialNB
from sklearn.utils.estimator_checks import parametrize_with_checks

from hdbayes.discrete._base import log_dirichlet_estimate
from hdbayes.discrete.conjugate import dirichlet_multinomial_log_pmf
from hdbayes.discrete.naive_bayes import BayesianBernoulliNB, BayesianCategoricalNB, BayesianMultinomialNB

X_T6 = np.array([[1, 0], [1, 1], [0, 0], [0, 1], [0, 1]])
Y_T6 = np.array([0, 0, 0, 1, 1])
TEST_T6 = np.array([[1, 1], [0, 0], [1, 0], [0, 1]])


def _p0(model):
    return model.fit(X_T6, Y_T6).predict_proba(TEST_T6)[:, 0]


# --- T5: log-sum-exp (the library normalises with scipy.special.logsumexp) ------------------------------


def test_t5_log_sum_exp_values():
    assert logsumexp([-120.0, -121.0]) == pytest.approx(-119.68673831248178, rel=1e-15)
    assert logsumexp([-120.0, -121.0]) == pytest.approx(-120 + np.log1p(np.exp(-1)), rel=1e-15)
    assert logsumexp([-1000.0, -1001.0]) == pytest.approx(-999.6867383124818, rel=1e-15)
    with np.errstate(divide="ignore"):
        assert np.log(np.exp(-1000.0) + np.exp(-1001.0)) == -np.inf  # the naive computation underflows
    assert logsumexp(np.array([-3.0, 5.0, 1.0]) + 700) == pytest.approx(logsumexp([-3.0, 5.0, 1.0]) + 700)
    assert logsumexp([-np.inf, -np.inf]) == -np.inf
    assert logsumexp([0.0, np.inf]) == np.inf


def test_predictions_do_not_underflow_for_long_documents():
    X = np.array([[3000, 0], [2800, 200], [0, 3000], [200, 2800]])
    model = BayesianMultinomialNB(method="posterior_mean").fit(X, [0, 0, 1, 1])
    jll = model.predict_joint_log_proba([[1500, 1500]])
    assert np.all(jll < -1000)  # p(x | y) underflows in linear space
    proba = model.predict_proba([[1500, 1500], [1600, 1400]])
    assert np.all(np.isfinite(proba)) and np.allclose(proba.sum(axis=1), 1.0)


# --- T6: binary naive Bayes exact values ------------------------------------------------------------------


def test_t6_counts_and_mle():
    model = BayesianBernoulliNB(method="mle").fit(X_T6, Y_T6)
    np.testing.assert_array_equal(model.class_count_, [3, 2])
    np.testing.assert_array_equal(model.feature_count_, [[2, 1], [0, 2]])
    np.testing.assert_allclose(np.exp(model.class_log_prior_), [3 / 5, 2 / 5], rtol=1e-14)
    np.testing.assert_allclose(np.exp(model.feature_log_prob_), [[2 / 3, 1 / 3], [0, 1]], rtol=1e-14)
    p0 = model.predict_proba(TEST_T6[[0, 2, 3]])[:, 0]
    np.testing.assert_allclose(p0, [1, 1, 1 / 7], rtol=1e-14)


def test_t6_bayes_equals_posterior_mean():
    model = BayesianBernoulliNB(method="bayes").fit(X_T6, Y_T6)
    np.testing.assert_allclose(np.exp(model.class_log_prior_), [4 / 7, 3 / 7], rtol=1e-14)
    np.testing.assert_allclose(np.exp(model.feature_log_prob_), [[3 / 5, 2 / 5], [1 / 4, 3 / 4]], rtol=1e-14)
    np.testing.assert_allclose(_p0(BayesianBernoulliNB()), [128 / 203, 128 / 203, 192 / 217, 256 / 931], rtol=1e-13)
    np.testing.assert_array_equal(_p0(BayesianBernoulliNB("bayes")), _p0(BayesianBernoulliNB("posterior_mean")))
    np.testing.assert_array_equal(_p0(BayesianCategoricalNB("bayes")), _p0(BayesianCategoricalNB("posterior_mean")))


def test_t6_sklearn_style_and_map():
    assert _p0(BayesianBernoulliNB("posterior_mean", alpha=0))[0] == pytest.approx(48 / 73, rel=1e-13)
    map_model = BayesianBernoulliNB("map", alpha=2, beta1=2, beta0=2).fit(X_T6, Y_T6)
    mean_model = BayesianBernoulliNB("posterior_mean").fit(X_T6, Y_T6)
    np.testing.assert_allclose(map_model.feature_log_prob_, mean_model.feature_log_prob_, rtol=1e-14)
    np.testing.assert_allclose(map_model.class_log_prior_, mean_model.class_log_prior_, rtol=1e-14)


def test_log_dirichlet_estimate_rules():
    counts = np.array([3.0, 0.0, 1.0])
    np.testing.assert_allclose(np.exp(log_dirichlet_estimate(counts, 2.0, "posterior_mean")), [0.5, 0.2, 0.3])
    np.testing.assert_allclose(np.exp(log_dirichlet_estimate(counts, 0.0, "mle")), [0.75, 0, 0.25])
    # Beta boundary modes (spec §4.8): a < 1 <= b -> 0, b < 1 <= a -> 1
    assert np.exp(log_dirichlet_estimate(np.array([0.0, 3.0]), 0.5, "map")).tolist() == [0.0, 1.0]
    with pytest.raises(ValueError, match=r"index \(0,\).*no unique mode"):
        log_dirichlet_estimate(np.array([0.0, 0.0]), 1.0, "map")
    # two Dirichlets side by side: (1, 2 | 3, 0, 1) with prior 1
    flat = log_dirichlet_estimate(np.array([1.0, 2.0, 3.0, 0.0, 1.0]), 1.0, "posterior_mean", starts=np.array([0, 2]))
    np.testing.assert_allclose(np.exp(flat), [2 / 5, 3 / 5, 4 / 7, 1 / 7, 2 / 7])
    with pytest.raises(ValueError, match="method must be one of"):
        log_dirichlet_estimate(counts, 1.0, "mean")


def test_map_without_mode_names_the_entry():
    # class 2 has no cases: its posterior Beta(1, 1) is flat, without a unique mode
    with pytest.raises(ValueError, match=r"method='map'.*index \(2, 0, 0\)"):
        BayesianBernoulliNB("map").partial_fit(X_T6, Y_T6, classes=[0, 1, 2])


# --- scikit-learn oracles -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def counts_data():
    rng = np.random.default_rng(0)
    X = rng.poisson(rng.uniform(0.1, 2.0, size=30), size=(60, 30)).astype(float)
    y = rng.integers(0, 3, size=60)
    X[y == 1, :5] += rng.poisson(2.0, size=((y == 1).sum(), 5))
    return X, y


@pytest.mark.parametrize("a", [0.5, 1.0, 2.5])
def test_matches_sklearn_multinomial_nb(counts_data, a):
    X, y = counts_data
    ours = BayesianMultinomialNB("posterior_mean", alpha=0, beta=a).fit(X, y)
    ref = MultinomialNB(alpha=a).fit(X, y)
    np.testing.assert_allclose(ours.predict_log_proba(X), ref.predict_log_proba(X), rtol=0, atol=1e-10)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), rtol=0, atol=1e-10)
    np.testing.assert_allclose(ours.feature_log_prob_, ref.feature_log_prob_, rtol=0, atol=1e-12)
    Xs = sp.csr_matrix(X)
    np.testing.assert_allclose(
        ours.fit(Xs, y).predict_log_proba(Xs), ref.fit(Xs, y).predict_log_proba(Xs), rtol=0, atol=1e-10
    )


@pytest.mark.parametrize("a", [0.5, 1.0, 2.5])
def test_matches_sklearn_bernoulli_nb(counts_data, a):
    X, y = counts_data
    Xb = (X > 0).astype(float)
    ours = BayesianBernoulliNB("posterior_mean", alpha=0, beta1=a, beta0=a).fit(Xb, y)
    ref = BernoulliNB(alpha=a, force_alpha=True, binarize=None).fit(Xb, y)
    np.testing.assert_allclose(ours.predict_log_proba(Xb), ref.predict_log_proba(Xb), rtol=0, atol=1e-10)
    np.testing.assert_allclose(ours.predict_proba(Xb), ref.predict_proba(Xb), rtol=0, atol=1e-10)
    binarized = BayesianBernoulliNB("posterior_mean", alpha=0, beta1=a, beta0=a, binarize=0.0).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(binarized.predict_log_proba(X), ref.predict_log_proba(Xb), rtol=0, atol=1e-10)


def test_matches_sklearn_categorical_nb():
    rng = np.random.default_rng(1)
    X = rng.integers(0, 4, size=(80, 6))
    y = rng.integers(0, 3, size=80)
    ours = BayesianCategoricalNB("posterior_mean", alpha=0, beta=0.7).fit(X, y)
    ref = CategoricalNB(alpha=0.7, force_alpha=True).fit(X, y)
    np.testing.assert_allclose(ours.predict_log_proba(X), ref.predict_log_proba(X), rtol=0, atol=1e-10)


# --- the multinomial Bayes predictive is the DCM ----------------------------------------------------------


def test_multinomial_bayes_is_dcm_of_posterior(counts_data):
    X, y = counts_data
    model = BayesianMultinomialNB("bayes", beta=0.5, include_multinomial_coef=True).fit(X, y)
    Xt = X[:7]
    expected = dirichlet_multinomial_log_pmf(Xt, 0.5 + model.feature_count_) + model.class_log_prior_
    np.testing.assert_allclose(model.predict_joint_log_proba(Xt), expected, rtol=1e-13)
    # a document with one word: the DCM equals the plug-in of the posterior mean
    single = np.zeros((1, X.shape[1]))
    single[0, 3] = 1
    plugin = BayesianMultinomialNB("posterior_mean", beta=0.5).fit(X, y)
    np.testing.assert_allclose(model.predict_proba(single), plugin.predict_proba(single), rtol=1e-11)
    assert not np.allclose(model.predict_proba(Xt), plugin.predict_proba(Xt), rtol=1e-6)


def test_monte_carlo_bayes_approaches_closed_form():
    """T9: averaging p(y, x | π, θ) over posterior draws approaches the closed form to 1e-2."""
    X = np.array([[2, 0, 1], [3, 1, 0], [0, 2, 2], [1, 3, 1]])
    y = np.array([0, 0, 1, 1])
    model = BayesianMultinomialNB("bayes", include_multinomial_coef=True).fit(X, y)
    x = np.array([[2, 1, 0]])
    rng = np.random.default_rng(0)
    n_draws = 200_000
    likelihood = np.zeros(2)
    for c in range(2):
        theta = rng.dirichlet(model.posterior_beta_[c], size=n_draws)
        likelihood[c] = np.mean(3 * theta[:, 0] ** 2 * theta[:, 1])  # 3!/(2! 1!) θ0² θ1
    monte_carlo = likelihood * np.exp(model.class_log_prior_)
    np.testing.assert_allclose(monte_carlo / monte_carlo.sum(), model.predict_proba(x)[0], atol=1e-2)
    np.testing.assert_allclose(np.log(likelihood), model.predict_joint_log_proba(x)[0] - model.class_log_prior_,
                               rtol=1e-2)  # fmt: skip


# --- T9 properties ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "model",
    [BayesianBernoulliNB(binarize=0.0), BayesianCategoricalNB(n_categories=8), BayesianMultinomialNB(),
     BayesianMultinomialNB("posterior_mean"), BayesianMultinomialNB("map", beta=2.0)],
    ids=["bernoulli", "categorical", "multinomial-bayes", "multinomial-mean", "multinomial-map"],
)  # fmt: skip
def test_t9_properties(model, counts_data):
    X, y = counts_data
    X = np.minimum(X, 7)
    proba = model.fit(X, y).predict_proba(X)
    assert np.all(proba >= 0) and np.allclose(proba.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_array_equal(model.predict(X), model.classes_[np.argmax(proba, axis=1)])
    np.testing.assert_allclose(model.predict_log_proba(X), np.log(proba), rtol=1e-12, atol=1e-14)
    # partial_fit over chunks equals fit
    chunked = pickle.loads(pickle.dumps(model.__class__(**model.get_params())))
    for chunk in np.array_split(np.arange(X.shape[0]), 3):
        chunked.partial_fit(X[chunk], y[chunk], classes=np.unique(y))
    np.testing.assert_allclose(chunked.predict_log_proba(X), model.predict_log_proba(X), rtol=1e-10, atol=1e-12)
    # relabelling the classes permutes the columns and nothing else
    names = np.array(["zz", "aa", "mm"])
    relabelled = model.__class__(**model.get_params()).fit(X, names[y])
    order = np.searchsorted(relabelled.classes_, names)
    np.testing.assert_allclose(relabelled.predict_proba(X)[:, order], proba, rtol=1e-12, atol=1e-15)
    # pickling keeps the fit
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(model)).predict_proba(X), proba)


def test_t9_bernoulli_equals_categorical_with_two_categories(counts_data):
    X, y = counts_data
    Xb = (X > 0).astype(int)
    D = Xb.shape[1]
    beta0, beta1 = 0.7, 1.9
    bern = BayesianBernoulliNB(beta1=beta1, beta0=beta0, alpha=0.5).fit(Xb, y)
    cat = BayesianCategoricalNB(beta=[np.array([beta0, beta1])] * D, alpha=0.5, n_categories=2).fit(Xb, y)
    np.testing.assert_allclose(bern.predict_log_proba(Xb), cat.predict_log_proba(Xb), rtol=1e-12)


def test_per_class_beta_priors():
    X = np.array([[1, 0], [1, 1], [0, 1], [0, 0]])
    y = [0, 0, 1, 1]
    beta1 = np.array([[1.0, 2.0], [3.0, 4.0]])  # (n_classes, n_features)
    model = BayesianBernoulliNB("posterior_mean", beta1=beta1, beta0=1.0).fit(X, y)
    np.testing.assert_allclose(model.posterior_beta1_, beta1 + model.feature_count_)
    np.testing.assert_allclose(np.exp(model.feature_log_prob_[1, 1]), (1 + 4) / (2 + 4 + 1))


# --- zero counts, unseen categories, empty documents ------------------------------------------------------


def test_mle_zero_count_problem_warns_and_gives_nan():
    model = BayesianMultinomialNB("mle").fit([[2, 0, 1], [0, 3, 0]], [0, 1])
    with pytest.warns(RuntimeWarning, match="probability zero under every class"):
        proba = model.predict_proba([[1, 1, 0]])
    assert np.isnan(proba).all()
    np.testing.assert_array_equal(model.predict_proba([[1, 0, 1]]), [[1.0, 0.0]])


def test_mle_class_without_cases_is_never_predicted():
    model = BayesianBernoulliNB("mle").partial_fit(X_T6, Y_T6, classes=[0, 1, 2])
    proba = model.predict_proba(TEST_T6)
    np.testing.assert_array_equal(proba[:, 2], 0.0)
    assert np.all(model.predict(TEST_T6) != 2)


def test_categorical_unseen_category_raises():
    model = BayesianCategoricalNB().fit([[0, 1], [1, 2], [1, 0]], [0, 1, 1])
    with pytest.raises(ValueError, match="feature 1 has category 3, which was not seen in training"):
        model.predict([[0, 3]])
    reserved = BayesianCategoricalNB(n_categories=[2, 4]).fit([[0, 1], [1, 2], [1, 0]], [0, 1, 1])
    assert reserved.predict_proba([[0, 3]]).shape == (1, 2)
    assert [c.shape for c in reserved.category_count_] == [(2, 2), (2, 4)]


def test_categorical_partial_fit_grows_categories():
    model = BayesianCategoricalNB().partial_fit([[0, 1], [1, 0]], [0, 1], classes=[0, 1])
    model.partial_fit([[2, 1]], [1])
    batch = BayesianCategoricalNB().fit([[0, 1], [1, 0], [2, 1]], [0, 1, 1])
    np.testing.assert_allclose(model.predict_log_proba([[2, 0]]), batch.predict_log_proba([[2, 0]]), rtol=1e-13)


def test_empty_documents():
    X = np.array([[3, 0, 1], [0, 0, 0], [0, 2, 2], [0, 3, 1]])
    for method in ("bayes", "posterior_mean"):
        model = BayesianMultinomialNB(method, include_multinomial_coef=True).fit(X, [0, 0, 1, 1])
        jll = model.predict_joint_log_proba([[0, 0, 0]])
        np.testing.assert_allclose(jll[0], model.class_log_prior_, rtol=1e-14)  # p(empty | y) = 1
    with pytest.raises(ValueError, match="every training document of class 1 is empty"):
        BayesianMultinomialNB("mle").fit([[1, 0], [0, 0]], [0, 1])


@pytest.mark.parametrize(
    ("model", "X", "match"),
    [
        (BayesianMultinomialNB(), [[1, -1], [0, 2]], "Negative values in data passed to BayesianMultinomialNB"),
        (BayesianMultinomialNB(), [[1.5, 1], [0, 2]], "integer counts"),
        (BayesianMultinomialNB(), [[np.nan, 1], [0, 2]], "NaN"),
        (BayesianBernoulliNB(), [[2, 1], [0, 1]], r"binary features \(0/1\), found the value 2.0"),
        (BayesianCategoricalNB(), [[0.5, 1], [0, 1]], "integer category codes"),
        (BayesianMultinomialNB(method="mean"), [[1, 1], [0, 2]], "method must be one of"),
        (BayesianMultinomialNB(class_prior=[0.2, 0.2]), [[1, 1], [0, 2]], "summing to 1"),
        (BayesianMultinomialNB(class_prior=[1.0]), [[1, 1], [0, 2]], "one probability per class"),
        (BayesianMultinomialNB(beta=-1.0), [[1, 1], [0, 2]], "beta must hold finite pseudo-counts >= 0"),
        (BayesianMultinomialNB(beta=[1.0, 2.0, 3.0]), [[1, 1], [0, 2]], "does not broadcast"),
        (BayesianMultinomialNB(beta=0.0), [[1, 0], [0, 2]], "needs beta > 0"),
        (BayesianBernoulliNB(binarize="yes"), [[1, 1], [0, 1]], "binarize must be None or a number"),
    ],
)
def test_bad_input_messages(model, X, match):
    with pytest.raises((ValueError, TypeError), match=match):
        model.fit(X, [0, 1])


def test_wrong_shape_and_partial_fit_contract():
    model = BayesianMultinomialNB().fit([[1, 2], [2, 0]], [0, 1])
    with pytest.raises(ValueError, match="features"):
        model.predict([[1, 2, 3]])
    with pytest.raises(ValueError, match="classes must be passed on the first call"):
        BayesianMultinomialNB().partial_fit([[1, 2]], [0])
    with pytest.raises(ValueError, match="not in classes"):
        BayesianMultinomialNB().partial_fit([[1, 2]], [5], classes=[0, 1])
    fractional = BayesianMultinomialNB("posterior_mean").fit([[0.5, 2.0], [2.0, 0.1]], [0, 1])  # tf-idf is fine
    assert fractional.predict([[1.0, 0.0]]).tolist() == [1]


def ceil_check_data(X):
    """scikit-learn's check data are continuous, and the integer-count models reject them: their
    test-only subclasses round the validated, non-negative X up (no non-zero becomes 0, so no class
    becomes all-empty), and every other check runs on the real code."""
    X = X.copy()
    if sp.issparse(X):
        X.data = np.ceil(X.data)
    else:
        X = np.ceil(X)
    return X


class RoundedMultinomialNB(BayesianMultinomialNB):
    """method="bayes" needs integer counts (see :func:`ceil_check_data`)."""

    def _prepare_X(self, X, fitting):
        return super()._prepare_X(ceil_check_data(X), fitting)


class RoundedCategoricalNB(BayesianCategoricalNB):
    """Category codes must be integers (see :func:`ceil_check_data`)."""

    def _prepare_X(self, X, fitting):
        return super()._prepare_X(ceil_check_data(X), fitting)


@parametrize_with_checks(
    [
        BayesianBernoulliNB(binarize=0.0),
        BayesianBernoulliNB(method="map", beta1=2.0, beta0=2.0, binarize=0.0),
        BayesianMultinomialNB(method="posterior_mean"),
        BayesianMultinomialNB(method="mle"),
        RoundedMultinomialNB(),
        RoundedCategoricalNB(),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_integer_models_reject_the_continuous_check_data():
    X = np.array([[0.5, 1.0], [2.0, 0.0]])
    with pytest.raises(ValueError, match="integer counts"):
        BayesianMultinomialNB().fit(X, [0, 1])
    with pytest.raises(ValueError, match="integer category codes"):
        BayesianCategoricalNB().fit(X, [0, 1])


def test_multinomial_coefficient_gives_the_true_joint_log_probability(counts_data):
    from scipy import stats

    X, y = counts_data
    model = BayesianMultinomialNB("posterior_mean", include_multinomial_coef=True).fit(X, y)
    theta = np.exp(model.feature_log_prob_)
    x = X[:4]
    expected = np.array([[stats.multinomial.logpmf(row, row.sum(), theta[c]) for c in range(3)] for row in x])
    np.testing.assert_allclose(model.predict_joint_log_proba(x) - model.class_log_prior_, expected, rtol=1e-12)
    without = BayesianMultinomialNB("posterior_mean").fit(X, y)
    np.testing.assert_allclose(without.predict_proba(x), model.predict_proba(x), rtol=1e-12)
