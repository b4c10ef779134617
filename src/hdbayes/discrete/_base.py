"""What every generative classifier for discrete data shares (Murphy §3.1, §3.5.3).

A subclass learns class-conditional densities p(x | y = c) and implements one method,
``_joint_log_likelihood(X)``, returning b_c(x) = log p(x | y = c) + log p(y = c) for the
validated X. The predictions (``predict_joint_log_proba``, ``predict_log_proba`` by
log-sum-exp, ``predict_proba``, ``predict``) come from :class:`hdbayes.base.BayesianClassifier`;
:class:`GenerativeClassifier` keeps what is its own: the class prior, the label handling, the
count-based ``fit``/``partial_fit`` of the conjugate models (sequential updating equals
batch updating, Murphy §3.3, so ``partial_fit`` over chunks equals ``fit``) and the rule for
zero probabilities (−inf only where an estimate can be zero).

:func:`log_dirichlet_estimate` is the one formula behind every parameter estimate of the
naive Bayes family: MLE, posterior mode or posterior mean of a Dirichlet (a Beta when
K = 2) from counts and pseudo-counts.
"""

from __future__ import annotations

import copy
from numbers import Real
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.metaestimators import available_if

from hdbayes._validation import (
    cell_location,
    check_class_labels,
    check_finite_output,
    check_later_classes,
    feature_label,
    feature_thresholds,
    first_cell,
    is_dask_array,
    plain_value,
    unchanged_on_error,
    validate_input,
)
from hdbayes.base import BayesianClassifier
from hdbayes.exceptions import InputTypeError, InputValueError
from hdbayes.statistics.chunks import (
    check_dask_matrix,
    check_finite_chunk,
    dask_class_codes,
    predict_row_chunks,
    reduce_chunks,
)

if TYPE_CHECKING:
    from typing import Self

    from numpy.typing import ArrayLike

    from hdbayes._validation import MatrixLike

__all__ = [
    "METHODS",
    "PSEUDO_COUNT",
    "GenerativeClassifier",
    "check_non_negative_features",
    "dirichlet_class_log_prior",
    "feature_thresholds",
    "log_dirichlet_estimate",
    "masked_log_dot",
    "overflow_cause",
    "plain",
]

#: Estimates of the parameters: plug-in MLE, plug-in posterior mode, plug-in posterior
#: mean, and the exact posterior predictive (Bayesian model averaging, Murphy §3.5, §3.5.5).
METHODS = ("mle", "map", "posterior_mean", "bayes")


def _segment_sums(values, starts):
    """Sums over the segments [starts[s], starts[s+1]) of the last axis, repeated over each segment."""
    if starts is None:
        return np.sum(values, axis=-1, keepdims=True)
    sizes = np.diff(np.append(starts, values.shape[-1]))
    return np.repeat(np.add.reduceat(values, starts, axis=-1), sizes, axis=-1)


