"""What every generative classifier for discrete data shares (spec §1.1, §1.6, §4.5, §4.8).

A subclass learns class-conditional densities p(x | y = c) and implements one method,
``_joint_log_likelihood(X)``, returning b_c(x) = log p(x | y = c) + log p(y = c) for the
validated X. :class:`GenerativeClassifier` turns it into ``predict_joint_log_proba``,
``predict_log_proba`` (b_c − log Σ_c' exp b_c', by :func:`scipy.special.logsumexp`),
``predict_proba`` and ``predict``, and keeps the class prior, the label handling and the
count-based ``fit``/``partial_fit`` of the conjugate models (sequential updating equals
batch updating, spec §1.3, so ``partial_fit`` over chunks equals ``fit``).

:func:`log_dirichlet_estimate` is the one formula behind every parameter estimate of the
naive Bayes family: MLE, posterior mode or posterior mean of a Dirichlet (a Beta when
K = 2) from counts and pseudo-counts.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, check_non_negative, validate_data

__all__ = ["METHODS", "GenerativeClassifier", "log_dirichlet_estimate", "masked_log_dot"]

#: Estimates of the parameters: plug-in MLE, plug-in posterior mode, plug-in posterior
#: mean, and the exact posterior predictive (Bayesian model averaging, spec §1.5, §1.8).
METHODS = ("mle", "map", "posterior_mean", "bayes")


def _segment_sums(values, starts):
    """Sums over the segments [starts[s], starts[s+1]) of the last axis, repeated over each segment."""
    if starts is None:
        return np.sum(values, axis=-1, keepdims=True)
    sizes = np.diff(np.append(starts, values.shape[-1]))
    return np.repeat(np.add.reduceat(values, starts, axis=-1), sizes, axis=-1)


def log_dirichlet_estimate(counts, prior, method, *, starts=None):
    """log of the estimate of θ ~ Dir(prior) from category counts (spec §1.3–1.5).

    The components of each Dirichlet run along the last axis (optionally several
    Dirichlets concatenated along it, starting at ``starts``):

    * ``"mle"``: N_k / N (0/0 = NaN, for a class without cases);
    * ``"map"``: the posterior mode (N_k + β_k − 1)/(N + β_0 − K) when every
      N_k + β_k ≥ 1 and N + β_0 > K; for K = 2 also the boundary modes of a Beta
      (0 when a < 1 ≤ b, 1 when b < 1 ≤ a, spec §4.8); otherwise ValueError;
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
    >>> np.exp(log_dirichlet_estimate(np.array([3.0, 0.0, 1.0]), 2.0, "map"))   # spec T3
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
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    ones = np.ones(counts.shape[-1])
    K = _segment_sums(ones, starts)
    below_one = _segment_sums((posterior < 1).astype(np.float64), starts)
    denominator = _segment_sums(posterior, starts) - K
    interior = (below_one == 0) & (denominator > 0)
    boundary = (K == 2) & (below_one == 1)  # Beta(a, b) with exactly one of a, b below 1
    bad = ~(interior | boundary)
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"method='map': the posterior Dirichlet/Beta at index {index} (class first) has no unique mode "
            "(every posterior pseudo-count must be >= 1 with total > K); use method='posterior_mean' or larger priors"
        )
    with np.errstate(divide="ignore", invalid="ignore"):
        estimate = np.where(interior, (posterior - 1) / np.where(interior, denominator, 1.0), 0.0)
        estimate = np.where(boundary, (posterior >= 1).astype(np.float64), estimate)
        return np.log(estimate)


def masked_log_dot(X, log_theta):
    """X @ log_thetaᵀ with 0 · log 0 = 0 (spec §4.5 edge rules): shape (n, C).

    Entries of ``log_theta`` that are −inf (a zero estimate) make the whole row −inf only
    where X is non-zero; NaN rows of ``log_theta`` (a class without data under the MLE)
    give −inf columns. Sparse X is never densified.
    """
    nan_classes = np.isnan(log_theta).any(axis=1)
    finite = np.isfinite(log_theta)
    if finite.all():
        return np.asarray(X @ log_theta.T)
    out = np.asarray(X @ np.where(finite, log_theta, 0.0).T)
    impossible = np.asarray(X @ np.isneginf(log_theta).T.astype(np.float64)) > 0
    out[impossible] = -np.inf
    out[:, nan_classes] = -np.inf
    return out


def _check_prior_array(name, value, shape):
    """Pseudo-counts ≥ 0 (a scalar or an array broadcastable to ``shape``)."""
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a number or an array of numbers, got {value!r}") from exc
    if not np.all(np.isfinite(array)) or np.any(array < 0):
        raise ValueError(f"{name} must hold finite pseudo-counts >= 0, got {value!r}")
    try:
        return np.broadcast_to(array, shape)
    except ValueError as exc:
        raise ValueError(f"{name} of shape {array.shape} does not broadcast to {shape}") from exc


