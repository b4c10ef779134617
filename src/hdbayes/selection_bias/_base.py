"""Shared prediction logic for the bias-corrected classifiers.

As in scikit-learn's ``naive_bayes`` module, a subclass implements one method,
``_log_class_numerators(X)``, returning log P(y* = c, x* | training data) up to a
constant per row; ``predict_log_proba``, ``predict_proba`` and ``predict`` follow.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from hdbayes.metrics import bayes_decision


class SelectionBiasClassifier(ClassifierMixin, BaseEstimator):
    """Base class: probabilities from log numerators, decisions from a loss matrix."""

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
