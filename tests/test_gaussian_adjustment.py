"""Tests for hdbayes.selection_bias.gaussian_adjustment: A(τ^μ) of the Gaussian model (Li 2009, eq. 25–34)."""

import math

import numpy as np
import pytest
from scipy import optimize, stats
from scipy.special import logsumexp

from hdbayes.selection_bias.gaussian._factor import (
    class_count_eigenvalues,
    gaussian_f_series,
    interpolated_per_feature_log_discard_probability,
    new_interpolation_table,
    per_feature_log_discard_probability_at,
)
from hdbayes.selection_bias.gaussian.per_feature import (
    PerFeatureGaussianAdjustment,
    log_discard_probability_given_ratio,
)
from hdbayes.selection_bias.gaussian.shared import (
    GaussianAdjustment,
    gaussian_poisson_means,
    interpolated_log_discard_probability,
    log_discard_probability_at,
)

COUNTS = (34, 33, 33, 33, 33, 34)  # G = 6, n = 200, as in the paper's simulation
G, N = len(COUNTS), sum(COUNTS)
THRESHOLDS = (1.79, 3.15, 4.41, 6.2)  # the paper's γ for k = 1000, 200, 50, 10 (Li 2009, §4.1)


@pytest.fixture(scope="module")
def adjustment():
    return GaussianAdjustment.create(1.79, COUNTS, alpha_x=4.0, w_x=1.0, n_mc=1000, random_state=0)


def f_term(gamma, k, counts=COUNTS):
    """f_k straight from the definition (eq. 30) with scipy's central F cdf."""
    g, n = len(counts), sum(counts)
    return stats.f.cdf(gamma * (g - 1) / (g - 1 + 2 * k), g - 1 + 2 * k, n - g)


# ---------------------------------------------------------------- the series f_k


@pytest.mark.parametrize("gamma", THRESHOLDS)
def test_f_series_matches_definition_decreases_and_truncates(gamma):
    tol = math.exp(-10)
    log_f = gaussian_f_series(gamma, COUNTS)
    f = np.exp(log_f)
    big_k = len(f) - 1
    assert f[0] == pytest.approx(stats.f.cdf(gamma, G - 1, N - G), rel=1e-12)
    np.testing.assert_allclose(f, [f_term(gamma, k) for k in range(big_k + 1)], rtol=1e-12)
    assert np.all(np.diff(f) < 0)
    assert f[-1] > tol  # every kept term is above tol ...
    assert f_term(gamma, big_k + 1) <= tol  # ... and the next one is not


def test_f_series_number_of_terms_for_the_paper_thresholds():
    # K depends only on γ, G − 1 and n − G (eq. 30)
    ks = [len(gaussian_f_series(gamma, COUNTS)) - 1 for gamma in THRESHOLDS]
    assert ks == [13, 19, 25, 33]
    assert len(gaussian_f_series(1.79, (20, 25, 30, 35, 40, 50))) - 1 == 13


def test_f_series_tol_and_edge_cases():
    loose = gaussian_f_series(3.15, COUNTS, tol=1e-3)
    tight = gaussian_f_series(3.15, COUNTS, tol=1e-200)
    assert len(loose) < len(tight)
    np.testing.assert_array_equal(loose, tight[: len(loose)])
    # at least one term, even when f_0 ≤ tol
    assert len(gaussian_f_series(1.79, COUNTS, tol=2.0)) == 1
    # γ = 0: P(F ≤ 0) = 0, so log A = −inf
    log_f = gaussian_f_series(0.0, COUNTS)
    np.testing.assert_array_equal(log_f, [-np.inf])
    assert log_discard_probability_at(1.0, np.array([3.0]), log_f) == -np.inf


# -------------------------------------------- the log-space k-sum against scipy's ncf


