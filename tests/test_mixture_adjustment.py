"""Tests for the adjustment factor of the Bayesian binary mixture model (thesis eq. 2.97–2.105).

The reference is brute-force enumeration of every binary feature column x_t ∈ {0,1}^n for small n:
P(x_t | θ, α, z) = ∏_z U(αθ, α(1 − θ), ones in group z, zeros in group z), summed over the columns
whose |COR(x_t, x_0)| the selection discards, integrated over θ with the same rule.
"""

import numpy as np
import pytest
from scipy import integrate
from test_adjustment import _lattice_gamma, all_columns, log_u_product, null_discard_probability

from hdbayes.quadrature import QuadratureRule, gauss_legendre_rule, inverse_gamma_midpoint_grid, simpson_rule
from hdbayes.selection import Selection, correlation_from_sums
from hdbayes.selection_bias.adjustment import discarded_lattice, naive_bayes_log_discard_probability
from hdbayes.selection_bias.mixture_adjustment import (
    MixtureAdjustmentCache,
    _mixture_discard_weights,
    mixture_log_discard_probability,
)

ALPHAS = np.array([0.05, 1.0, 3.0, 27.99, 2543.14])
WORKED_X0 = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1])
WORKED_Z = np.array([0, 1, 0, 1, 1, 0, 1, 0, 1])
WORKED_Q = 0.584871173


def label_counts(x0, z):
    """(n0, n1, n0_label1, n1_label1) for response x0 and labels z."""
    x0, z = np.asarray(x0), np.asarray(z)
    return (
        int(np.sum(x0 == 0)),
        int(np.sum(x0 == 1)),
        int(np.sum((z == 1) & (x0 == 0))),
        int(np.sum((z == 1) & (x0 == 1))),
    )


def brute_force_mixture_q(x0, z, alpha, gamma, strict, rule):
    """q(α) by enumerating every binary column x_t ∈ {0,1}^n given the response x0 and labels z."""
    x0, z = np.asarray(x0), np.asarray(z)
    n, n1 = x0.shape[0], int(x0.sum())
    X = all_columns(n)
    sum_x = X.sum(axis=0)
    cor = np.abs(correlation_from_sums(x0 @ X, sum_x, sum_x, n, n1))
    selection = Selection(np.array([0]), gamma, 2, strict=strict, statistic="correlation")
    X = X[:, selection.discarded(cor)]
    ones1 = z @ X  # ones in group z = 1
    ones0 = X.sum(axis=0) - ones1
    size1 = int(z.sum())
    theta = rule.nodes[:, None]
    out = []
    for a in np.atleast_1d(alpha):
        f1, f0 = a * theta, a * (1 - theta)
        log_p = log_u_product(f1, f0, ones0, (n - size1) - ones0) + log_u_product(f1, f0, ones1, size1 - ones1)
        out.append(rule.weights @ np.exp(log_p).sum(axis=1))
    return np.array(out)


def mixture_q(x0, z, alpha, gamma, strict=False, rule=None):
    return np.exp(mixture_log_discard_probability(alpha, *label_counts(x0, z), gamma, strict=strict, theta_rule=rule))


# ---------------------------------------------------------------------------
# a worked example of the mixture adjustment factor (thesis §2.4.3, eq. 2.97–2.105, Appendix 2), not the
# thesis's own: its value from brute-force enumeration of all 2^9 columns (docs/mixture.md, "Tests")
# ---------------------------------------------------------------------------


def test_worked_value_exact_theta_integration():
    """The integrand is a polynomial of degree ≤ n = 9 in θ: 5 Gauss–Legendre nodes are exact."""
    for rule in (gauss_legendre_rule(5), gauss_legendre_rule(12)):
        q = mixture_q(WORKED_X0, WORKED_Z, [3.0], 0.3, rule=rule)[0]
        assert q == pytest.approx(WORKED_Q, abs=5e-10)
        assert brute_force_mixture_q(WORKED_X0, WORKED_Z, [3.0], 0.3, False, rule)[0] == pytest.approx(q, rel=1e-13)
    assert label_counts(WORKED_X0, WORKED_Z) == (4, 5, 2, 3)


