"""Tests for hdbayes.statistics (mergeable sufficient statistics)."""

import pickle

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hdbayes.exceptions import InputTypeError, InputValueError
from hdbayes.selection import abs_correlation, correlation_from_sums
from hdbayes.statistics import BinaryClassCounts


def direct_counts(X, y):
    """(N_0, N_1) and I_{c,j} by loops over the cases."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X)
    class_counts = np.zeros(2, dtype=np.int64)
    ones = np.zeros((2, X.shape[1]), dtype=np.int64)
    for row, label in zip(X, y, strict=True):
        class_counts[int(label)] += 1
        ones[int(label)] += row.astype(np.int64)
    return class_counts, ones


@pytest.mark.parametrize("kind", ["int8", "float64", "bool", "csr", "csc"])
def test_from_data_counts_the_ones_of_each_class(kind):
    rng = np.random.default_rng(0)
    X = (rng.random((37, 11)) < 0.3).astype(np.int8)
    y = (rng.random(37) < 0.4).astype(int)
    data = {"int8": X, "float64": X.astype(float), "bool": X.astype(bool), "csr": sp.csr_matrix(X),
            "csc": sp.csc_matrix(X.astype(float))}[kind]  # fmt: skip
    counts = BinaryClassCounts.from_data(data, y)
    class_counts, ones = direct_counts(X, y)
    np.testing.assert_array_equal(counts.class_counts, class_counts)
    np.testing.assert_array_equal(counts.ones, ones)
    assert counts.ones.dtype == np.int64 and counts.class_counts.dtype == np.int64
    assert counts.n_samples == 37 and counts.n_features == 11 and counts.feature_names is None


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("sparse", [False, True])
def test_correlation_is_bit_identical_to_abs_correlation(seed, sparse):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 60))
    X = (rng.random((n, 200)) < rng.random(200)).astype(np.int8)
    X[:, :3] = [0, 1, 0]  # constant columns, and a column equal to 0 ...
    X[:, 2] = rng.integers(0, 2, n)
    y = rng.integers(0, 2, n)
    data = sp.csc_matrix(X) if sparse else X
    np.testing.assert_array_equal(BinaryClassCounts.from_data(data, y).correlation(), abs_correlation(data, y))


@pytest.mark.parametrize("n0, n1", [(1, 1), (3, 4), (10, 7), (25, 25)])
def test_correlation_equals_correlation_from_sums_on_the_whole_lattice(n0, n1):
    """Every (I_0, I_1): the values the adjustment factor compares with γ."""
    i0, i1 = np.meshgrid(np.arange(n0 + 1), np.arange(n1 + 1), indexing="ij")
    ones = np.vstack([i0.ravel(), i1.ravel()])
    counts = BinaryClassCounts([n0, n1], ones)
    m = ones.sum(axis=0)
    expected = np.abs(correlation_from_sums(ones[1].astype(float), m, m, n0 + n1, float(n1)))
    np.testing.assert_array_equal(counts.correlation(), expected)


def test_correlation_of_a_constant_class_and_of_no_data_is_zero():
    assert np.all(BinaryClassCounts([0, 5], [[0, 0], [2, 5]]).correlation() == 0)
    assert np.all(BinaryClassCounts.zero(4).correlation() == 0)


def test_constant_features():
    counts = BinaryClassCounts([2, 3], [[0, 2, 1], [0, 3, 1]])
    np.testing.assert_array_equal(counts.constant_features(), [True, True, False])


def split_strategy():
    """(n, p, seed, labels of the parts, sparse): random data cut into up to 4 parts, empty ones included."""
    return st.tuples(
        st.integers(0, 30), st.integers(0, 8), st.integers(0, 2**32 - 1), st.integers(1, 4), st.booleans()
    )


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(split_strategy(), st.data())
def test_statistics_of_a_union_are_the_sum_of_the_statistics_of_its_parts(case, data):
    n, p, seed, n_parts, sparse = case
    rng = np.random.default_rng(seed)
    X = (rng.random((n, p)) < rng.random(p)).astype(np.int8)
    y = rng.integers(0, 2, n)
    part = np.array(data.draw(st.lists(st.integers(0, n_parts - 1), min_size=n, max_size=n)), dtype=int)
    rows = rng.permutation(n)  # the parts need not be contiguous

    def stats(index):
        block = X[index]
        return BinaryClassCounts.from_data(sp.csr_matrix(block) if sparse else block, y[index])

    whole = stats(rows)
    parts = [stats(rows[part == q]) for q in range(n_parts)]  # some parts are empty
    assert sum(parts) == whole
    assert sum(parts[1:], parts[0]) == whole
    assert BinaryClassCounts.zero(p) + whole == whole
    np.testing.assert_array_equal(sum(parts).correlation(), whole.correlation())


def test_addition_of_mismatched_statistics_is_an_input_error():
    a = BinaryClassCounts([1, 1], [[0, 1], [1, 1]], feature_names=["a", "b"])
    with pytest.raises(InputValueError, match="statistics of 2 and of 3 features"):
        a + BinaryClassCounts.zero(3)  # noqa: B018
    with pytest.raises(InputValueError, match="feature 1 is 'b' in one and 'c' in the other"):
        a + BinaryClassCounts.zero(2, feature_names=["a", "c"])  # noqa: B018
    unnamed = BinaryClassCounts.zero(2) + a  # statistics without names add to named ones
    assert list(unnamed.feature_names) == ["a", "b"]
    with pytest.raises(TypeError):
        a + 1  # noqa: B018


def test_feature_names_from_a_dataframe_and_repr():
    X = pd.DataFrame({"g1": [0, 1, 1], "g2": [1, 1, 0], "g3": [0, 0, 1], "g4": [1, 0, 0]})
    counts = BinaryClassCounts.from_data(X, [0, 1, 1])
    assert list(counts.feature_names) == ["g1", "g2", "g3", "g4"]
    assert repr(counts) == "BinaryClassCounts(class_counts=[1, 2], n_features=4, feature_names=['g1', 'g2', 'g3', ...])"
    assert counts != BinaryClassCounts(counts.class_counts, counts.ones)  # names differ
    assert counts == BinaryClassCounts(counts.class_counts, counts.ones, ["g1", "g2", "g3", "g4"])
    assert counts != "not statistics"


def test_pickle_round_trip_and_immutability():
    rng = np.random.default_rng(1)
    counts = BinaryClassCounts.from_data(rng.integers(0, 2, (20, 5)), rng.integers(0, 2, 20),
                                         feature_names=list("abcde"))  # fmt: skip
    clone = pickle.loads(pickle.dumps(counts))
    assert clone == counts and repr(clone) == repr(counts)
    with pytest.raises(ValueError, match="read-only"):
        counts.ones[0, 0] = 3
    with pytest.raises(TypeError, match="unhashable"):
        hash(counts)


def test_bad_input_is_refused_with_clear_messages():
    with pytest.raises(InputValueError, match=r"feature 1 has the value 2"):
        BinaryClassCounts.from_data([[0, 2], [1, 0]], [0, 1])
    with pytest.raises(InputValueError, match=r"'b' has the value nan"):
        BinaryClassCounts.from_data(np.array([[0, np.nan], [1, 0]]), [0, 1], feature_names=["a", "b"])
    with pytest.raises(InputValueError, match="y must be 1-D with 2 entries"):
        BinaryClassCounts.from_data([[0, 1], [1, 0]], [0, 1, 1])
    with pytest.raises(InputValueError, match="coded 0/1"):
        BinaryClassCounts.from_data([[0, 1], [1, 0]], [0, 2])
    with pytest.raises(InputValueError, match="one name per feature"):
        BinaryClassCounts.from_data([[0, 1], [1, 0]], [0, 1], feature_names=["a"])
    with pytest.raises(InputValueError, match="0 <= ones"):
        BinaryClassCounts([1, 1], [[2, 0], [0, 0]])
    with pytest.raises(InputValueError, match="shape"):
        BinaryClassCounts([1, 1, 1], [[0], [0]])
    with pytest.raises(InputTypeError, match="integer counts"):
        BinaryClassCounts([1.5, 1], [[0], [0]])


def test_empty_data_gives_zero_statistics():
    counts = BinaryClassCounts.from_data(np.zeros((0, 3), dtype=np.int8), np.zeros(0, dtype=int))
    assert counts == BinaryClassCounts.zero(3) and counts.n_samples == 0


# -- GaussianClassMoments ----------------------------------------------------------------------------------------


def assert_close_moments(a, b, rtol=1e-12):
    np.testing.assert_array_equal(a.classes, b.classes)
    np.testing.assert_array_equal(a.class_counts, b.class_counts)
    np.testing.assert_allclose(a.means, b.means, rtol=rtol, atol=1e-300)
    scale = np.maximum(a.scatter.max(initial=0), 1.0)
    np.testing.assert_allclose(a.scatter, b.scatter, rtol=rtol, atol=rtol * scale)


def direct_moments(X, y, classes):
    """n_g, x̄_g and Σ (x − x̄_g)² by loops over the classes (dense, two passes)."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)
    counts = np.array([np.sum(y == c) for c in classes])
    means = np.array([X[y == c].mean(axis=0) if np.any(y == c) else np.zeros(X.shape[1]) for c in classes])
    scatter = np.array([((X[y == c] - means[g]) ** 2).sum(axis=0) for g, c in enumerate(classes)])
    return counts, means, scatter


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gaussian_moments_and_their_f_statistic(seed, sparse):
    from hdbayes.selection import f_statistic
    from hdbayes.statistics import GaussianClassMoments

    rng = np.random.default_rng(seed)
    y = rng.choice([3, 5, 9], 80)
    X = rng.normal(size=(80, 30)) * rng.uniform(0.1, 5, 30) + (y[:, None] == 5) * rng.normal(0, 1, 30)
    X[:, 4] = 2.5  # constant: F = 0
    X[:, 7] = np.select([y == 3, y == 5], [1.0, 2.0], 4.0)  # no within-class variation: F = inf
    if sparse:
        zero = rng.random(X.shape) < 0.5
        zero[:, [4, 7]] = False
        X[zero] = 0
        X = sp.csr_matrix(X)
    moments = GaussianClassMoments.from_data(X, y)
    counts, means, scatter = direct_moments(X, y, [3, 5, 9])
    np.testing.assert_array_equal(moments.class_counts, counts)
    np.testing.assert_allclose(moments.means, means, rtol=1e-14)
    np.testing.assert_allclose(moments.scatter, scatter, rtol=1e-12)
    f = moments.f_statistic()
    expected = f_statistic(X, y)
    assert f[4] == 0 == expected[4] and f[7] == np.inf == expected[7]
    np.testing.assert_allclose(f, expected, rtol=1e-12)
    split = GaussianClassMoments.from_data(X[:31], y[:31]) + GaussianClassMoments.from_data(X[31:], y[31:])
    np.testing.assert_allclose(split.f_statistic(), expected, rtol=1e-12)


