"""One base for the bias-corrected classifiers that fit from mergeable sufficient statistics (issue 30, item 1).

A model whose fit depends on the data only through statistics that add up over the cases
(:mod:`hdbayes.statistics`) has five ways to be fitted — ``fit`` on data in memory, ``fit`` on a
``dask.array``, ``partial_fit`` over batches, ``fit_statistics`` on statistics gathered elsewhere —
and a prediction of a ``dask.array``; :class:`StatisticsClassifier` writes them once. A subclass
declares its statistics type (``_statistics_type``) and writes what is its own:

* ``_fit_from_statistics(statistics)``: the selection and the model from the statistics of all p
  features (every fit path ends here, after ``statistics_`` is set);
* ``_joint_log_likelihood(X)`` and ``_selected_joint_log_likelihood(X, first_row)``: the predictions
  (:class:`hdbayes.base.BayesianClassifier`);
* ``_validate_training_data(X, y)``: ``fit``'s checks of data in memory, returning the model's values
  and the class codes (setting ``classes_``);
* ``_statistics_of(X, codes)``: the statistics of checked values and class codes;
* ``_dask_statistics(X, y)``: (statistics, classes) of a dask X, computed where its chunks live;

and may override the small hooks where the models truly differ: ``_check_params`` (checks of two
parameters), ``_check_mergeable(path)`` (options the statistics cannot serve), ``_batch_values(X,
first)`` (a ``partial_fit`` batch as the model's values), ``_check_given_statistics`` (statistics
from outside), ``_start_from`` (the fitted input attributes), ``_chunk_check`` and
``_prediction_view`` (the chunks of a dask X at prediction), and ``_fit_in_memory`` for a model
that needs X itself where its statistics cannot hold the data (the Gaussian's, for values whose
squares overflow).
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import _fit_context

from hdbayes._validation import (
    check_class_labels,
    check_later_classes,
    is_dask_array,
    plain_value,
    unchanged_on_error,
    validate_input,
)
from hdbayes.exceptions import InputTypeError, InputValueError
from hdbayes.selection_bias._base import SelectionBiasClassifier
from hdbayes.statistics.chunks import check_dask_matrix, check_prediction_chunks, map_row_chunks

if TYPE_CHECKING:
    from typing import Any, Self

    from numpy.typing import ArrayLike

    from hdbayes._validation import MatrixLike


def _predict_chunk(block, *, where, view, method, kwargs, check, options):
    """One row chunk of the selected columns, checked by ``check`` (naming the features as in the whole X) and
    predicted by ``view``, the model restricted to those columns (see :meth:`StatisticsClassifier._predict_dask`)."""
    if check is not None:
        block = check(block, where=where, **options)
    return getattr(view, method)(block, **kwargs)


class StatisticsClassifier(SelectionBiasClassifier):
    """Base class: ``fit``, ``partial_fit``, ``fit_statistics`` and the dask paths of a classifier that fits
    from mergeable sufficient statistics (see the module's docstring for what a subclass writes).

    Every path ends in ``_fit_statistics(statistics)``, which keeps the statistics as ``statistics_`` and
    fits the model from them, so ``fit``, ``fit_statistics`` on the statistics of the same data, ``partial_fit``
    over any batches and ``fit`` on a chunked ``dask.array`` give the same model (bit for bit when the
    statistics are exact, e.g. counts). A ``partial_fit`` or ``fit_statistics`` that raises leaves the
    estimator as it was.
    """

    #: the mergeable statistics the model fits from (a class of :mod:`hdbayes.statistics`)
    _statistics_type: type = object
    #: cases every class needs before ``partial_fit`` fits the model (until then it only adds statistics)
    _min_class_count = 1
    #: the fewest training cases of ``fit``
    _min_samples = 2
    #: the fitted attribute whose presence means the model is fitted (``partial_fit`` may hold statistics only)
    _fitted_attribute = "class_log_prior_"
    #: fitted attributes the prediction of a dask X does not ship to the chunks
    _not_for_prediction: tuple[str, ...] = ("statistics_", "selection_", "feature_names_in_")

    # -- what a subclass writes --------------------------------------------------------------------
    def _fit_from_statistics(self, statistics):  # pragma: no cover - abstract
        """The selection and the model from the statistics of all p features (hook)."""
        raise NotImplementedError

    def _validate_training_data(self, X, y):  # pragma: no cover - abstract
        """``fit``'s checks of in-memory (X, y): the model's values of X and the class codes (hook; sets
        ``classes_``)."""
        raise NotImplementedError

    def _statistics_of(self, X, codes):  # pragma: no cover - abstract
        """The statistics of checked values X and class codes (indices into ``classes_``) (hook)."""
        raise NotImplementedError

    def _dask_statistics(self, X, y):  # pragma: no cover - abstract
        """(statistics, classes) of a dask X (checked 2-D, at least one column) and labels y (hook)."""
        raise NotImplementedError

    # -- small hooks -----------------------------------------------------------------------------------
    def _check_params(self):
        """Checks that involve two parameters (hook; single ones are in ``_parameter_constraints``)."""

    def _check_mergeable(self, path):
        """Refuse options that statistics cannot serve on ``path`` ("partial_fit", "fit_statistics" or "dask")
        (hook)."""

    def _batch_values(self, X, first):
        """A validated ``partial_fit`` batch as the model's values (hook; ``first``: the call that starts)."""
        return X

    def _training_check_kwargs(self):
        """scikit-learn's ``check_array`` options for a ``partial_fit`` batch (hook; those of prediction)."""
        return self._prediction_check_kwargs()

    def _check_given_statistics(self, statistics, classes):
        """Statistics from outside (``fit_statistics``), checked and adapted to the options (hook)."""
        return statistics

    def _fit_in_memory(self, X, codes):
        """``fit`` on checked data in memory (hook; default: from their statistics)."""
        return self._fit_statistics(self._statistics_of(X, codes))

    def _chunk_check(self, selected):
        """(function, options) checking a row chunk of the ``selected`` columns of a dask X at prediction,
        called as ``function(block, where=..., **options)``; None: no check (hook)."""
        return None

    def _prediction_view(self, selected):
        """A copy of the fitted model restricted to the ``selected`` columns, small enough to ship with every
        prediction task of a dask X (hook)."""
        view = copy.copy(self)
        for name in self._not_for_prediction:
            view.__dict__.pop(name, None)
        view.n_features_in_ = selected.shape[0]
        view.selected_features_ = np.arange(selected.shape[0])
        return view

    # -- partial_fit's labels --------------------------------------------------------------------------
    def _batch_classes(self, y, classes, first):
        """``classes_`` for a ``partial_fit`` batch: ``classes`` is required on the first call (scikit-learn's
        convention; checked labels, two for a binary model) and, when given later, must be the first call's; the
        batch's ``y`` may hold one class."""
        if first and classes is None:
            raise InputValueError("classes must be passed on the first call to partial_fit")
        check_class_labels(y, single_class_allowed=True)
        if not first:
            return check_later_classes(classes, self.classes_)
        classes_ = check_class_labels(np.asarray(classes))
        if not self.__sklearn_tags__().classifier_tags.multi_class and classes_.shape[0] != 2:
            raise InputValueError(f"classes must hold two labels, got {classes_.shape[0]}")
        return classes_

    @staticmethod
    def _check_batch_labels(y, classes):
        """Refuse a batch label outside ``classes`` (the batch's y, validated)."""
        known = np.isin(y, classes)
        if not known.all():
            raise InputValueError(
                f"y contains the label {plain_value(y[~known][0])}, which is not in classes {classes.tolist()}"
            )

    # -- the paths ---------------------------------------------------------------------------------------
    def _check_fit_params(self):
        self._check_params()
        self._check_selection_params()

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: MatrixLike, y: ArrayLike) -> Self:
        """Select features on (X, y) and fit the model.

        X may be a ``dask.array`` (dense or ``scipy.sparse`` chunks, any chunking): the sufficient statistics
        (``statistics_``) are then computed chunk by chunk where the chunks live and merged, so X is never
        gathered, and the model equals the in-memory fit.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, p)
            All candidate features.
        y : array-like or dask array of shape (n_samples,)
            Class labels.

        Returns
        -------
        self
            The fitted estimator.
        """
        self._check_fit_params()
        if is_dask_array(X):
            return self._fit_dask(X, y)
        if is_dask_array(y):
            y = y.compute()  # n labels; X is in memory anyway
        X, codes = self._validate_training_data(X, y)
        return self._fit_in_memory(X, codes)

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X: MatrixLike, y: ArrayLike, classes: ArrayLike | None = None) -> Self:
        """Add a batch of training cases; the model equals ``fit`` on all batches so far.

        The batches' sufficient statistics (``statistics_``) are added up and the selection and the model
        are computed again from them after every call, so the result equals one ``fit`` on the concatenated
        batches (any batch sizes, in any order). Until every class has enough cases the statistics are only
        accumulated and the model is not fitted yet. A call that raises leaves the estimator as it was.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, p)
            A batch of all p candidate features.
        y : array-like of shape (n_samples,)
            The batch's labels, each one of ``classes``.
        classes : array-like, optional
            All class labels; required on the first call (scikit-learn's convention), checked against
            ``classes_`` on later ones.

        Returns
        -------
        self
            The estimator, updated with the batch.
        """
        first = not hasattr(self, "statistics_")
        classes_ = self._batch_classes(y, classes, first)  # classes required on the first call
        self._check_mergeable("partial_fit")
        self._check_fit_params()
        with unchanged_on_error(self):
            X, y = validate_input(self, X, y, reset=first, ensure_min_samples=1, **self._training_check_kwargs())
            y = np.asarray(y)
            self._check_batch_labels(y, classes_)
            self.classes_ = classes_
            batch = self._statistics_of(self._batch_values(X, first), np.searchsorted(classes_, y))
            self.statistics_ = batch if first else self.statistics_ + batch
            if self.statistics_.class_counts.min() >= self._min_class_count:
                self._fit_statistics(self.statistics_)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_statistics(self, statistics: Any) -> Self:
        """Fit from the sufficient statistics of the training data alone.

        For data that are never in one place: the sum of the statistics of several shards or sites gives
        the same model as ``fit`` on their union. ``classes_`` are the statistics' classes,
        ``feature_names_in_`` their feature names (if any).

        Parameters
        ----------
        statistics : hdbayes.statistics statistics
            Of the estimator's type (``statistics_`` of a fit), every class with at least one case.

        Returns
        -------
        self
            The fitted estimator.
        """
        return self._fit_given_statistics(statistics, None)

    def _fit_given_statistics(self, statistics, classes):
        """``fit_statistics`` with the class labels of the statistics (None: the statistics' own)."""
        kind = self._statistics_type
        if not isinstance(statistics, kind):
            raise InputTypeError(f"statistics must be a {kind.__name__}, got {type(statistics).__name__}")
        self._check_mergeable("fit_statistics")
        classes = np.asarray(statistics.classes if classes is None else classes)
        statistics = self._check_given_statistics(statistics, classes)
        self._check_fit_params()
        sizes = np.asarray(statistics.class_counts)
        empty = np.flatnonzero(sizes == 0)
        if empty.size:
            only = " (cases of one class only)" if np.count_nonzero(sizes) == 1 else ""
            raise InputValueError(
                f"the statistics hold no case of class {plain_value(classes[empty[0]])}{only}; every class needs at "
                f"least one case (class sizes {sizes.tolist()})"
            )
        check_class_labels(classes)
        with unchanged_on_error(self):
            self._start_from(statistics, classes)
            self._fit_statistics(statistics)
        return self

    def _fit_dask(self, X, y):
        """``fit`` on a dask array X: the statistics computed on the workers, the model on the client."""
        self._check_mergeable("dask")
        X = check_dask_matrix(X)
        if X.shape[1] == 0:
            raise InputValueError("X has 0 features; at least 1 is required")
        statistics, classes = self._dask_statistics(X, y)
        check_class_labels(classes)
        if statistics.n_samples < self._min_samples:
            raise InputValueError(
                f"Found array with {statistics.n_samples} sample(s) while a minimum of {self._min_samples} is required."
            )
        self._start_from(statistics, classes)
        return self._fit_statistics(statistics)

    def _start_from(self, statistics, classes):
        """The fitted attributes of the input set from statistics gathered without validating X here
        (``fit_statistics``, a dask X)."""
        for name in ("feature_names_in_", "statistics_", self._fitted_attribute):
            self.__dict__.pop(name, None)
        self.classes_ = np.asarray(classes)
        self.n_features_in_ = statistics.n_features
        if statistics.feature_names is not None:
            self.feature_names_in_ = np.asarray(statistics.feature_names, dtype=object)

    def _fit_statistics(self, statistics):
        """Keep ``statistics`` as ``statistics_`` and fit the model from them (every fit path comes here)."""
        self.statistics_ = statistics
        self._fit_from_statistics(statistics)
        return self

    def __sklearn_is_fitted__(self):
        # partial_fit may have accumulated statistics without a case of every class, and no model yet
        return hasattr(self, self._fitted_attribute)

    # -- prediction on dask arrays: the k selected columns, mapped over the row chunks ----------------------
    def _predict_dask(self, X, method, **kwargs):
        """``method`` on a dask array X, as a dask array: only the k selected columns are taken, and each row
        chunk is checked (``_chunk_check``) and predicted where it lives by a copy of the model restricted to
        them (``_prediction_view``; the same computation as in memory)."""
        X, n_outputs, dtype = check_prediction_chunks(self, X, method)
        selected = np.asarray(self.selected_features_)
        check, options = self._chunk_check(selected) or (None, {})
        return map_row_chunks(
            X[:, selected], _predict_chunk, n_outputs=n_outputs, dtype=dtype, view=self._prediction_view(selected),
            method=method, kwargs=kwargs, check=check, options=options,
        )  # fmt: skip
