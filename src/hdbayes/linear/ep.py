"""Expectation propagation for binary probit classification with a Gaussian prior on the latent values.

The latent values f = (f_1, …, f_n) at the training cases have the prior N(0, K) and each case
contributes the probit likelihood Φ(y_i f_i), y_i ∈ {−1, +1} (Rasmussen & Williams 2006, §3.6; "R&W"
below). EP replaces every likelihood term by an unnormalised Gaussian site
t̃_i(f_i) = C_i exp(−τ̃_i f_i²/2 + ν̃_i f_i) in natural parameters and refines the sites until each
matches the first two moments of its tilted distribution (docs/linear.md, eq. 5–8).

All sites are updated in parallel from the current marginals, with damping in natural parameters (as
:mod:`hdbayes.spike_slab.ep`); the Gaussian part is recomputed from scratch after every sweep through the
Cholesky factor of B = I + S̃^½ K S̃^½ (R&W eq. 3.67), so no rank-one update accumulates round-off and
nothing is ever inverted but B, whose eigenvalues are ≥ 1. The cost is O(n³) per sweep; the features never
appear (K is the only input): for the linear model K = s² X Xᵀ/p + σ_b² 11ᵀ.

Functions:

* :func:`gaussian_marginals` — Σ's diagonal and μ = Σ ν̃ for given sites;
* :func:`tilted_moments` — the cavity, log Ẑ_i and the matched moments for the probit term;
* ``_ep_sweeps`` — the one damped parallel loop, given the marginals and the tilted moments of a likelihood (the
  binary and the multinomial probit both run it);
* :func:`probit_ep` — the loop for the probit likelihood; returns an :class:`EPFit`;
* :func:`EPFit.log_evidence` — log Z_EP (R&W eq. 3.65 in a stable natural-parameter form, eq. 9);
* :func:`EPFit.predict_latent` — μ*, σ*² of the latent at new cases (R&W Algorithm 3.6);
* :func:`EPFit.loo_log_density` — the leave-one-out predictive densities from the cavities (docs/linear.md eq. 17).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.linalg
from scipy.special import log_ndtr
from sklearn.exceptions import ConvergenceWarning

__all__ = ["EPFit", "gaussian_marginals", "probit_ep", "tilted_moments"]

_LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)


def normal_over_cdf(z):
    """N(z)/Φ(z) in log space (exact for very negative z, where both underflow)."""
    z = np.asarray(z, dtype=np.float64)
    return np.exp(-0.5 * z * z - _LOG_SQRT_2PI - log_ndtr(z))


@dataclass
class _Gaussian:
    chol: np.ndarray  # lower L with L Lᵀ = B = I + S̃^½ K S̃^½
    sqrt_tau: np.ndarray
    var: np.ndarray  # diag Σ
    mean: np.ndarray  # μ = Σ ν̃


def gaussian_marginals(K, tau, nu):
    """The marginals of the Gaussian approximation q(f) = N(μ, Σ), Σ = (K⁻¹ + S̃)⁻¹, μ = Σ ν̃.

    Computed as Σ = K − K S̃^½ B⁻¹ S̃^½ K with B = I + S̃^½ K S̃^½ = L Lᵀ (R&W eq. 3.67), which needs
    neither K⁻¹ nor 1/τ̃ (τ̃ = 0 is allowed).

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Prior covariance of f.
    tau, nu : ndarray of shape (n,)
        Site precisions τ̃ ≥ 0 and precision-times-means ν̃.

    Returns
    -------
    _Gaussian
        The Cholesky factor L, S̃^½, diag Σ and μ.
    """
    sqrt_tau = np.sqrt(tau)
    n = K.shape[0]
    B = np.eye(n) + sqrt_tau[:, None] * K * sqrt_tau[None, :]
    L = scipy.linalg.cholesky(B, lower=True, check_finite=False)
    V = scipy.linalg.solve_triangular(L, sqrt_tau[:, None] * K, lower=True, check_finite=False)
    var = np.diag(K) - np.einsum("ij,ij->j", V, V)
    mean = K @ nu - V.T @ (V @ nu)
    return _Gaussian(L, sqrt_tau, var, mean)


def tilted_moments(y, var, mean, tau, nu):
    """Cavity of every site and the moments of the tilted distribution Φ(y f) N(f | μ₋, σ₋²).

    Parameters
    ----------
    y : ndarray of shape (n,)
        Labels in {−1, +1}.
    var, mean : ndarray of shape (n,)
        Marginal variances and means of q(f).
    tau, nu : ndarray of shape (n,)
        The current sites.

    Returns
    -------
    cav_tau, cav_nu : ndarray
        Cavity natural parameters τ₋ = 1/σ² − τ̃, ν₋ = μ/σ² − ν̃ (R&W eq. 3.56).
    log_z : ndarray
        log Ẑ_i = log Φ(z_i), z_i = y_i μ₋ / √(1 + σ₋²) (R&W eq. 3.58).
    hat_mean, hat_var : ndarray
        μ̂_i and σ̂_i² (R&W eq. 3.58), σ̂² written as σ₋²(1 − σ₋² r(z + r)/(1 + σ₋²)) with r = N(z)/Φ(z).
    """
    cav_tau = 1.0 / var - tau
    cav_nu = mean / var - nu
    return (cav_tau, cav_nu, *_probit_tilted(y, cav_tau, cav_nu))


def _probit_tilted(y, cav_tau, cav_nu):
    """log Ẑ, μ̂ and σ̂² of the probit terms from the cavities' natural parameters (R&W eq. 3.58)."""
    cav_var = 1.0 / cav_tau
    cav_mean = cav_nu * cav_var
    root = np.sqrt(1.0 + cav_var)
    z = y * cav_mean / root
    log_z = log_ndtr(z)
    r = normal_over_cdf(z)
    hat_mean = cav_mean + y * cav_var * r / root
    shrink = r * (z + r) / (1.0 + cav_var)  # in (0, 1/(1+σ₋²)·…) for the probit: never ≥ 1
    hat_var = cav_var * (1.0 - cav_var * shrink)
    return log_z, hat_mean, hat_var


