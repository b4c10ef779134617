"""What the mergeable statistics share (:class:`_Statistics`): equality by value, pickling, ``sum(shards)``,
the checks before two of them are added, and the checks of X and of feature names when they are computed."""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_array

from hdbayes.exceptions import InputTypeError, InputValueError


def _checked_array(X, *, finite):
    """X through scikit-learn's check_array (dense or sparse, numbers, any size), its errors as input errors."""
    try:
        return check_array(
            X, accept_sparse=("csr", "csc", "coo"), dtype="numeric", ensure_all_finite=finite,
            ensure_min_samples=0, ensure_min_features=0, input_name="X",
        )  # fmt: skip
    except ValueError as error:
        raise InputValueError(str(error)) from None
    except TypeError as error:
        raise InputTypeError(str(error)) from None


def _names_array(feature_names, p):
    if feature_names is None:
        return None
    names = np.asarray(feature_names, dtype=object)
    if names.shape != (p,):
        raise InputValueError(f"feature_names must hold one name per feature ({p}), got shape {names.shape}")
    return names


class _Statistics:
    """What the mergeable statistics share: equality by value over their arrays (``_fields``, the constructor's
    arguments before ``feature_names``, and the feature names), pickling by those arguments, ``sum(shards)``
    starting from 0, and the checks before adding two of them."""

    __hash__ = None  # compared by value (arrays), so not hashable
    _fields: tuple[str, ...] = ()

    @staticmethod
    def _integers(name, values):
        """``values`` as a new int64 array (integers, or floats with integer values), else a type error."""
        values = np.array(values, copy=True)
        if values.dtype.kind in "biu":
            return values.astype(np.int64)
        if values.dtype.kind == "f" and np.all(np.isfinite(values)) and np.array_equal(values, np.rint(values)):
            return values.astype(np.int64)
        raise InputTypeError(f"{name} must hold integer counts, got dtype {values.dtype}")

    @staticmethod
    def _classes(classes):
        """(a new array of the class labels, G), refusing labels that are not 1-D, sorted and distinct."""
        classes = np.array(classes, copy=True)
        G = classes.shape[0] if classes.ndim == 1 else -1
        if G < 0 or (G > 1 and not (classes[1:] > classes[:-1]).all()):
            raise InputValueError("classes must be a 1-D array of sorted distinct labels")
        return classes, G

    def _addable(self, other):
        """The feature names of ``self + other``, after refusing statistics of other features."""
        if other.n_features != self.n_features:
            raise InputValueError(f"cannot add the statistics of {self.n_features} and of {other.n_features} features")
        return _merged_names(self.feature_names, other.feature_names)

    def __radd__(self, other):
        if isinstance(other, int) and other == 0:  # sum(shards) starts from 0
            return self
        return NotImplemented

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        return _same_names(self.feature_names, other.feature_names) and all(
            np.array_equal(getattr(self, name), getattr(other, name)) for name in self._fields
        )

    def __reduce__(self):
        return (type(self), tuple(getattr(self, name) for name in self._fields) + (self.feature_names,))


def _merged_classes(a, b):
    """The sorted union of two statistics' class labels; labels of different kinds (numbers and strings),
    which numpy would silently turn into strings, are refused."""
    if (a.dtype.kind in "biuf") != (b.dtype.kind in "biuf"):
        raise InputTypeError(f"cannot merge classes {a.tolist()} and {b.tolist()}: numbers and other labels")
    try:
        return np.union1d(a, b)
    except TypeError as error:
        raise InputTypeError(f"cannot merge classes {a.tolist()} and {b.tolist()}") from error


def _same_names(a, b):
    return (a is None and b is None) or (a is not None and b is not None and np.array_equal(a, b))


def _merged_names(a, b):
    """The feature names of a sum of statistics (refusing different ones)."""
    if a is not None and b is not None:
        differ = np.flatnonzero(a != b)
        if differ.size:
            j = int(differ[0])
            raise InputValueError(
                f"cannot add statistics of different features: feature {j} is {a[j]!r} in one and {b[j]!r} in the other"
            )
    return a if a is not None else b
