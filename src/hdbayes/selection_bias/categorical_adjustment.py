"""The adjustment factor a(α) for G classes and features with L levels (docs/categorical_correction.md).

An unselected feature's G × L table of class by level has, given α and its base distribution θ, independent
rows T_g ~ Dirichlet-multinomial(N_g, αθ) (eq. C9); θ is uniform on the simplex. The adjustment factor

    a(α) = ∫_Δ Σ_{T : X²(T) discarded} Π_g DM(T_g | N_g, αθ) (L − 1)! dθ        (eq. C10)

is the probability that such a feature fails the Pearson X² filter. The discarded region does not depend on
(θ, α): it is enumerated once (:func:`discarded_runs`) as runs of consecutive compositions of the last class
for each combination of the other classes' rows, and each (θ, α) node costs one pass over the runs with
cumulative sums of the last class's pmf (eq. C12). For binary features (L = 2) each combination has one run,
so the cost is Π_{g<G}(N_g + 1) per node. θ is integrated by a product Gauss–Jacobi rule in collapsed
coordinates (:func:`simplex_rule`, eq. C11), exact with :func:`exact_simplex_points` nodes per dimension;
for L = 2 it is the binary model's Gauss–Legendre rule. X² is symmetric in the levels, so the discarded region
is invariant under every permutation σ of the levels and the integrand of eq. C10 is symmetric in θ: the rule
is folded onto the fundamental domain θ_0 ≤ … ≤ θ_{L−1} (eq. C11a), nodes that are images of each other merged
with their weights added (:func:`symmetric_simplex_rule`; for L = 2 the half θ ≤ ½). The product rule's only
level symmetry is θ_0 ↔ θ_{L−1} (its last factor is Gauss–Legendre), so the folding halves its nodes and the
rule stays exact.

Pearson's X² (eq. C7) is computed by one compiled function, :func:`pearson_chi_square`, for the features
(the selection) and for the tables of the discarded region, so a table with the counts of the k-th feature
is classified exactly as the selection classified it. It adds the levels' contributions in increasing order,
so that a table and its column permutations get the same X² to the last bit and the region is exactly
invariant, as the folding requires.
"""

from __future__ import annotations

from functools import lru_cache
from math import comb, factorial
from typing import TYPE_CHECKING

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree
from scipy.special import gammaln, logsumexp, roots_jacobi

from hdbayes._numba import jit
from hdbayes._threads import map_in_threads, threads_for
from hdbayes._validation import check_count
from hdbayes.exceptions import InputValueError
from hdbayes.quadrature import QuadratureRule, gauss_legendre_rule
from hdbayes.selection import THRESHOLD_RTOL, _chi_square_table, pearson_chi_square
from hdbayes.selection_bias.adjustment import _beta_binomial_scaled, exact_points, half_rule

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import ArrayLike

__all__ = [
    "DiscardedRegion",
    "SimplexRule",
    "categorical_log_discard_probability",
    "compositions",
    "discarded_region",
    "discarded_runs",
    "exact_simplex_points",
    "pearson_chi_square",
    "simplex_rule",
    "symmetric_simplex_rule",
]

#: Largest number of tables (Π_g C(N_g + L − 1, L − 1)) whose discarded region is enumerated.
MAX_TABLES = 200_000_000


# ---------------------------------------------------------------------------
# θ on the simplex (eq. C11)
# ---------------------------------------------------------------------------


class SimplexRule(QuadratureRule):
    """A rule on the simplex Δ^{L−1}: ``nodes`` of shape (T, L) (points θ), ``weights`` (T,) summing to one
    (the uniform probability measure, density (L − 1)!)."""


def exact_simplex_points(n):
    """Nodes per dimension that make :func:`simplex_rule` exact for every integrand of a model with n
    training cases (polynomials in θ of degree ≤ n + 1): ⌈(n + 2)/2⌉, the binary model's number."""
    return exact_points(n)


