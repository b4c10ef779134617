"""BayesianLinearClassifier: scikit-learn contract, invariances, convergence and the dual form's predictions."""

import warnings

import numpy as np
import pytest
from scipy.special import ndtr
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import parametrize_with_checks

from hdbayes import BayesianLinearClassifier
from hdbayes.linear.ep import probit_ep


def _data(seed=0, n=40, p=60, n_classes=2):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % n_classes
    X = rng.normal(size=(n, p))
    X[:, :5] += 1.2 * y[:, None]
    return X, y


@parametrize_with_checks([BayesianLinearClassifier()])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_probabilities_are_finite_and_sum_to_one_for_any_labels():
    X, y = _data(n_classes=3)
    labels = np.array(["b", "a", "c"])[y]
    model = BayesianLinearClassifier(random_state=0).fit(X, labels)
    proba = model.predict_proba(X[:7])
    assert list(model.classes_) == ["a", "b", "c"]
    assert np.all(np.isfinite(proba)) and np.allclose(proba.sum(axis=1), 1.0)
    assert model.converged_


def test_binary_predictions_equal_the_direct_ep_computation():
    # one grid point: the estimator's probability is Φ(μ*/√(1+σ*²)) of the EP fit on the standardised data
    X, y = _data(1, n=30, p=8)
    model = BayesianLinearClassifier(n_grid=1, log_variance_mean=1.0, coefficient_prior="isotropic",
                                     scaling="standardise", unrelated_prior=0.0).fit(X, y)
    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    X_new = np.random.default_rng(2).normal(size=(5, 8))
    Z_new = (X_new - X.mean(axis=0)) / X.std(axis=0)
    s2 = np.exp(1.0)
    fit = probit_ep(s2 * Z @ Z.T / 8 + 10.0, np.where(y == 1, 1.0, -1.0), tol=1e-12)
    mean, var = fit.predict_latent(s2 * Z @ Z_new.T / 8 + 10.0, s2 * np.sum(Z_new**2, axis=1) / 8 + 10.0)
    np.testing.assert_allclose(model.predict_proba(X_new)[:, 1], ndtr(mean / np.sqrt(1 + var)), atol=1e-7)


def test_swapping_the_two_labels_swaps_the_probabilities():
    X, y = _data(3)
    proba = BayesianLinearClassifier().fit(X, y).predict_proba(X[:9])
    swapped = BayesianLinearClassifier().fit(X, 1 - y).predict_proba(X[:9])
    np.testing.assert_allclose(swapped, proba[:, ::-1], atol=1e-7)


@pytest.mark.parametrize("multiclass", ["softmax", "ovr", "probit"])
def test_relabelling_classes_permutes_the_probabilities(multiclass):
    X, y = _data(4, n_classes=3)
    perm = np.array([2, 0, 1])
    kwargs = {"multiclass": multiclass, "random_state": 0, "n_draws": 2**14}
    if multiclass == "softmax":
        kwargs["hyperparameters"] = "average"  # stacking needs EP's leave-one-out densities
    proba = BayesianLinearClassifier(**kwargs).fit(X, y).predict_proba(X[:9])
    relabelled = BayesianLinearClassifier(**kwargs).fit(X, perm[y]).predict_proba(X[:9])
    # softmax: the quasi-Monte-Carlo average over the latent follows the class order (error ~1e-3 at 2¹⁴ draws)
    np.testing.assert_allclose(relabelled[:, perm], proba, atol=5e-3 if multiclass == "softmax" else 1e-7)


def test_permuting_the_training_cases_leaves_the_predictions_unchanged():
    X, y = _data(5)
    order = np.random.default_rng(0).permutation(len(y))
    proba = BayesianLinearClassifier().fit(X, y).predict_proba(X[:6])
    permuted = BayesianLinearClassifier().fit(X[order], y[order]).predict_proba(X[:6])
    np.testing.assert_allclose(permuted, proba, atol=1e-7)


@pytest.mark.parametrize("scaling", ["standardise", "common", "both"])
def test_constant_and_rescaled_features_change_nothing(scaling):
    # standardised features: any rescaling of each feature; one common scale: the same factor for all features
    X, y = _data(6, p=20)
    proba = BayesianLinearClassifier(scaling=scaling).fit(X, y).predict_proba(X[:6])
    factor = np.linspace(0.01, 100.0, 20) if scaling == "standardise" else 37.0
    scaled = X * factor + np.linspace(-5.0, 5.0, 20)
    padded = np.column_stack([scaled, np.full(len(y), 7.0), np.zeros(len(y))])
    model = BayesianLinearClassifier(scaling=scaling).fit(padded, y)
    assert model.n_varying_features_ == 20
    np.testing.assert_allclose(model.predict_proba(padded[:6]), proba, atol=1e-7)
    moved = padded[:6].copy()
    moved[:, 20:] = 1e3  # a constant feature that moves in test data contributes nothing
    np.testing.assert_allclose(model.predict_proba(moved), proba, atol=1e-7)


