"""The adjustment factor for G classes and L levels against exact oracles (docs/categorical_correction.md)."""

import itertools

import numpy as np
import pytest
from scipy.special import gammaln
from scipy.stats import chi2_contingency

from hdbayes.exceptions import InputValueError
from hdbayes.selection import correlation_from_sums
from hdbayes.selection_bias.adjustment import naive_bayes_log_discard_probability
from hdbayes.selection_bias.categorical_adjustment import (
    categorical_log_discard_probability,
    compositions,
    discarded_runs,
    pearson_chi_square,
    simplex_rule,
)

ALPHA = np.array([0.05, 0.7, 3.0, 25.0, 400.0, 1e5])


# ---------------------------------------------------------------------------
# The oracle: every table, the θ integral done symbolically (no quadrature)
# ---------------------------------------------------------------------------


def _rising_polynomial(alpha, counts):
    """Coefficients (increasing powers of θ) of Π_{c in counts} (αθ)_c = Π_c Π_{i<c} (αθ + i)."""
    poly = np.array([1.0])
    for c in counts:
        for i in range(c):
            poly = np.convolve(poly, [float(i), alpha])
    return poly


def _dirichlet_moments(max_degree, n_levels):
    """E[Π_l θ_l^{a_l}] under the uniform distribution on the simplex: (L−1)! Π a_l! / (Σ a + L − 1)!."""
    a = np.arange(max_degree + 1)
    grids = np.meshgrid(*([a] * n_levels), indexing="ij")
    total = sum(grids)
    log_moment = gammaln(n_levels) + sum(gammaln(g + 1.0) for g in grids) - gammaln(total + n_levels)
    return np.exp(log_moment)


def _oracle_chi_square(table):
    """X² (eq. C7) written independently: the levels that occur, numpy's sums."""
    table = np.asarray(table, dtype=float)
    rows, columns = table.sum(axis=1), table.sum(axis=0)
    keep = columns > 0
    expected = np.outer(rows, columns[keep]) / table.sum()
    return float((((table[:, keep] - expected) ** 2) / expected).sum())


def _all_tables(sizes, n_levels):
    rows = [[tuple(c) for c in itertools.product(range(size + 1), repeat=n_levels) if sum(c) == size]
            for size in sizes]  # fmt: skip
    return [np.array(t) for t in itertools.product(*rows)]


def _oracle_log_a(alpha, sizes, n_levels, discarded):
    """log a(α) by enumeration of all tables, the θ integral exact (expanded rising factorials and Dirichlet
    moments): every term is positive, no quadrature and no cancellation."""
    n = sum(sizes)
    moments = _dirichlet_moments(n, n_levels)
    out = []
    for a in alpha:
        total = 0.0
        for table in _all_tables(sizes, n_levels):
            if not discarded(_oracle_chi_square(table)):
                continue
            polys = [_rising_polynomial(a, table[:, level]) for level in range(n_levels)]
            expectation = polys[0]
            for poly in polys[1:]:
                expectation = np.multiply.outer(expectation, poly)
            index = tuple(slice(0, d) for d in expectation.shape)
            expected = float((expectation * moments[index]).sum())
            log_norm = sum(
                gammaln(size + 1.0) - gammaln(table[g] + 1.0).sum() - np.log(a + np.arange(size)).sum()
                for g, size in enumerate(sizes)
            )
            total += expected * np.exp(log_norm)
        out.append(np.log(total))
    return np.array(out)


