"""Conjugate models for discrete data: the beta-binomial and the Dirichlet-multinomial.

Murphy §3.3–3.4 (see :mod:`hdbayes.discrete`):

* :class:`BetaBinomial` — θ ~ Beta(a, b), x_i | θ ~ Bernoulli(θ) i.i.d.; posterior
  Beta(a + N_1, b + N_0) (§3.3), posterior mean / mode / variance, the
  convex-combination form of the mean, the one-trial predictive (Laplace's
  rule of succession for a = b = 1) and the beta-binomial predictive
  Bb(x | a', b', M) for M future trials.
* :class:`DirichletMultinomial` — θ ~ Dir(α), x_i | θ ~ Cat(θ); posterior Dir(α + N),
  the same quantities, and the Dirichlet-compound-multinomial (Pólya) predictive of a
  count vector (§3.4, §3.5.5).
* :func:`dirichlet_multinomial_log_pmf` — log DCM(x | α) (§3.5.5) for many
  count vectors and many α at once, dense or sparse, in O(nnz) per α: the function shared
  by the DCM predictive here, the exact Bayesian multinomial naive Bayes and the DCM
  document classifier.

A conjugate object is immutable: ``update`` returns a new object. Scalar parameters are
kept as given, so :class:`fractions.Fraction` inputs give exact answers.
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from scipy.special import gammaln

from hdbayes._numba import jit
from hdbayes._validation import check_finite_output, feature_label, first_entry
from hdbayes.discrete._base import overflow_cause
from hdbayes.exceptions import InputTypeError, InputValueError
from hdbayes.special import beta_binomial_log_pmf_table, log_beta_bernoulli, log_rising_factorial

if TYPE_CHECKING:
    from fractions import Fraction
    from typing import Any, Literal

    from numpy.typing import ArrayLike

__all__ = [
    "BetaBinomial",
    "DirichletMultinomial",
    "check_count_matrix",
    "dirichlet_multinomial_log_pmf",
    "integer_counts_fit_tables",
]


def _check_hyperparameter(name, value):
    """A finite real number > 0, returned unchanged (so a Fraction stays a Fraction)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InputTypeError(f"{name} must be a real number, got {type(value).__name__}")
    if not np.isfinite(float(value)) or value <= 0:
        raise InputValueError(f"{name} must be a finite number > 0, got {value}")
    return value


