"""Bayesian binary naive Bayes with correction for feature-selection bias.

Model (thesis §2.3, eq. 2.15–2.26; spec ``selection-bias.md`` §4): binary response y
and binary features x_1..x_p,

    y | ψ ~ Bernoulli(ψ),                 ψ ~ Beta(f1, f0),
    x_j | y, φ ~ Bernoulli(φ_{y,j}),      φ_{0,j}, φ_{1,j} | α, θ_j ~ Beta(αθ_j, α(1−θ_j)),
    θ_j ~ Uniform(0, 1),                  α ~ Inverse-Gamma(a, b).

ψ and φ are integrated out analytically (eq. 2.28–2.33), θ by Simpson's rule and α
by the midpoint rule in prior quantiles (§2.3.3). Predictions use only the k
selected features; with correction they also condition on the event that the other
p − k features were discarded, which multiplies the integrand in α by q(α)^{p−k}
(eq. 2.41–2.44; :mod:`hdbayes.selection_bias.adjustment`). No MCMC is involved.
"""

from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp
from scipy import stats
from scipy.special import logsumexp
from sklearn.utils.validation import check_is_fitted

from hdbayes._validation import (
    check_count,
    check_positive,
)
from hdbayes.quadrature import QuadratureRule, gauss_legendre_rule, inverse_gamma_midpoint_grid, simpson_rule
from hdbayes.selection import abs_correlation
from hdbayes.selection_bias._base import BinarySelectionBiasClassifier
from hdbayes.selection_bias.adjustment import naive_bayes_log_discard_probability
from hdbayes.special import log_rising_factorial, log_rising_factorial_table

__all__ = ["BiasCorrectedNaiveBayes", "feature_integrals", "log_class_numerators"]


@numba.njit(cache=True, nogil=True)
def _integrate_features(ones, class_sizes, alpha, theta, log_weights, ones_table, zeros_table, log_totals):
    """Compiled θ quadrature for every (α point, feature); see :func:`feature_integrals`.

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
                    i = ones[c, j]
                    value += ones_table[m, t, i] + zeros_table[m, t, class_sizes[c] - i] - log_totals[m, c]
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
    ones = np.ascontiguousarray(ones, dtype=np.int64)
    alpha = np.asarray(alpha, dtype=np.float64)
    sizes = np.asarray(class_sizes, dtype=np.int64)
    a = alpha[:, None] * theta_rule.nodes[None, :]
    b = alpha[:, None] * (1.0 - theta_rule.nodes[None, :])
    # log Γ(αθ + I)/Γ(αθ) and log Γ(α(1−θ) + I)/Γ(α(1−θ)) for I = 0..max N_c, shared by both classes
    ones_table = log_rising_factorial_table(a, int(sizes.max()))
    zeros_table = log_rising_factorial_table(b, int(sizes.max()))
    log_totals = np.stack([log_rising_factorial(alpha, int(size)) for size in sizes], axis=1)
    return _integrate_features(
        ones, sizes, alpha, theta_rule.nodes, theta_rule.log_weights, ones_table, zeros_table, log_totals
    )


def log_class_numerators(X, log_one, log_zero, log_adjustment, class_log_prior, columns=None):
    """log P(y* = c, x* | training data, S) up to a common constant (thesis eq. 2.34–2.44).

        log num(c) = log ψ̂_c + logsumexp_m [ log_adjustment_m + Σ_j log Q_j(α_m, c) ] − log K,

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
    scores += log_adjustment[None, :, None]
    return logsumexp(scores, axis=1) - np.log(n_alpha) + class_log_prior[None, :]


