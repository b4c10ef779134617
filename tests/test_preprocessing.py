"""Tests of the shrunk-covariance whitening transform (Li 2009, eq. 12; docs/gaussian.md, "Whitening")."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.model_selection import StratifiedKFold, cross_val_predict, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import parametrize_with_checks

from hdbayes.exceptions import InputTypeError, InputValueError
from hdbayes.preprocessing import ShrunkCovarianceWhitener, pooled_within_class_covariance, shrink_to_diagonal


def correlated_classes(n_per_class, means, covariance, seed=0):
    """Rows from N(means[g], covariance), n_per_class of each class g (labels "a", "b", …)."""
    rng = np.random.default_rng(seed)
    means = np.asarray(means, dtype=float)
    chol = np.linalg.cholesky(covariance)
    X = np.vstack([m + rng.standard_normal((n_per_class, len(m))) @ chol.T for m in means])
    y = np.repeat(np.array(list("abcdefgh"[: len(means)])), n_per_class)
    return X, y


def ar1_covariance(p, rho, scales):
    """Σ_jk = s_j s_k ρ^|j−k|: strongly correlated features on different scales."""
    idx = np.arange(p)
    return np.outer(scales, scales) * rho ** np.abs(idx[:, None] - idx[None, :])


def direct_pooled_covariance(X, y):
    """S by the definition: a loop over the classes."""
    classes = np.unique(y)
    total = np.zeros((X.shape[1], X.shape[1]))
    for g in classes:
        centred = X[y == g] - X[y == g].mean(axis=0)
        total += centred.T @ centred
    return total / (X.shape[0] - classes.size)


def whitened_pooled_covariance(model, X, y):
    return direct_pooled_covariance(model.transform(X), y)


@pytest.fixture(scope="module")
def small_data():
    p = 6
    cov = ar1_covariance(p, 0.7, np.linspace(0.5, 3.0, p))
    means = np.array([np.zeros(p), np.linspace(-1, 1, p), np.full(p, 2.0)])
    X, y = correlated_classes(15, means, cov, seed=1)
    X[:5] += 0.3  # unequal classes are not required, but keep the rows unsorted by value
    return X, y


# ---------------------------------------------------------------------------- the estimate


@pytest.mark.parametrize("lam", [0.0, 0.5, 10.0])
def test_covariance_matches_direct_computation(small_data, lam):
    X, y = small_data
    S = direct_pooled_covariance(X, y)
    expected = (S + lam * np.diag(np.diag(S))) / (1 + lam)
    model = ShrunkCovarianceWhitener(lam=lam).fit(X, y)
    np.testing.assert_allclose(pooled_within_class_covariance(X, y), S, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(model.covariance_, expected, rtol=1e-12, atol=1e-14)
    L = model.cholesky_
    np.testing.assert_array_equal(L, np.tril(L))
    assert np.all(np.diag(L) > 0)
    np.testing.assert_allclose(L @ L.T, model.covariance_, rtol=1e-12, atol=1e-13)
    assert model.n_features_in_ == X.shape[1]
    np.testing.assert_array_equal(model.classes_, ["a", "b", "c"])


def test_lam_10_keeps_variances_and_shrinks_correlations_by_one_eleventh(small_data):
    X, y = small_data
    S = direct_pooled_covariance(X, y)
    sigma = ShrunkCovarianceWhitener(lam=10).fit(X, y).covariance_
    np.testing.assert_array_equal(np.diag(sigma), np.diag(pooled_within_class_covariance(X, y)))  # kept exactly
    np.testing.assert_allclose(np.diag(sigma), np.diag(S), rtol=1e-13)
    off = ~np.eye(S.shape[0], dtype=bool)
    np.testing.assert_allclose(sigma[off], S[off] / 11, rtol=1e-13)
    sd = np.sqrt(np.diag(S))
    np.testing.assert_allclose((sigma / np.outer(sd, sd))[off], (S / np.outer(sd, sd))[off] / 11, rtol=1e-13)
    np.testing.assert_allclose(shrink_to_diagonal(S, 10), sigma, rtol=1e-15)


def test_estimate_does_not_depend_on_label_values_or_order(small_data):
    X, y = small_data
    a = ShrunkCovarianceWhitener(lam=2).fit(X, y)
    codes = np.unique(y, return_inverse=True)[1]
    b = ShrunkCovarianceWhitener(lam=2).fit(X, 10 * codes + 7)
    perm = np.random.default_rng(0).permutation(len(y))
    c = ShrunkCovarianceWhitener(lam=2).fit(X[perm], y[perm])
    np.testing.assert_allclose(a.covariance_, b.covariance_, rtol=1e-13)
    np.testing.assert_allclose(a.covariance_, c.covariance_, rtol=1e-12)


# ---------------------------------------------------------------------------- the transform


def test_transform_equals_product_with_inverse_cholesky(small_data):
    X, y = small_data
    model = ShrunkCovarianceWhitener(lam=10).fit(X, y)
    X_new = np.random.default_rng(3).normal(size=(7, X.shape[1])) * 5 + 1  # not centred: no centring applied
    for Z in (X, X_new):
        np.testing.assert_allclose(model.transform(Z), Z @ np.linalg.inv(model.cholesky_).T, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(model.fit_transform(X, y), model.transform(X), rtol=1e-15)
    # row-wise: x -> L^{-1} x, and L (L^{-1} x) = x
    np.testing.assert_allclose(model.transform(X) @ model.cholesky_.T, X, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("lam", [0.0, 10.0])
def test_training_whitened_covariance_is_inverse_cholesky_sandwich(small_data, lam):
    """Exactly: pooled within-class covariance of the whitened training data = L^{-1} S L^{-T}."""
    X, y = small_data
    model = ShrunkCovarianceWhitener(lam=lam).fit(X, y)
    S = direct_pooled_covariance(X, y)
    L_inv = np.linalg.inv(model.cholesky_)
    expected = L_inv @ S @ L_inv.T
    np.testing.assert_allclose(whitened_pooled_covariance(model, X, y), expected, rtol=1e-9, atol=1e-11)
    if lam == 0:  # Σ̂ = S, so the sandwich is the identity
        np.testing.assert_allclose(expected, np.eye(X.shape[1]), atol=1e-10)
    else:  # shrinkage: no longer the identity, but the first feature is only rescaled
        assert not np.allclose(expected, np.eye(X.shape[1]), atol=1e-3)
        assert expected[0, 0] == pytest.approx(1.0, rel=1e-12)


def test_large_sample_without_shrinkage_whitens_new_data():
    p = 5
    cov = ar1_covariance(p, 0.8, np.array([0.2, 1.0, 3.0, 1.0, 10.0]))
    means = [np.zeros(p), np.arange(p, dtype=float), -np.ones(p)]
    X, y = correlated_classes(4000, means, cov, seed=2)
    X_test, y_test = correlated_classes(4000, means, cov, seed=3)
    model = ShrunkCovarianceWhitener(lam=0).fit(X, y)
    np.testing.assert_allclose(whitened_pooled_covariance(model, X_test, y_test), np.eye(p), atol=0.05)
    # class means are mapped to L^{-1} μ (no centring)
    W = model.transform(X_test)
    np.testing.assert_allclose(W[y_test == "b"].mean(axis=0), np.linalg.solve(model.cholesky_, means[1]), atol=0.1)


def test_large_sample_with_shrinkage_diagonal_close_to_one_for_weak_correlation():
    """Independent features on different scales: any λ keeps the diagonal ≈ 1 and the rest ≈ 0."""
    p = 4
    cov = np.diag([0.01, 1.0, 25.0, 4.0])
    X, y = correlated_classes(5000, [np.zeros(p), np.ones(p)], cov, seed=4)
    model = ShrunkCovarianceWhitener(lam=10).fit(X, y)
    np.testing.assert_allclose(whitened_pooled_covariance(model, X, y), np.eye(p), atol=0.03)


def test_large_sample_with_shrinkage_two_features_closed_form():
    """Unit variances, correlation r, λ > 0: r' = r/(1+λ) and the 2nd whitened variance is
    (1 − 2 r r' + r'²)/(1 − r'²) — shrinkage deliberately leaves the whitened data correlated."""
    r, lam = 0.6, 3.0
    cov = np.array([[1.0, r], [r, 1.0]])
    X, y = correlated_classes(20000, [[0.0, 0.0], [1.0, -1.0]], cov, seed=5)
    W = whitened_pooled_covariance(ShrunkCovarianceWhitener(lam=lam).fit(X, y), X, y)
    rs = r / (1 + lam)
    assert W[0, 0] == pytest.approx(1.0, abs=0.03)
    assert W[1, 1] == pytest.approx((1 - 2 * r * rs + rs**2) / (1 - rs**2), abs=0.03)
    assert W[0, 1] == pytest.approx((r - rs) / np.sqrt(1 - rs**2), abs=0.03)


def test_more_features_than_samples_with_shrinkage():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(30, 400)) @ np.diag(rng.uniform(0.5, 2, 400))
    X[:, 1] += X[:, 0]
    y = np.repeat([0, 1, 2], 10)
    model = ShrunkCovarianceWhitener(lam=10).fit(X, y)
    W = model.transform(X)
    assert W.shape == (30, 400) and np.all(np.isfinite(W))
    with pytest.raises(ValueError, match=r"rank at most n - G = 27 < p = 400; use lam > 0"):
        ShrunkCovarianceWhitener(lam=0).fit(X, y)