@pytest.mark.parametrize("gamma", (1.79, 3.15, 6.2))
@pytest.mark.parametrize("lam", (0.05, 5.0))
def test_series_equals_noncentral_f_cdf(gamma, lam):
    """A pool of one λ: Σ_k f_k Pois(k; λ/τ) = ncf.cdf(γ, G−1, n−G, nc = 2λ/τ)."""
    log_f = gaussian_f_series(gamma, COUNTS, tol=1e-300)
    pool = np.array([lam])
    for tau in np.logspace(-2, 4, 13):
        expected = np.log(stats.ncf.cdf(gamma, G - 1, N - G, 2 * lam / tau))
        assert log_discard_probability_at(tau, pool, log_f) == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_default_truncation_error_is_below_tol():
    log_f = gaussian_f_series(1.79, COUNTS)
    for nc in (0.1, 3.0, 30.0, 100.0):
        exact = stats.ncf.cdf(1.79, G - 1, N - G, nc)
        approx = math.exp(log_discard_probability_at(1.0, np.array([nc / 2]), log_f))
        assert -1e-14 <= exact - approx <= math.exp(-10)


def test_reference_value_p_f_le_2_is_0_5321():
    """Li 2009 §3.3 (eq. 27–30): G = 6, n = 200, P(F ≤ 2) = 0.5321 (a reference value, not the paper's) for the
    standard noncentrality nc = Λ τ^x.

    The series with Poisson mean nc/2 equals ncf.cdf(2, 5, 194, nc), and simulated F statistics
    with class means giving Λ τ^x = nc agree; the paper's half-convention (nc = Λ τ^x / 2 as
    scipy's nc) would give a clearly different probability.
    """
    counts = (33, 33, 33, 33, 34, 34)
    nc = optimize.brentq(lambda c: stats.ncf.cdf(2.0, 5, 194, c) - 0.5321, 0.0, 100.0)
    log_f = gaussian_f_series(2.0, counts, tol=1e-300)
    series = math.exp(log_discard_probability_at(1.0, np.array([nc / 2]), log_f))
    assert series == pytest.approx(stats.ncf.cdf(2.0, 5, 194, nc), rel=1e-12)
    assert series == pytest.approx(0.5321, abs=1e-10)

    # F statistics simulated from class means with Λ(μ) τ^x = nc (τ^x = 1)
    rng = np.random.default_rng(11)
    sizes = np.array(counts)
    direction = rng.standard_normal(G)
    direction -= direction @ sizes / sizes.sum()
    mu = direction * math.sqrt(nc / (sizes @ direction**2))
    f_stats = simulate_f_statistics(rng, counts, np.broadcast_to(mu, (20000, G)), np.ones(20000))
    p_hat = np.mean(f_stats <= 2.0)
    se = math.sqrt(0.5321 * 0.4679 / 20000)
    assert abs(p_hat - series) < 4 * se
    assert abs(stats.ncf.cdf(2.0, 5, 194, nc / 2) - series) > 20 * se


# ------------------------------------------------------- robustness of the log space


def test_extreme_poisson_means_stay_finite_and_accurate():
    log_f = gaussian_f_series(3.15, COUNTS)
    k = np.arange(len(log_f))
    for mu in (1e8, 1e5, 700.0, 50.0, 1e-3, 1e-300):
        value = log_discard_probability_at(1.0, np.array([mu]), log_f)
        expected = logsumexp(log_f + stats.poisson.logpmf(k, mu))
        assert np.isfinite(value)
        assert value == pytest.approx(expected, rel=1e-12)
    # μ → 0 gives f_0 exactly; μ = 0 (a zero λ_m) too
    assert log_discard_probability_at(1.0, np.array([1e-300]), log_f) == pytest.approx(log_f[0], rel=1e-15)
    assert log_discard_probability_at(1.0, np.array([0.0]), log_f) == log_f[0]


def test_pool_average_is_a_log_mean_exp():
    log_f = gaussian_f_series(1.79, COUNTS)
    pool = np.array([0.3, 4.0, 60.0, 2e4])
    singles = [log_discard_probability_at(2.0, pool[m : m + 1], log_f) for m in range(len(pool))]
    assert log_discard_probability_at(2.0, pool, log_f) == pytest.approx(logsumexp(singles) - np.log(4), rel=1e-13)


