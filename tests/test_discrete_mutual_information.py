"""Mutual-information feature selection (Murphy §3.5.4; docs/discrete.md, "Mutual-information selection"; T6, T7)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics import mutual_info_score
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

from hdbayes.discrete.mutual_information import (
    MutualInformationSelector,
    mutual_information_binary,
    mutual_information_discrete,
)
from hdbayes.discrete.naive_bayes import BayesianBernoulliNB, BayesianMultinomialNB
from hdbayes.exceptions import InputValueError, is_input_error

X_T6 = np.array([[1, 0], [1, 1], [0, 0], [0, 1], [0, 1]])
Y_T6 = np.array([0, 0, 0, 1, 1])


def test_t6_mutual_information_both_formulas():
    expected = np.log(5) - 1.2 * np.log(3)
    assert expected == pytest.approx(0.29110316603236, rel=1e-13)
    general = mutual_information_discrete(X_T6, Y_T6)
    np.testing.assert_allclose(general, [expected, expected], rtol=1e-12)
    model = BayesianBernoulliNB("mle").fit(X_T6, Y_T6)
    binary = mutual_information_binary(np.exp(model.class_log_prior_), np.exp(model.feature_log_prob_))
    np.testing.assert_allclose(binary, general, rtol=1e-12)
    np.testing.assert_allclose(model.mutual_information(), general, rtol=1e-12)
    # with the posterior means plugged in the estimate shrinks towards 0
    assert np.all(BayesianBernoulliNB().fit(X_T6, Y_T6).mutual_information() < general)


def test_t7_values():
    assert mutual_information_binary([0.5, 0.5], [[0.9], [0.1]])[0] == pytest.approx(0.3680642071684971, rel=1e-14)
    assert mutual_information_binary([0.5, 0.5], [[0.3], [0.3]])[0] == 0.0


def test_matches_sklearn_mutual_info_score_dense_and_sparse():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 4, size=(200, 7)) * (rng.random((200, 7)) < 0.5)
    y = rng.integers(0, 3, size=200)
    X[y == 2, 0] += 2
    expected = [mutual_info_score(X[:, j], y) for j in range(X.shape[1])]
    np.testing.assert_allclose(mutual_information_discrete(X, y), expected, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(mutual_information_discrete(sp.csr_matrix(X), y), expected, rtol=1e-12, atol=1e-15)


def test_posterior_mean_estimate_is_the_smoothed_table():
    smoothed = mutual_information_discrete(X_T6, Y_T6, estimate="posterior_mean", prior=0.5)
    # feature 0 table (value × class) = [[1, 2], [2, 0]] + 0.5
    joint = (np.array([[1, 2], [2, 0]]) + 0.5) / 7.0
    expected = np.sum(joint * np.log(joint / np.outer(joint.sum(1), joint.sum(0))))
    assert smoothed[0] == pytest.approx(expected, rel=1e-12)
    assert smoothed[0] < mutual_information_discrete(X_T6, Y_T6)[0]


def test_selector_records_the_selection_and_works_in_a_pipeline():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, size=300)
    X = rng.poisson(1.0, size=(300, 40))
    X[:, 5] += 3 * y
    X[:, 17] += 2 * (1 - y)
    selector = MutualInformationSelector(n_features_to_select=2).fit(X, y)
    assert set(selector.selected_features_) == {5, 17}
    assert selector.n_discarded_ == 38 and selector.selection_.n_total == 40
    assert selector.threshold_ == pytest.approx(selector.scores_[selector.selected_features_].min())
    assert np.all(selector.scores_[selector.ranking_[:-1]] >= selector.scores_[selector.ranking_[1:]])
    assert selector.transform(X).shape == (300, 2)
    assert sp.issparse(selector.transform(sp.csr_matrix(X)))
    by_threshold = MutualInformationSelector(threshold=selector.threshold_ * 0.99).fit(X, y)
    assert set(by_threshold.selected_features_) == {5, 17}
    pipeline = make_pipeline(MutualInformationSelector(n_features_to_select=2), BayesianMultinomialNB()).fit(X, y)
    assert pipeline.score(X, y) > 0.8
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(selector)).get_support(), selector.get_support())


def test_selector_default_keeps_every_feature_and_refuses_k_above_p():
    rng = np.random.default_rng(2)
    y = np.arange(40) % 2
    for p in (1, 2, 7, 12):
        X = rng.integers(0, 3, size=(40, p))
        selector = MutualInformationSelector().fit(X, y)  # nothing is selected unless asked
        assert selector.get_support().all() and selector.n_discarded_ == 0
        np.testing.assert_array_equal(selector.selected_features_, selector.ranking_)
        np.testing.assert_array_equal(selector.transform(X), X)
    X = rng.integers(0, 3, size=(40, 12))
    with pytest.raises(InputValueError, match="n_features_to_select=13 is larger than the number of features p=12"):
        MutualInformationSelector(n_features_to_select=13).fit(X, y)
    assert MutualInformationSelector(n_features_to_select=12).fit(X, y).get_support().all()
    with pytest.raises(InputValueError, match="give at most one of n_features_to_select and threshold"):
        MutualInformationSelector(n_features_to_select=2, threshold=0.1).fit(X, y)


def test_threshold_that_keeps_nothing_is_named():
    X = np.array([[1, 0], [1, 1], [0, 0], [0, 1]])
    with pytest.raises(
        InputValueError, match=r"no feature's mutual information exceeds the threshold 0.8 \(the largest"
    ):
        MutualInformationSelector(threshold=0.8).fit(X, [1, 1, 0, 0])


def test_continuous_data_need_binarize():
    rng = np.random.default_rng(3)
    y = np.arange(60) % 2
    X = rng.normal(size=(60, 5)) + 1.5 * y[:, None] * (np.arange(5) == 2)
    with pytest.raises(
        InputValueError, match=r"feature 0 has the value [0-9.]+; .*binarize=0.0\) or binarize='median'"
    ):
        MutualInformationSelector(n_features_to_select=1).fit(np.abs(X), y)
    with pytest.raises(
        InputValueError, match=r"Negative values .* feature 1 .*; pass binarize=<threshold> or 'median'"
    ):
        MutualInformationSelector(n_features_to_select=1).fit(X, y)
    selector = MutualInformationSelector(n_features_to_select=1, binarize="median").fit(X, y)
    assert selector.selected_features_.tolist() == [2]
    np.testing.assert_array_equal(selector.binarize_thresholds_, np.median(X, axis=0))
    expected = mutual_information_discrete((X > np.median(X, axis=0)).astype(int), y)
    np.testing.assert_allclose(selector.scores_, expected, rtol=1e-14)
    np.testing.assert_array_equal(selector.transform(X), X[:, [2]])  # the original values are returned
    at_zero = MutualInformationSelector(n_features_to_select=1, binarize=0.0).fit(sp.csr_matrix(np.abs(X)), y)
    np.testing.assert_allclose(at_zero.scores_, mutual_information_discrete((np.abs(X) > 0).astype(int), y))


@pytest.mark.parametrize(
    ("kwargs", "X", "y", "match"),
    [
        ({}, [[1, -1], [0, 1]], [0, 1], "Negative values in data passed to MutualInformationSelector: feature 1"),
        ({}, [[1, 0.5], [0, 1]], [0, 1], "integer counts: feature 1 has the value 0.5"),
        ({}, [[1, np.nan], [0, 1]], [0, 1], "NaN"),
        ({}, [[1, 0], [0, 1]], [0, 0], r"y has a single class \(0\)"),
        ({}, [[1, 0], [0, 1]], [0.5, 1.5], "Unknown label type: continuous"),
        ({}, [[3e9, 0], [0, 1]], [0, 1], "feature 0 has the value 3e[+]09; counts and codes must be below"),
        ({"estimate": "map"}, [[1, 0], [0, 1]], [0, 1], "'estimate' parameter of MutualInformationSelector must be"),
        ({"n_features_to_select": 0}, [[1, 0], [0, 1]], [0, 1], r"n_features_to_select' .* range \[1, inf"),
        ({"n_features_to_select": 1.5}, [[1, 0], [0, 1]], [0, 1], "'n_features_to_select' parameter .* an int"),
        ({"threshold": -1.0}, [[1, 0], [0, 1]], [0, 1], "'threshold' parameter"),
        ({"threshold": np.inf}, [[1, 0], [0, 1]], [0, 1], "'threshold' parameter"),
        ({"prior": 0.0}, [[1, 0], [0, 1]], [0, 1], "'prior' parameter"),
        ({"binarize": "mean"}, [[1, 0], [0, 1]], [0, 1], r"'binarize' parameter .* str among \{'median'\}"),
    ],
)
def test_bad_input(kwargs, X, y, match):
    with pytest.raises((ValueError, TypeError), match=match) as info:
        MutualInformationSelector(**kwargs).fit(X, y)
    assert is_input_error(info.value)


def test_transform_refuses_bad_input_as_the_users_error():
    selector = MutualInformationSelector(n_features_to_select=1).fit([[1, 0], [0, 1], [1, 1]], [0, 1, 1])
    with pytest.raises(InputValueError, match="NaN"):
        selector.transform([[np.nan, 1.0]])
    with pytest.raises(InputValueError, match="features"):
        selector.transform([[1, 0, 1]])


def test_binary_formula_validation():
    with pytest.raises(ValueError, match=r"\(C, D\)"):
        mutual_information_binary([0.5, 0.5], [0.1, 0.2])
    with pytest.raises(ValueError, match="summing to 1"):
        mutual_information_binary([0.5, 0.6], [[0.1], [0.2]])


@parametrize_with_checks([MutualInformationSelector(), MutualInformationSelector(binarize="median")])
def test_sklearn_compatible(estimator, check):
    check(estimator)
