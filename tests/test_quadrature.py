"""Tests for hdbayes.quadrature."""

import numpy as np
import pytest
from scipy import stats

from hdbayes.exceptions import InputValueError
from hdbayes.quadrature import (
    QuadratureRule,
    adaptive_inverse_gamma_rule,
    inverse_gamma_isf,
    inverse_gamma_logpdf,
    inverse_gamma_midpoint_grid,
    inverse_gamma_ppf,
    simpson_rule,
)

# thesis eq. 2.88: the K = 10 grid for Inverse-Gamma(0.5, 5)
THESIS_ALPHA_GRID = [2.60, 4.83, 7.56, 11.45, 17.52, 27.99, 48.57, 98.49, 279.60, 2543.14]


def test_inverse_gamma_grid_reproduces_thesis_k10():
    rule = inverse_gamma_midpoint_grid(0.5, 5.0, 10)
    np.testing.assert_array_equal(np.round(rule.nodes, 2), THESIS_ALPHA_GRID)
    np.testing.assert_array_equal(rule.weights, np.full(10, 0.1))


def test_inverse_gamma_grid_k30_log_range():
    rule = inverse_gamma_midpoint_grid(0.5, 5.0, 30)
    log_alpha = np.log(rule.nodes)
    assert log_alpha[0] == pytest.approx(0.557, abs=5e-4)
    assert log_alpha[-1] == pytest.approx(10.04, abs=5e-3)
    assert np.all(np.diff(rule.nodes) > 0)
    assert rule.weights.sum() == pytest.approx(1.0, abs=1e-15)


def test_inverse_gamma_grid_nodes_are_prior_midpoint_quantiles():
    rule = inverse_gamma_midpoint_grid(1.5, 2.0, 7)
    cdf = stats.invgamma.cdf(rule.nodes, 1.5, scale=2.0)
    np.testing.assert_allclose(cdf, (np.arange(1, 8) - 0.5) / 7, atol=1e-12)


def test_inverse_gamma_grid_integrates_prior_expectations():
    """The midpoint rule in u = F(α) approximates E[g(α)] under the prior."""
    rule = inverse_gamma_midpoint_grid(3.0, 2.0, 2000)
    # E[1/α] for 1/α ~ Gamma(shape 3, rate 2) is 3/2
    assert rule.weights @ (1.0 / rule.nodes) == pytest.approx(1.5, rel=1e-3)


@pytest.mark.parametrize(
    ("shape", "scale", "n_points"),
    [
        (0.0, 5.0, 10),
        (-1.0, 5.0, 10),
        (0.5, 0.0, 10),
        (0.5, np.inf, 10),
        (0.5, 5.0, 0),
        (0.5, 5.0, 2.5),
        (0.5, 5.0, True),
    ],
)
def test_inverse_gamma_grid_rejects_bad_arguments(shape, scale, n_points):
    with pytest.raises(ValueError, match="shape|scale|n_points"):
        inverse_gamma_midpoint_grid(shape, scale, n_points)


@pytest.mark.parametrize("n_points", [3, 5, 21, 101])
def test_simpson_is_exact_for_cubics(n_points):
    rule = simpson_rule(n_points)
    rng = np.random.default_rng(n_points)
    for _ in range(5):
        c = rng.normal(size=4)
        exact = c[0] + c[1] / 2 + c[2] / 3 + c[3] / 4
        assert rule.weights @ np.polyval(c[::-1], rule.nodes) == pytest.approx(exact, abs=1e-14)
    assert rule.weights.sum() == pytest.approx(1.0, abs=1e-15)


def test_simpson_is_not_exact_for_quartics():
    """Guards the test above: the rule is Simpson, not something of higher order."""
    rule = simpson_rule(3)
    assert rule.weights @ rule.nodes**4 != pytest.approx(0.2, abs=1e-6)


def test_simpson_weights_and_nodes():
    rule = simpson_rule(21)
    h = 0.05
    expected = h / 3 * np.array([1] + [4, 2] * 9 + [4, 1], dtype=float)
    np.testing.assert_allclose(rule.weights, expected, rtol=1e-15)
    np.testing.assert_allclose(rule.nodes, np.linspace(0, 1, 21), atol=1e-15)
    assert rule.nodes[0] == 0.0 and rule.nodes[-1] == 1.0
    # symmetric about 1/2 (needed by the flip symmetry of the adjustment factor)
    np.testing.assert_allclose(rule.nodes + rule.nodes[::-1], 1.0, atol=1e-15)
    np.testing.assert_array_equal(rule.weights, rule.weights[::-1])


