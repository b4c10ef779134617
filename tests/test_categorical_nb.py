"""BiasCorrectedCategoricalNB: the binary special case, the integrals, the inputs, scikit-learn's checks."""

import pickle

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from hdbayes.datasets import simulate_naive_bayes
from hdbayes.exceptions import InputValueError
from hdbayes.selection_bias import BiasCorrectedCategoricalNB, BiasCorrectedNaiveBayes
from hdbayes.selection_bias.categorical import categorical_feature_integrals
from hdbayes.selection_bias.categorical_adjustment import categorical_log_discard_probability, pearson_chi_square


@pytest.fixture(scope="module")
def binary_data():
    return simulate_naive_bayes(n_features=600, n_samples=60, n_test=40, random_state=3)


@pytest.mark.parametrize("options", [
    {"n_features_to_select": 1}, {"n_features_to_select": 10}, {"n_features_to_select": 10, "correct": False},
    {"n_features_to_select": 40, "alpha_rule": "midpoint"},
], ids=["k1", "k10", "k10-uncorrected", "k40-midpoint"])  # fmt: skip
def test_two_classes_and_binary_features_are_the_binary_model(binary_data, options):
    d = binary_data
    binary = BiasCorrectedNaiveBayes(random_state=0, **options).fit(d.X, d.y)
    ours = BiasCorrectedCategoricalNB(random_state=0, **options).fit(d.X, d.y)
    assert set(ours.selected_features_) == set(binary.selected_features_)
    np.testing.assert_allclose(  # the same features, strongest first (ties may be listed in another order)
        binary.selection_.scores[ours.selected_features_], binary.selection_.scores[binary.selected_features_],
        rtol=1e-12,
    )  # fmt: skip
    np.testing.assert_allclose(ours.selection_.scores, d.X.shape[0] * binary.selection_.scores**2, rtol=1e-12)
    assert ours.selection_.strict == binary.selection_.strict
    np.testing.assert_array_equal(ours.alpha_grid_, binary.alpha_grid_)
    np.testing.assert_allclose(ours.alpha_posterior_, binary.alpha_posterior_, rtol=0, atol=1e-10)
    np.testing.assert_allclose(ours.log_adjustment_, binary.log_adjustment_, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(ours.predict_proba(d.X_test), binary.predict_proba(d.X_test), rtol=0, atol=1e-10)


def test_a_threshold_on_chi_square_is_the_binary_threshold_on_correlation(binary_data):
    d = binary_data
    binary = BiasCorrectedNaiveBayes(threshold=0.3).fit(d.X, d.y)
    ours = BiasCorrectedCategoricalNB(threshold=d.X.shape[0] * 0.3**2).fit(d.X, d.y)
    assert set(ours.selected_features_) == set(binary.selected_features_) and not ours.selection_.strict
    np.testing.assert_allclose(ours.predict_proba(d.X_test), binary.predict_proba(d.X_test), rtol=0, atol=1e-10)


def test_quadrature_and_moment_integrals_agree():
    rng = np.random.default_rng(0)
    sizes = np.array([5, 4, 6])
    counts = np.stack([rng.multinomial(s, [0.2, 0.5, 0.3], size=7) for s in sizes], axis=1)  # (7, G, L)
    alpha = np.array([0.05, 1.0, 40.0, 3e4])
    quad = categorical_feature_integrals(counts, sizes, alpha, method="quadrature")
    moments = categorical_feature_integrals(counts, sizes, alpha, method="moments")
    for a, b in zip(quad, moments):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
    # the predictive of each class sums to one over the levels: Σ_l Q(α, g, l) = ∫ L_j
    np.testing.assert_allclose(np.logaddexp.reduce(quad[1], axis=-1), quad[0][..., None] + 0 * quad[1][..., 0],
                               atol=1e-12)  # fmt: skip
    too_few = categorical_feature_integrals(counts, sizes, alpha, n_theta=3, method="quadrature")
    assert np.abs(too_few[0] - quad[0]).max() > 1e-6  # 3 nodes per dimension are not exact at n = 15


def test_the_fitted_adjustment_is_the_adjustment_factor():
    rng = np.random.default_rng(1)
    y = np.repeat([0, 1, 2], [5, 6, 4])
    X = rng.integers(0, 3, size=(15, 40))
    model = BiasCorrectedCategoricalNB(n_features_to_select=3).fit(X, y)
    assert model.n_levels_ == 3 and model.class_count_.tolist() == [5, 6, 4]
    expected = 37 * categorical_log_discard_probability(
        model.alpha_grid_, (5, 6, 4), model.threshold_, n_levels=3, strict=model.selection_.strict
    )
    np.testing.assert_allclose(model.log_adjustment_, expected, rtol=1e-13)
    counts = np.stack([[np.bincount(X[y == g, j], minlength=3) for g in range(3)] for j in range(40)])
    np.testing.assert_allclose(model.selection_.scores, pearson_chi_square(counts, [5, 6, 4]), rtol=0)
    np.testing.assert_array_equal(model.level_counts_, counts[model.selected_features_])
    proba = model.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)
    roundtrip = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(roundtrip.predict_proba(X), proba)
    line = model.plot_alpha_posterior().lines[0]  # the posterior density of log α (as thesis Fig. 2.7)
    np.testing.assert_allclose(line.get_xdata(), np.log(model.alpha_grid_))
    np.testing.assert_allclose(line.get_ydata(), model.posterior_density_of_log_alpha_)