def log_dirichlet_estimate(counts, prior, method, *, starts=None):
    """log of the estimate of θ ~ Dir(prior) from category counts (Murphy §3.3–3.5).

    The components of each Dirichlet run along the last axis (optionally several
    Dirichlets concatenated along it, starting at ``starts``):

    * ``"mle"``: N_k / N (0/0 = NaN, for a class without cases);
    * ``"map"``: the posterior mode (N_k + β_k − 1)/(N + β_0 − K) when every
      N_k + β_k ≥ 1 and N + β_0 > K; for K = 2 also the boundary modes of a Beta
      (0 when a < 1 ≤ b, 1 when b < 1 ≤ a: the boundary rule of docs/discrete.md); otherwise ValueError;
    * ``"posterior_mean"`` and ``"bayes"``: (N_k + β_k)/(N + β_0), which is also the
      one-trial posterior predictive.

    Parameters
    ----------
    counts : ndarray of shape (..., L)
    prior : array-like broadcastable to counts
        Pseudo-counts β ≥ 0.
    method : {"mle", "map", "posterior_mean", "bayes"}
    starts : ndarray of int, optional
        First index of every Dirichlet along the last axis (default: one Dirichlet).

    Returns
    -------
    ndarray of shape (..., L)
        The log estimates (−inf for a zero estimate).

    Examples
    --------
    >>> np.exp(log_dirichlet_estimate(np.array([3.0, 0.0, 1.0]), 2.0, "map"))   # Dir(2, 2, 2) and counts (3, 0, 1)
    array([0.57142857, 0.14285714, 0.28571429])
    """
    counts = np.asarray(counts, dtype=np.float64)
    posterior = counts + np.asarray(prior, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        if method == "mle":
            return np.log(counts) - np.log(_segment_sums(counts, starts))
        if method in ("posterior_mean", "bayes"):
            return np.log(posterior) - np.log(_segment_sums(posterior, starts))
    if method != "map":
        raise InputValueError(f"method must be one of {', '.join(map(repr, METHODS))}, got {method!r}")
    ones = np.ones(counts.shape[-1])
    K = _segment_sums(ones, starts)
    below_one = _segment_sums((posterior < 1).astype(np.float64), starts)
    denominator = _segment_sums(posterior, starts) - K
    interior = (below_one == 0) & (denominator > 0)
    boundary = (K == 2) & (below_one == 1)  # Beta(a, b) with exactly one of a, b below 1
    bad = ~(interior | boundary)
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        raise InputValueError(
            f"method='map': the posterior Dirichlet/Beta at index {index} (class first) has no unique mode "
            "(every posterior pseudo-count must be >= 1 with total > K); use method='posterior_mean' or larger priors"
        )
    with np.errstate(divide="ignore", invalid="ignore"):
        estimate = np.where(interior, (posterior - 1) / np.where(interior, denominator, 1.0), 0.0)
        estimate = np.where(boundary, (posterior >= 1).astype(np.float64), estimate)
        return np.log(estimate)


def plain(value):
    """A value as the user wrote it (``2.0``, ``'a'``), not its numpy repr (``np.float64(2.0)``)."""
    if isinstance(value, np.generic):
        value = value.item()
    return f"{value:g}" if isinstance(value, float) else plain_value(value)


def _plain_list(values):
    return "[" + ", ".join(plain(v) for v in values) + "]"


def overflow_cause(X, feature_names=None):
    """Name the largest value of X (dense or sparse) and its feature: the likely cause of an overflow
    (None when X is not at hand, e.g. chunked)."""
    if X is None or is_dask_array(X):
        return None
    if sp.issparse(X):
        X = X.tocsr()
    values = X.data if sp.issparse(X) else np.asarray(X)
    if values.size == 0:
        return None
    k = int(np.argmax(np.abs(values)))
    if sp.issparse(X):
        j = int(X.indices[k])
    else:
        j = int(np.unravel_index(k, values.shape)[1]) if values.ndim == 2 else k
    value = float(values.flat[k])
    return f"the value {value:g} of {feature_label(j, feature_names)} is too large for double-precision arithmetic"


def check_non_negative_features(X, whom, feature_names=None, hint="the model needs values >= 0"):
    """Refuse negative values, naming the first one's feature (scikit-learn's wording first)."""
    values = X.data if sp.issparse(X) else X
    if values.size and values.min() < 0:
        if sp.issparse(X):
            X = X.tocsr()
        i, j, value = first_cell(X, (X.data if sp.issparse(X) else X) < 0)
        raise InputValueError(
            f"Negative values in data passed to {whom}: {feature_label(j, feature_names)} has the value {value:g}; "
            f"{hint}",
            location=cell_location(i, j, feature_names=feature_names),
        )


def masked_log_dot(X, log_theta, *, feature_names=None):
    """X @ log_thetaᵀ with 0 · log 0 = 0: shape (n, C).

    Entries of ``log_theta`` that are −inf (a zero estimate) make the whole row −inf only
    where X is non-zero; NaN rows of ``log_theta`` (a class without data under the MLE)
    give −inf columns. Sparse X is never densified. A product that overflows (a count
    too large for double precision) raises :class:`InputValueError` naming the value.
    """
    nan_classes = np.isnan(log_theta).any(axis=1)
    finite = np.isfinite(log_theta)
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.asarray(X @ (log_theta if finite.all() else np.where(finite, log_theta, 0.0)).T)
    if not np.isfinite(out).all():
        raise InputValueError(f"the joint log-likelihood is not finite; {overflow_cause(X, feature_names)}")
    if finite.all():
        return out
    impossible = np.asarray(X @ np.isneginf(log_theta).T.astype(np.float64)) > 0
    out[impossible] = -np.inf
    out[:, nan_classes] = -np.inf
    return out


def _check_prior_array(name, value, shape):
    """Pseudo-counts ≥ 0 (a scalar or an array broadcastable to ``shape``)."""
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputTypeError(f"{name} must be a number or an array of numbers, got {type(value).__name__}") from exc
    if not np.all(np.isfinite(array)) or np.any(array < 0):
        raise InputValueError(f"{name} must hold finite pseudo-counts >= 0")
    try:
        return np.broadcast_to(array, shape)
    except ValueError as exc:
        raise InputValueError(f"{name} of shape {array.shape} does not broadcast to {shape}") from exc


def _widen(flat, widths, new_widths):
    """Counts (C, Σ widths) of features with ``widths`` categories placed into (C, Σ new_widths),
    new_widths ≥ widths (the new categories count 0)."""
    widths, new_widths = np.asarray(widths, dtype=np.int64), np.asarray(new_widths, dtype=np.int64)
    if np.array_equal(widths, new_widths):
        return flat
    old_offsets = np.concatenate([[0], np.cumsum(widths)])
    new_offsets = np.concatenate([[0], np.cumsum(new_widths)])
    feature = np.repeat(np.arange(widths.shape[0]), widths)
    out = np.zeros((flat.shape[0], int(new_offsets[-1])))
    out[:, new_offsets[feature] + np.arange(old_offsets[-1]) - old_offsets[feature]] = flat
    return out


def add_category_counts(flat_a, widths_a, flat_b, widths_b):
    """The sum of two per-class category tables (C, Σ widths) whose features may have seen different numbers
    of categories: both widened to the larger widths (:func:`_widen`) and added. Returns (table, widths)."""
    widths = np.maximum(widths_a, widths_b)
    return _widen(flat_a, widths_a, widths) + _widen(flat_b, widths_b, widths), widths


def _chunk_counts(x, codes, *, where, columns, model):
    """The count statistics of one row chunk (all columns) of a dask X and its class codes: the
    model's ``_counts_of`` and the class sizes ("class_count")."""
    x = model._validate_chunk(x)
    codes = np.asarray(codes)
    n, C = x.shape[0], model.classes_.shape[0]
    Y = sp.csr_matrix((np.ones(n), (np.arange(n), codes)), shape=(n, C))
    counts = model._counts_of(x, Y)
    counts["class_count"] = np.bincount(codes, minlength=C).astype(np.float64)
    return counts


def dirichlet_class_log_prior(class_count, class_pseudo_count, method, class_prior=None):
    """log π_c (Murphy §3.5): learnt from the class counts with a Dir(``class_pseudo_count``) prior by ``method``
    (:func:`log_dirichlet_estimate`), or the user's ``class_prior`` ("uniform" or probabilities).

    The bias-corrected models' :func:`hdbayes.selection_bias._base.class_log_prior` is the posterior mean alone,
    computed as log((f + N)/(Σ f + n)) rather than log(f + N) − log(Σ f + n): the same number up to rounding.

    Parameters
    ----------
    class_count : ndarray of shape (C,)
        The training cases of each class.
    class_pseudo_count : float or array-like of shape (C,)
        Pseudo-counts ≥ 0.
    method : {"mle", "map", "posterior_mean", "bayes"}
    class_prior : None, "uniform" or array-like of shape (C,), optional
        Fixed class probabilities, replacing the learnt ones.

    Returns
    -------
    ndarray of shape (C,)
    """
    C = class_count.shape[0]
    if class_prior is None:
        pseudo_count = _check_prior_array("class_pseudo_count", class_pseudo_count, (C,))
        return log_dirichlet_estimate(class_count, pseudo_count, method)
    if isinstance(class_prior, str):  # "uniform" (the parameter constraints refuse other strings)
        return np.full(C, -np.log(C))
    try:
        prior = np.asarray(class_prior, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputTypeError("class_prior must be None, 'uniform' or an array of probabilities") from exc
    if prior.shape != (C,):
        raise InputValueError(f"class_prior must have one probability per class ({C}), got shape {prior.shape}")
    if not np.all(np.isfinite(prior)) or np.any(prior < 0) or not np.isclose(prior.sum(), 1.0, rtol=0, atol=1e-8):
        raise InputValueError("class_prior must hold probabilities >= 0 summing to 1")
    with np.errstate(divide="ignore"):
        return np.log(prior)


#: a pseudo-count: a number >= 0 (symmetric) or an array of them (checked and broadcast at fit)
PSEUDO_COUNT = [Interval(Real, 0, None, closed="left"), "array-like"]


class GenerativeClassifier(BayesianClassifier):
    """Base class: count-based ``fit``/``partial_fit``, the class prior and the zero-probability rule.

    Subclasses provide ``_reset_counts(n_features)``, ``_count(X, Y)`` (add the sufficient
    statistics of X with class indicator matrix Y), ``_update_parameters()`` and
    ``_joint_log_likelihood(X)``, and may override ``_prepare_X(X, reset)`` (model-specific
    checks and conversion; ``reset`` is True on the call that starts a fit) and
    ``_check_fitted_finite(X)``. Predictions come from
    :class:`hdbayes.base.BayesianClassifier` (ties to the first class in ``classes_``).

    Parameters are checked by scikit-learn's ``_parameter_constraints``; every other input
    check raises :class:`~hdbayes.exceptions.InputValueError` or
    :class:`~hdbayes.exceptions.InputTypeError`; a training set with a single class is
    refused before anything is fitted; joint log-likelihoods are checked finite (−inf is
    allowed only for a class of prior probability zero, and where an estimate can be zero:
    the plug-in methods "mle" and "map", or zero pseudo-counts).
    """

    _parameter_constraints: dict = {
        "method": [StrOptions(set(METHODS))],
        "class_pseudo_count": PSEUDO_COUNT,
        "class_prior": [None, StrOptions({"uniform"}), "array-like"],
    }

    #: whether ``partial_fit`` exists (count-based conjugate updates)
    _incremental = True
    #: whether X must be ≥ 0 (counts, codes); not for features binarized at a threshold
    _non_negative = True

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.positive_only = self._non_negative
        # like scikit-learn's discrete naive Bayes: the check data (Gaussian blobs) do not follow the model
        tags.classifier_tags.poor_score = True
        return tags

    # -- input -----------------------------------------------------------------------------
    def _prepare_X(self, X, reset):
        """Model-specific checks and conversion of validated X (hook)."""
        return X

    def _feature_names(self):
        return getattr(self, "feature_names_in_", None)

    def _validate_X(self, X, *, reset, y="no_validation"):
        kwargs = {"accept_sparse": ("csr", "csc", "coo"), "dtype": np.float64, "ensure_all_finite": True}
        fitting = not (isinstance(y, str) and y == "no_validation")
        if fitting:
            X, y = validate_input(self, X, y, reset=reset, **kwargs)
        else:
            X = validate_input(self, X, reset=reset, **kwargs)
        if sp.issparse(X):
            X = X.tocsr()
        if self._non_negative:
            check_non_negative_features(X, type(self).__name__, self._feature_names())
        X = self._prepare_X(X, reset=reset)
        return (X, y) if fitting else X

    def _validate_for_prediction(self, X):
        return self._validate_X(X, reset=False)

    # -- fitting ---------------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: MatrixLike, y: ArrayLike) -> Self:
        """Fit the model to X (n_samples, n_features) and labels y (any hashable values).

        Raises :class:`~hdbayes.exceptions.InputValueError` for a single class, a
        continuous target and bad X, before anything is fitted.

        X may be a ``dask.array`` (dense or ``scipy.sparse`` chunks, any chunking) and y a numpy
        or dask array: the count statistics of every row chunk are computed where it lives,
        tree-reduced (:func:`hdbayes.statistics.reduce_chunks`) and the parameters updated once,
        so X is never gathered; the result equals the in-memory fit (counts of 0/1 and integer
        data exactly). A bad chunk (NaN, a negative count, a value that is not 0/1 for
        ``binarize=None``) is an input error naming the chunk and the feature.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
            The features.
        y : array-like or dask array of shape (n_samples,)
            Class labels.

        Returns
        -------
        self
            The fitted estimator.
        """
        if is_dask_array(X):
            return self._fit_dask(X, y, classes=None, first=True)
        if is_dask_array(y):
            y = y.compute()  # n labels; X is in memory anyway
        check_class_labels(y)
        for name in ("classes_", "class_count_", "n_features_in_", "feature_names_in_"):
            if hasattr(self, name):
                delattr(self, name)
        return self._partial_fit(X, y, classes=None, first=True)

    @available_if(lambda self: self._incremental)
    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X: MatrixLike, y: ArrayLike, classes: ArrayLike | None = None) -> Self:
        """Add a batch of training cases; the result equals ``fit`` on all batches (Murphy §3.3).

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
            A batch; a dask array is counted chunk by chunk as in ``fit``.
        y : array-like or dask array of shape (n_samples,)
            The batch's class labels, each one of ``classes``.
        classes : array-like, optional
            All class labels (at least two); required on the first call.

        Returns
        -------
        self
            The estimator, updated with the batch.
        """
        first = not hasattr(self, "classes_")
        if first and classes is None:
            raise InputValueError("classes must be passed on the first call to partial_fit")
        if first:
            check_class_labels(np.asarray(classes))
        if is_dask_array(X):
            return self._fit_dask(X, y, classes=classes, first=first)
        if is_dask_array(y):
            y = y.compute()
        check_class_labels(y, single_class_allowed=True)
        return self._partial_fit(X, y, classes=classes, first=first)

    def _partial_fit(self, X, y, classes, first):
        X, y = self._validate_X(X, reset=first, y=y)
        if first:
            classes_ = np.unique(y if classes is None else np.asarray(classes))
        else:
            classes_ = check_later_classes(classes, self.classes_)
        codes = np.clip(np.searchsorted(classes_, y), 0, classes_.shape[0] - 1)
        unknown = classes_[codes] != y
        if unknown.any():
            raise InputValueError(
                f"y contains the label {plain(y[unknown][0])}, which is not in classes {_plain_list(classes_)}"
            )
        with unchanged_on_error(self):  # a model that cannot be fitted leaves no counts behind
            if first:
                self.classes_ = classes_
                self.class_count_ = np.zeros(classes_.shape[0])
                self._reset_counts(X.shape[1])
            n = X.shape[0]
            Y = sp.csr_matrix((np.ones(n), (np.arange(n), codes)), shape=(n, self.classes_.shape[0]))
            self.class_count_ = self.class_count_ + np.bincount(codes, minlength=self.classes_.shape[0])
            self._count(X, Y)
            self._update_parameters()
            self._check_fitted_finite(X)
        return self

    # -- chunked data (dask) ---------------------------------------------------------------------
    def _count(self, X, Y):
        """Add the statistics of checked X with class indicator matrix Y."""
        self._add_counts(self._counts_of(X, Y))

    def _counts_of(self, X, Y):  # pragma: no cover - abstract
        """The count statistics of checked X (a dict of arrays; hook)."""
        raise NotImplementedError

    def _add_counts(self, counts):  # pragma: no cover - abstract
        """Add count statistics (from :meth:`_counts_of` or merged) to the fitted counts (hook)."""
        raise NotImplementedError

    @staticmethod
    def _merge_counts(a, b):
        """The count statistics of two disjoint batches merged (by default: added entry by entry)."""
        return {name: a[name] + b[name] for name in a}

    def _start_chunked_fit(self):
        """Set what the chunks are checked with before counting a dask X (hook; e.g. thresholds)."""

    def _validate_chunk(self, x):
        """The in-memory checks of one chunk of a dask X (numbers, finite, ≥ 0 where counts are
        needed, then ``_prepare_X``); the caller names the chunk in the message."""
        x = check_finite_chunk(x)
        if self._non_negative:
            check_non_negative_features(x, type(self).__name__)
        return self._prepare_X(x, reset=False)

    def _fit_dask(self, X, y, classes, first):
        """``fit`` (or a ``partial_fit`` batch) on a dask X: the chunks counted on the workers, the
        merged counts added on the client and the parameters updated once."""
        X = check_dask_matrix(X)
        p = X.shape[1]
        with unchanged_on_error(self):
            if first:
                for name in ("classes_", "class_count_", "n_features_in_", "feature_names_in_"):
                    self.__dict__.pop(name, None)
                if p == 0:
                    raise InputValueError("X has 0 features; at least 1 is required")
                given = None if classes is None else np.unique(np.asarray(classes))
                self.classes_, codes = dask_class_codes(y, given, single_class_allowed=given is not None)
                self.n_features_in_ = p
                self._start_chunked_fit()
            else:
                check_later_classes(classes, self.classes_)
                if p != self.n_features_in_:
                    raise InputValueError(
                        f"X has {p} features, but {type(self).__name__} is expecting {self.n_features_in_} features "
                        "as input."
                    )
                _, codes = dask_class_codes(y, self.classes_, single_class_allowed=True)
            model = copy.copy(self)  # what the chunks need, small enough to ship with the tasks
            keep = set(self.get_params()) | {"classes_", "n_features_in_", "binarize_thresholds_"}
            model.__dict__ = {name: value for name, value in self.__dict__.items() if name in keep}
            counts = reduce_chunks(X, codes, _chunk_counts, merge=type(self)._merge_counts, model=model)
            if first:
                self.class_count_ = np.zeros(self.classes_.shape[0])
                self._reset_counts(p)
            self.class_count_ = self.class_count_ + counts.pop("class_count")
            self._add_counts(counts)
            self._update_parameters()
            self._check_fitted_finite(None)
        return self

    def _check_fitted_finite(self, X):
        """Raise if a fitted statistic overflowed (hook; the default checks ``feature_count_``)."""
        counts = getattr(self, "feature_count_", None)
        if counts is not None:
            with np.errstate(over="ignore"):
                total = counts.sum(axis=1)
            if not np.isfinite(total).all():
                check_finite_output("the feature counts", total, cause=overflow_cause(X, self._feature_names()))

    def _class_log_prior(self, method):
        """log π_c of the fitted class counts by ``method`` (see :func:`dirichlet_class_log_prior`)."""
        return dirichlet_class_log_prior(self.class_count_, self.class_pseudo_count, method, self.class_prior)

    # -- prediction on dask arrays (BayesianClassifier's prediction methods come here for them) ----

    def _predict_dask(self, X, method, **kwargs):
        """``method`` on every row chunk of a dask X (re-chunked to all columns), as a dask array."""
        return predict_row_chunks(self, X, method, **kwargs)

    def _zero_probability_possible(self):
        """Whether an estimate can be 0, so that −inf is a legitimate joint log-likelihood: the plug-in
        methods "mle" and "map", or a zero estimate from zero pseudo-counts (e.g. ``alpha=0``)."""
        if getattr(self, "method", None) in ("mle", "map"):
            return True
        for name in ("feature_log_prob_", "feature_log_neg_prob_", "_flat_log_prob"):
            value = getattr(self, name, None)
            if isinstance(value, np.ndarray) and np.isneginf(value).any():
                return True
        return False

    def _overflow_entries(self, jll):
        """−inf (probability zero) is legitimate only for a class of prior probability zero, or where an
        estimate can be zero; anywhere else it is overflow."""
        if self._zero_probability_possible():
            return np.zeros(jll.shape, dtype=bool)
        return np.isneginf(jll) & np.isfinite(self.class_log_prior_)

    def _overflow_message(self, X):
        return overflow_cause(X, self._feature_names())