def test_simpson_on_other_interval():
    rule = simpson_rule(11, -1.0, 3.0)
    assert rule.weights.sum() == pytest.approx(4.0, abs=1e-14)
    assert rule.weights @ rule.nodes**3 == pytest.approx((3.0**4 - 1.0) / 4, abs=1e-12)


def test_simpson_converges_at_fourth_order():
    errors = [abs(simpson_rule(n).weights @ np.exp(simpson_rule(n).nodes) - (np.e - 1)) for n in (11, 21)]
    assert errors[0] / errors[1] == pytest.approx(16.0, rel=0.02)


@pytest.mark.parametrize("n_points", [2, 4, 20, 1, 0, -3, 3.0, True])
def test_simpson_rejects_even_or_too_few_points(n_points):
    with pytest.raises(ValueError, match="odd number of points"):
        simpson_rule(n_points)


def test_log_weights():
    rule = QuadratureRule(np.array([0.0, 0.5, 1.0]), np.array([0.25, 0.0, 0.75]))
    np.testing.assert_allclose(rule.log_weights, [np.log(0.25), -np.inf, np.log(0.75)])
    np.testing.assert_allclose(simpson_rule(5).log_weights, np.log(simpson_rule(5).weights))


def test_gauss_legendre_is_exact_to_degree_2m_minus_1():
    from hdbayes.quadrature import gauss_legendre_rule

    rule = gauss_legendre_rule(5)
    for degree in range(10):
        assert rule.weights @ rule.nodes**degree == pytest.approx(1.0 / (degree + 1), rel=1e-13)
    assert abs(rule.weights @ rule.nodes**10 - 1.0 / 11) > 1e-8
    assert np.all((rule.nodes > 0) & (rule.nodes < 1))
    np.testing.assert_allclose(rule.nodes, 1.0 - rule.nodes[::-1], atol=1e-15)
    with pytest.raises(ValueError, match="n_points"):
        gauss_legendre_rule(0)


# ---------------------------------------------------------------------------
# adaptive rule in log α (the default α rule of BiasCorrectedNaiveBayes)
# ---------------------------------------------------------------------------


def _gaussian_in_log_alpha(centre, sd):
    """log g for g(α) = exp(−(log α − c)²/(2 sd²)), a peak in log α like a posterior with many features."""
    return lambda alpha: -((np.log(alpha) - centre) ** 2) / (2 * sd**2)


def _reference(log_g, shape=0.5, scale=5.0):
    """∫ g(α) P(α) dα by scipy.integrate.quad in t = log α, split at many points."""
    from scipy import integrate

    def f(t):
        return np.exp(log_g(np.exp(np.array([t])))[0] + stats.invgamma.logpdf(np.exp(t), shape, scale=scale) + t)

    edges = np.linspace(-4.0, 40.0, 89)
    return sum(integrate.quad(f, a, b, epsabs=0, epsrel=1e-11, limit=100)[0] for a, b in zip(edges[:-1], edges[1:]))


def test_adaptive_rule_integrates_the_prior_to_one():
    out = adaptive_inverse_gamma_rule(lambda alpha: np.zeros_like(alpha), 0.5, 5.0)
    assert out.converged
    assert out.rule.weights.sum() == pytest.approx(1.0, abs=1e-9)
    # E[1/α] under the prior: 1/α ~ Gamma(a, rate b), mean a/b
    out = adaptive_inverse_gamma_rule(lambda alpha: np.zeros_like(alpha), 3.0, 2.0)
    assert out.rule.weights @ (1.0 / out.rule.nodes) == pytest.approx(1.5, rel=1e-8)


