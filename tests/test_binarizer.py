"""FeatureBinarizer and the one binarisation rule shared with the estimators' ``binarize``."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import parametrize_with_checks

from hdbayes import FeatureBinarizer
from hdbayes._validation import binarize_features, fit_binarize_thresholds
from hdbayes.exceptions import InputValueError


@parametrize_with_checks([FeatureBinarizer(), FeatureBinarizer(threshold="median")])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _data(seed=0):
    X = np.random.default_rng(seed).normal(size=(9, 4))
    X[X < 0.2] = 0.0  # mostly zeros, so that sparse formats matter
    return X


@pytest.mark.parametrize("threshold", [0.0, -0.5, 0.7, "median"])
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_dense_and_sparse_copies_give_the_same_matrix(threshold, fmt):
    X = _data()
    dense = FeatureBinarizer(threshold=threshold).fit_transform(X)
    sparse = FeatureBinarizer(threshold=threshold).fit_transform(sp.coo_matrix(X).asformat(fmt))
    sparse = sparse.toarray() if sp.issparse(sparse) else sparse
    np.testing.assert_array_equal(dense, sparse)
    assert set(np.unique(dense)) <= {0.0, 1.0}


def test_negative_threshold_turns_implicit_zeros_into_ones():
    X = sp.csr_matrix(np.array([[0.0, 2.0], [0.0, 0.0]]))
    np.testing.assert_array_equal(binarize_features(X, -1.0), np.ones((2, 2)))


def test_median_thresholds_are_learned_at_fit_and_reused():
    X = np.array([[1.0, 10.0], [2.0, 30.0], [3.0, 20.0], [4.0, 40.0]])
    model = FeatureBinarizer(threshold="median").fit(X)
    np.testing.assert_allclose(model.thresholds_, [2.5, 25.0])
    np.testing.assert_array_equal(model.transform([[2.6, 24.0]]), [[1.0, 0.0]])
    # the sparse median counts the implicit zeros
    np.testing.assert_allclose(fit_binarize_thresholds(sp.csc_matrix([[0.0], [0.0], [5.0]]), "median"), [0.0])


@pytest.mark.parametrize("threshold", ["mean", np.inf, np.nan, [1.0], None])
def test_bad_threshold_is_refused_naming_the_option(threshold):
    match = r"'threshold' parameter of FeatureBinarizer must be a float in the range \(-inf, inf\) or a str among"
    with pytest.raises(InvalidParameterError, match=match):
        FeatureBinarizer(threshold=threshold).fit(_data())


def test_bad_input_is_the_users_error():
    with pytest.raises(InputValueError, match="Input X contains NaN"):
        FeatureBinarizer().fit([[np.nan, 1.0]])
    with pytest.raises(InputValueError, match="expecting 2 features"):
        FeatureBinarizer().fit([[0.0, 1.0]]).transform([[1.0]])


def test_binary_data_pass_unchanged_without_a_float_copy_but_the_transformer_copies():
    X = sp.random(50, 40, density=0.3, format="csc", random_state=0, dtype=np.int8)
    X.data[:] = 1
    same = binarize_features(X, 0.0)
    assert same is X and same.dtype == np.int8  # 0/1 data at a threshold in [0, 1): nothing to do
    dense = X.toarray().astype(np.float64)
    out = FeatureBinarizer().fit(dense).transform(dense)
    assert out is not dense
    np.testing.assert_array_equal(out, dense)


@pytest.mark.parametrize("seed", range(40))
def test_sparse_medians_equal_dense_ones_with_stored_zeros_and_duplicates(seed):
    """The column medians of a sparse matrix count implicit and stored zeros and sum duplicate entries."""
    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(1, 9)), int(rng.integers(1, 6))
    X = rng.normal(size=(n, p))
    X[rng.random((n, p)) < 0.5] = 0.0
    C = sp.csc_matrix(X)
    C.data[: C.data.size // 3] = 0.0  # explicit zeros
    rows, cols = np.nonzero(np.ones((n, p)))
    doubled = sp.coo_matrix((np.r_[X.ravel(), X.ravel()] / 2, (np.r_[rows, rows], np.r_[cols, cols])), shape=(n, p))
    for matrix in (C, doubled, sp.csr_matrix(X)):
        np.testing.assert_array_equal(fit_binarize_thresholds(matrix, "median"), np.median(matrix.toarray(), axis=0))
