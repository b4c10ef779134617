"""Every estimator validates its target through the one validator (issue 26).

A regressor needs numbers: a target of strings is refused with an input error naming y (not a raw numpy
TypeError from the arithmetic); the classifiers, selectors and supervised transformers take string labels.
"""

import inspect
import warnings

import numpy as np
import pytest
from sklearn.base import RegressorMixin, is_regressor

import hdbayes
from hdbayes._validation import validate_input
from hdbayes.exceptions import InputTypeError

ESTIMATORS = sorted(
    (getattr(hdbayes, name) for name in hdbayes.__all__
     if inspect.isclass(getattr(hdbayes, name)) and hasattr(getattr(hdbayes, name), "fit")),
    key=lambda cls: cls.__name__,
)  # fmt: skip
REGRESSORS = [cls for cls in ESTIMATORS if issubclass(cls, RegressorMixin)]
OTHERS = [cls for cls in ESTIMATORS if not issubclass(cls, RegressorMixin)]
SHORT = {"n_iter": 8, "burn_in": 2, "thin": 1, "n_chains": 1, "progress": False, "random_state": 0, "groups": 3}


def _make(cls):
    parameters = inspect.signature(cls).parameters
    return cls(**{name: value for name, value in SHORT.items() if name in parameters})


def test_the_registry_has_the_regressors():
    assert {cls.__name__ for cls in REGRESSORS} == {"GroupSpikeSlabGibbs", "GroupSpikeSlabRegression"}


@pytest.mark.parametrize("cls", REGRESSORS, ids=lambda cls: cls.__name__)
@pytest.mark.parametrize(
    "target",
    [
        lambda y: y.astype(str),
        lambda y: np.where(y > 0, "up", "down"),
        lambda y: y.astype(str).astype(bytes),
        lambda y: np.array(["a", *y[1:]], dtype=object),
        lambda y: list(y.astype(str)),
    ],
    ids=["numbers-as-strings", "labels", "bytes", "object-with-a-string", "list-of-strings"],
)
def test_a_regressor_refuses_a_target_of_strings_naming_y(cls, target):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 6))
    y = X[:, 0] + 0.1 * rng.normal(size=20)
    with pytest.raises(InputTypeError, match=r"^y must hold numbers \(a regression target\), got"):
        _make(cls).fit(X, target(y))


@pytest.mark.parametrize("cls", REGRESSORS, ids=lambda cls: cls.__name__)
def test_a_regressor_takes_numbers_in_an_object_array_as_numbers(cls):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 6))
    y = X[:, 0] + 0.1 * rng.normal(size=20)
    a = _make(cls).fit(X, y.astype(object)).predict(X)
    b = _make(cls).fit(X, y).predict(X)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("cls", OTHERS, ids=lambda cls: cls.__name__)
def test_the_other_estimators_take_string_labels(cls):
    rng = np.random.default_rng(0)
    y = np.tile(["no", "yes"], 20)
    model = None
    for X in (rng.integers(0, 2, size=(40, 6)), rng.standard_normal((40, 6))):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = _make(cls).fit(X, y)
            break
        except (ValueError, TypeError) as error:
            assert "y must hold numbers" not in str(error)
    assert model is not None, f"{cls.__name__} fits neither data set with string labels"
    assert not is_regressor(model)
    if hasattr(model, "classes_"):
        assert list(model.classes_) == ["no", "yes"]


def test_validate_input_refuses_a_string_target_only_where_numbers_are_needed():
    from sklearn.base import BaseEstimator

    X = np.zeros((4, 2))
    with pytest.raises(InputTypeError, match="got strings such as 'a'"):
        validate_input(BaseEstimator(), X, np.array(["a", "b", "a", "b"]), y_numeric=True)
    _, y = validate_input(BaseEstimator(), X, np.array(["a", "b", "a", "b"]))
    assert y.tolist() == ["a", "b", "a", "b"]
    _, y = validate_input(BaseEstimator(), X, np.array([1, 2, 3, 4], dtype=object), y_numeric=True)
    assert y.dtype == np.float64
