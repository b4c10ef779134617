"""Bayesian binary naive Bayes with correction for feature-selection bias.

Model (thesis §2.3, eq. 2.15–2.26; Li, Zhang & Neal 2008): binary response y
and binary features x_1..x_p,

    y | ψ ~ Bernoulli(ψ),                 ψ ~ Beta(f1, f0) (``class_pseudo_count`` = (f0, f1)),
    x_j | y, φ ~ Bernoulli(φ_{y,j}),      φ_{0,j}, φ_{1,j} | α, θ_j ~ Beta(αθ_j, α(1−θ_j)),
    θ_j ~ Uniform(0, 1),                  α ~ Inverse-Gamma(a, b).

ψ and φ are integrated out analytically (eq. 2.28–2.33), θ exactly by Gauss–Legendre
(given α the integrands are polynomials in θ) and α by an adaptive trapezoidal rule in
log α; the thesis's rules (Simpson in θ, the midpoint rule in prior quantiles of α,
§2.3.3) remain available as ``theta_rule="simpson", alpha_rule="midpoint"``. Predictions use only the k
selected features; with correction they also condition on the event that the other
p − k features were discarded, which multiplies the integrand in α by q(α)^{p−k}
(eq. 2.41–2.44; :mod:`hdbayes.selection_bias.adjustment`). No MCMC is involved.
"""

from __future__ import annotations

from numbers import Integral
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from hdbayes._numba import jit
from hdbayes._special_kernels import log_rising_factorial_scalar
from hdbayes._validation import (
    check_binarize,
    check_binary_target,
    check_count,
    check_finite_output,
    fit_binarize_thresholds,
)
from hdbayes.exceptions import InputValueError
from hdbayes.quadrature import QuadratureRule, inverse_gamma_logpdf
from hdbayes.selection_bias._base import (
    BINARY_PARAMETER_CONSTRAINTS,
    POSITIVE,
    BinarySelectionBiasClassifier,
    check_rule_memory,
    class_log_prior,
    integrate_over_alpha,
)
from hdbayes.selection_bias._statistics_classifier import StatisticsClassifier
from hdbayes.selection_bias.adjustment import (
    check_theta_rule,
    naive_bayes_log_discard_probability,
    theta_quadrature,
)
from hdbayes.special import log_rising_factorial, log_rising_factorial_table
from hdbayes.statistics.binary_counts import BinaryClassCounts, check_binary_chunk
from hdbayes.statistics.chunks import dask_class_codes

if TYPE_CHECKING:
    from typing import Any, Literal, Self

    from matplotlib.axes import Axes
    from numpy.typing import ArrayLike

    from hdbayes._validation import RandomStateLike

__all__ = ["BiasCorrectedNaiveBayes", "alpha_posterior", "feature_integrals", "log_class_numerators"]


def _dask_binary_target(y):
    """(classes, y coded 0/1) of a numpy or dask y, with the in-memory checks; a dask y stays
    a dask array (only its distinct labels are computed)."""
    classes, codes = dask_class_codes(y)
    check_binary_target(classes)
    return classes, codes


@jit
def _integrate_features(
    ones, class_sizes, one_columns, zero_columns, alpha, theta, log_weights, ones_table, zeros_table, log_totals
):
    """Compiled θ quadrature for every (α point, feature); see :func:`feature_integrals`.

    log Γ(αθ + I_{c,j})/Γ(αθ) is ``ones_table[m, t, one_columns[c, j]]`` and log Γ(α(1−θ) + N_c − I_{c,j})/Γ(α(1−θ))
    is ``zeros_table[m, t, zero_columns[c, j]]`` (the counts themselves for full tables, their positions among
    the counts tabulated for compact ones).

    Per (m, j) the integrand is exponentiated once with its maximum factored out, and
    the three integrals (marginal, × φ̂, × (1 − φ̂)) are sums of positive terms — no
    cancellation, and only n_θ exponentials per (m, j).
    """
    n_alpha = alpha.shape[0]
    n_theta = theta.shape[0]
    k = ones.shape[1]
    log_marginal = np.empty((n_alpha, k))
    log_one = np.empty((n_alpha, k, 2))
    log_zero = np.empty((n_alpha, k, 2))
    log_l = np.empty(n_theta)
    scaled = np.empty(n_theta)
    for m in range(n_alpha):
        for j in range(k):
            peak = -np.inf
            for t in range(n_theta):
                value = log_weights[t]
                for c in range(2):
                    one, zero = one_columns[c, j], zero_columns[c, j]
                    value += ones_table[m, t, one] + zeros_table[m, t, zero] - log_totals[m, c]
                log_l[t] = value
                if value > peak:
                    peak = value
            total = 0.0
            for t in range(n_theta):
                scaled[t] = np.exp(log_l[t] - peak)
                total += scaled[t]
            log_marginal[m, j] = peak + np.log(total)
            for c in range(2):
                i = ones[c, j]
                with_one = 0.0
                with_zero = 0.0
                for t in range(n_theta):
                    with_one += scaled[t] * (alpha[m] * theta[t] + i)
                    with_zero += scaled[t] * (alpha[m] * (1.0 - theta[t]) + class_sizes[c] - i)
                log_denominator = np.log(alpha[m] + class_sizes[c])
                log_one[m, j, c] = peak + np.log(with_one) - log_denominator
                log_zero[m, j, c] = peak + np.log(with_zero) - log_denominator
    return log_marginal, log_one, log_zero


