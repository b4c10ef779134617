"""Input checks shared by the estimators, with messages that name the problem."""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.preprocessing import binarize as _binarize
from sklearn.utils.multiclass import check_classification_targets, type_of_target

__all__ = ["check_binary_features", "check_binary_target", "check_count", "check_generator", "check_positive"]


def check_positive(name, value, *, allow_zero=False):
    """A finite real number > 0 (or ≥ 0); raises TypeError/ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    ok = value >= 0 if allow_zero else value > 0
    if not np.isfinite(value) or not ok:
        raise ValueError(f"{name} must be a finite number {'>=' if allow_zero else '>'} 0, got {value}")
    return value


def check_count(name, value, *, minimum=1, odd=False):
    """An integer ≥ ``minimum`` (odd if asked); raises TypeError/ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    value = int(value)
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    if odd and value % 2 == 0:
        raise ValueError(f"{name} must be odd, got {value}")
    return value


def check_binary_features(X, binarize=None):
    """Return X with values in {0, 1}: dense arrays keep their dtype, sparse ones become CSC.

    With ``binarize=t`` values > t become 1 and the rest 0 (as in scikit-learn's
    ``BernoulliNB``); with ``binarize=None`` any value other than 0 or 1 is an error.
    """
    if binarize is not None:
        X = _binarize(X, threshold=binarize, copy=True)
    if sp.issparse(X):
        X = X.tocsc()
        values = X.data
    else:
        X = np.asarray(X)
        values = X
    bad = (values != 0) & (values != 1)
    if bad.any():
        example = values[bad].flat[0]
        raise ValueError(
            f"X must hold binary features (0/1), found the value {example!r}; "
            "pass binarize=<threshold> to binarize continuous data"
        )
    return X


def check_binary_target(y):
    """Encode a binary target: returns (classes, y01) with y01 in {0, 1} as float64.

    Raises a ValueError for a single class, for more than two classes and for a
    continuous target.
    """
    check_classification_targets(y)
    y = np.asarray(y)
    classes, y01 = np.unique(y, return_inverse=True)
    if classes.shape[0] < 2:
        raise ValueError(f"y has a single class ({classes[0]!r}); a binary classifier needs two")
    if classes.shape[0] > 2 or type_of_target(y) != "binary":
        raise ValueError(f"Only binary classification is supported. y must be binary, found {classes.shape[0]} classes")
    return classes, y01.astype(np.float64)


def check_generator(random_state) -> np.random.Generator:
    """Turn ``random_state`` into a :class:`numpy.random.Generator`.

    Accepts None, an int (or anything :func:`numpy.random.default_rng`
    accepts: SeedSequence, BitGenerator, Generator — a Generator is used as is,
    not copied) and, for scikit-learn compatibility, a legacy
    :class:`numpy.random.RandomState`, from which a seed is drawn.
    """
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1, size=4))
    if isinstance(random_state, (bool, np.bool_)):
        raise TypeError("random_state must be None, an int or a numpy Generator, not a bool")
    try:
        return np.random.default_rng(random_state)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            "random_state must be None, a non-negative int, a numpy.random.Generator "
            f"(or SeedSequence/BitGenerator/RandomState), got {random_state!r}"
        ) from exc
