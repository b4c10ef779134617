"""Symmetric stable priors of the compressed interaction models and their splitting distributions.

Li & Neal's compression (thesis ch. 3, §3.3, eq. 3.9–3.34)
gives every coefficient β a symmetric stable prior of index α ∈ {1, 2} with location 0,

    β ~ Cauchy(0, σ)   (α = 1)      or      β ~ N(0, σ²)   (α = 2),        (3.11)

and, by stable additivity, the sum s_g of the n_g coefficients of a group has the
**compressed prior** (3.12)

    s_g ~ Cauchy(0, W_g)   or   s_g ~ N(0, W_g),       W_g = Σ_k σ_{gk}^α = Σ_o n_{g,o} σ_o^α.

Throughout this module a "width" is stored in **α-power units**: for α = 1 it is the
Cauchy scale, for α = 2 it is the Gaussian **variance** (a convention of this library). Widths of
independent parts then simply add.

After the MCMC over the sums, a sum s is split into a part s^t (the members used by a
test case) and the rest (eq. 3.27):

    P(s^t | s) = P^(1)(s^t) P^(2)(s − s^t) / P^s(s).

* Gaussian (widths = variances Σ_1², Σ_2²), closed form (3.28):
  s^t | s ~ N( s Σ_1²/(Σ_1²+Σ_2²),  Σ_1²Σ_2²/(Σ_1²+Σ_2²) ).
* Cauchy (widths = scales Σ_1, Σ_2), density (3.29) with normaliser (3.31) and CDF
  (3.30)–(3.34), sampled by inversion (Halley's method on θ = arctan) or by an exact
  rejection sampler.

Numerics of the Cauchy CDF (3.30). With D = s⁴ + 2(Σ_1²+Σ_2²)s² + (Σ_1²−Σ_2²)² one has
the factorisation D = (s² + (Σ_1+Σ_2)²)(s² + (Σ_1−Σ_2)²), hence

    1/(C D) = Σ_1Σ_2 / (π (Σ_1+Σ_2) δ),      δ = s² + (Σ_1−Σ_2)²,

    F(x) = [ s Σ_1Σ_2 L(x) + Σ_2 (s² − Σ_1² + Σ_2²) A_0(x) + Σ_1 (s² + Σ_1² − Σ_2²) A_s(x) ]
           / (π (Σ_1+Σ_2) δ),

with L(x) = log((x²+Σ_1²)/((x−s)²+Σ_2²)) = log1p((2xs − s² + Σ_1² − Σ_2²)/((x−s)²+Σ_2²)),
A_0(x) = arctan(x/Σ_1) + π/2 = atan2(Σ_1, −x) and A_s(x) = atan2(Σ_2, s − x) (the atan2
forms are accurate in the left tail). Everything is computed after rescaling by
c = Σ_1 + Σ_2 + |s| (F is scale invariant), so nothing overflows: the textbook
evaluation of (3.30)–(3.34) overflows D for |s| ≳ 1e77 and underflows C. The bracket is
a difference of terms of size √δ that is itself of size δ, so F loses about
log10(c/√δ) digits as δ → 0 (s ≈ 0 and Σ_1 ≈ Σ_2). For δ/c² < :data:`DEGENERATE_TOL`
(1e-14: cancellation error ≲ 1e-9, approximation error ≲ 1e-7) the density is taken to
be its limit, the scaled Student-t_3 ∝ 1/(Σ̄² + (x − s/2)²)², Σ̄ = (Σ_1+Σ_2)/2
(Σ_1/√3 · t_3 at s = 0, Σ_1 = Σ_2), whose CDF is (θ + π/2 + sin θ cos θ)/π with
θ = arctan((x − s/2)/Σ̄).

The inversion solves F(x) = u by Halley's method in an arctan variable on a bounded
bracket, safeguarded by bisection (a step that leaves the bracket, or is not half the
step before the last, is replaced by a bisection), stopping when |F − u| < 1e-12 or after
60 iterations, and then takes one more step, which needs no evaluation of F: x is then
accurate to the rounding of F (in a Cauchy tail, where the density is small, far better
than |F − u| < 1e-12 alone guarantees). In the arctan variable of a Cauchy factor the
factor cancels from the density, so both derivatives are cheap rational functions, and
about four evaluations of F suffice (the Illinois method used before 2026-11-29 needed
about 13.5, with the same tolerance on F). Unlike BPHO's single θ = arctan(x), the
variable is centred on one of the two Cauchy factors (on either side of m = s/2 when the
peaks are separated, :func:`split_cauchy_quantile`): with θ = arctan(x/c) the CDF is a
near step function when |s| ≫ Σ_1 + Σ_2 or Σ_1 ≪ Σ_2, and the iteration does not
converge in 60 steps. The tolerance 1e-12 on F is tighter than BPHO's 1e-5 (50
iterations): an error of 1e-5 in F is a bias of the same size in every probability
computed from the draws. What does not depend on u is computed by
``_split_cauchy_prepare``, once for all the u of one split (the prediction kernel's
test cases that touch the same group in the same way).
Where a width is tiny compared with |s| (Σ/|s| ≲ 1e-4), F changes by more than 1e-12
between adjacent doubles and x is then accurate to a few ulps instead.

The numba kernels (:func:`split_cauchy`, :func:`split_gaussian`, :func:`prior_draw`)
draw from the :class:`numpy.random.Generator` passed in (numba draws from it directly),
so they can be called from compiled prediction loops without touching numba's global
generator; the deterministic kernels
(:func:`split_cauchy_quantile`, :func:`split_gaussian_from_normal`,
:func:`log_prior_scalar`) take the uniform / standard normal explicitly. The
vectorised Python functions (:func:`split`, :func:`log_prior`, ...) validate their
input and draw from a :class:`numpy.random.Generator`.
"""

