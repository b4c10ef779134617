"""The contract of StatisticsClassifier (issue 30, item 1): one fit skeleton for every classifier that fits from
mergeable statistics.

A model declares its statistics type and writes ``_fit_from_statistics`` and the joint log-likelihood (with a
few hooks); ``fit``, ``partial_fit``, ``fit_statistics``, ``fit`` on a dask array and the prediction of a dask
array come from the base. A tiny model written here (class sums of integer data, a nearest-class-mean rule)
shows the contract: its five paths give the same model and the same predictions bit for bit. The converted
estimators (binary and categorical naive Bayes, the Gaussian classifier) agree across the same five paths.
"""

import operator

import numpy as np
import pytest
import scipy.sparse as sp

from hdbayes.exceptions import InputTypeError, InputValueError
from hdbayes.selection_bias import (
    BiasCorrectedCategoricalNB,
    BiasCorrectedGaussianClassifier,
    BiasCorrectedNaiveBayes,
)
from hdbayes.selection_bias._base import SELECTION_PARAMETER_CONSTRAINTS, class_log_prior
from hdbayes.selection_bias._statistics_classifier import StatisticsClassifier
from hdbayes.statistics import BinaryClassCounts, CategoricalClassCounts, GaussianClassMoments
from hdbayes.statistics._base import _Statistics
from hdbayes.statistics.chunks import check_finite_chunk, dask_class_codes, reduce_chunks

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")


@pytest.fixture(autouse=True)
def synchronous():
    with dask.config.set(scheduler="sync"):
        yield


# -- a tiny statistics subclass and estimator, written against the contract --------------------------------------


class ClassSums(_Statistics):
    """Class sizes and per-class sums of every feature: mergeable by addition."""

    _fields = ("classes", "class_counts", "sums")

    def __init__(self, classes, class_counts, sums, feature_names=None):
        self.classes, _ = self._classes(classes)
        self.class_counts = self._integers("class_counts", class_counts)
        self.sums = np.array(sums, dtype=np.float64)
        self.feature_names = None if feature_names is None else np.asarray(feature_names, dtype=object)

    @classmethod
    def of(cls, X, codes, classes, feature_names=None):
        X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
        codes = np.asarray(codes)
        sums = np.zeros((classes.shape[0], X.shape[1]))
        np.add.at(sums, codes, X)
        return cls(classes, np.bincount(codes, minlength=classes.shape[0]), sums, feature_names)

    @property
    def n_samples(self):
        return int(self.class_counts.sum())

    @property
    def n_features(self):
        return self.sums.shape[1]

    def __add__(self, other):
        names = self._addable(other)
        assert np.array_equal(self.classes, other.classes)
        return ClassSums(self.classes, self.class_counts + other.class_counts, self.sums + other.sums, names)


def _chunk_sums(x, codes, *, where, columns, classes):
    return ClassSums.of(check_finite_chunk(x), codes, classes)


class TinyCentroid(StatisticsClassifier):
    """Select the features whose class means spread most; predict by the squared distance to the class means."""

    _parameter_constraints = {**SELECTION_PARAMETER_CONSTRAINTS, "random_state": ["random_state"]}
    _statistics_type = ClassSums

    def __init__(self, n_features_to_select=None, *, threshold=None, correct=True, class_pseudo_count=1.0,
                 random_state=None):  # fmt: skip
        self.n_features_to_select = n_features_to_select
        self.threshold = threshold
        self.correct = correct
        self.class_pseudo_count = class_pseudo_count
        self.random_state = random_state

    def _validate_training_data(self, X, y):
        return self._validate_classification_data(X, y, ensure_all_finite=True, ensure_min_samples=2)

    def _statistics_of(self, X, codes):
        return ClassSums.of(X, codes, self.classes_, getattr(self, "feature_names_in_", None))

    def _dask_statistics(self, X, y):
        classes, codes = dask_class_codes(y)
        return reduce_chunks(X, codes, _chunk_sums, merge=operator.add, classes=classes), classes

    def _fit_from_statistics(self, statistics):
        means = statistics.sums / statistics.class_counts[:, None]
        spread = means.max(axis=0) - means.min(axis=0)
        selection = self._select_features(spread, "spread", self.random_state, constant=spread == 0)
        self.means_ = means[:, selection.indices]
        self.class_log_prior_ = class_log_prior(statistics.class_counts, self.class_pseudo_count)

    def _joint_log_likelihood(self, X):
        return self._selected_joint_log_likelihood(X[:, self.selected_features_])

    def _selected_joint_log_likelihood(self, X, first_row=0):
        X = np.asarray(X, dtype=np.float64)
        distance = ((X[:, None, :] - self.means_[None, :, :]) ** 2).sum(axis=2)
        return self.class_log_prior_[None, :] - 0.5 * distance


