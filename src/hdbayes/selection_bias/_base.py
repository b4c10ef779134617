"""Shared logic of the bias-corrected classifiers: selection inside ``fit``.

Every model derives from :class:`hdbayes.base.BayesianClassifier`: a subclass implements
``_joint_log_likelihood(X)`` on validated X, returning log P(y* = c, x* | training data)
up to a constant per row, and the base derives ``predict_joint_log_proba``,
``predict_log_proba``, ``predict_proba`` and ``predict`` (ties to the first class). The
selection parameters (``n_features_to_select`` or ``threshold``) are constrained by
:data:`SELECTION_PARAMETER_CONSTRAINTS`, checked against each other and applied here
once for every model; :class:`BinarySelectionBiasClassifier` adds the input handling of
the models for binary features and a binary response.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from hdbayes._validation import (
    check_binary_features,
    check_binary_target,
    check_memory,
    feature_label,
    fit_binarize_thresholds,
    validate_input,
)
from hdbayes.base import BayesianClassifier
from hdbayes.exceptions import InputValueError
from hdbayes.quadrature import adaptive_inverse_gamma_rule, inverse_gamma_midpoint_grid
from hdbayes.selection import abs_correlation, constant_features, select_from_scores

_STATISTIC_NAMES = {"correlation": "|correlation|", "f": "F statistic"}

#: A finite number > 0 (a constraint for ``_parameter_constraints``).
POSITIVE = Interval(Real, 0, np.inf, closed="neither")

#: ``_parameter_constraints`` of the selection parameters every bias-corrected model shares.
SELECTION_PARAMETER_CONSTRAINTS = {
    "n_features_to_select": [Interval(Integral, 1, None, closed="left"), None],
    "threshold": [Interval(Real, 0, np.inf, closed="left"), None],
    "correct": ["boolean"],
    "class_pseudo_count": [POSITIVE, "array-like"],
}

#: ... and those the models for binary features add.
BINARY_PARAMETER_CONSTRAINTS = {
    **SELECTION_PARAMETER_CONSTRAINTS,
    "binarize": [None, Interval(Real, -np.inf, np.inf, closed="neither"), StrOptions({"median"})],
}


def class_pseudo_counts(class_pseudo_count, n_classes):
    """The Dirichlet parameters of the class probabilities, one per class in the order of
    ``classes_``: ``class_pseudo_count`` repeated, or checked to be ``n_classes`` finite numbers > 0."""
    values = np.asarray(class_pseudo_count, dtype=np.float64)
    if values.ndim == 0:
        return np.full(n_classes, float(values))
    if values.shape != (n_classes,) or not (np.isfinite(values).all() and (values > 0).all()):
        raise InputValueError(
            f"class_pseudo_count must be a positive number or {n_classes} positive numbers (one per class), "
            f"got {np.asarray(class_pseudo_count).tolist()!r}"
        )
    return values


def class_log_prior(class_counts, class_pseudo_count):
    """log ψ̂_g = log (f_g + N_g)/(Σ f + n): the posterior predictive of the class of a new case under a
    Dirichlet(f) prior of the class probabilities (the Pólya urn; thesis eq. 2.31).

    Parameters
    ----------
    class_counts : array-like of shape (G,)
        N_g, the training cases of each class (in the order of ``classes_``).
    class_pseudo_count : float or array-like of shape (G,)
        f, the estimator's ``class_pseudo_count`` (checked by :func:`class_pseudo_counts`).

    Returns
    -------
    ndarray of shape (G,)
        The log class probabilities.

    Raises
    ------
    InputValueError
        If ``class_pseudo_count`` is not one positive number or G of them.

    Examples
    --------
    >>> np.exp(class_log_prior([3, 1], 1.0))
    array([0.66666667, 0.33333333])
    """
    counts = np.asarray(class_counts)
    pseudo_counts = class_pseudo_counts(class_pseudo_count, counts.shape[0])
    return np.log((pseudo_counts + counts) / (pseudo_counts.sum() + counts.sum()))


class SelectionBiasClassifier(BayesianClassifier):
    """Base class: selection inside ``fit``; predictions from ``_joint_log_likelihood``
    (see :class:`hdbayes.base.BayesianClassifier`). Subclasses have parameters
    ``n_features_to_select`` and ``threshold`` (constrained by
    :data:`SELECTION_PARAMETER_CONSTRAINTS`, with ``correct`` and ``class_pseudo_count``).

    Prediction reads the k selected columns only: X's shape and feature names are checked, and the
    selected columns' values are validated, checked (``_check_selected_values``) and predicted
    (``_selected_joint_log_likelihood``) in row batches, so that its memory is that of k columns of one
    batch however many columns X has; the values of the other columns are not read, hence not checked."""

    def _prediction_columns(self):
        """Prediction reads the selected features only (see :meth:`BayesianClassifier._prediction_columns`)."""
        return self.selected_features_

    def _check_selection_params(self):
        """The cross-parameter check (single parameters are checked by ``_parameter_constraints``)."""
        if self.n_features_to_select is not None and self.threshold is not None:
            raise InputValueError("give at most one of n_features_to_select and threshold")

    def _select_features(self, scores, statistic, random_state, X=None, *, constant=None):
        """Top-k (``n_features_to_select``) or threshold selection on the training statistics;
        with neither, all features. Sets ``selection_``, ``selected_features_``, ``threshold_``.

        With the training matrix ``X`` (after any binarisation), or the mask ``constant`` of
        its constant features (from sufficient statistics), a training set on which every
        feature is constant is refused; a selection that keeps features whose statistic is 0
        warns once; a threshold that keeps nothing is refused.
        """
        p = scores.shape[0]
        k = self.n_features_to_select
        names = getattr(self, "feature_names_in_", None)
        if k is not None and k > p:
            raise InputValueError(f"n_features_to_select={k} is larger than the number of features p={p}")
        selecting = k is not None or self.threshold is not None
        if selecting and constant is None and X is not None:
            constant = constant_features(X)
        if selecting and constant is not None and p > 0 and constant.all():
            binarized = getattr(self, "binarize", None) is not None
            hint = (
                f" after binarize={self.binarize!r}; choose a threshold inside the range of the feature values"
                if binarized
                else ""
            )
            raise InputValueError(f"every feature is constant on the training data{hint}; nothing to select")
        label = _STATISTIC_NAMES.get(statistic, statistic)
        if not selecting:
            selection = select_from_scores(scores, n_features_to_select=p, statistic=statistic)
        else:
            selection = select_from_scores(
                scores, n_features_to_select=k, threshold=self.threshold, statistic=statistic,
                random_state=random_state,
            )  # fmt: skip
            if selection.n_selected == 0:
                raise InputValueError(f"no feature's {label} exceeds the threshold {float(self.threshold):g}")
        zero = selection.indices[scores[selection.indices] == 0]
        if zero.size and selection.n_discarded > 0:
            shown = ", ".join(feature_label(int(j), names) for j in zero[:3]) + (", ..." if zero.size > 3 else "")
            warnings.warn(
                f"{zero.size} of the {selection.n_selected} selected features have {label} 0 with the response "
                f"on the training data ({shown}): they were kept only to make up n_features_to_select and carry "
                "no information about the class",
                UserWarning,
                stacklevel=3,
            )
        self.selection_ = selection
        self.selected_features_ = selection.indices
        self.threshold_ = selection.threshold
        return selection


class BinarySelectionBiasClassifier(SelectionBiasClassifier):
    """Base class of the models for binary features and a binary response (parameter
    ``binarize``, constraints :data:`BINARY_PARAMETER_CONSTRAINTS`); dense and sparse input."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True  # CSR/CSC are supported end to end
        tags.classifier_tags.multi_class = False  # binary response only
        return tags

    def _validate_training_data(self, X, y):
        """Checked X with values 0/1 (dense or CSC) and y coded 0/1 (float); sets ``classes_``
        and ``binarize_thresholds_`` (None, one threshold, or the training medians)."""
        X, y = validate_input(
            self, X, y, accept_sparse=("csr", "csc"), dtype="numeric", ensure_all_finite=True, ensure_min_samples=2
        )
        self.classes_, y01 = check_binary_target(y)
        self.binarize_thresholds_ = fit_binarize_thresholds(X, self.binarize)
        return self._binary_features(X), y01

    def _fit_selection(self, X, y, random_state):
        """Validate the training data and select features by |correlation| with y.

        Returns the 0/1 training matrix (dense or CSC), y coded 0/1 (float), the
        :class:`~hdbayes.selection.Selection`, and the class pseudo-counts (f0, f1).
        """
        self._check_selection_params()
        X, y01 = self._validate_training_data(X, y)
        pseudo_counts = class_pseudo_counts(self.class_pseudo_count, 2)
        selection = self._select_features(abs_correlation(X, y01), "correlation", random_state, X)
        return X, y01, selection, pseudo_counts

    def _validate_for_prediction(self, X):
        X = validate_input(self, X, reset=False, accept_sparse=("csr", "csc"), dtype="numeric", ensure_all_finite=True)
        return self._binary_features(X)

    def _binary_features(self, X):
        """X with values 0/1 after ``binarize``; a value other than 0/1 without it is refused
        naming its column."""
        return check_binary_features(X, self.binarize_thresholds_, getattr(self, "feature_names_in_", None))

    def _prediction_check_kwargs(self):
        return {"accept_sparse": ("csr", "csc"), "dtype": "numeric", "ensure_all_finite": True}

    def _check_selected_values(self, X, columns):
        """A block of the selected columns with values 0/1 after ``binarize`` (their thresholds), a value other
        than 0/1 without it refused naming its feature in the whole X."""
        thresholds = self.binarize_thresholds_
        if thresholds is not None and np.ndim(thresholds) == 1:
            thresholds = np.asarray(thresholds)[columns]
        return check_binary_features(X, thresholds, getattr(self, "feature_names_in_", None), columns=columns)


