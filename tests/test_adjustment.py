"""Tests for hdbayes.selection_bias.adjustment: the naive Bayes adjustment factor q(α)."""

import itertools
import math

import numpy as np
import pytest
from scipy import integrate
from scipy.special import betaln, gammaln

from hdbayes.quadrature import QuadratureRule, inverse_gamma_midpoint_grid, simpson_rule
from hdbayes.selection import THRESHOLD_RTOL, Selection, abs_correlation, correlation_from_sums, select_features
from hdbayes.selection_bias.adjustment import (
    discarded_lattice,
    lattice_correlation,
    naive_bayes_log_discard_probability,
)


def gauss_legendre_rule(n_points):
    """Gauss–Legendre on [0, 1]: symmetric, interior nodes, exact for polynomials of degree < 2n.

    Given α and θ, the probability of a binary column is a polynomial in θ of degree ≤ n
    (rising factorials of αθ and α(1 − θ) over a constant), so this rule integrates θ
    exactly for n < 2 · n_points.
    """
    x, w = np.polynomial.legendre.leggauss(n_points)
    return QuadratureRule((x + 1) / 2, w / 2)


EXACT = gauss_legendre_rule(40)


def log_u_product(f1, f0, n1, n0):
    """log U from its product form (thesis eq. 2.30), one log per factor.

    U = ∏_{l<n0}(f0 + l) ∏_{l<n1}(f1 + l) / ∏_{l<n0+n1}(f0 + f1 + l). (The Gamma-function form
    loses ~1e-12 to cancellation at α ≈ 2500, more than the tolerance of these tests.)
    f1, f0: arrays of shape (T, 1); n1, n0: int arrays of shape (C,). Returns (T, C).
    """
    f1, f0 = np.broadcast_arrays(f1, f0)
    top = int(max(np.max(n1, initial=0), np.max(n0, initial=0), 1))
    steps = np.arange(2 * top)
    with np.errstate(divide="ignore"):
        cum1 = np.concatenate([np.zeros_like(f1), np.cumsum(np.log(f1 + steps), axis=1)], axis=1)
        cum0 = np.concatenate([np.zeros_like(f0), np.cumsum(np.log(f0 + steps), axis=1)], axis=1)
        cum = np.concatenate([np.zeros_like(f0), np.cumsum(np.log(f0 + f1 + steps), axis=1)], axis=1)
    return cum1[:, n1] + cum0[:, n0] - cum[:, n1 + n0]


def all_columns(n):
    """All 2^n binary columns of length n, as an n × 2^n matrix."""
    return np.array(list(itertools.product([0, 1], repeat=n)), dtype=np.int64).T


def brute_force_q(y, alpha, gamma, strict, rule):
    """q(α) by enumerating every binary feature column x ∈ {0,1}^n.

    For each x: I_c = #{y = c, x = 1}, its |COR| from the sufficient sums, whether it is
    discarded (Selection.discarded, the selection's own rule), and
    P(x | α, θ, y) = ∏_c U(αθ, α(1 − θ), I_c, N_c − I_c). Summed over discarded
    columns, then integrated over θ with ``rule``.
    """
    y = np.asarray(y)
    n, n1 = y.shape[0], int(y.sum())
    X = all_columns(n)
    sum_x = X.sum(axis=0)
    sum_xy = y @ X
    cor = np.abs(correlation_from_sums(sum_xy, sum_x, sum_x, n, n1))
    selection = Selection(np.array([0]), gamma, 2, strict=strict, statistic="correlation")
    discarded = selection.discarded(cor)
    ones1 = sum_xy[discarded]
    ones0 = sum_x[discarded] - ones1
    theta = rule.nodes[:, None]
    out = []
    for a in np.atleast_1d(alpha):
        f1, f0 = a * theta, a * (1 - theta)
        log_p = log_u_product(f1, f0, ones0, (n - n1) - ones0) + log_u_product(f1, f0, ones1, n1 - ones1)
        out.append(rule.weights @ np.exp(log_p).sum(axis=1))
    return np.array(out)


def null_discard_probability(n0, n1, gamma, strict=False):
    """lim_{α→∞} q: x i.i.d. Bernoulli(θ) independent of y, θ ~ U(0,1), integrated exactly.

    P(I0, I1) = C(n0, I0) C(n1, I1) B(m + 1, n − m + 1) with m = I0 + I1.
    """
    mask = discarded_lattice(n0, n1, gamma, strict)
    i0 = np.arange(n0 + 1)[:, None]
    i1 = np.arange(n1 + 1)[None, :]
    m = i0 + i1
    n = n0 + n1
    log_choose0 = gammaln(n0 + 1) - gammaln(i0 + 1) - gammaln(n0 - i0 + 1)
    log_choose1 = gammaln(n1 + 1) - gammaln(i1 + 1) - gammaln(n1 - i1 + 1)
    prob = np.exp(log_choose0 + log_choose1 + betaln(m + 1, n - m + 1))
    assert prob.sum() == pytest.approx(1.0, abs=1e-12)
    return prob[mask].sum()


