"""CategoricalClassCounts and BiasCorrectedCategoricalNB beyond one batch: partial_fit, fit_statistics, dask.

The class × level tables are exact integers, so every path (batches, shards, chunks on workers) must give
the in-memory fit bit for bit.
"""

import pickle

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hdbayes.datasets import simulate_categorical_naive_bayes
from hdbayes.exceptions import InputTypeError, InputValueError
from hdbayes.selection_bias import BiasCorrectedCategoricalNB
from hdbayes.selection_bias.categorical_adjustment import pearson_chi_square
from hdbayes.statistics import CategoricalClassCounts

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")


@pytest.fixture(autouse=True)
def synchronous():
    with dask.config.set(scheduler="sync"):
        yield


@pytest.fixture(scope="module")
def data():
    return simulate_categorical_naive_bayes(
        n_classes=3, n_levels=3, alpha=30.0, n_features=157, n_samples=45, n_test=23, random_state=0
    )


def direct_tables(X, y, classes, n_levels):
    """(N_g) and I_jgl by loops over the cases."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X)
    sizes = np.zeros(len(classes), dtype=np.int64)
    tables = np.zeros((X.shape[1], len(classes), n_levels), dtype=np.int64)
    for row, label in zip(X, y, strict=True):
        g = list(classes).index(label)
        sizes[g] += 1
        for j, level in enumerate(row):
            tables[j, g, int(level)] += 1
    return sizes, tables


FITTED = ("alpha_grid_", "alpha_log_weights_", "log_adjustment_", "log_integral_", "log_marginal_likelihood_",
          "alpha_posterior_", "class_log_prior_", "level_counts_", "selected_features_", "class_count_")  # fmt: skip


def assert_same_model(a, b):
    assert a.statistics_ == b.statistics_
    np.testing.assert_array_equal(a.classes_, b.classes_)
    assert a.n_features_in_ == b.n_features_in_ and a.n_levels_ == b.n_levels_
    for name in FITTED:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


# -- the statistics -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["int8", "float64", "csr", "csc"])
def test_from_data_counts_every_class_and_level(kind):
    rng = np.random.default_rng(0)
    X = rng.integers(0, 4, size=(41, 9)).astype(np.int8)
    X[rng.random(X.shape) < 0.5] = 0  # sparse input: the implicit entries are level 0
    y = rng.choice(np.array(["b", "a", "c"]), 41)
    data = {"int8": X, "float64": X.astype(float), "csr": sp.csr_matrix(X), "csc": sp.csc_matrix(X)}[kind]
    counts = CategoricalClassCounts.from_data(data, y)
    sizes, tables = direct_tables(X, y, ["a", "b", "c"], 4)
    np.testing.assert_array_equal(counts.class_counts, sizes)
    np.testing.assert_array_equal(counts.level_counts, tables)
    assert counts.level_counts.dtype == np.int64 and counts.n_levels == 4
    assert counts.classes.tolist() == ["a", "b", "c"] and counts.n_samples == 41 and counts.n_features == 9
    # X² equals the one the estimator's selection computes from the same tables, bit for bit
    np.testing.assert_array_equal(counts.chi_square(), pearson_chi_square(tables, sizes))


def test_levels_default_to_two_and_widen_to_n_levels():
    y = np.array([0, 1, 1])
    assert CategoricalClassCounts.from_data(np.zeros((3, 2)), y).n_levels == 2
    wide = CategoricalClassCounts.from_data(np.zeros((3, 2)), y, n_levels=5)
    assert wide.n_levels == 5 and wide.level_counts[:, :, 1:].sum() == 0
    assert wide == CategoricalClassCounts.from_data(np.zeros((3, 2)), y).with_levels(5)
    assert wide.with_levels(2) == CategoricalClassCounts.from_data(np.zeros((3, 2)), y)
    with pytest.raises(InputValueError, match="level 2, outside 0..1"):
        CategoricalClassCounts.from_data(np.array([[0], [2], [1]]), y).with_levels(2)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.tuples(st.integers(0, 25), st.integers(0, 6), st.integers(0, 2**32 - 1), st.integers(1, 4),
                 st.booleans()), st.data())  # fmt: skip
def test_statistics_of_a_union_are_the_sum_of_the_statistics_of_its_parts(case, data):
    n, p, seed, n_parts, sparse = case
    rng = np.random.default_rng(seed)
    X = rng.integers(0, rng.integers(1, 5), size=(n, p))
    y = rng.choice(np.array([3, 7, 9]), n)
    part = np.array(data.draw(st.lists(st.integers(0, n_parts - 1), min_size=n, max_size=n)), dtype=int)
    rows = rng.permutation(n)

    def stats(index):  # each part has only the classes and levels it meets
        block = X[index]
        return CategoricalClassCounts.from_data(sp.csr_matrix(block) if sparse else block, y[index])

    whole = stats(rows)
    parts = [stats(rows[part == q]) for q in range(n_parts)]  # some parts are empty
    assert sum(parts) == whole
    assert sum(parts[1:], parts[0]) == whole
    assert CategoricalClassCounts.zero(p, whole.classes) + whole == whole


def test_addition_pickle_repr_and_bad_input():
    X = np.array([[0, 1], [2, 1], [1, 0]])
    counts = CategoricalClassCounts.from_data(pd.DataFrame(X, columns=["s1", "s2"]), ["x", "y", "x"])
    assert counts.feature_names.tolist() == ["s1", "s2"]
    assert repr(counts) == "CategoricalClassCounts(classes=['x', 'y'], class_counts=[2, 1], n_features=2, n_levels=3)"
    copy = pickle.loads(pickle.dumps(counts))
    assert copy == counts and copy.feature_names.tolist() == ["s1", "s2"]
    with pytest.raises(ValueError):
        counts.level_counts[0, 0, 0] = 5  # immutable
    with pytest.raises(InputValueError, match="2 and of 1 features"):
        counts + CategoricalClassCounts.from_data(X[:, :1], ["x", "y", "x"])
    other = CategoricalClassCounts.from_data(pd.DataFrame(X, columns=["s1", "s3"]), ["x", "y", "x"])
    with pytest.raises(InputValueError, match="feature 1 is 's2' in one and 's3' in the other"):
        counts + other
    with pytest.raises(InputTypeError, match="cannot merge classes"):
        counts + CategoricalClassCounts.from_data(X, [1, 2, 1])
    with pytest.raises(InputValueError, match="integer level codes.*feature 1 has the value 0.5"):
        CategoricalClassCounts.from_data([[0, 0.5]], [1])
    with pytest.raises(InputValueError, match="feature 0 has the level code -1"):
        CategoricalClassCounts.from_data([[-1, 0]], [1])
    with pytest.raises(InputValueError, match="feature 1 has level 3, outside 0..2 \\(n_levels\\)"):
        CategoricalClassCounts.from_data([[0, 3]], [1], n_levels=3)
    with pytest.raises(InputValueError, match="n_levels must be at least 2"):
        CategoricalClassCounts.from_data([[0, 0]], [1], n_levels=1)
    with pytest.raises(InputValueError, match="add up to the class sizes"):
        CategoricalClassCounts([0, 1], [2, 1], np.array([[[1, 0], [1, 0]]]))
    with pytest.raises(InputValueError, match="y contains the label 5"):
        CategoricalClassCounts.from_data([[0], [1]], [1, 5], classes=[1, 2])


@pytest.mark.parametrize("chunks", [(7, 40), (45, 157), (11, 13)])
@pytest.mark.parametrize("sparse", [False, True])
def test_from_dask_equals_from_data(data, chunks, sparse):
    X = da.from_array(data.X, chunks=chunks)
    if sparse:
        X = X.map_blocks(sp.csr_matrix, meta=sp.csr_matrix((0, 0), dtype=data.X.dtype))
    y = da.from_array(data.y, chunks=chunks[0])
    assert CategoricalClassCounts.from_dask(X, y) == CategoricalClassCounts.from_data(data.X, data.y)
    assert CategoricalClassCounts.from_dask(X, data.y, n_levels=4) == CategoricalClassCounts.from_data(
        data.X, data.y, n_levels=4
    )


def test_from_dask_names_the_chunk_and_the_feature(data):
    X = data.X.astype(np.float64)
    X[30, 100] = np.nan
    with pytest.raises(InputValueError, match=r"chunk 2 of X \(rows 28..41\) holds nan in feature 100"):
        CategoricalClassCounts.from_dask(da.from_array(X, chunks=(14, 50)), data.y)
    X = data.X.copy()
    X[3, 120] = 3
    with pytest.raises(InputValueError, match=r"chunk 0 of X \(rows 0..13\): feature 120 has level 3, outside 0..2"):
        CategoricalClassCounts.from_dask(da.from_array(X, chunks=(14, 50)), data.y, n_levels=3)


# -- the estimator ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fitted(data):
    return BiasCorrectedCategoricalNB(n_features_to_select=10, random_state=0).fit(data.X, data.y)


@pytest.mark.parametrize("sparse", [False, True])
def test_dask_fit_and_predictions_equal_the_in_memory_ones(data, fitted, sparse):
    X = da.from_array(data.X, chunks=(8, 60))
    if sparse:
        X = X.map_blocks(sp.csr_matrix, meta=sp.csr_matrix((0, 0), dtype=data.X.dtype))
    model = BiasCorrectedCategoricalNB(n_features_to_select=10, random_state=0)
    chunked = model.fit(X, da.from_array(data.y, chunks=8))
    assert_same_model(chunked, fitted)
    X_test = da.from_array(data.X_test, chunks=(5, 157))
    proba = chunked.predict_proba(X_test)
    assert isinstance(proba, da.Array)
    # the model is the same bit for bit; a prediction sums its log-probabilities by a matrix product whose BLAS
    # kernel blocks a 5-row chunk differently from 23 rows, so the last bits may differ (seen with Haswell kernels)
    np.testing.assert_allclose(proba.compute(), fitted.predict_proba(data.X_test), rtol=1e-12, atol=0)
    np.testing.assert_array_equal(chunked.predict(X_test).compute(), fitted.predict(data.X_test))


def test_dask_prediction_errors_name_the_chunk_and_the_feature(data, fitted):
    X = data.X_test.copy()
    j = int(fitted.selected_features_[3])
    X[7, j] = 5
    with pytest.raises(InputValueError, match=rf"chunk 1 of X \(rows 5..9\): feature {j} has level 5"):
        fitted.predict_proba(da.from_array(X, chunks=(5, 157))).compute()
    with pytest.raises(InputValueError, match="expecting 157 features"):
        fitted.predict_proba(da.from_array(X[:, :10], chunks=(5, 10)))


def test_partial_fit_in_batches_equals_fit(data, fitted):
    model = BiasCorrectedCategoricalNB(n_features_to_select=10, random_state=0)
    y = data.y
    first = np.flatnonzero(y == y[0])[:5]  # a first batch of one class and few levels: nothing is fitted yet
    rest = np.setdiff1d(np.arange(y.shape[0]), first)
    model.partial_fit(data.X[first], y[first], classes=np.unique(y))
    assert not hasattr(model, "alpha_posterior_")
    with pytest.raises(Exception, match="not fitted"):
        model.predict_proba(data.X_test)
    for batch in np.array_split(rest, 4):
        model.partial_fit(sp.csr_matrix(data.X[batch]), y[batch])
    # fit on the cases in the order the batches gave them: the same tables, so the same model
    assert_same_model(model, fitted)
    np.testing.assert_array_equal(model.predict_proba(data.X_test), fitted.predict_proba(data.X_test))


def test_partial_fit_levels_grow_as_fit_on_the_union():
    rng = np.random.default_rng(3)
    y = np.repeat([0, 1, 2], 8)
    X = rng.integers(0, 2, size=(24, 30))
    X[20:, 5] = 2  # level 2 appears only in the last batch
    model = BiasCorrectedCategoricalNB(n_features_to_select=4, random_state=0)
    model.partial_fit(X[:20], y[:20], classes=[0, 1, 2])
    assert model.n_levels_ == 2
    model.partial_fit(X[20:], y[20:])
    assert model.n_levels_ == 3
    assert_same_model(model, BiasCorrectedCategoricalNB(n_features_to_select=4, random_state=0).fit(X, y))


def test_partial_fit_refusals_leave_the_estimator_as_it_was(data):
    model = BiasCorrectedCategoricalNB(n_features_to_select=10, random_state=0)
    with pytest.raises(InputValueError, match="classes must be passed on the first call"):
        model.partial_fit(data.X, data.y)
    model.partial_fit(data.X[:30], data.y[:30], classes=np.unique(data.y))
    before = pickle.dumps(model)
    with pytest.raises(InputValueError, match="y contains the label 9"):
        model.partial_fit(data.X[30:32], np.array([0, 9]))
    with pytest.raises(InputValueError, match="differs from the classes of the first call"):
        model.partial_fit(data.X[30:32], data.y[30:32], classes=[0, 1])
    bad = data.X[30:32].copy()
    bad[1, 17] = -2
    with pytest.raises(InputValueError, match="feature 17 has the level code -2"):
        model.partial_fit(bad, data.y[30:32])
    with pytest.raises(InputValueError, match="expecting 157 features"):
        model.partial_fit(data.X[30:32, :5], data.y[30:32])
    assert pickle.dumps(model) == before


def test_fit_statistics_of_shards_equals_fit(data, fitted):
    shards = [CategoricalClassCounts.from_data(data.X[rows], data.y[rows]) for rows in np.array_split(np.arange(45), 3)]
    model = BiasCorrectedCategoricalNB(n_features_to_select=10, random_state=0).fit_statistics(sum(shards))
    assert_same_model(model, fitted)
    wider = BiasCorrectedCategoricalNB(n_features_to_select=10, n_levels=4, correct=False, random_state=0)
    wider.fit_statistics(sum(shards))
    assert wider.n_levels_ == 4 and wider.level_counts_.shape == (10, 3, 4)
    named = CategoricalClassCounts.from_data(pd.DataFrame(data.X, columns=[f"snp{j}" for j in range(157)]), data.y)
    model = BiasCorrectedCategoricalNB(n_features_to_select=3, random_state=0).fit_statistics(named)
    assert model.feature_names_in_[0] == "snp0"
    with pytest.raises(InputTypeError, match="must be a CategoricalClassCounts"):
        BiasCorrectedCategoricalNB().fit_statistics(data.X)
    empty = CategoricalClassCounts.from_data(data.X[:5], data.y[:5], classes=[0, 1, 2, 5])
    with pytest.raises(InputValueError, match="no case of class 5"):
        BiasCorrectedCategoricalNB().fit_statistics(empty)
    with pytest.raises(InputValueError, match="level 2, outside 0..1"):
        BiasCorrectedCategoricalNB(n_levels=2).fit_statistics(sum(shards))


def test_statistics_with_number_and_string_labels_do_not_merge():
    from hdbayes.statistics import GaussianClassMoments

    X = np.array([[0.0, 1.0], [1.0, 0.0]])
    for kind in (CategoricalClassCounts, GaussianClassMoments):  # numpy would turn [1, 2] into ['1', '2']
        with pytest.raises(InputTypeError, match="numbers and other labels"):
            kind.from_data(X, ["a", "b"]) + kind.from_data(X, [1, 2])


def test_genotype_codes_on_chunks_fit_as_in_memory():
    """Genotypes 0/1/2 (three levels, two classes) generated chunk by chunk: the dask fit is the in-memory one."""
    from hdbayes.datasets import simulate_genotypes

    data = simulate_genotypes(60, 700, n_informative=5, odds_ratio=3.0, n_test=20, chunks=(25, 300), random_state=1)
    model = BiasCorrectedCategoricalNB(n_features_to_select=5, n_levels=3, random_state=0)
    chunked = model.fit(data.X, data.y)
    memory = BiasCorrectedCategoricalNB(n_features_to_select=5, n_levels=3, random_state=0)
    memory.fit(data.X.compute(), data.y)
    assert_same_model(chunked, memory)
    np.testing.assert_allclose(chunked.predict_proba(data.X_test).compute(),
                               memory.predict_proba(data.X_test.compute()), rtol=1e-12, atol=0)  # row chunks: BLAS