def simplex_rule(n_levels, n_points):
    """Product Gauss–Jacobi rule on Δ^{L−1} in collapsed coordinates (eq. C11), exact for polynomials in θ of
    total degree ≤ 2·``n_points`` − 1.

    θ_1 = u_1, θ_l = Π_{i<l}(1 − u_i) u_l, θ_L = Π_{i<L}(1 − u_i) (levels numbered from 1 here; the returned
    columns are levels 0..L−1 with level 0 = θ_L, so that for L = 2 column 1 is the binary model's θ on the
    Gauss–Legendre nodes); in u_i the Jacobian is (1 − u_i)^{L−1−i}, the weight of the i-th Gauss–Jacobi rule.

    Parameters
    ----------
    n_levels : int
        L ≥ 2.
    n_points : int
        Nodes per dimension (T = n_points^{L−1}).

    Returns
    -------
    SimplexRule
        Cached: the same object (read-only arrays) for the same arguments.
    """
    return _simplex_rule(
        int(check_count("n_levels", n_levels, minimum=2)), int(check_count("n_points", n_points, minimum=1))
    )


@lru_cache(maxsize=16)
def _simplex_rule(n_levels, n_points):
    """:func:`simplex_rule` cached (a fit uses the same rule at every α batch and cross-validation folds share
    it); its arrays are read-only."""
    rule = _build_simplex_rule(n_levels, n_points)
    rule.nodes.setflags(write=False)
    rule.weights.setflags(write=False)
    return rule


def _build_simplex_rule(n_levels, n_points):
    if n_levels == 2:
        rule = gauss_legendre_rule(n_points)
        return SimplexRule(np.stack([1.0 - rule.nodes, rule.nodes], axis=1), rule.weights)
    if n_points ** (n_levels - 1) > 50_000_000:
        raise InputValueError(f"a simplex rule with {n_points}^{n_levels - 1} nodes is too large")
    axes = []
    for i in range(1, n_levels):
        power = n_levels - 1 - i
        x, w = roots_jacobi(n_points, power, 0.0)  # weight (1 − x)^power on [−1, 1]
        axes.append(((x + 1.0) / 2.0, w * 2.0 ** (-power - 1.0)))
    grids = np.meshgrid(*[u for u, _ in axes], indexing="ij")
    weights = np.ones(grids[0].shape)
    for i, (_, w) in enumerate(axes):
        shape = [1] * (n_levels - 1)
        shape[i] = n_points
        weights = weights * w.reshape(shape)
    u = np.stack([g.ravel() for g in grids], axis=1)  # (T, L − 1)
    theta = np.empty((u.shape[0], n_levels))
    remaining = np.ones(u.shape[0])
    for i in range(n_levels - 1):  # collapsed coordinates; level i + 1 gets u_{i+1}
        theta[:, i + 1] = remaining * u[:, i]
        remaining = remaining * (1.0 - u[:, i])
    theta[:, 0] = remaining
    return SimplexRule(theta, weights.ravel() * factorial(n_levels - 1))


#: Nodes of a rule whose images in the fundamental domain are this close (in every coordinate) are merged by
#: :func:`symmetric_simplex_rule`: the images of a node of :func:`simplex_rule` and of its mirror node differ by
#: rounding (≤ 1.1e-16), distinct images by more than 1e-9 (m ≤ 300 nodes per dimension for L = 3, m ≤ 60 for
#: L = 4).
_FOLD_TOLERANCE = 1e-13


