"""The symmetry of the adjustment factor in the levels (docs/categorical_correction.md, eq. C11a): X² is the same
for every order of the levels to the last bit, and the θ rule folded onto θ_0 ≤ … ≤ θ_{L−1} gives the whole
rule's a(α) with half its nodes."""

import itertools
from math import factorial

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import logsumexp
from test_categorical_adjustment import ALPHA, _dirichlet_moments, _gap_thresholds, _oracle_log_a

from hdbayes.exceptions import InputValueError
from hdbayes.selection import THRESHOLD_RTOL
from hdbayes.selection_bias.categorical_adjustment import (
    DiscardedRegion,
    SimplexRule,
    _composition_table,
    _discarded_mass,
    categorical_log_discard_probability,
    compositions,
    discarded_runs,
    exact_simplex_points,
    pearson_chi_square,
    simplex_rule,
    symmetric_simplex_rule,
)


def _random_tables(rng, n_classes, n_levels, n_tables):
    """Tables of class sizes 1..24 with unequal level probabilities, some levels absent."""
    sizes = rng.integers(1, 25, size=n_classes)
    probs = rng.dirichlet(np.full(n_levels, 0.7), size=n_classes)
    if rng.random() < 0.3:  # a level that never occurs: its column is left out of X²
        probs[:, rng.integers(n_levels)] = 0.0
        probs /= probs.sum(axis=1, keepdims=True)
    tables = np.stack([rng.multinomial(size, p, size=n_tables) for size, p in zip(sizes, probs)], axis=1)
    return tables, sizes


def _all_tables(sizes, n_levels):
    """Every table with the class sizes, shape (R, G, L)."""
    comps = [compositions(size, n_levels) for size in sizes]
    index = np.stack(np.meshgrid(*[np.arange(c.shape[0]) for c in comps], indexing="ij"), axis=-1)
    index = index.reshape(-1, len(sizes))
    return np.stack([comps[g][index[:, g]] for g in range(len(sizes))], axis=1)


def _whole_rule_log_a(alpha, sizes, n_levels, gamma, strict):
    """log a(α) with the unfolded exact rule: the runs kernel on all of :func:`simplex_rule`'s nodes."""
    rule = simplex_rule(n_levels, exact_simplex_points(sum(sizes)))
    comps, n_comps, log_mult = _composition_table(np.array(sizes), n_levels)
    inner = _discarded_mass(alpha, rule.nodes, comps, n_comps, log_mult, np.array(sizes, dtype=np.int64),
                            *discarded_runs(tuple(sizes), n_levels, gamma, strict))  # fmt: skip
    with np.errstate(divide="ignore"):
        return logsumexp(np.log(inner) + rule.log_weights[None, :], axis=1)


# ---------------------------------------------------------------------------
# X² is canonical in the order of the levels
# ---------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.integers(2, 4), st.integers(3, 4), st.integers(0, 2**32 - 1))
def test_chi_square_is_the_same_to_the_last_bit_for_every_order_of_the_levels(n_classes, n_levels, seed):
    tables, sizes = _random_tables(np.random.default_rng(seed), n_classes, n_levels, 40)
    values = pearson_chi_square(tables, sizes)
    for perm in itertools.permutations(range(n_levels)):
        np.testing.assert_array_equal(pearson_chi_square(tables[:, :, list(perm)], sizes), values)


def test_an_empty_class_is_refused():
    """The compiled X² does not check its divisors (E_gl > 0 needs every N_g ≥ 1): the caller does."""
    with pytest.raises(InputValueError, match="class_sizes"):
        pearson_chi_square([[[1, 2, 0], [0, 0, 0]]], [3, 0])


def test_a_sum_in_column_order_would_not_be_canonical():
    """The same cell terms summed in column order (the former X²) differ in the last bit between orders of the
    levels for some tables, so a table and its permutation could fall on either side of the bound; the
    canonical X² does not, and agrees with the column-order sum to rounding."""
    rng = np.random.default_rng(11)
    n_differing = 0
    for n_classes, n_levels in itertools.product((2, 3, 4), (3, 4)):
        tables, sizes = _random_tables(rng, n_classes, n_levels, 2000)
        n = sizes.sum()
        columns = tables.sum(axis=1, keepdims=True)
        expected = sizes[None, :, None] * (columns / n)
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(columns > 0, (tables - expected) ** 2 / expected, 0.0)
        canonical = pearson_chi_square(tables, sizes)
        orders = []
        for perm in itertools.permutations(range(n_levels)):
            cells = terms[:, :, list(perm)].transpose(0, 2, 1).reshape(tables.shape[0], -1)
            orders.append(np.cumsum(cells, axis=1)[:, -1])  # sequential: level by level, class by class
            np.testing.assert_allclose(orders[-1], canonical, rtol=1e-14, atol=1e-14)
        n_differing += int((np.ptp(orders, axis=0) > 0).sum())
    assert n_differing > 100