WORKED_Y = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1])


# ---------------------------------------------------------------------------
# a worked example of the naive Bayes adjustment factor (thesis §2.3.4, eq. 2.54–2.63), not the thesis's
# own: its value 0.436610119 from brute-force enumeration of all 2^9 columns (checked below)
# ---------------------------------------------------------------------------


def test_worked_value_exact_theta_integration():
    q = np.exp(naive_bayes_log_discard_probability([3.0], 4, 5, 0.3, theta_rule=EXACT))
    assert q[0] == pytest.approx(0.436610119, abs=5e-10)
    assert brute_force_q(WORKED_Y, 3.0, 0.3, False, EXACT)[0] == pytest.approx(0.436610119, abs=5e-10)


def test_worked_value_with_scipy_quad():
    """The exact θ integral by adaptive quadrature of the brute-force sum."""

    def integrand(theta):
        return brute_force_q(WORKED_Y, 3.0, 0.3, False, QuadratureRule(np.array([theta]), np.array([1.0])))[0]

    value, _ = integrate.quad(integrand, 0.0, 1.0, epsabs=1e-13, epsrel=1e-13)
    assert value == pytest.approx(0.436610119, abs=5e-10)
    lattice = np.exp(naive_bayes_log_discard_probability([3.0], 4, 5, 0.3, theta_rule=simpson_rule(2001)))[0]
    assert lattice == pytest.approx(value, abs=1e-8)


# ---------------------------------------------------------------------------
# lattice algorithm == brute-force enumeration over 2^n columns
# ---------------------------------------------------------------------------

CASES = [
    # (n, n1, γ, strict)
    (9, 5, 0.3, False),
    (9, 5, 0.3, True),
    (10, 3, 0.2, False),
    (11, 6, 0.45, True),
    (12, 5, 0.1, False),
    (12, 6, 0.6, True),
    (7, 1, 0.25, False),
    (8, 4, 0.0, False),  # only exactly uncorrelated features are discarded
    (8, 4, 1.0, False),  # everything is discarded
]
ALPHAS = np.array([0.05, 1.0, 3.0, 27.99, 2543.14])


def _lattice_gamma(n, n1, rank):
    """A γ that is itself a lattice value (as after top-k selection): the rank-th distinct |Cor|."""
    values = np.unique(np.round(np.abs(lattice_correlation(n - n1, n1)), 12))
    return float(values[-rank])


