"""Bayesian naive Bayes family (Murphy §3.5, §3.5.3, §3.5.5): T5, T6, T9 (docs/discrete.md), scikit-learn
oracles."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.special import logsumexp
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.naive_bayes import BernoulliNB, CategoricalNB, MultinomialNB
from sklearn.utils.estimator_checks import parametrize_with_checks

from hdbayes.discrete._base import log_dirichlet_estimate
from hdbayes.discrete.conjugate import DirichletMultinomialTables, dirichlet_multinomial_log_pmf
from hdbayes.discrete.dcm import DCMClassifier
from hdbayes.discrete.naive_bayes import BayesianBernoulliNB, BayesianCategoricalNB, BayesianMultinomialNB
from hdbayes.exceptions import InputValueError, is_input_error

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
    assert _p0(BayesianBernoulliNB("posterior_mean", class_pseudo_count=0))[0] == pytest.approx(48 / 73, rel=1e-13)
    map_model = BayesianBernoulliNB("map", class_pseudo_count=2, alpha=2).fit(X_T6, Y_T6)
    mean_model = BayesianBernoulliNB("posterior_mean").fit(X_T6, Y_T6)
    np.testing.assert_allclose(map_model.feature_log_prob_, mean_model.feature_log_prob_, rtol=1e-14)
    np.testing.assert_allclose(map_model.class_log_prior_, mean_model.class_log_prior_, rtol=1e-14)


def test_log_dirichlet_estimate_rules():
    counts = np.array([3.0, 0.0, 1.0])
    np.testing.assert_allclose(np.exp(log_dirichlet_estimate(counts, 2.0, "posterior_mean")), [0.5, 0.2, 0.3])
    np.testing.assert_allclose(np.exp(log_dirichlet_estimate(counts, 0.0, "mle")), [0.75, 0, 0.25])
    # Beta boundary modes (this library's rules, docs/discrete.md): a < 1 <= b -> 0, b < 1 <= a -> 1
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
    with pytest.raises(InputValueError, match=r"method='map'.*index \(2, 0, 0\)"):
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
    ours = BayesianMultinomialNB("posterior_mean", class_pseudo_count=0, alpha=a).fit(X, y)
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
    ours = BayesianBernoulliNB("posterior_mean", class_pseudo_count=0, alpha=a).fit(Xb, y)
    ref = BernoulliNB(alpha=a, force_alpha=True, binarize=None).fit(Xb, y)
    np.testing.assert_allclose(ours.predict_log_proba(Xb), ref.predict_log_proba(Xb), rtol=0, atol=1e-10)
    np.testing.assert_allclose(ours.predict_proba(Xb), ref.predict_proba(Xb), rtol=0, atol=1e-10)
    binarized = BayesianBernoulliNB("posterior_mean", class_pseudo_count=0, alpha=a, binarize=0.0)
    binarized.fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(binarized.predict_log_proba(X), ref.predict_log_proba(Xb), rtol=0, atol=1e-10)


def test_matches_sklearn_categorical_nb():
    rng = np.random.default_rng(1)
    X = rng.integers(0, 4, size=(80, 6))
    y = rng.integers(0, 3, size=80)
    ours = BayesianCategoricalNB("posterior_mean", class_pseudo_count=0, alpha=0.7).fit(X, y)
    ref = CategoricalNB(alpha=0.7, force_alpha=True).fit(X, y)
    np.testing.assert_allclose(ours.predict_log_proba(X), ref.predict_log_proba(X), rtol=0, atol=1e-10)


# --- the multinomial Bayes predictive is the DCM ----------------------------------------------------------


def test_multinomial_bayes_is_dcm_of_posterior(counts_data):
    X, y = counts_data
    model = BayesianMultinomialNB("bayes", alpha=0.5, include_multinomial_coef=True).fit(X, y)
    Xt = X[:7]
    expected = dirichlet_multinomial_log_pmf(Xt, 0.5 + model.feature_count_) + model.class_log_prior_
    np.testing.assert_allclose(model.predict_joint_log_proba(Xt), expected, rtol=1e-13)
    # a document with one word: the DCM equals the plug-in of the posterior mean
    single = np.zeros((1, X.shape[1]))
    single[0, 3] = 1
    plugin = BayesianMultinomialNB("posterior_mean", alpha=0.5).fit(X, y)
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
    [BayesianBernoulliNB(binarize=0.0), BayesianCategoricalNB(n_levels=8), BayesianMultinomialNB(),
     BayesianMultinomialNB("posterior_mean"), BayesianMultinomialNB("map", alpha=2.0)],
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


@pytest.mark.parametrize("beta", [0.7, 1.9])
def test_t9_bernoulli_equals_categorical_with_two_categories(counts_data, beta):
    X, y = counts_data
    Xb = (X > 0).astype(int)
    D = Xb.shape[1]
    bern = BayesianBernoulliNB(alpha=beta, class_pseudo_count=0.5).fit(Xb, y)
    cat = BayesianCategoricalNB(alpha=[np.array([beta, beta])] * D, class_pseudo_count=0.5, n_levels=2).fit(Xb, y)
    np.testing.assert_allclose(bern.predict_log_proba(Xb), cat.predict_log_proba(Xb), rtol=1e-12)
    np.testing.assert_allclose(
        bern.predict_log_proba(Xb), BayesianCategoricalNB(alpha=beta, class_pseudo_count=0.5).fit(Xb, y)
        .predict_log_proba(Xb), rtol=1e-12,
    )  # fmt: skip


def test_per_class_beta_priors():
    X = np.array([[1, 0], [1, 1], [0, 1], [0, 0]])
    y = [0, 0, 1, 1]
    beta = np.array([[1.0, 2.0], [3.0, 4.0]])  # (n_classes, n_features)
    model = BayesianBernoulliNB("posterior_mean", alpha=beta).fit(X, y)
    np.testing.assert_allclose(model.posterior_beta1_, beta + model.feature_count_)
    np.testing.assert_allclose(model.posterior_beta0_, beta + model.class_count_[:, None] - model.feature_count_)
    np.testing.assert_allclose(np.exp(model.feature_log_prob_[1, 1]), (1 + 4) / (2 + 4 + 4))


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
    reserved = BayesianCategoricalNB(n_levels=[2, 4]).fit([[0, 1], [1, 2], [1, 0]], [0, 1, 1])
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
        (BayesianMultinomialNB(), [[1, -1], [0, 2]],
         "Negative values in data passed to BayesianMultinomialNB: feature 1 has the value -1"),
        (BayesianMultinomialNB(include_multinomial_coef=True), [[1.5, 1], [0, 2]],
         r"integer counts: feature 0 has the value 1.5; .*include_multinomial_coef=False"),
        (BayesianMultinomialNB(), [[np.nan, 1], [0, 2]], "NaN"),
        (BayesianBernoulliNB(binarize=None), [[2, 1], [0, 1]],
         r"binary features \(0/1\): feature 0 has the value 2; pass binarize="),
        (BayesianCategoricalNB(), [[0.5, 1], [0, 1]], "integer category codes 0, 1, 2, ...: feature 0 has the value 0.5"
         ),
        (BayesianCategoricalNB(), [[3e9, 1], [0, 1]], "feature 0 has the category code 3e[+]09; codes must be below"),
        (BayesianMultinomialNB(method="mean"), [[1, 1], [0, 2]], "'method' parameter of BayesianMultinomialNB must be"),
        (BayesianMultinomialNB(class_prior=[0.2, 0.2]), [[1, 1], [0, 2]], "summing to 1"),
        (BayesianMultinomialNB(class_prior=[1.0]), [[1, 1], [0, 2]], "one probability per class"),
        (BayesianMultinomialNB(alpha=-1.0), [[1, 1], [0, 2]], "'alpha' parameter of BayesianMultinomialNB must be"),
        (BayesianMultinomialNB(alpha=[-1.0, 1.0]), [[1, 1], [0, 2]], "alpha must hold finite pseudo-counts >= 0"),
        (BayesianMultinomialNB(alpha=[1.0, 2.0, 3.0]), [[1, 1], [0, 2]], "does not broadcast"),
        (BayesianMultinomialNB(alpha=0.0), [[1, 0], [0, 2]], "needs alpha > 0"),
        (BayesianMultinomialNB(class_pseudo_count=[1.0, -1.0]), [[1, 1], [0, 2]],
         "class_pseudo_count must hold finite pseudo-counts >= 0"),
        (BayesianBernoulliNB(binarize="yes"), [[1, 1], [0, 1]], r"'binarize' parameter .* str among \{'median'\}"),
        (BayesianBernoulliNB(binarize=[0.5]), [[1, 1], [0, 1]], "'binarize' parameter of BayesianBernoulliNB must be"),
        (BayesianBernoulliNB(class_prior="flat"), [[1, 1], [0, 1]], "'class_prior' parameter"),
        (BayesianCategoricalNB(n_levels=[2, 2, 2]), [[1, 1], [0, 1]], "n_levels has 3 entries, X has 2"),
    ],
)  # fmt: skip
def test_bad_input_messages(model, X, match):
    with pytest.raises((ValueError, TypeError), match=match) as info:
        model.fit(X, [0, 1])
    assert is_input_error(info.value)  # InputValueError/InputTypeError, or scikit-learn's InvalidParameterError
    assert "np.float64" not in str(info.value)


def test_wrong_shape_and_partial_fit_contract():
    model = BayesianMultinomialNB().fit([[1, 2], [2, 0]], [0, 1])
    with pytest.raises(InputValueError, match="features"):
        model.predict([[1, 2, 3]])
    with pytest.raises(InputValueError, match="classes must be passed on the first call"):
        BayesianMultinomialNB().partial_fit([[1, 2]], [0])
    with pytest.raises(InputValueError, match=r"the label 5, which is not in classes \[0, 1\]"):
        BayesianMultinomialNB().partial_fit([[1, 2]], [5], classes=[0, 1])
    with pytest.raises(InputValueError, match=r"y has a single class \(0\)"):
        BayesianMultinomialNB().partial_fit([[1, 2]], [0], classes=[0])
    fractional = BayesianMultinomialNB("posterior_mean").fit([[0.5, 2.0], [2.0, 0.1]], [0, 1])  # tf-idf is fine
    assert fractional.predict([[1.0, 0.0]]).tolist() == [1]


# --- scikit-learn conventions: one class, a continuous target, feature names, overflow ------------------

CLASSIFIERS = [BayesianBernoulliNB(), BayesianCategoricalNB(), BayesianMultinomialNB(), DCMClassifier()]
CLASSIFIER_IDS = ["bernoulli", "categorical", "multinomial", "dcm"]


@pytest.mark.parametrize("model", CLASSIFIERS, ids=CLASSIFIER_IDS)
def test_a_single_class_is_refused_in_fit_naming_it(model):
    X = np.array([[1, 0, 2], [0, 1, 1], [2, 1, 0]])
    match = r"y has a single class \('spam'\), but a classifier needs more than one class"
    with pytest.raises(InputValueError, match=match):
        model.fit(X, ["spam"] * 3)
    assert not hasattr(model, "classes_")  # refused before anything was fitted
    with pytest.raises(InputValueError, match="Unknown label type: continuous"):
        model.fit(X, [0.5, 1.25, 2.0])


@pytest.mark.parametrize(
    ("model", "value"),
    [(BayesianBernoulliNB(binarize=None), 3.0)] + [(model, -3.0) for model in CLASSIFIERS[1:]],
    ids=CLASSIFIER_IDS,
)
def test_messages_name_the_columns_of_a_data_frame(model, value):
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame({"apple": [1, 0, 1, 1], "pear": [0, 1, 1, 0]})
    model.fit(X, [0, 0, 1, 1])
    bad = pd.DataFrame({"apple": [1.0], "pear": [value]})
    with pytest.raises(InputValueError, match=f"feature 'pear' has the value {value:g}"):
        model.predict(bad)


@pytest.mark.parametrize(
    "model", [BayesianMultinomialNB(), BayesianMultinomialNB("posterior_mean"), BayesianMultinomialNB("mle"),
              DCMClassifier()], ids=["bayes", "posterior_mean", "mle", "dcm"],
)  # fmt: skip
def test_overflow_is_an_input_error_naming_the_value(model):
    X = np.array([[3.0, 0.0, 1.0], [2.0, 1.0, 0.0], [0.0, 2.0, 2.0], [0.0, 3.0, 1.0]])
    model.fit(X, [0, 0, 1, 1])
    with pytest.raises(InputValueError, match=r"not finite; the value 1.5e\+308 of feature 1 is too large"):
        model.predict_proba([[1.0, 1.5e308, 0.0]])
    huge = X.copy()
    huge[0, 2] = huge[1, 2] = 1e308
    with pytest.raises(InputValueError, match=r"not finite; the value 1e\+308 of feature 2 is too large"):
        model.__class__(**model.get_params()).fit(huge, [0, 0, 1, 1])


def test_zero_pseudo_counts_give_legitimate_zero_probabilities():
    # alpha = 0: a feature never on in class 0 has θ = 0 there, so a case with it on is impossible in class 0
    model = BayesianBernoulliNB("posterior_mean", alpha=0.0).fit([[0, 1], [0, 0], [1, 1], [0, 0]], [0, 0, 1, 1])
    np.testing.assert_array_equal(model.predict_proba([[1, 0]]), [[0.0, 1.0]])
    multinomial = BayesianMultinomialNB("posterior_mean", alpha=0.0).fit([[2, 0], [0, 3]], [0, 1])
    np.testing.assert_array_equal(multinomial.predict_proba([[1, 0]]), [[1.0, 0.0]])


def test_bernoulli_and_categorical_never_overflow():
    X = np.array([[1e308, 0.0], [0.0, 1.0], [1.0, 1e308]])
    proba = BayesianBernoulliNB().fit(X, [0, 1, 1]).predict_proba(X)  # 1e308 > 0 is just a one
    assert np.all(np.isfinite(proba))


# --- binarize: BernoulliNB's convention, the same answer for every input format ---------------------------


@pytest.fixture(scope="module")
def signed_data():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 12)) * (rng.random((40, 12)) < 0.4)  # many zeros, negative and positive values
    y = rng.integers(0, 2, size=40)
    return X, y


@pytest.mark.parametrize("binarize", [-0.5, 0.0, 0.3, "median"])
def test_binarize_gives_the_same_answer_for_every_input_format(signed_data, binarize):
    X, y = signed_data
    dense = BayesianBernoulliNB(binarize=binarize).fit(X, y)
    expected = dense.predict_proba(X)
    for fmt in ("csr", "csc", "coo"):
        Xs = sp.random(1, 1).asformat(fmt).__class__(X)
        model = BayesianBernoulliNB(binarize=binarize).fit(Xs, y)
        np.testing.assert_allclose(model.predict_proba(Xs), expected, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(model.predict_proba(X), expected, rtol=1e-12, atol=1e-15)
        np.testing.assert_array_equal(model.feature_count_, dense.feature_count_)
    thresholds = np.median(X, axis=0) if binarize == "median" else np.full(X.shape[1], binarize)
    np.testing.assert_array_equal(dense.binarize_thresholds_, thresholds)
    counts = np.array([((X > thresholds)[y == c]).sum(axis=0) for c in (0, 1)])
    np.testing.assert_array_equal(dense.feature_count_, counts)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**31 - 1),
    threshold=st.one_of(st.floats(-3.0, 3.0), st.sampled_from([0.0, -0.0, "median"])),
    density=st.floats(0.0, 1.0),
)
def test_binarize_dense_and_sparse_agree_property(seed, threshold, density):
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(12, 5)), 1) * (rng.random((12, 5)) < density)
    y = np.arange(12) % 3
    expected = BayesianBernoulliNB(binarize=threshold).fit(X, y).predict_log_proba(X)
    for fmt in (sp.csr_matrix, sp.csc_matrix, sp.coo_matrix):
        got = BayesianBernoulliNB(binarize=threshold).fit(fmt(X), y).predict_log_proba(fmt(X))
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_binarize_negative_threshold_counts_the_implicit_zeros(signed_data):
    # the bug: implicit zeros of a sparse matrix were never binarized, so with t < 0 (0 > t: a one)
    # dense and CSR copies gave probabilities up to 0.335 apart
    X, y = signed_data
    sparse = BayesianBernoulliNB(binarize=-0.5).fit(sp.csr_matrix(X), y)
    assert sparse.feature_count_.sum() == ((X > -0.5).sum())


def test_binarize_default_leaves_binary_data_and_pins_the_numbers():
    assert BayesianBernoulliNB().binarize == 0.0
    np.testing.assert_array_equal(_p0(BayesianBernoulliNB()), _p0(BayesianBernoulliNB(binarize=None)))
    counts = X_T6 * np.array([3, 7])  # counts: presence/absence by default
    np.testing.assert_array_equal(BayesianBernoulliNB().fit(counts, Y_T6).predict_proba(TEST_T6)[:, 0], _p0(
        BayesianBernoulliNB()))  # fmt: skip
    model = BayesianBernoulliNB(binarize="median").fit([[1.0, 10.0], [2.0, 30.0], [3.0, 20.0]], [0, 1, 1])
    np.testing.assert_array_equal(model.binarize_thresholds_, [2.0, 20.0])
    np.testing.assert_array_equal(model.feature_count_, [[0, 0], [1, 1]])


# --- the multinomial model on real values (tf-idf) ---------------------------------------------------------


def test_gamma_form_equals_the_integer_form_at_integer_counts(counts_data):
    X, y = counts_data
    alpha = np.random.default_rng(4).uniform(0.05, 40.0, size=(3, X.shape[1]))  # both sides of a = 15
    tables = DirichletMultinomialTables(alpha)
    Xs = sp.csr_matrix(X)
    np.testing.assert_allclose(tables._rising_factorial_sums_gamma(Xs), tables._rising_factorial_sums(Xs), rtol=1e-12)
    # and the whole pmf against the definition with log-Gamma functions
    from scipy.special import gammaln

    N, a0 = X.sum(axis=1)[:, None], alpha.sum(axis=1)[None, :]
    direct = gammaln(a0) - gammaln(N + a0) + np.array([(gammaln(X + a) - gammaln(a)).sum(axis=1) for a in alpha]).T
    np.testing.assert_allclose(tables.log_pmf(Xs, False), direct, rtol=1e-11)


def test_multinomial_accepts_tf_idf_like_multinomial_nb():
    docs = ["apple pear apple", "pear fig", "kiwi lime kiwi", "lime lemon", "apple fig fig", "lemon kiwi"]
    y = [0, 0, 1, 1, 0, 1]
    X = TfidfVectorizer().fit_transform(docs)
    ref = MultinomialNB(alpha=1.0).fit(X, y)
    ours = BayesianMultinomialNB("posterior_mean", class_pseudo_count=0).fit(X, y)
    np.testing.assert_allclose(ours.predict_log_proba(X), ref.predict_log_proba(X), rtol=0, atol=1e-10)
    for method in ("bayes", "mle", "map"):
        model = BayesianMultinomialNB(method, alpha=2.0).fit(X, y)
        proba = model.predict_proba(X)
        assert np.all(np.isfinite(proba)) and model.score(X, y) == 1.0
    # the Gamma-function form: a real "count" between two integers gives a likelihood between theirs
    model = BayesianMultinomialNB().fit([[2, 0], [0, 2]], [0, 1])
    jll = model.predict_joint_log_proba([[1.0, 0.0], [1.5, 0.0], [2.0, 0.0]])
    assert jll[0, 0] > jll[1, 0] > jll[2, 0]
    with pytest.raises(InputValueError, match="include_multinomial_coef=False"):
        BayesianMultinomialNB(include_multinomial_coef=True).fit(X, y)


def test_categorical_refuses_non_integral_codes_where_categorical_nb_truncates():
    X = np.array([[0.0, 1.0], [2.0, 0.0], [1.0, 1.0]])
    model = BayesianCategoricalNB().fit(X, [0, 1, 1])  # floats holding integers are codes
    assert model.n_levels_.tolist() == [3, 2]
    CategoricalNB().fit([[2.7, 1.0], [0.0, 0.0]], [0, 1])  # scikit-learn takes 2.7 as category 2, silently
    with pytest.raises(InputValueError, match="feature 0 has the value 2.7; encode categories"):
        BayesianCategoricalNB().fit([[2.7, 1.0], [0.0, 0.0]], [0, 1])
    with pytest.raises(InputValueError, match="feature 1 has category 5, which was not seen"):
        model.predict([[0, 5]])


# every estimator with its defaults (and variants where a parameter changes what is accepted), no test subclass
@parametrize_with_checks(
    [
        BayesianBernoulliNB(),
        BayesianBernoulliNB(binarize="median"),
        BayesianBernoulliNB(method="map", alpha=2.0),
        BayesianCategoricalNB(),
        BayesianMultinomialNB(),
        BayesianMultinomialNB(method="posterior_mean"),
        BayesianMultinomialNB(method="mle"),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


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


# --- the one classifier base: ties to the first class, decisions under a loss --------------------------------


@pytest.mark.parametrize("model", CLASSIFIERS, ids=CLASSIFIER_IDS)
def test_exact_ties_go_to_the_first_class(model):
    X = np.array([[1, 0], [0, 1]])  # mirror images: (1, 1) and (0, 0) are equally likely under both classes
    model.fit(X, ["b", "a"])
    proba = model.predict_proba([[1, 1], [0, 0]])
    np.testing.assert_array_equal(proba[:, 0], proba[:, 1])
    assert model.predict([[1, 1], [0, 0]]).tolist() == ["a", "a"]


@pytest.mark.parametrize("model", CLASSIFIERS, ids=CLASSIFIER_IDS)
def test_predict_with_a_loss_matrix_minimises_the_expected_loss(model, counts_data):
    X, y = counts_data
    X = np.minimum(X, 7)
    model.fit(X, y)
    loss = np.array([[0.0, 1.0, 1.0], [1e6, 0.0, 1e6], [1.0, 1.0, 0.0]])  # missing class 1 is expensive
    decisions = model.predict(X, loss=loss)
    np.testing.assert_array_equal(decisions, model.classes_[np.argmin(model.predict_proba(X) @ loss, axis=1)])
    assert (decisions == 1).sum() > (model.predict(X) == 1).sum()
    np.testing.assert_array_equal(model.predict(X, loss=1 - np.eye(3)), model.predict(X))
    with pytest.raises(InputValueError):
        model.predict(X, loss=np.ones((2, 2)))
