"""The adjustment factor of the per-class-variance Gaussian model and the quadratic-form tails under it."""

import numpy as np
import pytest
from scipy import stats

from hdbayes.selection_bias.gaussian._factor import (
    between_class_weights,
    class_count_eigenvalues,
    gaussian_f_series,
    per_class_log_discard_probability_given,
)
from hdbayes.selection_bias.gaussian.per_class import PerClassVarianceAdjustment, class_variance_pool
from hdbayes.selection_bias.gaussian.per_feature import (
    PerFeatureGaussianAdjustment,
    log_discard_probability_given_ratio,
)
from hdbayes.selection_bias.quadratic_form import log_quadratic_form_tails

COUNTS = (38, 8, 10)  # lymphoma's training folds: DLBCL, FL, CLL


# ----- tails of Q = Σ λ_j χ²_{h_j} --------------------------------------------------------------


@pytest.mark.parametrize(
    "a, b, gamma",
    [(2, 59, 4.0), (2, 59, 0.1), (2, 59, 40.0), (3, 79, 10.0), (2, 3, 2.0), (5, 7, 30.0), (1, 1, 1.0), (4, 200, 60.0),
     (1, 300, 100.0), (1, 300, 30.0), (1, 40, 50.0), (2, 1000, 200.0), (1, 7, 300.0), (1, 5000, 50.0),
     (2, 20000, 30.0)],
)  # fmt: skip
def test_tails_are_the_central_f_distribution(a, b, gamma):
    """F = (χ²_a/a)/(χ²_b/b) ≤ γ iff χ²_a − (γa/b) χ²_b ≤ 0: both tails against scipy, tails down to e^{−168}
    and up to 20 000 degrees of freedom, each probability to 1e-10 relative (measured at most 5.4e-12)."""
    lower, upper = log_quadratic_form_tails(np.array([1.0, -gamma * a / b]), np.array([float(a), float(b)]))
    # relative errors of the probabilities: exp(log − log_exact) − 1
    assert abs(np.expm1(lower - stats.f.logcdf(gamma, a, b))) < 1e-10
    assert abs(np.expm1(upper - stats.f.logsf(gamma, a, b))) < 1e-10


@pytest.mark.parametrize("weights", [(1.0, 3.0, 2.0), (1e-3, 5.0, 1e3), (7.0, 1e-6, 0.5), (1.0, 1.0, 1e6)])
def test_tails_of_exponentials_in_closed_form(weights):
    """With h = 2 every χ²_2 is 2·Exp(1): P(λ1 E1 + λ3 E3 < λ2 E2) = 1 / ((1 + λ1/λ2)(1 + λ3/λ2)),
    an exact oracle with weights of both signs spanning 12 orders of magnitude."""
    l1, l2, l3 = weights
    lower, upper = log_quadratic_form_tails(np.array([l1, -l2, l3]), np.array([2.0, 2.0, 2.0]))
    exact = 1.0 / ((1.0 + l1 / l2) * (1.0 + l3 / l2))
    assert lower == pytest.approx(np.log(exact), rel=1e-11)
    assert upper == pytest.approx(np.log1p(-exact), rel=1e-11)


def test_tails_ignore_terms_without_degrees_of_freedom_and_one_sided_forms():
    lower, upper = log_quadratic_form_tails(np.array([1.0, -0.5, 9.0]), np.array([2.0, 2.0, 0.0]))
    assert np.exp(lower) == pytest.approx(0.5 / 1.5, rel=1e-12)
    lower, upper = log_quadratic_form_tails(np.array([1.0, 2.0]), np.array([3.0, 1.0]))
    assert lower == -np.inf and upper == 0.0


# ----- a(r; ε): the F-statistic of one feature with class variances ε ------------------------------


def test_between_class_weights_against_a_dense_eigendecomposition():
    rng = np.random.default_rng(1)
    for counts in ([5.0, 9.0], [38.0, 8.0, 10.0], [26.0, 10.0, 16.0, 23.0], [3.0, 4.0, 5.0, 6.0, 7.0]):
        counts = np.array(counts)
        for r in (0.0, 0.3, 1e12):
            variances = r + rng.uniform(0.2, 3.0, counts.shape[0]) / counts
            root = np.sqrt(variances)
            matrix = np.diag(counts) - np.outer(counts, counts) / counts.sum()
            dense = np.sort(np.linalg.eigvalsh(root[:, None] * matrix * root[None, :]))[1:]
            assert np.sort(between_class_weights(variances, counts)) == pytest.approx(dense, rel=1e-9)


