"""Bayesian naive Bayes for G classes and L-level features with correction for selection bias (issue 15).

The model (docs/categorical_correction.md eq. C1–C6) extends thesis §2.3 (:class:`BiasCorrectedNaiveBayes`):
class probabilities ψ ~ Dirichlet(f), per feature a base distribution θ_j uniform on the simplex, per class
φ_jg ~ Dirichlet(α θ_j), α ~ Inverse-Gamma(a, b). ψ and φ are integrated out (Dirichlet–multinomial), θ by
an exact rule (product Gauss–Jacobi on the simplex, or for many levels the exact moment expansion), α by the
binary model's adaptive rule. Features are selected by Pearson's X² of the class × level table (eq. C7; for
G = L = 2 it is n·COR², the binary model's ranking), and with ``correct=True`` the posterior of α includes
(p − k) log a(α) (eq. C10, :mod:`hdbayes.selection_bias.categorical_adjustment`). No MCMC is involved.
"""

from __future__ import annotations

import copy
from functools import lru_cache
from math import lgamma
from numbers import Integral
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp, roots_legendre
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions

from hdbayes._numba import jit
from hdbayes._special_kernels import log_rising_factorial_scalar
from hdbayes._validation import (
    check_class_labels,
    check_count,
    check_level_codes,
    check_level_memory,
    is_dask_array,
    plain_value,
    unchanged_on_error,
    validate_input,
)
from hdbayes.exceptions import InputTypeError, InputValueError
from hdbayes.selection_bias._base import (
    POSITIVE,
    SELECTION_PARAMETER_CONSTRAINTS,
    SelectionBiasClassifier,
    check_rule_memory,
    class_log_prior,
    integrate_over_alpha,
)
from hdbayes.selection_bias.categorical_adjustment import (
    discarded_region,
    exact_simplex_points,
    pearson_chi_square,
    simplex_rule,
)
from hdbayes.selection_bias.naive_bayes import BiasCorrectedNaiveBayes, alpha_posterior
from hdbayes.statistics.categorical_counts import CategoricalClassCounts, _levels_seen, check_level_chunk
from hdbayes.statistics.chunks import check_prediction_chunks, map_row_chunks

if TYPE_CHECKING:
    from typing import Literal, Self

    from numpy.typing import ArrayLike

    from hdbayes._validation import MatrixLike, RandomStateLike

__all__ = ["BiasCorrectedCategoricalNB", "categorical_feature_integrals"]

#: Largest simplex rule (nodes) used for the feature integrals; beyond it the panel rules (eq. C14) for L = 3 and
#: the exact moment expansion otherwise.
_MAX_QUADRATURE_NODES = 20_000

#: The two panel rules of eq. C14 compared for every table and α: (half-width of the middle panel in standard
#: deviations of the Laplace approximation, Gauss–Legendre nodes of the middle panel, of each outer panel).
_PANEL_RULES = ((6.0, 24, 12), (8.0, 32, 16))

#: Largest difference between the two panel rules' log integrals accepted; beyond it the table and α are
#: integrated exactly (the moment expansion).
_PANEL_TOLERANCE = 1e-9


@jit
def _integrals_by_quadrature(counts, sizes, alpha, theta, log_weights):
    """log ∫ L_j (eq. C4) and log Q_j(α, g, l) (eq. C5) for every α and table of counts, by a θ rule."""
    n_alpha = alpha.shape[0]
    n_tables, n_classes, n_levels = counts.shape
    n_theta = theta.shape[0]
    n_max = 0
    for g in range(n_classes):
        n_max = max(n_max, sizes[g])
    log_marginal = np.empty((n_alpha, n_tables))
    log_q = np.empty((n_alpha, n_tables, n_classes, n_levels))
    rising = np.zeros((n_theta, n_levels, n_max + 1))
    log_l = np.empty(n_theta)
    scaled = np.empty(n_theta)
    for m in range(n_alpha):
        for t in range(n_theta):
            for level in range(n_levels):
                a = alpha[m] * theta[t, level]
                for i in range(n_max):
                    rising[t, level, i + 1] = rising[t, level, i] + np.log(a + i)
        log_totals = np.zeros(n_classes)
        for g in range(n_classes):
            for i in range(sizes[g]):
                log_totals[g] += np.log(alpha[m] + i)
        for u in range(n_tables):
            peak = -np.inf
            for t in range(n_theta):
                value = log_weights[t]
                for g in range(n_classes):
                    value -= log_totals[g]
                    for level in range(n_levels):
                        value += rising[t, level, counts[u, g, level]]
                log_l[t] = value
                if value > peak:
                    peak = value
            total = 0.0
            for t in range(n_theta):
                scaled[t] = np.exp(log_l[t] - peak)
                total += scaled[t]
            log_marginal[m, u] = peak + np.log(total)
            for g in range(n_classes):
                log_denominator = np.log(alpha[m] + sizes[g])
                for level in range(n_levels):
                    part = 0.0
                    for t in range(n_theta):
                        part += scaled[t] * (alpha[m] * theta[t, level] + counts[u, g, level])
                    log_q[m, u, g, level] = peak + np.log(part) - log_denominator
    return log_marginal, log_q


@jit
def _log_add(x, y):
    if x == -np.inf:
        return y
    if y == -np.inf:
        return x
    if x > y:
        return x + np.log1p(np.exp(y - x))
    return y + np.log1p(np.exp(x - y))