def _site_steps(tau, nu, cav_tau, cav_nu, hat_mean, hat_var):
    """The undamped change of the sites towards the moment-matched ones (docs/linear.md eq. 7), and its size.

    New sites: τ̃ = 1/σ̂² − τ₋ (clipped at 0: ≥ 0 for a log-concave term, below only by round-off) and
    ν̃ = μ̂/σ̂² − ν₋, from the cavity (τ₋, ν₋) and the tilted moments (μ̂, σ̂²).

    Returns
    -------
    d_tau, d_nu : ndarray
        τ̃ − τ and ν̃ − ν.
    change : float
        The largest relative change, max |Δ| / (1 + |τ| + |ν|), the loops' convergence measure.
    """
    new_tau = np.maximum(1.0 / hat_var - cav_tau, 0.0)
    new_nu = hat_mean / hat_var - cav_nu
    d_tau = new_tau - tau
    d_nu = new_nu - nu
    change = float(np.max(np.maximum(np.abs(d_tau), np.abs(d_nu)) / (1.0 + np.abs(tau) + np.abs(nu))))
    return d_tau, d_nu, change


def _ep_sweeps(marginals, tilted, tau, nu, *, damping, tol, max_iter, model, warn):
    """The one EP loop of the linear models: parallel damped site updates until the sites stop changing.

    ``marginals(tau, nu)`` gives the variances and means of q (eq. 5), ``tilted(cav_tau, cav_nu)`` the matched
    means and variances of the tilted distributions; every site moves a fraction ``damping`` of the way to its
    moment-matched value (eq. 7) until the largest relative undamped change is below ``tol``. Returns the sites,
    the number of sweeps, whether they converged and the last change; warns (``ConvergenceWarning``, naming
    ``model``) when ``warn`` and they did not.
    """
    change = np.inf
    converged = False
    iteration = 0
    for iteration in range(1, max_iter + 1):  # noqa: B007 - reported below
        var, mean = marginals(tau, nu)
        cav_tau = 1.0 / var - tau
        cav_nu = mean / var - nu
        hat_mean, hat_var = tilted(cav_tau, cav_nu)
        d_tau, d_nu, change = _site_steps(tau, nu, cav_tau, cav_nu, hat_mean, hat_var)
        if change < tol:
            converged = True
            break
        tau = tau + damping * d_tau
        nu = nu + damping * d_nu
    if not converged and warn:
        warnings.warn(
            f"EP for the {model} did not converge in {max_iter} sweeps (largest relative site change "
            f"{change:.2e} > tol={tol:g}); the predictions may be inaccurate",
            ConvergenceWarning,
            stacklevel=3,
        )
    return tau, nu, iteration, converged, change