@jit
def _log_rising_factorial_grid(a, counts):
    out = np.empty(a.shape + counts.shape)
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            for c in range(counts.shape[0]):
                out[i, j, c] = log_rising_factorial_scalar(a[i, j], counts[c])
    return out


def _log_rising_factorial_at(a, counts):
    """log Γ(a + I)/Γ(a) for a 2-D array of a ≥ 0 and a few counts I, compiled: shape a.shape + (len(counts),).

    The formulas of :func:`hdbayes.special.log_rising_factorial`, for a table of only the counts the features
    need (:func:`feature_integrals` with few features and many cases; the vectorised function is ~10 times
    slower there).
    """
    a = np.ascontiguousarray(a, dtype=np.float64)
    if a.ndim != 2:
        raise InputValueError(f"a must be 2-D, got {a.ndim} dimension(s)")
    return _log_rising_factorial_grid(a, np.ascontiguousarray(counts, dtype=np.float64))


#: The default θ rule of log q is converged until (p − k) log q changes by at most this (for n > 2048; exact below).
_ADJUSTMENT_TOLERANCE = 1e-6

#: Table entries (α points × θ nodes × counts) formed at once by :func:`feature_integrals`.
_TABLE_ENTRIES = 4_000_000


def feature_integrals(ones, class_sizes, alpha, theta_rule: QuadratureRule):
    """θ integrals of every feature at every α point (thesis eq. 2.33, 2.39–2.40).

    For feature j with I_{c,j} ones among the N_c training cases of class c, and
    L_j(θ, α) = ∏_c U(αθ, α(1−θ), I_{c,j}, N_c − I_{c,j}) (eq. 2.33):

    * ``log_marginal[m, j]``  = log ∫ L_j(θ, α_m) dθ = log P(x_j^train | α_m, y^train);
    * ``log_one[m, j, c]``    = log ∫ L_j(θ, α_m) φ̂_{c,j}(θ) dθ,
    * ``log_zero[m, j, c]``   = log ∫ L_j(θ, α_m) (1 − φ̂_{c,j}(θ)) dθ,

    with φ̂_{c,j}(θ) = (α θ + I_{c,j}) / (α + N_c) (eq. 2.39). ``log_one`` and
    ``log_zero`` are log Q_j(α_m, c) of eq. 2.40 for a test value x*_j = 1 and 0; they
    add up to the marginal. U is evaluated in its product form from tables of
    log Γ(a + I)/Γ(a), so the endpoints θ ∈ {0, 1} get the exact limits.

    Parameters
    ----------
    ones : ndarray of shape (2, k)
        I_{c,j}, the number of ones of each feature in each class.
    class_sizes : sequence of two ints
        (N_0, N_1).
    alpha : ndarray of shape (K,)
    theta_rule : QuadratureRule

    Returns
    -------
    log_marginal : ndarray of shape (K, k)
    log_one, log_zero : ndarray of shape (K, k, 2)
    """
    ones = np.asarray(ones, dtype=np.int64)
    alpha = np.asarray(alpha, dtype=np.float64)
    sizes = np.asarray(class_sizes, dtype=np.int64)
    # features with the same counts (I_0, I_1) have the same integrals: compute each pair once
    # (at most (N_0 + 1)(N_1 + 1) pairs, however many features), then index back
    pairs, inverse = np.unique(ones, axis=1, return_inverse=True)
    inverse = inverse.ravel()
    nodes = np.asarray(theta_rule.nodes, dtype=np.float64)
    log_totals = np.stack([log_rising_factorial(alpha, int(size)) for size in sizes], axis=1)
    # log Γ(αθ + I)/Γ(αθ) and log Γ(α(1−θ) + I)/Γ(α(1−θ)), shared by both classes: a table of every
    # I = 0..max N_c by cumulative sums, or, when the pairs need far fewer counts than that (few features,
    # many cases: the table would be O(K · n_θ · n) = 10^11 entries at n = 20 000), only the counts needed
    # (_log_rising_factorial_at, O(K · n_θ · k)); α in chunks of at most _TABLE_ENTRIES entries either way
    width = int(sizes.max()) + 1
    needed = np.unique(np.concatenate([pairs.ravel(), (sizes[:, None] - pairs).ravel()]))
    compact = 4 * needed.size < width
    one_columns, zero_columns = pairs, sizes[:, None] - pairs
    if compact:
        one_columns, zero_columns = np.searchsorted(needed, one_columns), np.searchsorted(needed, zero_columns)
    chunk = max(1, _TABLE_ENTRIES // (nodes.size * (needed.size if compact else width)))
    pieces = []
    for first in range(0, alpha.size, chunk):
        part = slice(first, first + chunk)
        a = alpha[part, None] * nodes[None, :]
        b = alpha[part, None] * (1.0 - nodes[None, :])
        if compact:
            ones_table = _log_rising_factorial_at(a, needed)
            zeros_table = _log_rising_factorial_at(b, needed)
        else:
            ones_table = log_rising_factorial_table(a, width - 1)
            zeros_table = log_rising_factorial_table(b, width - 1)
        pieces.append(
            _integrate_features(
                np.ascontiguousarray(pairs), sizes, np.ascontiguousarray(one_columns),
                np.ascontiguousarray(zero_columns), alpha[part], nodes, theta_rule.log_weights, ones_table,
                zeros_table, np.ascontiguousarray(log_totals[part]),
            )  # fmt: skip
        )
    log_marginal, log_one, log_zero = (np.concatenate([piece[i] for piece in pieces]) for i in range(3))
    return log_marginal[:, inverse], log_one[:, inverse], log_zero[:, inverse]


def log_class_numerators(
    X, log_one, log_zero, log_adjustment, class_log_prior, columns=None, *, log_alpha_weights=None
):
    """log P(y* = c, x* | training data, S) up to a common constant (thesis eq. 2.34–2.44).

        log num(c) = log ψ̂_c + logsumexp_m [ log w_m + log_adjustment_m + Σ_j log Q_j(α_m, c) ],

    where log Q_j(α_m, c) is ``log_one`` or ``log_zero`` as x*_j is 1 or 0; the sum over
    j is one matrix product, so sparse test matrices stay sparse.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (N, k), or (N, p) with ``columns``
        Binary test values of the selected features.
    log_one, log_zero : ndarray of shape (K, k, 2)
        From :func:`feature_integrals`.
    log_adjustment : ndarray of shape (K,)
        (p − k) log q(α_m); zeros for the uncorrected model.
    class_log_prior : ndarray of shape (2,)
        log ψ̂_c, the Pólya-urn predictive of the class (eq. 2.31).
    columns : ndarray of shape (k,), optional
        Indices of the selected features among the columns of X.
    log_alpha_weights : ndarray of shape (K,), optional
        log w_m, the weights of the α rule in prior mass; default log(1/K) (the midpoint
        rule in prior quantiles).

    Returns
    -------
    ndarray of shape (N, 2)
    """
    n_alpha, k, n_classes = log_one.shape
    weights = (log_one - log_zero).transpose(1, 0, 2).reshape(k, n_alpha * n_classes)
    if columns is not None:
        if sp.issparse(X) or 4 * k < X.shape[1]:
            X = X[:, columns]
        else:  # a dense gather of most columns costs more than multiplying by zeros
            full = np.zeros((X.shape[1], weights.shape[1]))
            full[columns] = weights
            weights = full
    offset = log_zero.sum(axis=1)  # (K, 2)
    scores = np.asarray(X @ weights).reshape(X.shape[0], n_alpha, n_classes) + offset[None]
    if log_alpha_weights is None:
        log_alpha_weights = np.full(n_alpha, -np.log(n_alpha))
    scores += (log_adjustment + log_alpha_weights)[None, :, None]
    return logsumexp(scores, axis=1) + class_log_prior[None, :]


def alpha_posterior(alpha, log_alpha_weights, log_marginal, log_adjustment, alpha_shape, alpha_scale):
    """Posterior of α on the points of the α rule and the density of log α (thesis eq. 2.41–2.44, Fig. 2.7).

    The posterior of α is the integrand in α of eq. 2.41 without the test case, with the
    likelihood of the selected features from eq. 2.33:

        P(α | training data, S) ∝ P(α) · q(α)^{p−k} · ∏_{j=1}^{k} P(x_j^train | α, y^train),

    where P(α) is the Inverse-Gamma(a, b) prior (eq. 2.26) and q(α)^{p−k} the adjustment
    factor of eq. 2.42–2.44 (1 without correction; eq. 2.34–2.40). On a rule with nodes α_m and weights w_m in prior
    mass (Σ_m w_m g(α_m) ≈ ∫ g(α) P(α) dα) the evidence is
    E = Σ_m w_m q(α_m)^{p−k} ∏_j P(x_j^train | α_m, y^train), and

    * the posterior probability of the point α_m is w_m q(α_m)^{p−k} ∏_j P(x_j^train | α_m) / E;
    * the posterior density of log α at log α_m is P(α_m) α_m q(α_m)^{p−k} ∏_j P(x_j^train | α_m) / E
      (the density of α times the Jacobian dα/d log α = α; thesis Fig. 2.7).

    Everything is computed in logs (E by ``logsumexp``), so a factor q^{p−k} far below the
    smallest double does not underflow. A pure function: no state, no randomness.

    Parameters
    ----------
    alpha : ndarray of shape (K,)
        The α points α_m (> 0).
    log_alpha_weights : ndarray of shape (K,)
        log w_m, the weights of the α rule in prior mass.
    log_marginal : ndarray of shape (K,)
        Σ_j log P(x_j^train | α_m, y^train) over the selected features (eq. 2.33).
    log_adjustment : ndarray of shape (K,)
        (p − k) log q(α_m); zeros for the uncorrected model.
    alpha_shape, alpha_scale : float
        a and b of the Inverse-Gamma(a, b) prior of α (density ∝ α^{−(1+a)} e^{−b/α}).

    Returns
    -------
    posterior : ndarray of shape (K,)
        Posterior probabilities of the α points (sum to one).
    density_of_log_alpha : ndarray of shape (K,)
        Posterior density of log α at log α_m.

    Raises
    ------
    InputValueError
        If the log posterior or the density is not finite (the posterior underflowed: the
        selection is impossible under the prior).
    """
    cause = "the posterior of α underflowed (the selection is impossible under the model's prior)"
    log_posterior = check_finite_output(
        "the log posterior of α", log_alpha_weights + log_adjustment + log_marginal, cause=cause
    )
    log_evidence = logsumexp(log_posterior)
    posterior = np.exp(log_posterior - log_evidence)
    log_prior_density = inverse_gamma_logpdf(alpha, alpha_shape, alpha_scale)
    density = np.exp(log_adjustment + log_marginal + log_prior_density + np.log(alpha) - log_evidence)
    check_finite_output("the posterior density of log α", density, cause=cause)
    return posterior, density


class AlphaPosteriorMixin:
    """What the conjugate models (binary and categorical naive Bayes) share: the rule for α (thesis §2.3.4;
    parameters ``alpha_shape``, ``alpha_scale``, ``alpha_rule``, ``n_alpha``, ``alpha_resolution``), the
    posterior of α on its nodes and its plot."""

    def _check_alpha_rule(self):
        """The adaptive rule needs at least three starting points."""
        if self.n_alpha is not None and self.alpha_rule == "adaptive":
            check_count("n_alpha", self.n_alpha, minimum=3)

    def _fit_alpha(self, evaluate):
        """Integrate over α (:func:`~hdbayes.selection_bias._base.integrate_over_alpha`): set ``alpha_grid_``,
        ``alpha_log_weights_``, ``log_adjustment_``, ``log_marginal_likelihood_``, ``alpha_posterior_`` and
        ``posterior_density_of_log_alpha_``, and return the other arrays ``evaluate`` gave, at the rule's nodes."""
        rule, (*integrals, log_adjustment, log_marginal) = integrate_over_alpha(
            evaluate, self.alpha_shape, self.alpha_scale, rule=self.alpha_rule, n_points=self.n_alpha,
            resolution=self.alpha_resolution,
        )  # fmt: skip
        self.alpha_grid_ = rule.nodes
        self.alpha_log_weights_ = rule.log_weights
        self.log_adjustment_ = log_adjustment
        self.log_marginal_likelihood_ = log_marginal
        self.alpha_posterior_, self.posterior_density_of_log_alpha_ = alpha_posterior(
            self.alpha_grid_, self.alpha_log_weights_, log_marginal, log_adjustment, self.alpha_shape, self.alpha_scale
        )
        return integrals

    def plot_alpha_posterior(self, ax: Axes | None = None, **kwargs: Any) -> Axes:
        """Plot the posterior density of log α on the grid (thesis Fig. 2.7).

        Parameters
        ----------
        ax : matplotlib Axes, optional
            The axes to draw on (default: a new figure's).
        **kwargs
            Passed to ``ax.plot``.

        Returns
        -------
        matplotlib Axes
            The axes drawn on.
        """
        check_is_fitted(self)
        from hdbayes.plotting import plot_log_alpha_density

        return plot_log_alpha_density(self, ax=ax, **kwargs)


class BiasCorrectedNaiveBayes(AlphaPosteriorMixin, BinarySelectionBiasClassifier, StatisticsClassifier):
    """Bayesian binary naive Bayes with correction for feature-selection bias.

    ``fit`` receives **all p candidate features**, selects the ``n_features_to_select``
    features most correlated with y (or those above ``threshold``) and fits the
    Bayesian naive Bayes model of Li, Zhang & Neal (thesis §2.3) on them. With
    ``correct=True`` the posterior also conditions on the fact that the other
    p − k features were discarded, which makes the predictive probabilities
    calibrated instead of overconfident. Because the selection is inside ``fit``,
    cross-validation with scikit-learn is honest.

    Parameters
    ----------
    n_features_to_select : int, optional
        k, the number of features to keep (1 ≤ k ≤ p), chosen by the absolute
        sample correlation with y on the training data. The k-th largest value is
        the threshold γ. The discarded features are then known to lie strictly
        below γ (the correction uses the event |COR| < γ; a lattice point exactly
        at γ counts as passing), unless a discarded feature ties with the k-th, in
        which case the event |COR| ≤ γ is used (ties are broken at random).
        Give at most one of ``n_features_to_select`` and ``threshold``; with neither, all
        features are used and no correction is needed.
    threshold : float, optional
        Keep the features with |COR| > ``threshold``; discarded ones satisfy
        |COR| ≤ ``threshold``.
    correct : bool, default=True
        Condition on the discarded features (the adjustment factor q(α)^{p−k}).
    class_pseudo_count : float or array-like of shape (2,), default=1.0
        The Dirichlet (here Beta) prior of the class probabilities: a pseudo-count for
        each class, or one per class in the order of ``classes_`` — (f0, f1) of the
        thesis, ψ = P(y = classes_[1]) ~ Beta(f1, f0).
    alpha_shape, alpha_scale : float, default=0.5, 5.0
        Inverse-Gamma(a, b) prior of α, density ∝ α^{-(1+a)} e^{-b/α}.
    alpha_rule : {"adaptive", "midpoint"}, default="adaptive"
        Rule for the integral over α. ``"adaptive"``
        (:func:`hdbayes.quadrature.adaptive_inverse_gamma_rule`): the trapezoidal rule in
        log α, halving the spacing wherever the posterior has mass until its log density
        is resolved (h² |d² log f/d(log α)²| ≤ ``alpha_resolution``), with the prior's
        tails added at the ends; 20 to 400 points depending on how concentrated or
        long-tailed the posterior is. ``"midpoint"``: the thesis's midpoint rule in the
        prior quantiles with ``n_alpha`` points (30 by default), which is not converged
        when the posterior of α is narrow (many features) or at small α (uncorrected
        fits): off by up to 0.19 in a predicted probability on the thesis's simulation.
    n_alpha : int, optional
        ``"midpoint"``: the number of points (default 30). ``"adaptive"``: the number of
        starting points, evenly spaced in log α between the prior quantiles 1e-15 and
        1 − 1e-6 (default: spacing 0.5, 64 points for the default prior).
    alpha_resolution : float, default=1.0
        ``"adaptive"`` only: the largest h² |d² log f/d(log α)²| accepted where the
        posterior has mass; a quarter of it halves the final spacing.
    theta_rule : {"exact", "simpson"}, default="exact"
        ``"exact"``: Gauss–Legendre with ⌈(n + 2)/2⌉ nodes, which integrates every θ
        integral of this model exactly (given α each integrand is a polynomial in θ of
        degree ≤ n + 1), the adjustment factor's too up to n = 2048; above, the adjustment factor
        uses Gauss–Legendre rules of 128, 256, … nodes until (p − k) log q(α) changes by at most
        1e-6 (its exact rule costs O(K · n²): ~80 s at n = 20 000; docs/naive_bayes.md, "Cost of
        the adjustment factor"). ``"simpson"``: composite Simpson's
        rule with ``n_theta`` points (21 by default) including θ = 0 and 1, as in the
        thesis; 21 points cannot resolve the integrands when α is large (their width in
        θ is about 1/√(α + n)), which biases the posterior of α downwards.
    n_theta : int, optional
        Points of the θ rule: Simpson's (odd, default 21) or Gauss–Legendre's (default
        the exact number; more change nothing but rounding, fewer are not exact).
    binarize : float, "median" or None, default=0.0
        Values > ``binarize`` become 1 and the rest 0, as in scikit-learn's
        ``BernoulliNB`` (0/1 data pass unchanged). ``"median"``: each feature at its
        training median (stored in ``binarize_thresholds_`` and applied to test data),
        the usual choice for gene expression. None: the data must already be 0/1 and
        any other value is refused.
    random_state : int, numpy.random.Generator, RandomState or None
        Random tie-breaking at the selection boundary.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    n_features_in_ : int
        p, the number of candidate features seen in ``fit``.
    statistics_ : hdbayes.statistics.BinaryClassCounts
        The sufficient statistics of the training data (class sizes and ones per class and
        feature) the selection and the model were computed from; ``partial_fit`` adds to them.
    selection_ : hdbayes.selection.Selection
        The selection (indices, γ, p, strictness, all |COR| values).
    selected_features_ : ndarray of shape (k,)
        Column indices of the retained features, strongest first.
    threshold_ : float
        γ.
    binarize_thresholds_ : None, float or ndarray of shape (n_features_in_,)
        The thresholds ``binarize`` stands for on the training data.
    alpha_grid_ : ndarray of shape (K,)
        The α points (nodes of the α rule).
    alpha_log_weights_ : ndarray of shape (K,)
        log of the weights of the α rule, in prior mass (Σ_m w_m g(α_m) ≈ ∫ g(α) P(α) dα).
    log_adjustment_ : ndarray of shape (K,)
        (p − k) · log q(α_m), the log adjustment factor at each α point; zeros when
        ``correct=False`` or k = p.
    log_integral_one_, log_integral_zero_ : ndarray of shape (K, k, 2)
        log Q_j(α_m, c) of eq. 2.40 for a test value x*_j = 1 and x*_j = 0, per α
        point, selected feature and class (see :func:`feature_integrals`).
    log_marginal_likelihood_ : ndarray of shape (K,)
        Σ_j log P(x_j^train | α_m, y^train) over the selected features.
    alpha_posterior_ : ndarray of shape (K,)
        Posterior probabilities of the α points (sum to one).
    posterior_density_of_log_alpha_ : ndarray of shape (K,)
        Posterior density of log α at log(alpha_grid_) (thesis Fig. 2.7).
    class_log_prior_ : ndarray of shape (2,)
        log ψ̂_c = log (f_c + N_c)/(f0 + f1 + n), with (f0, f1) the class pseudo-counts.

    Notes
    -----
    The thesis's computation (Simpson's rule with 21 points in θ, 30 midpoint points in
    the prior quantiles of α) is ``theta_rule="simpson", alpha_rule="midpoint"``; use it
    to reproduce the thesis's numbers. The defaults agree with a converged computation
    (both grids refined further) to better than 1e-9 in every predicted probability on
    the thesis's simulation (k = 10, 100, 1000) and the colon data, where the thesis's
    rules are off by up to 0.19 (see ``docs/naive_bayes.md``); they cost 1.3 to 4 times
    as much.

    The fit depends on the data only through their sufficient statistics
    (:class:`hdbayes.statistics.BinaryClassCounts`, ``statistics_``), so ``fit`` on a ``dask.array``
    (computed chunk by chunk where the chunks live), ``partial_fit`` over batches and ``fit_statistics`` on
    statistics summed over shards give the model of ``fit`` on all the data, bit for bit
    (:class:`~hdbayes.selection_bias._statistics_classifier.StatisticsClassifier`); these paths need
    ``binarize`` to be a fixed threshold or None ("median" cannot be merged).

    Examples
    --------
    >>> from hdbayes import BiasCorrectedNaiveBayes
    >>> from hdbayes.datasets import simulate_naive_bayes
    >>> data = simulate_naive_bayes(n_features=2000, n_samples=100, n_test=10, random_state=0)
    >>> model = BiasCorrectedNaiveBayes(n_features_to_select=10).fit(data.X, data.y)
    >>> model.predict_proba(data.X_test).shape
    (10, 2)
    """

    def __init__(
        self,
        n_features_to_select: int | None = None,
        *,
        threshold: float | None = None,
        correct: bool = True,
        class_pseudo_count: float | ArrayLike = 1.0,
        alpha_shape: float = 0.5,
        alpha_scale: float = 5.0,
        alpha_rule: Literal["adaptive", "midpoint"] = "adaptive",
        n_alpha: int | None = None,
        alpha_resolution: float = 1.0,
        theta_rule: Literal["exact", "simpson"] = "exact",
        n_theta: int | None = None,
        binarize: float | Literal["median"] | None = 0.0,
        random_state: RandomStateLike = None,
    ) -> None:
        self.n_features_to_select = n_features_to_select
        self.threshold = threshold
        self.correct = correct
        self.class_pseudo_count = class_pseudo_count
        self.alpha_shape = alpha_shape
        self.alpha_scale = alpha_scale
        self.alpha_rule = alpha_rule
        self.n_alpha = n_alpha
        self.alpha_resolution = alpha_resolution
        self.theta_rule = theta_rule
        self.n_theta = n_theta
        self.binarize = binarize
        self.random_state = random_state

    _parameter_constraints = {
        **BINARY_PARAMETER_CONSTRAINTS,
        "alpha_shape": [POSITIVE],
        "alpha_scale": [POSITIVE],
        "alpha_rule": [StrOptions({"adaptive", "midpoint"})],
        "n_alpha": [Interval(Integral, 1, None, closed="left"), None],
        "alpha_resolution": [POSITIVE],
        "theta_rule": [StrOptions({"exact", "simpson"})],
        "n_theta": [Interval(Integral, 1, None, closed="left"), None],
        "random_state": ["random_state", np.random.Generator],
    }

    def _check_params(self):
        """The checks that involve two parameters (single ones are in ``_parameter_constraints``)."""
        check_theta_rule(self.theta_rule, "n_theta", self.n_theta)
        self._check_alpha_rule()

    _statistics_type = BinaryClassCounts
    _fitted_attribute = "log_integral_one_"
    _not_for_prediction = (*StatisticsClassifier._not_for_prediction, "posterior_density_of_log_alpha_")

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_statistics(self, statistics: BinaryClassCounts, classes: ArrayLike = (0, 1)) -> Self:
        """Fit from the sufficient statistics of binary training data alone.

        For data that are never in one place: the sum of the statistics of several shards or sites
        (:class:`hdbayes.statistics.BinaryClassCounts`) gives the same model as ``fit`` on their union. Test
        data are binarized by ``binarize`` (a fixed threshold or None; "median" is refused, the training
        medians being unknown).

        Parameters
        ----------
        statistics : hdbayes.statistics.BinaryClassCounts
            Class sizes and ones per class and feature of 0/1 training data; their feature names, if any,
            become ``feature_names_in_``.
        classes : array-like of shape (2,), default=(0, 1)
            The labels of class 0 and class 1 of the statistics, in increasing order.

        Returns
        -------
        self
            The fitted estimator.
        """
        return self._fit_given_statistics(statistics, classes)

    # -- the hooks of StatisticsClassifier ------------------------------------------------------------------
    def _check_mergeable(self, path):
        if isinstance(self.binarize, str):
            doing = "fit on a dask array" if path == "dask" else path
            raise InputValueError(
                f"{doing} needs binarize to be a fixed threshold or None, not 'median': the medians of all the data "
                "cannot be computed from statistics merged chunk by chunk (compute the medians first and pass the "
                "data binarized, or fit in memory)"
            )

    def _batch_values(self, X, first):
        if first:
            self.binarize_thresholds_ = fit_binarize_thresholds(X, self.binarize)
        return self._binary_features(X)

    def _statistics_of(self, X, codes):
        return BinaryClassCounts._from_checked(X, codes, getattr(self, "feature_names_in_", None))

    def _dask_statistics(self, X, y):
        classes, y01 = _dask_binary_target(y)
        return BinaryClassCounts.from_dask(X, y01, binarize=check_binarize(self.binarize)), classes

    def _check_given_statistics(self, statistics, classes):
        if classes.shape != (2,) or not np.array_equal(np.unique(classes), classes):
            raise InputValueError(f"classes must be two distinct labels in increasing order, got {classes.tolist()}")
        return statistics

    def _start_from(self, statistics, classes):
        super()._start_from(statistics, classes)
        self.binarize_thresholds_ = fit_binarize_thresholds(None, self.binarize)

    def _chunk_check(self, selected):
        thresholds = self.binarize_thresholds_
        if thresholds is not None and np.ndim(thresholds) == 1:
            thresholds = np.asarray(thresholds)[selected]
        names = getattr(self, "feature_names_in_", None)
        return check_binary_chunk, {"threshold": thresholds, "columns": selected, "feature_names": names}

    def _prediction_view(self, selected):
        view = super()._prediction_view(selected)
        view.binarize_thresholds_ = None  # the chunks are binarized by _chunk_check
        return view

    def _fit_from_statistics(self, counts):
        """Select features and fit the model from the sufficient statistics of the training data."""
        log_prior = class_log_prior(counts.class_counts, self.class_pseudo_count)  # checked before the α integration
        selection = self._select_features(
            counts.correlation(), "correlation", self.random_state, constant=counts.constant_features()
        )
        n = counts.n_samples
        class_sizes = (int(counts.class_counts[0]), int(counts.class_counts[1]))
        ones = counts.ones[:, selection.indices]
        check_rule_memory(self.n_alpha, self.n_theta, n_samples=n, n_tables=selection.n_selected, n_classes=2,
                          legendre=self.theta_rule == "exact")  # fmt: skip
        theta_rule = theta_quadrature(self.theta_rule, self.n_theta, n, simpson_points=21)
        corrected = self.correct and selection.n_discarded > 0
        # the default exact rule of log q: converged to _ADJUSTMENT_TOLERANCE in (p − k) log q when it has more than
        # 1025 nodes (n > 2048), where the exact one costs O(K · n²)
        default_rule = self.theta_rule == "exact" and self.n_theta is None
        q_rule = dict(theta_rule=None, tolerance=_ADJUSTMENT_TOLERANCE / max(selection.n_discarded, 1))

        def evaluate(alpha):
            """log of the α integrand without the prior: Σ_j log P(x_j | α, y) + (p − k) log q(α)."""
            log_marginal, log_one, log_zero = feature_integrals(ones, class_sizes, alpha, theta_rule)
            if corrected:
                log_q = naive_bayes_log_discard_probability(
                    alpha, class_sizes[0], class_sizes[1], selection.threshold, strict=selection.strict,
                    **(q_rule if default_rule else dict(theta_rule=theta_rule)),
                )  # fmt: skip
                log_adjustment = selection.n_discarded * log_q
            else:
                log_adjustment = np.zeros(alpha.shape[0])
            return log_one, log_zero, log_adjustment, log_marginal.sum(axis=1)

        self.log_integral_one_, self.log_integral_zero_ = self._fit_alpha(evaluate)
        self.class_log_prior_ = log_prior
        return self

    def _joint_log_likelihood(self, X):
        return log_class_numerators(
            X,
            self.log_integral_one_,
            self.log_integral_zero_,
            self.log_adjustment_,
            self.class_log_prior_,
            self.selected_features_,
            log_alpha_weights=self.alpha_log_weights_,
        )

    def _selected_joint_log_likelihood(self, X, first_row=0):
        return log_class_numerators(
            X, self.log_integral_one_, self.log_integral_zero_, self.log_adjustment_, self.class_log_prior_,
            log_alpha_weights=self.alpha_log_weights_,
        )  # fmt: skip

    def _prediction_row_bytes(self, k):
        # the selected columns as float64, and the scores of every α point and class with log-sum-exp's copies
        return 8 * (k + 4 * self.alpha_grid_.shape[0] * self.classes_.shape[0])