def test_worked_value_with_scipy_quad_and_fine_simpson():
    def integrand(theta):
        point = QuadratureRule(np.array([theta]), np.array([1.0]))
        return brute_force_mixture_q(WORKED_X0, WORKED_Z, [3.0], 0.3, False, point)[0]

    value, _ = integrate.quad(integrand, 0.0, 1.0, epsabs=1e-13, epsrel=1e-13)
    assert value == pytest.approx(WORKED_Q, abs=5e-10)
    fine = mixture_q(WORKED_X0, WORKED_Z, [3.0], 0.3, rule=simpson_rule(2001))[0]
    assert fine == pytest.approx(value, abs=1e-8)


def test_worked_example_differs_from_naive_bayes():
    """The labels matter: with z ≠ x0 the factor is not the naive Bayes one (0.436610119)."""
    nb = np.exp(naive_bayes_log_discard_probability([3.0], 4, 5, 0.3, theta_rule=gauss_legendre_rule(12)))[0]
    assert nb == pytest.approx(0.436610119, abs=5e-10)
    assert mixture_q(WORKED_X0, WORKED_Z, [3.0], 0.3, rule=gauss_legendre_rule(12))[0] > nb + 0.1


# ---------------------------------------------------------------------------
# convolution algorithm == brute-force enumeration over 2^n columns
# ---------------------------------------------------------------------------

CASES = [
    # (n, n1, γ, strict, seed)
    (9, 5, 0.3, False, 0),
    (9, 5, 0.3, True, 1),
    (10, 3, 0.2, False, 2),
    (10, 6, 0.45, True, 3),
    (8, 4, 0.1, False, 4),
    (7, 1, 0.25, False, 5),
    (10, 5, 0.6, False, 6),
    (8, 4, 0.0, False, 7),  # only exactly uncorrelated features are discarded
    (8, 4, 1.0, False, 8),  # everything is discarded
    (2, 1, 0.5, False, 9),
]


def _random_problem(n, n1, seed):
    rng = np.random.default_rng(seed)
    x0 = rng.permutation(np.r_[np.zeros(n - n1), np.ones(n1)]).astype(int)
    z = rng.integers(0, 2, size=n)
    return x0, z


@pytest.mark.parametrize(("n", "n1", "gamma", "strict", "seed"), CASES)
def test_equals_brute_force_simpson_11(n, n1, gamma, strict, seed):
    x0, z = _random_problem(n, n1, seed)
    rule = simpson_rule(11)
    np.testing.assert_allclose(
        mixture_q(x0, z, ALPHAS, gamma, strict, rule),
        brute_force_mixture_q(x0, z, ALPHAS, gamma, strict, rule),
        rtol=1e-12,
        atol=1e-14,
    )


@pytest.mark.parametrize("labels", ["all0", "all1", "x0", "flip", "alternate", "one"])
def test_equals_brute_force_for_special_label_vectors(labels):
    x0 = np.array([1, 0, 0, 1, 1, 0, 1, 0, 0, 1])
    z = {
        "all0": np.zeros(10, int),
        "all1": np.ones(10, int),
        "x0": x0,
        "flip": 1 - x0,
        "alternate": np.arange(10) % 2,
        "one": np.eye(10, dtype=int)[3],
    }[labels]
    rule = simpson_rule(11)
    for gamma, strict in [(0.3, False), (0.2, True)]:
        np.testing.assert_allclose(
            mixture_q(x0, z, ALPHAS, gamma, strict, rule),
            brute_force_mixture_q(x0, z, ALPHAS, gamma, strict, rule),
            rtol=1e-12,
            atol=1e-14,
        )


@pytest.mark.parametrize(("n", "n1", "rank"), [(9, 5, 3), (10, 4, 5), (10, 7, 8)])
@pytest.mark.parametrize("strict", [False, True])
def test_equals_brute_force_when_gamma_is_a_lattice_value(n, n1, rank, strict):
    """γ = |Cor| of a lattice point (as after top-k selection): the tie is classified as selected."""
    gamma = _lattice_gamma(n, n1, rank)
    x0, z = _random_problem(n, n1, 10 * n + rank)
    rule = simpson_rule(11)
    np.testing.assert_allclose(
        mixture_q(x0, z, ALPHAS, gamma, strict, rule),
        brute_force_mixture_q(x0, z, ALPHAS, gamma, strict, rule),
        rtol=1e-12,
        atol=1e-14,
    )


