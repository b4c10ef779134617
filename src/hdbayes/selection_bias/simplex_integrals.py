"""The θ integrals of the categorical model on the simplex (docs/categorical_correction.md eq. C4–C5, C11–C14).

For a feature's G × L table of counts and a value of α, the integrals over its base distribution θ (uniform on
the simplex) of L_j(θ, α) = ∏_g DirMult(counts_g | α θ) and of L_j φ̂_gl, in four ways:

* :func:`_integrals_by_quadrature`: a product Gauss–Jacobi rule on the simplex (:func:`simplex_rule`; exact
  with :func:`exact_simplex_points` (n) nodes per dimension);
* :func:`_integrals_by_moments`: the exact moment expansion (cost O(L n²) per table and α);
* :func:`_integrals_by_panels`: two composite Gauss–Legendre rules around the integrand's mode (L = 3;
  eq. C14), placed by a Laplace approximation (:func:`_laplace`), kept where they agree to 1e-9, the moment
  expansion elsewhere.

:func:`categorical_feature_integrals` chooses among them (``method="auto"``) for every feature's table;
:class:`~hdbayes.selection_bias.categorical.BiasCorrectedCategoricalNB` integrates its distinct tables
with :func:`unique_tables` and :func:`table_integrals`.
"""

from __future__ import annotations

from functools import lru_cache
from math import lgamma

import numpy as np
from scipy.special import roots_legendre

from hdbayes._numba import jit
from hdbayes._special_kernels import log_rising_factorial_scalar
from hdbayes.exceptions import InputValueError
from hdbayes.selection_bias.categorical_adjustment import exact_simplex_points, simplex_rule

__all__ = ["categorical_feature_integrals", "table_integrals", "unique_tables"]

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
        marginal, q = _integrals_by_moments(tables[u : u + 1], sizes, alpha[m : m + 1], log_factorial)
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
    tables, inverse = unique_tables(counts)
    log_marginal, log_q = table_integrals(tables, class_sizes, alpha, n_theta=n_theta, method=method)
    return log_marginal[:, inverse], log_q[:, inverse]


def unique_tables(counts):
    """The distinct G × L tables of ``counts`` and, for each feature, the index of its table.

    Features with the same table have the same integrals, so each table is integrated once.

    Parameters
    ----------
    counts : ndarray of int, shape (k, G, L)
        Every feature's class × level table.

    Returns
    -------
    tables : ndarray of int, shape (u, G, L)
        The distinct tables (C-contiguous).
    inverse : ndarray of int, shape (k,)
        The index of each feature's table among them.
    """
    flat = counts.reshape(counts.shape[0], -1)
    tables, inverse = np.unique(flat, axis=0, return_inverse=True)
    return np.ascontiguousarray(tables.reshape((-1,) + counts.shape[1:])), inverse.ravel()


def table_integrals(tables, class_sizes, alpha, *, n_theta=None, method="auto"):
    """:func:`categorical_feature_integrals` of distinct tables (from :func:`unique_tables`).

    Parameters
    ----------
    tables : ndarray of int64, shape (u, G, L)
        Distinct class × level tables.
    class_sizes : array_like of int, shape (G,)
    alpha : ndarray of shape (K,)
    n_theta : int, optional
        Nodes per dimension of the simplex rule.
    method : {"auto", "quadrature", "moments", "panels"}
        As in :func:`categorical_feature_integrals`.

    Returns
    -------
    log_marginal : ndarray of shape (K, u)
    log_q : ndarray of shape (K, u, G, L)
    """
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
