"""The spread per feature (Li 2012, BCBCSF): the variant ``"per-feature"`` of the Gaussian classifier.

x_ij | y = g ~ N(μ_gj, w^x_j), μ_gj | ν_j ~ N(ν_j, w^μ_j), w^μ_j ~ scaled-Inv-χ²(α1_μ, s_μ),
w^x_j ~ scaled-Inv-χ²(α1_x, s_x), 1/s_μ ~ Gamma(α^μ/2, rate α^μ w^μ/2), 1/s_x ~ Gamma(α^x/2, rate α^x w^x/2)
(docs/gaussian.md, eq. P1–P17). Here: its prior (:class:`PerFeatureSpread`), its exact adjustment factor
A(s_μ/s_x) by quadrature (:class:`PerFeatureGaussianAdjustment`) and its chain (:func:`per_feature_chain`,
on the kernel of :mod:`._scales_kernel`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from hdbayes._numba import jit
from hdbayes._validation import check_positive
from hdbayes.exceptions import InputValueError
from hdbayes.mcmc.chains import ChainDraws
from hdbayes.selection_bias.gaussian._factor import (
    _check_class_counts,
    _freeze_arrays,
    _grid_values,
    _log_f_density_normaliser,
    _per_class_log_b_grid,
    _per_feature_log_discard_probabilities,
    class_count_eigenvalues,
    gaussian_f_series,
)
from hdbayes.selection_bias.gaussian._scales_kernel import PRIOR_NAMES, run_scales_kernel
from hdbayes.selection_bias.gaussian._variant import COMMON_CONSTRAINTS, POSITIVE, GaussianVariant

if TYPE_CHECKING:
    from hdbayes.mcmc import Trace

__all__ = [
    "PerFeatureGaussianAdjustment",
    "PerFeatureSpread",
    "log_discard_probability_given_ratio",
    "per_feature_chain",
]

PER_FEATURE_TOL = 1e-30
"""Truncation of the f_k series for the per-feature model: the neglected tail is below 1e-30·P(K > K_max)."""


@jit
def log_discard_probability_given_ratio(log_r, eigenvalues, log_f):
    """log a(r) = log P(F ≤ γ | r), r = w^μ/w^x, exactly (docs/gaussian.md, eq. P12–P14).

    Given r, the Poisson component K of the noncentral χ² has probability generating function
    E[z^K] = Π_i (1 + (1 − z) d_i r)^{−1/2}: K is a sum of independent negative binomials
    NB(1/2, π_i), π_i = d_i r/(1 + d_i r). Their pmfs (1 − π_i)^{1/2} c_k π_i^k with
    c_k = Γ(k + 1/2)/(Γ(1/2) k!) are convolved up to k = K_max (positive terms, no cancellation),
    and a(r) = Σ_k f_k P(K = k). Cost O(G K_max²) flops, no Monte Carlo.
    """
    n_terms = log_f.shape[0]
    conv = np.zeros(n_terms)
    conv[0] = 1.0
    log_scale = 0.0
    single = np.empty(n_terms)
    new = np.empty(n_terms)
    for i in range(eigenvalues.shape[0]):
        dr = eigenvalues[i] * np.exp(log_r)
        # π = dr/(1 + dr); log(1 − π) = −log1p(dr)
        log_scale += -0.5 * np.log1p(dr)
        if dr == np.inf:
            return -np.inf
        pi = dr / (1.0 + dr)
        single[0] = 1.0
        for k in range(1, n_terms):
            single[k] = single[k - 1] * pi * (k - 0.5) / k
        if i == 0:  # the first factor needs no convolution
            for k in range(n_terms):
                new[k] = single[k]
        else:
            for k in range(n_terms):
                total = 0.0
                for m in range(k + 1):
                    total += conv[m] * single[k - m]
                new[k] = total
        # rescale to keep the largest coefficient near 1 (π → 1 makes them grow slowly)
        peak = 0.0
        for k in range(n_terms):
            if new[k] > peak:
                peak = new[k]
        for k in range(n_terms):
            conv[k] = new[k] / peak
        log_scale += np.log(peak)
    peak = -np.inf
    for k in range(n_terms):
        if conv[k] > 0.0 and log_f[k] > -np.inf:
            value = log_f[k] + np.log(conv[k])
            if value > peak:
                peak = value
    if peak == -np.inf:
        return -np.inf
    total = 0.0
    for k in range(n_terms):
        if conv[k] > 0.0 and log_f[k] > -np.inf:
            total += np.exp(log_f[k] + np.log(conv[k]) - peak)
    return log_scale + peak + np.log(total)


@jit
def _log_discard_probabilities_given_ratio(log_r, eigenvalues, log_f):
    out = np.empty(log_r.shape[0])
    for i in range(log_r.shape[0]):
        out[i] = log_discard_probability_given_ratio(log_r[i], eigenvalues, log_f)
    return out


@dataclass(frozen=True, eq=False)
class PerFeatureGaussianAdjustment:
    """The exact adjustment factor A(ρ), ρ = s_μ/s_x, of the per-feature-spread model (Li 2012).

    A(ρ) = P(F ≤ γ | ρ) for one feature drawn from the prior: w^μ_j ~ scaled-Inv-χ²(α1_μ, s_μ),
    w^x_j ~ scaled-Inv-χ²(α1_x, s_x), so the only quantity F depends on, r = w^μ_j/w^x_j, is ρ T
    with T ~ F(α1_x, α1_μ), and A(ρ) = ∫ a(ρ t) dF_{α1_x, α1_μ}(t) with a(r) exact
    (:func:`log_discard_probability_given_ratio`). The integral is the trapezoidal rule in
    v = log r on a fixed grid of step ``h`` (exponentially convergent: the integrand is analytic in
    the strip |Im v| < π), whose nodes log a(e^{v_i}) are computed once here. No Monte Carlo, no
    floor. Build it with :meth:`create`. When γ is so large that the series has more than 1000 terms, the
    nodes are the quadratic-form tail P(Σ_i (1 + d_i r) χ²_1 − c χ²_{n−G} ≤ 0), c = γ(G − 1)/(n − G) (the
    per-class factor with every class variance equal, eq. P20–P27): about 10 µs a node whatever γ, where the
    series' convolution costs O((G − 1) K²) for K terms.

    Attributes
    ----------
    threshold : float
    class_counts : tuple of int
    alpha1_mu, alpha1_x : float
    log_f : ndarray (K + 1,)
        The f_k series (:func:`gaussian_f_series`, tol :data:`PER_FEATURE_TOL`).
    eigenvalues : ndarray (G − 1,)
        :func:`class_count_eigenvalues`.
    v0, h : float
        The grid v_i = v0 + i h.
    log_a : ndarray
        log a(e^{v_i}).

    Examples
    --------
    >>> adj = PerFeatureGaussianAdjustment.create(4.0, [20, 21, 21], alpha1_mu=3.0, alpha1_x=10.0)
    >>> bool(adj.log_discard_probability([0.0])[0] < 0)
    True
    """

    threshold: float
    class_counts: tuple
    alpha1_mu: float
    alpha1_x: float
    log_f: np.ndarray
    eigenvalues: np.ndarray
    v0: float
    h: float
    log_a: np.ndarray

    @classmethod
    def create(cls, threshold, class_counts, alpha1_mu=3.0, alpha1_x=10.0, h=0.5, tail=40.0,
               log_rho_range=(-30.0, 30.0), tol=PER_FEATURE_TOL):  # fmt: skip
        """Compute the series, the eigenvalues and the grid values log a(e^{v_i}).

        The grid covers v from ``log_rho_range[0]`` − 2·``tail``/α1_x − log max d_i − 5 (below it the
        integrand is less than e^{−tail} relative, for every ρ in the range) up to where
        log a(e^v) < log f_0 − 2·``tail`` − (α1_μ/2)(the range's width) (eq. P17).
        """
        threshold = check_positive("threshold", threshold, allow_zero=True)
        alpha1_mu = check_positive("alpha1_mu", alpha1_mu)
        alpha1_x = check_positive("alpha1_x", alpha1_x)
        h = check_positive("h", h)
        counts = _check_class_counts(class_counts)
        log_f = gaussian_f_series(threshold, counts, tol=tol) if threshold > 0 else np.zeros(1)
        eigenvalues = class_count_eigenvalues(counts)
        lo, hi = float(log_rho_range[0]), float(log_rho_range[1])
        v_start = lo - 2.0 * tail / alpha1_x - math.log(eigenvalues.max()) - 5.0
        stop_level = log_f[0] - 2.0 * tail - 0.5 * alpha1_mu * max(hi - lo, 0.0)
        log_a = _grid_values(
            v_start, h, 256, lambda v: _pooled_log_discard_probabilities(v, counts, threshold, eigenvalues, log_f),
            lambda v, values: values[-1] < stop_level and v[0] > hi + 5.0,
        )  # fmt: skip
        return cls(float(threshold), tuple(int(c) for c in counts), float(alpha1_mu), float(alpha1_x),
                   log_f, eigenvalues, float(v_start), float(h), log_a)  # fmt: skip

    def __post_init__(self):
        _freeze_arrays(self, ("log_f", "eigenvalues", "log_a"))

    @property
    def density_parameters(self):
        """(d1, d2, log normaliser) of the density of log T, T ~ F(α1_x, α1_μ)."""
        return self.alpha1_x, self.alpha1_mu, _log_f_density_normaliser(self.alpha1_x, self.alpha1_mu)

    def kernel_arguments(self):
        """(v0, h, log_a, d1, d2, log_norm): the arguments of the compiled functions (writeable copies)."""
        return (self.v0, self.h, np.array(self.log_a), *self.density_parameters)

    def log_discard_probability(self, log_rho):
        """log A(ρ) elementwise, for log ρ = log s_μ − log s_x."""
        x = np.asarray(log_rho, dtype=np.float64)
        if np.any(np.isnan(x)):
            raise InputValueError("log_rho must not be NaN")
        flat = np.ascontiguousarray(x.ravel())
        return _per_feature_log_discard_probabilities(flat, *self.kernel_arguments()).reshape(x.shape)

    def log_discard_probability_given_ratio(self, log_r):
        """log a(r) elementwise (the factor for one feature with known r = w^μ/w^x)."""
        x = np.ascontiguousarray(np.asarray(log_r, dtype=np.float64).ravel())
        counts = np.asarray(self.class_counts)
        out = _pooled_log_discard_probabilities(x, counts, self.threshold, self.eigenvalues, np.array(self.log_f))
        return out.reshape(np.shape(log_r))


_SERIES_MAX_TERMS = 1000
"""Above this many f_k terms (γ in the hundreds or more) the pooled factor's nodes are quadratic-form tails
rather than the series, whose convolution costs O((G − 1) K²) a node (65 s for the grid at γ = 3250, class sizes
33, 8, 10, K = 17 594). Below it the series stays: exact to 1e-15 and what earlier fits used, bit for bit (the tails
agree with it to 4e-12 at G = 6, n = 200, γ = 3.15)."""
_QUADRATIC_FORM_MAX_LOG_R = 300.0
"""Above this log r (weights 1 + d_i r beyond about 1e130 against c) the quadratic-form tail loses accuracy (it
drifts by 2e-7 at log r = 350 and fails near 370, G = 2) and the series takes over."""


def _pooled_log_discard_probabilities(log_r, class_counts, threshold, eigenvalues, log_f):
    """log a(r) of the pooled per-feature model at each log r: the series (eq. P12–P14; at γ = 0 its limit), or
    with more than :data:`_SERIES_MAX_TERMS` terms the quadratic-form tail of equal class variances (a pool of
    the one point ε = 1, eq. P20–P27) for log r ≤ 300."""
    log_r = np.ascontiguousarray(log_r, dtype=np.float64)
    if not (threshold > 0 and log_f.shape[0] > _SERIES_MAX_TERMS):
        return _log_discard_probabilities_given_ratio(log_r, eigenvalues, log_f)
    out = np.empty(log_r.shape[0])
    near = log_r <= _QUADRATIC_FORM_MAX_LOG_R
    ones = np.ones((1, len(class_counts)))
    counts = np.asarray(class_counts, dtype=np.float64)
    out[near] = _per_class_log_b_grid(np.ascontiguousarray(log_r[near]), ones, counts, float(threshold))
    out[~near] = _log_discard_probabilities_given_ratio(np.ascontiguousarray(log_r[~near]), eigenvalues, log_f)
    return out


def per_feature_chain(rng, schedule, advance=None, *, counts, sums, squares, prior, adjustment=None, n_discarded=0,
                      proposal_sd=0.5, n_metropolis=5, init_jitter=0.5):  # fmt: skip
    """Run one chain of the per-feature-spread model (Li 2012; docs/gaussian.md, eq. P1–P10).

    Per iteration: the conjugate Gibbs updates of μ, w^x_j, ν, w^μ_j and τ^ν, then ``n_metropolis``
    random-walk Metropolis steps on log s_μ and on log s_x, whose targets include
    (p − k) log A(s_μ/s_x) when ``adjustment`` (a :class:`PerFeatureGaussianAdjustment`) is given and
    p − k > 0. The proposal sd of log s is min(``proposal_sd``, 2.4 √(2/(k α1))), 2.4 times the sd of
    its conditional without the prior and the correction (a log-Gamma of shape kα1/2). Compiled
    with numba; the signature is that of a chain of :func:`hdbayes.mcmc.run_chains` once the keyword
    arguments are bound.

    Parameters
    ----------
    prior : dict
        ``alpha1_mu, alpha1_x, alpha_x, w_x, alpha_mu, w_mu, alpha_nu, w_nu``.

    Returns
    -------
    hdbayes.mcmc.ChainDraws
        ``posterior``: ``mu`` (S, G, k); ``w_x``, ``w_mu``, ``nu`` (S, k); ``log_s_mu``, ``log_s_x``,
        ``log_tau_nu`` (S,); ``warmup``: the three scalars at every burn-in iteration;
        ``sample_stats``: ``acceptance_rate`` (S,) of the Metropolis steps (both scales).
    """
    out = run_scales_kernel(rng, schedule, advance, counts, sums, squares, prior, adjustment, n_discarded, proposal_sd,
                            n_metropolis, init_jitter, False, np.array([np.inf]))  # fmt: skip
    mu, _, w_x, w_mu, nu, log_s_mu, log_s_x, log_tau_nu, _, acceptance, _, warm_mu, warm_x, warm_nu, _ = out
    return ChainDraws(
        posterior={
            "mu": mu,
            "w_x": w_x,
            "w_mu": w_mu,
            "nu": nu,
            "log_s_mu": log_s_mu,
            "log_s_x": log_s_x,
            "log_tau_nu": log_tau_nu,
        },  # fmt: skip
        warmup={"log_s_mu": warm_mu, "log_s_x": warm_x, "log_tau_nu": warm_nu} if schedule.burn_in > 0 else {},
        sample_stats={"acceptance_rate": acceptance},
    )


class PerFeatureSpread(GaussianVariant):
    """The spread per feature (Li 2012, BCBCSF): the published model, with the exact adjustment factor.

    The variant ``"per-feature"`` of :class:`~hdbayes.BiasCorrectedGaussianClassifier`: x_ij | y = g ~
    N(μ_gj, w^x_j), μ_gj | ν_j ~ N(ν_j, w^μ_j), w^μ_j ~ scaled-Inv-χ²(α1_μ, s_μ), w^x_j ~ scaled-Inv-χ²(α1_x,
    s_x), 1/s_μ ~ Gamma(α^μ/2, rate α^μ w^μ/2) and 1/s_x ~ Gamma(α^x/2, rate α^x w^x/2) (docs/gaussian.md
    eq. P1–P17); the correction is A(s_μ/s_x)^{p−k} computed by quadrature
    (:class:`PerFeatureGaussianAdjustment`; the estimator's ``n_mc`` is unused).

    Parameters
    ----------
    alpha1_mu, alpha1_x : float, default=3.0, 10.0
        Degrees of freedom of the per-feature spreads' priors (the published package's defaults).
    alpha_x, w_x, alpha_mu, w_mu : float, default=4.0, 1.0, 1.5, 0.01
        The priors of the global scales s_x and s_μ.
    alpha_nu, w_nu : float, default=1.5, 0.01
        Prior of τ^ν.
    proposal_sd : float, default=0.5
        Largest standard deviation of the random-walk proposals on log s_μ and log s_x (each is
        min(``proposal_sd``, 2.4 √(2/(k α1)))).
    n_metropolis : int, default=5
        Metropolis updates of each scale per iteration.

    Examples
    --------
    >>> PerFeatureSpread(alpha1_mu=4.0).get_params()["alpha1_mu"]
    4.0
    """

    name: ClassVar[str] = "per-feature"
    _parameter_constraints: ClassVar[dict] = {**COMMON_CONSTRAINTS, "alpha1_mu": [POSITIVE], "alpha1_x": [POSITIVE]}
    dims: ClassVar[dict] = {"mu": ["class", "feature"], "w_x": ["feature"], "w_mu": ["feature"], "nu": ["feature"]}
    monitored: ClassVar[tuple] = ("log_s_mu", "log_s_x", "log_tau_nu")
    _prior_names: ClassVar[tuple] = PRIOR_NAMES

    def __init__(self, *, alpha1_mu: float = 3.0, alpha1_x: float = 10.0, alpha_x: float = 4.0, w_x: float = 1.0,
                 alpha_mu: float = 1.5, w_mu: float = 0.01, alpha_nu: float = 1.5, w_nu: float = 0.01,
                 proposal_sd: float = 0.5, n_metropolis: int = 5) -> None:  # fmt: skip
        self.alpha1_mu = alpha1_mu
        self.alpha1_x = alpha1_x
        self.alpha_x = alpha_x
        self.w_x = w_x
        self.alpha_mu = alpha_mu
        self.w_mu = w_mu
        self.alpha_nu = alpha_nu
        self.w_nu = w_nu
        self.proposal_sd = proposal_sd
        self.n_metropolis = n_metropolis

    def _draw_bytes(self, n_classes, k):
        """Bytes of a saved draw: the class means (G × k), four values per feature and a few scalars."""
        return 8 * (n_classes * k + 4 * k + 8)

    def _factor(self, threshold, class_counts, *, n_kept, n_mc, n_jobs, rng, class_scale):
        """The exact A(s_μ/s_x) by quadrature (no pool: ``n_mc`` and ``rng`` unused)."""
        return PerFeatureGaussianAdjustment.create(threshold, class_counts, self.alpha1_mu, self.alpha1_x)

    def _bind_chain(self, class_counts, sums, squares, adjustment, n_discarded, class_scale):
        return self._chain(per_feature_chain, class_counts, sums, squares, adjustment, n_discarded)

    def precisions(self, trace: Trace) -> tuple[np.ndarray, np.ndarray]:
        """1/w^x (S, k) and 1/w^μ (S, k) of every draw.

        Parameters
        ----------
        trace : hdbayes.mcmc.Trace
            The fit's draws.

        Returns
        -------
        tau_x : ndarray of shape (S, k)
            The within-class precisions of every draw.
        tau_mu : ndarray of shape (S, k)
            The precisions of the class means of every draw.
        """
        return 1.0 / trace.flat("w_x"), 1.0 / trace.flat("w_mu")
