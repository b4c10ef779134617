"""Tests for hdbayes.selection: relevance statistics and top-k / threshold selection."""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.feature_selection import f_classif

from hdbayes.exceptions import InputTypeError, InputValueError
from hdbayes.selection import (
    THRESHOLD_RTOL,
    Selection,
    abs_correlation,
    constant_features,
    correlation_from_sums,
    f_statistic,
    select_features,
    select_from_scores,
)


def _corrcoef_oracle(X, y):
    """|Pearson correlation| of every column with y by numpy.corrcoef, 0 for constant columns."""
    X = np.asarray(X, dtype=float)
    out = np.zeros(X.shape[1])
    for j in range(X.shape[1]):
        if np.ptp(X[:, j]) > 0:
            out[j] = abs(np.corrcoef(X[:, j], y)[0, 1])
    return out


@pytest.fixture
def binary_problem():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, size=80)
    X = (rng.uniform(size=(80, 50)) < np.where(y[:, None] == 1, 0.6, 0.4)).astype(np.int64)
    X[:, 3] = 0  # constant columns
    X[:, 7] = 1
    return X, y


@pytest.fixture
def continuous_problem():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, size=70)
    X = rng.normal(size=(70, 40)) + 0.5 * y[:, None] * rng.normal(size=40)
    X[:, 5] = 0.1  # constant, non-integer
    X[:, 6] = 3.0
    X[:, 8] += 1e6  # large offset: centring must avoid cancellation
    return X, y


# ---------------------------------------------------------------------------
# abs_correlation
# ---------------------------------------------------------------------------


def test_abs_correlation_binary_matches_corrcoef(binary_problem):
    X, y = binary_problem
    r = abs_correlation(X, y)
    np.testing.assert_allclose(r, _corrcoef_oracle(X, y), rtol=1e-12, atol=1e-14)
    assert r[3] == 0.0 and r[7] == 0.0


def test_abs_correlation_continuous_matches_corrcoef(continuous_problem):
    X, y = continuous_problem
    r = abs_correlation(X, y)
    np.testing.assert_allclose(r, _corrcoef_oracle(X, y), rtol=1e-9, atol=1e-12)
    assert r[5] == 0.0 and r[6] == 0.0
    assert np.all((r >= 0) & (r <= 1))


def test_abs_correlation_perfect_and_constant_response():
    y = np.array([0, 0, 1, 1, 1])
    X = np.column_stack([y, 1 - y, [0, 1, 0, 1, 0]])
    np.testing.assert_allclose(abs_correlation(X, y)[:2], 1.0, rtol=1e-15)
    # a constant response has no correlation with anything
    np.testing.assert_array_equal(abs_correlation(X, np.ones(5, dtype=int)), 0.0)


@pytest.mark.parametrize("scale", [1e-9, 1e-5, 1e6])
def test_abs_correlation_is_scale_invariant(continuous_problem, scale):
    X, y = continuous_problem
    np.testing.assert_allclose(abs_correlation(X * scale, y), abs_correlation(X, y), rtol=1e-8, atol=1e-12)
    # sparse path (no centring; leave out the column with offset 1e6 whose spread is 1e-6 of its size)
    Xs = sp.csc_matrix(np.where(np.abs(X) > 1, X, 0.0)[:, :8] * scale)
    np.testing.assert_allclose(abs_correlation(Xs, y), _corrcoef_oracle(Xs.toarray(), y), rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_abs_correlation_sparse_equals_dense(binary_problem, fmt):
    X, y = binary_problem
    dense = abs_correlation(X, y)
    # binary data: the same exact sums, so bit-identical values (ties stay ties)
    np.testing.assert_array_equal(abs_correlation(sp.csr_matrix(X).asformat(fmt), y), dense)
    np.testing.assert_array_equal(abs_correlation(sp.csr_array(X).asformat(fmt), y), dense)


def test_abs_correlation_dataframe_equals_dense(binary_problem, continuous_problem):
    X, y = binary_problem
    frame = pd.DataFrame(X, columns=[f"g{j}" for j in range(X.shape[1])])
    np.testing.assert_array_equal(abs_correlation(frame, pd.Series(y)), abs_correlation(X, y))
    X, y = continuous_problem
    np.testing.assert_allclose(abs_correlation(pd.DataFrame(X), y), abs_correlation(X, y), rtol=1e-13)


def test_abs_correlation_sparse_continuous_matches_dense():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, size=60)
    X = sp.random(60, 30, density=0.3, format="csc", random_state=4)
    np.testing.assert_allclose(abs_correlation(X, y), abs_correlation(X.toarray(), y), rtol=1e-10, atol=1e-14)