@jit
def _log_dot(x, x_start, y, y_start, length):
    """log Σ_{i < length} exp(x[x_start + i] + y[y_start + i]): the largest term factored out, one exp per term."""
    peak = -np.inf
    for i in range(length):
        value = x[x_start + i] + y[y_start + i]
        if value > peak:
            peak = value
    if peak == -np.inf:
        return -np.inf
    total = 0.0
    for i in range(length):
        total += np.exp(x[x_start + i] + y[y_start + i] - peak)
    return peak + np.log(total)


@jit
def _log_convolve(x, y):
    out = np.empty(x.shape[0] + y.shape[0] - 1)
    reversed_y = y[::-1].copy()
    for s in range(out.shape[0]):
        first = max(0, s - y.shape[0] + 1)
        last = min(s, x.shape[0] - 1)
        # Σ_a x[a] y[s − a] = Σ_a x[a] reversed_y[len(y) − 1 − s + a]
        out[s] = _log_dot(x, first, reversed_y, y.shape[0] - 1 - s + first, last - first + 1)
    return out


@jit
def _integrals_by_moments(counts, sizes, alpha, log_factorial):
    """The same integrals exactly for any L: given the table, Π_g Π_l (αθ_l)_{I_gl} is a product over levels of
    polynomials in θ_l alone, h_l(θ_l) = Σ_a c_la θ_l^a, and E[Π_l θ_l^{a_l}] = (L−1)! Π_l a_l! / (Σ_l a_l +
    L − 1)! on the uniform simplex, so the integral is a convolution over levels of c_la a_l! weighted by
    1/(s + L − 1)!; everything in logs (all terms are positive)."""
    n_alpha = alpha.shape[0]
    n_tables, n_classes, n_levels = counts.shape
    n_total = 0
    for g in range(n_classes):
        n_total += sizes[g]
    log_marginal = np.empty((n_alpha, n_tables))
    log_q = np.empty((n_alpha, n_tables, n_classes, n_levels))
    for m in range(n_alpha):
        log_alpha = np.log(alpha[m])
        log_totals = np.zeros(n_classes)
        for g in range(n_classes):
            for i in range(sizes[g]):
                log_totals[g] += np.log(alpha[m] + i)
        for u in range(n_tables):
            scaled = []  # per level: log(c_la · a!)
            for level in range(n_levels):
                column = 0
                for g in range(n_classes):
                    column += counts[u, g, level]
                poly = np.full(column + 1, -np.inf)
                poly[0] = 0.0
                degree = 0
                for g in range(n_classes):
                    for i in range(counts[u, g, level]):  # multiply by (αθ + i)
                        degree += 1
                        for a in range(degree, -1, -1):
                            value = -np.inf
                            if i > 0 and a < degree:
                                value = np.log(i) + poly[a]
                            if a > 0:
                                value = _log_add(value, log_alpha + poly[a - 1])
                            poly[a] = value
                for a in range(column + 1):
                    poly[a] += log_factorial[a]
                scaled.append(poly)
            # backward kernels: tail[l][s] = log Σ over the degrees b of levels l..L−1 of Π ĥ / (s + b + L − 1)!,
            # forward products: head = log ĥ_0 * … * ĥ_{l−1}; each level then costs O(n · M_l), O(n²) in all
            top = n_total + 1
            tail = np.full((n_levels + 1, top + 1), -np.inf)
            for s in range(top + 1):
                tail[n_levels, s] = -log_factorial[s + n_levels - 1]
            for level in range(n_levels - 1, -1, -1):
                poly = scaled[level]
                following = tail[level + 1]
                for s in range(top + 1):
                    tail[level, s] = _log_dot(poly, 0, following, s, min(poly.shape[0], top + 1 - s))
            log_norm = log_factorial[n_levels - 1]
            for g in range(n_classes):
                log_norm -= log_totals[g]
            log_marginal[m, u] = log_norm + tail[0, 0]
            head = np.zeros(1)
            for level in range(n_levels):
                column = scaled[level].shape[0] - 1
                # kernel[a] = log Σ_s head[s] · tail[l + 1][s + a]: the other levels for a degree a of this one
                kernel = np.full(column + 2, -np.inf)
                following = tail[level + 1]
                for a in range(column + 2):
                    kernel[a] = _log_dot(head, 0, following, a, min(head.shape[0], top + 1 - a))
                for g in range(n_classes):
                    # (αθ + I) h(θ): coefficient a gets α c_{a−1} + I c_a, i.e. in the a!-scaled form
                    # α a ĥ_{a−1} + I ĥ_a
                    count = counts[u, g, level]
                    part = -np.inf
                    for a in range(column + 2):
                        term = -np.inf
                        if a <= column and count > 0:
                            term = np.log(count) + scaled[level][a]
                        if a > 0:
                            term = _log_add(term, log_alpha + np.log(a) + scaled[level][a - 1])
                        part = _log_add(part, term + kernel[a])
                    log_q[m, u, g, level] = log_norm + part - np.log(alpha[m] + sizes[g])
                head = _log_convolve(head, scaled[level])
    return log_marginal, log_q


@jit
def _log_integrand(table, sizes, alpha, u1, u2):
    """log of the integrand of eq. C4 for L = 3 in collapsed coordinates (θ_1 = u_1, θ_2 = (1 − u_1) u_2,
    θ_0 = (1 − u_1)(1 − u_2)) with its Jacobian 1 − u_1, up to the constant log 2!."""
    theta = ((1.0 - u1) * (1.0 - u2), u1, (1.0 - u1) * u2)
    value = np.log(1.0 - u1)
    for g in range(table.shape[0]):
        value -= log_rising_factorial_scalar(alpha, float(sizes[g]))
        for level in range(3):
            value += log_rising_factorial_scalar(alpha * theta[level], float(table[g, level]))
    return value