def test_increasing_in_tau_mu_with_the_right_limits(adjustment):
    tau = np.logspace(-6, 12, 181)
    values = adjustment.log_discard_probability(tau)
    assert np.all(np.isfinite(values))
    assert np.all(np.diff(values) >= 0)
    moderate = (tau >= 1e-3) & (tau <= 1e6)
    assert np.all(np.diff(values[moderate]) > 0)
    # τ^μ → ∞: every class mean equal, the central F cdf f_0
    assert values[-1] == pytest.approx(adjustment.log_f[0], abs=1e-9)
    assert values[-1] <= adjustment.log_f[0]
    assert math.exp(values[-1]) == pytest.approx(stats.f.cdf(1.79, G - 1, N - G), abs=1e-9)
    # τ^μ → 0: A → 0, log A very negative but finite (Poisson means up to ~1e9 here)
    assert values[0] < -1e4
    assert adjustment.log_discard_probability(np.inf) == adjustment.log_f[0]


def test_vectorised_method_keeps_shape_and_matches_scalar_kernel(adjustment):
    tau = np.array([[0.5, 20.0], [300.0, 1e5]])
    out = adjustment.log_discard_probability(tau)
    assert out.shape == (2, 2)
    for t, v in zip(tau.ravel(), out.ravel()):
        assert v == log_discard_probability_at(t, adjustment.poisson_means, adjustment.log_f)
    assert adjustment.log_discard_probability(7.0).shape == ()
    assert adjustment.n_terms == len(adjustment.log_f) == 14


# ------------------------------------------------ the whole estimator against the model


def simulate_f_statistics(rng, counts, means, tau_x):
    """F statistics (eq. 25) of features x_i ~ N(means[r, g_i], 1/tau_x[r]), one per row r."""
    sizes = np.asarray(counts)
    g, n = len(sizes), sizes.sum()
    labels = np.repeat(np.arange(g), sizes)
    reps = means.shape[0]
    x = means[:, labels] + rng.standard_normal((reps, n)) / np.sqrt(tau_x)[:, None]
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    class_means = np.add.reduceat(x, starts, axis=1) / sizes
    grand = x.mean(axis=1, keepdims=True)
    between = ((class_means - grand) ** 2) @ sizes / (g - 1)
    within = ((x - class_means[:, labels]) ** 2).sum(axis=1) / (n - g)
    return between / within


def ncf_cdf(x, dfn, dfd, nc):
    """scipy's ncf.cdf, set to 0 for nc > 1000, where it is < 1e-170 here.

    scipy 1.17 returns garbage there (for x = 1.79, dfn = 5, dfd = 194: 2.4e-91 at nc = 1499
    instead of ~1e-276, NaN for nc in about [1504, 1631], 0 beyond).
    """
    nc = np.asarray(nc)
    return np.where(nc > 1000, 0.0, stats.ncf.cdf(x, dfn, dfd, np.minimum(nc, 1000)))


@pytest.mark.parametrize("tau_mu", (1.0, 100.0, 1e4))
def test_estimator_matches_brute_force_simulation(tau_mu):
    """A(τ^μ) = P(F ≤ γ | y, τ^μ) with μ_g = ν + Z_g/√τ^μ and τ^x from its prior."""
    counts, gamma, alpha_x, w_x, reps = (20, 25, 30, 35, 40, 50), 1.79, 4.0, 1.0, 20000
    rng = np.random.default_rng(int(tau_mu) + 5)
    z = rng.standard_normal((reps, len(counts)))
    t = rng.gamma(alpha_x / 2, 2 / (alpha_x * w_x), size=reps)
    nu = rng.normal(0.0, 3.0, size=(reps, 1))  # irrelevant: F is invariant to a common shift
    f_stats = simulate_f_statistics(rng, counts, nu + z / math.sqrt(tau_mu), t)
    p_hat = np.mean(f_stats <= gamma)

    adj = GaussianAdjustment.create(gamma, counts, alpha_x, w_x, n_mc=reps, random_state=99)
    estimate = math.exp(adj.log_discard_probability(tau_mu))
    # Monte Carlo error of both sides (per-draw terms of the estimator from scipy's ncf)
    per_draw = ncf_cdf(gamma, len(counts) - 1, sum(counts) - len(counts), 2 * adj.poisson_means / tau_mu)
    se = math.sqrt(p_hat * (1 - p_hat) / reps + per_draw.var() / reps) + 1e-4
    assert abs(estimate - p_hat) < 4 * se
    assert abs(estimate - per_draw.mean()) <= math.exp(-10)  # only the truncation differs
    if tau_mu == 100.0:  # the test has power: the paper's half-convention is far off
        half = ncf_cdf(gamma, len(counts) - 1, sum(counts) - len(counts), adj.poisson_means / tau_mu).mean()
        assert abs(half - p_hat) > 10 * se