def test_abs_correlation_rejects_non_binary_response(binary_problem):
    X, y = binary_problem
    with pytest.raises(ValueError, match="binary response"):
        abs_correlation(X, y + 1)
    with pytest.raises(ValueError, match="binary response"):
        abs_correlation(X, np.where(y == 1, 0.5, 0.0))
    with pytest.raises(ValueError, match="1-D"):
        abs_correlation(X, y[:-1])


def test_abs_correlation_rejects_nan(binary_problem):
    X, y = binary_problem
    X = X.astype(float)
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        abs_correlation(X, y)


def test_correlation_from_sums_lattice_form():
    """For binary features the sums give thesis eq. 2.45–2.46."""
    n0, n1 = 6, 9
    n, ybar = n0 + n1, n1 / (n0 + n1)
    for i0 in range(n0 + 1):
        for i1 in range(n1 + 1):
            m = i0 + i1
            expected = (
                0.0
                if m in (0, n)
                else (-ybar * i0 + (1 - ybar) * i1) / (np.sqrt(n * ybar * (1 - ybar)) * np.sqrt(m - m * m / n))
            )
            assert correlation_from_sums(i1, m, m, n, n1) == pytest.approx(expected, abs=1e-14)


def test_abs_correlation_of_huge_sparse_matrix(sparse_binary):
    """200 × 10^6, density 1e-3: nothing of size n × p is densified."""
    X = sparse_binary(200, 1_000_000, 1e-3, seed=5)
    y = np.random.default_rng(6).integers(0, 2, size=200)
    r = abs_correlation(X, y)
    assert r.shape == (1_000_000,)
    cols = [0, 1, 17, 999_999] + list(np.flatnonzero(X.getnnz(axis=0) > 1)[:20])
    np.testing.assert_allclose(r[cols], _corrcoef_oracle(X[:, cols].toarray(), y), rtol=1e-12, atol=1e-15)
    empty = X.getnnz(axis=0) == 0
    assert empty.any() and np.all(r[empty] == 0.0)
    sel = select_features(X, y, n_features_to_select=100, random_state=0)
    assert sel.n_selected == 100 and sel.n_total == 1_000_000
    assert np.all(r[sel.indices] >= sel.threshold)
    assert np.sum(r > sel.threshold * (1 + THRESHOLD_RTOL)) <= 100


# ---------------------------------------------------------------------------
# f_statistic
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("n_classes", [2, 3, 5])
def test_f_statistic_matches_sklearn(n_classes):
    rng = np.random.default_rng(n_classes)
    y = rng.integers(0, n_classes, size=90)
    X = rng.normal(size=(90, 25)) + rng.normal(size=(n_classes, 25))[y]
    expected, _ = f_classif(X, y)
    X[:, 4] += 1e5  # F is shift invariant; the dense path centres, so no cancellation
    np.testing.assert_allclose(f_statistic(X, y), expected, rtol=1e-8)
    np.testing.assert_allclose(f_statistic(sp.csr_matrix(X), y), expected, rtol=1e-4)
    np.testing.assert_allclose(f_statistic(sp.csr_matrix(X[:, 5:]), y), expected[5:], rtol=1e-10)
    frame = pd.DataFrame(X)
    np.testing.assert_allclose(f_statistic(frame, pd.Series(y).map(lambda c: f"class{c}")), expected, rtol=1e-8)