def test_gaussian_moments_merge_is_stable_with_a_large_offset():
    # values 1e6 + N(0, 1): raw sums of squares lose ~12 of the 16 digits; the pairwise update keeps them
    from hdbayes.statistics import GaussianClassMoments

    rng = np.random.default_rng(4)
    X = 1e6 + rng.normal(size=(4000, 3))
    y = np.zeros(4000, dtype=int)
    shards = [GaussianClassMoments.from_data(X[i:i + 37], y[i:i + 37]) for i in range(0, 4000, 37)]
    merged = sum(shards)
    two_pass = ((X - X.mean(axis=0)) ** 2).sum(axis=0)  # the exact-enough oracle: centred first
    raw = (X**2).sum(axis=0) - X.sum(axis=0) ** 2 / 4000  # what merging raw sums would give
    assert np.max(np.abs(merged.scatter - two_pass) / two_pass) < 1e-10
    assert np.max(np.abs(raw - two_pass) / two_pass) > 1e-7  # the failure the pairwise update avoids
    np.testing.assert_allclose(merged.means[0], X.mean(axis=0), rtol=1e-14)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(split_strategy(), st.data())
def test_gaussian_moments_of_a_union_are_the_sum_of_the_moments_of_its_parts(case, data):
    from hdbayes.statistics import GaussianClassMoments

    n, p, seed, n_parts, sparse = case
    rng = np.random.default_rng(seed)
    X = rng.normal(rng.normal(0, 100, p), rng.uniform(0.01, 10, p), size=(n, p))
    y = rng.choice(["a", "b", "c"], n)
    part = np.array(data.draw(st.lists(st.integers(0, n_parts - 1), min_size=n, max_size=n)), dtype=int)

    def moments(rows, classes=None):
        block = X[rows]
        return GaussianClassMoments.from_data(sp.csr_matrix(block) if sparse else block, y[rows], classes=classes)

    whole = moments(np.arange(n), classes=["a", "b", "c"])
    parts = [moments(np.flatnonzero(part == q)) for q in range(n_parts)]  # classes absent from some parts
    assert_close_moments(sum(parts, GaussianClassMoments.zero(p, ["a", "b", "c"])), whole)
    assert_close_moments(sum(parts[::-1], GaussianClassMoments.zero(p, ["c", "a", "b"])), whole)
    union = sum(parts)  # without a class set: the classes of the parts
    np.testing.assert_array_equal(union.classes, np.unique(y))
    restored = pickle.loads(pickle.dumps(whole))
    assert restored == whole and restored is not whole


