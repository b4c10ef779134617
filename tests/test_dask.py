"""BiasCorrectedNaiveBayes and BinaryClassCounts on dask arrays: statistics on the workers, equal to memory."""

import re
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from hdbayes import BiasCorrectedNaiveBayes
from hdbayes.datasets import simulate_naive_bayes
from hdbayes.exceptions import InputValueError
from hdbayes.selection_bias import PerClassVariance
from hdbayes.statistics import BinaryClassCounts, is_dask_array

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")


@pytest.fixture(autouse=True)
def synchronous():
    with dask.config.set(scheduler="sync"):
        yield


@pytest.fixture(scope="module")
def data():
    return simulate_naive_bayes(n_features=1003, n_samples=101, n_test=37, random_state=0)


def sparse_chunks(X):
    return X.map_blocks(sp.csr_matrix, meta=sp.csr_matrix((0, 0), dtype=X.dtype))


def assert_same_model(chunked, memory):
    assert chunked.statistics_ == memory.statistics_
    np.testing.assert_array_equal(chunked.selected_features_, memory.selected_features_)
    np.testing.assert_array_equal(chunked.classes_, memory.classes_)
    assert chunked.n_features_in_ == memory.n_features_in_
    for name in ("alpha_grid_", "log_integral_one_", "log_integral_zero_", "log_adjustment_", "class_log_prior_"):
        np.testing.assert_array_equal(getattr(chunked, name), getattr(memory, name), err_msg=name)


def test_importing_hdbayes_does_not_import_dask():
    code = "import sys, hdbayes, hdbayes.statistics, hdbayes.selection_bias; print('dask' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "False\n"


@pytest.mark.parametrize("chunks", [(23, 301), (101, 1003), (7, 1003), (50, 97)])
@pytest.mark.parametrize("sparse", [False, True])
def test_from_dask_equals_from_data(chunks, sparse):
    rng = np.random.default_rng(chunks[0])
    X = (rng.random((101, 1003)) < rng.random(1003)).astype(np.int8)
    y = rng.integers(0, 2, 101)
    Xd = da.from_array(X, chunks=chunks)
    counts = BinaryClassCounts.from_dask(sparse_chunks(Xd) if sparse else Xd, da.from_array(y, chunks=30))
    assert counts == BinaryClassCounts.from_data(X, y)
    assert counts.ones.dtype == np.int64 and counts.class_counts.dtype == np.int64
    assert BinaryClassCounts.from_dask(Xd, y, split_every=2) == counts


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("dask_y", [False, True])
def test_fit_and_predictions_equal_the_in_memory_ones(data, sparse, dask_y):
    memory = BiasCorrectedNaiveBayes(n_features_to_select=10).fit(data.X, data.y)
    X = da.from_array(data.X, chunks=(23, 301))  # divides neither n = 101 nor p = 1003
    X = sparse_chunks(X) if sparse else X
    y = da.from_array(data.y, chunks=40) if dask_y else data.y
    chunked = BiasCorrectedNaiveBayes(n_features_to_select=10).fit(X, y)
    assert_same_model(chunked, memory)
    test = da.from_array(data.X_test, chunks=(10, 500))
    test = sparse_chunks(test) if sparse else test
    for method in ("predict_proba", "predict_log_proba", "predict_joint_log_proba"):
        result = getattr(chunked, method)(test)
        assert is_dask_array(result) and result.chunks == ((10, 10, 10, 7), (2,))
        np.testing.assert_allclose(result.compute(), getattr(memory, method)(data.X_test), rtol=1e-12, atol=1e-12)
    labels = chunked.predict(test)
    assert is_dask_array(labels)
    np.testing.assert_array_equal(labels.compute(), memory.predict(data.X_test))
    loss = [[0, 1], [5, 0]]
    np.testing.assert_array_equal(chunked.predict(test, loss=loss).compute(), memory.predict(data.X_test, loss=loss))
    # a model fitted in memory predicts dask arrays too
    np.testing.assert_allclose(memory.predict_proba(test).compute(), memory.predict_proba(data.X_test), atol=1e-12)