@jit
def _shifted(table, sizes, alpha, u1, u2, axis, h):
    """:func:`_log_integrand` at (u1, u2) moved by h along collapsed coordinate ``axis`` (0 or 1)."""
    if axis == 0:
        return _log_integrand(table, sizes, alpha, u1 + h, u2)
    return _log_integrand(table, sizes, alpha, u1, u2 + h)


@jit
def _curvature(table, sizes, alpha, u1, u2, f0, axis):
    """The second derivative of the log integrand along one collapsed coordinate at (u1, u2), by central
    differences with a step of 1e-4 of the distance to the nearer end (f0: the value at (u1, u2))."""
    u = u1 if axis == 0 else u2
    h = 1e-4 * min(u, 1.0 - u)
    return (_shifted(table, sizes, alpha, u1, u2, axis, h) - 2.0 * f0
            + _shifted(table, sizes, alpha, u1, u2, axis, -h)) / (h * h)  # fmt: skip


@jit
def _scale(table, sizes, alpha, u1, u2, f0, axis, edge):
    """The scale of the integrand along one collapsed coordinate at (u1, u2): 1/|slope| inward from an edge, else
    1/sqrt(−curvature) (1 when neither is usable)."""
    if edge:
        u = u1 if axis == 0 else u2
        h = 1e-7 if u < 0.5 else -1e-7
        slope = abs((_shifted(table, sizes, alpha, u1, u2, axis, h) - f0) / h)
        return min(max(1.0 / slope, 1e-12), 1.0) if slope > 0.0 else 1.0
    d = _curvature(table, sizes, alpha, u1, u2, f0, axis)
    return min(1.0 / np.sqrt(-d), 1.0) if d < 0.0 else 1.0


@jit
def _laplace(table, sizes, alpha):
    """(û_1, û_2, s_1, s_2): the mode of the L = 3 integrand in collapsed coordinates and the marginal standard
    deviations of its Laplace approximation there (eq. C14). The mode in θ is the fixed point θ_l ∝
    e_l(θ_l) = Σ_g Σ_{i<I_gl} αθ_l/(αθ_l + i) (the stationarity condition of the log-concave integrand on the
    simplex, iterated with damping); the Hessian is taken by central differences. The rule built on these is
    checked by refinement (:func:`_integrals_by_panels`), so they need not be exact."""
    n_classes = table.shape[0]
    total = 0
    for g in range(n_classes):
        for level in range(3):
            total += table[g, level]
    theta = np.empty(3)
    exponent = np.empty(3)
    for level in range(3):
        column = 0
        for g in range(n_classes):
            column += table[g, level]
        theta[level] = (column + 1.0) / (total + 3.0)
    for _ in range(60):
        norm = 0.0
        for level in range(3):
            a = alpha * theta[level]
            e = 0.0
            for g in range(n_classes):
                for i in range(table[g, level]):
                    e += a / (a + i)
            exponent[level] = e
            norm += e
        if norm <= 0.0:
            break
        for level in range(3):
            theta[level] = 0.5 * theta[level] + 0.5 * max(exponent[level] / norm, 1e-300)
    u1 = min(max(theta[1], 1e-12), 1.0 - 1e-12)
    u2 = min(max(theta[2] / (theta[0] + theta[2]), 1e-12), 1.0 - 1e-12)
    f0 = _log_integrand(table, sizes, alpha, u1, u2)
    edge1 = u1 < 1e-9 or u1 > 1.0 - 1e-9  # a level that never occurs puts the mode on an edge
    edge2 = u2 < 1e-9 or u2 > 1.0 - 1e-9
    if not (edge1 or edge2):
        h1 = 1e-4 * min(u1, 1.0 - u1)
        h2 = 1e-4 * min(u2, 1.0 - u2)
        d11 = _curvature(table, sizes, alpha, u1, u2, f0, 0)
        d22 = _curvature(table, sizes, alpha, u1, u2, f0, 1)
        d12 = (_log_integrand(table, sizes, alpha, u1 + h1, u2 + h2)
               - _log_integrand(table, sizes, alpha, u1 + h1, u2 - h2)
               - _log_integrand(table, sizes, alpha, u1 - h1, u2 + h2)
               + _log_integrand(table, sizes, alpha, u1 - h1, u2 - h2)) / (4.0 * h1 * h2)  # fmt: skip
        det = d11 * d22 - d12 * d12  # the covariance is the inverse of minus the Hessian
        if d11 < 0.0 and d22 < 0.0 and det > 0.0:
            return u1, u2, np.sqrt(-d22 / det), np.sqrt(-d11 / det)
    # on an edge (or without a negative definite Hessian), each coordinate on its own: the distance over which
    # the log integrand falls by one, from its slope at an edge, else from its curvature
    s1 = _scale(table, sizes, alpha, u1, u2, f0, 0, edge1)
    s2 = _scale(table, sizes, alpha, u1, u2, f0, 1, edge2)
    return u1, u2, s1, s2


@lru_cache(maxsize=16)
def _legendre(count):
    """Gauss–Legendre nodes and weights on [−1, 1], cached (every table and α of a fit uses the same few)."""
    return roots_legendre(count)