@dataclass
class EPFit:
    """The converged (or last) EP approximation for one prior covariance K.

    Attributes
    ----------
    K : ndarray of shape (n, n)
    y : ndarray of shape (n,)
        Labels in {−1, +1}.
    tau, nu : ndarray of shape (n,)
        Site natural parameters.
    n_iter : int
    converged : bool
    max_change : float
        Largest change of a site parameter in the last sweep (relative, see :func:`probit_ep`).
    """

    K: np.ndarray
    y: np.ndarray
    tau: np.ndarray
    nu: np.ndarray
    n_iter: int
    converged: bool
    max_change: float

    def _gaussian(self):
        if not hasattr(self, "_cache"):
            self._cache = gaussian_marginals(self.K, self.tau, self.nu)
        return self._cache

    def log_evidence(self) -> float:
        """log Z_EP, EP's approximation of log p(y | K) (docs/linear.md eq. 9).

        With the sites t̃_i = C_i exp(−τ̃_i f²/2 + ν̃_i f) normalised so that ∫ q₋ᵢ t̃_i = Ẑ_i,
        log Z_EP = Σ log C_i − ½ log|B| + ½ ν̃ᵀ μ, and
        log C_i = log Ẑ_i + ½ log(1 + τ̃_i/τ₋ᵢ) + ½ ν₋ᵢ²/τ₋ᵢ − ½ (ν₋ᵢ + ν̃_i)²/(τ₋ᵢ + τ̃_i),
        every term finite for τ̃_i = 0 (the same quantity as R&W eq. 3.65).

        Returns
        -------
        float
            The log evidence, in nats.
        """
        g = self._gaussian()
        cav_tau, cav_nu, log_z, _, _ = tilted_moments(self.y, g.var, g.mean, self.tau, self.nu)
        log_c = (
            log_z
            + 0.5 * np.log1p(self.tau / cav_tau)
            + 0.5 * cav_nu**2 / cav_tau
            - 0.5 * (cav_nu + self.nu) ** 2 / (cav_tau + self.tau)
        )
        return float(np.sum(log_c) - np.sum(np.log(np.diag(g.chol))) + 0.5 * self.nu @ g.mean)

    def loo_log_density(self, reduction: np.ndarray | None = None) -> np.ndarray:
        """log p(y_i | y₋ᵢ) of every training case, from its cavity (docs/linear.md eq. 17).

        The cavity q₋ᵢ(f_i) = N(μ₋ᵢ, σ₋ᵢ²) is EP's approximation of the leave-one-out posterior of f_i (Opper &
        Winther 2000), so the leave-one-out predictive is Φ(y_i μ₋ᵢ/√(1 + σ₋ᵢ² − r_i)), with r_i the variance
        ``reduction`` of a prior under which the left-out latent depends more on the others (zero: the prior K).

        Parameters
        ----------
        reduction : ndarray of shape (n,), optional
            r_i, clipped so that the variance stays ≥ 0.

        Returns
        -------
        ndarray of shape (n,)
            The leave-one-out log predictive density of each case, in nats.
        """
        g = self._gaussian()
        cav_tau, cav_nu, _, _, _ = tilted_moments(self.y, g.var, g.mean, self.tau, self.nu)
        cav_var = 1.0 / cav_tau
        if reduction is not None:
            cav_var = np.maximum(cav_var - reduction, 0.0)
        return log_ndtr(self.y * cav_nu / cav_tau / np.sqrt(1.0 + cav_var))

    def predictor(self) -> tuple[np.ndarray, np.ndarray]:
        """``(a, W)`` with μ* = k*ᵀ a and σ*² = k** − k*ᵀ W k* (R&W Algorithm 3.6).

        a = ν̃ − S̃^½ B⁻¹ S̃^½ K ν̃ and W = S̃^½ B⁻¹ S̃^½.

        Returns
        -------
        a : ndarray of shape (n,)
            The weights of the predictive mean.
        W : ndarray of shape (n, n)
            The matrix of the predictive variance's reduction.
        """
        g = self._gaussian()
        s = g.sqrt_tau
        inv_b = scipy.linalg.cho_solve((g.chol, True), np.eye(len(s)), check_finite=False)
        W = s[:, None] * inv_b * s[None, :]
        a = self.nu - W @ (self.K @ self.nu)
        return a, W

    def predict_latent(self, k_star: np.ndarray, k_star_star: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Mean and variance of the latent f* at new cases.

        Parameters
        ----------
        k_star : ndarray of shape (n, m)
            Prior covariances between the training latents and the m new ones.
        k_star_star : ndarray of shape (m,)
            Prior variances of the new latents.

        Returns
        -------
        mean : ndarray of shape (m,)
            Predictive means of the new latents.
        var : ndarray of shape (m,)
            Predictive variances of the new latents (clipped at 0).
        """
        a, W = self.predictor()
        mean = k_star.T @ a
        var = k_star_star - np.einsum("im,im->m", k_star, W @ k_star)
        return mean, np.maximum(var, 0.0)


def probit_ep(
    K: np.ndarray,
    y: np.ndarray,
    *,
    tau: np.ndarray | None = None,
    nu: np.ndarray | None = None,
    damping: float = 0.5,
    tol: float = 1e-8,
    max_iter: int = 1000,
    warn: bool = True,
) -> EPFit:
    """Run parallel damped EP for the probit likelihood until the sites stop changing.

    A sweep computes every site's proposal from the current marginals (moment matching,
    τ̃ᵢ⁽ⁿᵉʷ⁾ = 1/σ̂ᵢ² − τ₋ᵢ, ν̃ᵢ⁽ⁿᵉʷ⁾ = μ̂ᵢ/σ̂ᵢ² − ν₋ᵢ) and moves the sites a fraction ``damping`` of
    the way in natural parameters. Convergence: the largest undamped change
    max_i max(|Δτ̃ᵢ|, |Δν̃ᵢ|)/(1 + |τ̃ᵢ| + |ν̃ᵢ|) falls below ``tol``.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Prior covariance of the latent values (positive semi-definite).
    y : ndarray of shape (n,)
        Labels in {−1, +1}.
    tau, nu : ndarray of shape (n,), optional
        Starting sites (a warm start); zeros by default (q = prior).
    damping : float, default=0.5
        Step in (0, 1] towards the moment-matched sites.
    tol : float, default=1e-8
        Convergence threshold of the largest relative undamped site change.
    max_iter : int, default=1000
        Largest number of sweeps.
    warn : bool, default=True
        Emit a :class:`~sklearn.exceptions.ConvergenceWarning` when the loop stops unconverged.

    Returns
    -------
    EPFit
        The sites, whether they converged and the number of sweeps.
    """
    n = K.shape[0]
    y = np.asarray(y, dtype=np.float64)
    tau = np.zeros(n) if tau is None else np.array(tau, dtype=np.float64)
    nu = np.zeros(n) if nu is None else np.array(nu, dtype=np.float64)

    def marginals(tau, nu):
        g = gaussian_marginals(K, tau, nu)
        return g.var, g.mean

    def tilted(cav_tau, cav_nu):
        return _probit_tilted(y, cav_tau, cav_nu)[1:]

    tau, nu, iteration, converged, change = _ep_sweeps(marginals, tilted, tau, nu, damping=float(damping), tol=tol,
                                                       max_iter=max_iter, model="probit model", warn=warn)  # fmt: skip
    return EPFit(K, y, tau, nu, iteration, converged, change)


# ----------------------------------------------------------------------------------------------
# multinomial probit: y = argmax_c (f_c + ε_c), ε_c ~ N(0, 1) iid, EP with a factorised Gaussian over the classes
# ----------------------------------------------------------------------------------------------

#: Gauss–Hermite nodes for the one-dimensional integrals of the multinomial probit.
N_QUADRATURE = 64


def _hermite(n_nodes=N_QUADRATURE):
    nodes, weights = np.polynomial.hermite_e.hermegauss(n_nodes)  # ∫ e^{−x²/2} g(x) dx
    return nodes, np.log(weights) - 0.5 * np.log(2.0 * np.pi)  # log weights for E_{N(0,1)}[g]


def multinomial_probit_moments(labels, cav_mean, cav_var, n_nodes=N_QUADRATURE):
    """log Ẑ and the moments of the tilted distribution N(f | m, diag v) · P(y | f), factorised over classes.

    With g_j = f_j + ε_j ~ N(m_j, s_j²), s_j² = v_j + 1,
    P(y = c | cavity) = ∫ N(t | m_c, s_c²) Π_{j≠c} Φ((t − m_j)/s_j) dt (docs/linear.md eq. 14), computed by
    Gauss–Hermite quadrature in t. Given g_c = t the other g_j are truncated normals below t, whose moments are
    closed-form; f_j | g_j is Gaussian with regression coefficient v_j/s_j².

    Parameters
    ----------
    labels : ndarray of int of shape (n,)
    cav_mean, cav_var : ndarray of shape (n, C)

    Returns
    -------
    log_z : ndarray of shape (n,)
    hat_mean, hat_var : ndarray of shape (n, C)
    """
    n, n_classes = cav_mean.shape
    nodes, log_w = _hermite(n_nodes)
    rows = np.arange(n)
    s2 = cav_var + 1.0
    s = np.sqrt(s2)
    t = cav_mean[rows, labels][:, None] + s[rows, labels][:, None] * nodes[None, :]  # (n, Q)
    alpha = (t[:, None, :] - cav_mean[:, :, None]) / s[:, :, None]  # (n, C, Q)
    log_phi = log_ndtr(alpha)
    log_phi[rows, labels, :] = 0.0
    log_joint = log_w[None, :] + log_phi.sum(axis=1)  # (n, Q): log of the integrand's weight at each node
    log_z = np.logaddexp.reduce(log_joint, axis=1)
    weight = np.exp(log_joint - log_z[:, None])  # posterior weights of the nodes
    lam = normal_over_cdf(alpha)  # φ(α)/Φ(α)
    g_mean = cav_mean[:, :, None] - s[:, :, None] * lam  # E[g_j | g_j < t]
    g_second = g_mean**2 + s2[:, :, None] * (1.0 - alpha * lam - lam**2)  # E[g_j² | g_j < t]
    g_mean[rows, labels, :] = t
    g_second[rows, labels, :] = t**2
    eg = np.einsum("nq,ncq->nc", weight, g_mean)
    eg2 = np.einsum("nq,ncq->nc", weight, g_second)
    var_g = np.maximum(eg2 - eg**2, 0.0)
    r = cav_var / s2
    hat_mean = cav_mean + r * (eg - cav_mean)
    hat_var = cav_var * (1.0 - r) + r**2 * var_g
    return log_z, hat_mean, hat_var


@dataclass
class MultiProbitEPFit:
    """EP for the multinomial probit model with C independent latent functions of prior covariance K.

    Attributes
    ----------
    K : ndarray of shape (n, n)
    labels : ndarray of int of shape (n,)
    tau, nu : ndarray of shape (n, C)
        Site natural parameters (one one-dimensional site per case and class).
    n_iter : int
    converged : bool
    max_change : float
    """

    K: np.ndarray
    labels: np.ndarray
    tau: np.ndarray
    nu: np.ndarray
    n_iter: int
    converged: bool
    max_change: float

    intercept_variance: float | None = None

    def _marginals(self):
        if not hasattr(self, "_cache"):
            self._cache = _centred_marginals(self.K, self.tau, self.nu, self.intercept_variance)
        return self._cache

    def log_evidence(self):
        """log Z_EP (docs/linear.md eq. 9 summed over the classes, with the multinomial probit's log Ẑ_i).

        Returns
        -------
        float
        """
        gs, var, mean, centre = self._marginals()
        cav_tau = 1.0 / var - self.tau
        cav_nu = mean / var - self.nu
        log_z, _, _ = multinomial_probit_moments(self.labels, cav_nu / cav_tau, 1.0 / cav_tau)
        log_c = (
            0.5 * np.log1p(self.tau / cav_tau)
            + 0.5 * cav_nu**2 / cav_tau
            - 0.5 * (cav_nu + self.nu) ** 2 / (cav_tau + self.tau)
        )
        gauss = sum(-np.sum(np.log(np.diag(g.chol))) + 0.5 * self.nu[:, c] @ g.mean for c, g in enumerate(gs))
        if centre is not None:  # condition on b̄ = 0: + log N(0 | m̄, v̄) − log N(0 | 0, σ_b²/C)
            n_classes = self.tau.shape[1]
            gauss += -0.5 * np.log(centre.var * n_classes / self.intercept_variance) - 0.5 * centre.mean**2 / centre.var
        return float(np.sum(log_z) + np.sum(log_c) + gauss)

    def loo_log_density(self, reduction: np.ndarray | None = None) -> np.ndarray:
        """log P(y_i | y₋ᵢ) of every training case from its cavities (as :meth:`EPFit.loo_log_density`, eq. 14).

        Parameters
        ----------
        reduction : ndarray of shape (n,), optional
            Variance removed from every class's cavity (clipped at zero).

        Returns
        -------
        ndarray of shape (n,)
            The leave-one-out log probability of each case's class, in nats.
        """
        _, var, mean, _ = self._marginals()
        cav_tau = 1.0 / var - self.tau
        cav_var = 1.0 / cav_tau
        cav_mean = (mean / var - self.nu) * cav_var
        if reduction is not None:
            cav_var = np.maximum(cav_var - np.asarray(reduction)[:, None], 0.0)
        log_z, _, _ = multinomial_probit_moments(self.labels, cav_mean, cav_var)
        return log_z

    def predictor(self):
        """Per class the ``(a, W)`` of :meth:`EPFit.predictor`.

        Returns
        -------
        list of tuple
        """
        per_class = [
            EPFit(self.K, np.ones(len(self.labels)), self.tau[:, c], self.nu[:, c], 0, True, 0.0).predictor()
            for c in range(self.tau.shape[1])
        ]
        _, _, _, centre = self._marginals()
        if centre is None:
            return per_class
        sb2 = self.intercept_variance
        return [(a, W, W @ np.full(len(a), sb2)) for a, W in per_class], (sb2, centre.mean, centre.var)

    def predict_latent(self, k_star, k_star_star):
        """Marginal means and variances of the C latents at new cases (centred when ``intercept_variance`` is set).

        Parameters
        ----------
        k_star : ndarray of shape (n, m)
        k_star_star : ndarray of shape (m,)

        Returns
        -------
        mean, var : ndarray of shape (m, C)
        """
        return multinomial_probit_latent(self.predictor(), k_star, k_star_star)


def multinomial_probit_latent(predictor, k_star, k_star_star):
    """μ*_c, σ*_c² of the latents at new cases from :meth:`MultiProbitEPFit.predictor` (docs/linear.md eq. 15).

    For the centred model the class-wise Gaussian predictions are conditioned on the mean intercept b̄ = 0:
    μ*_c − κ_c m̄ / v̄ and σ*_c² − κ_c² / v̄ with κ_c = Cov(f*_c, b̄) = (σ_b² − k*ᵀ W_c σ_b² 1) / C.

    Parameters
    ----------
    predictor : list or tuple
    k_star : ndarray of shape (n, m)
    k_star_star : ndarray of shape (m,)

    Returns
    -------
    mean, var : ndarray of shape (m, C)
    """
    centred = isinstance(predictor, tuple)
    per_class = predictor[0] if centred else predictor
    mean = np.column_stack([k_star.T @ item[0] for item in per_class])
    var = np.column_stack([k_star_star - np.einsum("im,im->m", k_star, item[1] @ k_star) for item in per_class])
    if centred:
        sb2, m_bar, v_bar = predictor[1]
        n_classes = len(per_class)
        kappa = np.column_stack([(sb2 - k_star.T @ item[2]) / n_classes for item in per_class])
        mean = mean - kappa * (m_bar / v_bar)
        var = var - kappa**2 / v_bar
    return mean, np.maximum(var, 0.0)


@dataclass
class _Centre:
    mean: float  # m̄ = E_q[b̄] before conditioning
    var: float  # v̄ = Var_q[b̄] before conditioning


def _centred_marginals(K, tau, nu, intercept_variance):
    """Class-wise Gaussian marginals, conditioned on the mean intercept b̄ = 0 when ``intercept_variance`` is set.

    Under K_c = s² G + σ_b² 11ᵀ the intercept b_c of class c has prior Cov(f_c, b_c) = σ_b² 1 and
    Var(b_c) = σ_b²; its posterior under the sites follows from the same factor L as f_c:
    with u = L⁻¹ S̃^½ σ_b² 1 and V = L⁻¹ S̃^½ K, Cov_q(f_c, b_c) = σ_b² 1 − Vᵀu, Var_q(b_c) = σ_b² − uᵀu,
    E_q(b_c) = σ_b² Σ ν̃ − uᵀVν̃. Conditioning the (class-independent) q on b̄ = 0 is a rank-one update.

    Returns
    -------
    gs : list of _Gaussian
    var, mean : ndarray of shape (n, C)
        The (conditioned) marginals.
    centre : _Centre or None
    """
    n, n_classes = tau.shape
    gs = [gaussian_marginals(K, tau[:, c], nu[:, c]) for c in range(n_classes)]
    var = np.column_stack([g.var for g in gs])
    mean = np.column_stack([g.mean for g in gs])
    if intercept_variance is None:
        return gs, var, mean, None
    sb2 = float(intercept_variance)
    cov = np.empty((n, n_classes))
    b_mean = np.empty(n_classes)
    b_var = np.empty(n_classes)
    for c, g in enumerate(gs):
        u = scipy.linalg.solve_triangular(g.chol, g.sqrt_tau * sb2, lower=True, check_finite=False)
        V = scipy.linalg.solve_triangular(g.chol, g.sqrt_tau[:, None] * K, lower=True, check_finite=False)
        cov[:, c] = sb2 - V.T @ u
        b_var[c] = sb2 - u @ u
        b_mean[c] = sb2 * nu[:, c].sum() - u @ (V @ nu[:, c])
    m_bar = b_mean.sum() / n_classes
    v_bar = b_var.sum() / n_classes**2
    kappa = cov / n_classes
    return gs, var - kappa**2 / v_bar, mean - kappa * (m_bar / v_bar), _Centre(m_bar, v_bar)


def multinomial_probit_probabilities(mean, var, n_nodes=N_QUADRATURE):
    """log P(y = c) for independent f_c ~ N(mean_c, var_c): ∫ N(t | μ_c, σ_c² + 1) Π_{j≠c} Φ(·) dt by quadrature.

    Parameters
    ----------
    mean, var : ndarray of shape (m, C)

    Returns
    -------
    ndarray of shape (m, C)
    """
    m, n_classes = mean.shape
    out = np.empty((m, n_classes))
    for c in range(n_classes):
        log_z, _, _ = multinomial_probit_moments(np.full(m, c), mean, var, n_nodes)
        out[:, c] = log_z
    return out


def multinomial_probit_ep(K, labels, n_classes, *, tau=None, nu=None, damping=0.5, tol=1e-8, max_iter=1000,
                          warn=True, intercept_variance=None):  # fmt: skip
    """Parallel damped EP for the multinomial probit model, factorised over classes (docs/linear.md eq. 14–15).

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Prior covariance of each latent function.
    labels : ndarray of int of shape (n,)
        Class codes in 0..n_classes − 1.
    n_classes : int
    tau, nu : ndarray of shape (n, n_classes), optional
        Warm start.
    damping, tol, max_iter, warn
        As :func:`probit_ep`.
    intercept_variance : float, optional
        σ_b², the intercept part of K (K = s² G + σ_b² 11ᵀ). When given, the Gaussian approximation is conditioned
        on the mean intercept b̄ = Σ_c b_c / C = 0 (docs/linear.md eq. 15): the likelihood depends only on differences
        of the latents, so the exact model is unchanged, but EP no longer carries the common shift that only the
        prior pins down (the cause of slow convergence). ``None``: the plain class-factorised EP.

    Returns
    -------
    MultiProbitEPFit
    """
    n = K.shape[0]
    labels = np.asarray(labels)
    tau = np.zeros((n, n_classes)) if tau is None else np.array(tau, dtype=np.float64)
    nu = np.zeros((n, n_classes)) if nu is None else np.array(nu, dtype=np.float64)

    def marginals(tau, nu):
        _, var, mean, _ = _centred_marginals(K, tau, nu, intercept_variance)
        return var, mean

    def tilted(cav_tau, cav_nu):
        return multinomial_probit_moments(labels, cav_nu / cav_tau, 1.0 / cav_tau)[1:]

    tau, nu, iteration, converged, change = _ep_sweeps(marginals, tilted, tau, nu, damping=damping, tol=tol,
                                                       max_iter=max_iter, model="multinomial probit model",
                                                       warn=warn)  # fmt: skip
    return MultiProbitEPFit(K, labels, tau, nu, iteration, converged, change, intercept_variance)