class BiasCorrectedNaiveBayes(BinarySelectionBiasClassifier):
    """Bayesian binary naive Bayes with correction for feature-selection bias.

    ``fit`` receives **all p candidate features**, selects the ``n_features``
    features most correlated with y (or those above ``threshold``) and fits the
    Bayesian naive Bayes model of Li, Zhang & Neal (thesis §2.3) on them. With
    ``correct=True`` the posterior also conditions on the fact that the other
    p − k features were discarded, which makes the predictive probabilities
    calibrated instead of overconfident. Because the selection is inside ``fit``,
    cross-validation with scikit-learn is honest.

    Parameters
    ----------
    n_features : int, optional
        k, the number of features to keep (1 ≤ k ≤ p), chosen by the absolute
        sample correlation with y on the training data. The k-th largest value is
        the threshold γ. The discarded features are then known to lie strictly
        below γ (the correction uses the event |COR| < γ; a lattice point exactly
        at γ counts as passing), unless a discarded feature ties with the k-th, in
        which case the event |COR| ≤ γ is used (ties are broken at random).
        Give at most one of ``n_features`` and ``threshold``; with neither, all
        features are used and no correction is needed.
    threshold : float, optional
        Keep the features with |COR| > ``threshold``; discarded ones satisfy
        |COR| ≤ ``threshold``.
    correct : bool, default=True
        Condition on the discarded features (the adjustment factor q(α)^{p−k}).
    f0, f1 : float, default=1.0
        Beta(f1, f0) prior of ψ = P(y = classes_[1]).
    alpha_shape, alpha_scale : float, default=0.5, 5.0
        Inverse-Gamma(a, b) prior of α, density ∝ α^{-(1+a)} e^{-b/α}.
    n_alpha : int, default=30
        K, points of the midpoint rule in the prior quantiles of α.
    n_theta : int, default=21
        Simpson points (odd) for every θ integral, endpoints included (the thesis's
        rule; used when ``theta_rule="simpson"``).
    theta_rule : {"simpson", "exact"}, default="simpson"
        ``"simpson"``: composite Simpson's rule with ``n_theta`` points, as in the
        thesis. ``"exact"``: Gauss–Legendre with ⌈(n + 2)/2⌉ nodes, which integrates
        every θ integral of this model exactly (given α each integrand is a
        polynomial in θ of degree ≤ n + 1). Simpson's 21 points cannot resolve the
        integrands when α is large (their width in θ is about 1/√(α + n)), which
        biases the posterior of α downwards and makes fits on many features
        overconfident; "exact" costs about n/40 times as much per feature.
    binarize : float or None, default=None
        None requires binary (0/1) features and raises otherwise; a number t maps
        values > t to 1 and the rest to 0, as in scikit-learn's ``BernoulliNB``.
    random_state : int, numpy.random.Generator, RandomState or None
        Random tie-breaking at the selection boundary.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    n_features_in_ : int
        p, the number of candidate features seen in ``fit``.
    selection_ : hdbayes.selection.Selection
        The selection (indices, γ, p, strictness, all |COR| values).
    selected_features_ : ndarray of shape (k,)
        Column indices of the retained features, strongest first.
    threshold_ : float
        γ.
    alpha_grid_ : ndarray of shape (n_alpha,)
        The α points.
    log_adjustment_ : ndarray of shape (n_alpha,)
        (p − k) · log q(α_m), the log adjustment factor at each α point; zeros when
        ``correct=False`` or k = p.
    log_integral_one_, log_integral_zero_ : ndarray of shape (n_alpha, k, 2)
        log Q_j(α_m, c) of eq. 2.40 for a test value x*_j = 1 and x*_j = 0, per α
        point, selected feature and class (see :func:`feature_integrals`).
    log_marginal_likelihood_ : ndarray of shape (n_alpha,)
        Σ_j log P(x_j^train | α_m, y^train) over the selected features.
    alpha_posterior_ : ndarray of shape (n_alpha,)
        Posterior probabilities of the α points (sum to one).
    posterior_density_of_log_alpha_ : ndarray of shape (n_alpha,)
        Posterior density of log α at log(alpha_grid_) (thesis Fig. 2.7): the
        probabilities rescaled to sum to K times the Jacobian α P(α).
    class_log_prior_ : ndarray of shape (2,)
        log ψ̂_c = log (f_c + N_c)/(f0 + f1 + n).

    Examples
    --------
    >>> from hdbayes import BiasCorrectedNaiveBayes
    >>> from hdbayes.datasets import simulate_naive_bayes
    >>> data = simulate_naive_bayes(n_features=2000, n_train=100, n_test=10, random_state=0)
    >>> model = BiasCorrectedNaiveBayes(n_features=10).fit(data.X_train, data.y_train)
    >>> model.predict_proba(data.X_test).shape
    (10, 2)
    """

    def __init__(
        self,
        n_features=None,
        *,
        threshold=None,
        correct=True,
        f0=1.0,
        f1=1.0,
        alpha_shape=0.5,
        alpha_scale=5.0,
        n_alpha=30,
        n_theta=21,
        theta_rule="simpson",
        binarize=None,
        random_state=None,
    ):
        self.n_features = n_features
        self.threshold = threshold
        self.correct = correct
        self.f0 = f0
        self.f1 = f1
        self.alpha_shape = alpha_shape
        self.alpha_scale = alpha_scale
        self.n_alpha = n_alpha
        self.n_theta = n_theta
        self.theta_rule = theta_rule
        self.binarize = binarize
        self.random_state = random_state

    def _check_params(self):
        self._check_selection_params()
        check_positive("f0", self.f0)
        check_positive("f1", self.f1)
        check_positive("alpha_shape", self.alpha_shape)
        check_positive("alpha_scale", self.alpha_scale)
        check_count("n_alpha", self.n_alpha)
        check_count("n_theta", self.n_theta, minimum=3, odd=True)
        if self.theta_rule not in ("simpson", "exact"):
            raise ValueError(f"theta_rule must be 'simpson' or 'exact', got {self.theta_rule!r}")

    def fit(self, X, y):
        """Select features on (X, y) and fit the model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, p)
            All candidate binary features.
        y : array-like of shape (n_samples,)
            Binary response (two distinct labels).

        Returns
        -------
        self
        """
        self._check_params()
        X, y01 = self._validate_training_data(X, y)
        selection = self._select_features(abs_correlation(X, y01), "correlation", self.random_state)

        n1 = int(y01.sum())
        class_sizes = (y01.shape[0] - n1, n1)
        X_selected = X[:, selection.indices]
        ones1 = np.asarray(X_selected.T @ y01).ravel()
        ones0 = np.asarray(X_selected.sum(axis=0)).ravel() - ones1
        ones = np.rint(np.vstack([ones0, ones1])).astype(np.int64)

        alpha_rule = inverse_gamma_midpoint_grid(self.alpha_shape, self.alpha_scale, self.n_alpha)
        if self.theta_rule == "exact":
            theta_rule = gauss_legendre_rule((y01.shape[0] + 3) // 2)
        else:
            theta_rule = simpson_rule(self.n_theta)
        self.alpha_grid_ = alpha_rule.nodes
        log_marginal, log_one, log_zero = feature_integrals(ones, class_sizes, self.alpha_grid_, theta_rule)
        self.log_integral_one_ = log_one
        self.log_integral_zero_ = log_zero

        if self.correct and selection.n_discarded > 0:
            log_q = naive_bayes_log_discard_probability(
                self.alpha_grid_,
                class_sizes[0],
                class_sizes[1],
                selection.threshold,
                strict=selection.strict,
                theta_rule=theta_rule,
            )
            self.log_adjustment_ = selection.n_discarded * log_q
        else:
            self.log_adjustment_ = np.zeros(self.n_alpha)
        self.log_marginal_likelihood_ = log_marginal.sum(axis=1)
        log_posterior = self.log_adjustment_ + self.log_marginal_likelihood_
        self.alpha_posterior_ = np.exp(log_posterior - logsumexp(log_posterior))
        prior_density = stats.invgamma.pdf(self.alpha_grid_, self.alpha_shape, scale=self.alpha_scale)
        self.posterior_density_of_log_alpha_ = self.n_alpha * self.alpha_posterior_ * self.alpha_grid_ * prior_density

        f = np.array([self.f0, self.f1])
        self.class_log_prior_ = np.log((f + np.asarray(class_sizes)) / (f.sum() + y01.shape[0]))
        return self

    def _log_class_numerators(self, X):
        X = self._validate_test_data(X)
        return log_class_numerators(
            X,
            self.log_integral_one_,
            self.log_integral_zero_,
            self.log_adjustment_,
            self.class_log_prior_,
            self.selected_features_,
        )

    def plot_alpha_posterior(self, ax=None, **kwargs):
        """Plot the posterior density of log α on the grid (thesis Fig. 2.7).

        Parameters
        ----------
        ax : matplotlib Axes, optional
        **kwargs
            Passed to ``ax.plot``.

        Returns
        -------
        matplotlib Axes
        """
        check_is_fitted(self)
        from hdbayes.plotting import plot_log_alpha_density

        return plot_log_alpha_density(self, ax=ax, **kwargs)