def test_f_statistic_binary_features_sparse_equals_dense(binary_problem):
    X, y = binary_problem
    dense = f_statistic(X, y)
    np.testing.assert_allclose(f_statistic(sp.csc_matrix(X), y), dense, rtol=1e-9, atol=1e-12)
    ok = X.std(axis=0) > 0
    np.testing.assert_allclose(dense[ok], f_classif(X[:, ok], y)[0], rtol=1e-10)


def test_f_statistic_degenerate_columns():
    y = np.array([0, 0, 0, 1, 1, 1])
    X = np.column_stack([np.full(6, 2.5), [1, 1, 1, 4, 4, 4], [1, 2, 3, 1, 2, 3]])
    f = f_statistic(X, y)
    assert f[0] == 0.0  # constant
    assert np.isinf(f[1])  # no within-class variation, different means
    assert f[2] == pytest.approx(0.0, abs=1e-12)  # identical class means


def test_f_statistic_for_two_classes_is_monotone_in_abs_correlation(binary_problem):
    """With G = 2, F = (n − 2) r² / (1 − r²): both statistics rank features alike."""
    X, y = binary_problem
    r = abs_correlation(X, y)
    f = f_statistic(X, y)
    n = X.shape[0]
    ok = r < 1
    np.testing.assert_allclose(f[ok], (n - 2) * r[ok] ** 2 / (1 - r[ok] ** 2), rtol=1e-9, atol=1e-12)


def test_f_statistic_errors():
    X = np.arange(12.0).reshape(4, 3)
    with pytest.raises(ValueError, match="at least two classes"):
        f_statistic(X, [1, 1, 1, 1])
    with pytest.raises(ValueError, match="more cases"):
        f_statistic(X[:2], [0, 1])
    with pytest.raises(ValueError, match="1-D"):
        f_statistic(X, [0, 1, 0])


# ---------------------------------------------------------------------------
# top-k and threshold selection
# ---------------------------------------------------------------------------


def test_top_k_selects_largest_and_sets_gamma():
    scores = np.array([0.1, 0.9, 0.3, 0.7, 0.5, 0.2])
    sel = select_from_scores(scores, n_features_to_select=3)
    np.testing.assert_array_equal(sel.indices, [1, 3, 4])  # strongest first
    assert sel.threshold == 0.5
    assert sel.strict is True
    assert (sel.n_selected, sel.n_discarded, sel.n_total) == (3, 3, 6)
    assert sel.statistic == "correlation"
    np.testing.assert_array_equal(sel.scores, scores)


def test_top_k_on_data_matches_argsort(binary_problem):
    X, y = binary_problem
    r = abs_correlation(X, y)
    sel = select_features(X, y, n_features_to_select=10, random_state=0)
    assert sel.threshold == np.sort(r)[-10]
    assert set(sel.indices) <= set(np.flatnonzero(r >= sel.threshold))
    assert set(np.flatnonzero(r > sel.threshold * (1 + THRESHOLD_RTOL))) <= set(sel.indices)
    assert np.all(np.diff(r[sel.indices]) <= 1e-12)  # non-increasing


def test_top_k_all_features():
    scores = np.array([0.2, 0.4, 0.1])
    sel = select_from_scores(scores, n_features_to_select=3)
    np.testing.assert_array_equal(sel.indices, [1, 0, 2])
    assert sel.threshold == 0.1 and sel.n_discarded == 0 and sel.strict


def test_top_k_ties_random_but_reproducible():
    scores = np.array([0.9, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.1])
    chosen = []
    for seed in range(40):
        sel = select_from_scores(scores, n_features_to_select=3, random_state=seed)
        assert sel.indices[0] == 0
        assert set(sel.indices[1:]) <= {1, 2, 3, 4, 5, 6}
        assert sel.threshold == 0.5
        assert sel.strict is False  # discarded features tie with γ
        again = select_from_scores(scores, n_features_to_select=3, random_state=seed)
        np.testing.assert_array_equal(sel.indices, again.indices)
        chosen.append(tuple(sel.indices))
    assert len(set(chosen)) > 5  # really random
    gen = select_from_scores(scores, n_features_to_select=3, random_state=np.random.default_rng(3))
    gen2 = select_from_scores(scores, n_features_to_select=3, random_state=np.random.default_rng(3))
    np.testing.assert_array_equal(gen.indices, gen2.indices)


