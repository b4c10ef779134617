"""Expectation propagation for linear regression with a generalised (group) spike-and-slab prior.

The model (Hernández-Lobato et al. 2013, §2, eq. 1–4; "the paper" below): ``y = X w + ε``, ``ε ~ N(0, σ0² I)``;
the coefficients are partitioned into G groups, each group is either exactly zero (spike) or
drawn from ``N(0, v_s I)`` (slab), and the group indicators are independent Bernoulli(p0,g).

EP (paper §3) keeps the likelihood f1 and the Bernoulli prior f3 exact and refines one
Gaussian × Bernoulli site per coefficient (eq. 16): site j is a Gaussian in w_j with variance
ṽ_j and mean m̃_j and a Bernoulli "vote" with log-odds p̃_j on the indicator of its group.
All sites are updated in parallel with damping in natural parameters (paper §3, §3.2).

Each formula is a small pure function:

* :func:`gaussian_part` — the Gaussian marginals of Q (eq. 24–25) in O(n²d) without a d × d
  matrix, plus what the cavities need (r_j = x_jᵀ K⁻¹ x_j, Xᵀ K⁻¹ X u);
* :func:`cavity_parameters` — the cavity of site j (paper eq. 26) in a stable form;
* :func:`site_update` — moment matching (paper §3.2) with the sign of the site-mean update corrected
  and the variance in a form without cancellation, and the positivity rule of paper §3.2;
* :func:`damp_sites` — damping (paper §3);
* :func:`group_log_odds` — eq. (20);
* :func:`log_evidence` — paper eq. (28) in a stable form.

:func:`expectation_propagation` runs the loop. Two paths compute the Gaussian part: *Woodbury*
on X itself (n × n systems, chosen when d > n), and *direct* (n ≥ d), which first reduces X to
its d × d triangular factor R (X = QR, so XᵀX = RᵀR and Xᵀy = Rᵀ(Qᵀy)) and then runs the same
formulas on d × d systems, at O(d³) per iteration whatever n is. The two are the same
mathematics and agree to round-off.
"""

from __future__ import annotations

import contextlib
import functools
import warnings
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np
import scipy.linalg
from scipy.linalg.blas import dtrsm
from scipy.special import expit, log_expit, logit
from sklearn.exceptions import ConvergenceWarning

from hdbayes.exceptions import InputValueError
from hdbayes.spike_slab.model import LOG_2PI, EvidenceStatistics, log_normal_at_zero, log_site_normaliser

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Literal

    from numpy.typing import ArrayLike

__all__ = [
    "EPResult",
    "GaussianPart",
    "PosteriorCovariance",
    "SiteParameters",
    "cavity_parameters",
    "damp_sites",
    "evidence_statistics",
    "expectation_propagation",
    "flat_cavity_sites",
    "gaussian_part",
    "group_log_odds",
    "log_evidence",
    "site_update",
    "single_threaded_blas",
]

#: Below this many flops per iteration (n² d) BLAS runs single-threaded: on small matrices
#: OpenBLAS threads cost more than they save, by 100× on a loaded machine.
SMALL_PROBLEM_FLOPS = 2.5e8
#: EP counts as frozen, not converged, when its last undamped step moves a group probability by more
#: than this many times ``tol`` (a frozen EP; docs/spike_slab.md, "Inference").
FROZEN_FACTOR = 10.0
#: The damping of the restarts (docs/spike_slab.md, "Inference"): at most this, whatever the first attempt's.
RESTART_DAMPING = 0.5
#: The annealed attempt (issue 29): EP is run at the noise variance σ0² times each of these factors in turn, each
#: stage warm-started from the last, and then at σ0² itself; at a large noise variance the posterior is close to
#: the prior and has one mode, and following it down reaches fixed points the start from the prior misses.
ANNEALING_FACTORS = (1e4, 1e3, 1e2, 10.0)
#: The damping of the annealed attempt's stages: at most this.
ANNEALING_DAMPING = 0.5
#: The iterations of each annealing stage before the last (at most): they only move the start.
ANNEALING_STAGE_ITER = 50


@functools.cache
def _threadpool_controller():
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def single_threaded_blas(enabled=True):
    """Context limiting BLAS to one thread (as scikit-learn's KMeans does), or a no-op."""
    return _threadpool_controller().limit(limits=1, user_api="blas") if enabled else contextlib.nullcontext()


# ----------------------------------------------------------------------------------------------
# the Gaussian part of Q (paper §3.2, eq. 24–25)
# ----------------------------------------------------------------------------------------------


def _cholesky_with_jitter(K):
    """Lower Cholesky factor of K, adding jitter to the diagonal if K is numerically singular."""
    try:
        return scipy.linalg.cholesky(K, lower=True, check_finite=False)
    except np.linalg.LinAlgError:
        pass
    scale = float(np.mean(np.diag(K)))
    for power in range(-12, -3):
        try:
            return scipy.linalg.cholesky(K + (scale * 10.0**power) * np.eye(K.shape[0]), lower=True, check_finite=False)
        except np.linalg.LinAlgError:
            continue
    raise np.linalg.LinAlgError("K = σ0² I + X Λ Xᵀ is not positive definite even with jitter")