# ---------------------------------------------------------------- interpolation


def test_interpolation_agrees_with_exact(adjustment):
    table, eta_min, step = new_interpolation_table()
    pool, log_f = adjustment.poisson_means, adjustment.log_f
    rng = np.random.default_rng(3)
    for eta in rng.uniform(-5.0, 15.0, size=400):
        exact = log_discard_probability_at(math.exp(eta), pool, log_f)
        approx = interpolated_log_discard_probability(eta, table, eta_min, step, pool, log_f)
        assert abs(approx - exact) < 1e-7


def test_interpolation_fills_only_the_needed_nodes(adjustment):
    table, eta_min, step = new_interpolation_table(-10.0, 10.0, 0.125)
    pool, log_f = adjustment.poisson_means, adjustment.log_f
    assert table.shape == (161,) and np.all(np.isnan(table))
    interpolated_log_discard_probability(1.3, table, eta_min, step, pool, log_f)
    i = int(np.floor((1.3 + 10.0) / 0.125))  # node at or below η
    filled = np.flatnonzero(~np.isnan(table))
    np.testing.assert_array_equal(filled, [i - 1, i, i + 1, i + 2])
    for j in filled:
        assert table[j] == log_discard_probability_at(math.exp(eta_min + j * step), pool, log_f)
    interpolated_log_discard_probability(1.3 + 0.05, table, eta_min, step, pool, log_f)  # same interval
    assert np.count_nonzero(~np.isnan(table)) == 4
    interpolated_log_discard_probability(1.3 + 0.125, table, eta_min, step, pool, log_f)  # next interval
    np.testing.assert_array_equal(np.flatnonzero(~np.isnan(table)), [i - 1, i, i + 1, i + 2, i + 3])
    # at a node the interpolant is the node value
    at_node = interpolated_log_discard_probability(eta_min + i * step, table, eta_min, step, pool, log_f)
    assert at_node == pytest.approx(table[i], rel=1e-14)


def test_interpolation_uses_cached_nodes_and_is_exact_for_cubics(adjustment):
    """Filled nodes are never recomputed, and 4-point Lagrange reproduces a cubic."""
    table, eta_min, step = new_interpolation_table(-2.0, 2.0, 0.25)
    cubic = np.polynomial.Polynomial([0.3, -1.2, 0.7, 0.45])
    table[:] = cubic(eta_min + step * np.arange(table.shape[0]))
    before = table.copy()
    no_f = np.array([0.0])  # would give exact values far from the cubic
    for eta in np.linspace(-1.75, 1.49, 37):
        value = interpolated_log_discard_probability(eta, table, eta_min, step, adjustment.poisson_means, no_f)
        assert value == pytest.approx(cubic(eta), abs=1e-12)
    np.testing.assert_array_equal(table, before)


def test_interpolation_falls_back_to_exact_outside_the_grid(adjustment):
    table, eta_min, step = new_interpolation_table(-1.0, 1.0, 0.25)  # nodes −1, −0.75, ..., 1
    pool, log_f = adjustment.poisson_means, adjustment.log_f
    for eta in (-40.0, -1.0, -0.8, 0.76, 1.0, 3.0, 40.0):  # intervals lacking a neighbour node
        approx = interpolated_log_discard_probability(eta, table, eta_min, step, pool, log_f)
        assert approx == log_discard_probability_at(math.exp(eta), pool, log_f)
    assert np.all(np.isnan(table))
    # the first and last usable intervals interpolate
    interpolated_log_discard_probability(-0.75, table, eta_min, step, pool, log_f)
    interpolated_log_discard_probability(0.74, table, eta_min, step, pool, log_f)
    np.testing.assert_array_equal(np.flatnonzero(~np.isnan(table)), [0, 1, 2, 3, 5, 6, 7, 8])