@pytest.mark.parametrize("counts, gamma", [((20, 21, 21), 4.0), (COUNTS, 30.0), ((23, 20, 12, 8), 10.0), ((9, 7), 3.0)])
def test_equal_class_variances_give_the_noncentral_f_series(counts, gamma):
    """ε = 1 for every class: the quadratic-form tail equals the per-feature model's exact series (P12–P14)
    to 1e-11 in log a, from r = e^{−20} to e^{30} (measured at most 7e-15)."""
    eigenvalues = class_count_eigenvalues(counts)
    log_f = gaussian_f_series(gamma, counts, tol=1e-30)
    ones = np.ones(len(counts))
    for log_r in np.linspace(-20.0, 30.0, 26):
        ours = per_class_log_discard_probability_given(log_r, ones, np.array(counts, dtype=float), gamma)
        series = log_discard_probability_given_ratio(log_r, eigenvalues, log_f)
        assert ours == pytest.approx(series, rel=1e-11, abs=1e-13)


def simulate_f(rng, log_r, epsilon, counts, n_draws):
    """F-statistics of features with class-mean spread r and class variances ε, drawn directly (ν = 0)."""
    counts = np.asarray(counts, dtype=float)
    n, G = counts.sum(), counts.shape[0]
    epsilon = np.broadcast_to(epsilon, (n_draws, G))
    means = rng.standard_normal((n_draws, G)) * np.exp(0.5 * log_r)
    xbar = means + rng.standard_normal((n_draws, G)) * np.sqrt(epsilon / counts)
    between = ((xbar - (xbar @ counts / n)[:, None]) ** 2) @ counts
    within = (epsilon * rng.chisquare(counts - 1, size=(n_draws, G))).sum(axis=1)
    return between / (G - 1) / (within / (n - G))


@pytest.mark.parametrize("log_r", (-3.0, 0.0, 2.0))
def test_unequal_class_variances_against_simulation(log_r):
    """Class variances 1 : 0.3 : 2.5 (a wide large class and narrow small ones do not give a noncentral F):
    a(r; ε) against 4·10^5 simulated F-statistics, within 4.5 standard errors."""
    epsilon = np.array([1.0, 0.3, 2.5])
    f = simulate_f(np.random.default_rng(7), log_r, epsilon, COUNTS, 4 * 10**5)
    for gamma in (3.0, 12.0):
        fraction = np.mean(f <= gamma)
        se = np.sqrt(fraction * (1 - fraction) / f.shape[0])
        exact = np.exp(per_class_log_discard_probability_given(log_r, epsilon, np.array(COUNTS, float), gamma))
        assert abs(exact - fraction) < 4.5 * se


# ----- A(ρ) ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def adjustment():
    return PerClassVarianceAdjustment.create(8.0, COUNTS, alpha1_mu=3.0, alpha1_x=10.0, alpha2_x=4.0, n_pool=256)


def test_pool_is_fixed_and_has_the_prior_distribution():
    pool = class_variance_pool(4.0, 3, n_pool=4096)
    assert np.array_equal(pool, class_variance_pool(4.0, 3, n_pool=4096))
    # ε = α2/χ²_α2: KS against the inverse-χ² law, each class's column
    for g in range(3):
        assert stats.kstest(pool[:, g], stats.invgamma(2.0, scale=2.0).cdf).pvalue > 0.01


@pytest.mark.parametrize("alpha2_x", (0.3, 4.0, 250.0))
def test_pool_maps_the_sobol_points_through_scipys_gamma_quantiles(alpha2_x):
    """The pool's quantiles come from scipy.special (gammaincinv), not scipy.stats: the same numbers as
    ``stats.gamma.ppf`` (which computes them so) on the same scrambled Sobol points (relative 1e-14)."""
    from scipy.stats import qmc

    uniforms = qmc.Sobol(3, scramble=True, seed=7).random(64)
    expected = alpha2_x / (2.0 * stats.gamma.ppf(uniforms, alpha2_x / 2.0))
    np.testing.assert_allclose(class_variance_pool(alpha2_x, 3, n_pool=64, seed=7), expected, rtol=1e-14)