def test_top_k_ties_all_kept_is_strict():
    scores = np.array([0.9, 0.5, 0.5, 0.1])
    sel = select_from_scores(scores, n_features_to_select=3, random_state=0)
    np.testing.assert_array_equal(sel.indices, [0, 1, 2])
    assert sel.threshold == 0.5 and sel.strict is True


def test_top_k_ties_among_kept_above_gamma_do_not_matter():
    scores = np.array([0.8, 0.8, 0.5, 0.3, 0.3])
    sel = select_from_scores(scores, n_features_to_select=3)
    assert sel.strict is True and sel.threshold == 0.5


def test_ties_between_a_binary_feature_and_its_flip():
    """|COR| of x and 1 − x are equal mathematically but may differ by an ulp."""
    y = np.array([0] * 4 + [1] * 5)
    a = np.array([0, 0, 0, 0, 1, 0, 0, 0, 0])  # I0 = 0, I1 = 1
    X = np.column_stack([a, 1 - a, np.zeros(9)])
    r = abs_correlation(X, y)
    assert r[0] == pytest.approx(r[1], rel=1e-14)
    picks = set()
    for seed in range(20):
        sel = select_features(X, y, n_features_to_select=1, random_state=seed)
        assert sel.strict is False
        discarded = np.setdiff1d(np.arange(3), sel.indices)
        assert sel.discarded(r[discarded]).all()
        picks.add(int(sel.indices[0]))
    assert picks == {0, 1}


def test_threshold_selection():
    scores = np.array([0.1, 0.9, 0.3, 0.7, 0.5, 0.3])
    sel = select_from_scores(scores, threshold=0.3)
    np.testing.assert_array_equal(sel.indices, [1, 3, 4])
    assert sel.threshold == 0.3 and sel.strict is False
    assert sel.n_discarded == 3
    assert select_from_scores(scores, threshold=0.95).n_selected == 0
    assert select_from_scores(scores, threshold=0).n_selected == 6


def test_threshold_selection_counts_values_at_the_threshold_as_discarded():
    t = 0.3
    scores = np.array([t * (1 + 1e-13), t * (1 - 1e-13), 0.5])
    sel = select_from_scores(scores, threshold=t)
    np.testing.assert_array_equal(sel.indices, [2])
    assert sel.discarded(scores[:2]).all()


def test_select_features_f_statistic():
    rng = np.random.default_rng(8)
    y = rng.integers(0, 3, size=60)
    X = rng.normal(size=(60, 20))
    X[:, 4] += 3 * y
    sel = select_features(X, y, n_features_to_select=1, statistic="f")
    np.testing.assert_array_equal(sel.indices, [4])
    assert sel.statistic == "f"
    assert sel.threshold == pytest.approx(f_classif(X, y)[0][4], rel=1e-8)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"n_features_to_select": 7}, ValueError, "larger than the number of features"),
        ({"n_features_to_select": 0}, ValueError, "at least 1"),
        ({"n_features_to_select": -2}, ValueError, "at least 1"),
        ({"n_features_to_select": 2.0}, TypeError, "integer"),
        ({"n_features_to_select": True}, TypeError, "integer"),
        ({"threshold": -0.1}, ValueError, "threshold must be a finite number >= 0"),
        ({"threshold": np.nan}, ValueError, "threshold must be a finite number >= 0"),
        ({}, ValueError, "exactly one"),
        ({"n_features_to_select": 2, "threshold": 0.1}, ValueError, "exactly one"),
    ],
)
def test_selection_errors(kwargs, error, match):
    scores = np.linspace(0, 1, 6)
    with pytest.raises(error, match=match) as info:
        select_from_scores(scores, **kwargs)
    assert isinstance(info.value, (InputValueError, InputTypeError))  # the user's mistake, not a bug