def test_new_interpolation_table_grid():
    table, eta_min, step = new_interpolation_table()
    assert (eta_min, step) == (-30.0, 1 / 64)
    assert table.shape == (60 * 64 + 1,) and table.dtype == np.float64 and np.all(np.isnan(table))
    assert new_interpolation_table(0.0, 1.0, 0.3)[0].shape == (4,)  # last node 0.9 ≤ 1
    with pytest.raises(ValueError, match="eta_min < eta_max"):
        new_interpolation_table(1.0, 1.0)
    with pytest.raises(ValueError, match="step"):
        new_interpolation_table(0.0, 1.0, 0.0)
    with pytest.raises(ValueError, match="at least 4 nodes"):
        new_interpolation_table(0.0, 1.0, 0.5)


# ---------------------------------------------------------- the pool, reproducibility


def test_poisson_means_are_lambda_times_t_over_two():
    counts, alpha_x, w_x = (3, 5, 9), 4.0, 0.5
    got = gaussian_poisson_means(counts, alpha_x, w_x, n_mc=50, random_state=7)
    rng = np.random.default_rng(7)
    z = rng.standard_normal((50, 3))
    t = rng.gamma(alpha_x / 2, 1 / (alpha_x * w_x / 2), size=50)
    sizes = np.array(counts)
    z_tilde = z @ sizes / sizes.sum()
    lam = ((z - z_tilde[:, None]) ** 2 * sizes).sum(axis=1)
    np.testing.assert_allclose(got, lam * t / 2, rtol=1e-12)
    # E[Λ(Z)] = Σ_g n_g E(Z_g − Z̃)² = n − Σ_g n_g²/n and E[T] = 1/w^x
    big = gaussian_poisson_means(counts, alpha_x, w_x, n_mc=200000, random_state=1)
    n = sum(counts)
    assert big.mean() == pytest.approx((n - sum(c * c for c in counts) / n) / (2 * w_x), rel=0.01)


def test_pool_is_reproducible():
    a = gaussian_poisson_means(COUNTS, 4.0, 1.0, random_state=123)
    b = gaussian_poisson_means(COUNTS, 4.0, 1.0, random_state=np.random.default_rng(123))
    c = gaussian_poisson_means(COUNTS, 4.0, 1.0, random_state=124)
    np.testing.assert_array_equal(a, b)
    assert a.shape == (1000,) and np.all(a > 0)
    assert not np.array_equal(a, c)
    adj1 = GaussianAdjustment.create(3.15, COUNTS, 4.0, 1.0, random_state=5)
    adj2 = GaussianAdjustment.create(3.15, list(COUNTS), 4.0, 1.0, random_state=5)
    np.testing.assert_array_equal(adj1.poisson_means, adj2.poisson_means)
    np.testing.assert_array_equal(adj1.log_f, gaussian_f_series(3.15, COUNTS))
    assert adj1.class_counts == COUNTS and adj1.threshold == 3.15
    assert adj1.log_discard_probability(50.0) == adj2.log_discard_probability(50.0)


def test_pool_takes_every_random_state_the_estimators_take():
    """The pool's generator comes from the one check_generator: a Generator is advanced (the classifier draws
    its chains' seeds from it next), a legacy RandomState is accepted, anything else is an input error."""
    from hdbayes.exceptions import InputTypeError

    rng = np.random.default_rng(123)
    gaussian_poisson_means(COUNTS, 4.0, 1.0, n_mc=10, random_state=rng)
    assert rng.random() != np.random.default_rng(123).random()
    legacy = gaussian_poisson_means(COUNTS, 4.0, 1.0, n_mc=10, random_state=np.random.RandomState(0))
    assert legacy.shape == (10,) and np.all(legacy > 0)
    with pytest.raises(InputTypeError, match="random_state"):
        gaussian_poisson_means(COUNTS, 4.0, 1.0, random_state="seed")