@dataclass
class GaussianPart:
    """The Gaussian marginals of Q for given sites (paper eq. 18–19 via 24–25).

    With Λ = diag(ṽ) and ``K = σ0² I + X Λ Xᵀ = L Lᵀ``:
    ``V = Λ − Λ Xᵀ K⁻¹ X Λ`` (24) and ``m = u − ṽ ∘ Xᵀ K⁻¹ X u`` with ``u = ṽ ∘ Xᵀy/σ0² + m̃`` (25).

    Attributes
    ----------
    design, target : ndarray
        X and y (or, on the direct path, R and Qᵀy with X = QR).
    noise_variance : float
    site_variance, site_mean : ndarray of shape (d,)
    chol : ndarray of shape (n, n)
        L.
    r : ndarray of shape (d,)
        ``x_jᵀ K⁻¹ x_j``.
    xt_k_xu : ndarray of shape (d,)
        ``Xᵀ K⁻¹ X u`` (the ``Xᵀt`` of the Woodbury form, paper eq. 24–25).
    mean, variance : ndarray of shape (d,)
        m and diag(V).
    """

    design: np.ndarray
    target: np.ndarray
    noise_variance: float
    site_variance: np.ndarray
    site_mean: np.ndarray
    chol: np.ndarray
    r: np.ndarray
    xt_k_xu: np.ndarray
    mean: np.ndarray
    variance: np.ndarray
    projected_out: tuple = field(default=(0, 0.0))

    def covariance(self):
        """The posterior covariance V of the coefficients, as a :class:`PosteriorCovariance` (no copy)."""
        return PosteriorCovariance(self.design, self.chol, self.site_variance)

    def expected_squared_error(self):
        """``E_Q‖y − Xw‖² = ‖y − Xm‖² + tr(XVXᵀ)`` and the number of samples it sums over.

        Uses ``tr(XVXᵀ) = nσ0² − σ0⁴ tr(K⁻¹)`` with ``tr(K⁻¹) = ‖L⁻¹‖²_F``; on the direct path the part
        of y projected out by the QR reduction adds its residual sum of squares and its n − d samples.

        Returns
        -------
        value : float
        n_samples : int
        """
        noise = self.noise_variance
        n_out, rss_out = self.projected_out
        n_eff = self.target.shape[0]
        residual = self.target - self.design @ self.mean
        trace_xvx = n_eff * noise - noise**2 * np.sum(np.linalg.inv(self.chol) ** 2)
        return float(residual @ residual + rss_out + trace_xvx), n_eff + n_out

    def log_marginal_likelihood(self):
        """``log N(y | X m̃, σ0² I + X Λ Xᵀ)``: the first term of the stable evidence (paper eq. 28)."""
        residual = self.target - self.design @ self.site_mean
        z = scipy.linalg.solve_triangular(self.chol, residual, lower=True, check_finite=False)
        n = self.target.shape[0]
        value = -0.5 * (n * LOG_2PI + 2.0 * np.sum(np.log(np.diag(self.chol))) + z @ z)
        n_out, rss_out = self.projected_out
        if n_out:
            value -= 0.5 * (n_out * (LOG_2PI + np.log(self.noise_variance)) + rss_out / self.noise_variance)
        return float(value)


@dataclass
class PosteriorCovariance:
    """The posterior covariance ``V = Λ − Λ Xᵀ K⁻¹ X Λ`` of the coefficients (eq. 24), never formed.

    Attributes
    ----------
    design : ndarray of shape (n, d)
        X (or, on the direct path, R with X = QR, shape (d, d)).
    chol : ndarray of shape (n, n)
        The lower Cholesky factor L of ``K = σ0² I + X Λ Xᵀ``.
    site_variance : ndarray of shape (d,)
        The diagonal of Λ.
    """

    design: np.ndarray
    chol: np.ndarray
    site_variance: np.ndarray

    def matvec(self, vector):
        """``V v = Λv − ΛXᵀK⁻¹XΛv`` in O(nd + n²) (used by the power method, paper §4)."""
        lv = self.site_variance * vector
        k = scipy.linalg.cho_solve((self.chol, True), self.design @ lv, check_finite=False)
        return lv - self.site_variance * (self.design.T @ k)

    def quadratic_form(self, rows):
        """``x ᵀ V x`` for each row x of ``rows`` (shape (m, d)), without forming V (eq. 29)."""
        rows = np.atleast_2d(rows)
        a = self.design @ (rows * self.site_variance).T  # X Λ xᵀ, (n, m)
        b = scipy.linalg.solve_triangular(self.chol, a, lower=True, check_finite=False)
        return np.einsum("ij,ij->i", rows * self.site_variance, rows) - np.einsum("ij,ij->j", b, b)


