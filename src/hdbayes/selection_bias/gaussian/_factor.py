"""Numerics shared by the adjustment factors of the Gaussian classifier's variants.

The F-statistic series f_k (Li 2009, eq. 30), the node caches and cubic interpolation of log A, the density
of log T, T ~ F(α1_x, α1_μ), and the trapezoidal rule over it (docs/gaussian.md, eq. P15–P17), and the
discard probability of one feature given its class variances, a quadratic-form tail (eq. P20–P28): the
shared spread's factor (:mod:`.shared`) uses the first two, the per-feature (:mod:`.per_feature`) and
per-class (:mod:`.per_class`) factors all of them.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import fdtr

from hdbayes._numba import jit
from hdbayes._validation import check_positive
from hdbayes.exceptions import InputTypeError, InputValueError
from hdbayes.selection_bias.quadratic_form import log_quadratic_form_tails

__all__ = [
    "DEFAULT_TOL",
    "between_class_weights",
    "check_class_scale",
    "class_count_eigenvalues",
    "gaussian_f_series",
    "interpolated_per_feature_log_discard_probability",
    "log_f_density_of_log",
    "new_interpolation_table",
    "per_class_log_b",
    "per_class_log_discard_probability_given",
    "per_feature_log_discard_probability_at",
]

DEFAULT_TOL = math.exp(-10.0)
"""Truncation of the k-sum: keep the f_k > e^{-10} (Li 2009, §4.1)."""

_MAX_TERMS = 1 << 24


def _check_class_counts(class_counts):
    """Class sizes as an int64 array; ≥ 2 classes, each with ≥ 1 case, and n > G."""
    counts = np.asarray(class_counts)
    if counts.ndim != 1:
        raise InputValueError(f"class_counts must be a 1-d sequence of class sizes, got shape {counts.shape}")
    if counts.shape[0] < 2:
        raise InputValueError(f"the F-statistic needs at least 2 classes, got {counts.shape[0]} class count(s)")
    if counts.dtype.kind == "f" and np.all(np.isfinite(counts)) and np.all(counts == np.round(counts)):
        counts = counts.astype(np.int64)
    if counts.dtype.kind not in "iu":
        raise InputTypeError(f"class_counts must hold integers, got values of type {counts.dtype.name}")
    counts = counts.astype(np.int64)
    if np.any(counts < 1):
        raise InputValueError(f"every class needs at least one case, got class_counts={counts.tolist()}")
    n, n_classes = int(counts.sum()), counts.shape[0]
    if n <= n_classes:
        raise InputValueError(
            f"the F-statistic needs more cases than classes (n − G ≥ 1 within-class degrees of freedom), "
            f"got n={n} cases in G={n_classes} classes"
        )
    return counts


def gaussian_f_series(threshold, class_counts, tol=DEFAULT_TOL):
    """log f_k, the probabilities of the central-F mixture components (Li 2009, eq. 30).

        f_k = P( [χ²_{G−1+2k}/(G−1)] / [χ²_{n−G}/(n−G)] ≤ γ )
            = F_cdf( γ (G−1)/(G−1+2k); G−1+2k, n−G ),

    the probability that the F-statistic of a feature is ≤ γ given that the Poisson
    component of its noncentral χ² is k. f_k decreases in k (χ²_{d+2} is stochastically
    larger than χ²_d); f_0 is the central F cdf, i.e. A(τ^μ) as τ^μ → ∞.

    Parameters
    ----------
    threshold : float
        γ ≥ 0; a feature is discarded iff its F-statistic is ≤ γ.
    class_counts : sequence of int
        n_1..n_G, the training class sizes (G ≥ 2, each ≥ 1, n = Σ n_g > G).
    tol : float, default=e^{-10}
        Keep k = 0..K with K the largest k such that f_k > ``tol`` (Li 2009, §4.1);
        at least the term k = 0 is always returned. The neglected tail of the
        Poisson mixture is below ``tol``.

    Returns
    -------
    ndarray of shape (K + 1,)
        log f_0, ..., log f_K (−inf only when γ = 0).

    Notes
    -----
    Because d₁ x = γ (G−1) does not depend on k, f_k = I_z((G−1)/2 + k, (n−G)/2) with
    the fixed argument z = γ(G−1)/(γ(G−1) + n − G): for large k it decays roughly like
    z^k, so K grows with γ (K = 13, 19, 25, 33 for G = 6, n = 200 and γ = 1.79, 3.15,
    4.41, 6.2).
    """
    threshold = check_positive("threshold", threshold, allow_zero=True)
    counts = _check_class_counts(class_counts)
    tol = check_positive("tol", tol)
    n, n_classes = int(counts.sum()), counts.shape[0]
    dfn0, dfd = n_classes - 1, n - n_classes
    pieces = []
    start, size = 0, 64
    while True:
        k = np.arange(start, start + size, dtype=np.float64)
        dfn = dfn0 + 2.0 * k
        with np.errstate(divide="ignore"):
            log_f = np.log(fdtr(dfn, dfd, threshold * dfn0 / dfn))  # scipy.stats.f.logcdf
        below = np.flatnonzero(~(log_f > np.log(tol)))
        if below.size:
            stop = max(int(below[0]), 1 if start == 0 else 0)
            pieces.append(log_f[:stop])
            break
        pieces.append(log_f)
        start += size
        size *= 2
        if start >= _MAX_TERMS:
            raise InputValueError(
                f"more than {_MAX_TERMS} terms f_k > tol={tol:g} for threshold={threshold:g}; "
                "the threshold is implausibly large for the F-statistic"
            )
    return np.ascontiguousarray(np.concatenate(pieces), dtype=np.float64)


@jit
def _cubic_lagrange(s, v0, v1, v2, v3):
    """The cubic through (−1, v0), (0, v1), (1, v2), (2, v3) at s ∈ [0, 1)."""
    sp1 = s + 1.0
    sm1 = s - 1.0
    sm2 = s - 2.0
    return -s * sm1 * sm2 / 6.0 * v0 + sp1 * sm1 * sm2 / 2.0 * v1 - sp1 * s * sm2 / 2.0 * v2 + sp1 * s * sm1 / 6.0 * v3


def new_interpolation_table(eta_min=-30.0, eta_max=30.0, step=1.0 / 64.0):
    """An empty (all-NaN) node cache for :func:`interpolated_log_discard_probability`.

    Parameters
    ----------
    eta_min, eta_max : float, default=-30, 30
        Range of η = log τ^μ covered by the grid (the last node is the largest
        η_min + i · step ≤ η_max).
    step : float, default=1/64
        Grid spacing in η.

    Returns
    -------
    table : ndarray of shape (n_nodes,)
        float64, filled with NaN.
    eta_min, step : float
    """
    eta_min, eta_max, step = float(eta_min), float(eta_max), float(step)
    if not (np.isfinite(eta_min) and np.isfinite(eta_max)) or eta_max <= eta_min:
        raise InputValueError(f"need finite eta_min < eta_max, got eta_min={eta_min:g}, eta_max={eta_max:g}")
    step = check_positive("step", step)
    n_nodes = int(math.floor((eta_max - eta_min) / step + 1e-9)) + 1
    if n_nodes < 4:
        raise InputValueError(f"the grid needs at least 4 nodes for cubic interpolation, got {n_nodes}")
    return np.full(n_nodes, np.nan), eta_min, step


def class_count_eigenvalues(class_counts):
    """d_1..d_{G−1}, the nonzero eigenvalues of M = diag(n_g) − n nᵀ/N (docs/gaussian.md, eq. P11).

    Λ(Z) = Σ_g n_g (Z_g − Z̃)² = Zᵀ M Z with Z i.i.d. N(0, 1), so Λ = Σ_i d_i χ²_1 (independent).
    Balanced classes n_g = m give d_i = m.
    """
    counts = _check_class_counts(class_counts).astype(np.float64)
    matrix = np.diag(counts) - np.outer(counts, counts) / counts.sum()
    values = np.sort(np.linalg.eigvalsh(matrix))[1:]  # the smallest is 0 (constant vector)
    return np.ascontiguousarray(np.maximum(values, 0.0))


@jit
def log_f_density_of_log(u, d1, d2, log_norm):
    """log density of U = log T, T ~ F(d1, d2): log_norm + (d1/2) u − ((d1+d2)/2) log(1 + (d1/d2) e^u)."""
    x = np.log(d1 / d2) + u
    if x > 0.0:
        softplus = x + np.log1p(np.exp(-x))
    else:
        softplus = np.log1p(np.exp(x))
    return log_norm + 0.5 * d1 * u - 0.5 * (d1 + d2) * softplus


def _log_f_density_normaliser(d1, d2):
    """log of (d1/d2)^{d1/2} / B(d1/2, d2/2), the normaliser of :func:`log_f_density_of_log`."""
    log_beta = math.lgamma(d1 / 2) + math.lgamma(d2 / 2) - math.lgamma((d1 + d2) / 2)
    return 0.5 * d1 * math.log(d1 / d2) - log_beta


@jit
def per_feature_log_discard_probability_at(log_rho, v0, h, log_a, d1, d2, log_norm):
    """log A(ρ) = log ∫ a(e^v) p_U(v − log ρ) dv by the trapezoidal rule on the fixed grid
    v_i = v0 + i h (docs/gaussian.md, eq. P15–P17), as a log-sum-exp; p_U is the density of
    log T, T ~ F(α1_x, α1_μ), and ``log_a`` holds log a(e^{v_i})."""
    n = log_a.shape[0]
    peak = -np.inf
    terms = np.empty(n)
    for i in range(n):
        value = log_a[i] + log_f_density_of_log(v0 + i * h - log_rho, d1, d2, log_norm)
        terms[i] = value
        if value > peak:
            peak = value
    if peak == -np.inf:
        return -np.inf
    total = 0.0
    for i in range(n):
        total += np.exp(terms[i] - peak)
    return peak + np.log(total * h)


@jit
def _per_feature_log_discard_probabilities(log_rho, v0, h, log_a, d1, d2, log_norm):
    out = np.empty(log_rho.shape[0])
    for i in range(log_rho.shape[0]):
        out[i] = per_feature_log_discard_probability_at(log_rho[i], v0, h, log_a, d1, d2, log_norm)
    return out


@jit
def interpolated_per_feature_log_discard_probability(log_rho, table, eta_min, step, v0, h, log_a, d1, d2, log_norm):
    """log A(ρ) by cubic Lagrange interpolation in log ρ between nodes computed on demand; the same
    grid, node cache and fallback rules as :func:`interpolated_log_discard_probability` (a table
    from :func:`new_interpolation_table`, tied to this adjustment)."""
    n_nodes = table.shape[0]
    t = (log_rho - eta_min) / step
    if not (t >= 1.0 and t < n_nodes - 2.0):
        return per_feature_log_discard_probability_at(log_rho, v0, h, log_a, d1, d2, log_norm)
    i = int(np.floor(t))
    for j in range(i - 1, i + 3):
        if np.isnan(table[j]):
            table[j] = per_feature_log_discard_probability_at(eta_min + j * step, v0, h, log_a, d1, d2, log_norm)
    v_0, v_1, v_2, v_3 = table[i - 1], table[i], table[i + 1], table[i + 2]
    if not (np.isfinite(v_0) and np.isfinite(v_1) and np.isfinite(v_2) and np.isfinite(v_3)):
        return per_feature_log_discard_probability_at(log_rho, v0, h, log_a, d1, d2, log_norm)
    return _cubic_lagrange(t - i, v_0, v_1, v_2, v_3)


def _freeze_arrays(instance, names):
    """Store read-only C-contiguous float copies of the array fields ``names`` of a frozen dataclass."""
    for name in names:
        value = np.array(getattr(instance, name), dtype=np.float64, order="C", copy=True)
        value.setflags(write=False)
        object.__setattr__(instance, name, value)


def _grid_values(start, h, block, compute, finished):
    """log a (or log b) on the grid v_i = start + i h, computed in blocks of ``block`` nodes by
    ``compute(v)`` until ``finished(v, values)`` holds for the last block (eq. P17, P30)."""
    pieces = []
    while True:
        v = start + h * np.arange(block)
        values = compute(v)
        pieces.append(values)
        if finished(v, values):
            return np.concatenate(pieces)
        start = v[-1] + h
        if len(pieces) * block > 102400:
            raise InputValueError("the adjustment grid did not reach its lower level; alpha1_mu is too small")


@jit
def between_class_weights(variances, class_counts):
    """The G − 1 weights λ_i of SSB = Σ_i λ_i χ²_1 when the class sample means are independent
    N(ν, V_g) (docs/gaussian.md, eq. P21): the nonzero eigenvalues of V^{1/2} M V^{1/2},
    M = diag(n_g) − n nᵀ/N.

    Its null vector V^{−1/2}·1 is removed exactly (a Householder reflection) before the eigenvalues
    are computed, so a huge common V (a large spread of class means) leaves no spurious eigenvalue of
    the size of its rounding error."""
    G = variances.shape[0]
    total = class_counts.sum()
    root = np.sqrt(variances)
    matrix = np.empty((G, G))
    for a in range(G):
        for b in range(G):
            m = (class_counts[a] if a == b else 0.0) - class_counts[a] * class_counts[b] / total
            matrix[a, b] = root[a] * m * root[b]
    null = 1.0 / root
    null /= np.sqrt((null * null).sum())
    w = null.copy()
    w[0] -= 1.0
    ww = (w * w).sum()
    reflection = np.eye(G)
    if ww > 0.0:
        reflection -= 2.0 * np.outer(w, w) / ww
    rotated = reflection @ matrix @ reflection
    if G == 2:
        return np.array([rotated[1, 1]])
    if G == 3:  # the 2 × 2 block's eigenvalues in closed form (LAPACK's call costs more than the work)
        a, b, d = rotated[1, 1], rotated[1, 2], rotated[2, 2]
        half_trace = 0.5 * (a + d)
        radius = np.sqrt(0.25 * (a - d) ** 2 + b * b)
        return np.array([half_trace - radius, half_trace + radius])
    return np.linalg.eigvalsh(np.ascontiguousarray(rotated[1:, 1:]))


@jit
def per_class_log_discard_probability_given(log_r, epsilon, class_counts, threshold):
    """log a(r; ε) = log P(F ≤ γ | r, ε) for one feature whose class g has variance ε_g (in units of
    v_j) and whose class means have spread r = w^μ_j/v_j (docs/gaussian.md, eq. P20–P23).

    F ≤ γ iff SSB − c·SSW ≤ 0, c = γ(G − 1)/(N − G), with SSB = Σ_i λ_i χ²_1 (weights from
    :func:`between_class_weights` of V_g = r + ε_g/n_g) and SSW = Σ_g ε_g χ²_{n_g − 1}, independent:
    a tail of an indefinite quadratic form (:func:`log_quadratic_form_tails`)."""
    G = class_counts.shape[0]
    r = np.exp(log_r)
    weights = np.empty(2 * G - 1)
    dof = np.empty(2 * G - 1)
    variances = np.empty(G)
    c = threshold * (G - 1.0) / (class_counts.sum() - G)
    for g in range(G):
        variances[g] = r + epsilon[g] / class_counts[g]
        weights[G - 1 + g] = -c * epsilon[g]
        dof[G - 1 + g] = class_counts[g] - 1.0
    between = between_class_weights(variances, class_counts)
    for i in range(G - 1):
        weights[i] = between[i]
        dof[i] = 1.0
    lower, _ = log_quadratic_form_tails(weights, dof)
    return lower


@jit
def per_class_log_b(log_r, epsilon_pool, class_counts, threshold):
    """log b(r) = log mean_m a(r; ε_m) over the fixed pool of class-variance ratios (eq. P28)."""
    M = epsilon_pool.shape[0]
    values = np.empty(M)
    peak = -np.inf
    for m in range(M):
        values[m] = per_class_log_discard_probability_given(log_r, epsilon_pool[m], class_counts, threshold)
        if values[m] > peak:
            peak = values[m]
    if peak == -np.inf:
        return -np.inf
    total = 0.0
    for m in range(M):
        total += np.exp(values[m] - peak)
    return peak + np.log(total / M)


@jit
def _per_class_log_b_grid(log_r, epsilon_pool, class_counts, threshold):
    out = np.empty(log_r.shape[0])
    for i in range(log_r.shape[0]):
        out[i] = per_class_log_b(log_r[i], epsilon_pool, class_counts, threshold)
    return out


def check_class_scale(class_scale, n_classes):
    """The class scales s_g as a float array of shape (G,): ones for None, else G finite positive numbers."""
    if class_scale is None:
        return np.ones(int(n_classes))
    values = np.asarray(class_scale, dtype=np.float64)
    if values.shape != (int(n_classes),):
        raise InputValueError(f"class_scale must hold one value per class ({int(n_classes)}), got shape {values.shape}")
    if not (np.all(np.isfinite(values)) and np.all(values > 0)):
        raise InputValueError(f"class_scale must be finite and > 0, got {values.tolist()}")
    return values
