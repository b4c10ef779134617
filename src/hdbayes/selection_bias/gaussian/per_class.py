"""One variance per class and feature: the variant ``"per-class"`` of the Gaussian classifier.

The per-feature model (:mod:`.per_feature`) with x_ij | y = g ~ N(μ_gj, w_gj),
w_gj | v_j ~ scaled-Inv-χ²(α2_x, s_g v_j) independently over the classes and v_j ~ scaled-Inv-χ²(α1_x, s_x)
(docs/gaussian.md, eq. P18–P41): α2_x fixed or learned on :data:`ALPHA2_GRID`, class scales s_g equal,
plugged in (:func:`plug_in_class_scale`) or given. Here: its prior (:class:`PerClassVariance`), its
adjustment factors (:class:`PerClassVarianceAdjustment`, and :class:`ClassVarianceGridAdjustment` for α2_x
learned) and its chain (:func:`per_class_chain`, on the kernel of :mod:`._scales_kernel`).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np
from scipy.special import gammaincinv
from sklearn.utils._param_validation import StrOptions

from hdbayes._validation import check_count, check_memory, check_n_jobs, check_positive
from hdbayes.exceptions import InputValueError
from hdbayes.mcmc.chains import ChainDraws
from hdbayes.selection_bias.gaussian._factor import (
    _check_class_counts,
    _freeze_arrays,
    _grid_values,
    _log_f_density_normaliser,
    _per_class_log_b_grid,
    check_class_scale,
    class_count_eigenvalues,
    log_f_density_of_log,
)
from hdbayes.selection_bias.gaussian._scales_kernel import run_scales_kernel
from hdbayes.selection_bias.gaussian._variant import POSITIVE
from hdbayes.selection_bias.gaussian.per_feature import PerFeatureGaussianAdjustment, PerFeatureSpread

if TYPE_CHECKING:
    from typing import Literal

    from numpy.typing import ArrayLike

__all__ = [
    "ALPHA2_GRID",
    "PER_CLASS_POOL",
    "ClassVarianceGridAdjustment",
    "PerClassVariance",
    "PerClassVarianceAdjustment",
    "class_variance_pool",
    "per_class_chain",
    "plug_in_class_scale",
]

PER_CLASS_POOL = 512
"""Size of the quasi-Monte Carlo pool of class-variance ratios (eq. P28). Against a pool of 16 384, over
the values of ρ a posterior can visit, the error of (p − k) log A(ρ) varies by at most 0.03–0.06 nats
for p − k = 4000 (docs/gaussian.md, "The adjustment factor"): a constant offset of log A cancels in
the sampler, only this variation matters."""


def class_variance_pool(alpha2_x, n_classes, n_pool=PER_CLASS_POOL, seed=0, class_scale=None):
    """The fixed pool ε_m (M × G) of class-variance ratios ε_g ~ s_g Inv-χ²(α2_x, 1) (eq. P28, P39): a
    scrambled Sobol sequence (seeded, so the pool is the same in every fit and every chain: common
    random numbers) mapped through the inverse distribution function, ε = s_g α2_x / χ²_{α2_x}, with the
    class scales s_g of ``class_scale`` (None: all 1). For α2_x = ∞ the ratios are the scales themselves:
    one row, exact."""
    from scipy.stats import qmc

    scale = check_class_scale(class_scale, n_classes)
    if isinstance(alpha2_x, numbers.Real) and alpha2_x == math.inf:
        return np.ascontiguousarray(scale[None, :])
    alpha2_x = check_positive("alpha2_x", alpha2_x)
    n_pool = check_count("n_pool", n_pool)
    uniforms = qmc.Sobol(int(n_classes), scramble=True, seed=int(seed)).random(n_pool)
    half_chi2 = gammaincinv(alpha2_x / 2.0, uniforms)  # scipy.stats.gamma.ppf
    return np.ascontiguousarray(scale * (alpha2_x / (2.0 * half_chi2)))


@dataclass(frozen=True, eq=False)
class PerClassVarianceAdjustment:
    """The adjustment factor A(ρ), ρ = s_μ/s_x, of the per-class-variance model (docs/gaussian.md,
    eq. P18–P30).

    A feature drawn from the prior has class variances w_g = v ε_g (v ~ Inv-χ²(α1_x, s_x),
    ε_g ~ s_g Inv-χ²(α2_x, 1), s_g the class scales of ``class_scale``, all 1 unless given: eq. P38–P39) and
    a spread of class means w^μ ~ Inv-χ²(α1_μ, s_μ). F depends on them
    only through r = w^μ/v = ρ T, T ~ F(α1_x, α1_μ) as in the per-feature model, and ε, so

        A(ρ) = ∫ b(ρ t) dF_{α1_x, α1_μ}(t),   b(r) = E_ε a(r; ε),

    with a(r; ε) exact (a quadratic-form tail, :func:`per_class_log_discard_probability_given`),
    E_ε by a fixed quasi-Monte Carlo pool of ``n_pool`` points (:func:`class_variance_pool`; its
    error is measured in the tests and the docs), and the t-integral by the per-feature model's
    trapezoidal rule in v = log r (eq. P15–P16) on a grid of step ``h``. The object has the same
    :meth:`kernel_arguments` as :class:`PerFeatureGaussianAdjustment`, so the samplers use one
    interpolation routine for both.

    Examples
    --------
    >>> adj = PerClassVarianceAdjustment.create(4.0, [20, 21, 21], alpha2_x=4.0, n_pool=64)
    >>> bool(adj.log_discard_probability([0.0])[0] < 0)
    True
    """

    threshold: float
    class_counts: tuple
    alpha1_mu: float
    alpha1_x: float
    alpha2_x: float
    epsilon_pool: np.ndarray
    v0: float
    h: float
    log_a: np.ndarray
    class_scale: tuple | None = None

    @classmethod
    def create(cls, threshold, class_counts, alpha1_mu=3.0, alpha1_x=10.0, alpha2_x=4.0, *, n_pool=PER_CLASS_POOL,
               seed=0, h=0.5, tail=20.0, log_rho_range=(-12.0, 12.0), class_scale=None):  # fmt: skip
        """Compute the pool and the grid values log b(e^{v_i}).

        ``class_scale`` (G positive numbers, None for all 1) multiplies class g's variance ratios ε_g
        (eq. P39); with it α2_x may be ∞ (class variances exactly s_g v: a pool of one point, no pool error).

        ρ = s_μ/s_x is the ratio of the spread of the class means to the within-class variance, free
        of the data's units; ``log_rho_range`` (−12, 12) covers signal-to-noise ratios from 6e-6 to
        1.6e5, beyond which A is still finite but computed from a truncated grid.

        The grid runs from ``log_rho_range[0]`` − 2·``tail``/α1_x − log max d_i − 5 (below it the
        density of log T, which falls like e^{(α1_x/2) u}, leaves less than e^{−tail} of every A(ρ)
        with log ρ in the range) up to where the integrand of A at the range's upper end,
        b(e^v) p_U(v − log ρ), has fallen below e^{−2·tail} of its peak (b decreases in r, so the
        integrands of smaller ρ have fallen further).
        The step h = 1/2 is the per-feature model's: against h = 1/4 the two differ by about 1e-11
        in log A (h = 1 would give 2e-4).
        """
        threshold = check_positive("threshold", threshold)
        alpha1_mu = check_positive("alpha1_mu", alpha1_mu)
        alpha1_x = check_positive("alpha1_x", alpha1_x)
        h = check_positive("h", h)
        counts = _check_class_counts(class_counts)
        if counts.sum() <= counts.shape[0]:
            raise InputValueError("the per-class-variance adjustment needs more cases than classes")
        scale = None if class_scale is None else tuple(float(x) for x in check_class_scale(class_scale, counts.size))
        pool = class_variance_pool(alpha2_x, counts.shape[0], n_pool=n_pool, seed=seed, class_scale=scale)
        eigenvalues = class_count_eigenvalues(counts)
        lo, hi = float(log_rho_range[0]), float(log_rho_range[1])
        v_start = lo - 2.0 * tail / alpha1_x - math.log(eigenvalues.max()) - 5.0
        d1, d2, log_norm = alpha1_x, alpha1_mu, _log_f_density_normaliser(alpha1_x, alpha1_mu)
        as_float = counts.astype(np.float64)
        best = [-np.inf]

        def finished(v, values):  # the integrand of A(e^hi) below e^{−2·tail} of its peak so far
            integrand = values + np.array([log_f_density_of_log(x - hi, d1, d2, log_norm) for x in v])
            best[0] = max(best[0], float(integrand.max()))
            return v[-1] > hi and integrand[-1] < best[0] - 2.0 * tail

        log_a = _grid_values(v_start, h, 16, lambda v: _per_class_log_b_grid(v, pool, as_float, float(threshold)),
                             finished)  # fmt: skip
        return cls(float(threshold), tuple(int(c) for c in counts), float(alpha1_mu), float(alpha1_x),
                   float(alpha2_x), pool, float(v_start), float(h), log_a, scale)  # fmt: skip

    def __post_init__(self):
        _freeze_arrays(self, ("epsilon_pool", "log_a"))

    density_parameters = PerFeatureGaussianAdjustment.density_parameters
    kernel_arguments = PerFeatureGaussianAdjustment.kernel_arguments
    log_discard_probability = PerFeatureGaussianAdjustment.log_discard_probability

    def log_discard_probability_given_ratio(self, log_r):
        """log b(r) elementwise: the factor for one feature with known r = w^μ/v, its class variances
        averaged over the pool."""
        x = np.ascontiguousarray(np.asarray(log_r, dtype=np.float64).ravel())
        counts = np.asarray(self.class_counts, dtype=np.float64)
        return _per_class_log_b_grid(x, np.array(self.epsilon_pool), counts, self.threshold).reshape(np.shape(log_r))


# ---------------------------------------------------------------------------------------------
# α2_x learned: one factor per value of a fixed grid (docs/gaussian.md, eq. P35–P37)
# ---------------------------------------------------------------------------------------------

ALPHA2_GRID = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, math.inf)
"""The values α2_x takes when it is learned (``alpha2_x="learn"``), each with prior probability 1/9: from
very unequal class variances (1: ε_g ~ Inv-χ²(1, 1), a Cauchy-like spread) to equal ones (∞, the pooled
model). Measured on lymphoma and SRBCT (docs/gaussian_real_data.md), the best fixed value was 1–4 on one and
64–∞ on the other."""


@dataclass(frozen=True, eq=False)
class ClassVarianceGridAdjustment:
    """The adjustment factors A(ρ; α2_x) of the per-class-variance model for every value of a grid of α2_x
    (docs/gaussian.md, eq. P35–P37): a :class:`PerClassVarianceAdjustment` for each finite value (the same
    scrambled-Sobol uniforms for all, so the factors of neighbouring values share their pool's error) and
    the exact :class:`PerFeatureGaussianAdjustment` for α2_x = ∞ (equal class variances).

    Examples
    --------
    >>> adj = ClassVarianceGridAdjustment.create(4.0, [20, 21, 21], alpha2_grid=(4.0, math.inf), n_pool=64)
    >>> values = adj.log_discard_probability([0.0])
    >>> values.shape, bool(np.all(values < 0))
    ((2, 1), True)
    """

    alpha2_grid: tuple
    adjustments: tuple

    @classmethod
    def create(cls, threshold, class_counts, alpha1_mu=3.0, alpha1_x=10.0, *, alpha2_grid=ALPHA2_GRID,
               n_pool=PER_CLASS_POOL, seed=0, n_jobs=None, class_scale=None):  # fmt: skip
        """Compute the factor of every grid value; ``n_jobs`` threads (joblib's convention; the quadratic-form
        tails release the GIL), which does not change the result. With ``class_scale`` (eq. P38–P39) every
        pool is scaled by it, and α2_x = ∞ is the per-class factor of the one point ε = s (exact) rather
        than the pooled one."""
        from joblib import Parallel, delayed

        grid = tuple(float(value) for value in alpha2_grid)
        if not grid or any(not value > 0 for value in grid) or list(grid) != sorted(set(grid)):
            raise InputValueError(f"alpha2_grid must be increasing positive values, got {alpha2_grid}")

        equal = class_scale is None

        def factor(value):
            if math.isinf(value) and equal:
                return PerFeatureGaussianAdjustment.create(threshold, class_counts, alpha1_mu, alpha1_x)
            return PerClassVarianceAdjustment.create(threshold, class_counts, alpha1_mu, alpha1_x, value,
                                                     n_pool=n_pool, seed=seed, class_scale=class_scale)  # fmt: skip

        adjustments = Parallel(n_jobs=n_jobs, prefer="threads")(delayed(factor)(value) for value in grid)
        return cls(grid, tuple(adjustments))

    @property
    def threshold(self):
        """γ, the F threshold of every factor."""
        return self.adjustments[0].threshold

    def log_discard_probability(self, log_rho):
        """log A(ρ; α2_x) for every grid value (rows) and every log ρ = log s_μ − log s_x (columns)."""
        return np.stack([np.atleast_1d(member.log_discard_probability(log_rho)) for member in self.adjustments])


def plug_in_class_scale(scatter, class_counts):
    """The plug-in class scales ŝ_g of the per-class-variance model (docs/gaussian.md, eq. P41), from every feature.

    Under w_gj = s_g v_j ε_gj (eq. P38) the log of class g's sample variance S²_gj = scatter_gj/(n_g − 1) is
    log s_g + log v_j + log ε_gj + log(χ²_ν/ν), ν = n_g − 1, whose mean over features is log s_g plus terms
    shared by the classes plus E log(χ²_ν/ν) = ψ(ν/2) − log(ν/2). So

        log ŝ_g = mean_j log S²_gj − ψ(ν_g/2) + log(ν_g/2),  then centred (Σ_g log ŝ_g = 0),

    over the features whose within-class scatter is finite and positive in every class (a common factor
    of the s_g is absorbed by the v_j and s_x). Consistent as p → ∞ whatever the v_j and α2_x.

    Parameters
    ----------
    scatter : ndarray of shape (G, p)
        Σ_{i in class g} (x_ij − x̄_gj)² for every feature.
    class_counts : array-like of shape (G,)
        n_g, each at least 2.

    Returns
    -------
    ndarray of shape (G,)
        ŝ, geometric mean 1.
    """
    from scipy.special import digamma

    scatter = np.asarray(scatter, dtype=np.float64)
    dof = np.asarray(class_counts, dtype=np.float64) - 1.0
    if scatter.ndim != 2 or scatter.shape[0] != dof.shape[0] or np.any(dof < 1):
        raise ValueError("plug_in_class_scale needs a (G, p) scatter and G class sizes of at least 2")
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        usable = np.all(np.isfinite(scatter) & (scatter > 0), axis=0)
        if not usable.any():
            raise InputValueError(
                'class_scale="plug-in" needs at least one feature that varies within every class; none does'
            )
        log_variance = np.log(scatter[:, usable] / dof[:, None]).mean(axis=1)
    log_scale = log_variance - digamma(dof / 2.0) + np.log(dof / 2.0)
    return np.exp(log_scale - log_scale.mean())


def per_class_chain(rng, schedule, advance=None, *, counts, sums, squares, prior, adjustment=None, n_discarded=0,
                    proposal_sd=0.5, n_metropolis=5, init_jitter=0.5, class_scale=None):  # fmt: skip
    """Run one chain of the per-class-variance model (docs/gaussian.md, eq. P18–P19, P31–P36).

    The per-feature-spread model (:func:`per_feature_chain`) with one variance per class and feature:
    x_ij | y_i = g ~ N(μ_gj, w_gj), w_gj | v_j ~ Inv-χ²(α2_x, v_j) independently over g, and
    v_j ~ Inv-χ²(α1_x, s_x) (the per-feature model's prior of w^x_j). Per iteration: μ_gj (P31), w_gj
    (P31, Gamma draws of 1/w_gj), log v_j (P32, one update of :func:`hdbayes.mcmc.slice_sample` from its
    generalised inverse Gaussian conditional), ν, w^μ_j, τ^ν, then the Metropolis steps on log s_μ and
    log s_x of the per-feature model with Σ_j 1/v_j in place of Σ_j 1/w^x_j (P33), and
    (p − k) log A(s_μ/s_x) when ``adjustment`` is given and p − k > 0 (a
    :class:`PerClassVarianceAdjustment`). Same kernel, proposals and signature as :func:`per_feature_chain`.

    With ``prior["alpha2_x"] = "learn"``, α2_x has a uniform prior on :data:`ALPHA2_GRID` (∞ included: equal
    class variances) and ``n_metropolis`` Metropolis steps per iteration move it to a neighbouring grid value
    with the class variances integrated out (eq. P35–P36); the correction then needs one table per grid
    value (a :class:`ClassVarianceGridAdjustment`).

    With ``class_scale`` (s_1..s_G, eq. P38–P40) class g's variances are centred on s_g v_j:
    w_gj | v_j ~ Inv-χ²(α2_x, s_g v_j), and at α2_x = ∞ w_gj = s_g v_j; the adjustment must then be
    computed with the same scales (``class_scale=`` of its ``create``; checked).

    Parameters
    ----------
    prior : dict
        ``alpha1_mu, alpha1_x, alpha2_x, alpha_x, w_x, alpha_mu, w_mu, alpha_nu, w_nu``; ``alpha2_x`` a
        positive number or ``"learn"``.
    class_scale : array-like of shape (G,), optional
        The class scales s_g (positive; None: all 1, the model of eq. P18).

    Returns
    -------
    hdbayes.mcmc.ChainDraws
        ``posterior``: ``mu`` and ``w_x`` (S, G, k); ``v``, ``w_mu``, ``nu`` (S, k); ``log_s_mu``,
        ``log_s_x``, ``log_tau_nu`` (S,); learned, also ``alpha2_x`` (S,) (``inf`` for equal class
        variances); ``warmup`` (learned: with ``alpha2_x``) and ``sample_stats`` as :func:`per_feature_chain`
        (learned: also ``alpha2_acceptance_rate``).
    """
    learn = isinstance(prior["alpha2_x"], str)
    grid = np.asarray(ALPHA2_GRID, dtype=np.float64) if learn else np.array([float(prior["alpha2_x"])])
    out = run_scales_kernel(rng, schedule, advance, counts, sums, squares, prior, adjustment, n_discarded, proposal_sd,
                            n_metropolis, init_jitter, True, grid, class_scale)  # fmt: skip
    mu, w_x, v, w_mu, nu, log_s_mu, log_s_x, log_tau_nu, alpha2, acceptance, alpha2_acceptance, *warm = out
    posterior = {"mu": mu, "w_x": w_x, "v": v, "w_mu": w_mu, "nu": nu, "log_s_mu": log_s_mu, "log_s_x": log_s_x,
                 "log_tau_nu": log_tau_nu}  # fmt: skip
    warmup = dict(zip(("log_s_mu", "log_s_x", "log_tau_nu"), warm[:3], strict=True))
    sample_stats = {"acceptance_rate": acceptance}
    if learn:  # eq. P35–P36
        posterior["alpha2_x"] = alpha2
        warmup["alpha2_x"] = warm[3]
        sample_stats["alpha2_acceptance_rate"] = alpha2_acceptance
    return ChainDraws(posterior=posterior, warmup=warmup if schedule.burn_in > 0 else {}, sample_stats=sample_stats)


class PerClassVariance(PerFeatureSpread):
    """One variance per class and feature: the per-feature model whose classes may differ in variance.

    The variant ``"per-class"`` of :class:`~hdbayes.BiasCorrectedGaussianClassifier` (docs/gaussian.md
    eq. P18–P19, P31–P41): x_ij | y = g ~ N(μ_gj, w_gj), w_gj | v_j ~ scaled-Inv-χ²(α2_x, s_g v_j)
    independently over the classes, v_j ~ scaled-Inv-χ²(α1_x, s_x) (the per-feature model's prior of w^x_j):
    a class may be more variable than another (lymphoma: DLBCL about twice FL and CLL on the discriminating
    genes). The correction uses the adjustment factor of this model (:class:`PerClassVarianceAdjustment`,
    :class:`ClassVarianceGridAdjustment` when α2_x is learned), on a quasi-Monte Carlo pool of class-variance
    ratios of the estimator's ``n_mc`` points rounded up to a power of 2 (None: 512).

    Parameters
    ----------
    alpha1_mu, alpha1_x : float, default=3.0, 10.0
        As :class:`PerFeatureSpread`.
    alpha2_x : float or "learn", default="learn"
        Degrees of freedom of the class variances around v_j: small values let the classes' variances
        differ more; as α2_x → ∞ the model becomes the per-feature one. ``"learn"``: α2_x has a uniform prior
        on :data:`ALPHA2_GRID` (1, 2, 4, …, 128 and ∞) and is sampled with the other parameters (eq. P35–P37),
        so the data decide how unequal the class variances are; corrected, it costs one adjustment table per
        grid value (about 0.4 s each, in ``n_jobs`` threads). Its draws are ``trace_["alpha2_x"]``. It is the
        default because no fixed value suits both lymphoma and SRBCT, and α2_x = 4, the earlier default, fails
        the calibration checks of Li (2009) §4.1's equal-variance simulation, which the learned α2_x passes
        (docs/gaussian_real_data.md).
    class_scale : {"equal", "plug-in"} or array-like of shape (n_classes,), default="equal"
        The class scales s_g (eq. P38–P41): class g is s_g times as variable as the others across all
        features, and the adjustment factor's class-variance ratios are scaled by s. ``"equal"``: all 1.
        ``"plug-in"``: ŝ estimated in ``fit`` from the within-class variances of all p features
        (:func:`plug_in_class_scale`, an empirical-Bayes value, consistent as p → ∞; on lymphoma
        ŝ = 1.62 : 0.94 : 0.66 for DLBCL : FL : CLL). An array: known scales (positive, in the order of the
        estimator's ``classes_``; a common factor is absorbed by the v_j and s_x, up to the prior of s_x).
        The scales used are the estimator's ``class_scale_``.
    alpha_x, w_x, alpha_mu, w_mu, alpha_nu, w_nu, proposal_sd : float
        As :class:`PerFeatureSpread`.
    n_metropolis : int
        As :class:`PerFeatureSpread` (``n_metropolis`` also counts the moves of a learned α2_x).

    Examples
    --------
    >>> PerClassVariance(alpha2_x=4.0, class_scale="plug-in")
    PerClassVariance(alpha2_x=4.0, class_scale='plug-in')
    """

    name: ClassVar[str] = "per-class"
    _parameter_constraints: ClassVar[dict] = {
        **PerFeatureSpread._parameter_constraints,
        "alpha2_x": [POSITIVE, StrOptions({"learn"})],
        "class_scale": [StrOptions({"equal", "plug-in"}), "array-like"],
    }
    dims: ClassVar[dict] = {"mu": ["class", "feature"], "w_x": ["class", "feature"], "v": ["feature"],
                            "w_mu": ["feature"], "nu": ["feature"]}  # fmt: skip
    _prior_names: ClassVar[tuple] = (*PerFeatureSpread._prior_names, "alpha2_x")

    def __init__(self, *, alpha1_mu: float = 3.0, alpha1_x: float = 10.0, alpha2_x: float | Literal["learn"] = "learn",
                 class_scale: Literal["equal", "plug-in"] | ArrayLike = "equal", alpha_x: float = 4.0,
                 w_x: float = 1.0, alpha_mu: float = 1.5, w_mu: float = 0.01, alpha_nu: float = 1.5,
                 w_nu: float = 0.01, proposal_sd: float = 0.5, n_metropolis: int = 5) -> None:  # fmt: skip
        super().__init__(alpha1_mu=alpha1_mu, alpha1_x=alpha1_x, alpha_x=alpha_x, w_x=w_x, alpha_mu=alpha_mu,
                         w_mu=w_mu, alpha_nu=alpha_nu, w_nu=w_nu, proposal_sd=proposal_sd,
                         n_metropolis=n_metropolis)  # fmt: skip
        self.alpha2_x = alpha2_x
        self.class_scale = class_scale

    def needs_scatter(self) -> bool:
        """Whether the fit needs every feature's within-class scatter (the plug-in class scales).

        Returns
        -------
        bool
            True for ``class_scale="plug-in"``.
        """
        return isinstance(self.class_scale, str) and self.class_scale == "plug-in"

    def _class_scale(self, scatter, class_counts, classes):
        """The class scales s_g of a fit (eq. P38–P41): None for ``"equal"`` (the model without them), ŝ for
        ``"plug-in"``, the given array otherwise (checked against the classes)."""
        if isinstance(self.class_scale, str):
            return None if self.class_scale == "equal" else plug_in_class_scale(scatter, class_counts)
        try:
            values = np.asarray(self.class_scale, dtype=np.float64)
        except (TypeError, ValueError):
            raise InputValueError(f"class_scale must be numbers, one per class, got {self.class_scale!r}") from None
        if values.shape != (len(classes),):
            raise InputValueError(
                f"class_scale has {values.size} value{'s' if values.size != 1 else ''} for {len(classes)} classes "
                f"{classes.tolist()}; give one per class, in that order"
            )
        return check_class_scale(values, len(classes))

    def _draw_bytes(self, n_classes, k):
        """Bytes of a saved draw: the class means and class variances (G × k each), four values per feature and
        a few scalars."""
        return 8 * (2 * n_classes * k + 4 * k + 8)

    def _fitted_class_scale(self, class_scale, n_classes):
        return np.ones(n_classes) if class_scale is None else class_scale

    def _factor(self, threshold, class_counts, *, n_kept, n_mc, n_jobs, rng, class_scale):
        """A(s_μ/s_x; α2_x) on a pool of ``n_mc`` quasi-random class-variance ratios rounded up to a power of 2
        (None: 512), one factor per grid value when α2_x is learned (in ``n_jobs`` threads)."""
        if threshold <= 0:
            raise InputValueError(
                f'variant="per-class" with correct=True needs a selection threshold above 0; the {n_kept} kept '
                "features reach features with F = 0 (constant ones): keep fewer features, or set correct=False"
            )
        n_pool = PER_CLASS_POOL if n_mc is None else 1 << int(n_mc - 1).bit_length()
        learn = isinstance(self.alpha2_x, str)
        n_grid = len(ALPHA2_GRID) if learn else 1
        # each grid value's pool: its Sobol points and class-variance ratios, G + 2 numbers a point
        check_memory(8.0 * n_grid * n_pool * (len(class_counts) + 2), f"n_mc = {n_mc}",
                     purpose="the Monte Carlo pools of the correction")  # fmt: skip
        if learn:
            return ClassVarianceGridAdjustment.create(threshold, class_counts, self.alpha1_mu, self.alpha1_x,
                                                      n_pool=n_pool, n_jobs=check_n_jobs(n_jobs, n_grid),
                                                      class_scale=class_scale)  # fmt: skip
        return PerClassVarianceAdjustment.create(threshold, class_counts, self.alpha1_mu, self.alpha1_x, self.alpha2_x,
                                                 n_pool=n_pool, class_scale=class_scale)  # fmt: skip

    def _bind_chain(self, class_counts, sums, squares, adjustment, n_discarded, class_scale):
        return self._chain(per_class_chain, class_counts, sums, squares, adjustment, n_discarded,
                           class_scale=class_scale)  # fmt: skip