def test_equals_brute_force_exact_and_asymmetric_rules():
    x0, z = _random_problem(10, 4, 11)
    for rule in (gauss_legendre_rule(6), QuadratureRule(np.array([0.1, 0.35, 0.8]), np.array([0.3, 0.3, 0.4]))):
        np.testing.assert_allclose(
            mixture_q(x0, z, ALPHAS, 0.25, False, rule),
            brute_force_mixture_q(x0, z, ALPHAS, 0.25, False, rule),
            rtol=1e-12,
        )


def test_default_rule_is_exact():
    args = (inverse_gamma_midpoint_grid(0.5, 5.0, 10).nodes, 30, 25, 7, 18, 0.24)
    default = mixture_log_discard_probability(*args)
    np.testing.assert_array_equal(default, mixture_log_discard_probability(*args, theta_rule=gauss_legendre_rule(29)))
    more = mixture_log_discard_probability(*args, theta_rule=gauss_legendre_rule(60))
    np.testing.assert_allclose(more, default, rtol=0, atol=1e-13)
    # the thesis's 11 Simpson points are off by ~1e-3 here (times p − k in the model)
    thesis = mixture_log_discard_probability(*args, theta_rule=simpson_rule(11))
    assert np.abs(thesis - default).max() > 1e-4


# ---------------------------------------------------------------------------
# special cases and symmetries
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n0", "n1", "gamma", "strict"), [(4, 5, 0.3, False), (100, 100, 0.24, False), (37, 81, 0.12, True)]
)
def test_labels_equal_to_the_response_give_naive_bayes(n0, n1, gamma, strict):
    """z = x0 (and z = 1 − x0) is the naive Bayes model."""
    alpha = inverse_gamma_midpoint_grid(0.5, 5.0, 10).nodes
    for rule in (simpson_rule(11), gauss_legendre_rule(7)):
        nb = naive_bayes_log_discard_probability(alpha, n0, n1, gamma, strict=strict, theta_rule=rule)
        same = mixture_log_discard_probability(alpha, n0, n1, 0, n1, gamma, strict=strict, theta_rule=rule)
        flipped = mixture_log_discard_probability(alpha, n0, n1, n0, 0, gamma, strict=strict, theta_rule=rule)
        np.testing.assert_allclose(same, nb, rtol=1e-13, atol=1e-15)
        np.testing.assert_array_equal(same, flipped)


def test_label_swap_symmetry():
    """z ↔ 1 − z: the two groups have the same prior, so q is unchanged (bit for bit)."""
    x0, z = _random_problem(10, 6, 12)
    rule = simpson_rule(11)
    q = mixture_q(x0, z, ALPHAS, 0.3, rule=rule)
    np.testing.assert_array_equal(q, mixture_q(x0, 1 - z, ALPHAS, 0.3, rule=rule))
    np.testing.assert_allclose(q, brute_force_mixture_q(x0, 1 - z, ALPHAS, 0.3, False, rule), rtol=1e-12)
    alpha = inverse_gamma_midpoint_grid(0.5, 5.0, 10).nodes
    for u, v in [(3, 70), (50, 50), (0, 0), (99, 1)]:
        np.testing.assert_array_equal(
            mixture_log_discard_probability(alpha, 100, 100, u, v, 0.18),
            mixture_log_discard_probability(alpha, 100, 100, 100 - u, 100 - v, 0.18),
        )