# ---------------------------------------------------------------------------
# The folded rule (eq. C11a)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("n_levels,n_points", [(3, 4), (3, 5), (4, 3), (4, 4)])
def test_the_folded_rule_integrates_symmetric_polynomials_exactly(n_levels, n_points):
    rule = simplex_rule(n_levels, n_points)
    folded = symmetric_simplex_rule(rule)
    degree = 2 * n_points - 1
    assert folded.weights.sum() == pytest.approx(1.0, abs=1e-15)
    assert np.allclose(folded.nodes.sum(axis=1), 1.0) and (np.diff(folded.nodes, axis=1) >= 0).all()
    moments = _dirichlet_moments(degree, n_levels)
    for powers in itertools.combinations_with_replacement(range(degree + 1), n_levels):
        if sum(powers) > degree:
            continue
        orbit = set(itertools.permutations(powers))  # the monomial symmetric polynomial of these powers
        exact = sum(moments[p] for p in orbit)
        value = folded.weights @ sum(np.prod(folded.nodes ** np.array(p), axis=1) for p in orbit)
        assert value == pytest.approx(exact, rel=1e-12), powers
    high = (degree + 1,) + (0,) * (n_levels - 1)  # beyond the rule's degree: not exact
    orbit = set(itertools.permutations(high))
    value = folded.weights @ sum(np.prod(folded.nodes ** np.array(p), axis=1) for p in orbit)
    assert abs(value - sum(_dirichlet_moments(degree + 1, n_levels)[p] for p in orbit)) > 1e-10


def test_a_fully_symmetric_rule_is_folded_by_l_factorial():
    """The folding merges whole orbits: a rule made of L! permutations of each node gives one node per orbit."""
    n_levels = 4
    base = symmetric_simplex_rule(simplex_rule(n_levels, 4))  # 4 nodes per dimension: no θ_l equal
    assert (np.diff(base.nodes, axis=1) > 1e-6).all()
    perms = [list(p) for p in itertools.permutations(range(n_levels))]
    rng = np.random.default_rng(0)
    order = rng.permutation(base.nodes.shape[0] * len(perms))
    symmetric = SimplexRule(np.concatenate([base.nodes[:, p] for p in perms])[order],
                            np.tile(base.weights / len(perms), len(perms))[order])  # fmt: skip
    folded = symmetric_simplex_rule(symmetric)
    assert folded.nodes.shape[0] * factorial(n_levels) == symmetric.nodes.shape[0]
    key = np.lexsort(folded.nodes.T[::-1])
    base_key = np.lexsort(base.nodes.T[::-1])
    np.testing.assert_allclose(folded.nodes[key], base.nodes[base_key], rtol=0, atol=1e-15)
    np.testing.assert_allclose(folded.weights[key], base.weights[base_key], rtol=1e-14)