def _gap_thresholds(sizes, n_levels):
    """γ values halfway between consecutive distinct X² values of the tables (no table near the boundary)."""
    values = np.unique(np.round([_oracle_chi_square(t) for t in _all_tables(sizes, n_levels)], 9))
    middles = (values[:-1] + values[1:]) / 2.0
    return middles[[len(middles) // 4, len(middles) // 2, (3 * len(middles)) // 4]]


# ---------------------------------------------------------------------------


@pytest.mark.parametrize("n_levels", [3, 4])
def test_simplex_rule_integrates_monomials_exactly(n_levels):
    rule = simplex_rule(n_levels, 4)  # exact to total degree 7
    assert rule.weights.sum() == pytest.approx(1.0, abs=1e-15)
    assert np.allclose(rule.nodes.sum(axis=1), 1.0) and (rule.nodes > 0).all()
    moments = _dirichlet_moments(7, n_levels)
    for powers in itertools.product(range(8), repeat=n_levels):
        if sum(powers) <= 7:
            value = rule.weights @ np.prod(rule.nodes ** np.array(powers), axis=1)
            assert value == pytest.approx(moments[powers], rel=1e-12), powers
    high = _dirichlet_moments(8, n_levels)[(8,) + (0,) * (n_levels - 1)]  # degree 8 is beyond the rule
    assert abs(rule.weights @ rule.nodes[:, 0] ** 8 - high) > 1e-8


def test_chi_square_is_n_cor_squared_for_two_by_two_and_pearson_otherwise():
    n0, n1 = 7, 9
    for i0, i1 in itertools.product(range(n0 + 1), range(n1 + 1)):
        table = [[n0 - i0, i0], [n1 - i1, i1]]
        m = i0 + i1
        cor = correlation_from_sums(i1, m, m, n0 + n1, n1)
        assert pearson_chi_square([table], [n0, n1])[0] == pytest.approx((n0 + n1) * cor**2, rel=1e-12, abs=1e-13)
    rng = np.random.default_rng(0)
    for _ in range(20):
        table = rng.integers(1, 9, size=(4, 3))
        expected = chi2_contingency(table, correction=False).statistic
        assert pearson_chi_square(table[None], table.sum(axis=1))[0] == pytest.approx(expected, rel=1e-12)
    constant = np.array([[[0, 5, 0], [0, 3, 0]]])
    assert pearson_chi_square(constant, [5, 3])[0] == 0.0


def test_compositions_are_every_row_in_lexicographic_order():
    comps = compositions(5, 3)
    assert comps.shape == (21, 3) and (comps.sum(axis=1) == 5).all()
    assert [tuple(c) for c in comps] == sorted((tuple(c) for c in comps), reverse=True)
    np.testing.assert_array_equal(compositions(4, 2)[:, 1], np.arange(5))  # L = 2: row i has i at level 1


@pytest.mark.parametrize("sizes", [(3, 4), (2, 3, 4), (3, 3, 4), (2, 2, 3, 3), (3, 3, 3, 3)])
def test_binary_features_many_classes_match_the_oracle(sizes):
    for gamma in _gap_thresholds(sizes, 2):
        oracle = _oracle_log_a(ALPHA, sizes, 2, lambda x, g=gamma: x < g)
        for strict in (False, True):
            ours = categorical_log_discard_probability(ALPHA, sizes, gamma, strict=strict)
            np.testing.assert_allclose(np.exp(ours), np.exp(oracle), rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(ours, oracle, rtol=0, atol=1e-12)


@pytest.mark.parametrize("sizes,n_levels", [((3, 4), 3), ((2, 3, 3), 3), ((2, 2, 2), 3), ((2, 3), 4)])
def test_categorical_features_match_the_oracle(sizes, n_levels):
    for gamma in _gap_thresholds(sizes, n_levels):
        oracle = _oracle_log_a(ALPHA[:4], sizes, n_levels, lambda x, g=gamma: x < g)
        ours = categorical_log_discard_probability(ALPHA[:4], sizes, gamma, n_levels=n_levels)
        np.testing.assert_allclose(ours, oracle, rtol=0, atol=1e-12)


def test_the_boundary_convention_counts_tables_at_gamma_only_when_not_strict():
    sizes = (3, 4, 3)
    values = sorted({round(_oracle_chi_square(t), 9) for t in _all_tables(sizes, 2)})
    gamma = pearson_chi_square([[[3, 0], [2, 2], [1, 2]]], sizes)[0]  # a table's own value
    assert round(gamma, 9) in values
    at_gamma = _oracle_log_a(ALPHA, sizes, 2, lambda x: abs(x - gamma) <= 1e-9 * gamma)
    below = _oracle_log_a(ALPHA, sizes, 2, lambda x: x < gamma - 1e-9 * gamma)
    strict = categorical_log_discard_probability(ALPHA, sizes, gamma, strict=True)
    loose = categorical_log_discard_probability(ALPHA, sizes, gamma, strict=False)
    np.testing.assert_allclose(strict, below, atol=1e-12)
    np.testing.assert_allclose(np.exp(loose), np.exp(below) + np.exp(at_gamma), rtol=1e-12)
    assert (np.exp(at_gamma) > 1e-4).all()  # the tables at γ carry mass: the convention matters


@pytest.mark.parametrize("n0,n1", [(1, 1), (4, 7), (12, 12), (30, 41)])
def test_two_classes_binary_equals_the_binary_model(n0, n1):
    n = n0 + n1
    cor = np.unique(np.abs(np.round([correlation_from_sums(i1, i0 + i1, i0 + i1, n, n1)
                                     for i0 in range(n0 + 1) for i1 in range(n1 + 1)], 12)))  # fmt: skip
    for gamma_cor in [cor[len(cor) // 3], cor[(2 * len(cor)) // 3], 0.0]:  # lattice values: the boundary matters
        for strict in (False, True):
            ref = naive_bayes_log_discard_probability(ALPHA, n0, n1, gamma_cor, strict=strict)
            ours = categorical_log_discard_probability(ALPHA, (n0, n1), n * gamma_cor**2, strict=strict)
            finite = np.isfinite(ref)
            np.testing.assert_array_equal(np.isfinite(ours), finite)
            np.testing.assert_allclose(ours[finite], ref[finite], rtol=0, atol=1e-12)


@pytest.mark.parametrize("sizes", [(5, 6, 7), (9, 8, 10, 7), (20, 21, 22)])
def test_binary_features_discard_one_interval_per_combination(sizes):
    """For L = 2 the discarded counts of the last class form one interval (a convex quadratic, doc C12)."""
    for gamma in (0.5, 3.0, 9.0):
        prefix, starts, stops = discarded_runs(sizes, 2, gamma, True)
        assert len({tuple(row) for row in prefix}) == prefix.shape[0]
        assert prefix.shape[0] <= np.prod(np.array(sizes[:-1]) + 1)


def test_inputs_are_checked():
    with pytest.raises(InputValueError, match="at least two classes"):
        categorical_log_discard_probability([1.0], (5,), 1.0)
    with pytest.raises(InputValueError, match="alpha must be"):
        categorical_log_discard_probability([0.0], (5, 5), 1.0)
    with pytest.raises(InputValueError, match="threshold must be"):
        categorical_log_discard_probability([1.0], (5, 5), -1.0)
    with pytest.raises(InputValueError, match="theta_rule"):
        categorical_log_discard_probability([1.0], (5, 5), 1.0, n_levels=3, theta_rule=simplex_rule(2, 3))
    assert categorical_log_discard_probability([1.0, 2.0], (3, 3), 0.0, strict=True).tolist() == [-np.inf] * 2


def test_the_runs_are_the_discarded_tables():
    sizes, n_levels, gamma = (3, 2, 4), 3, 2.5
    prefix, starts, stops = discarded_runs(sizes, n_levels, gamma, False)
    comps = [compositions(s, n_levels) for s in sizes]
    covered = {(tuple(p), c) for p, a, b in zip(prefix, starts, stops) for c in range(a, b)}
    expected = set()
    for i, j, c in itertools.product(*(range(len(x)) for x in comps)):
        table = np.array([comps[0][i], comps[1][j], comps[2][c]])
        if _oracle_chi_square(table) <= gamma:
            expected.add(((i, j), c))
    assert covered == expected


@pytest.mark.parametrize("sizes", [(4, 6), (3, 5, 4), (6, 2, 5, 3)])
def test_the_binary_kernel_equals_the_general_runs_kernel(sizes):
    """L = 2 takes the nested-loop kernel (one interval per combination, θ ↔ 1 − θ symmetry, negligible pmf
    entries skipped); the general kernel over the runs on the full rule gives the same a(α)."""
    from hdbayes.selection_bias.categorical_adjustment import (
        _binary_discarded_mass,
        _binary_intervals,
        _composition_table,
        _discarded_mass,
        exact_simplex_points,
    )

    gamma = _gap_thresholds(sizes, 2)[1]
    rule = simplex_rule(2, exact_simplex_points(sum(sizes)))
    comps, n_comps, log_mult = _composition_table(np.array(sizes), 2)
    runs = discarded_runs(sizes, 2, gamma, True)
    general = _discarded_mass(ALPHA, rule.nodes, comps, n_comps, log_mult, np.array(sizes), *runs)
    intervals = _binary_intervals(sizes, gamma, True)
    binary, left_out = _binary_discarded_mass(ALPHA, rule.nodes, np.array(sizes), *intervals)
    np.testing.assert_allclose(binary, general, rtol=1e-12, atol=1e-300)
    assert left_out.max() < 1e-17
    np.testing.assert_allclose(general @ rule.weights, np.exp(categorical_log_discard_probability(
        ALPHA, sizes, gamma, strict=True)), rtol=1e-13)  # fmt: skip


def _exact_rational_log_a(alpha, sizes, gamma, strict):
    """log a(α) for L = 2 with every Beta-binomial probability and sum in exact rational arithmetic (the θ
    rule's nodes and weights and α taken as the exact values of their floats); only the final log is rounded."""
    import math
    from fractions import Fraction

    from hdbayes.selection_bias.categorical_adjustment import exact_simplex_points

    prefix, starts, stops = discarded_runs(sizes, 2, gamma, strict)
    rule = simplex_rule(2, exact_simplex_points(sum(sizes)))

    def rising(x, k):
        out = Fraction(1)
        for i in range(k):
            out *= x + i
        return out

    total = Fraction(0)
    for theta0, theta1, weight in zip(rule.nodes[:, 0], rule.nodes[:, 1], rule.weights):
        a, b = Fraction(alpha) * Fraction(theta1), Fraction(alpha) * Fraction(theta0)
        pmfs = [[math.comb(n, i) * rising(a, i) * rising(b, n - i) / rising(a + b, n) for i in range(n + 1)]
                for n in sizes]  # fmt: skip
        inner = Fraction(0)
        for row, start, stop in zip(prefix, starts, stops):
            head = Fraction(1)
            for g, index in enumerate(row):
                head *= pmfs[g][index]
            inner += head * sum(pmfs[-1][start:stop], Fraction(0))
        total += Fraction(weight) * inner
    return math.log1p(float(total - 1))


@pytest.mark.parametrize("sizes", [(6, 5, 7), (9, 11)])
def test_binary_kernel_is_accurate_at_large_alpha(sizes):
    """The Beta-binomial pmfs come from ratios outward from their mode: a(α) ≈ 1 is accurate to a few ulps even
    at α ~ 1e12, where exponentiated sums of log-rising factorials (each ~n log α) lost ~1e-12 in log a."""
    gamma = _gap_thresholds(sizes, 2)[1]
    for alpha in (0.3, 8e8, 1.3e12):
        exact = _exact_rational_log_a(alpha, sizes, gamma, True)
        ours = categorical_log_discard_probability([alpha], sizes, gamma, strict=True)[0]
        assert abs(ours - exact) <= 2e-15 * max(1.0, abs(exact)), (alpha, ours, exact)


def test_the_region_and_the_rule_are_built_once():
    """A fit evaluates a(α) at several α batches: the region (runs, compositions, θ rule) is cached and reused,
    the rule's arrays are read-only, and evaluating the region in batches gives the one-call values."""
    from hdbayes.selection_bias.categorical_adjustment import DiscardedRegion, discarded_region

    assert simplex_rule(3, 5) is simplex_rule(3, 5) and not simplex_rule(3, 5).nodes.flags.writeable
    sizes, gamma = (4, 5, 3), _gap_thresholds((4, 5, 3), 2)[1]
    region = discarded_region(sizes, 2, gamma, True)
    assert discarded_region(sizes, 2, gamma, True) is region
    whole = categorical_log_discard_probability(ALPHA, sizes, gamma, strict=True)
    batches = np.concatenate([region.log_probability(ALPHA[:2]), region.log_probability(ALPHA[2:])])
    np.testing.assert_array_equal(batches, whole)
    for n_levels, points in [(2, 4), (3, 3)]:  # a cheaper rule: cached by its points, or built from the rule
        rule = simplex_rule(n_levels, points)
        direct = DiscardedRegion(sizes, n_levels, 2.0, False, rule).log_probability(ALPHA)
        np.testing.assert_array_equal(discarded_region(sizes, n_levels, 2.0, False, points).log_probability(ALPHA),
                                      direct)  # fmt: skip
        np.testing.assert_array_equal(
            categorical_log_discard_probability(ALPHA, sizes, 2.0, n_levels=n_levels, theta_rule=rule), direct
        )


@pytest.mark.parametrize("n_levels", [2, 3])
def test_threads_split_the_alpha_values_without_changing_the_result(monkeypatch, n_levels):
    from hdbayes.selection_bias import categorical_adjustment as module

    sizes = (5, 4, 6)
    region = module.DiscardedRegion(sizes, n_levels, 2.5, True, simplex_rule(n_levels, 4))
    alpha = np.geomspace(0.05, 1e6, 11)
    alone = region.discarded_mass(alpha)
    monkeypatch.setattr(module, "_THREADING_FROM", 0)
    monkeypatch.setattr("hdbayes._threads.usable_cores", lambda: 3)
    np.testing.assert_array_equal(region.discarded_mass(alpha), alone)
    assert alone.shape == (11, region._nodes.shape[0]) and (alone > 0).all()


@pytest.mark.parametrize("sizes", [(12, 9, 14), (20, 17)])
def test_the_two_kernels_agree_to_a_few_ulps_at_large_alpha(sizes):
    """The general kernel's Dirichlet–multinomial pmfs (from log-rising factorials) are divided by their sums,
    the binary kernel's come from ratios: on binary features they agree to 5e-15 in log a up to α = 1e12
    (unnormalised exponentiated logs differed by 1.5e-14 to 2.9e-14 here)."""
    from scipy.special import logsumexp

    from hdbayes.selection_bias.categorical_adjustment import (
        _composition_table,
        _discarded_mass,
        exact_simplex_points,
    )

    alpha = np.array([0.2, 50.0, 1e6, 1e9, 1e12])
    rule = simplex_rule(2, exact_simplex_points(sum(sizes)))
    comps, n_comps, log_mult = _composition_table(np.array(sizes), 2)
    for gamma in (1.5, 4.0):
        general = _discarded_mass(alpha, rule.nodes, comps, n_comps, log_mult, np.array(sizes),
                                  *discarded_runs(sizes, 2, gamma, True))  # fmt: skip
        log_general = logsumexp(np.log(general) + rule.log_weights[None, :], axis=1)
        binary = categorical_log_discard_probability(alpha, sizes, gamma, strict=True)
        np.testing.assert_allclose(log_general, binary, rtol=0, atol=5e-15)