#: Points of the α rule when ``n_alpha`` is not given (the midpoint rule's default).
DEFAULT_N_ALPHA = 30


def check_rule_memory(n_alpha, n_theta, *, n_samples, n_tables, n_classes, n_levels=2, legendre=False,
                      per_alpha=0.0):  # fmt: skip
    """Refuse numbers of quadrature points (``n_alpha``, ``n_theta``) whose tables cannot fit in memory.

    Called before the rules are built. The estimates, in bytes, with K = ``n_alpha`` (30 when not given),
    T = ``n_theta`` (checked only when given), n training cases, k feature tables, G classes and L levels:

    * n_alpha: K · (24 · k · G · L + ``per_alpha``), the integrals at every α point of every table, class and
      level (with the prediction's scores; ``per_alpha``: a model's own bytes per α point);
    * n_theta: 16 · K · T · L · (n + 1) for the tables of the likelihood at every θ node, plus 8 · T² when
      T is a Gauss–Legendre rule (``legendre``; numpy's nodes come from a T × T eigenproblem).

    Parameters
    ----------
    n_alpha, n_theta : int or None
        The options ``n_alpha`` and ``n_theta`` (None: not given).
    n_samples, n_tables, n_classes : int
        n, k and G.
    n_levels : int, default=2
        L.
    legendre : bool, default=False
        Whether T is a Gauss–Legendre rule's.
    per_alpha : float, default=0
        Further bytes per α point.

    Raises
    ------
    InputValueError
        Naming the option and the estimate (:func:`hdbayes._validation.check_memory`).
    """
    points = DEFAULT_N_ALPHA if n_alpha is None else int(n_alpha)
    if n_alpha is not None:
        check_memory(points * (24.0 * n_tables * n_classes * n_levels + per_alpha), f"n_alpha = {n_alpha}",
                     purpose="the integrals at the α points")  # fmt: skip
    if n_theta is not None:
        nodes = float(n_theta)
        need = 16.0 * points * nodes * n_levels * (n_samples + 1) + (8.0 * nodes * nodes if legendre else 0.0)
        check_memory(need, f"n_theta = {int(n_theta)}", purpose="the tables at the θ nodes")