@pytest.mark.parametrize(("centre", "sd"), [(3.0, 0.02), (5.5, 0.2), (1.0, 1.0), (12.0, 0.05)])
def test_adaptive_rule_resolves_narrow_and_wide_peaks(centre, sd):
    log_g = _gaussian_in_log_alpha(centre, sd)
    out = adaptive_inverse_gamma_rule(log_g, 0.5, 5.0)
    assert out.converged
    estimate = out.rule.weights @ np.exp(out.log_values)
    assert estimate == pytest.approx(_reference(log_g), rel=1e-7)


def test_adaptive_rule_handles_a_long_tail_to_large_alpha():
    """g rising to a constant as α → ∞ (a corrected fit on few weak features): the prior's tail counts."""

    def log_g(alpha):
        return -np.logaddexp(0.0, 3.0 * (5.5 - np.log(alpha)))

    out = adaptive_inverse_gamma_rule(log_g, 0.5, 5.0)
    assert out.converged
    assert out.rule.weights @ np.exp(out.log_values) == pytest.approx(_reference(log_g), rel=1e-6)


def test_adaptive_rule_reports_the_evaluation_order():
    seen = []

    def log_g(alpha):
        seen.append(alpha.copy())
        return _gaussian_in_log_alpha(4.0, 0.1)(alpha)

    out = adaptive_inverse_gamma_rule(log_g, 0.5, 5.0)
    evaluated = np.concatenate(seen)
    assert out.n_evaluations == evaluated.size > out.rule.nodes.size
    np.testing.assert_array_equal(evaluated[out.order], out.rule.nodes)
    assert np.all(np.diff(out.rule.nodes) > 0)
    # a quarter of the resolution halves the spacing around the peak
    fine = adaptive_inverse_gamma_rule(_gaussian_in_log_alpha(4.0, 0.1), 0.5, 5.0, resolution=0.25)
    near = lambda rule: np.diff(np.log(rule.nodes))[np.abs(np.log(rule.nodes[1:]) - 4.0) < 0.2].max()  # noqa: E731
    assert near(fine.rule) == pytest.approx(near(out.rule) / 2)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"shape": 0.0}, "shape"),
        ({"scale": -1.0}, "scale"),
        ({"resolution": 0.0}, "resolution"),
        ({"tail": 0.7}, "tail"),
        ({"n_points": 2}, "n_points"),
    ],
)
def test_adaptive_rule_rejects_bad_arguments(kwargs, match):
    args = {"shape": 0.5, "scale": 5.0, **kwargs}
    with pytest.raises(InputValueError, match=match):
        adaptive_inverse_gamma_rule(lambda alpha: np.zeros_like(alpha), args.pop("shape"), args.pop("scale"), **args)


@pytest.mark.parametrize(("shape", "scale"), [(0.5, 5.0), (1.5, 2.0), (0.05, 1e-3), (40.0, 300.0), (1e-3, 1e4)])
def test_inverse_gamma_functions_equal_scipy_stats(shape, scale):
    """The Inverse-Gamma quantiles and log density from scipy.special are scipy.stats.invgamma's: the same
    special functions, so equal to rounding (relative 1e-13; −inf at x ≤ 0, the boundary quantiles 0 and inf)."""
    q = np.array([0.0, 1e-300, 1e-15, 1e-6, 0.01, 0.3, 0.5, 0.9, 1 - 1e-9, 1.0])
    dist = stats.invgamma(shape, scale=scale)
    with np.errstate(divide="ignore", over="ignore"):
        np.testing.assert_allclose(inverse_gamma_ppf(q, shape, scale), dist.ppf(q), rtol=1e-13)
        np.testing.assert_allclose(inverse_gamma_isf(q, shape, scale), dist.isf(q), rtol=1e-13)
    x = np.concatenate([[-1.0, 0.0], scale * np.logspace(-3, 6, 40)])
    np.testing.assert_allclose(inverse_gamma_logpdf(x, shape, scale), dist.logpdf(x), rtol=1e-13, atol=1e-12)
    assert inverse_gamma_logpdf(0.0, shape, scale) == -np.inf
    for function in (inverse_gamma_ppf, inverse_gamma_isf, inverse_gamma_logpdf):  # a scalar for a scalar
        assert np.ndim(function(0.5, shape, scale)) == 0
    assert float(inverse_gamma_ppf(0.25, shape, scale)) == pytest.approx(float(inverse_gamma_isf(0.75, shape, scale)))