def _batches(n, sizes=(7, 1, 12)):
    start, i = 0, 0
    while start < n:
        yield slice(start, start + sizes[i % len(sizes)])
        start += sizes[i % len(sizes)]
        i += 1


def _five_paths(make, X, y, statistics, X_test, chunks):
    """The five paths of one model: (name, fitted estimator, its prediction of X_test) — fit, fit_statistics,
    partial_fit over batches, fit on a dask array (predicting the numpy test set) and the dask prediction."""
    classes = np.unique(y)
    fitted = make().fit(X, y)
    from_statistics = make().fit_statistics(statistics)
    streamed = make()
    for rows in _batches(X.shape[0]):
        streamed.partial_fit(X[rows], y[rows], classes=classes)
    on_dask = make().fit(da.from_array(X, chunks=chunks), da.from_array(y, chunks=chunks[0]))
    test = da.from_array(X_test, chunks=(5, chunks[1]))
    return [
        ("fit", fitted, fitted.predict_proba(X_test)),
        ("fit_statistics", from_statistics, from_statistics.predict_proba(X_test)),
        ("partial_fit", streamed, streamed.predict_proba(X_test)),
        ("dask fit", on_dask, on_dask.predict_proba(X_test)),
        ("dask predict", fitted, fitted.predict_proba(test).compute()),
    ]


#: The prediction of a dask X goes row chunk by row chunk: the same model, but BLAS blocks the products of a
#: few rows differently from those of the whole test set, so the last bits can differ between BLAS kernels
#: (measured 2.8e-14 relative under OpenBLAS's Haswell kernel, 0 under the default one).
DASK_PREDICT_RTOL = 1e-12


def _assert_same_prediction(name, proba, expected):
    """Bit for bit, except the dask prediction, which may differ in the last bits (:data:`DASK_PREDICT_RTOL`)."""
    if name == "dask predict":
        np.testing.assert_allclose(proba, expected, rtol=DASK_PREDICT_RTOL, atol=0, err_msg=name)
    else:
        np.testing.assert_array_equal(proba, expected, err_msg=name)


@pytest.fixture(scope="module")
def integers():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 3, size=47)
    X = rng.integers(-4, 5, size=(47, 30)).astype(np.float64)
    X[:, :3] += 3 * y[:, None]  # three informative features
    return X, y, rng.integers(-4, 9, size=(13, 30)).astype(np.float64)


def test_a_model_of_a_few_methods_gets_five_equal_paths(integers):
    X, y, X_test = integers
    statistics = ClassSums.of(X, y, np.unique(y))
    paths = _five_paths(lambda: TinyCentroid(n_features_to_select=4, random_state=0), X, y, statistics, X_test,
                        chunks=(10, 7))  # fmt: skip
    _, reference, expected = paths[0]
    assert reference.statistics_ == statistics and set(reference.selected_features_[:3]) == {0, 1, 2}
    for name, model, proba in paths:
        assert model.statistics_ == statistics, name
        np.testing.assert_array_equal(model.selected_features_, reference.selected_features_, err_msg=name)
        np.testing.assert_array_equal(model.classes_, reference.classes_, err_msg=name)
        np.testing.assert_array_equal(proba, expected, err_msg=name)  # bit for bit: the sums are exact