def integrate_over_alpha(evaluate, alpha_shape, alpha_scale, *, rule="adaptive", n_points=None, resolution=1.0):
    """The α rule of a conjugate selection-bias model (thesis §2.3.4) and what ``evaluate`` gave at its nodes.

    Parameters
    ----------
    evaluate : callable
        ``evaluate(alpha)`` returns a tuple of arrays whose first axis runs over the α values given, the last
        two being log A(α)^{p−k} and log P(data | α) (their sum is the integrand of the α posterior).
    alpha_shape, alpha_scale : float
        a and b of the Inverse-Gamma(a, b) prior of α.
    rule : {"adaptive", "midpoint"}, default="adaptive"
        :func:`~hdbayes.quadrature.adaptive_inverse_gamma_rule` (to ``resolution``), or ``n_points`` midpoints
        of the prior's quantiles.
    n_points : int, optional
        The midpoints (default :data:`DEFAULT_N_ALPHA`), or the adaptive rule's starting points (default its
        own).
    resolution : float, default=1.0
        The adaptive rule's resolution (an estimator's ``alpha_resolution``).

    Returns
    -------
    rule : QuadratureRule
        The α rule.
    values : tuple of ndarray
        The arrays of ``evaluate`` joined over all evaluations, in the rule's order of nodes.
    """
    pieces = []

    def log_integrand(alpha):
        values = evaluate(alpha)
        pieces.append(values)
        return values[-1] + values[-2]

    if rule == "adaptive":
        outcome = adaptive_inverse_gamma_rule(
            log_integrand, alpha_shape, alpha_scale, n_points=n_points, resolution=resolution
        )
        if not outcome.converged:  # pragma: no cover - needs a posterior narrower than 4000 points resolve
            warnings.warn(
                f"the adaptive rule for α did not reach alpha_resolution={resolution:g} within "
                f"{outcome.n_evaluations} points; predictions may be inaccurate",
                UserWarning,
                stacklevel=4,
            )
        alpha_rule, order = outcome.rule, outcome.order
    else:
        alpha_rule = inverse_gamma_midpoint_grid(
            alpha_shape, alpha_scale, DEFAULT_N_ALPHA if n_points is None else n_points
        )
        log_integrand(alpha_rule.nodes)
        order = np.arange(alpha_rule.nodes.shape[0])
    return alpha_rule, tuple(np.concatenate([piece[i] for piece in pieces])[order] for i in range(len(pieces[0])))