@pytest.mark.parametrize(("n", "n1", "gamma", "strict"), CASES)
def test_lattice_equals_brute_force_same_simpson_rule(n, n1, gamma, strict):
    rng = np.random.default_rng(n * 100 + n1)
    y = rng.permutation(np.r_[np.zeros(n - n1), np.ones(n1)]).astype(int)  # order must not matter
    rule = simpson_rule(21)
    lattice = np.exp(naive_bayes_log_discard_probability(ALPHAS, n - n1, n1, gamma, strict=strict, theta_rule=rule))
    np.testing.assert_allclose(lattice, brute_force_q(y, ALPHAS, gamma, strict, rule), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize(("n", "n1", "rank"), [(9, 5, 3), (10, 4, 5), (12, 7, 8), (12, 2, 2)])
@pytest.mark.parametrize("strict", [False, True])
def test_lattice_equals_brute_force_when_gamma_is_a_lattice_value(n, n1, rank, strict):
    gamma = _lattice_gamma(n, n1, rank)
    y = np.r_[np.ones(n1), np.zeros(n - n1)].astype(int)
    rule = simpson_rule(21)
    lattice = np.exp(naive_bayes_log_discard_probability(ALPHAS, n - n1, n1, gamma, strict=strict, theta_rule=rule))
    np.testing.assert_allclose(lattice, brute_force_q(y, ALPHAS, gamma, strict, rule), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize(("n", "n1", "rank"), [(9, 5, 3), (12, 7, 8)])
def test_strict_excludes_exactly_the_lattice_points_at_gamma(n, n1, rank):
    gamma = _lattice_gamma(n, n1, rank)
    at_gamma = np.isclose(np.abs(lattice_correlation(n - n1, n1)), gamma, rtol=1e-12, atol=0)
    assert at_gamma.any()
    np.testing.assert_array_equal(
        discarded_lattice(n - n1, n1, gamma, False) & ~discarded_lattice(n - n1, n1, gamma, True), at_gamma
    )
    q_inclusive = naive_bayes_log_discard_probability(ALPHAS, n - n1, n1, gamma, strict=False)
    q_strict = naive_bayes_log_discard_probability(ALPHAS, n - n1, n1, gamma, strict=True)
    assert np.all(q_strict < q_inclusive)
    # a γ strictly between lattice values: both events are the same
    between = gamma * (1 - 1e-6)
    np.testing.assert_array_equal(
        naive_bayes_log_discard_probability(ALPHAS, n - n1, n1, between, strict=False),
        naive_bayes_log_discard_probability(ALPHAS, n - n1, n1, between, strict=True),
    )


@pytest.mark.parametrize(("n", "n1", "gamma", "strict"), [(9, 5, 0.3, False), (12, 5, 0.25, True), (11, 3, 0.5, False)])
def test_lattice_with_fine_simpson_equals_exact_integral(n, n1, gamma, strict):
    y = np.r_[np.zeros(n - n1), np.ones(n1)].astype(int)
    exact = brute_force_q(y, ALPHAS, gamma, strict, EXACT)
    lattice_exact = np.exp(
        naive_bayes_log_discard_probability(ALPHAS, n - n1, n1, gamma, strict=strict, theta_rule=EXACT)
    )
    np.testing.assert_allclose(lattice_exact, exact, rtol=1e-12, atol=1e-14)
    fine = np.exp(
        naive_bayes_log_discard_probability(ALPHAS, n - n1, n1, gamma, strict=strict, theta_rule=simpson_rule(2001))
    )
    np.testing.assert_allclose(fine, exact, rtol=0, atol=1e-8)


def test_default_rule_is_exact_gauss_legendre():
    from hdbayes.quadrature import gauss_legendre_rule

    alpha = inverse_gamma_midpoint_grid(0.5, 5.0, 30).nodes
    default = naive_bayes_log_discard_probability(alpha, 40, 60, 0.2)
    np.testing.assert_array_equal(
        default, naive_bayes_log_discard_probability(alpha, 40, 60, 0.2, theta_rule=gauss_legendre_rule(51))
    )
    # exact: more nodes change nothing but rounding
    more = naive_bayes_log_discard_probability(alpha, 40, 60, 0.2, theta_rule=gauss_legendre_rule(90))
    np.testing.assert_allclose(more, default, rtol=0, atol=1e-13)
    # the thesis's 21 Simpson points are measurably off (a different rule is not ignored or cached wrongly)
    thesis = naive_bayes_log_discard_probability(alpha, 40, 60, 0.2, theta_rule=simpson_rule(21))
    assert np.abs(thesis - default).max() > 1e-6
    np.testing.assert_allclose(thesis, default, atol=1e-2)


def test_selected_features_agree_with_the_lattice_classification():
    """The lattice point of every real feature is classified as the selection classified it."""
    rng = np.random.default_rng(4)
    n, p = 30, 400
    y = rng.integers(0, 2, size=n)
    X = rng.integers(0, 2, size=(n, p))
    n1 = int(y.sum())
    i1 = y @ X
    i0 = X.sum(axis=0) - i1
    scores = abs_correlation(X, y)
    # the same sums give bit-identical correlations on the lattice
    np.testing.assert_array_equal(scores, np.abs(lattice_correlation(n - n1, n1))[i0, i1])
    seen = set()
    for k in (1, 5, 17, 60, 200):
        sel = select_features(X, y, n_features_to_select=k, random_state=k)
        seen.add(sel.strict)
        mask = discarded_lattice(n - n1, n1, sel.threshold, sel.strict)
        rest = np.setdiff1d(np.arange(p), sel.indices)
        assert mask[i0[rest], i1[rest]].all()
        kept = mask[i0[sel.indices], i1[sel.indices]]
        if sel.strict:
            assert not kept.any()
        else:
            np.testing.assert_allclose(scores[sel.indices][kept], sel.threshold, rtol=THRESHOLD_RTOL)
    assert seen == {True, False}  # both kinds of selection occurred


# ---------------------------------------------------------------------------
# limits and monotonicity
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n0", "n1", "gamma", "strict"), [(4, 5, 0.3, False), (50, 70, 0.21, False), (30, 30, 0.36, True)]
)
def test_large_alpha_limit_is_the_null_discard_probability(n0, n1, gamma, strict):
    """α → ∞: φ_0 = φ_1 = θ, so the feature is independent of y."""
    q = np.exp(
        naive_bayes_log_discard_probability([1e9], n0, n1, gamma, strict=strict, theta_rule=gauss_legendre_rule(80))
    )
    assert q[0] == pytest.approx(null_discard_probability(n0, n1, gamma, strict), abs=1e-6)


def test_small_alpha_limit():
    """α → 0: each φ_c is 0 or 1 (prob. 1 − θ, θ); only class-constant features x = y or 1 − y pass.

    q → ∫ θ² + (1 − θ)² dθ = 2/3 for any γ < 1.
    """
    for n0, n1, gamma in [(4, 5, 0.3), (100, 100, 0.27), (20, 42, 0.5)]:
        q = np.exp(naive_bayes_log_discard_probability([1e-9], n0, n1, gamma))
        assert q[0] == pytest.approx(2 / 3, abs=1e-6)


@pytest.mark.parametrize("gamma", [0.13, 0.21, 0.27, 0.36])
def test_q_increasing_in_alpha_on_the_thesis_grid(gamma):
    """Thesis §2.3.5 sizes (n = 200, γ of Table 2.3); q grows towards 'weaker relationship'."""
    alpha = inverse_gamma_midpoint_grid(0.5, 5.0, 30).nodes
    log_q = naive_bayes_log_discard_probability(alpha, 100, 100, gamma)
    assert np.all(np.diff(log_q) > 0)
    assert np.all(log_q < 0)


def test_q_is_not_monotone_for_all_alpha():
    """Documents a property the thesis glosses over: below α ≈ 1, q rises again towards 2/3."""
    log_q = naive_bayes_log_discard_probability([1e-3, 1.0, 1e3], 100, 100, 0.27)
    assert log_q[0] > log_q[1] < log_q[2]


def test_q_in_unit_interval_and_special_thresholds():
    alpha = np.array([0.5, 5.0, 500.0])
    log_q = naive_bayes_log_discard_probability(alpha, 10, 13, 0.3)
    assert np.all((log_q < 0) & np.isfinite(log_q))
    # γ = 1 inclusive: every feature is discarded
    np.testing.assert_allclose(naive_bayes_log_discard_probability(alpha, 10, 13, 1.0), 0.0, atol=1e-13)
    # γ = 0 strict: nothing can have |COR| < 0
    assert np.all(np.isneginf(naive_bayes_log_discard_probability(alpha, 10, 13, 0.0, strict=True)))
    # γ = 0 inclusive: only features with COR exactly 0 (at least the constant ones)
    assert np.all(np.isfinite(naive_bayes_log_discard_probability(alpha, 10, 13, 0.0)))


def test_log_q_accurate_when_q_is_tiny_or_near_one():
    alpha = np.array([2.6, 2543.14])
    log_q = naive_bayes_log_discard_probability(alpha, 100, 100, 0.5)
    assert np.all(log_q < 0) and log_q[1] > -1e-6  # q ≈ 1 − tiny, still < 1
    tiny = naive_bayes_log_discard_probability(alpha, 300, 300, 0.0)
    assert np.all(np.isfinite(tiny))


def test_input_errors():
    with pytest.raises(ValueError, match="alpha must be finite and > 0"):
        naive_bayes_log_discard_probability([1.0, 0.0], 4, 5, 0.3)
    with pytest.raises(ValueError, match="alpha must be finite and > 0"):
        naive_bayes_log_discard_probability([np.inf], 4, 5, 0.3)
    with pytest.raises(ValueError, match="both classes need at least one case"):
        naive_bayes_log_discard_probability([1.0], 0, 5, 0.3)


# ---------------------------------------------------------------------------
# the lattice of correlations (thesis eq. 2.45–2.46, Fig. 2.3)
# ---------------------------------------------------------------------------


def _thesis_cor(i0, i1, n, ybar):
    m = i0 + i1
    if m == 0 or m == n:
        return 0.0
    return (-ybar * i0 + (1 - ybar) * i1) / (math.sqrt(n * ybar * (1 - ybar)) * math.sqrt(m - m * m / n))


def test_lattice_correlation_matches_eq_2_46():
    n0, n1 = 7, 11
    cor = lattice_correlation(n0, n1)
    assert cor.shape == (n0 + 1, n1 + 1)
    for i0 in range(n0 + 1):
        for i1 in range(n1 + 1):
            assert cor[i0, i1] == pytest.approx(_thesis_cor(i0, i1, n0 + n1, n1 / (n0 + n1)), abs=1e-14)


@pytest.mark.parametrize(("n0", "n1"), [(8, 14), (5, 5), (1, 20), (37, 52)])
def test_lattice_flip_symmetry(n0, n1):
    cor = lattice_correlation(n0, n1)
    np.testing.assert_allclose(cor, -cor[::-1, ::-1], rtol=0, atol=1e-14)
    assert cor[0, 0] == 0.0 and cor[n0, n1] == 0.0
    assert cor[0, n1] == pytest.approx(1.0) and cor[n0, 0] == pytest.approx(-1.0)
    # the mask is exactly symmetric although the floating-point values need not be
    for gamma in (0.1, 0.3, _lattice_gamma(n0 + n1, n1, 4)):
        for strict in (False, True):
            mask = discarded_lattice(n0, n1, gamma, strict)
            np.testing.assert_array_equal(mask, mask[::-1, ::-1])


class TestThesisFigure23:
    """n = 22, ȳ = 14/22, γ = 0.2 (thesis Fig. 2.3)."""

    n0, n1, gamma = 8, 14, 0.2

    def regions(self):
        cor = lattice_correlation(self.n0, self.n1)
        return cor, cor > self.gamma, cor < -self.gamma

    def test_region_structure(self):
        cor, high_plus, high_minus = self.regions()
        np.testing.assert_array_equal(np.argwhere(cor == 0), [[0, 0], [4, 7], [8, 14]])  # L0
        np.testing.assert_array_equal(high_plus, high_minus[::-1, ::-1])  # flip swaps H+ and H−
        np.testing.assert_array_equal(discarded_lattice(self.n0, self.n1, self.gamma, False), ~(high_plus | high_minus))
        # for each I1, {I0 : Cor > γ} is a prefix {0..r_I1}, and r_I1 is non-decreasing in I1
        r = []
        for i1 in range(self.n1 + 1):
            column = high_plus[:, i1]
            count = int(column.sum())
            np.testing.assert_array_equal(column, np.arange(self.n0 + 1) < count)
            r.append(count - 1)
        assert np.all(np.diff(r) >= 0)
        # b0: smallest I1 with Cor(0, I1) > γ, by the (floor + 1 version of the) thesis formula
        x = 1 / (1 / 22 + (1 - 14 / 22) / (22 * 14 / 22 * self.gamma**2))
        b0 = math.floor(x + 1e-12) + 1
        assert b0 == int(np.argmax(high_plus[0]))
        assert r[b0 - 1] == -1 and r[b0] == 0

    def test_q_equals_thesis_H_plus_algorithm(self):
        """q = 1 − 2 P(H+) with the recursions of eq. 2.57–2.63, on a symmetric interior rule."""
        n0, n1, gamma = self.n0, self.n1, self.gamma
        n, ybar = n0 + n1, n1 / (n0 + n1)
        rule = gauss_legendre_rule(20)
        for alpha in (2.6, 11.45, 279.6):
            total = 0.0
            for theta, w in zip(rule.nodes, rule.weights):
                a, b = alpha * theta, alpha * (1 - theta)

                def pmf(size):
                    p = [math.prod((b + l - 1) / (a + b + l - 1) for l in range(1, size + 1))]
                    for i in range(1, size + 1):
                        p.append(p[-1] * (size - i + 1) / i * (a + i - 1) / (b + size - i))
                    return p

                p0, p1 = pmf(n0), pmf(n1)
                h_plus = 0.0
                for i1 in range(n1 + 1):
                    for i0 in range(n0 + 1):
                        if _thesis_cor(i0, i1, n, ybar) > gamma:
                            h_plus += p0[i0] * p1[i1]
                total += w * h_plus
            q = np.exp(naive_bayes_log_discard_probability([alpha], n0, n1, gamma, theta_rule=rule))[0]
            assert q == pytest.approx(1 - 2 * total, abs=1e-13)


def test_symmetry_trick_fails_on_an_asymmetric_rule_but_lattice_sum_does_not():
    """The direct sum over the discarded region does not rely on θ-grid symmetry."""
    nodes = np.array([0.1, 0.35, 0.8])
    rule = QuadratureRule(nodes, np.array([0.3, 0.3, 0.4]))
    y = np.r_[np.zeros(4), np.ones(5)].astype(int)
    q = np.exp(naive_bayes_log_discard_probability([3.0], 4, 5, 0.3, theta_rule=rule))
    np.testing.assert_allclose(q, brute_force_q(y, [3.0], 0.3, False, rule), rtol=1e-12)


@pytest.mark.parametrize("n0, n1", [(1, 1), (5, 7), (255, 3), (256, 256), (600, 431)])
@pytest.mark.parametrize("gamma", [0.0, 0.05, 0.3, 0.999])
@pytest.mark.parametrize("strict", [False, True])
def test_runs_by_row_are_the_runs_of_the_whole_mask(n0, n1, gamma, strict):
    """The discarded lattice formed a block of rows at a time (O(n) memory: 167 MB peak at n0 = n1 = 10^4, 3.3 s)
    gives exactly the runs of the whole mask, across block boundaries."""
    from hdbayes.selection_bias.adjustment import _runs, discarded_runs_by_row

    whole = _runs(discarded_lattice(n0, n1, gamma, strict))
    by_row = discarded_runs_by_row(n0, n1, gamma, strict)
    for a, b in zip(whole, by_row):
        np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------------------------
# the fused kernel (issue 14): Beta-binomial pmfs by their ratio recurrence, O(n) memory per (α, θ)
# ---------------------------------------------------------------------------


def _exact_beta_binomial(n, a, b):
    """P(I | n, a, b), I = 0..n, in exact rational arithmetic (a, b: Fractions, a + b > 0)."""
    from fractions import Fraction

    up = [Fraction(1)]
    down = [Fraction(1)]
    for step in range(n):
        up.append(up[-1] * (a + step))
        down.append(down[-1] * (b + step))
    total = math.prod((a + b + step for step in range(n)), start=Fraction(1))
    return [math.comb(n, i) * up[i] * down[n - i] / total for i in range(n + 1)]


# (a, b): U-shaped (α < 2), the boundary α = 2, unimodal with underflowing tails, the point masses of θ = 0, 1
BETA_BINOMIAL_CASES = [(0.3, 1.2), (1e-7, 0.9), (0.5, 1.5), (2.5, 7.5), (180.0, 420.0), (3e4, 7e4), (0.0, 3.0),
                       (3.0, 0.0), (1e-6, 2543.0)]  # fmt: skip


@pytest.mark.parametrize("n", [1, 2, 9, 160, 301])
@pytest.mark.parametrize(("a", "b"), BETA_BINOMIAL_CASES)
def test_beta_binomial_recurrence_against_exact_rationals(n, a, b):
    """The scaled recurrence (started at the mode, normalised by its sum) is within a few ulps per entry of the
    exact pmf of the same floating-point (a, b); only entries below 1e-290 of the mode may be left at 0."""
    from fractions import Fraction

    from hdbayes.selection_bias.adjustment import _beta_binomial_pmf_table, _beta_binomial_scaled

    exact = np.array([float(p) for p in _exact_beta_binomial(n, Fraction(a), Fraction(b))])
    out = np.zeros(n + 1)
    lo, hi, total = _beta_binomial_scaled(n, a, b, out)
    assert total >= 1.0 and np.all(out[:lo] == 0) and np.all(out[hi + 1 :] == 0)
    pmf = out / total
    big = exact > 1e-280 * exact.max()
    np.testing.assert_allclose(pmf[big], exact[big], rtol=2e-13, atol=0)
    assert np.all(pmf[~big] <= 1e-280 * exact.max())
    alpha = a + b
    table = _beta_binomial_pmf_table(n, [alpha], [a / alpha])[0, 0]  # the mixture's tables, same recurrence
    np.testing.assert_allclose(table[big], exact[big], rtol=1e-12, atol=0)


def _exact_discard_split(n0, n1, gamma, strict, alpha, theta):
    """(q_θ, 1 − q_θ) at one (α, θ) node, exactly, over the lattice mask of the selection."""
    from fractions import Fraction

    a, b = Fraction(alpha * theta), Fraction(alpha * (1.0 - theta))
    p0, p1 = _exact_beta_binomial(n0, a, b), _exact_beta_binomial(n1, a, b)
    mask = discarded_lattice(n0, n1, gamma, strict)
    inside = sum(p0[i] * sum(p1[j] for j in np.flatnonzero(mask[i])) for i in range(n0 + 1))
    outside = sum(p0[i] * sum(p1[j] for j in np.flatnonzero(~mask[i])) for i in range(n0 + 1))
    return float(inside), float(outside)


@pytest.mark.parametrize(
    ("n0", "n1", "gamma", "strict", "alpha", "theta"),
    [
        (60, 45, 0.1, False, 1.5, 0.15),  # U-shaped pmfs
        (60, 45, 0.1, False, 60.0, 0.4),
        (60, 45, 0.02, True, 1e-3, 1 / 3),  # b = α(1 − θ) tiny: b + (n − i − 1) must not round b away
        (80, 80, 0.45, False, 2543.0, 0.4),  # q = 1 − 4e-8: 1 − q from the kept region
        (80, 80, 0.6, False, 1e6, 0.5),  # q = 1 − 3e-14
        (30, 90, 0.0, False, 7.0, 0.02),  # only |COR| = 0 discarded: q small
    ],
)
def test_q_and_one_minus_q_against_exact_rationals(n0, n1, gamma, strict, alpha, theta):
    """One θ node (a one-node rule): q and 1 − q both to ~1e-14 relative, even when 1 − q is 1e-14 (the
    exponentiated tables of cumulated logs used before lost 1e-12 in q and all of 1 − q there)."""
    inside, outside = _exact_discard_split(n0, n1, gamma, strict, alpha, theta)
    rule = QuadratureRule(np.array([theta]), np.array([1.0]))
    log_q = naive_bayes_log_discard_probability([alpha], n0, n1, gamma, strict=strict, theta_rule=rule)[0]
    assert np.exp(log_q) == pytest.approx(inside, rel=1e-13)
    assert -np.expm1(log_q) == pytest.approx(outside, rel=1e-12)


def test_half_of_a_symmetric_rule_gives_the_whole_rule():
    """θ ↔ 1 − θ: on the flip-symmetric region the nodes above 1/2 repeat those below (to rounding)."""
    from hdbayes.selection_bias.adjustment import _discarded_runs_csr, _fused_discarded_mass, exact_theta_rule

    n0, n1, gamma = 70, 91, 0.13
    alpha = np.array([0.2, 1.9, 2.0, 35.0, 4e4])
    offsets, starts, stops, symmetric = _discarded_runs_csr(n0, n1, gamma, False)
    assert symmetric
    rule = exact_theta_rule(n0 + n1)
    inside, outside = _fused_discarded_mass(alpha, rule.nodes, n0, n1, offsets, starts, stops)
    # (to 1e-12: a node near 1 carries an absolute, not a relative, rounding error, which its mirror does not)
    np.testing.assert_allclose(inside, inside[:, ::-1], rtol=1e-12)
    np.testing.assert_allclose(outside, outside[:, ::-1], rtol=1e-12)
    np.testing.assert_allclose(inside + outside, 1.0, rtol=1e-15)
    whole = np.log(inside @ rule.weights)
    np.testing.assert_allclose(naive_bayes_log_discard_probability(alpha, n0, n1, gamma), whole, rtol=1e-13)
    # a rule that is not symmetric is evaluated at all its nodes
    shifted = QuadratureRule(rule.nodes * 0.999, rule.weights)
    inside, _ = _fused_discarded_mass(alpha, shifted.nodes, n0, n1, offsets, starts, stops)
    np.testing.assert_allclose(
        naive_bayes_log_discard_probability(alpha, n0, n1, gamma, theta_rule=shifted),
        np.log(inside @ shifted.weights),
        rtol=1e-14,
    )


def test_threads_change_no_bit(monkeypatch):
    from hdbayes.selection_bias import adjustment

    alpha = np.array([0.4, 3.0, 300.0])
    alone = naive_bayes_log_discard_probability(alpha, 150, 170, 0.11)
    monkeypatch.setattr(adjustment, "_THREADING_FROM", 0)
    monkeypatch.setattr("hdbayes._threads.usable_cores", lambda: 2)
    np.testing.assert_array_equal(naive_bayes_log_discard_probability(alpha, 150, 170, 0.11), alone)


@pytest.mark.parametrize("n", [199, 200, 601])
def test_exact_theta_rule_beyond_the_dense_method(n):
    """Above 100 nodes the rule comes from scipy's roots_legendre: the same Gauss–Legendre rule (exact for θ^j,
    j ≤ n + 1), read-only, computed once."""
    from hdbayes.quadrature import gauss_legendre_rule as dense_rule
    from hdbayes.selection_bias.adjustment import exact_points, exact_theta_rule

    rule = exact_theta_rule(n)
    assert rule is exact_theta_rule(n) and not rule.weights.flags.writeable
    size = exact_points(n)
    assert rule.nodes.size == size > 100
    dense = dense_rule(size)
    np.testing.assert_allclose(rule.nodes, dense.nodes, rtol=0, atol=1e-15)
    np.testing.assert_allclose(rule.weights, dense.weights, rtol=1e-7, atol=1e-15)
    for j in (0, 1, 7, n // 2, n + 1):
        assert rule.weights @ rule.nodes**j == pytest.approx(1 / (j + 1), rel=1e-11)


def test_converged_rule_instead_of_a_large_exact_one(monkeypatch):
    """With a tolerance and an exact rule above _CONVERGED_FROM nodes, Gauss–Legendre rules of doubling size are
    used until two agree to the tolerance; the result is then within the tolerance of the exact rule's (checked
    here with the thresholds lowered so that the exact rule is cheap: 151 nodes, rules of 8, 16, 32, … nodes)."""
    from hdbayes.selection_bias import adjustment

    monkeypatch.setattr(adjustment, "_CONVERGED_FROM", 20)
    monkeypatch.setattr(adjustment, "_CONVERGED_FIRST", 8)
    sizes = []
    original = adjustment._legendre_rule
    monkeypatch.setattr(adjustment, "_legendre_rule", lambda size: sizes.append(size) or original(size))
    alpha = np.array([0.02, 0.9, 2.0, 14.0, 600.0, 1e5])
    n0, n1, gamma = 130, 170, 0.09
    exact = naive_bayes_log_discard_probability(alpha, n0, n1, gamma)
    for tolerance in (1e-4, 1e-8, 1e-11):
        sizes.clear()
        converged = naive_bayes_log_discard_probability(alpha, n0, n1, gamma, tolerance=tolerance)
        assert sizes[:2] == [8, 16] and all(b == 2 * a for a, b in zip(sizes, sizes[1:]))
        np.testing.assert_allclose(converged, exact, rtol=0, atol=tolerance)
    # a tolerance no rule below the exact one meets: the exact rule, bit for bit
    np.testing.assert_array_equal(naive_bayes_log_discard_probability(alpha, n0, n1, gamma, tolerance=1e-300), exact)
    # the exact rule when it is small enough
    monkeypatch.setattr(adjustment, "_CONVERGED_FROM", 1025)
    np.testing.assert_array_equal(naive_bayes_log_discard_probability(alpha, n0, n1, gamma, tolerance=1e-3), exact)
    with pytest.raises(ValueError, match="either theta_rule or tolerance"):
        naive_bayes_log_discard_probability(alpha, n0, n1, gamma, tolerance=1e-6, theta_rule=simpson_rule(5))
    with pytest.raises(ValueError, match="tolerance"):
        naive_bayes_log_discard_probability(alpha, n0, n1, gamma, tolerance=-1.0)


def test_converged_rule_at_n_5000_is_within_its_tolerance_of_the_exact_rule(monkeypatch):
    """The real thresholds: n = 5000 (exact rule 2501 nodes) with the estimator's tolerance for p − k = 10^6."""
    from hdbayes.selection_bias import adjustment

    alpha = np.array([0.3, 40.0, 3e4, 1e9])
    sizes = []
    original = adjustment._log_q_with_rule

    def spy(alpha, n0, n1, runs, rule):
        sizes.append(rule.nodes.size)
        return original(alpha, n0, n1, runs, rule)

    tolerance = 1e-6 / 1e6
    exact = naive_bayes_log_discard_probability(alpha, 2400, 2600, 0.03)
    monkeypatch.setattr(adjustment, "_log_q_with_rule", spy)
    converged = naive_bayes_log_discard_probability(alpha, 2400, 2600, 0.03, tolerance=tolerance)
    assert sizes[0] == 128 and max(sizes) < 2501
    np.testing.assert_allclose(converged, exact, rtol=0, atol=tolerance)


def test_beta_binomial_recurrence_next_to_alpha_2():
    """α = 2 + 1e-15: the mode formula divides by α − 2 (a huge quotient, clamped to n), still the exact pmf."""
    from fractions import Fraction

    from hdbayes.selection_bias.adjustment import _beta_binomial_scaled

    for a, b in ((1.9, 0.1 + 1e-15), (0.1, 1.9 + 4e-15)):
        exact = np.array([float(p) for p in _exact_beta_binomial(300, Fraction(a), Fraction(b))])
        out = np.zeros(301)
        _, _, total = _beta_binomial_scaled(300, a, b, out)
        np.testing.assert_allclose(out / total, exact, rtol=1e-12, atol=0)
    # n = 20 000: (na − b − n + 1)/(α − 2) ≈ 4e19 would overflow an int64; against the log-Gamma tables
    from hdbayes.special import beta_binomial_log_pmf_table

    a, b = 1.9, np.nextafter(2.0, 3.0) - 1.9
    out = np.zeros(20_001)
    _, _, total = _beta_binomial_scaled(20_000, a, b, out)
    reference = np.exp(beta_binomial_log_pmf_table(a, b, 20_000))
    np.testing.assert_allclose(out / total, reference, rtol=1e-8, atol=1e-300)
