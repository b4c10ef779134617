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
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import gammaln, logsumexp, roots_legendre

from hdbayes._numba import jit
from hdbayes._threads import map_in_threads, threads_for
from hdbayes._validation import check_count, check_positive
from hdbayes.exceptions import InputValueError
from hdbayes.quadrature import QuadratureRule, gauss_legendre_rule, simpson_rule
from hdbayes.selection import THRESHOLD_RTOL, correlation_from_sums

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = [
    "MixtureAdjustmentCache",
    "discarded_lattice",
    "discarded_runs_by_row",
    "exact_theta_rule",
    "lattice_correlation",
    "mixture_log_discard_probability",
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


# ---------------------------------------------------------------------------
# Bayesian binary mixture model (thesis §2.4, eq. 2.97–2.105, Appendix 2)
# ---------------------------------------------------------------------------
#
# For a discarded feature t, let I0 and I1 be its numbers of ones among the cases with
# x_0 = 0 and x_0 = 1 (the lattice of the naive Bayes factor). Its distribution now
# depends on the latent labels z: in group z the number of ones m_z is Beta-binomial
# (n^[z], αθ, α(1−θ)), and given m_z the ones are spread uniformly over the group, so the
# count A_x^[z] among its x_0 = x cases is hypergeometric. The thesis forms the 2-D
# convolution T^[0] ⊛ T^[1] (eq. 2.105) for every θ and α and sums it over the discarded
# region. Here the sum is reorganised so that θ and α enter only through the two
# Beta-binomial vectors:
#
#     q(α) = ∫ Σ_{m0, m1} BB_{n^[0]}(m0 | α, θ) · BB_{n^[1]}(m1 | α, θ) · W(m0, m1) dθ,
#     W(m0, m1) = P((I0, I1) discarded | m0, m1)        (hypergeometric splits only).
#
# W depends on the data only through (n0, n1, n_0^[1], n_1^[1], γ) and costs O(n³) once;
# the (α, θ) grid then costs one matrix product. At fixed M = m0 + m1 the correlation is
# monotone in I0 (the numerator is I1 − ȳM), so the discarded set is an interval of I0
# and W(m0, m1) = Σ_a P(A^[E] = a | m_E) · P(lo_M − a ≤ A^[C] ≤ hi_M − a | m_C), one
# hypergeometric summed explicitly (the smallest of the four cells) and the other read
# from its cumulative table. All terms are non-negative, so there is no cancellation
# beyond the difference of two cumulative sums.


def _check_alpha(alpha):
    alpha = np.atleast_1d(np.asarray(alpha, dtype=np.float64))
    if alpha.ndim != 1 or alpha.size == 0:
        raise InputValueError("alpha must be a non-empty 1-D array")
    if np.any(~np.isfinite(alpha)) or np.any(alpha <= 0):
        raise InputValueError("alpha must be finite and > 0")
    return alpha


def _check_class_sizes(n0, n1):
    n0 = check_count("n0", n0, minimum=1)
    n1 = check_count("n1", n1, minimum=1)
    return n0, n1


def _check_label_counts(n0, n1, n0_label1, n1_label1):
    n0_label1 = check_count("n0_label1", n0_label1, minimum=0)
    n1_label1 = check_count("n1_label1", n1_label1, minimum=0)
    if n0_label1 > n0:
        raise InputValueError(f"n0_label1 must be between 0 and n0={n0}, got {n0_label1}")
    if n1_label1 > n1:
        raise InputValueError(f"n1_label1 must be between 0 and n1={n1}, got {n1_label1}")
    return n0_label1, n1_label1


@lru_cache(maxsize=32)
def _discarded_intervals(n0, n1, threshold, strict):
    """The discarded region as intervals of I0 on each anti-diagonal I0 + I1 = M.

    Returns (lo, hi), int arrays of length n0 + n1 + 1: the feature is discarded iff
    lo[M] ≤ I0 ≤ hi[M]; an empty diagonal has lo = hi + 1. Raises if the mask of
    :func:`discarded_lattice` is not an interval on some diagonal (it always is: at fixed
    M the correlation is a monotone function of I1 − ȳM).
    """
    mask = discarded_lattice(n0, n1, threshold, strict)
    i0 = np.broadcast_to(np.arange(n0 + 1)[:, None], mask.shape)
    total = np.arange(n0 + 1)[:, None] + np.arange(n1 + 1)[None, :]
    n = n0 + n1
    count = np.bincount(total[mask], minlength=n + 1)
    lo = np.full(n + 1, n + 1, dtype=np.int64)
    hi = np.full(n + 1, -1, dtype=np.int64)
    np.minimum.at(lo, total[mask], i0[mask])
    np.maximum.at(hi, total[mask], i0[mask])
    empty = count == 0
    lo[empty], hi[empty] = 0, -1
    if np.any(count[~empty] != hi[~empty] - lo[~empty] + 1):
        raise RuntimeError("the discarded region is not an interval on every anti-diagonal")  # pragma: no cover
    lo.setflags(write=False)
    hi.setflags(write=False)
    return lo, hi


@lru_cache(maxsize=8)
def _log_factorials(n):
    table = gammaln(np.arange(n + 1) + 1.0)
    table.setflags(write=False)
    return table


@jit
def _hypergeometric_table(size, marked, log_factorial):
    """P(A = a | m) for m = 0..size (rows), a = 0..marked (columns): the number of marked
    items among m drawn without replacement from ``size`` items of which ``marked`` are marked."""
    lf = log_factorial
    unmarked = size - marked
    table = np.zeros((size + 1, marked + 1))
    for m in range(size + 1):
        log_total = lf[size] - lf[m] - lf[size - m]
        for a in range(max(0, m - unmarked), min(marked, m) + 1):
            # log C(marked, a) + log C(unmarked, m − a) − log C(size, m), grouped so that the
            # degenerate splits (unmarked = 0 or marked = 0) give exactly 1
            log_marked = lf[marked] - lf[a] - lf[marked - a]
            log_unmarked = lf[unmarked] - lf[m - a] - lf[unmarked - m + a]
            table[m, a] = np.exp(log_marked + log_unmarked - log_total)
    return table


@jit
def _discard_weights_kernel(size_e, marked_e, size_c, marked_c, column, lo, hi, log_factorial):
    """W(m_E, m_C) for an explicit group E and a cumulated group C (see _mixture_discard_weights)."""
    hyper_e = _hypergeometric_table(size_e, marked_e, log_factorial)
    hyper_c = _hypergeometric_table(size_c, marked_c, log_factorial)
    # cumulative[m, j + 1] = P(A_C ≤ j | m), j = −1..marked_c
    cumulative = np.zeros((size_c + 1, marked_c + 2))
    for m in range(size_c + 1):
        running = 0.0
        for a in range(marked_c + 1):
            running += hyper_c[m, a]
            cumulative[m, a + 1] = running
    unmarked_e = size_e - marked_e
    weights = np.zeros((size_e + 1, size_c + 1))
    for m_e in range(size_e + 1):
        a_first, a_last = max(0, m_e - unmarked_e), min(marked_e, m_e)
        for m_c in range(size_c + 1):
            total = m_e + m_c
            if column == 0:
                low, high = lo[total], hi[total]
            else:  # the interval of I1 = M − I0
                low, high = total - hi[total], total - lo[total]
            if high < low:
                continue
            acc = 0.0
            for a in range(a_first, a_last + 1):
                upper = high - a  # A_C ≤ upper
                if upper < 0:
                    break
                lower = low - a - 1  # A_C > lower
                if lower >= marked_c:
                    continue
                acc += hyper_e[m_e, a] * (
                    cumulative[m_c, min(upper, marked_c) + 1] - cumulative[m_c, max(lower, -1) + 1]
                )
            weights[m_e, m_c] = acc
    return weights


def _mixture_discard_weights(n0, n1, n0_label1, n1_label1, lo, hi):
    """W(m0, m1) = P(discarded | m0 ones in group z = 0, m1 ones in group z = 1).

    Returns an array of shape (n^[0] + 1, n^[1] + 1).
    """
    n = n0 + n1
    cells = {(0, 0): n0 - n0_label1, (0, 1): n1 - n1_label1, (1, 0): n0_label1, (1, 1): n1_label1}
    sizes = {0: n - n0_label1 - n1_label1, 1: n0_label1 + n1_label1}
    # the explicit sum runs over the smallest cell; the other group's cell in the same x_0 column is cumulated
    group_e, column = min(cells, key=lambda key: (cells[key], key))
    group_c = 1 - group_e
    weights = _discard_weights_kernel(
        sizes[group_e],
        cells[(group_e, column)],
        sizes[group_c],
        cells[(group_c, column)],
        column,
        lo,
        hi,
        _log_factorials(n),
    )
    return weights if group_e == 0 else weights.T


def _canonical_labels(n0, n1, n0_label1, n1_label1):
    """Swapping the labels z ↔ 1 − z leaves q unchanged; use one orientation of each pair."""
    return min((n0_label1, n1_label1), (n0 - n0_label1, n1 - n1_label1))


@jit
def _bilinear_kernel(left, weights, right):
    """out[r] = left[r] @ weights @ right[r] (compiled: a BLAS call this small is slower when threaded)."""
    out = np.zeros(left.shape[0])
    row = np.empty(weights.shape[1])
    for r in range(left.shape[0]):
        row[:] = 0.0
        for i in range(weights.shape[0]):
            p = left[r, i]
            if p != 0.0:
                for j in range(weights.shape[1]):
                    row[j] += p * weights[i, j]
        total = 0.0
        for j in range(weights.shape[1]):
            total += row[j] * right[r, j]
        out[r] = total
    return out


def _mixture_log_q(weights, pmf0, pmf1, log_weights):
    """log ∫ pmf0ᵀ W pmf1 dθ for pmf0 of shape (K, T, n^[0] + 1) and pmf1 of shape (K, T, n^[1] + 1)."""
    k, t = pmf0.shape[:2]
    # contiguous arguments: one compiled signature (the weights of the other orientation come transposed)
    left, right = np.ascontiguousarray(pmf0.reshape(k * t, -1)), np.ascontiguousarray(pmf1.reshape(k * t, -1))
    inner = _bilinear_kernel(left, np.ascontiguousarray(weights), right).reshape(k, t)
    with np.errstate(divide="ignore"):
        return logsumexp(np.log(inner) + log_weights[None, :], axis=1)


def mixture_log_discard_probability(
        alpha: ArrayLike, n0: int, n1: int, n0_label1: int, n1_label1: int, threshold: float, *, strict: bool = False,
        theta_rule: QuadratureRule | None = None) -> np.ndarray:
    """log q(α) for the Bayesian binary mixture model (thesis eq. 2.97–2.105).

    q(α) is the probability that one feature drawn afresh from the prior, given the
    observed response x_0 and the latent labels z, has |COR(x_t, x_0)| in the discarded
    region. It depends on z only through the counts of label 1 among the x_0 = 0 and
    x_0 = 1 cases.

    Parameters
    ----------
    alpha : array_like of shape (K,)
        Values of the feature hyperparameter α > 0 (not α_0).
    n0, n1 : int
        Numbers of training cases with x_0 = 0 and x_0 = 1 (both ≥ 1).
    n0_label1, n1_label1 : int
        #{z = 1, x_0 = 0} ∈ [0, n0] and #{z = 1, x_0 = 1} ∈ [0, n1]; the z = 0 counts
        are the complements.
    threshold : float
        γ ≥ 0, the selection threshold on |COR| with the response.
    strict : bool, default=False
        Whether the discarded features satisfy |COR| < γ (True) or |COR| ≤ γ.
    theta_rule : QuadratureRule, optional
        Rule for the θ integral on [0, 1]. Given α the integrand is a polynomial in θ of
        degree ≤ n0 + n1, so the default, Gauss–Legendre with ⌈(n0 + n1 + 2)/2⌉ nodes
        (:func:`exact_theta_rule`), integrates it exactly. The thesis (§2.4.4) used
        Simpson's rule with 11 points (``simpson_rule(11)``), which errs by 4e-3 to 2e-2 in
        log q at n = 200 — multiplied by p − k in the conditionals of α and the labels.

    Returns
    -------
    ndarray of shape (K,)
        The values log q(α), one per α; −inf where no lattice point is discarded.

    Notes
    -----
    Equals :func:`naive_bayes_log_discard_probability` (to rounding) when z = x_0
    (``n0_label1 = 0, n1_label1 = n1``) and is unchanged by the swap z ↔ 1 − z
    (bit for bit: both orientations are computed the same way). Cost O(n³) for the
    hypergeometric weights plus O(K · n_θ · n²) — see :class:`MixtureAdjustmentCache`
    for repeated calls with the same α grid.
    """
    return (
        MixtureAdjustmentCache(alpha, n0, n1, threshold, strict=strict, theta_rule=theta_rule)
        .log_q(n0_label1, n1_label1)
        .copy()
    )


class MixtureAdjustmentCache:
    """log q(α) of the mixture model for every label configuration, computed on demand.

    For fixed (α grid, n0, n1, γ, strict, θ rule) the adjustment factor depends on the
    labels only through ``(n0_label1, n1_label1)``; a Gibbs update of one label z^(i)
    needs the two keys with that case's label set to 0 and to 1, so each key is
    computed once and stored.

    Parameters
    ----------
    alpha, n0, n1, threshold, strict, theta_rule
        As in :func:`mixture_log_discard_probability`.

    Attributes
    ----------
    alpha : ndarray of shape (K,)
    n_computed : int
        Number of keys computed so far (a key and its label-swapped mirror
        (n0 − n0_label1, n1 − n1_label1) share one computation).

    Examples
    --------
    >>> cache = MixtureAdjustmentCache([2.6, 27.99], 4, 5, 0.3)
    >>> cache.log_q(2, 3).shape
    (2,)
    >>> bool(np.array_equal(cache.log_q(1, 2), cache.log_q(3, 3))), cache.n_computed  # mirror keys
    (True, 2)
    """

    def __init__(self, alpha, n0, n1, threshold, *, strict=False, theta_rule=None):
        self.alpha = _check_alpha(alpha)
        self.alpha.setflags(write=False)
        self.n0, self.n1 = _check_class_sizes(n0, n1)
        self.threshold = check_positive("threshold", threshold, allow_zero=True)
        self.strict = bool(strict)
        self.theta_rule = theta_rule if theta_rule is not None else exact_theta_rule(self.n0 + self.n1)
        self._lo, self._hi = _discarded_intervals(self.n0, self.n1, self.threshold, self.strict)
        self._nothing_discarded = not np.any(self._hi >= self._lo)
        self._log_theta_weights = self.theta_rule.log_weights
        self._alpha_key = tuple(self.alpha.tolist())
        self._theta_key = tuple(self.theta_rule.nodes.tolist())
        self._values = {}
        self._table = None
        self.n_computed = 0

    def _pmf(self, size):
        """Beta-binomial pmf of the number of ones in a group of ``size`` cases, (K, T, size + 1)."""
        return _beta_binomial_pmfs(size, self._alpha_key, self._theta_key)

    def _compute(self, key):
        if self._nothing_discarded:
            value = np.full(self.alpha.shape, -np.inf)
        else:
            n0_label1, n1_label1 = key
            size1 = n0_label1 + n1_label1
            weights = _mixture_discard_weights(self.n0, self.n1, n0_label1, n1_label1, self._lo, self._hi)
            value = _mixture_log_q(
                weights, self._pmf(self.n0 + self.n1 - size1), self._pmf(size1), self._log_theta_weights
            )
        value.setflags(write=False)
        self.n_computed += 1
        return value

    def _compute_batch(self, keys):
        """Keys of one group size n^[1]: one matrix product for all of them (BLAS pays off here)."""
        if self._nothing_discarded:
            for key in keys:
                self._values[key] = self._compute(key)
            return
        size1 = keys[0][0] + keys[0][1]
        pmf0, pmf1 = self._pmf(self.n0 + self.n1 - size1), self._pmf(size1)
        k, t = pmf0.shape[:2]
        weights = np.stack([_mixture_discard_weights(self.n0, self.n1, u, v, self._lo, self._hi) for u, v in keys])
        # (K·T, n^[0]+1) @ (n^[0]+1, keys·(n^[1]+1))
        products = pmf0.reshape(k * t, -1) @ weights.transpose(1, 0, 2).reshape(weights.shape[1], -1)
        inner = (products.reshape(k * t, len(keys), -1) * pmf1.reshape(k * t, 1, -1)).sum(axis=-1)
        with np.errstate(divide="ignore"):
            log_inner = np.log(inner.reshape(k, t, len(keys)))
        values = logsumexp(log_inner + self._log_theta_weights[None, :, None], axis=1)  # (K, keys)
        for key, value in zip(keys, values.T):
            value = value.copy()
            value.setflags(write=False)
            self._values[key] = value
        self.n_computed += len(keys)

    def log_q(self, n0_label1, n1_label1):
        """log q(α) for the label counts (#{z=1, x_0=0}, #{z=1, x_0=1}); read-only array (K,)."""
        n0_label1, n1_label1 = _check_label_counts(self.n0, self.n1, n0_label1, n1_label1)
        key = _canonical_labels(self.n0, self.n1, n0_label1, n1_label1)
        value = self._values.get(key)
        if value is None:
            value = self._values[key] = self._compute(key)
        return value

    def table(self):
        """The values computed so far: {(n0_label1, n1_label1): log q}, both mirror keys listed."""
        out = {}
        for (u, v), value in self._values.items():
            out[(u, v)] = value
            out[(self.n0 - u, self.n1 - v)] = value
        return out

    def precompute_all(self):
        """Fill and return the whole table, a read-only float64 array (n0 + 1, n1 + 1, K).

        ``table[u, v]`` is log q for n0_label1 = u, n1_label1 = v. Keys already computed
        are reused; each mirror pair is computed once.
        """
        if self._table is None:
            n = self.n0 + self.n1
            for size1 in range(n + 1):  # keys of one group size share the Beta-binomial tables
                keys = [
                    key
                    for u in range(max(0, size1 - self.n1), min(self.n0, size1) + 1)
                    if (key := (u, size1 - u)) == _canonical_labels(self.n0, self.n1, *key) and key not in self._values
                ]
                # chunks of at most ~4e6 weights in memory
                chunk = max(1, 4_000_000 // ((n - size1 + 1) * (size1 + 1)))
                for start in range(0, len(keys), chunk):
                    self._compute_batch(keys[start : start + chunk])
            table = np.empty((self.n0 + 1, self.n1 + 1, self.alpha.size))
            for (u, v), value in self.table().items():
                table[u, v] = value
            table.setflags(write=False)
            self._table = table
        return self._table