def test_adjustment_is_frozen(adjustment):
    with pytest.raises(AttributeError):
        adjustment.threshold = 2.0
    with pytest.raises(ValueError):
        adjustment.poisson_means[0] = 1.0


# ---------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"threshold": -0.1}, ValueError, "threshold"),
        ({"threshold": np.inf}, ValueError, "threshold"),
        ({"threshold": np.nan}, ValueError, "threshold"),
        ({"threshold": "2"}, TypeError, "threshold"),
        ({"class_counts": (200,)}, ValueError, "at least 2 classes"),
        ({"class_counts": (10, 0, 5)}, ValueError, "at least one case"),
        ({"class_counts": (1, 1, 1)}, ValueError, "more cases than classes"),
        ({"class_counts": (2.5, 3)}, TypeError, "integers"),
        ({"class_counts": [[3, 4]]}, ValueError, "1-d"),
        ({"alpha_x": 0.0}, ValueError, "alpha_x"),
        ({"w_x": -1.0}, ValueError, "w_x"),
        ({"n_mc": 0}, ValueError, "n_mc"),
        ({"n_mc": 10.5}, TypeError, "n_mc"),
    ],
)
def test_create_validates(kwargs, error, match):
    args = {"threshold": 2.0, "class_counts": (10, 12, 8), "alpha_x": 4.0, "w_x": 1.0, "n_mc": 10}
    args.update(kwargs)
    with pytest.raises(error, match=match):
        GaussianAdjustment.create(**args)


def test_other_validation_errors(adjustment):
    with pytest.raises(ValueError, match="tol"):
        gaussian_f_series(2.0, COUNTS, tol=0.0)
    for bad in (0.0, -1.0, np.nan):
        with pytest.raises(ValueError, match="tau_mu"):
            adjustment.log_discard_probability([1.0, bad])
        with pytest.raises(ValueError, match="tau_mu"):
            log_discard_probability_at(bad, adjustment.poisson_means, adjustment.log_f)
    with pytest.raises(ValueError, match="poisson_means"):
        GaussianAdjustment(2.0, COUNTS, np.zeros(3), np.array([1.0, -2.0]))
    with pytest.raises(ValueError, match="log_f"):
        GaussianAdjustment(2.0, COUNTS, np.array([]), np.array([1.0]))


def test_zero_threshold_gives_the_limit_of_the_factor():
    """γ = 0 (e.g. constant discarded features): A ≡ 0, so create() keeps the γ → 0⁺ limit of A/f_0, which a
    tiny γ approaches (f_k/f_0 = O(γ^k))."""
    zero = GaussianAdjustment.create(0.0, COUNTS, alpha_x=4.0, w_x=1.0, n_mc=300, random_state=1)
    tiny = GaussianAdjustment.create(1e-9, COUNTS, alpha_x=4.0, w_x=1.0, n_mc=300, random_state=1)
    tau = np.array([0.01, 1.0, 30.0, 1e4])
    limit = zero.log_discard_probability(tau)
    assert np.isfinite(limit).all() and np.all(np.diff(limit) > 0)  # e^{−λ/τ} increases in τ
    np.testing.assert_allclose(tiny.log_discard_probability(tau) - tiny.log_f[0], limit, atol=1e-6)
    expected = np.log(np.mean(np.exp(-zero.poisson_means[:, None] / tau), axis=0))
    np.testing.assert_allclose(limit, expected, rtol=1e-12)


# ----- the per-feature-spread model (Li 2012): exact factor by quadrature -----

PER_FEATURE_COUNTS = (20, 21, 21)


@pytest.fixture(scope="module")
def per_feature():
    return PerFeatureGaussianAdjustment.create(4.0, PER_FEATURE_COUNTS, alpha1_mu=3.0, alpha1_x=10.0)