def test_fixed_threshold_labels_and_options(data):
    rng = np.random.default_rng(1)
    X = data.X + rng.normal(0, 0.2, data.X.shape)  # continuous: binarize=0.5 recovers the 0/1 data mostly
    y = np.where(data.y == 1, "case", "control")
    kwargs = {"threshold": 0.2, "binarize": 0.5, "correct": False, "alpha_rule": "midpoint"}
    memory = BiasCorrectedNaiveBayes(**kwargs).fit(X, y)
    chunked = BiasCorrectedNaiveBayes(**kwargs).fit(da.from_array(X, chunks=(30, 250)), da.from_array(y, chunks=33))
    assert_same_model(chunked, memory)
    test = X[:29]
    np.testing.assert_allclose(
        chunked.predict_proba(da.from_array(test, chunks=(9, 1003))).compute(), memory.predict_proba(test), atol=1e-12
    )
    labels = chunked.predict(da.from_array(test, chunks=(9, 1003))).compute()
    np.testing.assert_array_equal(labels, memory.predict(test))


def test_row_chunks_of_unknown_size(data):
    X = da.from_array(data.X, chunks=(23, 301))
    keep = da.from_array(np.ones(101, dtype=bool), chunks=23)
    y = da.from_array(data.y, chunks=23)
    chunked = BiasCorrectedNaiveBayes(n_features_to_select=10).fit(X[keep], y[keep])
    assert_same_model(chunked, BiasCorrectedNaiveBayes(n_features_to_select=10).fit(data.X, data.y))
    with pytest.raises(InputValueError, match=r"chunk \d of X \(rows unknown\) has \d+ rows but the matching chunk"):
        BiasCorrectedNaiveBayes(n_features_to_select=10).fit(X[keep], y[da.from_array(np.arange(101) != 30, chunks=23)])
    with pytest.raises(InputValueError, match="compute_chunk_sizes"):
        BiasCorrectedNaiveBayes().fit(X[keep], data.y)


@pytest.mark.parametrize("value, message", [(np.nan, "holds nan in feature 40; X must be finite"),
                                            (np.inf, "holds inf in feature 40"),
                                            (2.0, "feature 40 has the value 2 in chunk 2 of X")])  # fmt: skip
def test_bad_values_name_the_chunk_and_the_column(data, value, message):
    X = data.X.astype(np.float64)
    X[50, 40] = value
    options = {"n_features_to_select": 5, "binarize": None}  # the default threshold 0 would make 2 a one
    with pytest.raises(InputValueError, match=r"chunk 2 of X \(rows 46\.\.68\)") as error:
        BiasCorrectedNaiveBayes(**options).fit(da.from_array(X, chunks=(23, 30)), data.y)
    assert message in str(error.value)
    model = BiasCorrectedNaiveBayes(**options).fit(data.X, data.y)
    test = data.X_test.astype(np.float64)
    column = model.selected_features_[2]
    test[12, column] = value
    with pytest.raises(InputValueError, match=r"chunk 1 of X \(rows 10\.\.19\)") as error:
        model.predict_proba(da.from_array(test, chunks=(10, 200))).compute()
    assert re.search(rf"feature {column}\b", str(error.value))


def test_input_errors(data):
    X = da.from_array(data.X, chunks=(23, 301))
    with pytest.raises(InputValueError, match="not 'median'"):
        BiasCorrectedNaiveBayes(binarize="median").fit(X, data.y)
    with pytest.raises(InputValueError, match="y has 100 entries but X has 101 rows"):
        BiasCorrectedNaiveBayes().fit(X, data.y[:100])
    with pytest.raises(InputValueError, match="y has 100 entries"):
        BiasCorrectedNaiveBayes().fit(X, da.from_array(data.y[:100], chunks=30))
    with pytest.raises(InputValueError, match="single class"):
        BiasCorrectedNaiveBayes().fit(X, da.zeros(101, chunks=30))
    with pytest.raises(InputValueError, match="found 3 classes"):
        BiasCorrectedNaiveBayes().fit(X, da.from_array(np.arange(101) % 3, chunks=30))
    with pytest.raises(InputValueError, match="NaN"):
        BiasCorrectedNaiveBayes().fit(X, da.from_array(np.where(data.y == 1, 1.0, np.nan), chunks=30))
    with pytest.raises(InputValueError, match="2-D"):
        BiasCorrectedNaiveBayes().fit(X[:, 0], data.y)
    model = BiasCorrectedNaiveBayes(n_features_to_select=5).fit(X, data.y)
    with pytest.raises(InputValueError, match="expecting 1003 features"):
        model.predict_proba(X[:, :1000])


