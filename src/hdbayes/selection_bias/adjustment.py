"""Adjustment factors: the probability that a discarded feature fails the filter.

The correction for selection bias (thesis eq. 2.3, 2.8–2.14) multiplies the
likelihood by

    P(S | α, y) = q(α)^{p−k},   q(α) = P(R(x_t, y) in the discarded region | α, y),

the probability that **one** feature drawn afresh from the prior is discarded. Its
cost is independent of p − k. Everything is returned as log q, which the models
multiply by p − k.

Naive Bayes (thesis §2.3.4, eq. 2.47–2.63): given α and θ the counts
I0 = #{y=0, x=1} and I1 = #{y=1, x=1} are independent Beta-binomials, and the
correlation depends on the data only through (I0, I1), so

    q(α) = ∫_0^1 Σ_{(I0, I1) discarded} P(I0 | α, θ) P(I1 | α, θ) dθ.

The thesis sums over the region H+ and uses the flip symmetry q = 1 − 2 P(H+);
here the discarded region itself is summed on the whole (n0+1) × (n1+1) lattice,
which needs no symmetry argument, has no cancellation when q is small, and uses
exactly the correlation function of the selection step
(:func:`hdbayes.selection.correlation_from_sums`), so the lattice point that equals γ
is classified as the selection classified it. The region is stored once as runs of
I1 per row I0 (O(n) of them); for each (α, θ) the two Beta-binomial pmfs are generated
by their ratio recurrence and the runs are summed against cumulative sums of P(I1), so
a node costs O(n0 + n1) time and memory, and both q and 1 − q (the mass of the kept
region, summed the same way) are accurate to a few ulps per term.

The mixture model's factor, built on this module's lattice and Beta-binomial tables, is in
:mod:`hdbayes.selection_bias.mixture_adjustment`.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import logsumexp, roots_legendre

from hdbayes._numba import jit
from hdbayes._threads import map_in_threads, threads_for
from hdbayes._validation import check_count, check_positive
from hdbayes.exceptions import InputValueError
from hdbayes.quadrature import QuadratureRule, gauss_legendre_rule, simpson_rule
from hdbayes.selection import THRESHOLD_RTOL, correlation_from_sums

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = [
    "discarded_lattice",
    "discarded_runs_by_row",
    "exact_theta_rule",
    "lattice_correlation",
    "naive_bayes_log_discard_probability",
]


def exact_points(n):
    """⌈(n + 2)/2⌉: the Gauss nodes (per dimension) that integrate exactly every θ integrand of a model with n
    training cases, polynomials of degree ≤ n + 1 given α (binary: :func:`exact_theta_rule`; L levels: the
    categorical model's simplex rule)."""
    return (int(n) + 3) // 2


#: Above this many nodes the Gauss–Legendre rule comes from scipy's ``roots_legendre`` (O(T²)) rather than numpy's
#: ``leggauss`` (a dense eigenvalue problem, O(T³): 10 s at T = 1001, hours at T = 10 001).
_DENSE_LEGENDRE_UP_TO = 100


@lru_cache(maxsize=16)
def exact_theta_rule(n):
    """Gauss–Legendre rule with ⌈(n + 2)/2⌉ nodes on [0, 1]: exact for every θ integrand of the
    binary models with n training cases (polynomials of degree ≤ n + 1 given α).

    Cached (a fit evaluates it once per α batch); its arrays are read-only. See :func:`_legendre_rule`.
    """
    return _legendre_rule(exact_points(n))


@lru_cache(maxsize=16)
def _legendre_rule(size):
    """Gauss–Legendre rule with ``size`` nodes on [0, 1], read-only. Up to 100 nodes it is
    :func:`hdbayes.quadrature.gauss_legendre_rule`; above, the same rule from
    :func:`scipy.special.roots_legendre` (numpy's dense eigenvalue method is O(T³)), its weights rescaled to
    sum to 1 as numpy's are (at T = 1001 and 3001 the two agree to ~3e-12 relative in the weights of the inner
    80 % of the nodes and to 5e-8 in the outermost ones, whose weights are below 3e-5: an absolute difference
    ~1e-12 in any integral of a function bounded by 1).
    """
    if size <= _DENSE_LEGENDRE_UP_TO:
        rule = gauss_legendre_rule(size)
    else:
        x, w = roots_legendre(size)
        rule = QuadratureRule((x + 1.0) / 2.0, w / w.sum())
    rule.nodes.setflags(write=False)
    rule.weights.setflags(write=False)
    return rule


def check_theta_rule(rule, points_name, n_points):
    """The cross-parameter check of a θ rule ({"exact", "simpson"}, checked by the estimator's
    ``_parameter_constraints``) and its optional number of points: odd and at least 3 for
    Simpson's rule."""
    if rule == "simpson" and n_points is not None:
        check_count(points_name, n_points, minimum=3, odd=True)


def theta_quadrature(rule, n_points, n, simpson_points):
    """The θ rule of a binary model with n training cases: ``"exact"`` is Gauss–Legendre with
    ``n_points`` nodes (default :func:`exact_theta_rule`), ``"simpson"`` composite Simpson with
    ``n_points`` points (default ``simpson_points``, the thesis's number)."""
    if rule == "exact":
        return gauss_legendre_rule(n_points) if n_points is not None else exact_theta_rule(n)
    return simpson_rule(n_points if n_points is not None else simpson_points)


def lattice_correlation(n0, n1, rows=None):
    """Cor(I0, I1, ȳ) on the lattice 0 ≤ I0 ≤ n0, 0 ≤ I1 ≤ n1 (thesis eq. 2.45–2.46).

    Parameters
    ----------
    n0, n1 : int
        Numbers of training cases with y = 0 and y = 1.
    rows : array-like of int, optional
        The values of I0 to compute (default all, 0..n0).

    Returns
    -------
    ndarray of shape (n0 + 1, n1 + 1), or (len(rows), n1 + 1)
        The signed correlation of a binary feature having I0 ones among the y = 0
        cases and I1 ones among the y = 1 cases (0 for a constant feature).
    """
    n = n0 + n1
    i0 = (np.arange(n0 + 1) if rows is None else np.asarray(rows))[:, None]
    i1 = np.arange(n1 + 1)[None, :]
    m = i0 + i1
    return correlation_from_sums(i1, m, m, n, n1)


def discarded_lattice(n0, n1, threshold, strict, rows=None):
    """Boolean mask of the lattice points whose |Cor| falls in the discarded region.

    ``strict=True``: |Cor| < γ (the point at γ itself passes the filter);
    ``strict=False``: |Cor| ≤ γ. A relative tolerance of
    :data:`hdbayes.selection.THRESHOLD_RTOL` guards the boundary. ``rows``: the values of I0
    (default all).
    """
    cor = np.abs(lattice_correlation(n0, n1, rows))
    tol = THRESHOLD_RTOL * abs(threshold)
    if strict:
        return cor < threshold - tol
    return cor <= threshold + tol


#: Rows of the lattice whose mask is formed at once by :func:`discarded_runs_by_row`.
_LATTICE_BLOCK = 256


def discarded_runs_by_row(n0, n1, threshold, strict):
    """The discarded lattice points as runs along I1: (I0, start, stop) arrays, stop exclusive.

    The same points as :func:`discarded_lattice`, formed ``_LATTICE_BLOCK`` rows at a time, so the
    memory is O(n1) per row block rather than the whole (n0 + 1) × (n1 + 1) lattice (6.7 GB at
    n0 = n1 = 10 000 before).
    """
    pieces = []
    for first in range(0, n0 + 1, _LATTICE_BLOCK):
        rows = np.arange(first, min(n0 + 1, first + _LATTICE_BLOCK))
        row, start, stop = _runs(discarded_lattice(n0, n1, threshold, strict, rows))
        pieces.append((row + first, start, stop))
    return tuple(np.concatenate([piece[i] for piece in pieces]) for i in range(3))


def _beta_binomial_pmf_table(n, alpha, theta):
    """P(I | α, θ) for I = 0..n on the (α, θ) grid, shape (K, T, n + 1), by the ratio recurrence
    (:func:`_beta_binomial_scaled`; a few ulps per entry, where exponentiated tables of cumulated logs lose
    ~1e-12 at n = 1000)."""
    return _beta_binomial_pmf_grid(
        int(n), np.asarray(alpha, dtype=np.float64).reshape(-1), np.asarray(theta, dtype=np.float64).reshape(-1)
    )


@lru_cache(maxsize=32)
def _beta_binomial_pmfs(n, alpha, theta):
    """:func:`_beta_binomial_pmf_table` cached: cross-validation folds share class sizes and
    fixed grids, so the tables are computed once per study."""
    pmf = _beta_binomial_pmf_table(n, alpha, theta)
    pmf.setflags(write=False)
    return pmf


def _runs(mask):
    """The True entries of a 2-D mask as runs along its rows: (row, start, stop) arrays, stop exclusive."""
    padded = np.zeros((mask.shape[0], mask.shape[1] + 2), dtype=np.int8)
    padded[:, 1:-1] = mask
    edges = np.diff(padded, axis=1)
    rows, starts = np.nonzero(edges == 1)
    _, stops = np.nonzero(edges == -1)
    return rows.astype(np.int64), starts.astype(np.int64), stops.astype(np.int64)


#: Below this (relative to the largest entry ≈ 1) the tail of a unimodal Beta-binomial pmf is set to 0 without
#: computing it; the entries left out are < (n + 1) · 1e-300 of the mode.
_UNDERFLOW = 1e-300


@jit
def _beta_binomial_scaled(n, a, b, out):
    """P(I | n, a, b) for I = 0..n up to a common factor, by the ratio recurrence from the largest entry.

    ``out[I]`` ∝ C(n, I) (a)_I (b)_{n−I}; the start (scaled to 1) is the mode, so no entry overflows. With
    P(I + 1)/P(I) = (n − I)(a + I) / ((I + 1)(b + n − I − 1)) ≥ 1 ⇔ (na − b − n + 1) + I(2 − α) ≥ 0 (α = a + b,
    linear in I), the pmf is unimodal for α > 2, with its mode just above (na − b − n + 1)/(α − 2), and has its
    largest entry at I = 0 or n otherwise (decreasing, then increasing), compared by log-Gamma. Each entry is
    a product of at most n ratios (relative error ≤ ~2n ulp). For α > 2 the tails below ``_UNDERFLOW`` are
    treated as zeros. Returns (lo, hi, total): only ``out[lo:hi + 1]`` is written (the caller reads that range,
    or passes zeros elsewhere), and ``total`` is its sum (≥ 1).
    """
    alpha = a + b
    if a == 0.0:
        start = 0
    elif b == 0.0:
        start = n
    elif alpha > 2.0:
        x = (n * a - b - n + 1.0) / (alpha - 2.0)
        start = 0 if x < 0.0 else (n if x >= n else int(math.floor(x)) + 1)  # (α − 2 may be tiny: x huge)
    else:
        log_ratio = math.lgamma(a + n) - math.lgamma(a) - math.lgamma(b + n) + math.lgamma(b)
        start = n if log_ratio > 0.0 else 0
    unimodal = alpha > 2.0
    out[start] = 1.0
    total = 1.0
    value = 1.0
    hi = n
    for i in range(start, n):
        value *= (n - i) * (a + i) / ((i + 1) * (b + (n - i - 1)))
        if unimodal and value < _UNDERFLOW:
            hi = i
            break
        out[i + 1] = value
        total += value
    value = 1.0
    lo = 0
    for k in range(start):
        i = start - 1 - k
        value *= (i + 1) * (b + (n - i - 1)) / ((n - i) * (a + i))
        if unimodal and value < _UNDERFLOW:
            lo = i + 1
            break
        out[i] = value
        total += value
    return lo, hi, total


@jit
def _beta_binomial_pmf_grid(n, alpha, theta):
    """:func:`_beta_binomial_scaled` normalised, for every (α, θ) pair: shape (K, T, n + 1)."""
    out = np.zeros((alpha.shape[0], theta.shape[0], n + 1))
    for m in range(alpha.shape[0]):
        for t in range(theta.shape[0]):
            row = out[m, t]
            lo, hi, total = _beta_binomial_scaled(n, alpha[m] * theta[t], alpha[m] * (1.0 - theta[t]), row)
            scale = 1.0 / total
            for i in range(lo, hi + 1):
                row[i] *= scale
    return out


@jit
def _fused_discarded_mass(alpha, theta, n0, n1, row_offsets, starts, stops):
    """(discarded, kept)[m, t]: the probabilities that (I0, I1) is in the discarded region and that it is not,
    given α_m and θ_t (they add up to 1; each is accurate relative to itself, so 1 − q is too when q ≈ 1).

    The two Beta-binomial pmfs are generated for each (α, θ) by :func:`_beta_binomial_scaled` (O(n) memory),
    pmf1 is cumulated from both ends, and row I0 (runs ``row_offsets[I0]`` to ``row_offsets[I0 + 1]``, sorted)
    adds pmf0[I0] times the pmf1 mass of its runs to the discarded sum and of the gaps between them to the kept
    one. (Written out in one loop: a compiled helper taking the arrays costs ~20 ns a call in reference
    counting, more than the sums.)
    """
    pmf0 = np.zeros(n0 + 1)
    pmf1 = np.zeros(n1 + 1)
    prefix = np.zeros(n1 + 2)
    suffix = np.zeros(n1 + 2)
    discarded = np.zeros((alpha.shape[0], theta.shape[0]))
    kept = np.zeros((alpha.shape[0], theta.shape[0]))
    for m in range(alpha.shape[0]):
        for t in range(theta.shape[0]):
            a = alpha[m] * theta[t]
            b = alpha[m] * (1.0 - theta[t])
            lo0, hi0, _ = _beta_binomial_scaled(n0, a, b, pmf0)
            lo1, hi1, _ = _beta_binomial_scaled(n1, a, b, pmf1)
            prefix[lo1] = 0.0
            suffix[hi1 + 1] = 0.0
            for k in range(hi1 - lo1 + 1):  # forward loops: numba's range with a negative step is ~5x slower
                prefix[lo1 + k + 1] = prefix[lo1 + k] + pmf1[lo1 + k]
                suffix[hi1 - k] = suffix[hi1 - k + 1] + pmf1[hi1 - k]
            inside = 0.0
            outside = 0.0
            for row in range(lo0, hi0 + 1):
                # the row's segments of I1 alternate kept (k even: the gaps) and discarded (k odd: the runs)
                first, count = row_offsets[row], row_offsets[row + 1] - row_offsets[row]
                row_inside = 0.0
                row_outside = 0.0
                for k in range(2 * count + 1):
                    if k % 2:
                        left, right = starts[first + k // 2], stops[first + k // 2]
                    else:
                        left = 0 if k == 0 else stops[first + k // 2 - 1]
                        right = n1 + 1 if k == 2 * count else starts[first + k // 2]
                    # Σ pmf1[left:right] (0 outside lo1..hi1): directly when short (≤ 8 points), else the
                    # difference of the prefix or of the suffix sums, whichever is smaller (its rounding error
                    # is relative to the smaller total, so a tail next to I1 = 0 or n1 is as accurate as its size)
                    left, right = max(left, lo1), min(right, hi1 + 1)
                    if right <= left:
                        continue
                    if right - left <= 8:
                        part = 0.0
                        for i in range(left, right):
                            part += pmf1[i]
                    elif prefix[right] <= suffix[left]:
                        part = prefix[right] - prefix[left]
                    else:
                        part = suffix[left] - suffix[right]
                    if k % 2:
                        row_inside += part
                    else:
                        row_outside += part
                inside += pmf0[row] * row_inside
                outside += pmf0[row] * row_outside
            total = inside + outside
            discarded[m, t] = inside / total
            kept[m, t] = outside / total
            pmf0[lo0 : hi0 + 1] = 0.0
            pmf1[lo1 : hi1 + 1] = 0.0
    return discarded, kept


def naive_bayes_log_discard_probability(
        alpha: ArrayLike, n0: int, n1: int, threshold: float, *, strict: bool = False,
        theta_rule: QuadratureRule | None = None, tolerance: float | None = None) -> np.ndarray:
    """log q(α) for the Bayesian naive Bayes model (thesis eq. 2.54–2.63).

    Parameters
    ----------
    alpha : array_like of shape (K,)
        Values of the hyperparameter α > 0.
    n0, n1 : int
        Training class sizes (both ≥ 1).
    threshold : float
        γ ≥ 0, the selection threshold on |COR|.
    strict : bool, default=False
        Whether the discarded features satisfy |COR| < γ (True) or |COR| ≤ γ.
    theta_rule : QuadratureRule, optional
        Rule for the θ integral on [0, 1]; default Gauss–Legendre with
        ⌈(n0 + n1 + 2)/2⌉ nodes, which is exact (given α the integrand is a polynomial in
        θ of degree n0 + n1). The thesis used Simpson's rule with 21 points
        (``simpson_rule(21)``), which errs by up to ~2e-3 in log q at n = 200 — multiplied
        by p − k in the adjustment. Use a symmetric rule with nodes at 0 and 1 or inside.
    tolerance : float, optional
        Only without ``theta_rule``: when the exact rule has more than
        ``_CONVERGED_FROM`` = 1025 nodes (n0 + n1 > 2048), use instead Gauss–Legendre rules of
        128, 256, 512, … nodes until two successive ones differ by at most ``tolerance`` in log q
        at every α (the finer one is returned), or the exact rule is reached. The estimator passes
        1e-6/(p − k), so that (p − k) log q is within ~1e-6 of its exact value (the error of the
        coarser rule is ~ the difference; the finer one converges geometrically faster — measured in
        docs/naive_bayes.md). None (default): always the exact rule.

    Returns
    -------
    ndarray of shape (K,)
        The values log q(α), one per α; −inf where no lattice point is discarded.

    Notes
    -----
    Cost O(K · n_θ · (n0 + n1)) time and O(n0 + n1) memory per thread after the lattice's runs
    (O(n0 · n1) once per (n0, n1, γ), cached) — independent of p − k. When the region and the rule
    are both symmetric under θ ↔ 1 − θ (the flip of a feature's 0s and 1s; Gauss–Legendre and
    Simpson rules are), only the nodes θ ≤ 1/2 are evaluated. Above 5·10^7 pmf entries the θ nodes
    are shared among up to 4 threads (the result does not depend on their number). Where q > 1/2,
    log q = log1p(−(1 − q)) from the kept mass, so (p − k) log q keeps its relative accuracy when
    q ≈ 1.
    """
    alpha = np.atleast_1d(np.asarray(alpha, dtype=np.float64))
    if np.any(~np.isfinite(alpha)) or np.any(alpha <= 0):
        raise InputValueError("alpha must be finite and > 0")
    if n0 < 1 or n1 < 1:
        raise InputValueError(f"both classes need at least one case, got n0={n0}, n1={n1}")
    n0, n1 = int(n0), int(n1)
    if tolerance is not None:
        if theta_rule is not None:
            raise InputValueError("give either theta_rule or tolerance, not both")
        tolerance = check_positive("tolerance", tolerance)
    runs = _discarded_runs_csr(n0, n1, float(threshold), bool(strict))
    if runs[1].size == 0:
        return np.full(alpha.shape, -np.inf)
    if theta_rule is not None:
        return _log_q_with_rule(alpha, n0, n1, runs, theta_rule)
    exact = exact_points(n0 + n1)
    if tolerance is None or exact <= _CONVERGED_FROM:
        return _log_q_with_rule(alpha, n0, n1, runs, exact_theta_rule(n0 + n1))
    size = _CONVERGED_FIRST
    coarse = _log_q_with_rule(alpha, n0, n1, runs, _legendre_rule(size))
    while 2 * size < exact:
        size *= 2
        fine = _log_q_with_rule(alpha, n0, n1, runs, _legendre_rule(size))
        with np.errstate(invalid="ignore"):
            change = np.where(fine == coarse, 0.0, np.abs(fine - coarse))
        if np.all(change <= tolerance):
            return fine
        coarse = fine
    return _log_q_with_rule(alpha, n0, n1, runs, exact_theta_rule(n0 + n1))


#: Without a θ rule, a ``tolerance`` and an exact rule of more than this many nodes, the rule is converged instead
#: (:func:`naive_bayes_log_discard_probability`), starting from ``_CONVERGED_FIRST`` nodes.
_CONVERGED_FROM = 1025
_CONVERGED_FIRST = 128


def _log_q_with_rule(alpha, n0, n1, runs, rule):
    """log q(α) with the θ rule ``rule`` over the cached runs of :func:`_discarded_runs_csr`."""
    row_offsets, starts, stops, symmetric = runs
    nodes, log_weights = half_rule(rule.nodes, rule.log_weights) if symmetric else (None, None)
    if nodes is None:
        nodes, log_weights = np.asarray(rule.nodes, dtype=np.float64), rule.log_weights
    discarded, kept = _threaded_discarded_mass(alpha, nodes, n0, n1, row_offsets, starts, stops)  # (K, T) each
    with np.errstate(divide="ignore"):
        log_q = logsumexp(np.log(discarded) + log_weights[None, :], axis=1)
    # q near 1: log q = log(Σ w − Σ w (1 − q_t)) = log1p((Σ w − 1) − Σ w (1 − q_t)), accurate to the kept mass
    weights = np.exp(log_weights)
    near_one = log_q > -np.log(2.0)
    complement = (weights.sum() - 1.0) - kept[near_one] @ weights
    log_q[near_one] = np.log1p(complement)
    return log_q


@lru_cache(maxsize=8)
def _discarded_runs_csr(n0, n1, threshold, strict):
    """The runs of :func:`discarded_runs_by_row` indexed by row, cached (every α evaluation of a fit uses them;
    3 s at n0 = n1 = 10^4): (row_offsets, starts, stops, symmetric), the runs of row I0 being
    ``row_offsets[I0]:row_offsets[I0 + 1]``. ``symmetric``: whether the region is unchanged by the flip
    (I0, I1) → (n0 − I0, n1 − I1) of a feature's 0s and 1s, which changes the sign of the correlation only
    (checked on the runs themselves, so a boundary point rounded differently on the two sides is not assumed
    away)."""
    rows, starts, stops = discarded_runs_by_row(n0, n1, threshold, strict)
    row_offsets = np.zeros(n0 + 2, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n0 + 1), out=row_offsets[1:])
    flipped_rows, flipped_starts = n0 - rows, n1 + 1 - stops
    order = np.lexsort((flipped_starts, flipped_rows))
    symmetric = bool(
        np.array_equal(flipped_rows[order], rows)
        and np.array_equal(flipped_starts[order], starts)
        and np.array_equal((n1 + 1 - starts)[order], stops)
    )
    for array in (row_offsets, starts, stops):
        array.setflags(write=False)
    return row_offsets, starts, stops, symmetric


def half_rule(nodes, log_weights):
    """The nodes θ ≤ 1/2 of a rule on [0, 1] symmetric about 1/2 (to 1e-14), each carrying its mirror's weight
    too, and their log weights; (None, None) if the rule is not symmetric.

    On a flip-symmetric discarded region the inner sum at 1 − θ equals the one at θ
    (P(I | n, α(1 − θ), αθ) = P(n − I | n, αθ, α(1 − θ))), so half the nodes suffice (the binary naive Bayes
    factor and the categorical one for L = 2).
    """
    nodes = np.asarray(nodes, dtype=np.float64)
    log_weights = np.asarray(log_weights, dtype=np.float64)
    order = np.argsort(nodes, kind="stable")
    nodes, log_weights = nodes[order], log_weights[order]
    size = nodes.size
    if size < 2 or not (
        np.allclose(nodes + nodes[::-1], 1.0, rtol=0.0, atol=1e-14)
        and np.allclose(log_weights, log_weights[::-1], rtol=0.0, atol=1e-12)
    ):
        return None, None
    half = size // 2
    low = np.logaddexp(log_weights[:half], log_weights[::-1][:half])
    if size % 2:
        return np.append(nodes[:half], 0.5), np.append(low, log_weights[half])
    return nodes[:half].copy(), low


#: Below this many pmf entries ((α, θ) pairs × (n0 + n1)) the kernel runs in the calling thread.
_THREADING_FROM = 50_000_000


def _threaded_discarded_mass(alpha, nodes, n0, n1, row_offsets, starts, stops):
    """:func:`_fused_discarded_mass` on interleaved slices of the θ nodes in threads (the kernel releases the
    GIL; each output is computed independently, so the result does not depend on the number of threads)."""
    n_threads = threads_for(nodes.size, alpha.size * nodes.size * (n0 + n1), _THREADING_FROM)
    if n_threads < 2:
        return _fused_discarded_mass(alpha, nodes, n0, n1, row_offsets, starts, stops)
    discarded, kept = np.empty((alpha.size, nodes.size)), np.empty((alpha.size, nodes.size))
    slices = [slice(j, None, n_threads) for j in range(n_threads)]
    parts = map_in_threads(
        lambda part: _fused_discarded_mass(alpha, np.ascontiguousarray(nodes[part]), n0, n1, row_offsets, starts,
                                           stops),  # fmt: skip
        slices,
    )
    for part, (inside, outside) in zip(slices, parts, strict=True):
        discarded[:, part], kept[:, part] = inside, outside
    return discarded, kept
