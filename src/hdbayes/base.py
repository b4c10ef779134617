"""The one estimator contract of hdbayes: a classifier base and the MCMC parameters.

:class:`BayesianClassifier` is the base of every classifier. A subclass implements one
method, ``_joint_log_likelihood(X)``, returning b_c(x) = log p(x, y = c | training data)
for the validated X (up to a constant common to a row, which cancels), and may override
``_validate_for_prediction(X)``. The base derives from it

* ``predict_joint_log_proba(X)``: b, checked (NaN or +inf is overflow, reported as the
  user's input error; −inf only where a model allows probability zero);
* ``predict_log_proba(X)``: b_c − log Σ_c' exp b_c' by log-sum-exp, so probabilities
  stay exact however many features contribute;
* ``predict_proba(X)``;
* ``predict(X, loss=None)``: the most probable class, **ties to the first class in
  ``classes_``** (``numpy.argmax``, as in scikit-learn), or, with a loss matrix
  ``L[true, guess]``, the guess of least expected loss (:func:`hdbayes.metrics.bayes_decision`,
  ties to the first class too).

:class:`MCMCMixin` gives the MCMC estimators their common parameters (``n_iter``,
``burn_in``, ``thin``, ``n_chains``, ``n_jobs``, ``random_state``, ``progress``), checked by
scikit-learn's ``_parameter_constraints`` (:data:`MCMC_PARAMETER_CONSTRAINTS`), and runs
their chains with :func:`hdbayes.mcmc.run_chains`, keeping the result in ``trace_``
(a :class:`hdbayes.mcmc.Trace`); ``to_inference_data()`` and ``mcmc_summary()`` read it.
"""

from __future__ import annotations

import functools
import warnings
from numbers import Integral
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from hdbayes._validation import check_class_labels, is_dask_array, prediction_row_batches, validate_input
from hdbayes.exceptions import InputTypeError, InputValueError
from hdbayes.mcmc.chains import Schedule, check_chain_memory, run_chains

if TYPE_CHECKING:
    from typing import Any

    import arviz as az
    from numpy.typing import ArrayLike

    from hdbayes._validation import MatrixLike

__all__ = ["MCMC_PARAMETER_CONSTRAINTS", "BayesianClassifier", "MCMCMixin"]

#: ``_parameter_constraints`` of the parameters every MCMC estimator shares.
MCMC_PARAMETER_CONSTRAINTS = {
    "n_iter": [Interval(Integral, 1, None, closed="left")],
    "burn_in": [Interval(Integral, 0, None, closed="left")],
    "thin": [Interval(Integral, 1, None, closed="left")],
    "n_chains": [Interval(Integral, 1, None, closed="left")],
    "n_jobs": [Integral, None],
    "random_state": ["random_state", np.random.Generator],
    "progress": ["boolean", None],
}