def test_gaussian_moments_from_dask_and_their_errors():
    from hdbayes.statistics import GaussianClassMoments

    da = pytest.importorskip("dask.array")
    dask = pytest.importorskip("dask")
    rng = np.random.default_rng(5)
    X = 50 + rng.normal(size=(101, 47))
    y = rng.choice([0.5, 1.5, 2.5], 101)
    memory = GaussianClassMoments.from_data(X, y, feature_names=[f"g{j}" for j in range(47)])
    with dask.config.set(scheduler="sync"):
        for chunks in [(23, 10), (101, 47), (7, 47)]:
            Xd = da.from_array(X, chunks=chunks)
            for block in (Xd, Xd.map_blocks(sp.csr_matrix, meta=sp.csr_matrix((0, 0)))):
                chunked = GaussianClassMoments.from_dask(block, da.from_array(y, chunks=30),
                                                         feature_names=memory.feature_names)  # fmt: skip
                assert_close_moments(chunked, memory)
                np.testing.assert_allclose(chunked.f_statistic(), memory.f_statistic(), rtol=1e-12)
        bad = X.copy()
        bad[50, 12] = np.nan
        with pytest.raises(InputValueError, match=r"chunk 2 of X \(rows 46\.\.68\) holds nan in feature 12"):
            GaussianClassMoments.from_dask(da.from_array(bad, chunks=(23, 10)), y)
        with pytest.raises(InputValueError, match="label 2.5, which is not in classes"):
            GaussianClassMoments.from_dask(da.from_array(X, chunks=(23, 10)), y, classes=[0.5, 1.5])
    with pytest.raises(InputValueError, match="cannot add the statistics of 47 and of 3 features"):
        memory + GaussianClassMoments.zero(3, [0.5])
    with pytest.raises(InputValueError, match="feature 0 is 'g0' in one and 'x' in the other"):
        memory + GaussianClassMoments.zero(47, [0.5], feature_names=["x"] * 47)
    with pytest.raises(InputValueError, match="NaN"):
        GaussianClassMoments.from_data(bad, y)
    with pytest.raises(InputValueError, match="at least two classes"):
        GaussianClassMoments.from_data(X, np.zeros(101)).f_statistic()
    with pytest.raises(InputValueError, match="sorted distinct labels"):
        GaussianClassMoments([2, 1], [1, 1], np.zeros((2, 1)), np.zeros((2, 1)))
    with pytest.raises(InputValueError, match=">= 0"):
        GaussianClassMoments([1, 2], [1, 1], np.zeros((2, 1)), -np.ones((2, 1)))
    assert repr(memory) == "GaussianClassMoments(classes=[0.5, 1.5, 2.5], class_counts=" + \
        f"{memory.class_counts.tolist()}, n_features=47)"  # fmt: skip