@pytest.mark.parametrize(("n0", "n1", "u", "v"), [(4, 5, 2, 3), (30, 20, 7, 15), (25, 25, 0, 12), (13, 40, 13, 0)])
def test_weights_do_not_depend_on_the_orientation(n0, n1, u, v):
    """W(m0, m1) for labels z equals W(m1, m0) for 1 − z, although the two are computed differently."""
    from hdbayes.selection_bias.mixture_adjustment import _discarded_intervals

    lo, hi = _discarded_intervals(n0, n1, 0.2, False)
    weights = _mixture_discard_weights(n0, n1, u, v, lo, hi)
    mirror = _mixture_discard_weights(n0, n1, n0 - u, n1 - v, lo, hi)
    assert weights.shape == (n0 + n1 - u - v + 1, u + v + 1)
    np.testing.assert_allclose(weights, mirror.T, rtol=1e-12, atol=1e-15)
    assert np.all((weights >= 0) & (weights <= 1 + 1e-12))


def test_discarded_region_is_an_interval_on_every_anti_diagonal():
    from hdbayes.selection_bias.mixture_adjustment import _discarded_intervals

    for n0, n1 in [(1, 1), (4, 5), (8, 14), (37, 52), (100, 100), (3, 190)]:
        total = np.arange(n0 + 1)[:, None] + np.arange(n1 + 1)[None, :]
        i0 = np.arange(n0 + 1)[:, None] + 0 * total
        for gamma in (0.0, 0.13, 0.3, _lattice_gamma(n0 + n1, n1, 2)):
            for strict in (False, True):
                lo, hi = _discarded_intervals(n0, n1, gamma, strict)
                mask = discarded_lattice(n0, n1, gamma, strict)
                np.testing.assert_array_equal(mask, (lo[total] <= i0) & (i0 <= hi[total]))


@pytest.mark.parametrize(("n0", "n1", "u", "v", "gamma"), [(4, 5, 2, 3, 0.3), (50, 70, 20, 31, 0.21)])
def test_large_alpha_limit_is_the_null_discard_probability(n0, n1, u, v, gamma):
    """α → ∞: φ_0 = φ_1 = θ, the feature is independent of x0 and z."""
    q = np.exp(mixture_log_discard_probability([1e9], n0, n1, u, v, gamma, theta_rule=gauss_legendre_rule(80)))
    assert q[0] == pytest.approx(null_discard_probability(n0, n1, gamma), abs=1e-6)


@pytest.mark.parametrize(("n0", "n1", "u", "v"), [(4, 5, 2, 3), (100, 100, 10, 90), (100, 100, 50, 48), (60, 30, 0, 0)])
def test_small_alpha_limit(n0, n1, u, v):
    """α → 0: each φ_z is 0 or 1 (prob. 1 − θ, θ), so x_t is constant, z or 1 − z.

    q → ∫ θ² + (1 − θ)² dθ + 2∫ θ(1 − θ) dθ · [|Cor(z, x0)| discarded] = 2/3 or 1.
    """
    gamma = 0.3
    z_is_discarded = bool(discarded_lattice(n0, n1, gamma, False)[u, v])
    q = np.exp(mixture_log_discard_probability([1e-9], n0, n1, u, v, gamma))[0]
    assert q == pytest.approx(1.0 if z_is_discarded else 2 / 3, abs=1e-6)


def test_special_thresholds():
    alpha = np.array([0.5, 5.0, 500.0])
    np.testing.assert_allclose(mixture_log_discard_probability(alpha, 10, 13, 4, 6, 1.0), 0.0, atol=1e-13)
    assert np.all(np.isneginf(mixture_log_discard_probability(alpha, 10, 13, 4, 6, 0.0, strict=True)))
    log_q = mixture_log_discard_probability(alpha, 10, 13, 4, 6, 0.3)
    assert np.all(np.isfinite(log_q) & (log_q < 0))


# ---------------------------------------------------------------------------
# the cache
# ---------------------------------------------------------------------------


def test_cache_matches_function_and_computes_each_key_once():
    alpha = inverse_gamma_midpoint_grid(0.5, 5.0, 10).nodes
    cache = MixtureAdjustmentCache(alpha, 12, 9, 0.24, strict=True, theta_rule=simpson_rule(21))
    assert cache.n_computed == 0 and cache.table() == {}
    first = cache.log_q(5, 2)
    np.testing.assert_array_equal(
        first, mixture_log_discard_probability(alpha, 12, 9, 5, 2, 0.24, strict=True, theta_rule=simpson_rule(21))
    )
    assert cache.n_computed == 1
    assert cache.log_q(5, 2) is first  # stored, not recomputed
    assert cache.log_q(np.int64(7), 7) is first  # the label-swapped mirror (12 − 5, 9 − 2) shares it
    assert cache.n_computed == 1
    cache.log_q(6, 2)
    assert cache.n_computed == 2
    table = cache.table()
    assert set(table) == {(5, 2), (7, 7), (6, 2), (6, 7)}
    np.testing.assert_array_equal(table[(6, 7)], cache.log_q(6, 2))
    with pytest.raises(ValueError, match="read-only"):
        first[0] = 0.0