from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING

import numpy as np

from hdbayes._numba import jit
from hdbayes._validation import check_generator

if TYPE_CHECKING:
    from typing import Literal

    from numpy.typing import ArrayLike

    from hdbayes._validation import RandomStateLike

__all__ = [
    "CAUCHY",
    "DEGENERATE_TOL",
    "GAUSSIAN",
    "compressed_width",
    "log_prior",
    "log_prior_scalar",
    "prior_draw",
    "split",
    "split_cauchy",
    "split_cauchy_cdf",
    "split_cauchy_inversion",
    "split_cauchy_normalizer",
    "split_cauchy_pdf",
    "split_cauchy_quantile",
    "split_cauchy_rejection",
    "split_gaussian",
    "split_gaussian_from_normal",
    "split_gaussian_moments",
]

CAUCHY = 1
"""Stable index α of the Cauchy prior."""
GAUSSIAN = 2
"""Stable index α of the Gaussian prior."""

DEGENERATE_TOL = 1e-14
"""Use the t_3 limit of (3.29) when δ = s² + (Σ_1−Σ_2)² < DEGENERATE_TOL · (Σ_1+Σ_2+|s|)²."""

CDF_TOL = 1e-12
"""The inversion's iteration stops when |F(x) − u| < CDF_TOL (and takes one more step) ..."""
MAX_ITER = 60
"""... or after MAX_ITER iterations."""

_HALF_PI = 0.5 * math.pi
_LOG_PI = math.log(math.pi)
_LOG_2PI = math.log(2.0 * math.pi)


# ---------------------------------------------------------------------------------------------
# validation helpers


def _check_index(index):
    """α ∈ {1, 2}; also accepts the names "cauchy" and "gaussian"."""
    if isinstance(index, str):
        names = {"cauchy": CAUCHY, "gaussian": GAUSSIAN, "normal": GAUSSIAN}
        if index.lower() not in names:
            raise ValueError(f"index must be 1 ('cauchy') or 2 ('gaussian'), got {index!r}")
        return names[index.lower()]
    if isinstance(index, bool) or not isinstance(index, numbers.Real) or index not in (1, 2):
        raise ValueError(
            f"index must be the stable index 1 (Cauchy) or 2 (Gaussian); other α have no closed-form "
            f"density and are not supported, got {index!r}"
        )
    return int(index)


def _as_float_array(name, value):
    arr = np.asarray(value)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be real numbers, got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {arr[~np.isfinite(arr)].flat[0]!r}")
    return arr


def _check_widths(name, value, *, allow_zero=True):
    arr = _as_float_array(name, value)
    bad = arr < 0 if allow_zero else arr <= 0
    if np.any(bad):
        raise ValueError(f"{name} must be {'>=' if allow_zero else '>'} 0, got {arr[bad].flat[0]!r}")
    return arr


def _scalar_or_array(arr):
    return float(arr) if arr.ndim == 0 else arr


# ---------------------------------------------------------------------------------------------
# compressed prior (3.12)


