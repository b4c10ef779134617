"""What the two groupings of interaction patterns share (Li & Neal; thesis §3.3): input checks and results.

The patterns, their expressions and groups are described in :mod:`hdbayes.interactions.patterns`.
:mod:`hdbayes.interactions.sequence_patterns` groups the suffix patterns of histories,
:mod:`hdbayes.interactions.classification_patterns` the patterns over any features; both return a subclass of
:class:`_Grouping` and describe a test case by :class:`ExpressedGroups`.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["ExpressedGroups"]


# ---------------------------------------------------------------------------
# Input checks and encoding
# ---------------------------------------------------------------------------


def _check_order(order, n_columns):
    if isinstance(order, bool) or not isinstance(order, numbers.Integral):
        raise TypeError(f"order must be an integer, got {type(order).__name__}")
    order = int(order)
    if order < 0:
        raise ValueError(f"order must be >= 0, got {order}")
    if order > n_columns:
        raise ValueError(f"order={order} exceeds the number of columns of X ({n_columns})")
    return order


def _check_no_missing(X, name):
    """Reject NaN/inf in float arrays and None/NaN in object arrays."""
    if X.dtype.kind in "fc":
        if not np.all(np.isfinite(X)):
            raise ValueError(f"{name} contains NaN or infinite values; codes must be finite")
    elif X.dtype.kind == "O":
        for value in X.flat:
            if value is None or (isinstance(value, float) and not math.isfinite(value)):
                raise ValueError(f"{name} contains missing values (None/NaN); codes must be given for every entry")


def _check_codes(X, name="X"):
    """A 2-D array of discrete codes with at least one row."""
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (cases × columns), got {X.ndim} dimension(s)")
    if X.shape[0] == 0:
        raise ValueError(f"{name} has no rows (cases); at least one training case is needed")
    _check_no_missing(X, name)
    return X


def _unique_inverse(values, name):
    """np.unique(values, return_inverse=True) with a clear error for incomparable codes."""
    try:
        categories, inverse = np.unique(values, return_inverse=True)
    except TypeError as err:
        raise TypeError(f"{name} mixes codes of types that cannot be compared (e.g. strings and numbers)") from err
    return categories, inverse.reshape(values.shape).astype(np.int64)


def _encode_test_codes(x, categories):
    """Map codes of a test case to indices into ``categories``; unseen codes become −2."""
    x = np.asarray(x)
    out = np.full(x.shape, -2, np.int64)
    if categories.size == 0:
        return out
    try:
        idx = np.clip(np.searchsorted(categories, x), 0, categories.size - 1)
    except TypeError as err:
        raise TypeError("x_test holds codes that cannot be compared with the training codes") from err
    known = categories[idx] == x
    out[known] = idx[known]
    return out


def _check_test_input(X_test, ndim, n_columns, what, exact=False):
    """One test case (``ndim`` 1, ``x_test``) or a matrix of them (``ndim`` 2, ``X_test``) with at least
    ``n_columns`` codes each (exactly ``n_columns`` features if ``exact``), none missing."""
    X = np.asarray(X_test)
    name, shape, unit = ("x_test", "a 1-D array (one case)", "entries") if ndim == 1 else (
        "X_test", "a 2-D array (cases × columns)", "columns")  # fmt: skip
    if X.ndim != ndim:
        raise ValueError(f"{name} must be {shape}, got {X.ndim} dimension(s)")
    if X.shape[-1] < n_columns:
        raise ValueError(f"{name} has {X.shape[-1]} {unit} but {what} needs at least {n_columns}")
    _check_no_missing(X, name)
    if exact and X.shape[-1] != n_columns:
        raise ValueError(f"{name} has {X.shape[-1]} features, the training data had {n_columns}")
    return X


# ---------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------


class ExpressedGroups(NamedTuple):
    """The training groups a test case touches (thesis §3.4.2 and §3.5.1).

    Attributes
    ----------
    groups : ndarray of shape (T,)
        Ids of the groups containing at least one pattern expressed by the test case
        (increasing).
    counts : ndarray of shape (T, order + 1)
        ``counts[j, o]`` = t_{g,o}, the number of order-o patterns of group ``groups[j]``
        that the test case expresses. The width of its share s_g^t is Σ_o t_{g,o} σ_o^α.
    new_counts : ndarray of shape (order + 1,)
        Number of order-o patterns expressed by the test case but by no training case
        (the "extra" coefficients of eq. 3.25, drawn from their prior).
    """

    groups: np.ndarray
    counts: np.ndarray
    new_counts: np.ndarray

    @property
    def new_orders(self):
        """Orders with at least one new pattern (for sequences: each such order has one)."""
        return np.flatnonzero(self.new_counts)


@dataclass(frozen=True, eq=False)
class _Grouping:
    order: int
    n_cases: int
    case_indptr: np.ndarray
    case_indices: np.ndarray
    order_counts: np.ndarray

    @property
    def n_groups(self):
        """G, the number of groups = compressed parameters per class."""
        return int(self.order_counts.shape[0])

    @property
    def n_patterns(self):
        """Number of distinct patterns of order ≤ ``order`` expressed by ≥ 1 training case."""
        return int(self.order_counts.sum())

    @property
    def group_sizes(self):
        """n_g = Σ_o n_{g,o}, the number of patterns in each group."""
        return self.order_counts.sum(axis=1)

    def cases(self, g: int) -> np.ndarray:
        """Sorted indices of the training cases expressing group ``g`` (its expression E_g).

        Parameters
        ----------
        g : int
            A group, 0 <= g < ``n_groups``.

        Returns
        -------
        ndarray of int
            The indices into the training cases, increasing (a view of ``case_indices``).
        """
        return self.case_indices[self.case_indptr[g] : self.case_indptr[g + 1]]

    def prior_widths(self, sigma: ArrayLike, alpha: float) -> np.ndarray:
        """W_g = Σ_o n_{g,o} σ_o^α (thesis eq. 3.12, 3.49).

        Parameters
        ----------
        sigma : array-like of shape (order + 1,) or (..., order + 1)
            σ_o, the prior width of an interaction of each order 0..``order`` (a leading batch
            shape, e.g. one row per draw, is kept).
        alpha : float
            The exponent α: 1 gives the Cauchy scale of s_g, 2 the Gaussian **variance**.

        Returns
        -------
        ndarray of shape (n_groups,) or (..., n_groups)
            W_g for every group.
        """
        sigma = np.asarray(sigma, dtype=np.float64)
        if sigma.shape[-1] != self.order + 1:
            raise ValueError(
                f"sigma must have {self.order + 1} entries (orders 0..{self.order}), got {sigma.shape[-1]}"
            )
        return (sigma[..., None, :] ** alpha * self.order_counts).sum(axis=-1)