def test_the_correction_removes_overconfidence_on_pure_noise():
    """All features independent of the class: the selected ones look predictive only by selection. The
    uncorrected model moves far from the class frequencies; the corrected one stays near them (the margin
    is a factor of 2 on a deterministic data set, far above rounding)."""
    rng = np.random.default_rng(7)
    y = np.repeat([0, 1, 2], 12)
    X = rng.integers(0, 2, size=(36, 2000))
    X_test = rng.integers(0, 2, size=(200, 2000))
    spread = {}
    for correct in (False, True):
        model = BiasCorrectedCategoricalNB(n_features_to_select=10, correct=correct).fit(X, y)
        spread[correct] = np.abs(model.predict_proba(X_test) - 1 / 3).mean()
    assert spread[True] < spread[False] / 2


def test_inputs_are_refused_with_clear_messages():
    X = np.array([[0, 1], [1, 2], [2, 0], [1, 1]])
    y = [0, 1, 1, 0]
    with pytest.raises(InputValueError, match=r"integer level codes 0, 1, 2, ...: feature 1 has the value 0.5"):
        BiasCorrectedCategoricalNB().fit([[0, 1], [1, 0.5], [0, 0]], [0, 1, 1])
    with pytest.raises(InputValueError, match="feature 0 has the level code -1"):
        BiasCorrectedCategoricalNB().fit([[-1, 1], [1, 0], [0, 0]], [0, 1, 1])
    with pytest.raises(InputValueError, match="single class"):
        BiasCorrectedCategoricalNB().fit(X, [1, 1, 1, 1])
    with pytest.raises(InputValueError, match=r"feature 1 has level 2, outside 0..1 \(n_levels\)"):
        BiasCorrectedCategoricalNB(n_levels=2).fit(X, y)
    model = BiasCorrectedCategoricalNB().fit(X, y)
    with pytest.raises(InputValueError, match=r"feature 0 has level 3, outside 0..2 \(the levels of the training"):
        model.predict([[3, 0]])
    assert BiasCorrectedCategoricalNB(n_levels=5).fit(X, y).predict_proba([[4, 4]]).shape == (1, 2)
    with pytest.raises(InputValueError, match="n_features_to_select=3 is larger than the number of features p=2"):
        BiasCorrectedCategoricalNB(n_features_to_select=3).fit(X, y)


