"""Shared logic of the bias-corrected classifiers: selection inside ``fit`` and prediction.

As in scikit-learn's ``naive_bayes`` module, a subclass implements one method,
``_log_class_numerators(X)``, returning log P(y* = c, x* | training data) up to a
constant per row; ``predict_log_proba``, ``predict_proba`` and ``predict`` follow.
The selection parameters (``n_features`` or ``threshold``) are checked and applied
here once for every model; :class:`BinarySelectionBiasClassifier` adds the input
handling of the models for binary features and a binary response.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from hdbayes._validation import (
    check_binary_features,
    check_binary_target,
    check_count,
    check_finite_output,
    check_positive,
    feature_label,
    fit_binarize_thresholds,
    validate_input,
)
from hdbayes.exceptions import InputTypeError, InputValueError
from hdbayes.metrics import bayes_decision
from hdbayes.selection import constant_features, select_from_scores

_STATISTIC_NAMES = {"correlation": "|correlation|", "f": "F statistic"}


class SelectionBiasClassifier(ClassifierMixin, BaseEstimator):
    """Base class: selection inside ``fit``, probabilities from log numerators, decisions
    from a loss matrix. Subclasses have parameters ``n_features`` and ``threshold``."""

    def _check_selection_params(self):
        if self.n_features is not None and self.threshold is not None:
            raise InputValueError("give at most one of n_features and threshold")
        if self.n_features is not None:
            check_count("n_features", self.n_features)
        if self.threshold is not None:
            check_positive("threshold", self.threshold, allow_zero=True)

    def _select_features(self, scores, statistic, random_state, X=None):
        """Top-k (``n_features``) or threshold selection on the training statistics; with
        neither, all features. Sets ``selection_``, ``selected_features_``, ``threshold_``.

        With the training matrix ``X`` (after any binarisation), a training set on which
        every feature is constant is refused; a selection that keeps features whose
        statistic is 0 warns once; a threshold that keeps nothing is refused.
        """
        p = scores.shape[0]
        names = getattr(self, "feature_names_in_", None)
        if self.n_features is not None and self.n_features > p:
            raise InputValueError(f"n_features={self.n_features} is larger than the number of features p={p}")
        selecting = self.n_features is not None or self.threshold is not None
        if selecting and X is not None and p > 0 and constant_features(X).all():
            binarized = getattr(self, "binarize", None) is not None
            hint = (
                f" after binarize={self.binarize!r}; choose a threshold inside the range of the feature values"
                if binarized
                else ""
            )
            raise InputValueError(f"every feature is constant on the training data{hint}; nothing to select")
        label = _STATISTIC_NAMES.get(statistic, statistic)
        if self.n_features is None and self.threshold is None:
            selection = select_from_scores(scores, n_features=p, statistic=statistic)
        else:
            selection = select_from_scores(
                scores, n_features=self.n_features, threshold=self.threshold, statistic=statistic,
                random_state=random_state,
            )  # fmt: skip
            if selection.n_selected == 0:
                raise InputValueError(f"no feature's {label} exceeds the threshold {float(self.threshold):g}")
        zero = selection.indices[scores[selection.indices] == 0]
        if zero.size and selection.n_discarded > 0:
            shown = ", ".join(feature_label(int(j), names) for j in zero[:3]) + (", ..." if zero.size > 3 else "")
            warnings.warn(
                f"{zero.size} of the {selection.n_selected} selected features have {label} 0 with the response "
                f"on the training data ({shown}): they were kept only to make up n_features and carry no "
                "information about the class",
                UserWarning,
                stacklevel=3,
            )
        self.selection_ = selection
        self.selected_features_ = selection.indices
        self.threshold_ = selection.threshold
        return selection

    def _log_class_numerators(self, X):  # pragma: no cover - abstract
        raise NotImplementedError

    def predict_log_proba(self, X):
        """Log predictive probabilities, shape (n_samples, n_classes).

        Computed by log-sum-exp normalisation, so they are finite and exponentiate
        to rows summing to one however many features are involved.
        """
        check_is_fitted(self)
        log_numerators = self._log_class_numerators(X)
        log_proba = log_numerators - logsumexp(log_numerators, axis=1, keepdims=True)
        return check_finite_output(
            "the predicted log probabilities",
            log_proba,
            cause="a class has zero probability under the fitted model (overflow in the posterior)",
        )

    def predict_proba(self, X):
        """Predictive probabilities P(y* = c | x*, training data), shape (n_samples, n_classes)."""
        return np.exp(self.predict_log_proba(X))

    def predict(self, X, loss=None):
        """Class decisions.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features_in_)
        loss : array-like of shape (n_classes, n_classes), optional
            Loss matrix ``L[true, guess]`` (order of ``classes_``). The decision
            minimises the expected loss under the predictive distribution. Without
            it, the most probable class (ties at 1/2 go to the second class, as in
            the thesis's error rate).
        """
        proba = self.predict_proba(X)
        if loss is not None:
            try:
                decisions = bayes_decision(proba, loss)
            except (InputValueError, InputTypeError):
                raise
            except ValueError as error:  # a malformed loss matrix (hdbayes.metrics checks it)
                raise InputValueError(str(error)) from None
            return self.classes_[decisions]
        if proba.shape[1] == 2:  # thresholding at 1/2, ties to the second class (thesis §2.3.5)
            return self.classes_[(proba[:, 1] >= 0.5).astype(int)]
        return self.classes_[np.argmax(proba, axis=1)]


class BinarySelectionBiasClassifier(SelectionBiasClassifier):
    """Base class of the models for binary features and a binary response (parameter
    ``binarize``); dense and sparse input."""

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

    def _validate_test_data(self, X):
        X = validate_input(self, X, reset=False, accept_sparse=("csr", "csc"), dtype="numeric", ensure_all_finite=True)
        return self._binary_features(X)

    def _binary_features(self, X):
        """X with values 0/1 after ``binarize``; a value other than 0/1 without it is refused
        naming its column."""
        if self.binarize_thresholds_ is not None:
            return check_binary_features(X, self.binarize_thresholds_)
        values = X.tocsc() if sp.issparse(X) else np.asarray(X)
        stored = values.data if sp.issparse(values) else values
        bad = (stored != 0) & (stored != 1)
        if bad.any():
            if sp.issparse(values):
                position = int(np.flatnonzero(bad)[0])
                column = int(np.searchsorted(values.indptr, position, side="right") - 1)
                value = float(stored[position])
            else:
                row, column = (int(i) for i in np.argwhere(bad)[0])
                value = float(stored[row, column])
            label = feature_label(column, getattr(self, "feature_names_in_", None))
            raise InputValueError(
                f"X must hold binary features (0/1): {label} has the value {value:g}; pass binarize=<threshold> "
                "(or 'median') to binarize continuous data"
            )
        return values