class GenerativeClassifier(ClassifierMixin, BaseEstimator):
    """Base class: prediction from ``_joint_log_likelihood``; count-based ``fit``/``partial_fit``.

    Subclasses provide ``_reset_counts(n_features)``, ``_count(X, Y)`` (add the sufficient
    statistics of X with class indicator matrix Y), ``_update_parameters()`` and
    ``_joint_log_likelihood(X)``, and may override ``_prepare_X(X, fitting)``.
    """

    #: whether ``partial_fit`` exists (count-based conjugate updates)
    _incremental = True

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.positive_only = True
        # like scikit-learn's discrete naive Bayes: the check data (Gaussian blobs) do not follow the model
        tags.classifier_tags.poor_score = True
        return tags

    # -- input -----------------------------------------------------------------------------
    def _check_method(self):
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {self.method!r}")

    def _prepare_X(self, X, fitting):
        """Model-specific checks and conversion of validated X (hook)."""
        return X

    def _validate_X(self, X, *, reset, y="no_validation"):
        kwargs = {"accept_sparse": ("csr", "csc"), "dtype": np.float64, "ensure_all_finite": True}
        fitting = not (isinstance(y, str) and y == "no_validation")
        if fitting:
            X, y = validate_data(self, X, y, reset=reset, **kwargs)
        else:
            X = validate_data(self, X, reset=reset, **kwargs)
        check_non_negative(X, type(self).__name__)
        if sp.issparse(X):
            X = X.tocsr()
        X = self._prepare_X(X, fitting=fitting)
        return (X, y) if fitting else X

    # -- fitting ---------------------------------------------------------------------------
    def fit(self, X, y):
        """Fit the model to counts X (n_samples, n_features) and labels y (any hashable values).

        Returns
        -------
        self
        """
        for name in ("classes_", "class_count_"):
            if hasattr(self, name):
                delattr(self, name)
        if hasattr(self, "n_features_in_"):
            del self.n_features_in_
        return self._partial_fit(X, y, classes=None, first=True)

    @available_if(lambda self: self._incremental)
    def partial_fit(self, X, y, classes=None):
        """Add a batch of training cases; the result equals ``fit`` on all batches (spec §1.3).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        classes : array-like, optional
            All class labels; required on the first call.

        Returns
        -------
        self
        """
        first = not hasattr(self, "classes_")
        if first and classes is None:
            raise ValueError("classes must be passed on the first call to partial_fit")
        return self._partial_fit(X, y, classes=classes, first=first)

    def _partial_fit(self, X, y, classes, first):
        self._check_params()
        X, y = self._validate_X(X, reset=first, y=y)
        check_classification_targets(y)
        if first:
            self.classes_ = np.unique(y if classes is None else np.asarray(classes))
            self.class_count_ = np.zeros(self.classes_.shape[0])
            self._reset_counts(X.shape[1])
        elif classes is not None and not np.array_equal(np.unique(classes), self.classes_):
            raise ValueError(f"classes={classes!r} differs from the classes of the first call {self.classes_!r}")
        codes = np.searchsorted(self.classes_, y)
        codes = np.clip(codes, 0, self.classes_.shape[0] - 1)
        unknown = self.classes_[codes] != y
        if unknown.any():
            raise ValueError(f"y contains the label {y[unknown][0]!r}, which is not in classes {self.classes_!r}")
        n = X.shape[0]
        Y = sp.csr_matrix((np.ones(n), (np.arange(n), codes)), shape=(n, self.classes_.shape[0]))
        self.class_count_ = self.class_count_ + np.bincount(codes, minlength=self.classes_.shape[0])
        self._count(X, Y)
        self._update_parameters()
        return self

    def _class_log_prior(self, method):
        """log π_c (spec §1.5): learnt from the class counts with a Dir(alpha) prior by
        ``method``, or the user's ``class_prior`` ("uniform" or probabilities)."""
        C = self.classes_.shape[0]
        if self.class_prior is None:
            alpha = _check_prior_array("alpha", self.alpha, (C,))
            return log_dirichlet_estimate(self.class_count_, alpha, method)
        if isinstance(self.class_prior, str):
            if self.class_prior != "uniform":
                raise ValueError(f"class_prior must be None, 'uniform' or probabilities, got {self.class_prior!r}")
            return np.full(C, -np.log(C))
        prior = np.asarray(self.class_prior, dtype=np.float64)
        if prior.shape != (C,):
            raise ValueError(f"class_prior must have one probability per class ({C}), got shape {prior.shape}")
        if np.any(prior < 0) or not np.isclose(prior.sum(), 1.0, rtol=0, atol=1e-8):
            raise ValueError("class_prior must hold probabilities >= 0 summing to 1")
        with np.errstate(divide="ignore"):
            return np.log(prior)

    # -- prediction ---------------------------------------------------------------------------
    def _joint_log_likelihood(self, X):  # pragma: no cover - abstract
        raise NotImplementedError

    def predict_joint_log_proba(self, X):
        """b_c(x) = log p(x | y = c, D) + log p(y = c | D) for every class, shape (n_samples, n_classes)."""
        check_is_fitted(self)
        return self._joint_log_likelihood(self._validate_X(X, reset=False))

    def predict_log_proba(self, X):
        """log p(y = c | x, D) = b_c − log Σ_c' exp b_c' (spec §1.6), shape (n_samples, n_classes).

        A row whose every class has probability zero (possible only with ``method="mle"``
        or ``"map"``: the zero-count problem) is NaN, with a RuntimeWarning.
        """
        jll = self.predict_joint_log_proba(X)
        with np.errstate(invalid="ignore"):
            log_norm = logsumexp(jll, axis=1, keepdims=True)
        impossible = np.isneginf(log_norm[:, 0])
        if impossible.any():
            warnings.warn(
                f"{int(impossible.sum())} case(s) have probability zero under every class (the zero-count problem "
                f"of method={getattr(self, 'method', None)!r}); their probabilities are NaN",
                RuntimeWarning,
                stacklevel=2,
            )
            log_norm[impossible] = np.nan
        return jll - log_norm

    def predict_proba(self, X):
        """p(y = c | x, D), rows summing to one, shape (n_samples, n_classes)."""
        return np.exp(self.predict_log_proba(X))

    def predict(self, X):
        """The most probable class (ties go to the first class in ``classes_``)."""
        jll = self.predict_joint_log_proba(X)
        return self.classes_[np.argmax(jll, axis=1)]