def symmetric_simplex_rule(rule):
    """``rule`` folded onto the fundamental domain F = {θ_0 ≤ θ_1 ≤ … ≤ θ_{L−1}} of the permutations of the
    levels (eq. C11a), for integrands symmetric in the levels, such as the adjustment factor's.

    Each node θ_t is replaced by its image in F (its coordinates sorted in increasing order, where a symmetric
    integrand g has the same value), and nodes whose images coincide (to rounding) are merged into one node
    carrying the sum of their weights. Σ_t w_t g(θ_t) is therefore unchanged for every symmetric g (up to
    rounding): the folded rule is exact whenever ``rule`` is, and it has fewer nodes by the order of the group
    of level permutations that map ``rule`` onto itself. For :func:`simplex_rule` with m nodes per dimension
    this group is {identity, θ_0 ↔ θ_{L−1}} (the last collapsed coordinate has a Gauss–Legendre rule, symmetric
    about ½): ⌈m/2⌉ m^{L−2} nodes instead of m^{L−1}. Only a fully symmetric rule is folded L!-fold: a rule on
    F exact for every polynomial of degree d needs as many nodes as one on the whole simplex.

    Any fixed order of the levels would do; the increasing one is where the runs kernel's rounding errors are
    smallest: against 80-bit sums (G = 3; L = 3 and 4; n ≤ 60) the errors in 1 − a(α) with this rule were 2 to
    7 times smaller than with the whole rule, and with the decreasing order about twice the whole rule's.

    Parameters
    ----------
    rule : SimplexRule
        Nodes of shape (T, L), weights (T,).

    Returns
    -------
    SimplexRule
        Nodes in F (each the image of the first node of its group, in the order of those first nodes) and the
        summed weights.
    """
    nodes = np.asarray(rule.nodes, dtype=np.float64)
    weights = np.asarray(rule.weights, dtype=np.float64)
    if nodes.ndim != 2 or weights.shape != (nodes.shape[0],):
        raise InputValueError("rule must have nodes of shape (T, L) and weights of shape (T,)")
    images = np.sort(nodes, axis=1)
    n_nodes = images.shape[0]
    pairs = cKDTree(images).query_pairs(_FOLD_TOLERANCE, p=np.inf, output_type="ndarray")
    graph = coo_matrix((np.ones(pairs.shape[0]), (pairs[:, 0], pairs[:, 1])), shape=(n_nodes, n_nodes))
    n_groups, labels = connected_components(graph, directed=False)
    first = np.full(n_groups, n_nodes)
    np.minimum.at(first, labels, np.arange(n_nodes))
    order = np.argsort(first, kind="stable")  # groups in the order of their first nodes
    rank = np.empty(n_groups, dtype=np.int64)
    rank[order] = np.arange(n_groups)
    folded = np.zeros(n_groups)
    np.add.at(folded, rank[labels], weights)
    return SimplexRule(np.ascontiguousarray(images[first[order]]), folded)


# ---------------------------------------------------------------------------
# The discarded region as runs (eq. C12)
# ---------------------------------------------------------------------------


@lru_cache(maxsize=64)
def compositions(total, n_levels):
    """Every (t_0, …, t_{L−1}) of non-negative integers summing to ``total``, in lexicographic order, as a
    read-only int64 array of shape (C(total + L − 1, L − 1), L). For L = 2 row i is (total − i, i)."""
    if n_levels == 1:
        out = np.array([[total]], dtype=np.int64)
    else:
        parts = []
        for first in range(total, -1, -1):
            rest = compositions(total - first, n_levels - 1)
            parts.append(np.concatenate([np.full((rest.shape[0], 1), first, dtype=np.int64), rest], axis=1))
        out = np.concatenate(parts)
    out.setflags(write=False)
    return out


def _composition_table(sizes, n_levels):
    """Compositions of every class, padded: (G, C_max, L), their numbers (G,) and log multinomial
    coefficients (G, C_max)."""
    comps = [compositions(int(size), n_levels) for size in sizes]
    c_max = max(c.shape[0] for c in comps)
    table = np.zeros((len(comps), c_max, n_levels), dtype=np.int64)
    log_mult = np.zeros((len(comps), c_max))
    for g, c in enumerate(comps):
        table[g, : c.shape[0]] = c
        log_mult[g, : c.shape[0]] = gammaln(sizes[g] + 1.0) - gammaln(c + 1.0).sum(axis=1)
    return table, np.array([c.shape[0] for c in comps], dtype=np.int64), log_mult


@jit
def _enumerate_runs(comps, n_comps, sizes, n, bound, strict, capacity):
    """Runs (prefix rows, start, stop) of the discarded compositions of the last class; returns the number of
    runs, or −1 when ``capacity`` is too small."""
    n_classes, _, n_levels = comps.shape
    last = n_classes - 1
    prefix = np.zeros((capacity, max(last, 1)), dtype=np.int32)
    starts = np.zeros(capacity, dtype=np.int64)
    stops = np.zeros(capacity, dtype=np.int64)
    table = np.zeros((n_classes, n_levels), dtype=np.int64)
    index = np.zeros(max(last, 1), dtype=np.int64)
    parts = np.empty(n_levels)
    n_runs = 0
    while True:
        for g in range(last):
            for level in range(n_levels):
                table[g, level] = comps[g, index[g], level]
        open_run = False
        start = 0
        for c in range(n_comps[last]):
            for level in range(n_levels):
                table[last, level] = comps[last, c, level]
            value = _chi_square_table(table, sizes, n, parts)
            inside = value < bound if strict else value <= bound
            if inside and not open_run:
                open_run = True
                start = c
            elif not inside and open_run:
                open_run = False
                if n_runs >= capacity:
                    return -1, prefix, starts, stops
                for g in range(last):
                    prefix[n_runs, g] = index[g]
                starts[n_runs] = start
                stops[n_runs] = c
                n_runs += 1
        if open_run:
            if n_runs >= capacity:
                return -1, prefix, starts, stops
            for g in range(last):
                prefix[n_runs, g] = index[g]
            starts[n_runs] = start
            stops[n_runs] = n_comps[last]
            n_runs += 1
        # next combination of the first G − 1 rows (odometer, last of them fastest)
        g = last - 1
        while g >= 0:
            index[g] += 1
            if index[g] < n_comps[g]:
                break
            index[g] = 0
            g -= 1
        if g < 0:
            break
    return n_runs, prefix, starts, stops