def test_default_tolerance_gives_converged_predictions():
    X, y = _data(7, n=50, p=200)
    default = BayesianLinearClassifier().fit(X, y).predict_proba(X)
    tight = BayesianLinearClassifier(tol=1e-13, max_iter=20000).fit(X, y).predict_proba(X)
    np.testing.assert_allclose(default, tight, atol=1e-4)


def test_non_convergence_warns_and_is_recorded():
    X, y = _data(8)
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        model = BayesianLinearClassifier(max_iter=2).fit(X, y)
    assert model.converged_ is False


def test_the_span_prior_is_more_confident_than_the_isotropic_one_off_the_training_span():
    X, y = _data(9, n=30, p=300)
    X_new = np.random.default_rng(1).normal(size=(10, 300))
    X_new[:, :5] += 1.2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        iso = BayesianLinearClassifier(coefficient_prior="isotropic").fit(X, y).predict_proba(X_new)
        span = BayesianLinearClassifier(coefficient_prior="span").fit(X, y).predict_proba(X_new)
    assert np.all(np.abs(span[:, 1] - 0.5) >= np.abs(iso[:, 1] - 0.5) - 1e-12)


def test_maximise_uses_one_grid_point():
    X, y = _data(10)
    model = BayesianLinearClassifier(hyperparameters="maximise").fit(X, y)
    assert np.count_nonzero(model.weights_) == 1
    # two scalings × the two candidate priors (factor and isotropic) × 31 grid points
    assert model.weights_.shape == model.log_evidence_.shape == model.elpd_loo_.shape == (1, 4, 31)
    assert model.candidate_priors_ == ("factor", "isotropic", "factor", "isotropic")


def test_multinomial_probit_converges_on_the_whole_grid_and_gives_probabilities():
    X, y = _data(11, n=30, p=40, n_classes=4)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # the centred EP converges at every ln s² of the grid
        model = BayesianLinearClassifier(multiclass="probit", coefficient_prior="span").fit(X, y)
    assert model.converged_
    assert np.max(model.n_iter_) <= 200
    proba = model.predict_proba(X[:5])
    assert np.all(np.isfinite(proba)) and np.allclose(proba.sum(axis=1), 1.0)
    assert model.log_evidence_.shape == (1, 2, 31)


def test_stacking_weights_sum_to_one_and_favour_the_better_predictor():
    X, y = _data(12, n=40, p=100)
    model = BayesianLinearClassifier(hyperparameters="stack", coefficient_prior="span").fit(X, y)
    assert model.weights_.shape == (1, 2, 31) and model.scalings_ == ("common", "standardise")
    assert np.isclose(model.weights_.sum(), 1.0) and np.all(model.weights_ >= 0)
    # stacking puts no weight on grid points whose leave-one-out density is far below the best one's
    worst = model.elpd_loo_ < model.elpd_loo_.max() - 20.0
    assert np.all(model.weights_[worst] < 1e-3)


def test_stacking_with_the_laplace_softmax_is_refused():
    X, y = _data(13, n_classes=3)
    with pytest.raises(ValueError, match="multiclass='ovr' or 'probit'"):
        BayesianLinearClassifier(multiclass="softmax", hyperparameters="stack").fit(X, y)


def test_one_vs_rest_conditions_the_binary_models_on_exactly_one_class():
    # eq. 20: p(c) ∝ p_c / (1 − p_c) with p_c the binary model of class c against the rest, fitted alone
    X, y = _data(14, n=36, p=50, n_classes=3)
    proba = BayesianLinearClassifier(multiclass="ovr").fit(X, y).predict_proba(X[:8])
    odds = np.column_stack([
        (lambda p: p[:, 1] / p[:, 0])(BayesianLinearClassifier().fit(X, (y == c).astype(int)).predict_proba(X[:8]))
        for c in range(3)
    ])  # fmt: skip
    np.testing.assert_allclose(proba, odds / odds.sum(axis=1, keepdims=True), atol=1e-7)


def test_fit_and_predict_from_a_chunked_dask_array_equal_memory():
    da = pytest.importorskip("dask.array")
    dask = pytest.importorskip("dask")
    from hdbayes.exceptions import InputValueError

    X, y = _data(15, n=40, p=30, n_classes=3)
    memory = BayesianLinearClassifier().fit(X, y)
    with dask.config.set(scheduler="sync"):
        chunked = BayesianLinearClassifier().fit(da.from_array(X, chunks=(10, 7)), da.from_array(y, chunks=10))
        proba = chunked.predict_proba(da.from_array(X[:12], chunks=(5, 30)))
        assert hasattr(proba, "compute")
        np.testing.assert_allclose(proba.compute(), memory.predict_proba(X[:12]), atol=1e-10)
        bad = X.copy()
        bad[13, 4] = np.nan
        with pytest.raises(InputValueError, match=r"chunk 1 of X \(rows 10\.\.19\)"):
            BayesianLinearClassifier().fit(da.from_array(bad, chunks=(10, 30)), y)
    np.testing.assert_allclose(chunked.weights_, memory.weights_, atol=1e-10)