def _panels(center, sd, half_width, middle, outer):
    """Composite Gauss–Legendre nodes and weights on [0, 1]: ``middle`` nodes on the window center ±
    half_width·sd (clipped to [0, 1]), then on each side panels of ``outer`` nodes whose widths double from
    half_width·sd until they reach the end (eq. C14): the integrand's tails, skewed when the mode is near an
    end, are resolved wherever they have mass, with O(log(1/sd)) panels."""
    width = half_width * sd
    lo, hi = max(0.0, center - width), min(1.0, center + width)
    spans = [(lo, hi, middle)]
    step, a = width, hi
    while a < 1.0:
        b = min(1.0, a + step)
        spans.append((a, b, outer))
        a, step = b, 2.0 * step
    step, b = width, lo
    while b > 0.0:
        a = max(0.0, b - step)
        spans.append((a, b, outer))
        b, step = a, 2.0 * step
    nodes, weights = [], []
    for a, b, count in spans:
        if b > a:
            x, w = _legendre(count)
            nodes.append(a + (b - a) * (x + 1.0) / 2.0)
            weights.append(w * (b - a) / 2.0)
    return np.concatenate(nodes), np.concatenate(weights)


@jit
def _panel_integrals(table, sizes, alpha, x1, w1, x2, w2):
    """log ∫ L (eq. C4) and log Q(g, l) (eq. C5) of one L = 3 table at one α by the product of the panel rules
    (x1, w1) in u_1 and (x2, w2) in u_2 (eq. C14)."""
    n_classes = table.shape[0]
    values = np.empty((x1.shape[0], x2.shape[0]))
    peak = -np.inf
    for i in range(x1.shape[0]):
        for j in range(x2.shape[0]):
            value = np.log(w1[i]) + np.log(w2[j]) + _log_integrand(table, sizes, alpha, x1[i], x2[j])
            values[i, j] = value
            peak = max(peak, value)
    total = 0.0
    moments = np.zeros(3)  # Σ w f θ_l
    for i in range(x1.shape[0]):
        for j in range(x2.shape[0]):
            weight = np.exp(values[i, j] - peak)
            total += weight
            moments[0] += weight * (1.0 - x1[i]) * (1.0 - x2[j])
            moments[1] += weight * x1[i]
            moments[2] += weight * (1.0 - x1[i]) * x2[j]
    log_marginal = np.log(2.0) + peak + np.log(total)  # (L − 1)! = 2: the uniform probability measure
    log_q = np.empty((n_classes, 3))
    for g in range(n_classes):
        for level in range(3):
            part = alpha * moments[level] + table[g, level] * total
            log_q[g, level] = np.log(2.0) + peak + np.log(part) - np.log(alpha + sizes[g])
    return log_marginal, log_q


def _integrals_by_panels(tables, sizes, alpha, log_factorial):
    """The feature integrals of L = 3 tables for many training cases (eq. C14): for each table and α, the
    product of composite Gauss–Legendre rules in collapsed coordinates, a middle panel around the mode
    (:func:`_laplace`) and doubling panels out to the ends (:func:`_panels`), by the two rules of
    ``_PANEL_RULES``; the second's values where the two agree to ``_PANEL_TOLERANCE`` in every log integral,
    the exact moment expansion elsewhere. Returns the arrays of :func:`categorical_feature_integrals` and the
    number of (α, table) pairs integrated exactly."""
    n_tables, n_classes, n_levels = tables.shape
    log_marginal = np.empty((alpha.shape[0], n_tables))
    log_q = np.empty((alpha.shape[0], n_tables, n_classes, n_levels))
    exact = []
    for m, a in enumerate(alpha):
        for u in range(n_tables):
            u1, u2, s1, s2 = _laplace(tables[u], sizes, float(a))
            results = []
            for half_width, middle, outer in _PANEL_RULES:
                x1, w1 = _panels(u1, s1, half_width, middle, outer)
                x2, w2 = _panels(u2, s2, half_width, middle, outer)
                results.append(_panel_integrals(tables[u], sizes, float(a), x1, w1, x2, w2))
            (marginal_a, q_a), (marginal_b, q_b) = results
            difference = np.max(np.abs(np.append(q_a - q_b, marginal_a - marginal_b)))  # NaN propagates
            if difference <= _PANEL_TOLERANCE:  # so a failed rule (NaN) is not accepted
                log_marginal[m, u], log_q[m, u] = marginal_b, q_b
            else:
                exact.append((m, u))
    for m, u in exact:
        marginal, q = _integrals_by_moments(tables[u:u + 1], sizes, alpha[m:m + 1], log_factorial)
        log_marginal[m, u], log_q[m, u] = marginal[0, 0], q[0, 0]
    return log_marginal, log_q, len(exact)


def categorical_feature_integrals(counts, class_sizes, alpha, *, n_theta=None, method="auto"):
    """θ integrals of every feature at every α point (eq. C4–C5).

    Parameters
    ----------
    counts : array_like of int, shape (k, G, L)
        I_{jgl}, the training cases of class g with level l of feature j.
    class_sizes : array_like of int, shape (G,)
    alpha : ndarray of shape (K,)
    n_theta : int, optional
        Nodes per dimension of the simplex rule (default exact: :func:`exact_simplex_points` (n)).
    method : {"auto", "quadrature", "moments", "panels"}
        ``"quadrature"``: the product Gauss–Jacobi rule (:func:`simplex_rule`); ``"moments"``: the exact
        moment expansion (cost O(L n²) per feature and α); ``"panels"`` (L = 3 only): two composite
        Gauss–Legendre rules around the integrand's mode (eq. C14; cost independent of n), kept where they agree
        to 1e-9 in every log integral, the moment expansion elsewhere; ``"auto"``: the exact quadrature unless
        its rule has more than 20 000 nodes (L = 3: n > 280), then ``"panels"`` for L = 3 (``"moments"`` for
        more levels, or when ``n_theta`` is given).

    Returns
    -------
    log_marginal : ndarray of shape (K, k)
        log ∫ L_j(θ, α) dθ (the uniform probability measure on the simplex).
    log_q : ndarray of shape (K, k, G, L)
        log Q_j(α, g, l) = log ∫ L_j φ̂_gl dθ.
    """
    if method not in ("auto", "quadrature", "moments", "panels"):
        raise InputValueError(f"method must be 'auto', 'quadrature', 'moments' or 'panels', got {method!r}")
    counts = np.ascontiguousarray(counts, dtype=np.int64)
    tables, inverse = _unique_tables(counts)
    log_marginal, log_q = _table_integrals(tables, class_sizes, alpha, n_theta=n_theta, method=method)
    return log_marginal[:, inverse], log_q[:, inverse]