def test_select_features_errors(binary_problem):
    X, y = binary_problem
    with pytest.raises(InputValueError, match="statistic must be one of"):
        select_features(X, y, n_features_to_select=2, statistic="mutual_info")
    with pytest.raises(InputValueError, match="binary response"):
        select_features(X, y + 2, n_features_to_select=2)
    with pytest.raises(InputValueError, match="larger than the number of features"):
        select_features(X, y, n_features_to_select=X.shape[1] + 1)
    with pytest.raises(InputValueError, match="NaN"):
        select_features(np.full((4, 2), np.nan), [0, 1, 0, 1], n_features_to_select=1)
    with pytest.raises(InputValueError, match=r"got shape \(3,\)$"):
        abs_correlation(X, y[:3])
    assert select_features(X, y + 2, n_features_to_select=2, statistic="f").n_selected == 2


# ---------------------------------------------------------------------------
# Selection.discarded
# ---------------------------------------------------------------------------


def test_discarded_strict_and_inclusive():
    gamma = 0.4
    values = np.array([0.1, gamma * (1 - 1e-12), gamma, gamma * (1 + 1e-12), 0.5, gamma * (1 - 1e-6)])
    strict = Selection(np.array([0]), gamma, 10, strict=True, statistic="correlation")
    inclusive = Selection(np.array([0]), gamma, 10, strict=False, statistic="correlation")
    # values within the relative tolerance count as equal to γ
    np.testing.assert_array_equal(strict.discarded(values), [True, False, False, False, False, True])
    np.testing.assert_array_equal(inclusive.discarded(values), [True, True, True, True, False, True])


def test_discarded_agrees_with_the_selection(binary_problem, continuous_problem):
    for (X, y), k in [(binary_problem, 5), (binary_problem, 12), (continuous_problem, 4)]:
        top_k = select_features(X, y, n_features_to_select=k, random_state=1)
        for sel in (top_k, select_features(X, y, threshold=0.15)):
            r = sel.scores
            rest = np.setdiff1d(np.arange(X.shape[1]), sel.indices)
            assert sel.discarded(r[rest]).all()
            if sel.strict:
                assert not sel.discarded(r[sel.indices]).any()
            else:  # only selected features at γ lie in the (closed) discarded region
                inside = sel.discarded(r[sel.indices])
                np.testing.assert_allclose(r[sel.indices][inside], sel.threshold, rtol=THRESHOLD_RTOL)


def test_binary_data_top_k_with_boundary_ties_is_not_strict(binary_problem):
    X, y = binary_problem
    r = abs_correlation(X, y)
    # pick k so that the k-th value is tied with a discarded feature
    sorted_r = np.sort(r)[::-1]
    k = next(i + 1 for i in range(len(r) - 1) if np.isclose(sorted_r[i], sorted_r[i + 1], rtol=1e-12))
    sel = select_features(X, y, n_features_to_select=k, random_state=0)
    assert sel.strict is False
    assert sel.discarded(r).sum() == X.shape[1] - k + np.isclose(r[sel.indices], sel.threshold, rtol=1e-12).sum()


# ---------------------------------------------------------------------------
# constant_features
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["dense", "csr", "csc"])
def test_constant_features_dense_and_sparse(fmt):
    rng = np.random.default_rng(2)
    X = (rng.uniform(size=(6, 40)) < rng.uniform(size=40)) * rng.choice([1.0, 2.0, -1.0], size=(6, 40))
    X[:, 0] = 0.0
    X[:, 1] = 3.0
    X[:, 2] = [0, 0, 0, 0, 0, 5]
    expected = np.array([np.unique(X[:, j]).size == 1 for j in range(X.shape[1])])
    assert expected[:3].tolist() == [True, True, False]
    matrix = X if fmt == "dense" else getattr(sp, f"{fmt}_matrix")(X)
    np.testing.assert_array_equal(constant_features(matrix), expected)


def test_constant_features_with_explicit_zeros():
    X = sp.csc_matrix((np.array([0.0, 0.0, 1.0]), (np.array([0, 1, 0]), np.array([0, 0, 1]))), shape=(3, 2))
    np.testing.assert_array_equal(constant_features(X), [True, False])
