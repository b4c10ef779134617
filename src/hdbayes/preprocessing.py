"""Decorrelating transform for the Gaussian classification model (Li 2009, eq. 12).

The Gaussian model of Li (2009) (its §3.1) assumes the features
are independent given the class. When, given class g, the original features z have a
multivariate normal distribution N(μ̃^(g), Σ) with a covariance common to all
classes, the Cholesky factor Σ = L Lᵀ gives new features x = L^{-1} z with
x | y = g ~ N(L^{-1} μ̃^(g), I), which fit that model. Σ is estimated by the pooled
within-class covariance S shrunk towards its diagonal (Li 2009, eq. 12),

    Σ̂(λ) = (S + λ·diag(S)) / (1 + λ),

which keeps the variances and shrinks the correlations by 1/(1 + λ) (λ = 10 for the
SRBCT data). :class:`ShrunkCovarianceWhitener` estimates Σ̂ in ``fit`` and applies
x = L^{-1} z in ``transform``, so inside a :class:`~sklearn.pipeline.Pipeline` the
estimate uses only the training cases of each cross-validation fold and is then
applied to that fold's training and test cases, as in the paper.
"""

from __future__ import annotations

import warnings
from numbers import Real
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from scipy import linalg
from sklearn.base import BaseEstimator, TransformerMixin, _fit_context
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import _check_feature_names_in, check_is_fitted

from hdbayes._validation import check_positive, overflow_error, single_class_error, validate_input
from hdbayes.exceptions import InputTypeError, InputValueError

if TYPE_CHECKING:
    from typing import Self

    from numpy.typing import ArrayLike

    from hdbayes._validation import MatrixLike

__all__ = ["ShrunkCovarianceWhitener", "pooled_within_class_covariance", "shrink_to_diagonal"]

_SPARSE_MESSAGE = (
    "ShrunkCovarianceWhitener does not accept sparse input: the whitened data are dense anyway. "
    "Sparse data was passed for X, but dense data is required; use X.toarray() to convert it "
    "to a dense numpy array."
)


def pooled_within_class_covariance(X, y):
    """Pooled within-class covariance S of the rows of X (Dudoit et al. 2002).

        S = Σ_g Σ_{i: y_i = g} (x_i − x̄^(g))(x_i − x̄^(g))ᵀ / (n − G),

    the unbiased estimate of a covariance matrix common to the G classes.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        Class labels; at least two classes and n_samples > G.

    Returns
    -------
    ndarray of shape (n_features, n_features)
    """
    X = np.asarray(X, dtype=np.float64)
    classes, codes = _pooling_classes(y, X.shape[0])
    n, n_classes = X.shape[0], classes.shape[0]
    counts = np.bincount(codes, minlength=n_classes)
    means = np.zeros((n_classes, X.shape[1]))
    np.add.at(means, codes, X)
    means /= counts[:, None]
    centred = X - means[codes]
    return centred.T @ centred / (n - n_classes)


def _pooling_classes(y, n):
    """(classes, codes) of y, refusing a single class and n ≤ G (the pooled covariance needs n > G)."""
    classes, codes = np.unique(np.asarray(y), return_inverse=True)
    if classes.shape[0] < 2:
        raise single_class_error(classes[0], what="but the pooled within-class covariance needs at least two")
    if n <= classes.shape[0]:
        raise InputValueError(
            f"the pooled within-class covariance needs more samples than classes (n > G), "
            f"got n_samples={n} and {classes.shape[0]} classes"
        )
    return classes, codes


def shrink_to_diagonal(S, lam):
    """Σ̂(λ) = (S + λ·diag(S)) / (1 + λ) (Li 2009, eq. 12).

    The diagonal (variances) is unchanged; every off-diagonal entry, hence every
    correlation, is multiplied by 1/(1 + λ).

    Parameters
    ----------
    S : ndarray of shape (p, p)
    lam : float
        λ ≥ 0; 0 leaves S unchanged.

    Returns
    -------
    ndarray of shape (p, p)
    """
    lam = check_positive("lam", lam, allow_zero=True)
    S = np.asarray(S, dtype=np.float64)
    shrunk = S / (1.0 + lam)
    np.fill_diagonal(shrunk, np.diag(S))  # (S_jj + λ S_jj)/(1 + λ) = S_jj exactly
    return shrunk


