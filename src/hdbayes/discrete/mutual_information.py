"""Feature selection by mutual information with the class (Murphy §3.5.4).

For a discrete feature X_j and the class Y,

    I(X_j; Y) = Σ_{x_j} Σ_y p(x_j, y) log[ p(x_j, y) / (p(x_j) p(y)) ]     (nats),

and for a binary feature this is Murphy's formula

    I_j = Σ_c [ θ_jc π_c log(θ_jc/θ_j) + (1 − θ_jc) π_c log((1 − θ_jc)/(1 − θ_j)) ],
    θ_j = Σ_c π_c θ_jc,

with 0 · log 0 = 0. The filter keeps the K features of largest I_j. As Murphy §3.5.4
warns, naive Bayes on the retained features without a correction is over-confident:
the selection is recorded as a :class:`hdbayes.selection.Selection` (threshold γ, p, k)
so that the bias-corrected models can condition on it.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from scipy.special import xlogy
from sklearn.base import BaseEstimator, _fit_context
from sklearn.feature_selection import SelectorMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from hdbayes._validation import (
    binarize_features,
    check_class_labels,
    check_later_classes,
    check_positive,
    feature_label,
    is_dask_array,
    unchanged_on_error,
    validate_input,
)
from hdbayes.discrete._base import add_category_counts, check_non_negative_features, feature_thresholds
from hdbayes.discrete.conjugate import _MAX_CODE, check_count_matrix
from hdbayes.exceptions import InputValueError
from hdbayes.selection import select_from_scores
from hdbayes.statistics.chunks import check_dask_matrix, check_finite_chunk, dask_class_codes, reduce_chunks

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Literal, Self

    from numpy.typing import ArrayLike

    from hdbayes._validation import MatrixLike, RandomStateLike

__all__ = ["MutualInformationSelector", "mutual_information_binary", "mutual_information_discrete"]


def mutual_information_binary(class_prior: ArrayLike, theta: ArrayLike) -> np.ndarray:
    """Mutual information of binary features with the class (Murphy §3.5.4).

    Parameters
    ----------
    class_prior : array-like of shape (C,)
        π_c.
    theta : array-like of shape (C, D)
        θ_jc = p(x_j = 1 | y = c).

    Returns
    -------
    ndarray of shape (D,)
        I_j in nats, ≥ 0.

    Examples
    --------
    >>> round(float(mutual_information_binary([0.5, 0.5], [[0.9], [0.1]])[0]), 12)   # log 2 − H(0.9)
    0.368064207168
    """
    pi = np.asarray(class_prior, dtype=np.float64)
    theta = np.asarray(theta, dtype=np.float64)
    if pi.ndim != 1 or theta.ndim != 2 or theta.shape[0] != pi.shape[0]:
        raise InputValueError(f"class_prior must be (C,) and theta (C, D); got {pi.shape} and {theta.shape}")
    if np.any((theta < 0) | (theta > 1)) or np.any(pi < 0) or not np.isclose(pi.sum(), 1.0):
        raise InputValueError("theta must lie in [0, 1] and class_prior must be probabilities summing to 1")
    marginal = pi @ theta
    with np.errstate(divide="ignore", invalid="ignore"):
        ones = xlogy(theta, theta) - xlogy(theta, marginal[None, :])
        zeros = xlogy(1 - theta, 1 - theta) - xlogy(1 - theta, 1 - marginal[None, :])
    return np.maximum(pi @ (ones + zeros), 0.0)


def _contingency_tables(X, codes, n_classes):
    """Joint counts N(x_j = v, y = c) for integer-coded CSR X: (C, Σ_j S_j) and segment starts.

    Zeros are counted as N_c − (non-zeros of the class), so sparse X is never densified.
    """
    n, D = X.shape
    X = X.copy()
    X.eliminate_zeros()
    values = X.data.astype(np.int64)
    columns = X.indices
    rows = np.repeat(np.arange(n), np.diff(X.indptr))
    n_levels = np.ones(D, dtype=np.int64)
    np.maximum.at(n_levels, columns, values + 1)
    starts = np.concatenate([[0], np.cumsum(n_levels)[:-1]])
    total = int(n_levels.sum())
    flat = codes[rows] * total + starts[columns] + values
    table = np.bincount(flat, minlength=n_classes * total).reshape(n_classes, total).astype(np.float64)
    class_sizes = np.bincount(codes, minlength=n_classes).astype(np.float64)
    table[:, starts] = class_sizes[:, None] - np.add.reduceat(table, starts, axis=1)
    return table, starts


def mutual_information_discrete(
        X: ArrayLike, y: ArrayLike, *, estimate: Literal["mle", "posterior_mean"] = "mle", prior: float = 1.0,
        feature_names: Sequence[str] | None = None) -> np.ndarray:
    """I(X_j; Y) of every integer-coded feature from its contingency table with y (Murphy §3.5.4).

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Non-negative integer codes (0/1 features, counts or categories).
    y : array-like of shape (n_samples,)
        Class labels.
    estimate : {"mle", "posterior_mean"}, default="mle"
        Plug in the empirical joint frequencies (the seed), or the posterior mean of the
        joint table under a symmetric Dirichlet(prior) on its cells.
    prior : float, default=1.0
        Pseudo-count per cell for ``"posterior_mean"``.
    feature_names : sequence of str, optional
        Column names, for messages.

    Returns
    -------
    ndarray of shape (n_features,)
        In nats.

    Examples
    --------
    >>> X = np.array([[1, 0], [1, 1], [0, 0], [0, 1], [0, 1]])
    >>> np.round(mutual_information_discrete(X, [0, 0, 0, 1, 1]), 8).tolist()   # log 5 − (6/5) log 3
    [0.29110317, 0.29110317]
    """
    if estimate not in ("mle", "posterior_mean"):
        raise InputValueError(f"estimate must be 'mle' or 'posterior_mean', got {estimate!r}")
    X = _check_codes(X, feature_names)
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise InputValueError(f"y must be 1-D with {X.shape[0]} entries (one per row of X), got shape {y.shape}")
    _, codes = np.unique(y, return_inverse=True)
    n_classes = int(codes.max()) + 1
    table, starts = _contingency_tables(X, codes, n_classes)
    return _scores_from_table(table, starts, estimate, prior)


def _check_codes(X, feature_names=None):
    """X as CSR non-negative integer codes below _MAX_CODE (input errors name the feature)."""
    X = check_count_matrix(
        X, name="X", feature_names=feature_names,
        option="the mutual information is computed on counts or 0/1 codes; binarize continuous data first "
        "(MutualInformationSelector(binarize=0.0) or binarize='median')",
    )  # fmt: skip
    if X.data.size and X.data.max() >= _MAX_CODE:
        k = int(np.argmax(X.data))
        raise InputValueError(
            f"{feature_label(int(X.indices[k]), feature_names)} has the value {float(X.data[k]):g}; counts and codes "
            f"must be below {_MAX_CODE}"
        )
    return X


def _scores_from_table(table, starts, estimate, prior):
    """I(X_j; Y) of every feature from its contingency table with the class (see :func:`_contingency_tables`)."""
    if estimate == "posterior_mean":
        check_positive("prior", prior)
        table = table + prior
    totals = np.add.reduceat(table.sum(axis=0), starts)  # N per feature (with pseudo-counts)
    sizes = np.diff(np.append(starts, table.shape[1]))
    joint = table / np.repeat(totals, sizes)[None, :]
    value_marginal = joint.sum(axis=0, keepdims=True)
    class_marginal = np.repeat(np.add.reduceat(joint, starts, axis=1), sizes, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = xlogy(joint, joint) - xlogy(joint, value_marginal) - xlogy(joint, class_marginal)
    return np.maximum(np.add.reduceat(terms.sum(axis=0), starts), 0.0)


def _table_counts(X, codes, n_classes):
    """The mergeable statistics of checked codes X: the contingency tables and their category counts."""
    table, starts = _contingency_tables(X, np.asarray(codes, dtype=np.int64), n_classes)
    return {"n_levels": np.diff(np.append(starts, table.shape[1])), "table": table}


def _merge_tables(a, b):
    table, widths = add_category_counts(a["table"], a["n_levels"], b["table"], b["n_levels"])
    return {"n_levels": widths, "table": table}


def _chunk_tables(x, codes, *, where, columns, thresholds, n_classes, non_negative):
    """The contingency tables of one row chunk of a dask X, checked as in memory."""
    x = check_finite_chunk(x)
    if non_negative:
        check_non_negative_features(
            x, "MutualInformationSelector", hint="pass binarize=<threshold> to score continuous data"
        )
    if thresholds is not None:
        x = binarize_features(x, thresholds)
    return _table_counts(_check_codes(x), codes, n_classes)


class MutualInformationSelector(SelectorMixin, BaseEstimator):
    """Keep the discrete features with the largest mutual information with the class (Murphy §3.5.4).

    A scikit-learn selector (``fit``, ``transform``, ``get_support``) for use in a pipeline
    before a naive Bayes classifier. The selection is recorded as a
    :class:`hdbayes.selection.Selection` with γ (the smallest retained score) and p − k.

    The mutual information is that of discrete values: X holds counts, category codes or
    0/1 values (non-negative integers; every distinct value is a category), and anything
    else is refused with a message naming ``binarize``. Continuous data (expression levels,
    tf-idf) are scored after binarizing them with ``binarize`` (a threshold or the training
    medians); ``transform`` always returns the original columns.

    Parameters
    ----------
    n_features_to_select : int or None, default=None
        K, the number of features kept; ties at the boundary are broken at random with
        ``random_state``. K larger than the number of features p is refused. None (with
        ``threshold=None``) keeps every feature: nothing is selected unless asked.
    threshold : float, optional
        Instead of ``n_features_to_select`` (give at most one): keep the features whose
        score exceeds it (an error if none does).
    binarize : float, "median" or None, default=None
        None: score X as it is (non-negative integers). A threshold t: score the 0/1
        features x > t; ``"median"``: x > the feature's training median (stored in
        ``binarize_thresholds_``). With a threshold any real values (negative too) are
        accepted; dense and sparse input give the same scores.
    estimate : {"mle", "posterior_mean"}, default="mle"
        How the joint table is estimated, as in :func:`mutual_information_discrete`.
    prior : float, default=1.0
        Pseudo-count per cell for ``estimate="posterior_mean"``.
    random_state : int, RandomState, Generator or None
        Breaks ties at the boundary of the K selected features.

    Attributes
    ----------
    n_features_in_ : int
        Number of features seen in ``fit``.
    scores_ : ndarray of shape (n_features_in_,)
        I(X_j; Y) in nats.
    ranking_ : ndarray of shape (n_features_in_,)
        Feature indices by decreasing score (stable: ties by column index).
    classes_ : ndarray
        The class labels.
    statistics_ : dict
        The mergeable statistics the scores come from: ``table`` (n_classes, Σ_j S_j), the
        joint counts N(x_j = v, y = c) of every feature's values v = 0..S_j − 1 side by side,
        and ``n_levels`` (S_j); ``partial_fit`` and dask chunks add them up.
    selection_ : hdbayes.selection.Selection
    selected_features_ : ndarray of int
        Retained columns, strongest first.
    threshold_ : float
        γ.
    n_discarded_ : int
        p − k.
    binarize_thresholds_ : ndarray of shape (n_features_in_,) or None
        The thresholds used to score (None for ``binarize=None``).

    Examples
    --------
    >>> X = np.array([[1, 0, 3], [1, 1, 3], [0, 0, 1], [0, 1, 1]])
    >>> selector = MutualInformationSelector(n_features_to_select=2).fit(X, [1, 1, 0, 0])
    >>> selector.get_support().tolist(), np.round(selector.scores_, 4).tolist()
    ([True, False, True], [0.6931, 0.0, 0.6931])
    """

    _parameter_constraints: dict = {
        "n_features_to_select": [None, Interval(Integral, 1, None, closed="left")],
        "threshold": [None, Interval(Real, 0, None, closed="left")],
        "binarize": [None, Interval(Real, None, None, closed="neither"), StrOptions({"median"})],
        "estimate": [StrOptions({"mle", "posterior_mean"})],
        "prior": [Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state", np.random.Generator],
    }

    def __init__(
            self, n_features_to_select: int | None = None, *, threshold: float | None = None,
            binarize: float | Literal["median"] | None = None, estimate: Literal["mle", "posterior_mean"] = "mle",
            prior: float = 1.0, random_state: RandomStateLike = None) -> None:
        self.n_features_to_select = n_features_to_select
        self.threshold = threshold
        self.binarize = binarize
        self.estimate = estimate
        self.prior = prior
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        # without binarize the features are discrete codes >= 0 (scikit-learn then checks with integers);
        # with binarize any real values are thresholded
        tags.input_tags.positive_only = self.binarize is None
        tags.input_tags.categorical = self.binarize is None
        tags.target_tags.required = True
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: MatrixLike, y: ArrayLike) -> Self:
        """Score every feature on (X, y) and select.

        Raises :class:`~hdbayes.exceptions.InputValueError` for bad X (negative or, without
        ``binarize``, non-integer values), a target with one class or continuous values,
        both ``n_features_to_select`` and ``threshold``, ``n_features_to_select`` larger than
        the number of features, and a ``threshold`` that no feature exceeds — before
        anything is fitted.

        X may be a ``dask.array`` (dense or ``scipy.sparse`` chunks) and y a numpy or dask
        array: the per-class contingency tables of every row chunk are computed where it
        lives and merged (the scores equal the in-memory ones exactly); ``binarize`` must then
        be a fixed threshold or None. A bad chunk is an input error naming it.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
            The candidate features.
        y : array-like or dask array of shape (n_samples,)
            Class labels.

        Returns
        -------
        self
            The fitted selector.
        """
        self._check_selection_options()
        if is_dask_array(X):
            return self._fit_dask(X, y, classes=None, first=True)
        if is_dask_array(y):
            y = y.compute()
        check_class_labels(y)
        X, y = validate_input(
            self, X, y, reset=True, accept_sparse=("csr", "csc", "coo"), dtype=np.float64, ensure_all_finite=True
        )
        with unchanged_on_error(self):  # a selection that fails leaves no tables behind
            self.classes_, codes = np.unique(y, return_inverse=True)
            self.binarize_thresholds_ = feature_thresholds(X, self.binarize)
            self.statistics_ = self._tables(X, codes)
            self._select()
        return self

    @available_if(lambda self: not isinstance(self.binarize, str))  # "median" needs all the data at once
    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X: MatrixLike, y: ArrayLike, classes: ArrayLike | None = None) -> Self:
        """Add a batch of cases; scores and selection equal ``fit`` on all batches so far.

        The per-class contingency tables (``statistics_``) are added up and the scores and the
        selection computed again from them after every call (any batch sizes, in any order;
        a feature may take new values in a later batch). Only with ``binarize`` a fixed
        threshold or None ("median" depends on all the data at once).

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
            A batch of cases; a dask array is counted chunk by chunk as in ``fit``.
        y : array-like or dask array of shape (n_samples,)
            The batch's class labels.
        classes : array-like, optional
            All class labels (at least two), on the first call; without them the labels of the
            first batch are all the classes.

        Returns
        -------
        self
            The selector, updated with the batch.
        """
        self._check_selection_options()
        first = not hasattr(self, "statistics_")
        if first and classes is not None:
            check_class_labels(np.asarray(classes))
        if is_dask_array(X):
            return self._fit_dask(X, y, classes=classes, first=first)
        if is_dask_array(y):
            y = y.compute()
        check_class_labels(y, single_class_allowed=True)
        with unchanged_on_error(self):
            X, y = validate_input(
                self, X, y, reset=first, accept_sparse=("csr", "csc", "coo"), dtype=np.float64, ensure_all_finite=True
            )
            if first:
                classes_ = np.unique(np.asarray(y if classes is None else classes))
            else:
                classes_ = check_later_classes(classes, self.classes_)
            _, codes = dask_class_codes(y, classes_, single_class_allowed=True)
            if first:
                self.classes_ = classes_
                self.binarize_thresholds_ = feature_thresholds(X, self.binarize)
            tables = self._tables(X, codes)
            self.statistics_ = tables if first else _merge_tables(self.statistics_, tables)
            self._select()
        return self

    def _check_selection_options(self):
        if self.n_features_to_select is not None and self.threshold is not None:
            raise InputValueError("give at most one of n_features_to_select and threshold")

    def _refuse_median(self, what):
        if isinstance(self.binarize, str):
            raise InputValueError(
                f"{what} needs binarize to be a fixed threshold or None, not 'median': the medians of all the data "
                "cannot be computed chunk by chunk and merged (compute them first and binarize, or fit in memory)"
            )

    def _tables(self, X, codes):
        """The contingency tables of validated X (binarized by ``binarize_thresholds_``) with the class codes."""
        names = getattr(self, "feature_names_in_", None)
        if self.binarize is None:
            check_non_negative_features(
                X, type(self).__name__, names, hint="pass binarize=<threshold> or 'median' to score continuous data"
            )
        if self.binarize_thresholds_ is not None:
            X = binarize_features(X, self.binarize_thresholds_)
        X = _check_codes(X.tocsr() if sp.issparse(X) else X, names)
        return _table_counts(X, codes, self.classes_.shape[0])

    def _fit_dask(self, X, y, classes, first):
        """``fit`` or a ``partial_fit`` batch on a dask X: the chunks' tables merged, then the selection."""
        self._refuse_median("fit on a dask array")
        X = check_dask_matrix(X)
        with unchanged_on_error(self):
            if first:
                for name in ("feature_names_in_", "statistics_"):
                    self.__dict__.pop(name, None)
                if X.shape[1] == 0:
                    raise InputValueError("X has 0 features; at least 1 is required")
                given = None if classes is None else np.unique(np.asarray(classes))
                self.classes_, codes = dask_class_codes(y, given, single_class_allowed=given is not None)
                self.n_features_in_ = X.shape[1]
                self.binarize_thresholds_ = feature_thresholds(np.empty((0, X.shape[1])), self.binarize)
            else:
                check_later_classes(classes, self.classes_)
                if X.shape[1] != self.n_features_in_:
                    raise InputValueError(
                        f"X has {X.shape[1]} features, but {type(self).__name__} is expecting {self.n_features_in_} "
                        "features as input."
                    )
                _, codes = dask_class_codes(y, self.classes_, single_class_allowed=True)
            tables = reduce_chunks(
                X, codes, _chunk_tables, merge=_merge_tables, thresholds=self.binarize_thresholds_,
                n_classes=self.classes_.shape[0], non_negative=self.binarize is None,
            )  # fmt: skip
            self.statistics_ = tables if first else _merge_tables(self.statistics_, tables)
            self._select()
        return self

    def _select(self):
        """Scores and selection from the contingency tables ``statistics_``."""
        tables = self.statistics_
        starts = np.concatenate([[0], np.cumsum(tables["n_levels"])[:-1]])
        scores = _scores_from_table(tables["table"], starts, self.estimate, self.prior)
        p = scores.shape[0]
        if self.threshold is not None:
            selection = select_from_scores(scores, threshold=self.threshold, statistic="mutual_information")
            if selection.indices.shape[0] == 0:
                raise InputValueError(
                    f"no feature's mutual information exceeds the threshold {float(self.threshold):g} (the largest "
                    f"is {scores.max(initial=0.0):g} nats); lower threshold or give n_features_to_select"
                )
        else:  # None: every feature, ranked
            k = p if self.n_features_to_select is None else int(self.n_features_to_select)
            selection = select_from_scores(
                scores, n_features_to_select=k, statistic="mutual_information", random_state=self.random_state
            )
        self.scores_ = scores
        self.selection_ = selection
        self.selected_features_ = selection.indices
        self.threshold_ = selection.threshold
        self.n_discarded_ = selection.n_discarded
        self.ranking_ = np.argsort(-self.scores_, kind="stable")
        return self

    def transform(self, X: MatrixLike) -> MatrixLike:
        """The selected columns of X (the original values, not binarized).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features_in_)

        Returns
        -------
        {ndarray, sparse matrix} of shape (n_samples, k)
            The k selected columns of X, with their original values.
        """
        check_is_fitted(self)
        # the mixin's own checks, with their errors as the user's input errors; then the mixin (which keeps a
        # DataFrame when pandas output is configured)
        validate_input(self, X, reset=False, accept_sparse="csr", dtype=None, ensure_all_finite=True)
        return super().transform(X)

    def _get_support_mask(self):
        check_is_fitted(self)
        mask = np.zeros(self.scores_.shape[0], dtype=bool)
        mask[self.selected_features_] = True
        return mask