@pytest.mark.parametrize("log_rho", (-5.0, -1.0, 1.0))
def test_factor_matches_a_long_monte_carlo(adjustment, log_rho):
    """A(ρ) against 4·10^5 features drawn from the whole prior (r = ρT, ε_g ~ Inv-χ²(α2_x, 1), class means and
    within sums of squares), within 4.5 standard errors plus the pool's measured relative error (2e-3 of 1 − A
    at 256 points)."""
    rng = np.random.default_rng(int(log_rho) + 40)
    n_draws = 4 * 10**5
    log_r = log_rho + np.log(rng.f(10.0, 3.0, size=n_draws))
    epsilon = 4.0 / rng.chisquare(4.0, size=(n_draws, 3))
    f = simulate_f(rng, log_r[:, None], epsilon, COUNTS, n_draws)
    fraction = np.mean(f <= 8.0)
    se = np.sqrt(fraction * (1 - fraction) / n_draws)
    exact = np.exp(adjustment.log_discard_probability([log_rho])[0])
    assert abs(exact - fraction) < 4.5 * se + 2e-3 * (1 - fraction)


def test_large_alpha2_gives_the_per_feature_factor():
    """α2_x → ∞: every class has the feature's variance, and A is the per-feature model's (to 1e-7: the pool
    of α2_x = 10^15 still scatters ε by 4e-8)."""
    log_rho = np.linspace(-10.0, 10.0, 21)
    ours = PerClassVarianceAdjustment.create(30.0, COUNTS, alpha2_x=1e15, n_pool=4)
    theirs = PerFeatureGaussianAdjustment.create(30.0, COUNTS)
    assert np.max(np.abs(ours.log_discard_probability(log_rho) - theirs.log_discard_probability(log_rho))) < 1e-7


def test_factor_decreases_in_rho_and_is_finite(adjustment):
    """Over the grid's range of log ρ (−12, 12) A decreases from the heteroscedastic null's value to e^{−11.57} (it
    falls like ρ^{−(G−1)/2})."""
    values = adjustment.log_discard_probability(np.linspace(-12.0, 12.0, 49))
    assert np.all(np.isfinite(values))
    assert np.all(np.diff(values) < 1e-10)
    assert values[-1] < -11.0


def test_kernel_arguments_are_the_per_feature_ones(adjustment):
    v0, h, log_a, d1, d2, log_norm = adjustment.kernel_arguments()
    assert (h, d1, d2) == (0.5, 10.0, 3.0) and log_a.flags.writeable
    assert log_a.shape == adjustment.log_a.shape


def test_create_validates():
    with pytest.raises(ValueError, match="alpha2_x"):
        PerClassVarianceAdjustment.create(4.0, COUNTS, alpha2_x=0.0)
    with pytest.raises(ValueError, match="threshold"):
        PerClassVarianceAdjustment.create(0.0, COUNTS)
    with pytest.raises(ValueError, match="more cases than classes"):
        PerClassVarianceAdjustment.create(4.0, (1, 1, 1))


def test_equal_weights_split_over_classes_are_as_accurate_as_one_term():
    """Six SSW terms of equal weight and 33 degrees of freedom are one χ²_194 term: the two ways of writing the
    tail agree to 1e-13 in log P (with a step from the largest single h_j they were 2e-9 apart), around the
    factor's transition (G = 6, n = 200, γ = 3.15, ε = 1)."""
    counts = np.array([34.0, 33.0, 33.0, 33.0, 33.0, 34.0])
    c = 3.15 * 5 / (counts.sum() - 6)
    for log_r in (-4.0, -2.0, -1.0, 0.0):
        between = between_class_weights(np.exp(log_r) + 1.0 / counts, counts)
        split = log_quadratic_form_tails(np.concatenate([between, -c * np.ones(6)]),
                                         np.concatenate([np.ones(5), counts - 1.0]))[0]  # fmt: skip
        merged = log_quadratic_form_tails(np.concatenate([between, [-c]]), np.concatenate([np.ones(5), [194.0]]))[0]
        assert split == pytest.approx(merged, rel=1e-13, abs=1e-15)