def test_sparse_input_stays_sparse_and_gives_the_dense_fit():
    """Sparse X: the implicit entries are level 0; the levels are checked on the stored values and counted from
    them (X == l for l ≥ 1, level 0 the rest of each class), so the fit equals the dense one."""
    import scipy.sparse as sp

    rng = np.random.default_rng(4)
    y = np.repeat([0, 1, 2], [7, 6, 8])
    X = rng.integers(1, 3, size=(21, 60)) * (rng.random((21, 60)) < 0.3)  # mostly level 0
    X[:, 0] = y  # one informative feature
    dense = BiasCorrectedCategoricalNB(n_features_to_select=4, random_state=0).fit(X, y)
    for matrix in (sp.csr_matrix, sp.csc_matrix):
        model = BiasCorrectedCategoricalNB(n_features_to_select=4, random_state=0).fit(matrix(X), y)
        assert sp.issparse(model._levels(matrix(X), training=False))
        assert model.n_levels_ == 3
        np.testing.assert_array_equal(model.level_counts_, dense.level_counts_)
        np.testing.assert_array_equal(model.selection_.scores, dense.selection_.scores)
        np.testing.assert_array_equal(model.log_adjustment_, dense.log_adjustment_)
        np.testing.assert_array_equal(model.predict_proba(matrix(X)), dense.predict_proba(X))
    bad = sp.csr_matrix(np.array([[0.0, 0.0], [0.0, 0.5], [1.0, 0.0]]))
    with pytest.raises(InputValueError, match="integer level codes 0, 1, 2, ...: feature 1 has the value 0.5"):
        BiasCorrectedCategoricalNB().fit(bad, [0, 1, 1])
    with pytest.raises(InputValueError, match="feature 1 has the level code -1"):
        BiasCorrectedCategoricalNB().fit(sp.csc_matrix(np.array([[0, 0], [0, -1], [1, 0]])), [0, 1, 1])
    with pytest.raises(InputValueError, match=r"feature 0 has level 3, outside 0..2 \(the levels of the training"):
        dense.predict(sp.csr_matrix(np.eye(1, 60, 0, dtype=np.int64) * 3))


@parametrize_with_checks([BiasCorrectedCategoricalNB()])
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.slow
def test_the_correction_calibrates_a_simulation_from_the_model():
    """Thesis §2.3.5's design at a small size (G = 3, L = 2, α = 300, 60 training and 999 test cases, p = 1000).
    On this data set at k = 100: corrected |expected − actual error| = 0.058 and AMLP 1.09, uncorrected expected
    error 0.44 below the actual and AMLP 2.41; the margins below are wide (one data set, any platform)."""
    from hdbayes.metrics import average_minus_log_probability, error_rate, expected_error_rate

    rng = np.random.default_rng(1)
    sizes, p = (20 + 333, 20 + 333, 20 + 333), 1000
    labels = np.repeat(np.arange(3), sizes)
    theta = rng.dirichlet(np.ones(2), size=p)
    X = np.empty((labels.shape[0], p), dtype=np.int64)
    for g in range(3):
        rows = np.flatnonzero(labels == g)
        for j in range(p):
            X[rows, j] = rng.choice(2, size=rows.shape[0], p=rng.dirichlet(300.0 * theta[j]))
    train = np.zeros(labels.shape[0], dtype=bool)
    for g in range(3):
        train[np.flatnonzero(labels == g)[:20]] = True
    for k in (10, 100):
        results = {}
        for correct in (False, True):
            model = BiasCorrectedCategoricalNB(n_features_to_select=k, correct=correct).fit(X[train], labels[train])
            proba = model.predict_proba(X[~train])
            results[correct] = (error_rate(labels[~train], proba), expected_error_rate(proba),
                                average_minus_log_probability(labels[~train], proba))  # fmt: skip
        assert abs(results[True][0] - results[True][1]) <= 0.1
        assert results[False][1] <= results[False][0] - 0.2
        assert results[True][2] < results[False][2] - 0.2