def gaussian_part(design, target, xty_scaled, noise_variance, site_variance, site_mean, *, workspace=None,
                  projected_out=(0, 0.0)):  # fmt: skip
    """Marginal means and variances of Q from the sites, never forming a d × d matrix (paper §3.2, eq. 24–25).

    Cost O(n²d + n³): one ``X diag(ṽ) Xᵀ`` (a symmetric rank-d update), one Cholesky and one
    triangular solve ``L⁻¹X``. ``workspace`` (an n × d array) is reused to avoid allocations.

    Parameters
    ----------
    design : ndarray of shape (n, d), C-contiguous
    target : ndarray of shape (n,)
    xty_scaled : ndarray of shape (d,)
        ``Xᵀy / σ0²``.
    noise_variance : float
    site_variance, site_mean : ndarray of shape (d,)
    workspace : ndarray of shape (n, d), optional

    Returns
    -------
    GaussianPart
    """
    buffer = np.empty_like(design) if workspace is None else workspace
    np.multiply(design, np.sqrt(site_variance), out=buffer)
    with np.errstate(over="ignore", invalid="ignore"):
        K = buffer @ buffer.T  # X Λ Xᵀ (numpy uses syrk for a @ a.T)
    K[np.diag_indices_from(K)] += noise_variance
    if not np.all(np.isfinite(K)):
        raise InputValueError(
            "X diag(v) Xᵀ overflows double precision: the features are too large for the slab variance "
            f"(largest |x| {float(np.max(np.abs(design))):g}, largest site variance {float(np.max(site_variance)):g}); "
            "rescale X"
        )
    chol = _cholesky_with_jitter(K)
    np.copyto(buffer, design)
    solved = dtrsm(1.0, chol, buffer.T, side=1, lower=1, trans_a=1, overwrite_b=1)  # (L⁻¹X)ᵀ in place
    if not np.shares_memory(solved, buffer):  # pragma: no cover - BLAS copied (non-contiguous input)
        buffer = solved.T
    r = np.einsum("ij,ij->j", buffer, buffer)
    u = site_variance * xty_scaled + site_mean
    t = scipy.linalg.cho_solve((chol, True), design @ u, check_finite=False)
    xt_k_xu = design.T @ t
    mean = u - site_variance * xt_k_xu
    variance = site_variance - site_variance**2 * r
    return GaussianPart(design, target, noise_variance, site_variance, site_mean, chol, r, xt_k_xu, mean, variance,
                        projected_out)  # fmt: skip


# ----------------------------------------------------------------------------------------------
# site updates (paper §3 and §3.2, eq. 26)
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SiteParameters:
    """The parameters of the refined sites f̃_{2,j} (eq. 16): one per coefficient.

    Attributes
    ----------
    variance : ndarray of shape (d,)
        ṽ_{2,j} > 0.
    mean : ndarray of shape (d,)
        m̃_{2,j}.
    log_odds : ndarray of shape (d,)
        p̃_{2,j}, the vote of coefficient j on the indicator of its group.
    """

    variance: np.ndarray
    mean: np.ndarray
    log_odds: np.ndarray

    @classmethod
    def initial(cls, prior_inclusion_per_feature: ArrayLike, slab_variance_per_feature: ArrayLike) -> SiteParameters:
        """The default start, the moment-matched prior: ṽ = p0 v_s (the prior variance of w_j), m̃ = 0, p̃ = 0.

        Paper §3 starts from uniform sites, which make Q improper when d > n.

        Parameters
        ----------
        prior_inclusion_per_feature : array-like of shape (d,)
            p0, the prior inclusion probability of each coefficient's group.
        slab_variance_per_feature : array-like of shape (d,)
            v_s, the slab variance of each coefficient.

        Returns
        -------
        SiteParameters
            The starting site parameters, each of shape (d,).
        """
        variance = np.asarray(prior_inclusion_per_feature * slab_variance_per_feature, dtype=float)
        return cls(variance, np.zeros_like(variance), np.zeros_like(variance))