def simulate_discard_fraction(rng, log_rho, counts, gamma, n_draws, alpha1=(10.0, 3.0)):
    """Brute force: P(F ≤ γ) for features whose ratio r = w^μ/w^x is ρ·T, T ~ F(α1_x, α1_μ) (or r = ρ with
    ``alpha1=None``); w^x = 1, class sample means and the within-class sum of squares drawn directly."""
    counts = np.asarray(counts, dtype=float)
    n, n_classes = counts.sum(), counts.shape[0]
    ratio = np.exp(log_rho) * (np.ones(n_draws) if alpha1 is None else rng.f(alpha1[0], alpha1[1], size=n_draws))
    means = rng.standard_normal((n_draws, n_classes)) * np.sqrt(ratio)[:, None]
    xbar = means + rng.standard_normal((n_draws, n_classes)) / np.sqrt(counts)
    between = ((xbar - (xbar @ counts / n)[:, None]) ** 2) @ counts
    within = rng.chisquare(n - n_classes, size=n_draws)
    fraction = np.mean(between / (n_classes - 1) / (within / (n - n_classes)) <= gamma)
    return fraction, np.sqrt(fraction * (1 - fraction) / n_draws)


@pytest.mark.parametrize("log_rho", (-6.0, -2.0, 0.0, 3.0))
def test_per_feature_factor_matches_a_long_monte_carlo(per_feature, log_rho):
    """10^6 simulated features per ρ: |A_quadrature − A_MC| within 4.5 standard errors (measured at most 1.1 SE:
    e.g. log ρ = 0: log A = −1.72183 vs −1.72425 ± 0.0021; log ρ = 5: −6.4215 vs −6.409 ± 0.025)."""
    fraction, se = simulate_discard_fraction(np.random.default_rng(int(log_rho) + 10), log_rho, PER_FEATURE_COUNTS,
                                             4.0, 10**6)  # fmt: skip
    exact = np.exp(per_feature.log_discard_probability([log_rho])[0])
    assert abs(exact - fraction) < 4.5 * se


@pytest.mark.parametrize("log_r", (-4.0, 0.0, 2.0))
def test_factor_given_the_ratio_matches_simulation(per_feature, log_r):
    """a(r), the negative-binomial convolution, against 4·10^5 simulated F-statistics with that ratio."""
    fraction, se = simulate_discard_fraction(np.random.default_rng(3), log_r, PER_FEATURE_COUNTS, 4.0, 4 * 10**5,
                                             alpha1=None)  # fmt: skip
    assert abs(np.exp(per_feature.log_discard_probability_given_ratio(np.array([log_r]))[0]) - fraction) < 4.5 * se


@pytest.mark.parametrize(
    "gamma, counts",
    [(2.0, (10, 10, 10)), (34.3, (10, 10, 10)), (4.0, PER_FEATURE_COUNTS), (10.0, (23, 20, 12, 8)),
     (1.79, (34, 33, 33, 33, 33, 34))],
)  # fmt: skip
def test_per_feature_quadrature_against_a_finer_one(gamma, counts):
    """Default rule (step 1/2, series tol 1e-30) against step 1/8, tol 1e-60 and a wider grid, over
    log ρ ∈ [−30, 30]: |Δ log A| ≤ 1e-8 (measured at most 1.0e-9)."""
    log_rho = np.linspace(-30.0, 30.0, 121)
    default = PerFeatureGaussianAdjustment.create(gamma, counts).log_discard_probability(log_rho)
    finer = PerFeatureGaussianAdjustment.create(gamma, counts, h=0.125, tail=80.0, tol=1e-60)
    assert np.all(np.isfinite(default))
    assert np.max(np.abs(default - finer.log_discard_probability(log_rho))) < 1e-8


def test_per_feature_factor_limits_and_monotone(per_feature):
    """A decreases in ρ, tends to f_0 (the central F cdf) as ρ → 0 and to 0 as ρ → ∞ with no floor."""
    log_rho = np.linspace(-30.0, 30.0, 241)
    values = per_feature.log_discard_probability(log_rho)
    assert np.all(np.diff(values) < 1e-10)  # the step-1/2 rule oscillates by ~1e-11 where A is flat
    assert values[0] == pytest.approx(stats.f.logcdf(4.0, 2, sum(PER_FEATURE_COUNTS) - 3), abs=1e-9)
    assert values[-1] < -25.0