def _bound(threshold, strict):
    tol = THRESHOLD_RTOL * abs(threshold)
    return threshold - tol if strict else threshold + tol


@lru_cache(maxsize=32)
def discarded_runs(class_sizes, n_levels, threshold, strict):
    """The discarded region {X² < γ} (``strict``) or {X² ≤ γ}, with the tolerance ``THRESHOLD_RTOL`` of the
    selection, as runs of the last class's compositions (eq. C12).

    Parameters
    ----------
    class_sizes : tuple of int
        (N_1, …, N_G), each ≥ 1, G ≥ 2.
    n_levels : int
    threshold : float
        γ ≥ 0.
    strict : bool

    Returns
    -------
    prefix : ndarray of int32, shape (R, G − 1)
        For each run, the composition indices (into :func:`compositions`) of the first G − 1 classes.
    starts, stops : ndarray of int64, shape (R,)
        The run covers compositions start..stop − 1 of the last class.
    """
    sizes = np.asarray(class_sizes, dtype=np.int64)
    n_tables = 1
    for size in class_sizes:
        n_tables *= comb(int(size) + n_levels - 1, n_levels - 1)
    if n_tables > MAX_TABLES:
        raise InputValueError(
            f"the adjustment factor would enumerate {n_tables:.3g} tables (class sizes {list(class_sizes)}, "
            f"{n_levels} levels), more than {MAX_TABLES:.0e}; use fewer levels or correct=False"
        )
    comps, n_comps, _ = _composition_table(sizes, n_levels)
    n_prefix = max(n_tables // int(n_comps[-1]), 1)
    capacity = 2 * n_prefix + 16
    bound = _bound(float(threshold), bool(strict))
    while True:
        count, prefix, starts, stops = _enumerate_runs(
            comps, n_comps, sizes, float(sizes.sum()), bound, bool(strict), capacity
        )
        if count >= 0:
            break
        capacity *= 4
    out = prefix[:count].copy(), starts[:count].copy(), stops[:count].copy()
    for array in out:
        array.setflags(write=False)
    return out


# ---------------------------------------------------------------------------
# The sum over the runs at every (α, θ) node
# ---------------------------------------------------------------------------

#: θ nodes evaluated together: the innermost loops of the kernels run over a block of nodes (contiguous memory,
#: vectorised), so each run or interval of the region is read once per block instead of once per node.
_THETA_BLOCK = 64


@jit
def _run_mass(pmf, cumulative, start, stop, out):
    """out[t] = Σ_{start ≤ c < stop} pmf[c, t] for the θ nodes t of a block (eq. C12): summed directly when the
    run is short (≤ 8 entries: no difference of two large sums), else cumulative[stop, t] − cumulative[start, t]
    with cumulative[c, t] = Σ_{c' < c} pmf[c', t]."""
    width = out.shape[0]
    if stop - start <= 8:
        for t in range(width):
            out[t] = 0.0
        for c in range(start, stop):
            for t in range(width):
                out[t] += pmf[c, t]
    else:
        for t in range(width):
            out[t] = cumulative[stop, t] - cumulative[start, t]


@jit
def _discarded_mass(alpha, theta, comps, n_comps, log_mult, sizes, prefix, starts, stops):
    """inner[m, t] = Σ over the discarded tables of Π_g DM(T_g | N_g, α_m θ_t) (eq. C9, C12), the θ nodes taken
    in blocks of ``_THETA_BLOCK``."""
    n_alpha = alpha.shape[0]
    n_theta, n_levels = theta.shape
    n_classes = comps.shape[0]
    last = n_classes - 1
    n_max = 0
    for g in range(n_classes):
        n_max = max(n_max, sizes[g])
    block = max(min(_THETA_BLOCK, n_theta), 1)
    c_max = comps.shape[1]
    rising = np.zeros((n_levels, n_max + 1, block))
    total_rising = np.zeros(n_max + 1)
    pmf = np.zeros((n_classes, c_max, block))
    cumulative = np.zeros((n_comps[last] + 1, block))
    partial = np.ones((last + 1, block))
    current = np.zeros(last, dtype=np.int64)
    part = np.zeros(block)
    total = np.zeros(block)
    norm = np.zeros(block)
    out = np.zeros((n_alpha, n_theta))
    n_runs = starts.shape[0]
    for m in range(n_alpha):
        total_rising[0] = 0.0
        for i in range(n_max):
            total_rising[i + 1] = total_rising[i] + np.log(alpha[m] + i)
        for first_node in range(0, n_theta, block):
            width = min(block, n_theta - first_node)
            for level in range(n_levels):
                for i in range(n_max):
                    for t in range(width):
                        a = alpha[m] * theta[first_node + t, level]
                        rising[level, i + 1, t] = rising[level, i, t] + np.log(a + i)
            for g in range(n_classes):
                for t in range(width):
                    norm[t] = 0.0
                for c in range(n_comps[g]):
                    for t in range(width):
                        value = log_mult[g, c] - total_rising[sizes[g]]
                        for level in range(n_levels):
                            value += rising[level, comps[g, c, level], t]
                        pmf[g, c, t] = np.exp(value)
                        norm[t] += pmf[g, c, t]
                # the pmf sums to one: dividing by its sum removes the rounding common to all its entries
                # (that of the total rising factorial, ~N log α ulps)
                for c in range(n_comps[g]):
                    for t in range(width):
                        pmf[g, c, t] /= norm[t]
            for t in range(width):
                cumulative[0, t] = 0.0
            for c in range(n_comps[last]):
                for t in range(width):
                    cumulative[c + 1, t] = cumulative[c, t] + pmf[last, c, t]
            for t in range(width):
                total[t] = 0.0
            for g in range(last):
                current[g] = -1
            for r in range(n_runs):
                # partial[g + 1] = Π_{h ≤ g} pmf[h, prefix[r, h]], recomputed from the first row that changed
                changed = last
                for g in range(last):
                    if prefix[r, g] != current[g]:
                        changed = g
                        break
                for g in range(changed, last):
                    current[g] = prefix[r, g]
                    for t in range(width):
                        partial[g + 1, t] = partial[g, t] * pmf[g, current[g], t]
                _run_mass(pmf[last], cumulative, starts[r], stops[r], part[:width])
                for t in range(width):
                    total[t] += partial[last, t] * part[t]
            for t in range(width):
                out[m, first_node + t] = max(total[t], 0.0)
    return out


#: Entries of a class's pmf below this fraction of its largest entry at every node of a θ block are left out of
#: the binary kernel's outer sums; the mass left out is at most Σ_g (N_g + 1) · this (an absolute error in a(α)
#: below 1e-17).
_NEGLIGIBLE = 1e-20


@jit
def _negligible(row, peak, width):
    """Whether row[t] < ``_NEGLIGIBLE`` · peak[t] at every node t of the block."""
    for t in range(width):
        if not row[t] < _NEGLIGIBLE * peak[t]:
            return False
    return True


@jit
def _binary_discarded_mass(alpha, theta, sizes, lo, hi, strides, inner_lo, inner_hi):
    """inner[m, t] for binary features (L = 2): nested loops over the counts of the first G − 1 classes with
    running products, the last class's discarded counts lo[c]..hi[c] − 1 read from its cumulative pmf (the
    one interval of eq. C12); the innermost loop runs only over the counts inner_lo..inner_hi of class G − 1
    that have a discarded interval, and each count's work over a block of ``_THETA_BLOCK`` θ nodes at once.
    Entries of the first G − 1 pmfs below ``_NEGLIGIBLE`` of their largest at every node of the block are
    skipped (their total at each node is returned as a bound)."""
    n_alpha = alpha.shape[0]
    n_theta = theta.shape[0]
    n_classes = sizes.shape[0]
    last = n_classes - 1
    inner_class = last - 1
    n_max = 0
    for g in range(n_classes):
        n_max = max(n_max, sizes[g])
    block = max(min(_THETA_BLOCK, n_theta), 1)
    a = np.zeros(block)
    b = np.zeros(block)
    pmf = np.zeros((n_classes, n_max + 1, block))
    peak = np.zeros(block)
    column = np.zeros(n_max + 1)
    cumulative = np.zeros((sizes[last] + 2, block))
    first = np.zeros(n_classes, dtype=np.int64)
    final = np.zeros(n_classes, dtype=np.int64)
    digits = np.zeros(max(inner_class, 1), dtype=np.int64)
    partial = np.ones((max(inner_class, 1) + 1, block))
    part = np.zeros(block)
    total = np.zeros(block)
    dropped = np.zeros(block)
    out = np.zeros((n_alpha, n_theta))
    left_out = np.zeros((n_alpha, n_theta))
    for m in range(n_alpha):
        for first_node in range(0, n_theta, block):
            width = min(block, n_theta - first_node)
            for t in range(width):
                a[t] = alpha[m] * theta[first_node + t, 1]
                b[t] = alpha[m] * theta[first_node + t, 0]
                dropped[t] = 0.0
            for g in range(n_classes):
                # the Beta-binomial pmf (eq. C9 for L = 2) by ratios outward from its largest entry, normalised
                for t in range(width):
                    entry_lo, entry_hi, mass = _beta_binomial_scaled(sizes[g], a[t], b[t], column)
                    for i in range(sizes[g] + 1):
                        pmf[g, i, t] = column[i] / mass if entry_lo <= i <= entry_hi else 0.0
                    peak[t] = 1.0 / mass  # the recurrence starts at the largest entry, scaled to 1
                first[g], final[g] = 0, sizes[g]
                if g < last:
                    while _negligible(pmf[g, first[g]], peak, width):
                        for t in range(width):
                            dropped[t] += pmf[g, first[g], t]
                        first[g] += 1
                    while _negligible(pmf[g, final[g]], peak, width):
                        for t in range(width):
                            dropped[t] += pmf[g, final[g], t]
                        final[g] -= 1
            for t in range(width):
                cumulative[0, t] = 0.0
            for i in range(sizes[last] + 1):
                for t in range(width):
                    cumulative[i + 1, t] = cumulative[i, t] + pmf[last, i, t]
            for t in range(width):
                total[t] = 0.0
            for g in range(inner_class):
                digits[g] = first[g]
            last_pmf, inner_pmf, base, run = pmf[last], pmf[inner_class], partial[inner_class], part[:width]
            while True:
                offset = 0
                for g in range(inner_class):
                    for t in range(width):
                        partial[g + 1, t] = partial[g, t] * pmf[g, digits[g], t]
                    offset += digits[g] * strides[g]
                row = offset // strides[inner_class - 1] if inner_class > 0 else 0
                for x in range(max(first[inner_class], inner_lo[row]), min(final[inner_class], inner_hi[row]) + 1):
                    c = offset + x * strides[inner_class]
                    if hi[c] <= lo[c]:
                        continue
                    _run_mass(last_pmf, cumulative, lo[c], hi[c], run)
                    for t in range(width):
                        total[t] += base[t] * inner_pmf[x, t] * run[t]
                g = inner_class - 1
                while g >= 0:
                    digits[g] += 1
                    if digits[g] <= final[g]:
                        break
                    digits[g] = first[g]
                    g -= 1
                if g < 0:
                    break
            for t in range(width):
                out[m, first_node + t] = max(total[t], 0.0)
                left_out[m, first_node + t] = dropped[t]
    return out, left_out



@lru_cache(maxsize=32)
def _binary_intervals(class_sizes, threshold, strict):
    """For L = 2: (lo, hi, strides), the discarded counts of the last class for each combination of the
    others' counts (flat index Σ_g x_g · stride_g), or None if some combination has more than one run."""
    prefix, starts, stops = discarded_runs(class_sizes, 2, threshold, strict)
    heads = np.array(class_sizes[:-1], dtype=np.int64) + 1
    strides = np.ones(heads.shape[0], dtype=np.int64)
    for g in range(heads.shape[0] - 2, -1, -1):
        strides[g] = strides[g + 1] * heads[g + 1]
    flat = prefix.astype(np.int64) @ strides
    if np.unique(flat).shape[0] != flat.shape[0]:
        return None  # pragma: no cover - X² is a convex quadratic in the last count (eq. C12): never
    lo = np.zeros(int(np.prod(heads)), dtype=np.int64)
    hi = np.zeros(int(np.prod(heads)), dtype=np.int64)
    lo[flat], hi[flat] = starts, stops
    nonempty = (hi > lo).reshape(-1, heads[-1])  # rows: the counts of classes 1..G − 2; columns: class G − 1's
    inner_lo = np.where(nonempty.any(axis=1), nonempty.argmax(axis=1), heads[-1])
    inner_hi = np.where(nonempty.any(axis=1), heads[-1] - 1 - nonempty[:, ::-1].argmax(axis=1), -1)
    return lo, hi, strides, inner_lo.astype(np.int64), inner_hi.astype(np.int64)


def _check_class_sizes(class_sizes):
    sizes = tuple(int(check_count("class size", size, minimum=1)) for size in np.atleast_1d(class_sizes).tolist())
    if len(sizes) < 2:
        raise InputValueError(f"the adjustment factor needs at least two classes, got class sizes {list(sizes)}")
    return sizes


def categorical_log_discard_probability(
        alpha: ArrayLike, class_sizes: Sequence[int], threshold: float, *, n_levels: int = 2, strict: bool = False,
        theta_rule: SimplexRule | None = None) -> np.ndarray:  # fmt: skip
    """log a(α) (eq. C10): the log probability that a feature drawn from the prior fails the X² filter.

    Parameters
    ----------
    alpha : array_like of shape (K,)
        Values of α > 0.
    class_sizes : sequence of int
        N_1..N_G (each ≥ 1, G ≥ 2).
    threshold : float
        γ ≥ 0, on Pearson's X².
    n_levels : int, default=2
        L ≥ 2.
    strict : bool, default=False
        Discarded means X² < γ (True) or X² ≤ γ (False).
    theta_rule : SimplexRule, optional
        Default :func:`simplex_rule` with :func:`exact_simplex_points` (n) nodes per dimension: exact (given
        α the integrand is a polynomial of degree ≤ n in θ). A rule on the whole simplex; it is folded onto
        the fundamental domain of the level permutations (:class:`DiscardedRegion`, eq. C11a).

    Returns
    -------
    ndarray of shape (K,)
        The values log a(α), one per α; −inf where no table is discarded.

    Notes
    -----
    For G = L = 2, a(α) is the binary model's q(α) (:func:`~hdbayes.selection_bias.adjustment.
    naive_bayes_log_discard_probability` with γ_COR = sqrt(γ/n)). Cost: the runs once (Π_g C(N_g + L − 1,
    L − 1) X² values), then O(#runs + Σ_g C(N_g + L − 1, L − 1)) per (α, θ) node; #runs = Π_{g<G}(N_g + 1)
    at most for L = 2.
    """
    alpha = np.atleast_1d(np.asarray(alpha, dtype=np.float64))
    if alpha.ndim != 1 or np.any(~np.isfinite(alpha)) or np.any(alpha <= 0):
        raise InputValueError("alpha must be a 1-D array of finite values > 0")
    sizes = _check_class_sizes(class_sizes)
    n_levels = check_count("n_levels", n_levels, minimum=2)
    threshold = float(threshold)
    if not np.isfinite(threshold) or threshold < 0:
        raise InputValueError(f"threshold must be a finite number >= 0, got {threshold:g}")
    if theta_rule is None:
        region = discarded_region(sizes, n_levels, threshold, bool(strict))
    else:
        if theta_rule.nodes.ndim != 2 or theta_rule.nodes.shape[1] != n_levels:
            raise InputValueError(f"theta_rule must have nodes of shape (T, {n_levels})")
        region = DiscardedRegion(sizes, n_levels, threshold, bool(strict), theta_rule)
    return region.log_probability(alpha)


#: Batches with fewer (α, θ node, interval or run) steps than this (a few milliseconds) run in the calling thread.
_THREADING_FROM = 4_000_000


class DiscardedRegion:
    """The discarded region of one selection with its θ rule, ready to give log a(α) (eq. C10) at any α.

    Everything that does not depend on α is done once here: the runs of the region (:func:`discarded_runs`;
    for L = 2 its intervals), the compositions and their multinomial coefficients, the θ rule. X² and hence the
    region are invariant under every permutation of the levels, so the integrand of a(α) is symmetric in θ and
    the rule is folded onto a fundamental domain of the permutations (eq. C11a): for L = 2 its half θ ≤ ½
    (θ = θ_1) when it is symmetric (:func:`~hdbayes.selection_bias.adjustment.half_rule`), for L ≥ 3
    :func:`symmetric_simplex_rule` onto θ_0 ≤ θ_1 ≤ … ≤ θ_{L−1} (half the nodes of :func:`simplex_rule`; the
    same a(α) to rounding). A fit evaluates a(α) at several batches of α points (the adaptive α rule), and
    leave-one-out folds with the same class sizes and threshold share one region (:func:`discarded_region`).

    Parameters
    ----------
    class_sizes : tuple of int
        N_1..N_G (checked by the caller: each ≥ 1, G ≥ 2).
    n_levels : int
    threshold : float
    strict : bool
    theta_rule : SimplexRule
        Nodes of shape (T, ``n_levels``), on the whole simplex (folded here).
    """

    def __init__(self, class_sizes, n_levels, threshold, strict, theta_rule):
        self.class_sizes = tuple(int(size) for size in class_sizes)
        self.n_levels = int(n_levels)
        sizes = np.asarray(self.class_sizes, dtype=np.int64)
        self._sizes = sizes
        prefix, starts, stops = discarded_runs(self.class_sizes, self.n_levels, float(threshold), bool(strict))
        self.empty = starts.shape[0] == 0
        nodes, log_weights = np.ascontiguousarray(theta_rule.nodes, dtype=np.float64), theta_rule.log_weights
        self._intervals = None
        if self.n_levels == 2:
            self._intervals = _binary_intervals(self.class_sizes, float(threshold), bool(strict))
        if self._intervals is not None:
            theta, half_log_weights = half_rule(nodes[:, 1], log_weights)
            if theta is not None:  # X² is unchanged by swapping the two levels: the integrand is symmetric in θ
                nodes, log_weights = np.ascontiguousarray(np.column_stack([1.0 - theta, theta])), half_log_weights
            inner_lo, inner_hi = self._intervals[3:]
            self._work_per_node = int(np.maximum(inner_hi - inner_lo + 1, 0).sum()) + int(sizes.sum())
        else:
            if self.n_levels > 2:  # the region is invariant under permutations of the levels (eq. C11a)
                folded = symmetric_simplex_rule(theta_rule)
                nodes, log_weights = np.ascontiguousarray(folded.nodes), folded.log_weights
            self._comps, self._n_comps, self._log_mult = _composition_table(sizes, self.n_levels)
            self._runs = prefix, starts, stops
            self._work_per_node = starts.shape[0] + int(self._n_comps.sum())
        self._nodes, self._log_weights = nodes, log_weights

    def discarded_mass(self, alpha):
        """inner[m, t]: the probability of the region given α_m and the t-th θ node of the folded rule (eq.
        C11a), shape (K, T). Large batches are split over the α values into threads (the kernels release the
        GIL; every row is computed on its own, so the result does not depend on the split)."""
        alpha = np.ascontiguousarray(alpha, dtype=np.float64)
        n_threads = threads_for(alpha.shape[0], alpha.shape[0] * self._nodes.shape[0] * self._work_per_node,
                                _THREADING_FROM)  # fmt: skip
        if n_threads < 2:
            return self._kernel(alpha)
        return np.concatenate(map_in_threads(self._kernel, np.array_split(alpha, n_threads)))

    def _kernel(self, alpha):
        alpha = np.ascontiguousarray(alpha)
        if self._intervals is not None:
            inner, _ = _binary_discarded_mass(alpha, self._nodes, self._sizes, *self._intervals)
            return inner
        return _discarded_mass(
            alpha, self._nodes, self._comps, self._n_comps, self._log_mult, self._sizes, *self._runs
        )

    def log_probability(self, alpha):
        """log a(α) at the α values (finite, > 0; not checked here); −inf where no table is discarded."""
        alpha = np.atleast_1d(np.asarray(alpha, dtype=np.float64))
        if self.empty:
            return np.full(alpha.shape, -np.inf)
        with np.errstate(divide="ignore"):
            return logsumexp(np.log(self.discarded_mass(alpha)) + self._log_weights[None, :], axis=1)


@lru_cache(maxsize=8)
def discarded_region(class_sizes, n_levels, threshold, strict, n_points=None):
    """The :class:`DiscardedRegion` with the simplex rule of ``n_points`` nodes per dimension (default exact,
    :func:`exact_simplex_points` (n)), cached by its arguments (hashable: class sizes a tuple of int)."""
    if n_points is None:
        n_points = exact_simplex_points(sum(class_sizes))
    return DiscardedRegion(class_sizes, n_levels, threshold, strict, simplex_rule(n_levels, n_points))