def cavity_parameters(r, xty_scaled, xt_k_xu, site_variance, site_mean):
    """Cavity mean and variance of every site, in the form without cancellation (paper §3.2, eq. 26).

    ``v^c_j = 1/r_j − ṽ_j`` and ``m^c_j = ((Xᵀy)_j/σ0² − (XᵀK⁻¹Xu)_j + m̃_j r_j)/r_j``; equal to
    the paper's eq. (26) ``v^c = (V_jj⁻¹ − ṽ_j⁻¹)⁻¹``, ``m^c = v^c (m_j/V_jj − m̃_j/ṽ_j)``.

    Returns
    -------
    cavity_mean, cavity_variance : ndarray of shape (d,)
        A site with r_j = 0 (an all-zero column) gets an infinite cavity variance.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        cavity_variance = 1.0 / r - site_variance
        cavity_mean = (xty_scaled - xt_k_xu) / r + site_mean
    return cavity_mean, cavity_variance


def site_update(cavity_mean, cavity_variance, cavity_log_odds, slab_variance, infinite_variance,
                minimum_variance=0.0):  # fmt: skip
    """Moment matching of one site against its tilted distribution (paper §3.2), vectorised.

    With ``ℓ1 = log N(0 | m^c, v^c + v_s)``, ``ℓ0 = log N(0 | m^c, v^c)``:
    ``p̃ = ℓ1 − ℓ0``, ``π = σ(p̃ + p^c)``, ``a = π m^c/(v^c + v_s) + (1 − π) m^c/v^c``,
    ``ν = a² − b``, ``ṽ = 1/ν − v^c`` and ``m̃ = m^c − a (ṽ + v^c)`` (the paper prints ``+ a/ν``,
    which is wrong: the site must collapse onto 0 when the spike dominates).

    The variance uses ``1 − ν v^c = π [v_s/(v^c + v_s) + (1 − π) (m^c)² v_s² / ((v^c + v_s)² v^c)]``,
    an exact rearrangement with no cancellation, so ``ṽ ≥ 0`` whenever ν > 0.
    A site with ν ≤ 0 (a negative variance) gets ``ṽ = v_∞`` and its mean matched under that
    constraint, ``m̃ = m^c − a (v_∞ + v^c)`` (paper §3.2).

    Parameters
    ----------
    cavity_mean, cavity_variance, cavity_log_odds : ndarray
        m^c, v^c > 0 and p^c.
    slab_variance : float or ndarray
        v_s (per coefficient: ``v_{s,g(j)}``).
    infinite_variance : float
        v_∞.
    minimum_variance : float or ndarray
        Floor of ṽ (the exact spike makes ṽ → 0).

    Returns
    -------
    variance, mean, log_odds : ndarray
        The new site parameters.
    clamped : ndarray of bool
        Sites whose variance was negative and set to v_∞.
    """
    m, vc, vs = cavity_mean, cavity_variance, slab_variance
    s1 = vc + vs
    log_odds = 0.5 * (m * m * vs / (s1 * vc) - np.log1p(vs / vc))  # ℓ1 − ℓ0
    pi = expit(log_odds + cavity_log_odds)
    a = pi * m / s1 + (1.0 - pi) * m / vc
    a1_minus_a0_sq_vc = (m * vs / s1) ** 2 / vc
    nu = pi / s1 + (1.0 - pi) / vc - pi * (1.0 - pi) * a1_minus_a0_sq_vc / vc
    numerator = pi * (vs / s1 + (1.0 - pi) * a1_minus_a0_sq_vc)  # 1 − ν v^c ≥ 0
    clamped = ~(nu > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        variance = np.where(clamped, infinite_variance, numerator / np.where(clamped, 1.0, nu))
    variance = np.maximum(variance, minimum_variance)
    mean = m - a * (variance + vc)
    return variance, mean, log_odds, clamped


def damp_sites(old, new, damping):
    """Damped sites ``f̃ = [f̃_new]^ξ [f̃_old]^{1−ξ}`` in natural parameters (paper §3).

    Parameters
    ----------
    old, new : SiteParameters
    damping : float
        ξ in (0, 1]; ξ = 1 takes the new site.

    Returns
    -------
    SiteParameters
    """
    precision = damping / new.variance + (1.0 - damping) / old.variance
    precision_mean = damping * new.mean / new.variance + (1.0 - damping) * old.mean / old.variance
    variance = 1.0 / precision
    return SiteParameters(variance, precision_mean * variance, damping * new.log_odds + (1.0 - damping) * old.log_odds)


def group_log_odds(site_log_odds, groups, prior_log_odds):
    """``p_g = logit(p0,g) + Σ_{j∈I_g} p̃_{2,j}`` (eq. 20 with eq. 22); P(z_g = 1) ≈ σ(p_g)."""
    return prior_log_odds + np.bincount(groups, weights=site_log_odds, minlength=prior_log_odds.shape[0])


def log_evidence(gaussian, sites, groups, prior_log_odds, slab_variance):
    """The EP approximation of log P(y | X), paper eq. (28) in a stable form (docs/spike_slab.md).

    ``log Z = log N(y | X m̃, σ0² I + XΛXᵀ)
    + Σ_j [log κ_j − log(σ(p̃_j)σ(p^c_j) + σ(−p̃_j)σ(−p^c_j)) − log N(0 | m^c_j − m̃_j, ṽ_j + v^c_j)]
    + Σ_g log(σ(p̃_{3,g}) Π_j σ(p̃_j) + σ(−p̃_{3,g}) Π_j σ(−p̃_j))``, with the cavities recomputed
    from the final sites and ``κ_j = σ(p^c) N(0 | m^c, v_s + v^c) + σ(−p^c) N(0 | m^c, v^c)``.

    Parameters
    ----------
    gaussian : GaussianPart
        Computed from ``sites``.
    sites : SiteParameters
    groups : ndarray of int64
    prior_log_odds : ndarray of shape (G,)
        logit p0,g.
    slab_variance : ndarray of shape (d,)
        ``v_{s,g(j)}``.

    Returns
    -------
    float
        NaN if a cavity is invalid (v^c ≤ 0) at the final sites.
    """
    xty_scaled = _xty_scaled(gaussian)
    cavity_mean, cavity_variance = cavity_parameters(gaussian.r, xty_scaled, gaussian.xt_k_xu, sites.variance,
                                                     sites.mean)  # fmt: skip
    flat = _zero_columns(gaussian)
    if not np.all(flat | (np.isfinite(cavity_variance) & (cavity_variance > 0) & np.isfinite(cavity_mean))):
        return float("nan")
    # a zero column has a flat cavity (v^c → ∞): log κ_j − log N(0 | m^c − m̃, ṽ + v^c) → 0 in the limit
    cavity_mean, cavity_variance = np.where(flat, 0.0, cavity_mean), np.where(flat, 1.0, cavity_variance)
    cavity_log_odds = group_log_odds(sites.log_odds, groups, prior_log_odds)[groups] - sites.log_odds
    log_kappa = log_site_normaliser(cavity_mean, cavity_variance, cavity_log_odds, slab_variance)
    bernoulli = np.logaddexp(log_expit(sites.log_odds) + log_expit(cavity_log_odds),
                             log_expit(-sites.log_odds) + log_expit(-cavity_log_odds))  # fmt: skip
    gaussian_ratio = log_kappa - log_normal_at_zero(cavity_mean - sites.mean, sites.variance + cavity_variance)
    sites_term = np.where(flat, 0.0, gaussian_ratio) - bernoulli
    n_groups = prior_log_odds.shape[0]
    on = log_expit(prior_log_odds) + np.bincount(groups, weights=log_expit(sites.log_odds), minlength=n_groups)
    off = log_expit(-prior_log_odds) + np.bincount(groups, weights=log_expit(-sites.log_odds), minlength=n_groups)
    return float(gaussian.log_marginal_likelihood() + np.sum(sites_term) + np.sum(np.logaddexp(on, off)))


def evidence_statistics(result, groups, slab_variance, log_scale=0.0):
    """The :class:`~hdbayes.spike_slab.model.EvidenceStatistics` of an EP fit, for the evidence fixed point.

    Parameters
    ----------
    result : EPResult
    groups : ndarray of int64, shape (d,)
    slab_variance : ndarray of shape (G,)
        The v_{s,g} the fit used, equal to the base v_s times ``exp(log_scale)``.
    log_scale : float, default=0.0
        The log of the common scale already applied to ``slab_variance``.

    Returns
    -------
    EvidenceStatistics
    """
    gaussian, sites = result.gaussian, result.sites
    expected_squared_error, n_samples = gaussian.expected_squared_error()
    cavity_mean, cavity_variance = cavity_parameters(gaussian.r, _xty_scaled(gaussian), gaussian.xt_k_xu,
                                                     sites.variance, sites.mean)  # fmt: skip
    valid = np.isfinite(cavity_variance) & (cavity_variance > 0)
    return EvidenceStatistics(
        expected_squared_error, n_samples, float(np.sum(result.group_inclusion_probabilities)), cavity_mean[valid],
        cavity_variance[valid], (result.group_log_odds[groups] - sites.log_odds)[valid],
        (slab_variance * np.exp(-log_scale))[groups][valid],
    )  # fmt: skip


def _xty_scaled(gaussian):
    return gaussian.design.T @ gaussian.target / gaussian.noise_variance


def _zero_columns(gaussian):
    """Sites of all-zero columns (r_j = x_jᵀK⁻¹x_j = 0): the likelihood does not involve w_j."""
    return ~(gaussian.r > 0)


def flat_cavity_sites(cavity_log_odds, slab_variance):
    """EP's site for an all-zero column (a constant feature after centring), in closed form.

    The likelihood does not involve w_j, so the cavity is flat in w_j and the tilted distribution is
    the prior ``σ(p^c) N(0, v_s) + σ(−p^c) δ(0)`` itself: moment matching gives ``ṽ = σ(p^c) v_s``,
    ``m̃ = 0`` and a vote ``p̃ = 0`` (the column says nothing about its group). These are the limits of
    :func:`site_update` as ``v^c → ∞``, where its general formulas become 0/0. The posterior variance
    of w_j is then ``P(z_g = 1 | y) v_s``, as in the exact posterior.

    Returns
    -------
    variance, mean, log_odds : ndarray
    """
    variance = expit(cavity_log_odds) * slab_variance
    return variance, np.zeros_like(variance), np.zeros_like(variance)


# ----------------------------------------------------------------------------------------------
# the EP loop (paper §3.2; stopping rule docs/spike_slab.md)
# ----------------------------------------------------------------------------------------------


@dataclass
class EPResult:
    """The converged EP approximation.

    Attributes
    ----------
    mean : ndarray of shape (d,)
        Posterior means m of the coefficients (a Bayesian model average over z).
    variance : ndarray of shape (d,)
        Marginal posterior variances diag(V).
    group_log_odds : ndarray of shape (G,)
        p_g; the group inclusion probabilities are σ(p_g).
    sites : SiteParameters
        The final sites (pass as ``init`` to warm-start another fit).
    log_evidence : float
        EP's log P(y | X) (eq. 28).
    n_iter : int
    converged : bool
        Whether the returned attempt converged (the change fell below ``tol`` and EP was not frozen).
    n_skipped : int
        Site updates skipped because of an invalid cavity, summed over iterations.
    n_clamped : int
        Site updates whose variance was negative and set to v_∞, summed over iterations.
    last_change : float
        The last max-change of (m, diag V, σ(p)) (compared with ``tol``).
    proposed_change : float
        The last *undamped* update's max-change of σ(p). With the damping decayed, a small
        ``last_change`` can mean a frozen EP; ``converged`` is False (with a warning) when this
        exceeds ``FROZEN_FACTOR · tol`` at exit (docs/spike_slab.md, "Inference").
    gaussian : GaussianPart
        For predictive variances and covariance–vector products.
    solver : str
        "woodbury" or "direct".
    n_restarts : int
        Restarts run because the first attempt did not converge (0 or 3; ``n_iter`` counts the
        returned attempt's iterations).
    attempt : str
        The attempt returned: "first", "restart 1", "restart 2", "restart 3" (ξ with negative-variance
        sites kept, min(ξ, 0.5) with them set to v_∞, min(ξ, 0.5) with them kept) or "annealed".
    """

    mean: np.ndarray
    variance: np.ndarray
    group_log_odds: np.ndarray
    sites: SiteParameters
    log_evidence: float
    n_iter: int
    converged: bool
    n_skipped: int
    n_clamped: int
    last_change: float
    proposed_change: float
    gaussian: GaussianPart
    solver: str
    n_restarts: int = 0
    attempt: str = "first"

    @property
    def group_inclusion_probabilities(self):
        """σ(p_g), the approximate P(z_g = 1 | y, X)."""
        return expit(self.group_log_odds)


def _prepare_design(X, y, solver):
    n, d = X.shape
    if solver == "auto":
        solver = "direct" if n >= d else "woodbury"
    if solver not in ("woodbury", "direct"):
        raise InputValueError(f"solver must be 'auto', 'woodbury' or 'direct', got {solver!r}")
    if solver == "woodbury":
        return np.ascontiguousarray(X, dtype=float), np.asarray(y, dtype=float), (0, 0.0), solver
    if n < d:
        raise InputValueError(f"the direct solver needs n >= d, got n={n} < d={d}; use 'woodbury'")
    q, r = np.linalg.qr(X)
    qty = q.T @ y
    rss_out = max(float(y @ y - qty @ qty), 0.0)
    return np.ascontiguousarray(r), qty, (n - d, rss_out), solver


def expectation_propagation(
        X: ArrayLike, y: ArrayLike, groups: int | ArrayLike | Sequence[Sequence[int]],
        prior_inclusion: float | ArrayLike, slab_variance: float | ArrayLike, noise_variance: float, *,
        damping: float = 0.9, damping_decay: float = 1.0, tol: float = 1e-4, max_iter: int = 400,
        infinite_variance: float | None = None, solver: Literal["auto", "woodbury", "direct"] = "auto",
        init: SiteParameters | None = None, restarts: bool = True, annealing: bool = True,
        warn: bool = True) -> EPResult:  # fmt: skip
    """Fit the group spike-and-slab posterior by parallel damped EP (paper §3), restarting if it does not converge.

    The first attempt runs the paper's parallel damped updates with a constant damping ξ (the paper decays ξ by
    1% per iteration, ``damping_decay=0.99``, which can freeze EP before it converges). If it has not converged
    after ``max_iter`` iterations and ``restarts`` is true, EP starts again from the same sites three times:
    with ξ, leaving the Gaussian part of a site whose update has a negative variance unchanged instead of
    setting its variance to v_∞ (paper §3.2); and with ``min(ξ, 0.5)`` both ways. With ``annealing`` (the
    default) EP also runs an annealed attempt whatever the first one did: from the same start, at the noise
    variance σ0² times each of :data:`ANNEALING_FACTORS` in turn and then at σ0², each stage warm-started from
    the last, with damping ``min(ξ, 0.5)``; this reaches good fixed points that the start from the prior misses
    (a converged fit of much lower evidence, issue 29). Of the attempts that converge, the one of largest
    evidence (eq. 28) is returned (``attempt`` names it); if none converges, the first attempt is returned with
    ``converged=False``. A fit that does not converge always sets ``converged=False``, and warns unless
    ``warn`` is false. The paper's algorithm is ``damping_decay=0.99, restarts=False, annealing=False``.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The design matrix.
    y : ndarray of shape (n,)
        The responses.
    groups : ndarray of int64, shape (d,)
        g(j) in 0..G−1 (validate with :func:`~hdbayes.spike_slab.model.check_groups`).
    prior_inclusion : ndarray of shape (G,)
        p0,g in (0, 1) (eq. 4).
    slab_variance : ndarray of shape (G,)
        v_{s,g} > 0 (eq. 3, 9).
    noise_variance : float
        σ0² > 0 (eq. 1).
    damping : float, default=0.9
        ξ, the weight of the new site in each damped update (paper §3).
    damping_decay : float, default=1.0
        Factor applied to ξ after each iteration; 1.0 keeps it constant, 0.99 is the paper's schedule
        (ξ_t = 0.9 · 0.99^t).
    tol : float, default=1e-4
        Stop when the largest change of m, diag V and σ(p) between iterations is below ``tol`` (our rule).
    max_iter : int, default=400
        Maximum number of iterations of each attempt.
    infinite_variance : float, optional
        v_∞ for negative site variances (paper §3.2); default ``100 · max(v_s)``.
    solver : {"auto", "woodbury", "direct"}
        "auto": direct when n ≥ d, Woodbury otherwise.
    init : SiteParameters, optional
        Start from these sites (warm start); default: the moment-matched prior (:meth:`SiteParameters.initial`).
    restarts : bool, default=True
        Restart as above when the first attempt does not converge.
    annealing : bool, default=True
        Also run the annealed attempt and choose among the converged attempts by evidence.
    warn : bool, default=True
        Issue a ``ConvergenceWarning`` when the fit does not converge. Only internal loops that judge
        convergence themselves (the evidence fixed point) turn it off.

    Returns
    -------
    EPResult
        The EP approximation (the posterior moments, the group log-odds, the site parameters and the
        evidence) and how the iterations ended (``converged``, ``n_iter``, ``n_restarts``, ...).
    """
    n, d = X.shape
    with single_threaded_blas(float(min(n, d)) ** 2 * d < SMALL_PROBLEM_FLOPS):
        problem = _EPProblem.build(X, y, groups, prior_inclusion, slab_variance, noise_variance, infinite_variance,
                                   solver, init)  # fmt: skip
        first = problem.iterate(float(damping), damping_decay, tol, max_iter, keep_negative=False)
        attempts, n_restarts = [first], 0
        if restarts and not first.converged:
            second = min(float(damping), RESTART_DAMPING)
            for i, (xi, keep) in enumerate(((float(damping), True), (second, False), (second, True)), start=1):
                attempts.append(problem.iterate(xi, damping_decay, tol, max_iter, keep_negative=keep))
                attempts[-1].attempt = f"restart {i}"
            n_restarts = len(attempts) - 1
        if annealing:
            attempts.append(_annealed_attempt(problem, X, y, groups, prior_inclusion, slab_variance, noise_variance,
                                              infinite_variance, solver, min(float(damping), ANNEALING_DAMPING),
                                              damping_decay, tol, max_iter))  # fmt: skip
        good = [r for r in attempts if r.converged and np.isfinite(r.log_evidence)]
        chosen = max(good, key=lambda r: r.log_evidence) if good else first
        chosen.n_restarts = n_restarts
    if not chosen.converged and warn:
        reason = (
            f"the damped steps fell below tol={tol} but the undamped update still moves a group probability by "
            f"{chosen.proposed_change:.3g}: damping has frozen EP"
            if chosen.last_change < tol
            else f"last change {chosen.last_change:.3g} > tol={tol}"
        )
        again = f" nor in {n_restarts} restarts" if n_restarts else ""
        again += " nor in the annealed attempt" if annealing else ""
        warnings.warn(
            f"EP did not converge in {chosen.n_iter} iterations{again} ({reason}); increase max_iter, lower the "
            "damping or check the hyperparameters",
            ConvergenceWarning,
            stacklevel=2,
        )
    return chosen


def _annealed_attempt(problem, X, y, groups, prior_inclusion, slab_variance, noise_variance, infinite_variance,
                      solver, damping, damping_decay, tol, max_iter):  # fmt: skip
    """EP at σ0² × :data:`ANNEALING_FACTORS` in turn, then at σ0², each warm-started from the last stage's sites.

    The stages before the last run at most :data:`ANNEALING_STAGE_ITER` iterations and need not converge (they
    only move the start); the result is the last stage's.
    """
    sites = problem.start
    for factor in ANNEALING_FACTORS:
        stage = _EPProblem.build(X, y, groups, prior_inclusion, slab_variance, noise_variance * factor,
                                 infinite_variance, solver, sites)  # fmt: skip
        stage_iter = min(max_iter, ANNEALING_STAGE_ITER)
        sites = stage.iterate(damping, damping_decay, tol, stage_iter, keep_negative=False).sites
    result = replace(problem, start=sites).iterate(damping, damping_decay, tol, max_iter, keep_negative=False)
    result.attempt = "annealed"
    return result


@dataclass
class _EPProblem:
    """The data and model of one EP fit in the engine's form, and its starting sites (for restarts)."""

    design: np.ndarray
    target: np.ndarray
    projected_out: tuple
    solver: str
    xty_scaled: np.ndarray
    noise_variance: float
    groups: np.ndarray
    prior_log_odds: np.ndarray
    slab_variance: np.ndarray
    infinite_variance: float
    minimum_variance: np.ndarray
    start: SiteParameters

    @classmethod
    def build(cls, X, y, groups, prior_inclusion, slab_variance, noise_variance, infinite_variance, solver, init):
        d = X.shape[1]
        vs = slab_variance[groups]
        v_inf = (100.0 * max(float(np.max(slab_variance)), 1.0) if infinite_variance is None
                 else float(infinite_variance))  # fmt: skip
        minimum_variance = 1e-12 * vs
        with np.errstate(over="ignore", invalid="ignore"):
            design, target, projected_out, solver = _prepare_design(X, y, solver)
            xty_scaled = design.T @ target / noise_variance
        if not (np.all(np.isfinite(xty_scaled)) and np.all(np.isfinite(design)) and np.isfinite(projected_out[1])):
            raise InputValueError(
                "Xᵀy / noise_variance overflows double precision: X or y is too large for "
                f"noise_variance={noise_variance:g}; rescale X and y"
            )
        if init is None:
            start = SiteParameters.initial(prior_inclusion[groups], vs)
        else:
            if any(np.shape(a) != (d,) for a in (init.variance, init.mean, init.log_odds)):
                raise InputValueError(f"init sites must have {d} entries each")
            start = SiteParameters(np.maximum(init.variance, minimum_variance), init.mean.copy(),
                                   init.log_odds.copy())  # fmt: skip
        return cls(design, target, projected_out, solver, xty_scaled, float(noise_variance), groups,
                   logit(prior_inclusion), vs, v_inf, minimum_variance, start)  # fmt: skip

    def iterate(self, damping, damping_decay, tol, max_iter, *, keep_negative):
        """One run of the EP loop from ``self.start``; returns an :class:`EPResult` (with ``n_restarts=0``)."""
        design, target, xty_scaled, groups = self.design, self.target, self.xty_scaled, self.groups
        prior_log_odds, vs, noise_variance = self.prior_log_odds, self.slab_variance, self.noise_variance
        minimum_variance, projected_out = self.minimum_variance, self.projected_out
        d = design.shape[1]
        sites = self.start
        workspace = np.empty_like(design)
        gaussian = gaussian_part(design, target, xty_scaled, noise_variance, sites.variance, sites.mean,
                                 workspace=workspace, projected_out=projected_out)  # fmt: skip
        flat = _zero_columns(gaussian)  # all-zero columns: sites in closed form (flat_cavity_sites)
        log_odds = group_log_odds(sites.log_odds, groups, prior_log_odds)
        probabilities = expit(log_odds)
        xi = float(damping)
        n_skipped = n_clamped = 0
        converged = False
        change = proposed_change = np.inf
        iteration = 0
        for iteration in range(1, max_iter + 1):  # noqa: B007 - the count is reported
            cavity_mean, cavity_variance = cavity_parameters(gaussian.r, xty_scaled, gaussian.xt_k_xu,
                                                             sites.variance, sites.mean)  # fmt: skip
            valid = np.isfinite(cavity_variance) & (cavity_variance > 0) & np.isfinite(cavity_mean) & ~flat
            n_skipped += int(d - np.count_nonzero(valid | flat))
            cavity_variance = np.where(valid, cavity_variance, 1.0)
            cavity_mean = np.where(valid, cavity_mean, 0.0)
            cavity_log_odds = log_odds[groups] - sites.log_odds
            variance, mean, votes, clamped = site_update(cavity_mean, cavity_variance, cavity_log_odds, vs,
                                                         self.infinite_variance, minimum_variance)  # fmt: skip
            n_clamped += int(np.count_nonzero(clamped & valid))
            if keep_negative:  # a negative-variance site keeps its Gaussian part (and still votes)
                variance, mean = np.where(clamped, sites.variance, variance), np.where(clamped, sites.mean, mean)
            if flat.any():
                flat_variance, flat_mean, flat_votes = flat_cavity_sites(cavity_log_odds, vs)
                variance = np.where(flat, np.maximum(flat_variance, minimum_variance), variance)
                mean, votes = np.where(flat, flat_mean, mean), np.where(flat, flat_votes, votes)
                valid = valid | flat
            proposed = SiteParameters(np.where(valid, variance, sites.variance), np.where(valid, mean, sites.mean),
                                      np.where(valid, votes, sites.log_odds))  # fmt: skip
            # the undamped step's effect on the group probabilities (damping decay can freeze EP)
            proposed_change = float(np.max(np.abs(expit(group_log_odds(proposed.log_odds, groups, prior_log_odds))
                                                  - probabilities)))  # fmt: skip
            sites = damp_sites(sites, proposed, xi)
            xi *= damping_decay
            new_gaussian = gaussian_part(design, target, xty_scaled, noise_variance, sites.variance, sites.mean,
                                         workspace=workspace, projected_out=projected_out)  # fmt: skip
            log_odds = group_log_odds(sites.log_odds, groups, prior_log_odds)
            new_probabilities = expit(log_odds)
            change = max(
                float(np.max(np.abs(new_gaussian.mean - gaussian.mean))),
                float(np.max(np.abs(new_gaussian.variance - gaussian.variance))),
                float(np.max(np.abs(new_probabilities - probabilities))),
            )
            gaussian, probabilities = new_gaussian, new_probabilities
            if change < tol:
                converged = True
                break
        if converged and proposed_change > FROZEN_FACTOR * tol:  # frozen by the damping decay, not converged
            converged = False
        evidence = log_evidence(gaussian, sites, groups, prior_log_odds, vs)
        return EPResult(gaussian.mean, gaussian.variance, log_odds, sites, evidence, iteration, converged, n_skipped,
                        n_clamped, change, proposed_change, gaussian, self.solver)  # fmt: skip
