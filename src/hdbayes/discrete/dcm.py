"""The Dirichlet-compound-multinomial (Pólya) document classifier (Murphy §3.5.5; the fit is an addition).

Murphy §3.5.5 presents the DCM document model

    p(x_i | y_i = c, α_c) = N_i!/∏_j x_ij! · B(x_i + α_c)/B(α_c)

(with one ratio of multivariate Betas) but not how to fit α_c. Following Madsen, Kauchak & Elkan (2005)
:class:`DCMClassifier` maximises each class's likelihood Σ_{i: y_i = c} log DCM(x_i | α_c) by Minka's (2000)
fixed point (:mod:`hdbayes.discrete.minka`) on the class's histograms of word counts and document lengths
(:class:`~hdbayes.discrete.word_counts.WordCountHistogram`, mergeable over batches and chunks).

Smoothing. Words never seen in class c are driven to 0 by the fixed point, which would
make a test document containing one of them impossible under class c. Madsen et al.
smooth the fitted α by a small constant; a fixed constant does not scale with the
vocabulary (D · constant can swamp the fitted α_c0 when D is large). The classifier's
default ``min_concentration="auto"`` therefore floors every α_jc at α̂_c0/D after the maximum-
likelihood fit, so that all floored words together carry at most the fitted
concentration α̂_c0 — the rule that gave the lowest log-loss across the bursty corpora of
:mod:`hdbayes.datasets.documents` (vocabularies of 10^3 to 2·10^4 words, α_0 from 5 to
100; see ``docs/discrete.md``). A number instead is an absolute floor applied inside the
fixed point.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import TYPE_CHECKING

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.metaestimators import available_if

from hdbayes._validation import check_finite_output
from hdbayes.discrete._base import PSEUDO_COUNT, GenerativeClassifier, overflow_cause, plain
from hdbayes.discrete.conjugate import _COEF_HINT, DirichletMultinomialTables, check_count_matrix
from hdbayes.discrete.minka import fit_histogram
from hdbayes.discrete.word_counts import WordCountHistogram
from hdbayes.exceptions import InputValueError

if TYPE_CHECKING:
    from typing import Literal, Self

    from numpy.typing import ArrayLike

    from hdbayes._validation import MatrixLike

__all__ = ["DCMClassifier"]


class DCMClassifier(GenerativeClassifier):
    """Document classifier with a Dirichlet-compound-multinomial (Pólya urn) model per class.

    Fits the concentrations α_c by maximum likelihood (Minka's fixed point,
    :func:`fit_dirichlet_multinomial`) and predicts with b_c(x) = log π̄_c + log DCM(x | α_c),
    π̄_c = (N_c + a)/(N + C·a), a = ``class_pseudo_count`` (Madsen et al. 2005).
    Unlike the multinomial, the DCM makes a word that has appeared once more likely to
    appear again (burstiness). X holds non-negative counts; real values (tf-idf weights) are
    accepted as by scikit-learn's ``MultinomialNB`` and use the Gamma-function form of the
    DCM likelihood (equal to the integer form at integers).
    An empty document is valid for prediction (likelihood 1 under every class), but a class
    whose training documents are all empty cannot be fitted (InputValueError). Documents that
    are not over-dispersed relative to the multinomial have their likelihood maximum at
    α_c0 → ∞ (the multinomial limit); the fit then stops when α_c0 reaches 10^10 (or at
    ``max_iter``) with a ConvergenceWarning and ``converged_`` False.

    The fit depends on the documents of a class only through the histograms of their
    word counts and lengths (:class:`WordCountHistogram`), which add up over batches: so
    ``partial_fit`` equals ``fit`` on all batches, and ``fit`` on a ``dask.array`` computes
    the histograms of each row chunk where it lives and merges them, bit-identical to the
    in-memory fit.

    Parameters
    ----------
    class_pseudo_count : float or array-like of shape (n_classes,), default=1.0
        Dirichlet pseudo-counts of the class prior (posterior mean plugged in).
    min_concentration : "auto" or float, default="auto"
        Smoothing floor of the fitted α_jc (words never seen in class c): "auto" floors at
        α̂_c0/D after the maximum-likelihood fit; a number > 0 is an absolute floor used
        inside the fixed point.
    max_iter : int, default=1000
        Maximum number of fixed-point iterations per class.
    tol : float, default=1e-6
        Stop a class's iterations when no α_cj changes by more than this relative amount.
    include_multinomial_coef : bool, default=False
        Add log N_i!/∏_j x_ij! (cancels in p(y | x)); defined for integer counts only, so
        with it non-integral values are refused.
    class_prior : None, "uniform" or array-like of shape (n_classes,), default=None
        Overrides the learnt class prior.

    Attributes
    ----------
    classes_, class_count_ : ndarray of shape (n_classes,)
    n_features_in_ : int
        Number of features seen in ``fit``.
    concentration_ : ndarray of shape (n_classes, n_features)
        The fitted Dirichlet concentrations α_c (after smoothing).
    total_concentration_ : ndarray of shape (n_classes,)
        α̂_c0 of the maximum-likelihood fit, before smoothing (the burstiness: small is bursty).
    n_iter_ : ndarray of shape (n_classes,)
    converged_ : ndarray of bool, shape (n_classes,)
    feature_count_ : ndarray of shape (n_classes, n_features)
        T_jc.
    statistics_ : list of WordCountHistogram
        Per class, the histograms of word counts and document lengths the fit depends on
        (mergeable: ``partial_fit`` and dask arrays add them up; no document is kept).
    class_log_prior_ : ndarray of shape (n_classes,)

    Examples
    --------
    >>> from hdbayes.datasets.documents import simulate_bursty_documents
    >>> corpus = simulate_bursty_documents(200, 100, random_state=0)
    >>> model = DCMClassifier().fit(corpus.X[:150], corpus.y[:150])
    >>> model.concentration_.shape, bool(model.converged_.all())
    ((2, 100), True)
    >>> bool(model.score(corpus.X[150:], corpus.y[150:]) > 0.8)
    True
    """

    _parameter_constraints: dict = {
        "class_pseudo_count": PSEUDO_COUNT,
        "min_concentration": [StrOptions({"auto"}), Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "include_multinomial_coef": ["boolean"],
        "class_prior": [None, StrOptions({"uniform"}), "array-like"],
    }

    def __init__(
            self, *, class_pseudo_count: float | ArrayLike = 1.0, min_concentration: float | Literal["auto"] = "auto",
            max_iter: int = 1000, tol: float = 1e-6, include_multinomial_coef: bool = False,
            class_prior: Literal["uniform"] | ArrayLike | None = None) -> None:  # fmt: skip
        self.class_pseudo_count = class_pseudo_count
        self.min_concentration = min_concentration
        self.max_iter = max_iter
        self.tol = tol
        self.include_multinomial_coef = include_multinomial_coef
        self.class_prior = class_prior

    def _prepare_X(self, X, reset):
        return check_count_matrix(
            X, integer=bool(self.include_multinomial_coef), feature_names=self._feature_names(), option=_COEF_HINT
        )

    def _floor(self):
        """The floor used inside the fixed point (tiny for "auto", which floors afterwards)."""
        return 1e-8 if isinstance(self.min_concentration, str) else float(self.min_concentration)

    def _reset_counts(self, n_features):
        self.feature_count_ = np.zeros((self.classes_.shape[0], n_features))
        self.statistics_ = [WordCountHistogram.zero(n_features) for _ in self.classes_]

    def _counts_of(self, X, Y):
        codes = Y.indices  # one non-zero per row: the class code
        return {
            "feature_count": (Y.T @ X).toarray(),
            "histograms": [WordCountHistogram._of_checked(X[codes == c]) for c in range(self.classes_.shape[0])],
        }

    @staticmethod
    def _merge_counts(a, b):
        return {
            "class_count": a["class_count"] + b["class_count"],
            "feature_count": a["feature_count"] + b["feature_count"],
            "histograms": [g + h for g, h in zip(a["histograms"], b["histograms"], strict=True)],
        }

    def _add_counts(self, counts):
        self.feature_count_ = self.feature_count_ + counts["feature_count"]
        self.statistics_ = [g + h for g, h in zip(self.statistics_, counts["histograms"], strict=True)]

    @available_if(lambda self: self._incremental)
    def partial_fit(self, X: MatrixLike, y: ArrayLike, classes: ArrayLike | None = None) -> Self:
        """Add a batch of documents; the model equals ``fit`` on all batches so far.

        The batches' histograms (:class:`WordCountHistogram`, ``statistics_``) are added up and
        the concentrations fitted again from them, so the result equals one ``fit`` on the
        concatenated batches; no document is kept. Until every class has a non-empty document
        the statistics are only accumulated and the model is not fitted yet.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
            A batch of word-count documents; a dask array is counted chunk by chunk as in ``fit``.
        y : array-like or dask array of shape (n_samples,)
            The batch's class labels, each one of ``classes``.
        classes : array-like, optional
            All class labels (at least two); required on the first call.

        Returns
        -------
        self
            The estimator, updated with the batch.
        """
        self._accumulating = True
        try:
            return super().partial_fit(X, y, classes=classes)
        finally:
            self.__dict__.pop("_accumulating", None)

    def __sklearn_is_fitted__(self):
        return hasattr(self, "concentration_")

    def _update_parameters(self):
        C, D = self.feature_count_.shape
        empty = [c for c, histogram in enumerate(self.statistics_) if histogram.n_nonzero == 0]
        if empty and getattr(self, "_accumulating", False):
            for name in ("concentration_", "n_iter_", "converged_", "total_concentration_", "_dcm_tables",
                         "class_log_prior_"):  # fmt: skip
                self.__dict__.pop(name, None)
            return
        if empty:
            raise InputValueError(
                f"class {plain(self.classes_[empty[0]])} has no words (no documents, or all empty): "
                "its Dirichlet-compound-multinomial cannot be fitted"
            )
        concentration = np.empty((C, D))
        n_iter = np.zeros(C, dtype=np.int64)
        converged = np.zeros(C, dtype=bool)
        total = np.zeros(C)
        for c, histogram in enumerate(self.statistics_):
            fit = fit_histogram(histogram, None, self._floor(), self.max_iter, self.tol, self._feature_names())
            auto = isinstance(self.min_concentration, str)
            alpha = np.maximum(fit.alpha, fit.alpha.sum() / D) if auto else fit.alpha
            concentration[c], n_iter[c], converged[c] = alpha, fit.n_iter, fit.converged
            total[c] = fit.alpha.sum()
        self.concentration_, self.n_iter_, self.converged_, self.total_concentration_ = (
            concentration,
            n_iter,
            converged,
            total,
        )
        if not self.converged_.all():
            warnings.warn(
                f"Minka's fixed point did not converge in max_iter={self.max_iter} iterations for "
                f"{int((~self.converged_).sum())} class(es); increase max_iter or tol",
                ConvergenceWarning,
                stacklevel=3,
            )
        self._dcm_tables = DirichletMultinomialTables(self.concentration_)
        self.class_log_prior_ = self._class_log_prior("posterior_mean")

    def _check_fitted_finite(self, X):
        super()._check_fitted_finite(X)
        if not hasattr(self, "concentration_"):
            return
        cause = overflow_cause(X, self._feature_names())
        check_finite_output("the fitted concentrations concentration_", self.concentration_, cause=cause)

    def _joint_log_likelihood(self, X):
        return self._dcm_tables.log_pmf(X, self.include_multinomial_coef) + self.class_log_prior_
