"""DCM (Pólya) document classifier and Minka's fixed point (Murphy §3.5.5; docs/discrete.md)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import digamma
from sklearn.feature_extraction.text import TfidfTransformer
from sklearn.metrics import log_loss
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import parametrize_with_checks

from hdbayes._special_kernels import digamma_difference
from hdbayes.datasets.documents import sample_polya_urn, simulate_bursty_documents
from hdbayes.discrete.conjugate import dirichlet_multinomial_log_pmf
from hdbayes.discrete.dcm import DCMClassifier
from hdbayes.discrete.minka import (
    _exceedance_counts,
    _minka_fixed_point,
    _minka_fixed_point_real,
    dirichlet_multinomial_log_likelihood,
    fit_dirichlet_multinomial,
)
from hdbayes.discrete.naive_bayes import BayesianMultinomialNB
from hdbayes.exceptions import InputValueError


@pytest.fixture(scope="module")
def urn_data():
    return sample_polya_urn([2.0, 1.0, 0.5, 3.0, 0.2], 40, n_samples=3000, random_state=0)


def test_exceedance_counts_give_the_digamma_sums():
    X = sp.csc_matrix(np.array([[3, 0, 1], [1, 0, 4], [0, 0, 2], [2, 0, 0]]))
    pointer, exceed = _exceedance_counts(X.indptr.astype(np.int64), X.data.astype(np.int64))
    assert pointer.tolist() == [0, 3, 3, 7]
    assert exceed.tolist() == [3, 2, 1, 3, 2, 1, 1]  # column 0: #{x > 0}, #{x > 1}, #{x > 2}; column 2
    a = 0.37
    for j, column in enumerate(X.toarray().T):
        direct = np.sum(digamma(column + a) - digamma(a))
        via_exceedance = np.sum(exceed[pointer[j] : pointer[j + 1]] / (a + np.arange(pointer[j + 1] - pointer[j])))
        assert via_exceedance == pytest.approx(direct, rel=1e-12, abs=1e-14)


def test_fixed_point_never_decreases_the_likelihood(urn_data):
    X = urn_data[:300]
    start = np.full(5, 0.3)
    values = []
    for n_iter in range(1, 16):
        fit = fit_dirichlet_multinomial(X, alpha_init=start, alpha_min=1e-8, max_iter=n_iter, tol=1e-15)
        values.append(dirichlet_multinomial_log_likelihood(X, fit.alpha))
    assert np.all(np.diff(values) >= -1e-9 * abs(values[0]))
    assert values[-1] > values[0] + 1.0


def test_fixed_point_reaches_a_stationary_point_and_recovers_alpha(urn_data):
    fit = fit_dirichlet_multinomial(urn_data, alpha_min=1e-8, tol=1e-10, max_iter=5000)
    assert fit.converged
    np.testing.assert_allclose(fit.alpha, [2.0, 1.0, 0.5, 3.0, 0.2], rtol=0.1)
    # gradient of the log-likelihood: Σ_i [ψ(x_ij + α_j) − ψ(α_j)] − Σ_i [ψ(N_i + α_0) − ψ(α_0)] = 0
    X = urn_data.toarray()
    alpha = fit.alpha
    gradient = (digamma(X + alpha) - digamma(alpha)).sum(axis=0) - np.sum(
        digamma(X.sum(axis=1) + alpha.sum()) - digamma(alpha.sum())
    )
    assert np.max(np.abs(gradient)) < 1e-5 * X.shape[0]


def test_fixed_point_floors_unseen_words():
    X = np.array([[2, 0, 1], [1, 0, 3], [0, 0, 2]])
    fit = fit_dirichlet_multinomial(X, alpha_min=0.05)
    assert fit.alpha[1] == 0.05
    assert np.all(fit.alpha >= 0.05)


def test_fixed_point_bad_input():
    with pytest.raises(InputValueError, match="every document is empty"):
        fit_dirichlet_multinomial(np.zeros((3, 4)))
    with pytest.raises(InputValueError, match="non-negative counts: feature 1 has the value -0.5"):
        fit_dirichlet_multinomial([[0.5, -0.5]])
    with pytest.raises(InputValueError, match="alpha_init must hold 2"):
        fit_dirichlet_multinomial([[1, 1]], alpha_init=[1.0])
    with pytest.raises(InputValueError, match="alpha_min must be a finite number > 0"):
        fit_dirichlet_multinomial([[1, 1]], alpha_min=0.0)


def test_digamma_difference_is_the_integer_sum_at_integers():
    a = np.array([1e-6, 0.37, 2.0, 14.99, 15.0, 300.0, 1e9])
    for x in (0, 1, 2, 7, 40):
        direct = np.array([np.sum(1.0 / (ai + np.arange(x))) for ai in a])
        np.testing.assert_allclose(digamma_difference(a, x), direct, rtol=1e-12)
    from scipy.special import digamma

    np.testing.assert_allclose(digamma_difference(0.37, 2.5), digamma(2.87) - digamma(0.37), rtol=1e-13)


def test_real_fixed_point_equals_the_integer_one_at_integer_counts(urn_data):
    """The Gamma-function (digamma) form of Minka's iteration on integer counts follows the
    exceedance-count form: same α, same number of iterations."""
    X = urn_data[:400].tocsc()
    X.eliminate_zeros()
    lengths = np.asarray(X.sum(axis=1)).ravel()
    start = np.asarray(X.sum(axis=0)).ravel() / X.shape[0]
    pointer, exceed = _exceedance_counts(X.indptr.astype(np.int64), X.data.astype(np.int64))
    length_exceed = np.bincount(lengths.astype(np.int64))[::-1].cumsum()[::-1][1:].astype(np.float64)
    integer = _minka_fixed_point(pointer, exceed, length_exceed, start.copy(), 0, 1e-8, 500, 1e-10)
    columns = np.repeat(np.arange(X.shape[1]), np.diff(X.indptr))
    real = _minka_fixed_point_real(columns, X.data.astype(np.float64), lengths[lengths > 0], start.copy(), 0, 1e-8,
                                   500, 1e-10)  # fmt: skip
    assert integer[2] and real[2] and abs(integer[1] - real[1]) <= 1
    np.testing.assert_allclose(real[0], integer[0], rtol=1e-8)


def test_classifier_on_tf_idf_weights():
    corpus = simulate_bursty_documents(300, 200, random_state=5)
    weights = TfidfTransformer().fit_transform(corpus.X)
    model = DCMClassifier().fit(weights[:200], corpus.y[:200])
    proba = model.predict_proba(weights[200:])
    assert np.all(np.isfinite(model.concentration_)) and np.all(model.concentration_ > 0)
    assert np.all(np.isfinite(proba)) and model.score(weights[200:], corpus.y[200:]) > 0.7
    expected = dirichlet_multinomial_log_pmf(weights[200:], model.concentration_, include_coefficient=False)
    np.testing.assert_allclose(model.predict_joint_log_proba(weights[200:]), expected + model.class_log_prior_,
                               rtol=1e-12)  # fmt: skip
    with pytest.raises(InputValueError, match="include_multinomial_coef=False"):
        DCMClassifier(include_multinomial_coef=True).fit(weights[:200], corpus.y[:200])


def test_classifier_prediction_is_the_dcm_of_the_fitted_alpha():
    corpus = simulate_bursty_documents(300, 200, random_state=2)
    model = DCMClassifier(include_multinomial_coef=True).fit(corpus.X[:200], corpus.y[:200])
    counts = np.bincount(corpus.y[:200], minlength=2)
    np.testing.assert_allclose(np.exp(model.class_log_prior_), (counts + 1) / (200 + 2), rtol=1e-14)
    for c in range(2):
        fit = fit_dirichlet_multinomial(corpus.X[:200][corpus.y[:200] == c])
        floor = fit.alpha.sum() / 200  # min_concentration="auto": α̂_c0 / D
        np.testing.assert_allclose(model.concentration_[c], np.maximum(fit.alpha, floor), rtol=1e-14)
        assert model.total_concentration_[c] == fit.alpha.sum()
        assert np.any(fit.alpha < floor) and np.any(fit.alpha > floor)
    absolute = DCMClassifier(min_concentration=0.05).fit(corpus.X[:200], corpus.y[:200])
    assert absolute.concentration_.min() == 0.05
    expected = dirichlet_multinomial_log_pmf(corpus.X[200:], model.concentration_) + model.class_log_prior_
    np.testing.assert_allclose(model.predict_joint_log_proba(corpus.X[200:]), expected, rtol=1e-13)
    assert model.converged_.all() and np.all(model.n_iter_ >= 1)
    empty = np.zeros((1, 200))
    np.testing.assert_allclose(model.predict_log_proba(empty)[0], model.class_log_prior_ - np.log(
        np.exp(model.class_log_prior_).sum()), rtol=1e-13)  # fmt: skip


def test_dcm_beats_multinomial_on_bursty_documents():
    corpus = simulate_bursty_documents(1200, 1000, concentration=20, class_spread=0.35, mean_length=60, random_state=1)
    X_train, y_train, X_test, y_test = corpus.X[:600], corpus.y[:600], corpus.X[600:], corpus.y[600:]
    dcm = DCMClassifier().fit(X_train, y_train)
    multinomial = BayesianMultinomialNB("posterior_mean").fit(X_train, y_train)
    dcm_loss = log_loss(y_test, dcm.predict_proba(X_test))
    multinomial_loss = log_loss(y_test, multinomial.predict_proba(X_test))
    assert dcm_loss < multinomial_loss
    assert dcm.score(X_test, y_test) > 0.7


@pytest.mark.parametrize(
    ("X", "y", "match"),
    [
        ([[1, 0], [0, 0], [0, 0]], [0, 1, 1], "class 1 has no words"),
        ([[1, -2], [0, 1]], [0, 1], "Negative values in data passed to DCMClassifier: feature 1 has the value -2"),
        ([[1, np.nan], [0, 1]], [0, 1], "NaN"),
        ([[1, 2], [0, 1]], [0, 1, 1], "inconsistent numbers of samples"),
        ([[1, 2], [0, 1]], [0, 0], r"y has a single class \(0\)"),
    ],
)
def test_classifier_bad_input(X, y, match):
    with pytest.raises(InputValueError, match=match):
        DCMClassifier().fit(X, y)


def test_classifier_parameters_and_shapes():
    with pytest.raises(InvalidParameterError, match="'min_concentration' parameter of DCMClassifier must be"):
        DCMClassifier(min_concentration=-1).fit([[1, 0], [0, 1]], [0, 1])
    with pytest.raises(InvalidParameterError, match="'max_iter' parameter of DCMClassifier must be an int"):
        DCMClassifier(max_iter=2.5).fit([[1, 0], [0, 1]], [0, 1])
    with pytest.raises(InvalidParameterError, match="'tol' parameter"):
        DCMClassifier(tol=0.0).fit([[1, 0], [0, 1]], [0, 1])
    prior = DCMClassifier(class_pseudo_count=[3.0, 0.0]).fit([[1, 0], [0, 1], [2, 1]], [0, 1, 1])
    np.testing.assert_allclose(np.exp(prior.class_log_prior_), [(1 + 3) / 6, (2 + 0) / 6], rtol=1e-14)
    model = DCMClassifier().fit([[1, 0], [0, 1]], [0, 1])
    with pytest.raises(InputValueError, match="features"):
        model.predict([[1, 0, 0]])
    assert hasattr(model, "partial_fit")  # from mergeable histograms (tests/test_dask_discrete.py)
    restored = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(restored.predict_proba([[3, 1]]), model.predict_proba([[3, 1]]))


def test_non_convergence_warns():
    X = sample_polya_urn([2.0, 1.0, 0.5], 20, n_samples=50, random_state=1)
    with pytest.warns(UserWarning, match="did not converge"):
        model = DCMClassifier(max_iter=1).fit(X, np.arange(50) % 2)
    assert not model.converged_.any()


# the check data are not over-dispersed, so the likelihood grows towards the multinomial limit
# α_0 → ∞ and the fixed point may stop there with a ConvergenceWarning (documented behaviour)
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@parametrize_with_checks([DCMClassifier()])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_scale_newton_step_makes_the_fixed_point_fast():
    # documents with a large concentration: the plain fixed point crawls along α_0 for
    # hundreds of iterations; with the Newton step on the scale a few dozen suffice
    corpus = simulate_bursty_documents(400, 2000, concentration=1000.0, mean_length=150, random_state=3)
    fit = fit_dirichlet_multinomial(corpus.X[corpus.y == 0])
    assert fit.converged and fit.n_iter <= 50
    assert fit.alpha.sum() == pytest.approx(1000.0, rel=0.3)


def test_underdispersed_data_hit_the_multinomial_limit():
    # identical documents: no over-dispersion, the likelihood grows with α_0 without bound
    X = np.tile([[3, 2, 5]], (20, 1))
    fit = fit_dirichlet_multinomial(X)
    assert not fit.converged and fit.alpha.sum() == pytest.approx(1e10, rel=1e-6)
    np.testing.assert_allclose(fit.alpha / fit.alpha.sum(), [0.3, 0.2, 0.5], rtol=1e-6)
    with pytest.warns(UserWarning, match="did not converge"):
        DCMClassifier().fit(np.vstack([X, X[:, ::-1]]), [0] * 20 + [1] * 20)