def test_local_cluster(data):
    distributed = pytest.importorskip("distributed")
    memory = BiasCorrectedNaiveBayes(n_features_to_select=10).fit(data.X, data.y)
    with (
        dask.config.set(scheduler=None),
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster,
        distributed.Client(cluster),
    ):
        X = da.from_array(data.X, chunks=(23, 301))
        chunked = BiasCorrectedNaiveBayes(n_features_to_select=10).fit(X, da.from_array(data.y, chunks=40))
        proba = chunked.predict_proba(da.from_array(data.X_test, chunks=(10, 500))).compute()
        bad = data.X.astype(np.float64)
        bad[50, 40] = np.nan
        with pytest.raises(InputValueError, match=r"chunk 2 of X \(rows 46\.\.68\) holds nan in feature 40"):
            BiasCorrectedNaiveBayes().fit(da.from_array(bad, chunks=(23, 301)), data.y)
    assert_same_model(chunked, memory)
    np.testing.assert_allclose(proba, memory.predict_proba(data.X_test), atol=1e-12)


# ----- the Gaussian classifier: moments on the workers, the selected columns to the sampler -----


@pytest.fixture(scope="module")
def gaussian_data():
    rng = np.random.default_rng(0)
    n, p = 83, 57
    y = rng.integers(0, 3, n)
    X = rng.standard_normal((n, p)) + 0.8 * y[:, None] * (np.arange(p) < 5)
    return X, y


@pytest.mark.parametrize(
    "variant",
    [{}, {"variant": "per-feature"}, {"variant": "per-class", "n_mc": 16},
     {"variant": PerClassVariance(class_scale="plug-in", alpha2_x=4.0), "n_mc": 16}],
)  # fmt: skip
def test_gaussian_fit_from_dask_gives_the_in_memory_draws(gaussian_data, variant):
    """Chunks that divide neither n nor p, labels as a dask array: the same selection, and the in-memory draws and
    predictions up to the rounding of merged moments (both paths sample from the moments; a chunked X's are
    merged pairwise, so they differ in the last bits: measured 1e-13 relative in the draws, 1.6e-15 in the
    probabilities; a chain that took one Metropolis or slice decision differently would differ by far more)."""
    from hdbayes import BiasCorrectedGaussianClassifier

    X, y = gaussian_data
    kwargs = dict(n_features_to_select=6, n_iter=120, burn_in=20, thin=5, random_state=1, progress=False, **variant)
    memory = BiasCorrectedGaussianClassifier(**kwargs).fit(X, y)
    chunked = BiasCorrectedGaussianClassifier(**kwargs).fit(da.from_array(X, chunks=(20, 13)),
                                                             da.from_array(y, chunks=20))  # fmt: skip
    assert np.array_equal(memory.selected_features_, chunked.selected_features_)
    assert chunked.n_features_in_ == X.shape[1] and np.array_equal(chunked.classes_, memory.classes_)
    for name in memory.trace_.posterior:
        np.testing.assert_allclose(chunked.trace_.posterior[name], memory.trace_.posterior[name], rtol=1e-10,
                                   atol=1e-12, err_msg=name)  # fmt: skip
    proba = chunked.predict_proba(da.from_array(X, chunks=(30, 57)))
    assert is_dask_array(proba) and proba.chunks[0] == (30, 30, 23)
    np.testing.assert_allclose(proba.compute(), memory.predict_proba(X), rtol=0, atol=1e-12)
    assert np.array_equal(chunked.predict(da.from_array(X, chunks=(40, 20))).compute(), memory.predict(X))
    # the fit from the chunked X's moments is the fit from the same moments in memory, bit for bit
    again = BiasCorrectedGaussianClassifier(**kwargs).fit_statistics(chunked.statistics_)
    for name in chunked.trace_.posterior:
        assert np.array_equal(again.trace_.posterior[name], chunked.trace_.posterior[name]), name


