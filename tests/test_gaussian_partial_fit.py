"""BiasCorrectedGaussianClassifier.partial_fit: per-class moments merged batch by batch."""

import numpy as np
import pytest

from hdbayes import BiasCorrectedGaussianClassifier
from hdbayes.exceptions import InputValueError
from hdbayes.statistics import GaussianClassMoments


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n, p = 90, 40
    y = rng.integers(0, 3, n)
    return rng.standard_normal((n, p)) + 0.8 * y[:, None] * (np.arange(p) < 5), y


KWARGS = dict(n_features_to_select=6, n_iter=60, burn_in=10, thin=2, random_state=1, progress=False)


@pytest.mark.parametrize("variant", [{}, {"variant": "per-feature"}, {"variant": "per-class", "n_mc": 16}])
def test_batches_give_the_fit_on_all_of_them(data, variant):
    """Four batches of unequal size: the same selection and the same probabilities as one fit, up to rounding
    (measured 1.7e-15; the class sums come from merged moments, so not bit for bit)."""
    X, y = data
    whole = BiasCorrectedGaussianClassifier(**KWARGS, **variant).fit(X, y)
    batched = BiasCorrectedGaussianClassifier(**KWARGS, **variant)
    for part in np.array_split(np.arange(X.shape[0]), 4):
        batched.partial_fit(X[part], y[part], classes=[0, 1, 2])
    assert np.array_equal(whole.selected_features_, batched.selected_features_)
    np.testing.assert_allclose(batched.predict_proba(X), whole.predict_proba(X), rtol=0, atol=1e-10)
    once = GaussianClassMoments.from_data(X, y)
    assert np.array_equal(batched.statistics_.class_counts, once.class_counts)
    np.testing.assert_allclose(batched.statistics_.scatter, once.scatter, rtol=1e-12)


def test_fit_then_partial_fit_continues(data):
    X, y = data
    whole = BiasCorrectedGaussianClassifier(**KWARGS).fit(X, y)
    continued = BiasCorrectedGaussianClassifier(**KWARGS).fit(X[:45], y[:45]).partial_fit(X[45:], y[45:])
    np.testing.assert_allclose(continued.predict_proba(X), whole.predict_proba(X), rtol=0, atol=1e-10)
    refit = BiasCorrectedGaussianClassifier(**KWARGS).partial_fit(X[:45], y[:45], classes=[0, 1, 2]).fit(X, y)
    assert refit.statistics_.n_samples == X.shape[0]  # fit starts again


def test_only_accumulates_until_every_class_has_two_cases(data):
    X, y = data
    model = BiasCorrectedGaussianClassifier(**KWARGS)
    first = np.flatnonzero(y == 0)[:5]
    model.partial_fit(X[first], y[first], classes=[0, 1, 2])
    assert model.statistics_.n_samples == 5 and not hasattr(model, "trace_")
    rest = np.setdiff1d(np.arange(X.shape[0]), first)
    model.partial_fit(X[rest], y[rest])
    assert hasattr(model, "trace_")


def test_partial_fit_errors_leave_the_estimator_as_it_was(data):
    X, y = data
    model = BiasCorrectedGaussianClassifier(**KWARGS)
    with pytest.raises(InputValueError, match="classes must be passed"):
        model.partial_fit(X, y)
    model.partial_fit(X[:50], y[:50], classes=[0, 1, 2])
    before = model.statistics_
    with pytest.raises(InputValueError, match="label 7, which is not in classes"):
        model.partial_fit(X[50:], np.where(y[50:] == 2, 7, y[50:]))
    assert model.statistics_ is before
    with pytest.raises(ValueError, match="features"):
        model.partial_fit(X[50:, :10], y[50:])
    with pytest.raises(InputValueError, match="differs from the classes of the first call"):
        model.partial_fit(X[50:], y[50:], classes=[0, 1])
    bad = X[50:].copy()
    bad[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        model.partial_fit(bad, y[50:])
    assert model.statistics_ is before


def test_one_class_so_far_is_not_fitted(data):
    """After a batch of one class the moments are kept but there is no model: predictions say so."""
    from sklearn.exceptions import NotFittedError

    X, y = data
    model = BiasCorrectedGaussianClassifier(**KWARGS).partial_fit(X[y == 0], y[y == 0], classes=[0, 1, 2])
    assert not model.__sklearn_is_fitted__()
    with pytest.raises(NotFittedError):
        model.predict_proba(X)


def test_fit_statistics_is_the_fit_from_the_moments(data):
    """The moments of shards added up: the model of partial_fit over the same shards, bit for bit; the feature
    names travel with the moments; too few cases or another statistic are refused."""
    pd = pytest.importorskip("pandas")
    X, y = data
    frame = pd.DataFrame(X, columns=[f"g{j}" for j in range(X.shape[1])])
    shards = [GaussianClassMoments.from_data(frame.iloc[part], y[part], classes=[0, 1, 2])
              for part in np.array_split(np.arange(X.shape[0]), 3)]  # fmt: skip
    model = BiasCorrectedGaussianClassifier(**KWARGS).fit_statistics(sum(shards))
    streamed = BiasCorrectedGaussianClassifier(**KWARGS)
    for part in np.array_split(np.arange(X.shape[0]), 3):
        streamed.partial_fit(frame.iloc[part], y[part], classes=[0, 1, 2])
    assert model.statistics_ == streamed.statistics_
    assert list(model.feature_names_in_) == list(frame.columns) == list(streamed.statistics_.feature_names)
    np.testing.assert_array_equal(model.predict_proba(frame), streamed.predict_proba(frame))
    refit = BiasCorrectedGaussianClassifier(**KWARGS).fit_statistics(
        BiasCorrectedGaussianClassifier(**KWARGS).fit(frame, y).statistics_
    )
    assert list(refit.feature_names_in_) == list(frame.columns)
    two = np.flatnonzero(y == 2)[:1]
    few = GaussianClassMoments.from_data(X[np.r_[np.flatnonzero(y < 2), two]], y[np.r_[np.flatnonzero(y < 2), two]])
    with pytest.raises(InputValueError, match="class 2 has 1 case; every class needs at least two"):
        BiasCorrectedGaussianClassifier(**KWARGS).fit_statistics(few)
    with pytest.raises(TypeError, match="statistics must be a GaussianClassMoments, got ndarray"):
        BiasCorrectedGaussianClassifier(**KWARGS).fit_statistics(X)