def test_the_base_keeps_its_contract_for_the_tiny_model(integers):
    X, y, X_test = integers
    classes = np.unique(y)
    # partial_fit waits until every class has a case, then fits; a failed batch leaves the estimator as it was
    model = TinyCentroid(n_features_to_select=2)
    model.partial_fit(X[y == 0], y[y == 0], classes=classes)
    assert not model.__sklearn_is_fitted__() and model.statistics_.n_samples == int((y == 0).sum())
    model.partial_fit(X[y != 0], y[y != 0])
    assert model.__sklearn_is_fitted__()
    before = model.statistics_
    with pytest.raises(InputValueError, match="the label 7, which is not in classes"):
        model.partial_fit(X[:3], np.array([0, 7, 1]))
    assert model.statistics_ is before
    with pytest.raises(InputValueError, match="classes must be passed on the first call"):
        TinyCentroid().partial_fit(X, y)
    # fit_statistics refuses another type and an empty class, naming it
    with pytest.raises(InputTypeError, match="statistics must be a ClassSums, got ndarray"):
        TinyCentroid().fit_statistics(X)
    empty = ClassSums(np.array([0, 1, 5]), [2, 3, 0], np.ones((3, 2)))
    with pytest.raises(InputValueError, match=r"no case of class 5; every class needs at least one case"):
        TinyCentroid().fit_statistics(empty)
    # a dask X of no columns is refused before anything is computed
    with pytest.raises(InputValueError, match="X has 0 features"):
        TinyCentroid().fit(da.zeros((4, 0), chunks=2), np.array([0, 1, 0, 1]))
    # the prediction of a dask X ships a copy without the statistics, restricted to the selected columns
    fitted = TinyCentroid(n_features_to_select=2).fit(X, y)
    view = fitted._prediction_view(np.asarray(fitted.selected_features_))
    assert "statistics_" not in view.__dict__ and view.n_features_in_ == 2
    selected = X_test[:, fitted.selected_features_]
    np.testing.assert_array_equal(view.predict_proba(selected), fitted.predict_proba(X_test))


# -- the converted estimators agree across the five paths ----------------------------------------------------------


def test_binary_naive_bayes_agrees_across_the_five_paths():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, size=40)
    X = (rng.random((40, 60)) < 0.3 + 0.4 * y[:, None] * (np.arange(60) < 5)).astype(np.float64)
    X_test = (rng.random((11, 60)) < 0.4).astype(np.float64)
    statistics = BinaryClassCounts.from_data(X, y)
    make = lambda: BiasCorrectedNaiveBayes(n_features_to_select=5, random_state=0)  # noqa: E731
    paths = _five_paths(make, X, y, statistics, X_test, chunks=(9, 25))
    _, reference, expected = paths[0]
    for name, model, proba in paths:
        assert model.statistics_ == statistics, name
        np.testing.assert_array_equal(model.log_integral_one_, reference.log_integral_one_, err_msg=name)
        _assert_same_prediction(name, proba, expected)


def test_categorical_naive_bayes_agrees_across_the_five_paths():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 3, size=36)
    X = rng.integers(0, 3, size=(36, 40))
    X[:, :2] = (y[:, None] + rng.integers(0, 2, size=(36, 2))) % 3
    X_test = rng.integers(0, 3, size=(9, 40))
    statistics = CategoricalClassCounts.from_data(X, y)
    make = lambda: BiasCorrectedCategoricalNB(n_features_to_select=3, random_state=0)  # noqa: E731
    paths = _five_paths(make, X, y, statistics, X_test, chunks=(8, 15))
    _, reference, expected = paths[0]
    for name, model, proba in paths:
        assert model.statistics_ == statistics, name
        np.testing.assert_array_equal(model.log_integral_, reference.log_integral_, err_msg=name)
        _assert_same_prediction(name, proba, expected)