class ShrunkCovarianceWhitener(TransformerMixin, BaseEstimator):
    """Whiten by the shrunk pooled within-class covariance (Li 2009, eq. 12).

    ``fit(X, y)`` estimates the pooled within-class covariance S of X (class labels
    y), shrinks it towards its diagonal,

        Σ̂(λ) = (S + λ·diag(S)) / (1 + λ),

    and factors Σ̂ = L Lᵀ (Cholesky, L lower triangular). ``transform(X)`` maps each
    row x to L^{-1} x, i.e. returns X L^{-T}, by a triangular solve (no explicit
    inverse). If the classes share the covariance Σ̂, the transformed features are
    uncorrelated with unit variance within each class, as the Gaussian model of the
    paper assumes.

    The transform is supervised (``fit`` needs y) but does not use y afterwards.
    The data are **not centred**: like the paper, the raw rows are multiplied by
    L^{-1}, so the class means become L^{-1} μ̃^(g). Output column j is a
    combination of input columns 0..j only (the residual of feature j given the
    earlier features, scaled to unit variance), so the result depends on the
    column order.

    Parameters
    ----------
    lam : float, default=10.0
        λ ≥ 0, the shrinkage of the correlations towards zero (by the factor
        1/(1 + λ)); λ = 10 in the paper's SRBCT experiment. ``lam=0`` uses S itself,
        which is singular when p > n − G; any λ > 0 gives a positive definite Σ̂
        as long as no feature is constant within every class.

    Attributes
    ----------
    covariance_ : ndarray of shape (n_features_in_, n_features_in_)
        Σ̂(λ), the shrunk pooled within-class covariance.
    cholesky_ : ndarray of shape (n_features_in_, n_features_in_)
        Its lower Cholesky factor L (Σ̂ = L Lᵀ).
    classes_ : ndarray of shape (n_classes,)
        The class labels seen in ``fit``.
    constant_columns_ : ndarray of int
        The columns constant in the training data, output as zeros (their rows and
        columns of ``covariance_`` and ``cholesky_`` are zero).
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features seen in ``fit`` (only when X has string column names).

    See Also
    --------
    pooled_within_class_covariance : S alone.
    shrink_to_diagonal : Σ̂(λ) from S.

    Notes
    -----
    S has rank at most n − G, so for p ≥ n − G (e.g. 2308 genes and 79 training
    cases) λ must be positive. A feature with zero within-class variance has a zero
    row and column in S and makes Σ̂ singular for every λ, so it cannot be whitened:

    * a **constant** column (the same value in every training row; the Golub data
      after the usual floor and ceiling have hundreds) carries no information: it is
      left out of Σ̂ and output as zeros, with one ``UserWarning`` naming how many.
      The other columns are whitened exactly as without it. Downstream, the
      classifier sees a constant feature (F = 0), which it counts among the
      discarded ones;
    * a column constant within every class **but not overall** separates the classes
      perfectly: zeroing it would hide the most informative feature, so ``fit``
      raises an ``InputValueError`` naming it.

    A column whose within-class variance overflows (values near 1e308) is refused
    with its name, value and row, and so is a test row whose whitened values
    overflow. Sparse input is rejected (the output is dense).

    Examples
    --------
    >>> import numpy as np
    >>> from hdbayes.preprocessing import ShrunkCovarianceWhitener
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 5))
    >>> y = np.repeat([0, 1], 20)
    >>> whitener = ShrunkCovarianceWhitener(lam=10.0).fit(X, y)
    >>> whitener.transform(X).shape
    (40, 5)
    >>> bool(np.allclose(whitener.cholesky_ @ whitener.cholesky_.T, whitener.covariance_))
    True
    """

    _parameter_constraints: dict = {"lam": [Interval(Real, 0, None, closed="left")]}

    def __init__(self, lam: float = 10.0) -> None:
        self.lam = lam

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True  # class labels are needed to pool the within-class covariance
        tags.input_tags.sparse = False
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: MatrixLike, y: ArrayLike) -> Self:
        """Estimate Σ̂(λ) from (X, y) and its Cholesky factor.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Dense training data (arrays or DataFrames; no missing values).
        y : array-like of shape (n_samples,)
            Class labels: at least two classes and more samples than classes.

        Returns
        -------
        self
            The fitted whitener.
        """
        lam = float(self.lam)
        if sp.issparse(X):
            raise InputTypeError(_SPARSE_MESSAGE)
        X, y = validate_input(
            self, X, y, targets=True, accept_sparse=False, dtype=np.float64, ensure_all_finite=True,
            ensure_min_samples=2,
        )  # fmt: skip
        classes, codes = _pooling_classes(y, X.shape[0])
        n, p = X.shape
        n_classes = classes.shape[0]

        # constant columns carry no information and are output as zeros; a column constant within every class
        # but not overall has zero within-class variance too and cannot be whitened (checked exactly, since
        # rounding in the class means can leave a tiny positive variance)
        constant = np.flatnonzero(np.ptp(X, axis=0) == 0)
        if constant.size:
            shown = ", ".join(self._describe_column(j) for j in constant[:3]) + (", ..." if constant.size > 3 else "")
            warnings.warn(
                f"{constant.size} constant column{'s' if constant.size > 1 else ''} ({shown}): a constant column "
                "has no within-class variance and cannot be whitened; it is output as zeros",
                UserWarning,
                stacklevel=2,
            )
        kept = np.setdiff1d(np.arange(p), constant)
        Xk = X[:, kept]
        spread = np.zeros(kept.size)
        for g in range(n_classes):
            rows = Xk[codes == g]
            spread = np.maximum(spread, rows.max(axis=0) - rows.min(axis=0))
        with np.errstate(over="ignore", invalid="ignore"):
            S = pooled_within_class_covariance(Xk, codes)
        overflow = np.flatnonzero(~np.isfinite(np.diag(S)))
        if overflow.size:
            j = int(kept[overflow[0]])
            raise overflow_error(self._describe_column(j), "its within-class variance", X[:, j])
        degenerate = np.flatnonzero((spread == 0) | ~(np.diag(S) > 0))
        if degenerate.size:
            raise InputValueError(
                f"{self._describe_column(int(kept[degenerate[0]]))} is constant within every class but not overall "
                f"({degenerate.size} such column(s) in all): it separates the classes perfectly, but its zero "
                "within-class variance makes the shrunk covariance singular for every lam; remove such columns "
                "before whitening"
            )

        covariance = shrink_to_diagonal(S, lam)
        advice = "use lam > 0"
        p_kept = kept.size
        if p_kept > n - n_classes:
            advice = f"S has rank at most n - G = {n - n_classes} < p = {p_kept}; {advice}"
            if lam == 0:
                raise InputValueError(f"with lam=0 the pooled within-class covariance is singular: {advice}")
        potrf = linalg.lapack.get_lapack_funcs("potrf", (covariance,))
        cholesky, info = potrf(covariance, lower=True, clean=True, overwrite_a=False)
        if info < 0:  # pragma: no cover - an argument error inside LAPACK
            raise RuntimeError(f"LAPACK potrf failed with info={info}")
        # 1 − R²_j = L_jj² / Σ̂_jj is the part of feature j's variance not explained by features 0..j−1;
        # at rounding level Σ̂ is numerically singular (in exact arithmetic it is ≥ λ/(1+λ))
        if info > 0:  # the leading minor of order info is not positive definite
            j, unexplained = info - 1, 0.0
        else:
            ratios = np.diag(cholesky) ** 2 / np.diag(covariance)
            j = int(np.argmin(ratios)) if p_kept else 0
            unexplained = ratios[j] if p_kept else 1.0
        if not unexplained > max(n, p) * np.finfo(np.float64).eps:
            raise InputValueError(
                f"the shrunk covariance (lam={lam:g}) is singular: within classes {self._describe_column(kept[j])} "
                f"is (numerically) a linear combination of the columns before it "
                f"(1 - R^2 = {unexplained:.3g}); {advice}"
            )

        self.classes_ = classes
        self.constant_columns_ = constant
        self.covariance_ = np.zeros((p, p))
        self.covariance_[np.ix_(kept, kept)] = covariance
        self.cholesky_ = np.zeros((p, p))
        self.cholesky_[np.ix_(kept, kept)] = cholesky
        self._kept_cholesky = cholesky
        return self

    def transform(self, X: MatrixLike) -> np.ndarray:
        """Whiten the rows of X: x ↦ L^{-1} x, i.e. X L^{-T} (no centring).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            The rows to whiten.

        Returns
        -------
        ndarray of shape (n_samples, n_features_in_)
            The whitened rows.
        """
        check_is_fitted(self)
        if sp.issparse(X):
            raise InputTypeError(_SPARSE_MESSAGE)
        X = validate_input(self, X, reset=False, accept_sparse=False, dtype=np.float64, ensure_all_finite=True)
        kept = np.setdiff1d(np.arange(self.n_features_in_), self.constant_columns_)
        out = np.zeros(X.shape)
        # L Z = Xᵀ column by column, then Z ᵀ = X L^{-T}; constant training columns stay 0
        with np.errstate(over="ignore", invalid="ignore"):
            out[:, kept] = linalg.solve_triangular(self._kept_cholesky, X[:, kept].T, lower=True,
                                                   check_finite=False).T  # fmt: skip
        bad = np.flatnonzero(~np.isfinite(out).all(axis=1))
        if bad.size:
            i = int(bad[0])
            j = int(kept[np.argmax(np.abs(X[i, kept]))])
            raise InputValueError(
                f"the whitened row {i} is not finite: its value {X[i, j]:g} in {self._describe_column(j)} "
                "is too large for double precision; rescale it"
            )
        return out

    def get_feature_names_out(self, input_features: ArrayLike | None = None) -> np.ndarray:
        """The names of the whitened features: ``whitened0``, ``whitened1``, ….

        Parameters
        ----------
        input_features : array-like of str, optional
            Only checked against the names seen in ``fit``: output j mixes inputs
            0..j, so it is not named after input j.

        Returns
        -------
        ndarray of str objects
            ``whitened<j>`` for every output column j.
        """
        check_is_fitted(self, "n_features_in_")
        _check_feature_names_in(self, input_features, generate_names=False)
        return np.asarray([f"whitened{j}" for j in range(self.n_features_in_)], dtype=object)

    def _describe_column(self, j):
        names = getattr(self, "feature_names_in_", None)
        return f"column {j} ({names[j]!r})" if names is not None else f"column {j}"