# ---------------------------------------------------------------------------- scikit-learn integration


def test_dataframe_input_and_feature_names(small_data):
    X, y = small_data
    frame = pd.DataFrame(X, columns=[f"gene{j}" for j in range(X.shape[1])])
    model = ShrunkCovarianceWhitener().fit(frame, pd.Series(y))
    np.testing.assert_array_equal(model.feature_names_in_, frame.columns)
    names = model.get_feature_names_out()
    assert list(names) == [f"whitened{j}" for j in range(X.shape[1])]
    np.testing.assert_allclose(model.transform(frame), ShrunkCovarianceWhitener().fit(X, y).transform(X))
    out = clone(model).set_output(transform="pandas").fit(frame, y).transform(frame)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == list(names)
    with pytest.raises(ValueError, match="input_features is not equal to feature_names_in_"):
        model.get_feature_names_out(["x"] * X.shape[1])


def fold_data():
    p = 8
    cov = ar1_covariance(p, 0.85, np.linspace(0.3, 4.0, p))
    rng = np.random.default_rng(7)
    means = rng.normal(scale=0.8, size=(3, p))
    return correlated_classes(16, means, cov, seed=8)


def test_pipeline_with_lda_in_cross_val_predict():
    X, y = fold_data()
    cv = StratifiedKFold(4, shuffle=True, random_state=0)
    pipe = make_pipeline(ShrunkCovarianceWhitener(lam=10), LinearDiscriminantAnalysis())
    proba = cross_val_predict(pipe, X, y, cv=cv, method="predict_proba")
    assert proba.shape == (len(y), 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    # plain LDA is invariant under invertible linear maps of X, so whitening leaves it unchanged
    raw = cross_val_predict(LinearDiscriminantAnalysis(), X, y, cv=cv, method="predict_proba")
    np.testing.assert_allclose(proba, raw, atol=1e-8)


def test_pipeline_whitening_is_fold_specific():
    X, y = fold_data()
    cv = StratifiedKFold(4, shuffle=True, random_state=0)
    lda = LinearDiscriminantAnalysis(solver="lsqr", shrinkage=0.5)  # not affine invariant
    pipe = make_pipeline(ShrunkCovarianceWhitener(lam=10), lda)

    result = cross_validate(pipe, X, y, cv=cv, return_estimator=True, return_indices=True)
    for fitted, train in zip(result["estimator"], result["indices"]["train"]):
        expected = ShrunkCovarianceWhitener(lam=10).fit(X[train], y[train])
        np.testing.assert_allclose(fitted[0].covariance_, expected.covariance_, rtol=1e-12)

    honest = cross_val_predict(pipe, X, y, cv=cv, method="predict_proba")
    manual = np.empty_like(honest)
    for train, test in cv.split(X, y):
        whitener = ShrunkCovarianceWhitener(lam=10).fit(X[train], y[train])
        model = clone(lda).fit(whitener.transform(X[train]), y[train])
        manual[test] = model.predict_proba(whitener.transform(X[test]))
    np.testing.assert_allclose(honest, manual, rtol=1e-10, atol=1e-12)

    # whitening once on all the data (test cases included) gives different predictions
    whitened_all = ShrunkCovarianceWhitener(lam=10).fit_transform(X, y)
    leaky = cross_val_predict(clone(lda), whitened_all, y, cv=cv, method="predict_proba")
    assert np.abs(honest - leaky).max() > 1e-3


@parametrize_with_checks([ShrunkCovarianceWhitener(), ShrunkCovarianceWhitener(lam=0.0)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


# ---------------------------------------------------------------------------- errors


def test_rejects_nan_and_inf(small_data):
    X, y = small_data
    bad = X.copy()
    bad[3, 2] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN"):
        ShrunkCovarianceWhitener().fit(bad, y)
    model = ShrunkCovarianceWhitener().fit(X, y)
    bad[3, 2] = np.inf
    with pytest.raises(ValueError, match="Input X contains infinity"):
        model.transform(bad)


def test_rejects_single_class(small_data):
    X, _ = small_data
    with pytest.raises(InputValueError, match=r"y has a single class \('a'\).*at least two"):
        ShrunkCovarianceWhitener().fit(X, np.full(len(X), "a"))


def test_rejects_continuous_target(small_data):
    X, _ = small_data
    with pytest.raises(ValueError, match="Unknown label type"):
        ShrunkCovarianceWhitener().fit(X, np.linspace(0, 1, len(X)))


def test_rejects_y_none(small_data):
    X, _ = small_data
    with pytest.raises(ValueError, match="requires y to be passed"):
        ShrunkCovarianceWhitener().fit(X, None)


def test_rejects_too_few_samples_per_class_count():
    X = np.array([[0.0, 1.0], [1.0, 3.0], [2.0, 2.0]])
    with pytest.raises(InputValueError, match=r"more samples than classes \(n > G\), got n_samples=3 and 3 classes"):
        ShrunkCovarianceWhitener().fit(X, [0, 1, 2])


@pytest.mark.parametrize("lam", [10.0, 0.0])
def test_constant_columns_pass_through_as_zeros(small_data, lam):
    """A constant column (Golub after floor/ceiling has hundreds) carries no information and cannot be whitened
    (zero variance, a singular Σ̂ for every lam): it is output as zeros with one warning naming how many, and the
    other columns are whitened exactly as without it. The classifier then sees a constant feature (F = 0)."""
    X, y = small_data
    X = X.copy()
    X[:, 2] = 0.1  # 0.1 is not exact in binary: the class means round, the check must not
    X[:, 4] = 7.0
    with pytest.warns(UserWarning, match=r"2 constant columns \(column 2, column 4\).*output as zeros") as record:
        model = ShrunkCovarianceWhitener(lam=lam).fit(X, y)
    assert len([w for w in record if "constant" in str(w.message)]) == 1
    np.testing.assert_array_equal(model.constant_columns_, [2, 4])
    keep = [0, 1, 3, 5]
    reference = ShrunkCovarianceWhitener(lam=lam).fit(X[:, keep], y)
    test = X + 0.5  # a test row may differ in a constant column: it is still ignored
    out = model.transform(test)
    np.testing.assert_array_equal(out[:, [2, 4]], 0.0)
    np.testing.assert_allclose(out[:, keep], reference.transform(test[:, keep]), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(model.cholesky_ @ model.cholesky_.T, model.covariance_, rtol=1e-12, atol=1e-13)
    np.testing.assert_array_equal(model.covariance_[[2, 4]], 0.0)


def test_overflowing_column_is_named(small_data):
    from hdbayes.exceptions import InputValueError

    X, y = small_data
    X = X.copy()
    X[5, 3] = 1e308
    with pytest.raises(InputValueError, match=r"column 3 is too large.*1e\+308 in row 5"):
        ShrunkCovarianceWhitener().fit(X, y)
    small = small_data[0] * [1.0, 1.0, 1.0, 1e-3, 1.0, 1.0]  # column 3 has sd ~ 1e-3: 1e308 / L_33 overflows
    model = ShrunkCovarianceWhitener().fit(small, y)
    assert np.isfinite(model.transform(X * [1, 1, 1, 1e-3, 1, 1])).all()  # 1e305 whitens finitely
    with pytest.raises(InputValueError, match=r"whitened row 5 is not finite.*1e\+308 in column 3"):
        model.transform(X)


def test_rejects_column_constant_within_each_class(small_data):
    """Constant within classes but different between them: still a zero within-class variance."""
    X, y = small_data
    frame = pd.DataFrame(X, columns=[f"g{j}" for j in range(X.shape[1])])
    frame["g3"] = np.unique(y, return_inverse=True)[1] * 1.5
    with pytest.raises(InputValueError, match=r"column 3 \('g3'\) is constant within every class but not overall"):
        ShrunkCovarianceWhitener().fit(frame, y)


def test_rejects_collinear_columns_without_shrinkage(small_data):
    X, y = small_data
    X = np.column_stack([X, X[:, 0] - 2 * X[:, 1]])
    with pytest.raises(
        ValueError, match=r"singular: within classes column 6 is \(numerically\) a linear combination.*use lam > 0"
    ):
        ShrunkCovarianceWhitener(lam=0).fit(X, y)
    assert np.all(np.isfinite(ShrunkCovarianceWhitener(lam=1).fit_transform(X, y)))


def test_rejects_sparse(small_data):
    X, y = small_data
    with pytest.raises(InputTypeError, match=r"does not accept sparse input.*toarray"):
        ShrunkCovarianceWhitener().fit(sp.csr_matrix(X), y)
    model = ShrunkCovarianceWhitener().fit(X, y)
    with pytest.raises(TypeError, match="does not accept sparse input"):
        model.transform(sp.csc_array(X))


@pytest.mark.parametrize("lam", [-1.0, np.inf, np.nan, "10", None])
def test_rejects_bad_lam(small_data, lam):
    X, y = small_data
    with pytest.raises(InvalidParameterError, match=r"'lam' parameter of ShrunkCovarianceWhitener must be a float "
                                                    r"in the range \[0.0, inf\)"):  # fmt: skip
        ShrunkCovarianceWhitener(lam=lam).fit(X, y)


def test_transform_checks_shape_and_fit(small_data):
    X, y = small_data
    with pytest.raises(ValueError, match="not fitted"):
        ShrunkCovarianceWhitener().transform(X)
    model = ShrunkCovarianceWhitener().fit(X, y)
    with pytest.raises(ValueError, match="expecting 6 features"):
        model.transform(X[:, :5])


def test_scikit_learn_validation_errors_are_input_errors(small_data):
    """NaN, a wrong feature count or a continuous target are the user's mistakes (InputValueError), with
    scikit-learn's messages."""
    X, y = small_data
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(InputValueError, match="Input X contains NaN"):
        ShrunkCovarianceWhitener().fit(bad, y)
    with pytest.raises(InputValueError, match="Unknown label type"):
        ShrunkCovarianceWhitener().fit(X, np.linspace(0, 1, len(X)))
    with pytest.raises(InputValueError, match="expecting 6 features"):
        ShrunkCovarianceWhitener().fit(X, y).transform(X[:, :5])