@pytest.mark.parametrize("variant", [{}, {"variant": "per-feature"}, {"variant": "per-class", "n_mc": 16}])
def test_gaussian_classifier_agrees_across_the_five_paths(variant):
    """The Gaussian classifier fits from the moments on every path: ``fit`` and ``fit_statistics`` on the moments
    of the same X give the same draws bit for bit; ``partial_fit`` over batches and the fit on a chunked dask X
    merge moments pairwise, which differ in the last bits, so they agree up to rounding (measured about 1e-15 in
    the probabilities)."""
    rng = np.random.default_rng(2)
    y = rng.integers(0, 3, size=45)
    X = rng.normal(size=(45, 30)) + 0.9 * y[:, None] * (np.arange(30) < 3)
    X_test = rng.normal(size=(9, 30))
    make = lambda: BiasCorrectedGaussianClassifier(  # noqa: E731
        n_features_to_select=4, n_iter=40, burn_in=10, thin=2, random_state=0, progress=False, **variant
    )
    statistics = GaussianClassMoments.from_data(X, y)
    paths = _five_paths(make, X, y, statistics, X_test, chunks=(10, 7))
    _, reference, expected = paths[0]
    assert set(reference.selected_features_[:3]) == {0, 1, 2}
    assert reference.statistics_ == statistics
    for name, model, proba in paths:
        np.testing.assert_array_equal(model.selected_features_, reference.selected_features_, err_msg=name)
        np.testing.assert_array_equal(model.statistics_.class_counts, statistics.class_counts, err_msg=name)
        np.testing.assert_allclose(model.statistics_.scatter, statistics.scatter, rtol=1e-12, err_msg=name)
        if name in ("fit", "fit_statistics", "dask predict"):  # the moments of X itself
            _assert_same_prediction(name, proba, expected)
        else:
            np.testing.assert_allclose(proba, expected, rtol=0, atol=1e-10, err_msg=name)
    fitted, from_statistics = paths[0][1], paths[1][1]
    for name in fitted.trace_.posterior:
        np.testing.assert_array_equal(from_statistics.trace_.posterior[name], fitted.trace_.posterior[name], name)
    # the same moments give the same model: fit_statistics on fit's moments is partial_fit in one batch
    once = make().partial_fit(X, y, classes=np.unique(y))
    again = make().fit_statistics(reference.statistics_)
    assert once.statistics_ == reference.statistics_
    np.testing.assert_array_equal(again.predict_proba(X_test), once.predict_proba(X_test))
    np.testing.assert_array_equal(again.trace_["nu"], once.trace_["nu"])


def test_the_converted_estimators_fit_through_the_base():
    """None writes its own fit, partial_fit, fit_statistics, dask fit or dask prediction any more (the binary
    model keeps a fit_statistics of its own only for its extra ``classes`` argument, which calls the base)."""
    for estimator in (BiasCorrectedNaiveBayes, BiasCorrectedCategoricalNB, BiasCorrectedGaussianClassifier):
        assert issubclass(estimator, StatisticsClassifier)
        for name in ("fit", "partial_fit", "_fit_dask", "_predict_dask", "_fit_given_statistics"):
            assert getattr(estimator, name) is getattr(StatisticsClassifier, name), (estimator.__name__, name)
    assert BiasCorrectedCategoricalNB.fit_statistics is StatisticsClassifier.fit_statistics
    assert BiasCorrectedGaussianClassifier.fit_statistics is StatisticsClassifier.fit_statistics


def test_class_log_prior_is_the_polya_urn():
    np.testing.assert_array_equal(class_log_prior([3, 1], 1.0), np.log(np.array([4.0, 2.0]) / 6.0))
    np.testing.assert_array_equal(class_log_prior(np.array([2, 0, 5]), [0.5, 1.0, 2.0]),
                                  np.log((np.array([0.5, 1.0, 2.0]) + [2, 0, 5]) / 10.5))  # fmt: skip
    with pytest.raises(InputValueError, match="class_pseudo_count must be a positive number or 2"):
        class_log_prior([3, 1], [1.0, 2.0, 3.0])