def test_precompute_all():
    alpha = inverse_gamma_midpoint_grid(0.5, 5.0, 10).nodes
    n0, n1 = 14, 9
    cache = MixtureAdjustmentCache(alpha, n0, n1, 0.3)
    early = cache.log_q(3, 4)
    table = cache.precompute_all()
    assert table.shape == (n0 + 1, n1 + 1, alpha.size) and table.dtype == np.float64
    assert not table.flags.writeable
    assert cache.n_computed == ((n0 + 1) * (n1 + 1) + 1) // 2  # one per mirror pair
    assert cache.precompute_all() is table
    np.testing.assert_array_equal(table[3, 4], early)
    fresh = MixtureAdjustmentCache(alpha, n0, n1, 0.3)
    for u in range(n0 + 1):
        for v in range(n1 + 1):
            np.testing.assert_allclose(table[u, v], fresh.log_q(u, v), rtol=1e-13, atol=1e-15)
            np.testing.assert_array_equal(table[u, v], cache.log_q(u, v))
    np.testing.assert_array_equal(table, table[::-1, ::-1])
    assert cache.n_computed == ((n0 + 1) * (n1 + 1) + 1) // 2


def test_precompute_all_when_nothing_is_discarded():
    cache = MixtureAdjustmentCache([1.0, 2.0], 3, 4, 0.0, strict=True)
    assert np.all(np.isneginf(cache.precompute_all()))


# ---------------------------------------------------------------------------
# input validation
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        (([1.0, 0.0], 4, 5, 1, 1, 0.3), ValueError, "alpha must be finite and > 0"),
        (([np.nan], 4, 5, 1, 1, 0.3), ValueError, "alpha must be finite and > 0"),
        (([], 4, 5, 1, 1, 0.3), ValueError, "non-empty"),
        (([[1.0]], 4, 5, 1, 1, 0.3), ValueError, "1-D"),
        (([1.0], 0, 5, 0, 1, 0.3), ValueError, "n0 must be at least 1"),
        (([1.0], 4, 0, 1, 0, 0.3), ValueError, "n1 must be at least 1"),
        (([1.0], 4.0, 5, 1, 1, 0.3), TypeError, "n0 must be an integer"),
        (([1.0], 4, 5, 5, 1, 0.3), ValueError, "n0_label1 must be between 0 and n0=4"),
        (([1.0], 4, 5, 1, 6, 0.3), ValueError, "n1_label1 must be between 0 and n1=5"),
        (([1.0], 4, 5, -1, 1, 0.3), ValueError, "n0_label1 must be at least 0"),
        (([1.0], 4, 5, 1, 1.5, 0.3), TypeError, "n1_label1 must be an integer"),
        (([1.0], 4, 5, 1, 1, -0.1), ValueError, "threshold must be a finite number >= 0"),
        (([1.0], 4, 5, 1, 1, np.inf), ValueError, "threshold must be a finite number >= 0"),
        (([1.0], 4, 5, 1, 1, "0.3"), TypeError, "threshold must be a real number"),
    ],
)
def test_input_errors(args, error, match):
    with pytest.raises(error, match=match):
        mixture_log_discard_probability(*args)


def test_cache_validates_keys():
    cache = MixtureAdjustmentCache([1.0], 4, 5, 0.3)
    with pytest.raises(ValueError, match="n0_label1 must be between 0 and n0=4"):
        cache.log_q(5, 0)
    with pytest.raises(TypeError, match="n1_label1 must be an integer"):
        cache.log_q(1, True)
    assert cache.n_computed == 0