class BayesianClassifier(ClassifierMixin, BaseEstimator):
    """Base class of every hdbayes classifier: predictions from one joint log-likelihood.

    Subclasses implement ``_joint_log_likelihood(X)`` on validated X and set ``classes_``
    in ``fit``. ``_validate_for_prediction(X)`` validates test data (by default
    scikit-learn's checks with the fitted number of features); ``_overflow_entries(jll)``
    says which −inf values are overflow rather than a legitimate probability zero (by
    default a row with every class at −inf).
    """

    def _joint_log_likelihood(self, X):  # pragma: no cover - abstract
        raise NotImplementedError

    def _validate_classification_data(self, X, y, **kwargs):
        """Validate training data (a single class, a continuous target, NaN or a wrong
        shape are input errors), set ``classes_`` and return ``(X, codes)`` with ``codes`` the
        index of each case's class in ``classes_``. ``kwargs`` go to scikit-learn's
        ``validate_data`` (default: dense float64, finite)."""
        check_class_labels(y)
        kwargs.setdefault("dtype", np.float64)
        X, y = validate_input(self, X, y, **kwargs)
        self.classes_, codes = np.unique(y, return_inverse=True)
        return X, codes

    def _validate_for_prediction(self, X):
        return validate_input(self, X, reset=False, dtype=np.float64, ensure_all_finite=True)

    def _overflow_entries(self, jll):
        """Mask of the −inf entries of ``jll`` that are overflow rather than a legitimate
        probability zero (hook). By default a row whose every class is −inf."""
        return np.isneginf(jll).all(axis=1, keepdims=True)

    def _overflow_message(self, X):
        """Why a joint log-likelihood is not finite, in the user's terms (hook)."""
        return "a class has zero probability under the fitted model (overflow in the posterior)"

    def predict_joint_log_proba(self, X: MatrixLike) -> np.ndarray:
        """log p(x, y = c | training data) for every class, shape (n_samples, n_classes).

        For the bias-corrected models the values are exact up to a constant common to a
        row (the probability of the observed selection), which cancels in every
        prediction.

        X may be a ``dask.array`` for the estimators that fit from one (their ``fit`` says so):
        every prediction method then returns a dask array with X's row chunks, each chunk
        predicted where it lives (an input error names the chunk); the others refuse it.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features_in_)
            The cases to predict, with the fitted features in the fitted order (a dask array only for
            the estimators that fit from one).

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            The joint log-probabilities b_c(x), columns in the order of ``classes_``; −inf only where the model allows
            probability zero (a dask array when X is one).
        """
        if is_dask_array(X):
            return self._predict_dask(X, "predict_joint_log_proba")
        check_is_fitted(self)
        columns = self._prediction_columns()
        batches = None if columns is None else self._prediction_batches(X, columns)
        if batches is None:
            return self._checked_joint_log_likelihood(self._validate_for_prediction(X), self._joint_log_likelihood)
        jll = np.empty((X.shape[0], self.classes_.shape[0]))
        for rows, block in batches:
            try:
                block = self._check_selected_values(block.get(), columns)
            except InputValueError as error:
                if error.location is not None:  # a row of the block: the row of X
                    error.location = (error.location[0] + rows.start, error.location[1])
                raise
            jll[rows] = self._checked_joint_log_likelihood(
                block, functools.partial(self._selected_joint_log_likelihood, first_row=rows.start)
            )
        return jll

    def _checked_joint_log_likelihood(self, X, joint_log_likelihood):
        """``joint_log_likelihood(X)`` as float64, a NaN, +inf or overflow in it refused as the user's input
        error."""
        with np.errstate(over="ignore", invalid="ignore"):
            jll = np.asarray(joint_log_likelihood(X), dtype=np.float64)
        bad = np.isnan(jll) | (jll == np.inf) | self._overflow_entries(jll)
        if bad.any():
            raise InputValueError(f"the joint log-likelihood is not finite; {self._overflow_message(X)}")
        return jll

    # -- prediction from selected columns, in row batches -----------------------------------------

    def _prediction_columns(self):
        """The columns of X a prediction reads (hook): None (all, validated whole by
        ``_validate_for_prediction``), or, for a model of selected features, their indices. Then a
        prediction validates X's shape and names, and validates, checks (``_check_selected_values``) and
        predicts (``_selected_joint_log_likelihood``) only those columns, in row batches
        (:func:`hdbayes._validation.prediction_row_batches`): its memory is bounded by the selected
        columns of one batch."""
        return None

    def _prediction_batches(self, X, columns):
        """The row batches of the selected ``columns`` of X (None: validate X whole instead)."""
        return prediction_row_batches(self, X, columns, row_bytes=self._prediction_row_bytes(len(columns)),
                                      **self._prediction_check_kwargs())  # fmt: skip

    def _prediction_check_kwargs(self):
        """scikit-learn's ``check_array`` options for a block of test data (hook; those of
        ``_validate_for_prediction``)."""
        return {"dtype": np.float64, "ensure_all_finite": True}

    def _prediction_row_bytes(self, k):
        """Bytes a prediction needs per row of ``k`` selected columns (hook): the columns as float64 and the
        scores of every class."""
        return 8 * (k + 64 * self.classes_.shape[0])

    def _check_selected_values(self, X, columns):
        """A validated block of the selected ``columns`` checked for the model's values (hook), naming a
        feature by its index (``columns``) or name in the whole X."""
        return X

    def _selected_joint_log_likelihood(self, X, first_row=0):
        """``_joint_log_likelihood`` of the selected columns alone (hook, with ``_prediction_columns``); X is
        the block of rows from ``first_row`` on (for messages that name a row)."""
        raise NotImplementedError  # pragma: no cover - abstract

    def predict_log_proba(self, X: MatrixLike) -> np.ndarray:
        """log p(y = c | x, training data), shape (n_samples, n_classes), by log-sum-exp.

        A row whose every class has probability zero (possible only for models that
        allow zero probabilities, such as ``method="mle"``) is NaN, with a RuntimeWarning.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features_in_)
            The cases to predict, with the fitted features in the fitted order (a dask array only for
            the estimators that fit from one).

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Log posterior class probabilities, columns in the order of ``classes_`` (a dask array
            when X is one).
        """
        if is_dask_array(X):
            return self._predict_dask(X, "predict_log_proba")
        jll = self.predict_joint_log_proba(X)
        with np.errstate(invalid="ignore"):
            log_norm = logsumexp(jll, axis=1, keepdims=True)
        impossible = np.isneginf(log_norm[:, 0])
        if impossible.any():
            warnings.warn(
                f"{int(impossible.sum())} case(s) have probability zero under every class; their probabilities "
                "are NaN",
                RuntimeWarning,
                stacklevel=2,
            )
            log_norm[impossible] = np.nan
        return jll - log_norm

    def predict_proba(self, X: MatrixLike) -> np.ndarray:
        """p(y = c | x, training data), rows summing to one, shape (n_samples, n_classes).

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features_in_)
            The cases to predict, with the fitted features in the fitted order (a dask array only for
            the estimators that fit from one).

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Posterior class probabilities, columns in the order of ``classes_`` (a dask array when
            X is one).
        """
        if is_dask_array(X):
            return self._predict_dask(X, "predict_proba")
        return np.exp(self.predict_log_proba(X))

    def predict(self, X: MatrixLike, loss: ArrayLike | None = None) -> np.ndarray:
        """Class decisions.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features_in_)
            The cases to classify, with the fitted features in the fitted order (a dask array only
            for the estimators that fit from one).
        loss : array-like of shape (n_classes, n_classes), optional
            Loss matrix ``L[true, guess]`` in the order of ``classes_``. The decision
            minimises the expected loss under the predictive distribution. Without it,
            the most probable class; ties go to the first class in ``classes_``.

        Returns
        -------
        ndarray of shape (n_samples,)
            The decided class labels, values of ``classes_`` (a dask array when X is one).
        """
        if is_dask_array(X):
            return self._predict_dask(X, "predict", loss=loss)
        if loss is None:
            jll = self.predict_joint_log_proba(X)  # checks the fit first
            return self.classes_[np.argmax(jll, axis=1)]
        from hdbayes.metrics import bayes_decision

        proba = self.predict_proba(X)
        try:
            decisions = bayes_decision(proba, loss)
        except (InputValueError, InputTypeError):
            raise
        except ValueError as error:  # a malformed loss matrix
            raise InputValueError(str(error)) from None
        return self.classes_[decisions]

    def _predict_dask(self, X, method, **kwargs):
        """``method`` on a dask array X, returned as a dask array (hook). Every prediction method
        comes here when X is a ``dask.array``; estimators that fit from dask arrays map the method
        over the row chunks of the columns they use (``hdbayes.statistics.map_row_chunks``)."""
        raise InputTypeError(
            f"{type(self).__name__} does not predict from a dask array; pass a numpy array or sparse matrix "
            "(for example X.compute())"
        )