def test_per_feature_interpolation_agrees_with_exact(per_feature):
    table, eta_min, step = new_interpolation_table(step=1.0 / 128.0)
    args = per_feature.kernel_arguments()
    for log_rho in np.linspace(-8.0, 8.0, 37):
        exact = per_feature_log_discard_probability_at(log_rho, *args)
        interpolated = interpolated_per_feature_log_discard_probability(log_rho, table, eta_min, step, *args)
        assert interpolated == pytest.approx(exact, abs=1e-9)


def test_class_count_eigenvalues():
    assert np.allclose(class_count_eigenvalues([7, 7, 7]), [7.0, 7.0])
    counts = np.array([3.0, 5.0, 9.0])
    z = np.random.default_rng(0).standard_normal((2000, 3))
    quadratic = ((z - (z @ counts / counts.sum())[:, None]) ** 2) @ counts
    assert quadratic.mean() == pytest.approx(class_count_eigenvalues(counts).sum(), rel=0.05)


def test_zero_threshold_per_feature_uses_the_limit():
    adjustment = PerFeatureGaussianAdjustment.create(0.0, PER_FEATURE_COUNTS)
    assert adjustment.log_f.tolist() == [0.0]
    assert adjustment.log_discard_probability([-30.0])[0] == pytest.approx(0.0, abs=1e-9)
    assert np.isfinite(adjustment.log_discard_probability([5.0])[0])


@pytest.mark.parametrize("gamma, counts", [(600.0, (37, 8, 10)), (3250.0, (33, 8, 10)), (2000.0, (20, 26, 11, 18))])
def test_per_feature_factor_at_huge_thresholds_is_the_series(gamma, counts):
    """With more than 1000 series terms the nodes are quadratic-form tails (cost free of γ): they equal the
    series' convolution to 1e-12 in log a, relative where |log a| > 1 (measured at most 2e-14); where a is near 1
    the tails are the more accurate (−5e-34 where the series rounds to +3e-16)."""
    adjustment = PerFeatureGaussianAdjustment.create(gamma, counts)
    assert adjustment.log_f.shape[0] > 1000
    log_r = np.array([-4.0, 0.0, 3.0, 8.0, 20.0])
    series = [log_discard_probability_given_ratio(x, adjustment.eigenvalues, np.array(adjustment.log_f)) for x in log_r]
    np.testing.assert_allclose(adjustment.log_discard_probability_given_ratio(log_r), series, rtol=1e-12, atol=1e-12)


def test_per_feature_factor_hands_over_to_the_series_at_extreme_ratios():
    """Two classes (log a falls like −(1/2) log r) and a huge γ: the grid runs past log r = 300, where the
    series takes over from the tails; log a stays on its line of slope −1/2 across the hand-over."""
    adjustment = PerFeatureGaussianAdjustment.create(3250.0, (37, 18))
    log_r = np.array([280.0, 290.0, 299.0, 301.0, 310.0, 350.0, 400.0])
    values = adjustment.log_discard_probability_given_ratio(log_r)
    assert np.all(np.isfinite(values))
    np.testing.assert_allclose(np.diff(values) / np.diff(log_r), -0.5, atol=1e-9)


@pytest.mark.parametrize(("threshold", "counts"), [(1445.0, (38, 113, 19)), (2.5, (20, 20)), (40.0, (5, 7, 9, 4))])
def test_skipping_negligible_terms_leaves_log_a_exact(threshold, counts):
    # the k-sum stops past each draw's Poisson mode and skips terms below e^−60 of the largest (issue 27: 2168
    # terms at christensen's γ ≈ 1445 made a corrected fit 30 s); against every term summed by logsumexp
    from scipy.stats import poisson

    log_f = gaussian_f_series(threshold, counts)
    means = gaussian_poisson_means(counts, 4.0, 1.0, n_mc=200, random_state=0)
    k = np.arange(log_f.shape[0])
    for tau_mu in (1e-3, 0.3, 5.0, 80.0):
        per_draw = logsumexp(log_f[None, :] + poisson.logpmf(k[None, :], (means / tau_mu)[:, None]), axis=1)
        dense = logsumexp(per_draw) - math.log(means.shape[0])
        assert log_discard_probability_at(tau_mu, means, log_f) == pytest.approx(dense, rel=1e-12, abs=1e-12)