def test_gaussian_fit_from_dask_reads_every_chunk_of_x_once(gaussian_data):
    """The selection and the sampler both come from the moments: every block of X is computed once (no second
    pass to gather the selected columns)."""
    from hdbayes import BiasCorrectedGaussianClassifier

    X, y = gaussian_data
    reads = []

    def counted(block, block_info=None):
        reads.append(tuple(block_info[0]["chunk-location"]))
        return block

    source = da.from_array(X, chunks=(20, 13))
    BiasCorrectedGaussianClassifier(n_features_to_select=6, n_iter=30, burn_in=10, random_state=1,
                                    progress=False).fit(source.map_blocks(counted, dtype=X.dtype), y)  # fmt: skip
    assert sorted(reads) == sorted(set(reads)) and len(reads) == source.npartitions


def test_gaussian_numpy_x_with_dask_labels_fits_in_memory(gaussian_data):
    """Only a dask X takes the dask path: with X in memory the labels are computed and the fit is the in-memory
    one, moments included."""
    from hdbayes import BiasCorrectedGaussianClassifier

    X, y = gaussian_data
    kwargs = dict(n_features_to_select=4, n_iter=40, burn_in=10, random_state=3, progress=False)
    memory = BiasCorrectedGaussianClassifier(**kwargs).fit(X, y)
    mixed = BiasCorrectedGaussianClassifier(**kwargs).fit(X, da.from_array(y, chunks=20))
    assert mixed.statistics_ == memory.statistics_
    assert np.array_equal(mixed.trace_["mu"], memory.trace_["mu"])
    assert np.array_equal(mixed.predict_proba(X), memory.predict_proba(X))


def test_gaussian_dask_input_errors_name_the_chunk(gaussian_data):
    from hdbayes import BiasCorrectedGaussianClassifier

    X, y = gaussian_data
    bad = X.copy()
    bad[45, 7] = np.nan
    model = BiasCorrectedGaussianClassifier(n_features_to_select=3, n_iter=40, burn_in=10, progress=False)
    with pytest.raises(InputValueError, match=r"chunk 2 of X \(rows 40\.\.59\)"):
        model.fit(da.from_array(bad, chunks=(20, 57)), y)
    with pytest.raises(InputValueError, match="single class"):
        model.fit(da.from_array(X, chunks=(20, 57)), np.zeros(X.shape[0], dtype=int))
    fitted = model.fit(da.from_array(X, chunks=(20, 57)), y)
    bad = X.copy()
    bad[45, fitted.selected_features_[0]] = np.inf  # predictions read the selected columns only
    with pytest.raises(InputValueError, match=r"chunk 1 of X \(rows 40\.\.79\)"):
        fitted.predict_proba(da.from_array(bad, chunks=(40, 57))).compute()
    with pytest.raises(InputValueError, match="expecting 57 features"):
        fitted.predict_proba(da.from_array(X[:, :10], chunks=(40, 10)))


def test_estimators_without_a_dask_path_refuse_dask_arrays_by_type(gaussian_data):
    from hdbayes import BiasCorrectedMixture

    X, y = gaussian_data
    Xb, yb = (X > 0).astype(int), (y > 0).astype(int)
    model = BiasCorrectedMixture(n_features_to_select=3, n_iter=20, burn_in=5, progress=False).fit(Xb, yb)
    with pytest.raises(TypeError, match="does not predict from a dask array"):
        model.predict_proba(da.from_array(Xb, chunks=(20, 57)))