def compressed_width(
        order_counts: ArrayLike, sigma: ArrayLike, index: Literal[1, 2, "cauchy", "gaussian"]) -> float | np.ndarray:
    """The widths W_g = Σ_o n_{g,o} σ_o^α of the compressed priors (eq. 3.12; widths in α-power units).

    Parameters
    ----------
    order_counts : array_like, shape (G, n_orders) or (n_orders,)
        n_{g,o} ≥ 0, the number of order-o patterns in group g (may be fractional only
        if you know why; usually integers).
    sigma : array_like, shape (n_orders,)
        σ_o ≥ 0, the prior width of one order-o coefficient (Cauchy scale / Gaussian
        standard deviation).
    index : {1, 2, "cauchy", "gaussian"}
        Stable index α.

    Returns
    -------
    ndarray, shape (G,) (or float for 1-d ``order_counts``)
        W_g: the Cauchy scale of s_g (α = 1) or the Gaussian **variance** of s_g (α = 2).

    Examples
    --------
    >>> compressed_width([[1, 2, 0], [0, 1, 1]], [5.0, 1.0, 0.5], "cauchy")
    array([7. , 1.5])
    >>> compressed_width([[1, 2, 0], [0, 1, 1]], [5.0, 1.0, 0.5], "gaussian")
    array([27.  ,  1.25])
    """
    alpha = _check_index(index)
    counts = _check_widths("order_counts", order_counts)
    sig = _check_widths("sigma", sigma)
    if sig.ndim != 1:
        raise ValueError(f"sigma must be a 1-d array of per-order widths, got shape {sig.shape}")
    if counts.ndim not in (1, 2) or counts.shape[-1] != sig.shape[0]:
        raise ValueError(
            f"order_counts must have shape (G, n_orders) with n_orders = len(sigma) = {sig.shape[0]}, "
            f"got shape {counts.shape}"
        )
    width = counts @ sig**alpha
    return _scalar_or_array(np.asarray(width))


@jit
def log_prior_scalar(s, width, index):
    """log density of Cauchy(0, W) (``index`` 1) or N(0, W) (``index`` 2, W = variance) at s.

    Numba kernel for samplers; no validation (``width`` > 0 assumed). The Cauchy form
    −log π − log W − log1p((s/W)²) is rewritten for |s| > W as
    −log π + log W − 2 log|s| − log1p((W/s)²) so it never overflows.
    """
    if index == 1:
        a = abs(s)
        if a <= width:
            r = s / width
            return -_LOG_PI - math.log(width) - math.log1p(r * r)
        r = width / a
        return -_LOG_PI + math.log(width) - 2.0 * math.log(a) - math.log1p(r * r)
    return -0.5 * (_LOG_2PI + math.log(width)) - 0.5 * s * s / width


@jit
def _log_prior_array(s, width, index, out):
    for i in range(s.shape[0]):
        out[i] = log_prior_scalar(s[i], width[i], index)


def log_prior(s: ArrayLike, width: ArrayLike, index: Literal[1, 2, "cauchy", "gaussian"]) -> float | np.ndarray:
    """log density of the compressed prior (3.12): Cauchy(0, W) or N(0, W), vectorised.

    Parameters
    ----------
    s : array_like
        Values of the sums (any real).
    width : array_like
        W > 0 in α-power units (Cauchy scale / Gaussian variance); broadcast with ``s``.
    index : {1, 2, "cauchy", "gaussian"}
        Stable index α.

    Returns
    -------
    ndarray or float
        The log densities at ``s``, of the broadcast shape of ``s`` and ``width`` (a float when both are scalars).

    Examples
    --------
    >>> bool(np.isclose(log_prior(0.0, 2.0, "cauchy"), -np.log(2 * np.pi)))
    True
    >>> bool(np.isclose(log_prior(0.0, 4.0, "gaussian"), -0.5 * np.log(8 * np.pi)))
    True
    """
    alpha = _check_index(index)
    s = np.asarray(s)
    if s.dtype.kind not in "biuf":
        raise TypeError(f"s must be real numbers, got dtype {s.dtype}")
    w = _check_widths("width", width, allow_zero=False)
    s, w = np.broadcast_arrays(s.astype(np.float64), w)
    out = np.empty(s.shape)
    _log_prior_array(s.ravel(), w.ravel(), alpha, out.reshape(-1))
    return _scalar_or_array(out)


@jit
def prior_draw(width, index, rng):
    """One draw from Cauchy(0, W) (``index`` 1) or N(0, W) (``index`` 2) with the generator ``rng``.

    Used for the sums s* of "extra" coefficients (thesis eq. 3.25). W = 0 gives 0.
    """
    if width <= 0.0:
        return 0.0
    if index == 1:
        return width * math.tan(math.pi * (rng.random() - 0.5))
    return math.sqrt(width) * rng.standard_normal()


# ---------------------------------------------------------------------------------------------
# Gaussian split (3.28)


@jit
def split_gaussian_from_normal(s, var1, var2, z):
    """s^t = mean + sd · z for the Gaussian split (3.28), given a standard normal z.

    ``var1``, ``var2`` are the variances Σ_1², Σ_2² of the part and of the rest;
    ``var1`` ≤ 0 gives 0 (empty part), ``var2`` ≤ 0 gives s (the part is everything).
    """
    if var1 <= 0.0:
        return 0.0
    if var2 <= 0.0:
        return s
    total = var1 + var2
    return s * (var1 / total) + math.sqrt(var1 * (var2 / total)) * z