def _unique_tables(counts):
    """The distinct G × L tables of ``counts`` (k, G, L) and, for each feature, the index of its table: features
    with the same table have the same integrals, so each table is integrated once."""
    flat = counts.reshape(counts.shape[0], -1)
    tables, inverse = np.unique(flat, axis=0, return_inverse=True)
    return np.ascontiguousarray(tables.reshape((-1,) + counts.shape[1:])), inverse.ravel()


def _table_integrals(tables, class_sizes, alpha, *, n_theta=None, method="auto"):
    """:func:`categorical_feature_integrals` of distinct tables (int64, shape (u, G, L))."""
    sizes = np.ascontiguousarray(class_sizes, dtype=np.int64)
    alpha = np.ascontiguousarray(alpha, dtype=np.float64)
    n_levels = tables.shape[2]
    n = int(sizes.sum())
    points = n_theta if n_theta is not None else exact_simplex_points(n)
    if method == "auto":
        if points ** (n_levels - 1) <= _MAX_QUADRATURE_NODES:
            method = "quadrature"
        else:  # the exact rule is too large: panels (checked) for L = 3 unless n_theta asks for a rule
            method = "panels" if n_levels == 3 and n_theta is None else "moments"
    if method == "quadrature":
        rule = simplex_rule(n_levels, points)
        return _integrals_by_quadrature(tables, sizes, alpha, rule.nodes, rule.log_weights)
    log_factorial = np.array([lgamma(i + 1.0) for i in range(n + n_levels + 2)])
    if method == "panels":
        if n_levels != 3:
            raise InputValueError(f'method="panels" is for features with 3 levels, got {n_levels}')
        return _integrals_by_panels(tables, sizes, alpha, log_factorial)[:2]
    return _integrals_by_moments(tables, sizes, alpha, log_factorial)


#: Where the limit on a test case's level codes comes from, for messages.
_FITTED_LEVELS = "the levels of the training data or n_levels"


def _predict_chunk(block, *, where, view, method, kwargs, selected, names):
    """One row chunk of the selected columns predicted by ``view`` (see ``_predict_dask``), its level codes
    checked with the features named as in the whole X."""
    block = check_level_chunk(block, where, selected, view.n_levels_, names, _FITTED_LEVELS)
    return getattr(view, method)(block, **kwargs)


