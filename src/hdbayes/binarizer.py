"""Binarising features at a fixed threshold or at their training medians.

The binary models (the bias-corrected naive Bayes and mixture models, Bayesian
Bernoulli naive Bayes, mutual-information selection of binary features) take 0/1
features. Gene-expression studies binarise each gene at its median over the training
cases (thesis §2.3.6), which must be learned inside each cross-validation fold;
:class:`FeatureBinarizer` does that as a scikit-learn transformer, so that it can come
first in a :class:`~sklearn.pipeline.Pipeline` (before a selector that needs binary
features). The same rule is used by the estimators' own ``binarize`` parameter
(:func:`hdbayes._validation.fit_binarize_thresholds`), so dense and sparse copies of the
same data give the same 0/1 matrix.
"""

from __future__ import annotations

from numbers import Real
from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from hdbayes._validation import binarize_features, feature_thresholds, validate_input

if TYPE_CHECKING:
    from typing import Literal, Self

    from numpy.typing import ArrayLike

    from hdbayes._validation import MatrixLike

__all__ = ["FeatureBinarizer"]


class FeatureBinarizer(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Map feature values above a threshold to 1 and the others to 0.

    Parameters
    ----------
    threshold : float or "median", default=0.0
        Values strictly greater than the threshold become 1 (as in scikit-learn's
        :class:`~sklearn.preprocessing.Binarizer`). ``"median"``: each feature's median
        over the rows given to ``fit`` (implicit zeros of sparse input included).

    Attributes
    ----------
    thresholds_ : ndarray of shape (n_features,)
        The threshold of every feature.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features seen during ``fit`` (only when X has string column names).

    Notes
    -----
    The output keeps the input's feature names (``get_feature_names_out``), so ``set_output(transform="pandas")``
    (or scikit-learn's global ``transform_output`` setting) gives a DataFrame with X's column names and index;
    sparse input gives sparse output, which pandas output cannot hold (scikit-learn refuses it).

    Examples
    --------
    >>> import numpy as np
    >>> from hdbayes.binarizer import FeatureBinarizer
    >>> X = np.array([[1.0, 10.0], [2.0, 30.0], [3.0, 20.0]])
    >>> FeatureBinarizer(threshold="median").fit_transform(X)
    array([[0., 0.],
           [0., 1.],
           [1., 0.]])
    """

    _parameter_constraints: dict = {"threshold": [Interval(Real, None, None, closed="neither"), StrOptions({"median"})]}

    def __init__(self, threshold: float | Literal["median"] = 0.0) -> None:
        self.threshold = threshold

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: MatrixLike, y: object = None) -> Self:
        """Learn the thresholds (the medians of ``X`` for ``threshold="median"``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The features.
        y : None
            Ignored; present for scikit-learn's pipelines.

        Returns
        -------
        FeatureBinarizer
            The fitted binarizer (``self``).
        """
        X = validate_input(self, X, accept_sparse=("csr", "csc"), dtype=np.float64, ensure_all_finite=True)
        self.thresholds_ = feature_thresholds(X, self.threshold)
        return self

    def transform(self, X: MatrixLike) -> MatrixLike:
        """Binarise ``X`` with the fitted thresholds.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        {ndarray, sparse matrix} of shape (n_samples, n_features)
            0.0/1.0 values; sparse input stays sparse (CSC) when every threshold is ≥ 0.
        """
        check_is_fitted(self)
        X = validate_input(self, X, reset=False, accept_sparse=("csr", "csc"), dtype=np.float64, ensure_all_finite=True)
        binary = binarize_features(X, self.thresholds_)
        return binary.copy() if binary is X else binary  # never hand back the caller's array

    def get_feature_names_out(self, input_features: ArrayLike | None = None) -> np.ndarray:
        """The names of the binarised features: those of the input, one output per input column.

        Parameters
        ----------
        input_features : array-like of str, optional
            The input names; checked against those seen in ``fit`` (default: those, or
            ``x0``, ``x1``, … when ``fit`` saw none).

        Returns
        -------
        ndarray of str objects
            The name of every output column (what ``set_output(transform="pandas")`` uses).
        """
        return super().get_feature_names_out(input_features)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.requires_fit = True
        return tags