@pytest.mark.parametrize("n_levels,n_points", [(3, 4), (3, 5), (3, 31), (4, 4), (4, 5), (5, 3)])
def test_the_region_evaluates_half_the_nodes_of_the_product_rule(n_levels, n_points):
    """The product rule's only level symmetry is θ_0 ↔ θ_{L−1}: folded, ⌈m/2⌉ m^{L−2} of its m^{L−1} nodes are
    evaluated (fails if the folding is lost)."""
    rule = simplex_rule(n_levels, n_points)
    assert rule.nodes.shape[0] == n_points ** (n_levels - 1)
    region = DiscardedRegion((3, 2, 3), n_levels, 2.0, False, rule)
    evaluated = region.discarded_mass(np.array([0.5, 4.0])).shape[1]
    assert evaluated == -(-n_points // 2) * n_points ** (n_levels - 2)
    assert symmetric_simplex_rule(rule).nodes.shape[0] == evaluated


def _thresholds(sizes, n_levels):
    """Gap thresholds (no table near γ) and, last, a table's own X² carrying mass (γ on the lattice)."""
    values = np.unique(pearson_chi_square(_all_tables(sizes, n_levels), sizes))
    middles = (values[:-1] + values[1:]) / 2.0
    return [*middles[[len(middles) // 5, len(middles) // 2]], float(values[len(values) // 3])]


@pytest.mark.parametrize("sizes,n_levels", [
    ((7, 5, 9), 3), ((9, 6), 3), ((3, 4, 2, 3), 3), ((12, 12, 12), 3), ((5, 4, 6), 4), ((6, 6, 6), 4),
])  # fmt: skip
def test_the_folded_rule_gives_the_whole_rule_s_factor(sizes, n_levels):
    """log a(α) of the region (folded rule) against the whole exact rule: within 1e-12 in log a (relative in a)
    and relative in 1 − a, strict and not, on gap thresholds and on a table's own X² (where the convention
    matters). Where 1 − a is small the whole rule's own rounding (~1e-14 in a, 3e-12 relative in 1 − a = 3e-3
    at (12, 12, 12)) is the larger: 1e-14 absolute in 1 − a is allowed too, and the folded rule's accuracy there
    is checked against 80-bit sums below."""
    for k, gamma in enumerate(_thresholds(sizes, n_levels)):
        results = {}
        for strict in (False, True):
            folded = categorical_log_discard_probability(ALPHA, sizes, gamma, n_levels=n_levels, strict=strict)
            whole = _whole_rule_log_a(ALPHA, sizes, n_levels, gamma, strict)
            assert np.isfinite(whole).all()
            np.testing.assert_allclose(folded, whole, rtol=0, atol=1e-12)
            np.testing.assert_allclose(-np.expm1(folded), -np.expm1(whole), rtol=1e-12, atol=1e-14)
            results[strict] = folded
        if k == 2:  # γ is a table's X²: the tables at γ are discarded only when not strict
            assert (results[False] >= results[True]).all() and (results[False] - results[True]).max() > 1e-5


@pytest.mark.parametrize("sizes,n_levels", [((3, 4, 5), 3), ((5, 7), 3), ((2, 3, 4), 3), ((2, 2, 3), 4), ((3, 4), 4)])
def test_the_folded_rule_matches_the_enumeration_oracle(sizes, n_levels):
    """Against every table with the θ integral done symbolically (test_categorical_adjustment's oracle), on gap
    thresholds and at a table's own X² with either convention (the oracle classifies with the selection's
    tolerance)."""
    alpha = ALPHA[[0, 2, 3, 5]]
    own = _thresholds(sizes, n_levels)[-1]
    cases = [(gamma, True) for gamma in _gap_thresholds(sizes, n_levels)[:2]] + [(own, True), (own, False)]
    tol = THRESHOLD_RTOL * own
    for gamma, strict in cases:
        if strict:
            oracle = _oracle_log_a(alpha, sizes, n_levels, lambda x, g=gamma: x < g - THRESHOLD_RTOL * g)
        else:
            oracle = _oracle_log_a(alpha, sizes, n_levels, lambda x: x <= own + tol)
        ours = categorical_log_discard_probability(alpha, sizes, gamma, n_levels=n_levels, strict=strict)
        np.testing.assert_allclose(ours, oracle, rtol=0, atol=1e-12)
        np.testing.assert_allclose(-np.expm1(ours), -np.expm1(oracle), rtol=1e-12, atol=0)


def _long_double_a(alpha, nodes, weights, sizes, n_levels, gamma, strict):
    """a(α) in 80-bit arithmetic from the runs: Dirichlet–multinomial pmfs as products of rising factorials (no
    logs), the runs' masses as differences of cumulative sums, the θ rule's nodes and weights as given."""
    ld = np.longdouble
    prefix, starts, stops = discarded_runs(tuple(sizes), n_levels, gamma, strict)
    theta = (ld(alpha) * nodes.astype(ld)).T  # (L, T)
    pmfs = []
    for size in sizes:
        comps = compositions(size, n_levels)
        rising = np.ones((n_levels, size + 1, theta.shape[1]), dtype=ld)  # (αθ_l)_k
        for k in range(size):
            rising[:, k + 1] = rising[:, k] * (theta + k)
        total = np.prod(ld(alpha) + np.arange(size, dtype=ld))
        coefficients = np.array([factorial(size) // np.prod([factorial(int(c)) for c in row]) for row in comps])
        pmf = coefficients.astype(ld)[:, None] / total
        for level in range(n_levels):
            pmf = pmf * rising[level, comps[:, level]]
        pmfs.append(pmf)  # (C_g, T)
    cumulative = np.concatenate([np.zeros((1, theta.shape[1]), dtype=ld), np.cumsum(pmfs[-1], axis=0)])
    head = np.ones((prefix.shape[0], theta.shape[1]), dtype=ld)
    for g in range(len(sizes) - 1):
        head = head * pmfs[g][prefix[:, g]]
    inner = (head * (cumulative[stops] - cumulative[starts])).sum(axis=0)
    return (inner * weights.astype(ld)).sum()


@pytest.mark.skipif(np.finfo(np.longdouble).eps > 1e-18, reason="needs an 80-bit long double")
def test_the_folded_rule_is_accurate_where_one_minus_a_is_small():
    """At (12, 12, 12), L = 3 and a γ with 1 − a(α) ≈ 3e-3 the folded rule's 1 − a is within 1e-12 (relative)
    of 80-bit sums; in 80-bit arithmetic the folded and the whole rules agree to 1e-13 (the folding is exact)."""
    sizes, n_levels = (12, 12, 12), 3
    gamma = _thresholds(sizes, n_levels)[1]
    whole = simplex_rule(n_levels, exact_simplex_points(sum(sizes)))
    folded = symmetric_simplex_rule(whole)
    alpha = np.array([400.0, 1e5])
    ours = categorical_log_discard_probability(alpha, sizes, gamma, n_levels=n_levels)
    for k, a in enumerate(alpha):
        reference = _long_double_a(a, folded.nodes, folded.weights, sizes, n_levels, gamma, False)
        unfolded = _long_double_a(a, whole.nodes, whole.weights, sizes, n_levels, gamma, False)
        assert 1e-3 < 1 - reference < 1e-2
        assert abs(float((unfolded - reference) / (1 - reference))) < 1e-13
        assert abs(float((np.exp(np.longdouble(ours[k])) - reference) / (1 - reference))) < 1e-12