def _check_scalar_count(name, value):
    """A real number ≥ 0 (counts may be fractional pseudo-counts), returned unchanged."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InputTypeError(f"{name} must be a real number, got {type(value).__name__}")
    if not np.isfinite(float(value)) or value < 0:
        raise InputValueError(f"{name} must be a finite count >= 0, got {value}")
    return value


def _check_trials(M):
    if isinstance(M, bool) or not isinstance(M, numbers.Integral) or M < 0:
        shown = M if isinstance(M, numbers.Real) else type(M).__name__
        raise InputValueError(f"M (the number of future trials) must be an integer >= 0, got {shown}")
    return int(M)


def _check_interval_level(level):
    if not 0 < level < 1:
        raise InputValueError(f"level must lie strictly between 0 and 1, got {level}")
    return (1 - level) / 2


class BetaBinomial:
    """The beta-binomial model: θ ~ Beta(a, b), x_i | θ ~ Bernoulli(θ) (Murphy §3.3).

    ``a`` is the pseudo-count of ones (heads) and ``b`` that of zeros. The same object
    is the prior (before :meth:`update`) and the posterior (after).

    Parameters
    ----------
    a, b : float or Fraction, default=1.0
        Beta parameters, > 0.

    Examples
    --------
    >>> from fractions import Fraction
    >>> posterior = BetaBinomial(Fraction(2), Fraction(2)).update(3, 17)   # Murphy's Beta(2, 2), N_1 = 3, N_0 = 17
    >>> posterior
    BetaBinomial(a=5, b=19)
    >>> posterior.mean(), posterior.mode()
    (Fraction(5, 24), Fraction(2, 11))
    >>> round(float(posterior.predictive_pmf(0, 10)), 8)      # Bb(0 | 5, 19, 10)
    0.1417779
    """

    __slots__ = ("a", "b")

    def __init__(self, a: float | Fraction = 1.0, b: float | Fraction = 1.0) -> None:
        self.a = _check_hyperparameter("a", a)
        self.b = _check_hyperparameter("b", b)

    def __repr__(self):
        return f"BetaBinomial(a={self.a}, b={self.b})"

    def __eq__(self, other):
        return isinstance(other, BetaBinomial) and self.a == other.a and self.b == other.b

    def __hash__(self):
        return hash((self.a, self.b))

    def __reduce__(self):
        return (BetaBinomial, (self.a, self.b))

    # -- updating --------------------------------------------------------------------
    def update(self, n1: int, n0: int) -> BetaBinomial:
        """Posterior after N_1 ones and N_0 zeros: Beta(a + N_1, b + N_0) (§3.3).

        Sequential updating equals batch updating.

        Parameters
        ----------
        n1, n0 : int
            Numbers of ones and zeros observed (≥ 0).

        Returns
        -------
        BetaBinomial
            The posterior, a new object.
        """
        return BetaBinomial(self.a + _check_scalar_count("n1", n1), self.b + _check_scalar_count("n0", n0))

    def update_from(self, x: ArrayLike) -> BetaBinomial:
        """Posterior after a sequence of 0/1 outcomes ``x``.

        Parameters
        ----------
        x : array-like of shape (N,)
            The outcomes, each 0 or 1.

        Returns
        -------
        BetaBinomial
            The posterior, a new object.
        """
        x = np.asarray(x)
        if x.ndim != 1:
            raise InputValueError(f"x must be a 1-D sequence of 0/1 outcomes, got shape {x.shape}")
        if not np.isin(x, (0, 1)).all():
            raise InputValueError("x must hold only 0/1 outcomes")
        n1 = int(x.sum())
        return self.update(n1, x.shape[0] - n1)

    # -- summaries of θ ------------------------------------------------------------
    def mean(self) -> float | Fraction:
        """E[θ] = a / (a + b); for a posterior, (a + N_1)/(a + b + N) (§3.3).

        Returns
        -------
        float
            The mean of θ.
        """
        return self.a / (self.a + self.b)

    def mode(self) -> float | Fraction:
        """The mode of Beta(a, b) (the MAP estimate for a posterior; §3.3).

        Returns
        -------
        float
            (a − 1)/(a + b − 2) when a ≥ 1, b ≥ 1 and a + b > 2; 0 when a < 1 ≤ b; 1 when
            b < 1 ≤ a.

        Raises
        ------
        InputValueError
            When the density is flat (a = b = 1) or bimodal (a, b < 1).
        """
        a, b = self.a, self.b
        if a >= 1 and b >= 1 and a + b > 2:
            return (a - 1) / (a + b - 2)
        if a < 1 <= b:
            return 0 * a
        if b < 1 <= a:
            return 0 * a + 1
        raise InputValueError(f"Beta({a}, {b}) has no unique mode (flat for a = b = 1, bimodal for a, b < 1)")

    def var(self) -> float | Fraction:
        """var θ = ab / ((a + b)²(a + b + 1)) (§3.3).

        Returns
        -------
        float
            The variance of θ.
        """
        s = self.a + self.b
        return self.a * self.b / (s * s * (s + 1))

    @staticmethod
    def mle(n1: int, n0: int) -> float:
        """θ_MLE = N_1 / N (§3.3).

        Parameters
        ----------
        n1, n0 : int
            Numbers of ones and zeros observed (≥ 0, not both 0).

        Returns
        -------
        float
            The maximum-likelihood estimate of θ.
        """
        n = _check_scalar_count("n1", n1) + _check_scalar_count("n0", n0)
        if n == 0:
            raise InputValueError("the MLE needs at least one observation (N = 0)")
        return n1 / n

    def shrinkage_weight(self, n: int) -> float | Fraction:
        """λ = (a + b)/(a + b + N): the posterior mean is λ·a/(a + b) + (1 − λ)·N_1/N.

        Parameters
        ----------
        n : int
            Number of observations N (≥ 0).

        Returns
        -------
        float
            The weight λ of the prior mean.
        """
        s = self.a + self.b
        return s / (s + _check_scalar_count("n", n))

    def credible_interval(self, level: float = 0.95) -> tuple[float, float]:
        """Equal-tailed credible interval of θ, (q_{(1−level)/2}, q_{(1+level)/2}).

        Parameters
        ----------
        level : float, default=0.95
            Probability inside the interval, in (0, 1).

        Returns
        -------
        lower : float
            The quantile of θ at (1 − level)/2.
        upper : float
            The quantile of θ at (1 + level)/2.
        """
        tail = _check_interval_level(level)
        dist = self.to_scipy()
        return float(dist.ppf(tail)), float(dist.ppf(1 - tail))

    def to_scipy(self) -> Any:
        """The distribution of θ as a frozen ``scipy.stats.beta``.

        Returns
        -------
        scipy.stats.rv_continuous_frozen
            ``scipy.stats.beta(a, b)``.
        """
        from scipy import stats  # here, not at import: the models' fits do not need scipy.stats

        return stats.beta(float(self.a), float(self.b))

    # -- predictions ----------------------------------------------------------------
    def predictive_proba(self) -> float | Fraction:
        """p(x̃ = 1 | D) = E[θ | D] (§3.3); for a = b = 1 Laplace's rule (N_1 + 1)/(N + 2).

        Returns
        -------
        float
            The predictive probability of a one.
        """
        return self.mean()

    def predictive_log_pmf(self, k: ArrayLike, M: int) -> np.ndarray:
        """log Bb(k | a, b, M) = log [C(M, k) B(k + a, M − k + b)/B(a, b)], k = 0..M (§3.3).

        Parameters
        ----------
        k : int or array-like of int
            Numbers of ones in the M future trials.
        M : int
            Number of future trials (≥ 0).

        Returns
        -------
        ndarray of the shape of ``k``
            The log probabilities; −inf for k outside 0..M.
        """
        M = _check_trials(M)
        table = beta_binomial_log_pmf_table(float(self.a), float(self.b), M)
        k = np.asarray(k)
        if not np.issubdtype(k.dtype, np.integer):
            raise InputValueError(f"k must be integer numbers of successes, got dtype {k.dtype}")
        inside = (k >= 0) & (k <= M)
        return np.where(inside, table[np.clip(k, 0, M)], -np.inf)

    def predictive_pmf(self, k: ArrayLike, M: int) -> np.ndarray:
        """Bb(k | a, b, M), the number of ones in M future trials (§3.3).

        Agrees with ``scipy.stats.betabinom(M, a, b).pmf``.

        Parameters
        ----------
        k : int or array-like of int
            Numbers of ones in the M future trials.
        M : int
            Number of future trials (≥ 0).

        Returns
        -------
        ndarray of the shape of ``k``
            The probabilities; 0 for k outside 0..M.
        """
        return np.exp(self.predictive_log_pmf(k, M))

    def predictive_mean(self, M: int) -> float | Fraction:
        """E[x̃] = M a/(a + b) for M future trials (§3.3).

        Parameters
        ----------
        M : int
            Number of future trials (≥ 0).

        Returns
        -------
        float
            The predictive mean of the number of ones.
        """
        return _check_trials(M) * self.mean()

    def predictive_var(self, M: int) -> float | Fraction:
        """var x̃ = M a b (a + b + M)/((a + b)²(a + b + 1)) (§3.3).

        Parameters
        ----------
        M : int
            Number of future trials (≥ 0).

        Returns
        -------
        float
            The predictive variance of the number of ones.
        """
        M = _check_trials(M)
        s = self.a + self.b
        return M * self.a * self.b * (s + M) / (s * s * (s + 1))

    def plugin_pmf(self, k: ArrayLike, M: int, estimate: Literal["map", "mean"] = "map") -> np.ndarray:
        """Plug-in predictive Bin(k | M, θ̂) with θ̂ the posterior ``"map"`` or ``"mean"``.

        Parameters
        ----------
        k : int or array-like of int
            Numbers of ones in the M future trials.
        M : int
            Number of future trials (≥ 0).
        estimate : {"map", "mean"}, default="map"
            Which point estimate of θ to plug in.

        Returns
        -------
        ndarray of the shape of ``k``
            The binomial probabilities.
        """
        if estimate not in ("map", "mean"):
            raise InputValueError(f"estimate must be 'map' or 'mean', got {estimate!r}")
        theta = self.mode() if estimate == "map" else self.mean()
        from scipy import stats  # here, not at import: the models' fits do not need scipy.stats

        return stats.binom.pmf(k, _check_trials(M), float(theta))

    def log_marginal_likelihood(self, n1: int, n0: int, kind: Literal["sequence", "counts"] = "sequence") -> float:
        """log p(D) under this prior (§3.3).

        Parameters
        ----------
        n1, n0 : int
            Numbers of ones and zeros observed (≥ 0).
        kind : {"sequence", "counts"}, default="sequence"
            ``"sequence"``: the probability of one ordered sequence with N_1 ones and N_0
            zeros, log B(a + N_1, b + N_0)/B(a, b) — the U function of
            :func:`hdbayes.special.log_beta_bernoulli`. ``"counts"``: the probability of the
            count N_1, which adds log C(N, N_1).

        Returns
        -------
        float
            The log marginal likelihood.
        """
        n1 = _check_scalar_count("n1", n1)
        n0 = _check_scalar_count("n0", n0)
        value = float(log_beta_bernoulli(float(self.a), float(self.b), n1, n0))
        if kind == "sequence":
            return value
        if kind == "counts":
            return value + float(gammaln(n1 + n0 + 1) - gammaln(n1 + 1) - gammaln(n0 + 1))
        raise InputValueError(f"kind must be 'sequence' or 'counts', got {kind!r}")


def _check_alpha_vector(alpha, name="alpha"):
    alpha = np.asarray(alpha, dtype=np.float64)
    if alpha.ndim != 1 or alpha.shape[0] < 2:
        raise InputValueError(f"{name} must be a 1-D array of K >= 2 concentrations, got shape {alpha.shape}")
    if not np.all(np.isfinite(alpha)) or np.any(alpha <= 0):
        raise InputValueError(f"{name} must hold finite numbers > 0")
    return alpha


def _check_count_vector(counts, K, name="counts"):
    counts = np.asarray(counts, dtype=np.float64)
    if counts.shape != (K,):
        raise InputValueError(f"{name} must have shape ({K},), got {counts.shape}")
    if not np.all(np.isfinite(counts)) or np.any(counts < 0):
        raise InputValueError(f"{name} must hold finite counts >= 0")
    return counts


class DirichletMultinomial:
    """The Dirichlet-multinomial model: θ ~ Dir(α), x_i | θ ~ Cat(θ) (Murphy §3.4).

    Parameters
    ----------
    alpha : array-like of shape (K,)
        Concentrations α_k > 0 (pseudo-counts). After :meth:`update` they are the
        posterior α + N.

    Examples
    --------
    >>> model = DirichletMultinomial([2, 2, 2]).update([3, 0, 1])     # posterior Dir(5, 2, 3)
    >>> model.alpha
    array([5., 2., 3.])
    >>> model.mean()
    array([0.5, 0.2, 0.3])
    >>> round(float(DirichletMultinomial([3, 4, 5]).predictive_pmf([1, 2, 3])), 12)  # 75/884
    0.084841628959
    """

    __slots__ = ("alpha",)

    def __init__(self, alpha: ArrayLike) -> None:
        alpha = _check_alpha_vector(alpha)
        alpha.setflags(write=False)
        self.alpha = alpha

    def __repr__(self):
        return f"DirichletMultinomial(alpha={self.alpha.tolist()})"

    def __eq__(self, other):
        return isinstance(other, DirichletMultinomial) and np.array_equal(self.alpha, other.alpha)

    def __hash__(self):
        return hash(self.alpha.tobytes())

    def __reduce__(self):
        return (DirichletMultinomial, (self.alpha.copy(),))

    @property
    def n_levels(self) -> int:
        """K, the number of levels (categories 0..K − 1)."""
        return self.alpha.shape[0]

    def update(self, counts: ArrayLike) -> DirichletMultinomial:
        """Posterior Dir(α + N) after category counts N (§3.4).

        Parameters
        ----------
        counts : array-like of shape (K,)
            Non-negative counts of each category.

        Returns
        -------
        DirichletMultinomial
            The posterior, a new object.
        """
        return DirichletMultinomial(self.alpha + _check_count_vector(counts, self.n_levels))

    def update_from(self, x: ArrayLike) -> DirichletMultinomial:
        """Posterior after a sequence of categories x_i ∈ {0..K−1} (§3.4; N_k counts the x_i, not the y_i).

        Parameters
        ----------
        x : array-like of int, shape (N,)
            The observed categories.

        Returns
        -------
        DirichletMultinomial
            The posterior, a new object.
        """
        x = np.asarray(x)
        if x.ndim != 1 or (x.size and not np.issubdtype(x.dtype, np.integer)):
            raise InputValueError("x must be a 1-D sequence of integer categories")
        if x.size and (x.min() < 0 or x.max() >= self.n_levels):
            raise InputValueError(f"categories must lie in 0..{self.n_levels - 1}")
        return self.update(np.bincount(x, minlength=self.n_levels))

    def mean(self) -> np.ndarray:
        """E[θ_k] = α_k/α_0 (§3.4); for a posterior (α_k + N_k)/(α_0 + N).

        Returns
        -------
        ndarray of shape (K,)
            The mean of θ.
        """
        return self.alpha / self.alpha.sum()

    def mode(self) -> np.ndarray:
        """(α_k − 1)/(α_0 − K), defined when every α_k ≥ 1 and α_0 > K (§3.4).

        Returns
        -------
        ndarray of shape (K,)
            The mode of θ (the MAP estimate for a posterior).

        Raises
        ------
        InputValueError
            When some α_k < 1 or α_0 ≤ K (no unique interior mode).
        """
        alpha0, K = self.alpha.sum(), self.n_levels
        if np.any(self.alpha < 1) or alpha0 <= K:
            raise InputValueError(
                f"Dir({self.alpha.tolist()}) has no unique interior mode (needs all α_k >= 1, α_0 > K)"
            )
        return (self.alpha - 1) / (alpha0 - K)

    def var(self) -> np.ndarray:
        """var θ_k = α_k(α_0 − α_k)/(α_0²(α_0 + 1)) (§3.4).

        Returns
        -------
        ndarray of shape (K,)
            The marginal variances of θ.
        """
        alpha0 = self.alpha.sum()
        return self.alpha * (alpha0 - self.alpha) / (alpha0**2 * (alpha0 + 1))

    @staticmethod
    def mle(counts: ArrayLike) -> np.ndarray:
        """θ_k = N_k/N (§3.4).

        Parameters
        ----------
        counts : array-like of shape (K,)
            Non-negative counts of each category, not all 0.

        Returns
        -------
        ndarray of shape (K,)
            The maximum-likelihood estimate of θ.
        """
        counts = np.asarray(counts, dtype=np.float64)
        if counts.ndim != 1 or np.any(counts < 0) or counts.sum() == 0:
            raise InputValueError("the MLE needs a 1-D vector of counts >= 0 with N > 0")
        return counts / counts.sum()

    def credible_intervals(self, level: float = 0.95) -> np.ndarray:
        """Equal-tailed marginal intervals, θ_k ~ Beta(α_k, α_0 − α_k).

        Parameters
        ----------
        level : float, default=0.95
            Probability inside each interval, in (0, 1).

        Returns
        -------
        ndarray of shape (K, 2)
            The lower and upper quantile of each θ_k.
        """
        tail = _check_interval_level(level)
        rest = self.alpha.sum() - self.alpha
        from scipy import stats  # here, not at import: the models' fits do not need scipy.stats

        return np.column_stack([stats.beta.ppf(tail, self.alpha, rest), stats.beta.ppf(1 - tail, self.alpha, rest)])

    def to_scipy(self) -> Any:
        """The distribution of θ as a frozen ``scipy.stats.dirichlet``.

        Returns
        -------
        scipy.stats.dirichlet frozen distribution
            ``scipy.stats.dirichlet(alpha)``.
        """
        from scipy import stats  # here, not at import: the models' fits do not need scipy.stats

        return stats.dirichlet(self.alpha)

    def predictive_proba(self) -> np.ndarray:
        """p(x̃ = k | D) = (α_k + N_k)/(α_0 + N), the posterior mean (§3.4).

        Returns
        -------
        ndarray of shape (K,)
            The predictive probability of each category.
        """
        return self.mean()

    def predictive_log_pmf(self, x: ArrayLike) -> float | np.ndarray:
        """log DCM(x | α) of count vectors over M = Σ_k x_k future trials (§3.4, §3.5.5).

        Parameters
        ----------
        x : array-like of shape (K,) or (n, K), or sparse (n, K)
            Non-negative integer counts.

        Returns
        -------
        float or ndarray of shape (n,)
            The log probability of each count vector.
        """
        x_arr = x if sp.issparse(x) else np.asarray(x)
        out = dirichlet_multinomial_log_pmf(x_arr if x_arr.ndim == 2 else x_arr[None, :], self.alpha)
        return out if x_arr.ndim == 2 else float(out[0])

    def predictive_pmf(self, x: ArrayLike) -> float | np.ndarray:
        """DCM(x | α) = M!/∏x_k! · B(x + α)/B(α); agrees with ``scipy.stats.dirichlet_multinomial``.

        Parameters
        ----------
        x : array-like of shape (K,) or (n, K), or sparse (n, K)
            Non-negative integer counts.

        Returns
        -------
        float or ndarray of shape (n,)
            The probability of each count vector.
        """
        return np.exp(self.predictive_log_pmf(x))

    def log_marginal_likelihood(self, counts: ArrayLike, kind: Literal["sequence", "counts"] = "sequence") -> float:
        """log p(D) under this prior (§3.4).

        Parameters
        ----------
        counts : array-like of shape (K,)
            Non-negative counts of each category.
        kind : {"sequence", "counts"}, default="sequence"
            ``"sequence"``: log B(α + N)/B(α), the probability of one ordered sequence;
            ``"counts"`` adds the multinomial coefficient (an ordered sequence has none).

        Returns
        -------
        float
            The log marginal likelihood.
        """
        counts = _check_count_vector(counts, self.n_levels)
        value = float(
            log_rising_factorial(self.alpha, counts).sum() - log_rising_factorial(self.alpha.sum(), counts.sum())
        )
        if kind == "sequence":
            return value
        if kind == "counts":
            return value + float(gammaln(counts.sum() + 1) - gammaln(counts + 1).sum())
        raise InputValueError(f"kind must be 'sequence' or 'counts', got {kind!r}")


#: what to change when non-integral values meet the multinomial coefficient (the classifiers' option)
_COEF_HINT = "the multinomial coefficient N!/∏x_j! is defined for integer counts (include_multinomial_coef=False)"

#: integer codes must be below this (a table with a column per value 0..max would be allocated)
_MAX_CODE = 2**31


def check_count_matrix(X, *, integer=True, name="X", feature_names=None, option=None):
    """Validate a count matrix and return it as CSR float64 (a copy only when needed).

    Raises :class:`~hdbayes.exceptions.InputValueError` for NaN/inf, negative values, and
    (``integer=True``) non-integer values, naming the feature (``feature_names``: the
    estimator's ``feature_names_in_``) and, through ``option``, what the user can change.
    """
    try:
        X = sp.csr_matrix(X, dtype=np.float64) if sp.issparse(X) else sp.csr_matrix(np.asarray(X, dtype=np.float64))
    except (TypeError, ValueError) as exc:
        raise InputTypeError(f"{name} must be a numeric matrix of counts ({exc})") from exc
    values = X.data

    def where(mask):
        j, value = first_entry(X, mask)
        return f"{feature_label(j, feature_names)} has the value {value:g}"

    if not np.all(np.isfinite(values)):
        raise InputValueError(f"{name} contains NaN or infinity: {where(~np.isfinite(values))}")
    if np.any(values < 0):
        raise InputValueError(f"{name} must hold non-negative counts: {where(values < 0)}")
    if integer and np.any(values != np.round(values)):
        hint = f"; {option}" if option else ""
        raise InputValueError(f"{name} must hold integer counts: {where(values != np.round(values))}{hint}")
    return X


#: Tables of cumulative log sums are used for integer counts while their total size stays
#: below max(this, 4 · nnz); larger counts (or real values) use the log-Gamma form.
_TABLE_SIZE = 1_000_000


def integer_counts_fit_tables(X):
    """Whether the values of CSR/CSC X are integers small enough for the tables of the exact
    integer forms (per-word tables of cumulative log sums, exceedance counts)."""
    data = X.data
    if data.size == 0:
        return True
    if not np.all(data == np.round(data)) or data.max() > 2**31:
        return False
    X = X.tocsr()
    top = np.zeros(X.shape[1])
    np.maximum.at(top, X.indices, X.data)
    with np.errstate(over="ignore"):
        lengths = np.asarray(X.sum(axis=1)).ravel()
    limit = max(_TABLE_SIZE, 4 * data.size)
    return top[top >= 2].sum() <= limit and lengths.max() <= limit


class DirichletMultinomialTables:
    """Precomputed pieces of log DCM(x | α_c) for fixed α of shape (C, D): αᵀ, log αᵀ and α_c0.

    A fitted classifier keeps one, so that prediction does not recompute C·D logarithms.
    """

    __slots__ = ("alpha0", "alpha_t", "log_alpha_t")

    def __init__(self, alpha):
        self.alpha_t = np.ascontiguousarray(np.asarray(alpha, dtype=np.float64).T)  # (D, C)
        self.log_alpha_t = np.log(self.alpha_t)
        self.alpha0 = self.alpha_t.sum(axis=0)

    def __getstate__(self):
        return self.alpha_t.T.copy()

    def __setstate__(self, alpha):
        self.__init__(alpha)

    def log_pmf(self, X, include_coefficient):
        """log DCM(x_i | α_c) for validated CSR float64 counts X ≥ 0 → (n, C).

        Integer counts use exact sums of logarithms; real values (tf-idf) and huge counts
        the Gamma-function form log Γ(x + α)/Γ(α) (equal at integers). The multinomial
        coefficient needs integer counts.
        """
        with np.errstate(over="ignore"):  # an overflowing length is reported by the caller's finiteness check
            lengths, inverse = np.unique(np.asarray(X.sum(axis=1)).ravel(), return_inverse=True)
        # log Γ(α_0)/Γ(N + α_0) once per distinct document length
        alpha0_term = log_rising_factorial(self.alpha0[None, :], lengths[:, None])
        if integer_counts_fit_tables(X):
            out = self._rising_factorial_sums(X) - alpha0_term[inverse]
        else:
            out = self._rising_factorial_sums_gamma(X) - alpha0_term[inverse]
        if include_coefficient:
            log_factorials = sp.csr_matrix((gammaln(X.data + 1), X.indices, X.indptr), shape=X.shape)
            out += (gammaln(lengths + 1)[inverse] - np.asarray(log_factorials.sum(axis=1)).ravel())[:, None]
        return out

    def _rising_factorial_sums(self, X):
        """Σ_j log Γ(x_ij + α_cj)/Γ(α_cj) for CSR integer counts X (n, D) → (n, C).

        Σ_{l < x} log(α + l) = log α + Σ_{1 ≤ l < x} log(α + l). The first term is one sparse
        matrix product X⁰ @ log αᵀ (X⁰ the non-zero pattern); the rest, needed only for the
        counts ≥ 2 — few entries, concentrated on few words — is read from per-word tables
        of cumulative log sums built in a compiled pass. Cost O(nnz · C); nothing of size
        n × D is formed, and the sums are exact also for huge α (no log-Gamma cancellation).
        """
        n, D = X.shape
        pattern = sp.csr_matrix((np.ones(X.data.size), X.indices, X.indptr), shape=(n, D))
        out = np.asarray(pattern @ self.log_alpha_t)
        _add_log_rising_tail(X.indptr, X.indices, X.data, self.alpha_t, out)
        return out

    def _rising_factorial_sums_gamma(self, X):
        """Σ_j log Γ(x_ij + α_cj)/Γ(α_cj) for CSR counts X ≥ 0 (real values allowed) → (n, C).

        The Gamma-function form of :meth:`_rising_factorial_sums` (by
        :func:`hdbayes.special.log_rising_factorial`), O(nnz · C); equal to it at integers.
        """
        n = X.shape[0]
        rows = np.repeat(np.arange(n), np.diff(X.indptr))
        out = np.empty((n, self.alpha_t.shape[1]))
        for c in range(self.alpha_t.shape[1]):
            terms = log_rising_factorial(self.alpha_t[X.indices, c], X.data)
            out[:, c] = np.bincount(rows, weights=terms, minlength=n)
        return out


@jit
def _add_log_rising_tail(indptr, indices, data, alpha_t, out):
    """out[i, c] += Σ_{l=1}^{x−1} log(α_jc + l) for the CSR entries (i, j, x) with x ≥ 2.

    One table of cumulative sums per repeated word, up to its largest count.
    """
    D, n_classes = alpha_t.shape
    top = np.zeros(D, dtype=np.int64)
    for k in range(indices.shape[0]):
        x = np.int64(data[k])
        if x > top[indices[k]]:
            top[indices[k]] = x
    words = np.flatnonzero(top >= 2)
    offset = np.zeros(D, dtype=np.int64)
    size = 0
    for j in words:
        offset[j] = size
        size += top[j]
    table = np.zeros((size, n_classes))  # row offset[j] + x − 1 holds Σ_{l=1}^{x−1} log(α_j + l)
    running = np.zeros(n_classes)
    for j in words:
        running[:] = 0.0
        for t in range(1, top[j]):
            row = offset[j] + t
            for c in range(n_classes):
                running[c] += np.log(alpha_t[j, c] + t)
                table[row, c] = running[c]
    for i in range(indptr.shape[0] - 1):
        for k in range(indptr[i], indptr[i + 1]):
            if data[k] < 2:
                continue
            row = offset[indices[k]] + np.int64(data[k]) - 1
            for c in range(n_classes):
                out[i, c] += table[row, c]


def dirichlet_multinomial_log_pmf(X: ArrayLike, alpha: ArrayLike, *, include_coefficient: bool = True) -> np.ndarray:
    """log DCM(x_i | α_c) for count vectors x_i and concentration vectors α_c (Murphy §3.5.5).

        DCM(x | α) = N!/∏_j x_j! · Γ(α_0)/Γ(N + α_0) · ∏_j Γ(x_j + α_j)/Γ(α_j)

    (with one ratio of multivariate Betas, not a product over j). Only the
    non-zero x_ij enter the last product, so the cost is O(nnz · C); sparse input is never
    densified.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n, D)
        Non-negative counts. Real values (tf-idf) are allowed without the coefficient:
        the Gamma-function form Γ(α_0)/Γ(N + α_0) · ∏_j Γ(x_j + α_j)/Γ(α_j) extends the
        integer form (a weight, not a probability of a real vector).
    alpha : array-like of shape (D,) or (C, D)
        Concentrations > 0.
    include_coefficient : bool, default=True
        Include log N!/∏ x_j! (set False when it cancels, e.g. in p(y | x)); defined for
        integer counts only.

    Returns
    -------
    ndarray of shape (n,) if alpha is 1-D, else (n, C)
        The values log DCM(x_i | α) for every row x_i of X, or log DCM(x_i | α_c) for every row and every
        concentration vector α_c (column c).

    Examples
    --------
    >>> round(float(np.exp(dirichlet_multinomial_log_pmf([[2, 0]], [1.0, 1.0])[0])), 12)  # 1/3
    0.333333333333
    """
    alpha = np.asarray(alpha, dtype=np.float64)
    one_vector = alpha.ndim == 1
    alpha2 = alpha[None, :] if one_vector else alpha
    if alpha2.ndim != 2:
        raise InputValueError(f"alpha must have shape (D,) or (C, D), got {alpha.shape}")
    if not np.all(np.isfinite(alpha2)) or np.any(alpha2 <= 0):
        raise InputValueError("alpha must hold finite concentrations > 0")
    X = check_count_matrix(
        X, integer=include_coefficient,
        option="the multinomial coefficient N!/∏x_j! is defined for integer counts (include_coefficient=False)",
    )  # fmt: skip
    if X.shape[1] != alpha2.shape[1]:
        raise InputValueError(f"X has {X.shape[1]} columns but alpha has {alpha2.shape[1]} entries")
    with np.errstate(over="ignore", invalid="ignore"):
        out = DirichletMultinomialTables(alpha2).log_pmf(X, include_coefficient)
    if not np.isfinite(out).all():
        check_finite_output("the Dirichlet-compound-multinomial log-probability", out, cause=overflow_cause(X))
    return out[:, 0] if one_vector else out
