"""The discrete family on dask arrays and by partial_fit: chunk statistics merged, equal to the in-memory fit."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from hdbayes.discrete import (
    BayesianBernoulliNB,
    BayesianCategoricalNB,
    BayesianMultinomialNB,
    DCMClassifier,
    MutualInformationSelector,
    mutual_information_discrete,
)
from hdbayes.discrete.word_counts import WordCountHistogram
from hdbayes.exceptions import InputValueError
from hdbayes.statistics import is_dask_array

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

N, P = 97, 43  # chunks of (20, 10) divide neither
CHUNKS = (20, 10)


@pytest.fixture(autouse=True)
def synchronous():
    with dask.config.set(scheduler="sync"):
        yield


def sparse_chunks(X):
    return X.map_blocks(sp.csr_matrix, meta=sp.csr_matrix((0, 0), dtype=X.dtype))


def as_dask(X, sparse, chunks=CHUNKS):
    Xd = da.from_array(X, chunks=chunks)
    return sparse_chunks(Xd) if sparse else Xd


def data(kind, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.choice(np.array(["a", "b", "c"]), N)
    if kind == "binary":
        X = (rng.random((N, P)) < rng.random(P)).astype(np.float64)
    elif kind == "continuous":
        X = rng.normal(size=(N, P))
    elif kind == "categories":
        X = rng.integers(0, rng.integers(1, 6, P), size=(N, P)).astype(np.float64)
    elif kind == "counts":
        X = rng.poisson(rng.gamma(0.5, 2.0, P), size=(N, P)).astype(np.float64)
    else:  # "weights": tf-idf-like real values
        X = rng.poisson(1.0, size=(N, P)) * rng.random((N, P)) * 3.0
    return X, y


CASES = [
    (BayesianBernoulliNB, {"binarize": None}, "binary"),
    (BayesianBernoulliNB, {"binarize": 0.3, "method": "map", "alpha": 2.0}, "continuous"),
    (BayesianCategoricalNB, {}, "categories"),
    (BayesianCategoricalNB, {"method": "mle", "n_levels": 7}, "categories"),
    (BayesianMultinomialNB, {}, "counts"),
    (BayesianMultinomialNB, {"method": "posterior_mean"}, "weights"),
]
FITTED = {
    BayesianBernoulliNB: ("class_count_", "feature_count_", "feature_log_prob_", "feature_log_neg_prob_",
                          "class_log_prior_", "binarize_thresholds_"),
    BayesianCategoricalNB: ("class_count_", "n_levels_", "_flat_count", "_flat_log_prob", "class_log_prior_"),
    BayesianMultinomialNB: ("class_count_", "feature_count_", "feature_log_prob_", "posterior_beta_",
                            "class_log_prior_"),
}  # fmt: skip


def assert_same_fit(a, b, rtol=1e-12):
    np.testing.assert_array_equal(a.classes_, b.classes_)
    assert a.n_features_in_ == b.n_features_in_
    for name in FITTED[type(a)]:
        left, right = getattr(a, name), getattr(b, name)
        if left is None or right is None:
            assert left is None and right is None, name
        else:
            np.testing.assert_allclose(left, right, rtol=rtol, atol=0, err_msg=name)


@pytest.mark.parametrize("estimator, params, kind", CASES)
@pytest.mark.parametrize("sparse", [False, True])
def test_dask_fit_and_predictions_equal_the_in_memory_ones(estimator, params, kind, sparse):
    X, y = data(kind)
    memory = estimator(**params).fit(X, y)
    chunked = estimator(**params).fit(as_dask(X, sparse), da.from_array(y, chunks=31) if sparse else y)
    assert_same_fit(chunked, memory)
    X_test = X[::-1] + (0.5 if kind in ('continuous', 'weights') else 0)  # categories seen in training
    test = as_dask(X_test[:45], sparse, chunks=(13, 17))
    for method in ("predict_proba", "predict_log_proba", "predict_joint_log_proba"):
        result = getattr(chunked, method)(test)
        assert is_dask_array(result) and result.chunks == ((13, 13, 13, 6), (3,))
        np.testing.assert_allclose(result.compute(), getattr(memory, method)(X_test[:45]), rtol=1e-12, atol=1e-12)
    labels = chunked.predict(test)
    assert is_dask_array(labels)
    np.testing.assert_array_equal(labels.compute(), memory.predict(X_test[:45]))
    loss = [[0, 1, 1], [4, 0, 1], [1, 1, 0]]
    np.testing.assert_array_equal(chunked.predict(test, loss=loss).compute(), memory.predict(X_test[:45], loss=loss))


def test_integer_counts_are_exact_and_the_tree_fan_in_does_not_matter():
    X, y = data("counts")
    memory = BayesianMultinomialNB().fit(X, y)
    chunked = BayesianMultinomialNB().fit(da.from_array(X, chunks=(7, P)), y)
    np.testing.assert_array_equal(chunked.feature_count_, memory.feature_count_)
    np.testing.assert_array_equal(chunked.feature_log_prob_, memory.feature_log_prob_)


@pytest.mark.parametrize("estimator, params, kind", CASES)
def test_partial_fit_batches_equal_one_fit(estimator, params, kind):
    X, y = data(kind)
    memory = estimator(**params).fit(X, y)
    model = estimator(**params)
    bounds = [0, 5, 6, 40, 71, N]  # uneven batches, one of a single case
    for start, stop in zip(bounds[:-1], bounds[1:], strict=True):
        model.partial_fit(X[start:stop], y[start:stop], classes=np.unique(y))
    assert_same_fit(model, memory)
    # dask batches, and a mix of dask and in-memory batches
    mixed = estimator(**params).partial_fit(da.from_array(X[:50], chunks=(11, 20)), y[:50], classes=["a", "b", "c"])
    mixed.partial_fit(X[50:], da.from_array(y[50:], chunks=20))
    assert_same_fit(mixed, memory)
    np.testing.assert_allclose(mixed.predict_proba(X), memory.predict_proba(X), rtol=1e-12, atol=1e-12)


def test_categorical_partial_fit_meets_new_categories_in_later_chunks():
    rng = np.random.default_rng(3)
    X = rng.integers(0, 3, size=(60, 4)).astype(float)
    X[45:, 2] = 5  # categories 3..5 of feature 2 appear only in the last rows
    y = rng.integers(0, 2, 60)
    memory = BayesianCategoricalNB().fit(X, y)
    chunked = BayesianCategoricalNB().fit(da.from_array(X, chunks=(9, 4)), y)
    assert_same_fit(chunked, memory)
    np.testing.assert_array_equal(chunked.n_levels_, [3, 3, 6, 3])


def test_bad_chunks_are_named():
    X, y = data("counts")
    bad = X.copy()
    bad[50, 7] = np.nan
    with pytest.raises(InputValueError, match=r"chunk 2 of X \(rows 40\.\.59\).*nan in feature 7"):
        BayesianMultinomialNB().fit(da.from_array(bad, chunks=CHUNKS), y)
    bad[50, 7] = -1
    with pytest.raises(InputValueError, match=r"chunk 2 of X \(rows 40\.\.59\).*Negative values.*feature 7"):
        BayesianMultinomialNB().fit(da.from_array(bad, chunks=CHUNKS), y)
    bad[50, 7] = 2.5
    with pytest.raises(InputValueError, match=r"chunk 2 of X \(rows 40\.\.59\).*integer category codes.*feature 7"):
        BayesianCategoricalNB().fit(da.from_array(bad, chunks=CHUNKS), y)
    binary = data("binary")[0]
    binary[50, 7] = 2
    with pytest.raises(InputValueError, match=r"chunk 2 of X \(rows 40\.\.59\).*binary features.*feature 7"):
        BayesianBernoulliNB(binarize=None).fit(da.from_array(binary, chunks=CHUNKS), y)
    with pytest.raises(InputValueError, match="not 'median'"):
        BayesianBernoulliNB(binarize="median").fit(da.from_array(X, chunks=CHUNKS), y)
    with pytest.raises(InputValueError, match="y has 96 entries but X has 97 rows"):
        BayesianMultinomialNB().fit(da.from_array(X, chunks=CHUNKS), y[:96])
    keep = da.from_array(np.arange(N) != 30, chunks=20)
    Xd, yd = da.from_array(X, chunks=CHUNKS), da.from_array(y, chunks=20)
    with pytest.raises(InputValueError, match=r"chunk 1 of X \(rows unknown\) has 19 rows but the matching chunk"):
        BayesianMultinomialNB().fit(Xd[keep], yd)
    with pytest.raises(InputValueError, match="single class"):
        BayesianMultinomialNB().fit(Xd, da.from_array(np.full(N, "a"), chunks=20))
    model = BayesianMultinomialNB().fit(Xd, y)
    with pytest.raises(InputValueError, match="expecting 43 features"):
        model.predict_proba(Xd[:, :40])
    test = X.copy()
    test[22, 3] = -2
    with pytest.raises(InputValueError, match=r"chunk 1 of X \(rows 20\.\.39\).*feature 3"):
        model.predict_proba(da.from_array(test, chunks=CHUNKS)).compute()
    # a failed chunked fit leaves a fitted model as it was
    bad[50, 7] = np.inf
    with pytest.raises(InputValueError, match=r"chunk 2 of X \(rows 40\.\.59\).*inf in feature 7"):
        model.partial_fit(da.from_array(bad, chunks=CHUNKS), y)
    np.testing.assert_array_equal(model.feature_count_, BayesianMultinomialNB().fit(X, y).feature_count_)
    with pytest.raises(InputValueError, match=r"label 'z', which is not in classes"):
        model.partial_fit(Xd[:20], da.from_array(np.full(20, "z"), chunks=20))


# -- DCMClassifier: mergeable count histograms instead of kept documents ------------------------------------


def documents(real=False, seed=0):
    from hdbayes.datasets.documents import simulate_bursty_documents

    corpus = simulate_bursty_documents(N, 60, concentration=8.0, mean_length=25, n_classes=3, random_state=seed)
    X = corpus.X.toarray() if sp.issparse(corpus.X) else np.asarray(corpus.X, dtype=float)
    X[5] = 0  # an empty document
    if real:
        X = X * np.random.default_rng(seed).uniform(0.5, 2.0, X.shape)
    return X, corpus.y


@pytest.mark.parametrize("real", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
def test_dcm_from_dask_and_by_partial_fit_equals_the_in_memory_fit(real, sparse):
    X, y = documents(real)
    memory = DCMClassifier().fit(X, y)
    assert memory.converged_.all()
    chunked = DCMClassifier().fit(as_dask(X, sparse, chunks=(20, 25)), y)  # column chunks are joined per row chunk
    batches = DCMClassifier()
    for start in range(0, N, 30):
        batches.partial_fit(X[start:start + 30], y[start:start + 30], classes=np.unique(y))
    for model in (chunked, batches):
        assert model.statistics_ == memory.statistics_  # the histograms are exact: no rounding in a merge
        # identical histograms give the identical fit, bit for bit
        np.testing.assert_array_equal(model.concentration_, memory.concentration_)
        np.testing.assert_array_equal(model.n_iter_, memory.n_iter_)
        np.testing.assert_allclose(model.feature_count_, memory.feature_count_, rtol=1e-12)
        np.testing.assert_allclose(model.predict_proba(X), memory.predict_proba(X), rtol=1e-12, atol=1e-12)
    proba = chunked.predict_proba(as_dask(X, sparse, chunks=(20, 25)))
    assert is_dask_array(proba)
    np.testing.assert_allclose(proba.compute(), memory.predict_proba(X), rtol=1e-12, atol=1e-12)


def test_dcm_in_memory_fit_equals_the_fixed_point_on_the_documents():
    # the oracle: the exceedance counts taken from the documents themselves (the former path, which kept them)
    from hdbayes.discrete.minka import _exceedance_counts, _minka_fixed_point

    X, y = documents()
    model = DCMClassifier(min_concentration=1e-8).fit(X, y)
    for c, label in enumerate(model.classes_):
        docs = sp.csc_matrix(X[y == label])
        seen = np.flatnonzero(np.diff(docs.indptr))
        sub = docs[:, seen]
        pointer, exceed = _exceedance_counts(sub.indptr.astype(np.int64), sub.data.astype(np.int64))
        lengths = np.asarray(docs.sum(axis=1)).ravel().astype(np.int64)
        length_exceed = np.bincount(lengths)[::-1].cumsum()[::-1][1:].astype(np.float64)
        start = np.maximum(np.asarray(sub.sum(axis=0)).ravel() / docs.shape[0], 1e-8)
        fitted, n_iter, _ = _minka_fixed_point(pointer, exceed, length_exceed, start, 60 - seen.size, 1e-8, 1000, 1e-6)
        alpha = np.full(60, 1e-8)
        alpha[seen] = fitted
        np.testing.assert_array_equal(model.concentration_[c], alpha)
        assert model.n_iter_[c] == n_iter


def test_dcm_partial_fit_waits_for_words_in_every_class():
    X, y = documents()
    model = DCMClassifier().partial_fit(X[y == 0], y[y == 0], classes=[0, 1, 2])
    assert not hasattr(model, "concentration_")
    with pytest.raises(NotFittedError):
        model.predict(X)
    model.partial_fit(X[y != 0], y[y != 0])
    np.testing.assert_array_equal(model.concentration_, DCMClassifier().fit(X, y).concentration_)
    with pytest.raises(InputValueError, match="has no words"):
        DCMClassifier().fit(np.vstack([X, np.zeros((2, 60))]), np.append(y, [7, 7]))


def histogram_case():
    return st.tuples(st.integers(0, 25), st.integers(1, 6), st.integers(0, 2**32 - 1), st.integers(1, 4),
                     st.booleans())  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histogram_case(), st.data())
def test_word_count_histograms_of_a_union_are_the_sum_of_the_parts(case, data):
    n, p, seed, n_parts, real = case
    rng = np.random.default_rng(seed)
    X = rng.poisson(1.0, (n, p)) * (rng.random((n, p)) < 0.6)
    X = X * rng.choice([0.5, 1.0, 2.25], (n, p)) if real else X
    part = np.array(data.draw(st.lists(st.integers(0, n_parts - 1), min_size=n, max_size=n)), dtype=int)
    whole = WordCountHistogram.from_data(X)
    parts = [WordCountHistogram.from_data(X[part == q]) for q in range(n_parts)]
    assert sum(parts) == whole
    assert sum(parts[::-1]) == whole  # in any order
    assert WordCountHistogram.zero(p) + whole == whole
    assert pickle.loads(pickle.dumps(whole)) == whole
    assert whole.n_documents == n and whole.n_nonzero == np.count_nonzero(X)
    # the histogram of word j is the multiset of its non-zero values
    for j in range(p):
        values = np.repeat(whole.values[whole.words == j], whole.counts[whole.words == j])
        np.testing.assert_array_equal(values, np.sort(X[:, j][X[:, j] != 0]))


# -- MutualInformationSelector: per-class contingency tables --------------------------------------------------


MI_CASES = [({}, "categories"), ({"binarize": 0.2, "estimate": "posterior_mean"}, "continuous"),
            ({"threshold": 0.01}, "counts")]  # fmt: skip


@pytest.mark.parametrize("options, kind", MI_CASES)
@pytest.mark.parametrize("sparse", [False, True])
def test_mutual_information_selector_from_dask_and_partial_fit(options, kind, sparse):
    X, y = data(kind)
    memory = MutualInformationSelector(n_features_to_select=None if "threshold" in options else 7, **options)
    memory.fit(X, y)
    chunked = clone(memory).fit(as_dask(X, sparse), da.from_array(y, chunks=31))
    batches = clone(memory)
    for start in range(0, N, 40):
        batches.partial_fit(X[start:start + 40], y[start:start + 40], classes=["a", "b", "c"])
    for model in (chunked, batches):
        np.testing.assert_array_equal(model.statistics_["table"], memory.statistics_["table"])
        np.testing.assert_array_equal(model.scores_, memory.scores_)  # the same integer tables: the same scores
        np.testing.assert_array_equal(model.selected_features_, memory.selected_features_)
        assert model.threshold_ == memory.threshold_ and model.n_features_in_ == P
    np.testing.assert_array_equal(memory.scores_, mutual_information_discrete(
        X if "binarize" not in options else (X > 0.2), y, estimate=memory.estimate))  # fmt: skip
    np.testing.assert_array_equal(chunked.transform(X), memory.transform(X))


def test_mutual_information_selector_chunk_errors():
    X, y = data("categories")
    bad = X.copy()
    bad[50, 7] = 1.5
    with pytest.raises(InputValueError, match=r"chunk 2 of X \(rows 40\.\.59\).*integer counts.*feature 7"):
        MutualInformationSelector().fit(da.from_array(bad, chunks=CHUNKS), y)
    bad[50, 7] = -1
    with pytest.raises(InputValueError, match=r"chunk 2 of X \(rows 40\.\.59\).*Negative.*feature 7"):
        MutualInformationSelector().fit(da.from_array(bad, chunks=CHUNKS), y)
    with pytest.raises(InputValueError, match="not 'median'"):
        MutualInformationSelector(binarize="median").fit(da.from_array(X, chunks=CHUNKS), y)
    assert not hasattr(MutualInformationSelector(binarize="median"), "partial_fit")
    selector = MutualInformationSelector(n_features_to_select=3).partial_fit(X[:30], y[:30])
    with pytest.raises(InputValueError, match="expecting 43 features"):
        selector.partial_fit(da.from_array(X[:, :40], chunks=CHUNKS), y)


# -- the property behind all of it: the statistics of a union are the merged statistics of its parts -----------

DATA = data  # the hypothesis test's own `data` is the strategy
PARTIAL = [(BayesianBernoulliNB, "binary"), (BayesianCategoricalNB, "categories"), (BayesianMultinomialNB, "counts"),
           (MutualInformationSelector, "categories")]  # fmt: skip


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(PARTIAL), st.integers(0, 2**32 - 1), st.integers(1, 5), st.data())
def test_partial_fit_over_any_partition_in_any_order_equals_fit(case, seed, n_parts, data):
    estimator, kind = case
    X, y = DATA(kind, seed=seed % 7)
    rng = np.random.default_rng(seed)
    part = rng.integers(0, n_parts, N)
    order = data.draw(st.permutations(range(n_parts)))
    memory = estimator().fit(X, y)
    model = estimator()
    for q in order:
        rows = np.flatnonzero(part == q)
        if rows.size:
            model.partial_fit(X[rows], y[rows], classes=["a", "b", "c"])
    if isinstance(model, MutualInformationSelector):
        np.testing.assert_array_equal(model.statistics_["table"], memory.statistics_["table"])
        np.testing.assert_array_equal(model.scores_, memory.scores_)
    else:
        assert_same_fit(model, memory)


def test_on_a_local_cluster():
    distributed = pytest.importorskip("distributed")
    from hdbayes.statistics import GaussianClassMoments

    X, y = documents()
    with (
        dask.config.set(scheduler=None),
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster,
        distributed.Client(cluster),
    ):
        Xd = da.from_array(X, chunks=(20, 25))
        dcm = DCMClassifier().fit(Xd, da.from_array(y, chunks=20))
        multinomial = BayesianMultinomialNB().fit(Xd, y)
        proba = multinomial.predict_proba(Xd).compute()
        moments = GaussianClassMoments.from_dask(Xd, y)
        bad = X.astype(np.float64)
        bad[50, 7] = np.nan
        with pytest.raises(InputValueError, match=r"chunk 2 of X \(rows 40\.\.59\).*nan in feature 7"):
            DCMClassifier().fit(da.from_array(bad, chunks=(20, 25)), y)
    np.testing.assert_array_equal(dcm.concentration_, DCMClassifier().fit(X, y).concentration_)
    np.testing.assert_allclose(proba, BayesianMultinomialNB().fit(X, y).predict_proba(X), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(moments.scatter, GaussianClassMoments.from_data(X, y).scatter, rtol=1e-12)


def test_a_failed_fit_leaves_no_counts_for_partial_fit():
    """A fit that raises after counting (a MAP estimate without a mode; a threshold no score reaches) leaves the
    estimator as it was, so a later partial_fit starts from nothing rather than adding to the failed fit's counts."""
    from hdbayes import BayesianMultinomialNB, MutualInformationSelector

    X = np.array([[1, 0, 1], [0, 0, 1], [1, 1, 0], [0, 1, 1]] * 3)
    y = np.array([0, 0, 1, 1] * 3)
    selector = MutualInformationSelector(threshold=100.0, estimate="posterior_mean")
    with pytest.raises(ValueError):
        selector.fit(X, y)
    selector.set_params(threshold=None).partial_fit(X, y)
    fresh = MutualInformationSelector(estimate="posterior_mean").fit(X, y)
    np.testing.assert_array_equal(selector.scores_, fresh.scores_)
    model = BayesianMultinomialNB(method="map", alpha=0.5)  # a zero count: the posterior has no mode
    with pytest.raises(ValueError, match="no"):
        model.fit(X[:4], y[:4])
    model.set_params(method="posterior_mean").partial_fit(X[:4], y[:4], classes=[0, 1])
    np.testing.assert_array_equal(model.class_count_, [2, 2])
