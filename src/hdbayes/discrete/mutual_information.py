"""Feature selection by mutual information with the class (spec §1.7; seed 004 §3.5.4).

For a discrete feature X_j and the class Y,

    I(X_j; Y) = Σ_{x_j} Σ_y p(x_j, y) log[ p(x_j, y) / (p(x_j) p(y)) ]     (nats),

and for a binary feature this is the seed's formula

    I_j = Σ_c [ θ_jc π_c log(θ_jc/θ_j) + (1 − θ_jc) π_c log((1 − θ_jc)/(1 − θ_j)) ],
    θ_j = Σ_c π_c θ_jc,

with 0 · log 0 = 0. The filter keeps the K features of largest I_j. As the spec's
caveat says, naive Bayes on the retained features without a correction is over-confident:
the selection is recorded as a :class:`hdbayes.selection.Selection` (threshold γ, p, k)
so that the bias-corrected models can condition on it.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.special import xlogy
from sklearn.base import BaseEstimator, _fit_context
from sklearn.feature_selection import SelectorMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from hdbayes._validation import binarize_features, check_class_labels, check_positive, feature_label, validate_input
from hdbayes.discrete._base import check_non_negative_features, feature_thresholds
from hdbayes.discrete.conjugate import _MAX_CODE, check_count_matrix
from hdbayes.exceptions import InputValueError
from hdbayes.selection import select_from_scores

__all__ = ["MutualInformationSelector", "mutual_information_binary", "mutual_information_discrete"]


def mutual_information_binary(class_prior, theta):
    """The seed's mutual information of binary features with the class (spec §1.7).

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
    >>> round(float(mutual_information_binary([0.5, 0.5], [[0.9], [0.1]])[0]), 12)   # spec T7: log 2 − H(0.9)
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
    n_categories = np.ones(D, dtype=np.int64)
    np.maximum.at(n_categories, columns, values + 1)
    starts = np.concatenate([[0], np.cumsum(n_categories)[:-1]])
    total = int(n_categories.sum())
    flat = codes[rows] * total + starts[columns] + values
    table = np.bincount(flat, minlength=n_classes * total).reshape(n_classes, total).astype(np.float64)
    class_sizes = np.bincount(codes, minlength=n_classes).astype(np.float64)
    table[:, starts] = class_sizes[:, None] - np.add.reduceat(table, starts, axis=1)
    return table, starts


def mutual_information_discrete(X, y, *, estimate="mle", prior=1.0, feature_names=None):
    """I(X_j; Y) of every integer-coded feature from its contingency table with y (spec §1.7, §4.7).

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Non-negative integer codes (0/1 features, counts or categories).
    y : array-like of shape (n_samples,)
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
    >>> X = np.array([[1, 0], [1, 1], [0, 0], [0, 1], [0, 1]])   # spec T6
    >>> np.round(mutual_information_discrete(X, [0, 0, 0, 1, 1]), 8).tolist()   # log 5 − (6/5) log 3
    [0.29110317, 0.29110317]
    """
    if estimate not in ("mle", "posterior_mean"):
        raise InputValueError(f"estimate must be 'mle' or 'posterior_mean', got {estimate!r}")
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
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise InputValueError(f"y must be 1-D with {X.shape[0]} entries (one per row of X), got shape {y.shape}")
    _, codes = np.unique(y, return_inverse=True)
    n_classes = int(codes.max()) + 1
    table, starts = _contingency_tables(X, codes, n_classes)
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


class MutualInformationSelector(SelectorMixin, BaseEstimator):
    """Keep the discrete features with the largest mutual information with the class (spec §1.7).

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
    prior : float, default=1.0
    random_state : int, RandomState, Generator or None

    Attributes
    ----------
    scores_ : ndarray of shape (n_features_in_,)
        I(X_j; Y) in nats.
    ranking_ : ndarray of shape (n_features_in_,)
        Feature indices by decreasing score (stable: ties by column index).
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
        self, n_features_to_select=None, *, threshold=None, binarize=None, estimate="mle", prior=1.0, random_state=None
    ):
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
    def fit(self, X, y):
        """Score every feature on (X, y) and select.

        Raises :class:`~hdbayes.exceptions.InputValueError` for bad X (negative or, without
        ``binarize``, non-integer values), a target with one class or continuous values,
        both ``n_features_to_select`` and ``threshold``, ``n_features_to_select`` larger than
        the number of features, and a ``threshold`` that no feature exceeds — before
        anything is fitted.

        Returns
        -------
        self
        """
        if self.n_features_to_select is not None and self.threshold is not None:
            raise InputValueError("give at most one of n_features_to_select and threshold")
        check_class_labels(y)
        X, y = validate_input(
            self, X, y, reset=True, accept_sparse=("csr", "csc", "coo"), dtype=np.float64, ensure_all_finite=True
        )
        names = getattr(self, "feature_names_in_", None)
        if self.binarize is None:
            check_non_negative_features(
                X, type(self).__name__, names, hint="pass binarize=<threshold> or 'median' to score continuous data"
            )
        thresholds = feature_thresholds(X, self.binarize)
        if thresholds is not None:
            X = binarize_features(X, thresholds)
        scores = self._scores(X, y)
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
        self.binarize_thresholds_ = thresholds
        self.scores_ = scores
        self.selection_ = selection
        self.selected_features_ = selection.indices
        self.threshold_ = selection.threshold
        self.n_discarded_ = selection.n_discarded
        self.ranking_ = np.argsort(-self.scores_, kind="stable")
        return self

    def _scores(self, X, y):
        """I(X_j; Y) of every column of the validated (and binarized) X."""
        X = X.tocsr() if sp.issparse(X) else X
        return mutual_information_discrete(
            X, y, estimate=self.estimate, prior=self.prior, feature_names=getattr(self, "feature_names_in_", None)
        )

    def transform(self, X):
        """The selected columns of X (the original values, not binarized).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features_in_)

        Returns
        -------
        {ndarray, sparse matrix} of shape (n_samples, k)
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