class BiasCorrectedCategoricalNB(SelectionBiasClassifier):
    """Bayesian naive Bayes for G classes and categorical features, with correction for selection bias.

    ``fit`` receives **all p candidate features**, integer-coded levels 0..L−1, selects the
    ``n_features_to_select`` with the largest Pearson X² of their class × level table (or those above
    ``threshold``) and fits the model of docs/categorical_correction.md (eq. C1–C6) on them. With
    ``correct=True`` the posterior of α also conditions on the other p − k features having been discarded
    (the adjustment factor a(α)^{p−k}, eq. C10). For two classes and binary features it is
    :class:`~hdbayes.selection_bias.naive_bayes.BiasCorrectedNaiveBayes` (same selection, same predictions).

    Parameters
    ----------
    n_features_to_select : int, optional
        k. γ is the k-th largest X²; the discarded features are known to lie strictly below γ unless one ties
        with the k-th (ties are broken at random), as in the binary model. With neither this nor
        ``threshold``, all features are used and nothing is corrected.
    threshold : float, optional
        Keep the features with X² > ``threshold``; discarded ones satisfy X² ≤ ``threshold``.
    correct : bool, default=True
        Condition on the discarded features (the factor a(α)^{p−k}).
    class_pseudo_count : float or array-like of shape (G,), default=1.0
        The Dirichlet prior of the class probabilities (one value, or one per class of ``classes_``).
    n_levels : int, optional
        L, the number of levels of every feature (codes 0..L−1); default the largest code in the training
        data plus one (at least 2). A test value ≥ L is refused.
    alpha_shape, alpha_scale : float, default=0.5, 5.0
        Inverse-Gamma(a, b) prior of α.
    alpha_rule : {"adaptive", "midpoint"}, default="adaptive"
        The rule for α, as in :class:`BiasCorrectedNaiveBayes`.
    n_alpha : int, optional
        Points of the α rule (see :class:`BiasCorrectedNaiveBayes`).
    alpha_resolution : float, default=1.0
        ``"adaptive"`` only: the resolution of the α rule.
    n_theta : int, optional
        Nodes per dimension of the simplex rule for θ (eq. C11), for the feature integrals and a(α); default
        ⌈(n + 2)/2⌉, which is exact. Fewer nodes make a cheaper rule whose error is not zero. By default the
        feature integrals use that exact rule while it has at most 20 000 nodes; beyond it, for L = 3, two panel
        rules around the integrand's mode checked against each other to 1e-9 (eq. C14, cost independent of n),
        and for more levels the exact moment expansion.
    random_state : int, numpy.random.Generator, RandomState or None
        Random tie-breaking at the selection boundary.

    Attributes
    ----------
    classes_ : ndarray of shape (G,)
    n_features_in_ : int
    n_levels_ : int
        L.
    class_count_ : ndarray of shape (G,)
        N_g.
    selection_ : hdbayes.selection.Selection
        Indices, γ, p, strictness and every feature's X².
    selected_features_ : ndarray of shape (k,)
    threshold_ : float
        γ (on X²).
    level_counts_ : ndarray of shape (k, G, L)
        I_{jgl} of the selected features.
    alpha_grid_, alpha_log_weights_ : ndarray of shape (K,)
        The α points and the log weights of the α rule in prior mass.
    log_adjustment_ : ndarray of shape (K,)
        (p − k) log a(α_m); zeros when ``correct=False`` or k = p.
    log_integral_ : ndarray of shape (K, k, G, L)
        log Q_j(α_m, g, l) (eq. C5).
    log_marginal_likelihood_ : ndarray of shape (K,)
        Σ_j log ∫ L_j(θ, α_m) dθ over the selected features.
    alpha_posterior_ : ndarray of shape (K,)
    posterior_density_of_log_alpha_ : ndarray of shape (K,)
    class_log_prior_ : ndarray of shape (G,)
        log (f_g + N_g)/(Σ f + n).
    statistics_ : hdbayes.statistics.CategoricalClassCounts
        The class sizes and every feature's class × level table, from which the selection and the model were
        computed; ``partial_fit`` adds to them.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1, 2], 10)
    >>> X = rng.integers(0, 3, size=(30, 50))
    >>> X[:, 0] = y
    >>> model = BiasCorrectedCategoricalNB(n_features_to_select=2).fit(X, y)
    >>> int(model.selected_features_[0]), model.predict_proba(X[:2]).shape
    (0, (2, 3))
    """

    def __init__(
        self,
        n_features_to_select: int | None = None,
        *,
        threshold: float | None = None,
        correct: bool = True,
        class_pseudo_count: float | ArrayLike = 1.0,
        n_levels: int | None = None,
        alpha_shape: float = 0.5,
        alpha_scale: float = 5.0,
        alpha_rule: Literal["adaptive", "midpoint"] = "adaptive",
        n_alpha: int | None = None,
        alpha_resolution: float = 1.0,
        n_theta: int | None = None,
        random_state: RandomStateLike = None,
    ) -> None:
        self.n_features_to_select = n_features_to_select
        self.threshold = threshold
        self.correct = correct
        self.class_pseudo_count = class_pseudo_count
        self.n_levels = n_levels
        self.alpha_shape = alpha_shape
        self.alpha_scale = alpha_scale
        self.alpha_rule = alpha_rule
        self.n_alpha = n_alpha
        self.alpha_resolution = alpha_resolution
        self.n_theta = n_theta
        self.random_state = random_state

    _parameter_constraints = {
        **SELECTION_PARAMETER_CONSTRAINTS,
        "n_levels": [Interval(Integral, 2, None, closed="left"), None],
        "alpha_shape": [POSITIVE],
        "alpha_scale": [POSITIVE],
        "alpha_rule": [StrOptions({"adaptive", "midpoint"})],
        "n_alpha": [Interval(Integral, 1, None, closed="left"), None],
        "alpha_resolution": [POSITIVE],
        "n_theta": [Interval(Integral, 1, None, closed="left"), None],
        "random_state": ["random_state", np.random.Generator],
    }

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True  # integer level codes, as scikit-learn's CategoricalNB
        tags.input_tags.positive_only = True  # codes are 0, 1, 2, ...
        tags.input_tags.sparse = True  # accepted and kept sparse: the implicit entries are level 0
        return tags

    def _levels(self, X, *, training, columns=0):
        """X as level codes in the smallest unsigned integer type that holds them (uint8 or uint16; sparse input
        stays sparse: its implicit entries are level 0); non-integers, negative codes and (after fit) codes ≥ L
        are refused, naming the feature (``columns``: the global index of X's first column, or of each)."""
        X = X.tocsr() if sp.issparse(X) else np.asarray(X)
        check_level_codes(
            X, self.n_levels if training else self.n_levels_,
            limit_source="n_levels" if training else _FITTED_LEVELS,
            feature_names=getattr(self, "feature_names_in_", None), columns=columns,
        )  # fmt: skip
        values = X.data if sp.issparse(X) else X
        largest = int(values.max(initial=0))  # below 2^16 (checked)
        return X.astype(np.uint8 if largest < 256 else np.uint16, copy=False)

    def _check_params(self):
        if self.n_alpha is not None and self.alpha_rule == "adaptive":
            check_count("n_alpha", self.n_alpha, minimum=3)

    def _check_level_memory(self, n_features, n_classes):
        """Refuse an ``n_levels`` whose class × level tables cannot fit in memory, before they are counted."""
        if self.n_levels is not None:
            check_level_memory(self.n_levels, n_features, n_classes)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: MatrixLike, y: ArrayLike) -> Self:
        """Select features on (X, y) by Pearson's X² and fit the model.

        X may be a ``dask.array`` (dense or ``scipy.sparse`` chunks, any chunking): the class × level tables
        of every feature are then counted chunk by chunk on the workers and added
        (:meth:`hdbayes.statistics.CategoricalClassCounts.from_dask`), X is never gathered, and the model
        equals the in-memory fit bit for bit (the counts are exact integers).

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, p)
            All candidate features, integer level codes 0..L−1.
        y : array-like or dask array of shape (n_samples,)
            Class labels (at least two classes).

        Returns
        -------
        self
            The fitted estimator.
        """
        self._check_params()
        self._check_selection_params()
        if is_dask_array(X):
            return self._fit_dask(X, y)
        if is_dask_array(y):
            y = y.compute()  # n labels; X is in memory anyway
        X, codes = self._validate_classification_data(
            X, y, accept_sparse=("csr", "csc"), dtype="numeric", ensure_all_finite=True, ensure_min_samples=2
        )
        X = self._levels(X, training=True)
        self._check_level_memory(X.shape[1], self.classes_.shape[0])
        statistics = CategoricalClassCounts._from_checked(
            X, codes, self.classes_, _levels_seen(X, self.n_levels), getattr(self, "feature_names_in_", None)
        )
        return self._fit_statistics(statistics)

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X: MatrixLike, y: ArrayLike, classes: ArrayLike | None = None) -> Self:
        """Add a batch of training cases; the model equals ``fit`` on all batches so far.

        The batches' class × level tables (:class:`hdbayes.statistics.CategoricalClassCounts`,
        ``statistics_``) are added up and the selection and the model are computed again from them after
        every call, so the result equals one ``fit`` on the concatenated batches, bit for bit (any batch
        sizes, in any order; with ``n_levels=None`` L is the largest code seen so far plus one). Until every
        class has a case the tables are only accumulated and the model is not fitted yet. A call that raises
        leaves the estimator as it was.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, p)
            A batch of all p candidate features, integer level codes.
        y : array-like of shape (n_samples,)
            The batch's labels, each one of ``classes``.
        classes : array-like, optional
            All class labels (at least two); required on the first call (scikit-learn's convention), checked
            against ``classes_`` on later ones.

        Returns
        -------
        self
            The estimator, updated with the batch.
        """
        first = not hasattr(self, "statistics_")
        self._check_params()
        self._check_selection_params()
        classes_ = self._batch_classes(y, classes, first)
        with unchanged_on_error(self):
            X, y = validate_input(
                self, X, y, reset=first, accept_sparse=("csr", "csc"), dtype="numeric", ensure_all_finite=True,
                ensure_min_samples=1,
            )  # fmt: skip
            y = np.asarray(y)
            self._check_batch_labels(y, classes_)
            self.classes_ = classes_
            X = self._levels(X, training=True)
            self._check_level_memory(X.shape[1], classes_.shape[0])
            batch = CategoricalClassCounts._from_checked(
                X, np.searchsorted(classes_, y), classes_, _levels_seen(X, self.n_levels),
                getattr(self, "feature_names_in_", None),
            )  # fmt: skip
            self.statistics_ = batch if first else self.statistics_ + batch
            if (self.statistics_.class_counts > 0).all():
                self._fit_statistics(self.statistics_)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_statistics(self, statistics: CategoricalClassCounts) -> Self:
        """Fit from the class × level tables of the training data alone.

        For data that are never in one place: the sum of the statistics of several shards or sites
        (:class:`hdbayes.statistics.CategoricalClassCounts`) gives the same model as ``fit`` on their union.
        ``classes_`` are the statistics' classes, ``feature_names_in_`` their feature names (if any); with
        ``n_levels`` set, the tables are widened to it (a level beyond it is refused).

        Parameters
        ----------
        statistics : hdbayes.statistics.CategoricalClassCounts
            At least two classes, each with at least one case.

        Returns
        -------
        self
            The fitted estimator.
        """
        if not isinstance(statistics, CategoricalClassCounts):
            raise InputTypeError(f"statistics must be a CategoricalClassCounts, got {type(statistics).__name__}")
        self._check_params()
        self._check_selection_params()
        empty = np.flatnonzero(statistics.class_counts == 0)
        if empty.size:
            raise InputValueError(
                f"the statistics hold no case of class {plain_value(statistics.classes[empty[0]])}; every class "
                "needs at least one case"
            )
        check_class_labels(statistics.classes)
        if self.n_levels is not None:
            statistics = statistics.with_levels(self.n_levels)
        with unchanged_on_error(self):
            self._start_from(statistics)
            self._fit_statistics(statistics)
        return self

    def _fit_dask(self, X, y):
        """``fit`` on a dask array X: the tables counted on the workers, the model on the client."""
        if X.ndim == 2 and X.shape[1] == 0:
            raise InputValueError("X has 0 features; at least 1 is required")
        self._check_level_memory(X.shape[1] if X.ndim == 2 else 1, 2)  # at least two classes
        statistics = CategoricalClassCounts.from_dask(X, y, n_levels=self.n_levels)
        check_class_labels(statistics.classes)
        if statistics.n_samples < 2:
            raise InputValueError(
                f"Found array with {statistics.n_samples} sample(s) while a minimum of 2 is required."
            )
        self._start_from(statistics)
        return self._fit_statistics(statistics)

    def _start_from(self, statistics):
        """The fitted attributes of the input set from statistics gathered without validating X here
        (``fit_statistics``, a dask X)."""
        for name in ("feature_names_in_", "statistics_"):
            self.__dict__.pop(name, None)
        self.classes_ = statistics.classes
        self.n_features_in_ = statistics.n_features
        if statistics.feature_names is not None:
            self.feature_names_in_ = np.asarray(statistics.feature_names, dtype=object)

    def _fit_statistics(self, statistics):
        """Selection and model from the class × level tables (every path of ``fit`` comes here)."""
        self.statistics_ = statistics
        self.n_levels_ = statistics.n_levels
        self.class_count_ = np.array(statistics.class_counts)
        return self._fit_counts(np.array(statistics.level_counts))  # writable: the compiled X² takes it as is

    def __sklearn_is_fitted__(self):
        # partial_fit may have accumulated statistics without a case of every class, and no model yet
        return hasattr(self, "alpha_posterior_")

    def _fit_counts(self, counts):
        sizes = self.class_count_
        log_prior = class_log_prior(sizes, self.class_pseudo_count)  # checked before the α integration
        occurring = (counts.sum(axis=1) > 0).sum(axis=1)
        selection = self._select_features(
            pearson_chi_square(counts, sizes), "chi2", self.random_state, constant=occurring <= 1
        )
        n = int(sizes.sum())
        selected = counts[selection.indices]
        tables, inverse = _unique_tables(selected)
        check_rule_memory(self, n_samples=n, n_tables=tables.shape[0], n_classes=sizes.shape[0],
                          n_levels=self.n_levels_)  # fmt: skip
        region = None
        if self.correct and selection.n_discarded > 0:
            region = discarded_region(
                tuple(int(s) for s in sizes), self.n_levels_, float(selection.threshold), bool(selection.strict),
                self.n_theta,
            )  # fmt: skip

        def evaluate(alpha):
            log_marginal, log_q = _table_integrals(tables, sizes, alpha, n_theta=self.n_theta)
            if region is not None:
                log_adjustment = selection.n_discarded * region.log_probability(alpha)
            else:
                log_adjustment = np.zeros(alpha.shape[0])
            return log_q, log_adjustment, log_marginal[:, inverse].sum(axis=1)

        alpha_rule, (log_q, log_adjustment, log_marginal) = integrate_over_alpha(self, evaluate)
        log_q = log_q[:, inverse]
        self.level_counts_ = selected
        self.alpha_grid_ = alpha_rule.nodes
        self.alpha_log_weights_ = alpha_rule.log_weights
        self.log_integral_ = log_q
        self.log_adjustment_ = log_adjustment
        self.log_marginal_likelihood_ = log_marginal
        self.alpha_posterior_, self.posterior_density_of_log_alpha_ = alpha_posterior(
            self.alpha_grid_, self.alpha_log_weights_, log_marginal, log_adjustment, self.alpha_shape, self.alpha_scale
        )
        self.class_log_prior_ = log_prior
        return self

    def _validate_for_prediction(self, X):
        X = validate_input(self, X, reset=False, accept_sparse=("csr", "csc"), dtype="numeric", ensure_all_finite=True)
        return self._levels(X, training=False)

    def _predict_dask(self, X, method, **kwargs):
        """``method`` on a dask array X, as a dask array: only the k selected columns are taken, and each row
        chunk is predicted where it lives by a copy of the model restricted to them (the same computation as
        in memory)."""
        X, n_outputs, dtype = check_prediction_chunks(self, X, method)
        selected = np.asarray(self.selected_features_)
        view = copy.copy(self)  # the model of the selected columns alone, small enough to ship with every task
        for name in ("statistics_", "selection_", "feature_names_in_", "posterior_density_of_log_alpha_"):
            view.__dict__.pop(name, None)
        view.n_features_in_ = selected.shape[0]
        view.selected_features_ = np.arange(selected.shape[0])
        return map_row_chunks(
            X[:, selected], _predict_chunk, n_outputs=n_outputs, dtype=dtype, view=view, method=method, kwargs=kwargs,
            selected=selected, names=getattr(self, "feature_names_in_", None),
        )  # fmt: skip

    def _prediction_check_kwargs(self):
        return {"accept_sparse": ("csr", "csc"), "dtype": "numeric", "ensure_all_finite": True}

    def _check_selected_values(self, X, columns):
        return self._levels(X, training=False, columns=columns)

    def _prediction_row_bytes(self, k):
        # the one-hot test values (k·L per row) and the scores of every α point and class with their copies
        n_alpha, _, n_classes, n_levels = self.log_integral_.shape
        return 8 * (k * n_levels + 4 * n_alpha * n_classes)

    def _joint_log_likelihood(self, X):
        """log P(y* = g, x* | train, S) (eq. C6) from all p columns of X (see ``_selected_joint_log_likelihood``)."""
        return self._selected_joint_log_likelihood(X[:, self.selected_features_])

    def _selected_joint_log_likelihood(self, X_selected, first_row=0):
        """log P(y* = g, x* | train, S) (eq. C6): Σ_j log Q_j(α_m, g, x*_j) by one product of the one-hot test
        values of the selected columns with a (k·L) × (K·G) table, then log-sum-exp over the α points."""
        n_alpha, k, n_classes, n_levels = self.log_integral_.shape
        codes = X_selected.toarray() if sp.issparse(X_selected) else np.asarray(X_selected)
        n = codes.shape[0]
        one_hot = np.zeros((n, k * n_levels))
        rows = np.repeat(np.arange(n), k)
        one_hot[rows, (np.arange(k)[None, :] * n_levels + codes).ravel()] = 1.0
        weights = self.log_integral_.transpose(1, 3, 0, 2).reshape(k * n_levels, n_alpha * n_classes)
        scores = (one_hot @ weights).reshape(n, n_alpha, n_classes)
        scores += (self.log_adjustment_ + self.alpha_log_weights_)[None, :, None]
        return logsumexp(scores, axis=1) + self.class_log_prior_[None, :]

    plot_alpha_posterior = BiasCorrectedNaiveBayes.plot_alpha_posterior  # the same α grid and attributes