class MCMCMixin:
    """Common parameters and chain running of the MCMC estimators (mix in before the base).

    The estimator's ``__init__`` takes ``n_iter``, ``burn_in``, ``thin``, ``n_chains``,
    ``n_jobs``, ``random_state`` and ``progress``; its ``_parameter_constraints`` include
    :data:`MCMC_PARAMETER_CONSTRAINTS`. In ``fit`` it calls :meth:`_run_chains` with a
    function running one chain (see :func:`hdbayes.mcmc.run_chains`).
    """

    def _schedule(self):
        """The :class:`~hdbayes.mcmc.Schedule` of ``n_iter``, ``burn_in`` and ``thin``, refused (naming them and
        ``n_chains``) when the chains could not fit in memory even at one number per draw: called first in
        ``fit``, before any work."""
        schedule = Schedule(self.n_iter, self.burn_in, self.thin)
        check_chain_memory(schedule, self.n_chains)
        return schedule

    def _run_chains(self, chain, *, desc, trace_options=None, seeds=None, schedule=None, draw_bytes=8,
                    warmup_bytes=0):  # fmt: skip
        """Run the chains, store and return the :class:`~hdbayes.mcmc.Trace` as ``trace_``; ``draw_bytes`` and
        ``warmup_bytes`` (bytes of one saved draw, of one burn-in record) size the memory check of
        :func:`hdbayes.mcmc.run_chains`."""
        self.trace_ = run_chains(
            chain, schedule or self._schedule(), n_chains=self.n_chains, random_state=self.random_state,
            n_jobs=self.n_jobs, progress=self.progress, desc=desc, trace_options=trace_options, seeds=seeds,
            draw_bytes=draw_bytes, warmup_bytes=warmup_bytes,
        )  # fmt: skip
        return self.trace_

    def to_inference_data(self) -> az.InferenceData:
        """The draws as an :class:`arviz.InferenceData` with dims (chain, draw, ...).

        Returns
        -------
        arviz.InferenceData
            ``posterior`` the saved post-burn-in draws, ``warmup_posterior`` what was recorded
            during burn-in, ``sample_stats`` the sampler's statistics (see
            :meth:`hdbayes.mcmc.Trace.to_inference_data`).
        """
        check_is_fitted(self, "trace_")
        return self.trace_.to_inference_data()

    def mcmc_summary(self) -> dict[str, dict[str, Any]]:
        """Convergence summary of the model's monitored scalar variables.

        Returns
        -------
        dict of str to dict
            Per monitored variable: ``mean``, ``sd``, ``ess_bulk`` and ``r_hat`` (NaN with one
            chain); see :meth:`hdbayes.mcmc.Trace.summary`.
        """
        check_is_fitted(self, "trace_")
        return self.trace_.summary()