@jit
def split_gaussian(s, var1, var2, rng):
    """Draw s^t | s for the Gaussian prior (3.28) with the generator ``rng``.

    Parameters
    ----------
    s : float
        The group sum.
    var1, var2 : float
        Variances Σ_1² (the part) and Σ_2² (the rest). ``var1`` ≤ 0 → 0, ``var2`` ≤ 0 → s
        (no random number is consumed in these cases).
    rng : numpy.random.Generator

    Returns
    -------
    float
    """
    if var1 <= 0.0:
        return 0.0
    if var2 <= 0.0:
        return s
    return split_gaussian_from_normal(s, var1, var2, rng.standard_normal())


def split_gaussian_moments(s, var1, var2):
    """Mean and variance of s^t | s under Gaussian priors (eq. 3.28), vectorised.

        mean = s Σ_1²/(Σ_1²+Σ_2²),   variance = Σ_1² (1 − Σ_1²/(Σ_1²+Σ_2²)) = Σ_1²Σ_2²/(Σ_1²+Σ_2²).

    Examples
    --------
    >>> split_gaussian_moments(3.0, 1.0, 2.0)
    (1.0, 0.6666666666666666)
    """
    s = _as_float_array("s", s)
    v1 = _check_widths("var1", var1)
    v2 = _check_widths("var2", var2)
    s, v1, v2 = np.broadcast_arrays(s, v1, v2)
    total = v1 + v2
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.where(total > 0, v1 / np.where(total > 0, total, 1.0), 0.0)
    mean = np.where(v2 > 0, s * frac, np.where(v1 > 0, s, 0.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        var = np.where((v1 > 0) & (v2 > 0), v1 * (v2 / np.where(total > 0, total, 1.0)), 0.0)
    return _scalar_or_array(mean), _scalar_or_array(var)


# ---------------------------------------------------------------------------------------------
# Cauchy split (3.29)–(3.34)


@jit
def _cdf_general(x, s, a, b, delta):
    """(3.30) in the stable form of the module docstring (arguments already rescaled)."""
    bracket = b * (s * s - (a - b) * (a + b)) * math.atan2(a, -x) + a * (s * s + (a - b) * (a + b)) * math.atan2(
        b, s - x
    )
    if s != 0.0:
        num = s * (2.0 * x - s) + (a - b) * (a + b)
        den = (x - s) * (x - s) + b * b
        ratio = num / den
        if abs(ratio) < 0.5:  # near 1: log1p avoids cancellation
            log_ratio = math.log1p(ratio)
        else:  # far from 1 (e.g. x ≈ 0, Σ_1 ≪ |s|): log1p(−1 + tiny) would lose everything
            log_ratio = 2.0 * (math.log(math.hypot(x, a)) - math.log(math.hypot(x - s, b)))
        bracket += s * a * b * log_ratio
    return bracket / (math.pi * (a + b) * delta)


@jit
def _cdf_t3(theta):
    """CDF of ∝ 1/(1 + t²)² at t = tan θ: (θ + π/2 + sin θ cos θ)/π."""
    return (theta + _HALF_PI + math.sin(theta) * math.cos(theta)) / math.pi


@jit
def _split_cauchy_setup(s, sigma1, sigma2):
    """Rescale by c = Σ_1 + Σ_2 + |s|; returns (c, s/c, Σ_1/c, Σ_2/c, δ/c², degenerate)."""
    c = sigma1 + sigma2 + abs(s)
    ss = s / c
    a = sigma1 / c
    b = sigma2 / c
    delta = ss * ss + (a - b) * (a - b)
    return c, ss, a, b, delta, delta < DEGENERATE_TOL


@jit
def _split_cauchy_cdf_scalar(x, s, sigma1, sigma2):
    if sigma1 <= 0.0:
        return 1.0 if x >= 0.0 else 0.0
    if sigma2 <= 0.0:
        return 1.0 if x >= s else 0.0
    c, ss, a, b, delta, degenerate = _split_cauchy_setup(s, sigma1, sigma2)
    if degenerate:
        return _cdf_t3(math.atan((x / c - 0.5 * ss) / (0.5 * (a + b))))
    return _cdf_general(x / c, ss, a, b, delta)


@jit
def _halley(u, degenerate, centre, width, other_centre, other_width, lo, hi, g_lo, g_hi, s, a, b, delta):
    """Solve G(φ) = F(centre + width·tan φ) = u for φ ∈ (lo, hi), g = G − u known at the ends.

    (degenerate: G is the t_3 CDF of φ itself; otherwise centre ± width is one Cauchy factor
    of (3.29) and other_centre ± other_width the other, all in units of c.)

    Halley's method safeguarded by the bracket: both derivatives are rational in x, as
    the factor of the variable cancels from the density: G'(φ) = κ/q with
    q = other_width² + (x − other_centre)², κ = other_width (s² + (a+b)²)/(π(a+b)), and
    G''/G' = −2 (x − other_centre) width (1 + tan²φ)/q (degenerate: G' = 2cos²φ/π,
    G''/G' = −2 tan φ). A step that leaves the bracket, or is not half the step before
    the last, is replaced by bisection. The start is the secant of the bracket's ends.
    Stops when |G − u| < CDF_TOL, or when the step is within a few ulps of x (F can jump by
    more than CDF_TOL between adjacent doubles when a width is ≲ 1e-4 of |s|), or after
    MAX_ITER iterations; the last step is then taken (it needs no evaluation), so the
    root is accurate to the rounding of F.
    """
    phi = (lo * g_hi - hi * g_lo) / (g_hi - g_lo) if g_hi > g_lo else 0.5 * (lo + hi)
    if not (lo < phi < hi):
        phi = 0.5 * (lo + hi)
    kappa = 0.0
    if not degenerate:
        kappa = other_width * (s * s + (a + b) * (a + b)) / (math.pi * (a + b))
    last = hi - lo
    before_last = last
    for _ in range(MAX_ITER):
        tan_phi = math.tan(phi)
        x = centre + width * tan_phi
        if degenerate:
            g = _cdf_t3(phi) - u
            cos_phi = math.cos(phi)
            slope = 2.0 * cos_phi * cos_phi / math.pi
            curvature = -2.0 * tan_phi
        else:
            g = _cdf_general(x, s, a, b, delta) - u
            dx = x - other_centre
            q = other_width * other_width + dx * dx
            slope = kappa / q
            curvature = -2.0 * dx * width * (1.0 + tan_phi * tan_phi) / q
        if g > 0.0:
            hi = phi
        else:
            lo = phi
        if slope > 0.0:
            step = g / slope
            denominator = 1.0 - 0.5 * step * curvature
            if denominator > 0.5:  # else Halley's correction is unreliable: a Newton step
                step /= denominator
        else:
            step = np.inf
        new = phi - step
        if abs(g) < CDF_TOL or abs(step) * width * (1.0 + tan_phi * tan_phi) <= 4.5e-16 * abs(x):
            return new if lo <= new <= hi else phi
        if not (lo < new < hi) or abs(step) > 0.5 * abs(before_last):
            new = 0.5 * (lo + hi)
            step = phi - new
        before_last, last = last, step
        if (hi - lo) * width * (1.0 + tan_phi * tan_phi) <= 4.5e-16 * abs(x):
            return new
        phi = new
    return phi


@jit
def _split_cauchy_prepare(s, sigma1, sigma2):
    """What the quantile of (3.29) at any u needs of (s, Σ_1, Σ_2 > 0): computed once for many u.

    Returns
    -------
    tuple of 9 floats
        (c, s/c, Σ_1/c, Σ_2/c, δ/c², kind, F(m), φ_left, φ_right): ``kind`` 0 degenerate
        (t_3 limit), 1 one peak, 2 two separated peaks, split at m = s/2 with
        F(m) and the arctan variables of m for the peaks on its left and right (kind 2
        only; else 0). ``_split_cauchy_solve`` takes them with u.
    """
    c, ss, a, b, delta, degenerate = _split_cauchy_setup(s, sigma1, sigma2)
    if degenerate:
        return c, ss, a, b, delta, 0.0, 0.0, 0.0, 0.0
    if abs(ss) <= max(a, b):
        return c, ss, a, b, delta, 1.0, 0.0, 0.0, 0.0
    m = 0.5 * ss
    f_m = _cdf_general(m, ss, a, b, delta)
    left_centre, left_width, right_centre, right_width = (0.0, a, ss, b) if ss > 0 else (ss, b, 0.0, a)
    phi_left = math.atan((m - left_centre) / left_width)
    phi_right = math.atan((m - right_centre) / right_width)
    return c, ss, a, b, delta, 2.0, f_m, phi_left, phi_right


@jit
def _split_cauchy_solve(c, ss, a, b, delta, kind, f_m, phi_left, phi_right, u):
    """The quantile of (3.29) at u ∈ (0, 1) from ``_split_cauchy_prepare``'s output (see
    :func:`split_cauchy_quantile`)."""
    lo, hi, g_lo, g_hi = -_HALF_PI, _HALF_PI, -u, 1.0 - u
    if kind == 0.0:  # one call of _halley below, not one per branch: a smaller kernel to compile
        centre, width, other_centre, other_width = 0.5 * ss, 0.5 * (a + b), 0.0, 0.0
    elif kind == 1.0:
        centre, width, other_centre, other_width = (0.0, a, ss, b) if a <= b else (ss, b, 0.0, a)
    elif u <= f_m:  # the peak on the left of m
        centre, width, other_centre, other_width = (0.0, a, ss, b) if ss > 0 else (ss, b, 0.0, a)
        hi, g_hi = phi_left, f_m - u
    else:
        centre, width, other_centre, other_width = (ss, b, 0.0, a) if ss > 0 else (0.0, a, ss, b)
        lo, g_lo = phi_right, f_m - u
    phi = _halley(u, kind == 0.0, centre, width, other_centre, other_width, lo, hi, g_lo, g_hi, ss, a, b, delta)
    return c * (centre + width * math.tan(phi))


@jit
def split_cauchy_quantile(s, sigma1, sigma2, u):
    """Inverse of the CDF (3.30) of s^t | s under Cauchy priors, at the probability u.

    Numba kernel (no validation). Solves F(x) = u by Halley's method in an arctan
    variable, safeguarded by bisection, until |F − u| < 1e-12, then takes one more step,
    so x is accurate to the rounding of F (module docstring). Work in units of
    c = Σ_1 + Σ_2 + |s|; with Σ_n, Σ_w the narrower and the wider of Σ_1, Σ_2:

    * |s| ≤ Σ_w (one peak): x = μ_n + Σ_n tan φ, φ ∈ (−π/2, π/2), μ_n the centre (0 or s)
      of the narrower factor — F is nearly linear in φ;
    * |s| > Σ_w (two separated peaks): split the line at m = s/2; if u ≤ F(m) use the
      variable of the peak on the left of m (x = μ + Σ tan φ, φ up to arctan((m − μ)/Σ)),
      else that of the peak on the right. Within each part the other Cauchy factor varies
      slowly, so F is smooth in φ even when |s| ≫ Σ_1 + Σ_2 (a single θ = arctan(x/c), as
      in BPHO, makes F a near step function there and the iteration stalls);
    * δ/c² < 1e-14 (degenerate): the t_3 limit in θ = arctan((x − s/2)/Σ̄).

    The work that does not depend on u is ``_split_cauchy_prepare``, the rest
    ``_split_cauchy_solve`` (the prediction kernel prepares once per group and saved
    draw, and solves for every test case).

    Parameters
    ----------
    s : float
        The group sum.
    sigma1, sigma2 : float
        Cauchy scales Σ_1 (part) and Σ_2 (rest). ``sigma1`` ≤ 0 → 0, ``sigma2`` ≤ 0 → s.
    u : float
        Probability; u ≤ 0 gives −inf and u ≥ 1 gives +inf.

    Returns
    -------
    float
    """
    if sigma1 <= 0.0:
        return 0.0
    if sigma2 <= 0.0:
        return s
    if u <= 0.0:
        return -np.inf
    if u >= 1.0:
        return np.inf
    c, ss, a, b, delta, kind, f_m, phi_left, phi_right = _split_cauchy_prepare(s, sigma1, sigma2)
    return _split_cauchy_solve(c, ss, a, b, delta, kind, f_m, phi_left, phi_right, u)


@jit
def split_cauchy(s, sigma1, sigma2, rng):
    """Draw s^t | s under Cauchy priors (3.29) by inversion, with the generator ``rng``.

    Parameters
    ----------
    s : float
        The group sum.
    sigma1, sigma2 : float
        Cauchy scales Σ_1 (part) and Σ_2 (rest). ``sigma1`` ≤ 0 → 0, ``sigma2`` ≤ 0 → s
        (no random number is consumed in these cases).
    rng : numpy.random.Generator

    Returns
    -------
    float
        ``split_cauchy_quantile(s, sigma1, sigma2, u)`` with u = ``rng.random()``
        (redrawn in the probability-2^-53 event u = 0).
    """
    if sigma1 <= 0.0:
        return 0.0
    if sigma2 <= 0.0:
        return s
    u = rng.random()
    while u <= 0.0:
        u = rng.random()
    return split_cauchy_quantile(s, sigma1, sigma2, u)


@jit
def _split_cauchy_quantile_array(s, a, b, u, out):
    for i in range(s.shape[0]):
        out[i] = split_cauchy_quantile(s[i], a[i], b[i], u[i])


@jit
def _split_cauchy_cdf_array(x, s, a, b, out):
    for i in range(s.shape[0]):
        out[i] = _split_cauchy_cdf_scalar(x[i], s[i], a[i], b[i])


@jit
def _split_gaussian_array(s, v1, v2, z, out):
    for i in range(s.shape[0]):
        out[i] = split_gaussian_from_normal(s[i], v1[i], v2[i], z[i])


def _broadcast_split_args(s, width1, width2, names=("sigma1", "sigma2")):
    s = _as_float_array("s", s)
    w1 = _check_widths(names[0], width1)
    w2 = _check_widths(names[1], width2)
    return np.broadcast_arrays(s, w1, w2)


def split_cauchy_normalizer(s, sigma1, sigma2):
    """C of eq. (3.31): ∫ dx / ((Σ_1² + x²)(Σ_2² + (x − s)²)) = π(Σ_1+Σ_2) / (Σ_1Σ_2 (s² + (Σ_1+Σ_2)²)).

    Requires Σ_1, Σ_2 > 0. Vectorised.

    Examples
    --------
    >>> float(split_cauchy_normalizer(0.0, 1.0, 1.0)) == np.pi / 2
    True
    """
    s, a, b = _broadcast_split_args(s, sigma1, sigma2)
    if np.any(a <= 0) or np.any(b <= 0):
        raise ValueError("the normaliser (3.31) needs sigma1 > 0 and sigma2 > 0")
    c = np.pi * (a + b) / (a * b * (s * s + (a + b) ** 2))
    return _scalar_or_array(c)


def split_cauchy_pdf(x, s, sigma1, sigma2):
    """Density (3.29) of s^t = x given s: 1 / (C (Σ_1² + x²)(Σ_2² + (x − s)²)). Σ_1, Σ_2 > 0."""
    x = _as_float_array("x", x)
    c = np.asarray(split_cauchy_normalizer(s, sigma1, sigma2))
    s, a, b = _broadcast_split_args(s, sigma1, sigma2)
    return _scalar_or_array(1.0 / (c * (a * a + x * x) * (b * b + (x - s) ** 2)))


def split_cauchy_cdf(x, s, sigma1, sigma2):
    """CDF (3.30)–(3.34) of s^t given s under Cauchy priors, vectorised.

    Evaluated in the rescaled, cancellation-reduced form of the module docstring (t_3
    limit near the degenerate point s = 0, Σ_1 = Σ_2). Σ_1 = 0 (Σ_2 = 0) gives the step
    function of a point mass at 0 (at s).

    Examples
    --------
    >>> round(float(split_cauchy_cdf(1.5, 3.0, 2.0, 2.0)), 12)  # symmetric about s/2
    0.5
    """
    x = _as_float_array("x", x)
    s, a, b = _broadcast_split_args(s, sigma1, sigma2)
    x, s, a, b = np.broadcast_arrays(x, s, a, b)
    out = np.empty(x.shape)
    _split_cauchy_cdf_array(
        np.ascontiguousarray(x).ravel(),
        np.ascontiguousarray(s).ravel(),
        np.ascontiguousarray(a).ravel(),
        np.ascontiguousarray(b).ravel(),
        out.reshape(-1),
    )
    return _scalar_or_array(out)


def split_cauchy_inversion(s, sigma1, sigma2, u):
    """s^t = F^{-1}(u) for the Cauchy split (3.29)–(3.34), vectorised (see :func:`split_cauchy_quantile`).

    Parameters
    ----------
    s : array_like
        Group sums.
    sigma1, sigma2 : array_like
        Cauchy scales Σ_1 ≥ 0 (part) and Σ_2 ≥ 0 (rest).
    u : array_like
        Probabilities in [0, 1] (0 → −inf, 1 → +inf unless Σ_1 = 0 or Σ_2 = 0).

    Returns
    -------
    ndarray or float
        Broadcast shape of the inputs.
    """
    s, a, b = _broadcast_split_args(s, sigma1, sigma2)
    u = _as_float_array("u", u)
    if np.any((u < 0) | (u > 1)):
        raise ValueError(f"u must be probabilities in [0, 1], got {u[(u < 0) | (u > 1)].flat[0]!r}")
    s, a, b, u = np.broadcast_arrays(s, a, b, u)
    out = np.empty(s.shape)
    _split_cauchy_quantile_array(
        np.ascontiguousarray(s).ravel(),
        np.ascontiguousarray(a).ravel(),
        np.ascontiguousarray(b).ravel(),
        np.ascontiguousarray(u).ravel(),
        out.reshape(-1),
    )
    return _scalar_or_array(out)


def split_cauchy_rejection(s, sigma1, sigma2, rng):
    """Exact rejection sampler for the Cauchy split (3.29); a test oracle (thesis §3.3.4 samples by inversion).

    (3.29) ∝ Cauchy(0, Σ_1)(x) · Cauchy(s, Σ_2)(x). Three envelopes are available and
    the one with the largest acceptance rate is used for each element:

    * Σ_1 ≥ Σ_2: propose x ~ Cauchy(0, Σ_1), accept w.p. Σ_2²/(Σ_2² + (x − s)²);
    * Σ_1 < Σ_2: propose x ~ Cauchy(s, Σ_2), accept w.p. Σ_1²/(Σ_1² + x²);
      acceptance rate max(Σ_1,Σ_2)(Σ_1+Σ_2)/((Σ_1+Σ_2)² + s²) ≥ ¼ for |s| ≤ Σ_1+Σ_2;
    * (added here, for |s| ≫ Σ_1 + Σ_2, where the rates above vanish like 1/s²) since
      |x| ≥ |s|/2 or |x − s| ≥ |s|/2, the unnormalised density is bounded by
      1/((Σ_1²+x²)(Σ_2²+s²/4)) + 1/((Σ_2²+(x−s)²)(Σ_1²+s²/4)), a two-component Cauchy
      mixture; the acceptance rate tends to ¼ as |s| → ∞ and is ≥ 1/16 for |s| ≥ Σ_1+Σ_2.

    Parameters
    ----------
    s : array_like
        Group sums.
    sigma1, sigma2 : array_like
        Cauchy scales Σ_1, Σ_2 ≥ 0 (0 handled as in :func:`split_cauchy`).
    rng : None, int or numpy.random.Generator

    Returns
    -------
    ndarray or float
    """
    rng = check_generator(rng)
    s, a, b = _broadcast_split_args(s, sigma1, sigma2)
    shape = s.shape
    s, a, b = (np.ascontiguousarray(v).ravel() for v in (s, a, b))
    out = np.where(b <= 0, s, 0.0)
    todo = np.flatnonzero((a > 0) & (b > 0))
    if todo.size:
        sa, aa, bb = s[todo], a[todo], b[todo]
        q2 = 0.25 * sa * sa
        rate_single = np.maximum(aa, bb) * (aa + bb) / ((aa + bb) ** 2 + sa * sa)
        w0 = np.pi / (aa * (bb * bb + q2))
        ws = np.pi / (bb * (aa * aa + q2))
        c = np.pi * (aa + bb) / (aa * bb * (sa * sa + (aa + bb) ** 2))
        use_mixture = c / (w0 + ws) > rate_single
        p0 = w0 / (w0 + ws)
        pending = np.arange(todo.size)
        while pending.size:
            n = pending.size
            ps, pa, pb = sa[pending], aa[pending], bb[pending]
            mix = use_mixture[pending]
            from_zero = np.where(mix, rng.random(n) < p0[pending], pa >= pb)
            t = np.tan(np.pi * (rng.random(n) - 0.5))
            x = np.where(from_zero, pa * t, ps + pb * t)
            f0 = pa * pa + x * x
            fs = pb * pb + (x - ps) ** 2
            # accept probability = target / envelope, both without the common constants
            single = np.where(pa >= pb, pb * pb / fs, pa * pa / f0)
            qq = q2[pending]
            bound = 1.0 / (f0 * (pb * pb + qq)) + 1.0 / (fs * (pa * pa + qq))
            accept_prob = np.where(mix, 1.0 / (f0 * fs * bound), single)
            accepted = rng.random(n) < accept_prob
            out[todo[pending[accepted]]] = x[accepted]
            pending = pending[~accepted]
    return _scalar_or_array(out.reshape(shape))


# ---------------------------------------------------------------------------------------------
# vectorised front end


def split(
        s: ArrayLike, width1: ArrayLike, width2: ArrayLike, index: Literal[1, 2, "cauchy", "gaussian"],
        random_state: RandomStateLike = None, method: Literal["inversion", "rejection"] = "inversion"
) -> float | np.ndarray:
    """Draw the part s^t of each sum s from the two-way split (3.27), vectorised.

    Parameters
    ----------
    s : array_like
        Group sums.
    width1, width2 : array_like
        Widths of the part and of the rest in α-power units (this library's convention): Cauchy
        scales Σ_1, Σ_2 (α = 1) or Gaussian **variances** Σ_1², Σ_2² (α = 2), e.g.
        ``width2 = W_g − width1``. Must be ≥ 0 (clamp round-off, e.g.
        ``np.maximum(W - width1, 0)``); width1 = 0 gives 0, width2 = 0 gives s.
    index : {1, 2, "cauchy", "gaussian"}
        Stable index α.
    random_state : None, int or numpy.random.Generator
        Source of the random numbers.
    method : {"inversion", "rejection"}
        Cauchy only: inversion of the CDF (3.30) (the paper's method) or the exact
        rejection sampler :func:`split_cauchy_rejection`. Ignored for α = 2.

    Returns
    -------
    ndarray or float
        Broadcast shape of ``s``, ``width1``, ``width2``.

    Examples
    --------
    >>> split([1.0, 2.0], [0.0, 1.0], [1.0, 0.0], "cauchy", random_state=0)
    array([0., 2.])
    """
    alpha = _check_index(index)
    if method not in ("inversion", "rejection"):
        raise ValueError(f"method must be 'inversion' or 'rejection', got {method!r}")
    rng = check_generator(random_state)
    s, w1, w2 = _broadcast_split_args(s, width1, width2, names=("width1", "width2"))
    shape = s.shape
    s, w1, w2 = (np.ascontiguousarray(v).ravel() for v in (s, w1, w2))
    out = np.empty(s.shape)
    if alpha == GAUSSIAN:
        _split_gaussian_array(s, w1, w2, rng.standard_normal(s.shape[0]), out)
    elif method == "rejection":
        out = np.asarray(split_cauchy_rejection(s, w1, w2, rng)).reshape(-1)
    else:
        u = rng.random(s.shape[0])
        while np.any(u == 0.0):  # probability ~2^-53 per draw
            u[u == 0.0] = rng.random(int(np.sum(u == 0.0)))
        _split_cauchy_quantile_array(s, w1, w2, u, out)
    return _scalar_or_array(out.reshape(shape))
