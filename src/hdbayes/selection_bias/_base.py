"""Shared logic of the bias-corrected classifiers: selection inside ``fit`` and prediction.

As in scikit-learn's ``naive_bayes`` module, a subclass implements one method,
``_log_class_numerators(X)``, returning log P(y* = c, x* | training data) up to a
constant per row; ``predict_log_proba``, ``predict_proba`` and ``predict`` follow.
The selection parameters (``n_features`` or ``threshold``) are checked and applied
here once for every model; :class:`BinarySelectionBiasClassifier` adds the input
handling of the models for binary features and a binary response.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from hdbayes._validation import check_binary_features, check_binary_target, check_count, check_positive
from hdbayes.metrics import bayes_decision
from hdbayes.selection import select_from_scores


class SelectionBiasClassifier(ClassifierMixin, BaseEstimator):
    """Base class: selection inside ``fit``, probabilities from log numerators, decisions
    from a loss matrix. Subclasses have parameters ``n_features`` and ``threshold``."""

    def _check_selection_params(self):
        if self.n_features is not None and self.threshold is not None:
            raise ValueError("give at most one of n_features and threshold")
        if self.n_features is not None:
            check_count("n_features", self.n_features)
        if self.threshold is not None:
            check_positive("threshold", self.threshold, allow_zero=True)

    def _select_features(self, scores, statistic, random_state):
        """Top-k (``n_features``) or threshold selection on the training statistics; with
        neither, all features. Sets ``selection_``, ``selected_features_``, ``threshold_``."""
        p = scores.shape[0]
        if self.n_features is not None and self.n_features > p:
            raise ValueError(f"n_features={self.n_features} is larger than the number of features p={p}")
        if self.n_features is None and self.threshold is None:
            selection = select_from_scores(scores, n_features=p, statistic=statistic)
        else:
            selection = select_from_scores(
                scores, n_features=self.n_features, threshold=self.threshold, statistic=statistic,
                random_state=random_state,
            )  # fmt: skip
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
        return log_numerators - logsumexp(log_numerators, axis=1, keepdims=True)

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
            return self.classes_[bayes_decision(proba, loss)]
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
        """Checked binary X (dense or CSC) and y coded 0/1 (float); sets ``classes_``."""
        X, y = validate_data(
            self, X, y, accept_sparse=("csr", "csc"), dtype="numeric", ensure_all_finite=True, ensure_min_samples=2
        )
        X = check_binary_features(X, self.binarize)
        self.classes_, y01 = check_binary_target(y)
        return X, y01

    def _validate_test_data(self, X):
        X = validate_data(self, X, reset=False, accept_sparse=("csr", "csc"), dtype="numeric", ensure_all_finite=True)
        return check_binary_features(X, self.binarize)
