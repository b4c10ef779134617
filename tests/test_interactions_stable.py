"""Stable compressed priors and their splitting distributions (thesis §3.3)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

from hdbayes._numba import jit
from hdbayes.interactions import stable as st

# (s, Σ_1, Σ_2): generic, s = 0 with Σ_1 ≠ Σ_2, Σ_1 = Σ_2 with s ≠ 0, near-degenerate, separated peaks
CDF_CASES = [
    (3.0, 1.0, 1.0),
    (0.0, 1.0, 2.0),
    (0.5, 2.0, 0.3),
    (-4.0, 0.1, 1.0),
    (20.0, 0.5, 1.0),
    (0.01, 1.0, 1.0001),
    (0.0, 1.0, 1.0),
]


def _unnormalised(x, s, a, b):
    return 1.0 / ((a * a + x * x) * (b * b + (x - s) ** 2))


def _integral(lo, hi, s, a, b):
    """∫_lo^hi of (3.29)'s unnormalised density, with break points at the two peaks."""
    marks = [0.0, s] + [k * a for k in (-10, -1, 1, 10)] + [s + k * b for k in (-10, -1, 1, 10)]
    edges = [lo] + sorted({p for p in marks if lo < p < hi}) + [hi]
    return sum(
        integrate.quad(_unnormalised, edges[i], edges[i + 1], args=(s, a, b), epsabs=0, epsrel=1e-12, limit=200)[0]
        for i in range(len(edges) - 1)
    )


@pytest.mark.parametrize(("s", "a", "b"), CDF_CASES)
def test_normaliser_and_cdf_against_quadrature(s, a, b):
    total = _integral(-np.inf, np.inf, s, a, b)
    assert st.split_cauchy_normalizer(s, a, b) == pytest.approx(total, rel=1e-10)
    c = a + b + abs(s)
    for x in (-10 * c, -a, 0.0, 0.5 * s, s, s + b, 3 * c):
        expected = _integral(-np.inf, x, s, a, b) / total
        assert st.split_cauchy_cdf(x, s, a, b) == pytest.approx(expected, abs=1e-10)
    xs = np.linspace(-3 * c, 3 * c, 7)
    np.testing.assert_allclose(st.split_cauchy_pdf(xs, s, a, b), _unnormalised(xs, s, a, b) / total, rtol=1e-10)


def test_cdf_near_degenerate_loses_only_a_few_digits():
    s, a, b = 1e-6, 1.0, 1.0 + 1e-6  # δ/c² ≈ 5e-13, just above the t_3 switch
    total = _integral(-np.inf, np.inf, s, a, b)
    for x in (-2.0, -0.3, 0.0, 0.7):
        assert st.split_cauchy_cdf(x, s, a, b) == pytest.approx(_integral(-np.inf, x, s, a, b) / total, abs=1e-9)


def test_degenerate_branch_is_student_t3():
    x = np.linspace(-6, 6, 25)
    expected = stats.t(3, scale=1.5 / np.sqrt(3)).cdf(x)
    np.testing.assert_allclose(st.split_cauchy_cdf(x, 0.0, 1.5, 1.5), expected, atol=1e-14)
    # just inside the switch the t_3 limit is still accurate
    np.testing.assert_allclose(st.split_cauchy_cdf(x, 1e-9, 1.5, 1.5), expected, atol=1e-8)
    u = np.linspace(0.01, 0.99, 9)
    np.testing.assert_allclose(
        st.split_cauchy_inversion(0.0, 1.5, 1.5, u), stats.t(3, scale=1.5 / np.sqrt(3)).ppf(u), rtol=1e-9, atol=1e-11
    )


@pytest.mark.parametrize(("s", "a", "b"), CDF_CASES + [(1e4, 1.0, 2.0), (1e3, 0.01, 1.0), (0.0, 1e-9, 1.0)])
def test_inversion_solves_cdf(s, a, b):
    u = np.random.default_rng(3).random(500)
    x = st.split_cauchy_inversion(s, a, b, u)
    assert np.all(np.isfinite(x))
    np.testing.assert_allclose(st.split_cauchy_cdf(x, s, a, b), u, rtol=0, atol=1.5e-12)
    order = np.argsort(u)
    assert np.all(np.diff(x[order]) >= 0)


@pytest.mark.parametrize(
    ("s", "a", "b"), [(1e6, 1.0, 2.0), (5.0, 1.0, 1e-6), (1e200, 1e190, 1e195), (1.0, 1e-10, 1e-10)]
)
def test_inversion_extreme_scales_are_accurate_to_a_few_ulps(s, a, b):
    """|s| ≫ Σ: F jumps by more than 1e-12 between adjacent doubles; accept a few ulps of x."""
    u = np.random.default_rng(4).random(300)
    x = st.split_cauchy_inversion(s, a, b, u)
    assert np.all(np.isfinite(x))
    ulps = 8 * np.spacing(a + b + abs(s))
    lower = st.split_cauchy_cdf(x - ulps, s, a, b)
    upper = st.split_cauchy_cdf(x + ulps, s, a, b)
    assert np.all((lower - 1e-12 <= u) & (u <= upper + 1e-12))


def test_inversion_symmetries():
    u = np.random.default_rng(5).random(50)
    for s, a, b in [(2.0, 0.3, 1.0), (30.0, 1.0, 0.2), (0.4, 1.0, 1.0)]:
        x = st.split_cauchy_inversion(s, a, b, u)
        np.testing.assert_allclose(st.split_cauchy_inversion(-s, a, b, 1 - u), -x, rtol=1e-9, atol=1e-9)
        # part ↔ rest: s − s^t given (Σ_2, Σ_1)
        np.testing.assert_allclose(s - st.split_cauchy_inversion(s, b, a, 1 - u), x, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize(("s", "a", "b", "seed"), [(1.0, 0.7, 1.8, 1), (0.01, 1.0, 1.0001, 2), (15.0, 1.0, 0.5, 3)])
def test_inversion_and_rejection_agree(s, a, b, seed):
    n = 4000
    rng = np.random.default_rng(seed)
    x_inv = st.split(np.full(n, s), a, b, "cauchy", random_state=rng)
    x_rej = st.split_cauchy_rejection(np.full(n, s), a, b, rng)
    assert stats.ks_2samp(x_inv, x_rej).pvalue > 0.01
    x_rej2 = st.split(np.full(n, s), a, b, 1, random_state=rng, method="rejection")
    assert stats.ks_2samp(x_inv, x_rej2).pvalue > 0.01


def test_rejection_matches_cdf_when_peaks_are_far_apart():
    s, a, b = 200.0, 0.5, 1.0  # the mixture envelope (acceptance ≈ 1/4 instead of ≈ 2e-5)
    x = st.split_cauchy_rejection(np.full(4000, s), a, b, 7)
    assert stats.kstest(x, lambda v: st.split_cauchy_cdf(v, s, a, b)).pvalue > 0.01


@pytest.mark.parametrize("method", ["inversion", "rejection"])
def test_prior_consistency_cauchy(method):
    a, b, n = 0.7, 1.8, 5000
    rng = np.random.default_rng(11)
    s = stats.cauchy(0, a + b).rvs(n, random_state=rng)
    part = st.split(s, a, b, "cauchy", random_state=rng, method=method)
    assert stats.kstest(part, stats.cauchy(0, a).cdf).pvalue > 0.01
    assert stats.kstest(s - part, stats.cauchy(0, b).cdf).pvalue > 0.01


def test_prior_consistency_gaussian():
    v1, v2, n = 0.49, 3.24, 5000
    rng = np.random.default_rng(12)
    s = rng.normal(0, np.sqrt(v1 + v2), n)
    part = st.split(s, v1, v2, "gaussian", random_state=rng)
    assert stats.kstest(part, stats.norm(0, np.sqrt(v1)).cdf).pvalue > 0.01
    assert stats.kstest(s - part, stats.norm(0, np.sqrt(v2)).cdf).pvalue > 0.01


def test_gaussian_split_moments():
    mean, var = st.split_gaussian_moments(3.0, 1.0, 2.0)
    assert mean == pytest.approx(1.0) and var == pytest.approx(2.0 / 3.0)
    # (3.28) as written: variance Σ_1²(1 − Σ_1²/(Σ_1²+Σ_2²))
    v1, v2, s = 0.3, 1.7, -2.5
    mean, var = st.split_gaussian_moments(s, v1, v2)
    assert mean == pytest.approx(s * v1 / (v1 + v2))
    assert var == pytest.approx(v1 * (1 - v1 / (v1 + v2)))
    draws = st.split(np.full(20000, s), v1, v2, 2, random_state=0)
    assert draws.mean() == pytest.approx(mean, abs=4 * np.sqrt(var / 20000))
    assert draws.var() == pytest.approx(var, rel=0.05)
    m, v = st.split_gaussian_moments([1.0, 1.0], [0.0, 1.0], [1.0, 0.0])
    np.testing.assert_array_equal(m, [0.0, 1.0])
    np.testing.assert_array_equal(v, [0.0, 0.0])


def test_additivity():
    rng = np.random.default_rng(13)
    counts = np.array([1, 2, 3])
    sigma = np.array([0.5, 0.2, 0.1])
    widths = np.repeat(sigma, counts)  # the 6 member coefficients
    n = 5000
    cauchy_sum = (widths * rng.standard_cauchy((n, widths.size))).sum(axis=1)
    w = st.compressed_width(counts, sigma, "cauchy")
    assert w == pytest.approx(widths.sum())
    assert stats.kstest(cauchy_sum, stats.cauchy(0, w).cdf).pvalue > 0.01
    gauss_sum = (widths * rng.standard_normal((n, widths.size))).sum(axis=1)
    v = st.compressed_width(counts, sigma, "gaussian")
    assert v == pytest.approx((widths**2).sum())
    assert stats.kstest(gauss_sum, stats.norm(0, np.sqrt(v)).cdf).pvalue > 0.01


def test_compressed_width_against_loop():
    rng = np.random.default_rng(14)
    counts = rng.integers(0, 4, size=(30, 6))
    sigma = rng.uniform(0.01, 5, size=6)
    for alpha in (1, 2):
        expected = [sum(counts[g, o] * sigma[o] ** alpha for o in range(6)) for g in range(30)]
        np.testing.assert_allclose(st.compressed_width(counts, sigma, alpha), expected, rtol=1e-14)


def test_log_prior():
    s = np.array([-1e200, -30.0, -0.5, 0.0, 2.0, 1e250])
    np.testing.assert_allclose(st.log_prior(s[1:-1], 1.5, "cauchy"), stats.cauchy(0, 1.5).logpdf(s[1:-1]), rtol=1e-13)
    extreme = st.log_prior(s, 1.5, 1)
    assert np.all(np.isfinite(extreme))
    assert extreme[-1] == pytest.approx(-np.log(np.pi) + np.log(1.5) - 2 * np.log(1e250))
    np.testing.assert_allclose(st.log_prior(s[1:-1], 2.25, "gaussian"), stats.norm(0, 1.5).logpdf(s[1:-1]), rtol=1e-13)
    w = np.array([0.3, 1.0, 7.0])
    np.testing.assert_allclose(st.log_prior(2.0, w, 1), [st.log_prior_scalar(2.0, x, 1) for x in w], rtol=1e-15)
    assert isinstance(st.log_prior(0.1, 1.0, 2), float)


@jit(cache=False)
def _numba_split_cauchy(rng, s, a, b):
    out = np.empty(s.shape[0])
    for i in range(s.shape[0]):
        out[i] = st.split_cauchy(s[i], a[i], b[i], rng)
    return out


@jit(cache=False)
def _numba_split_gaussian(rng, s, v1, v2):
    out = np.empty(s.shape[0])
    for i in range(s.shape[0]):
        out[i] = st.split_gaussian(s[i], v1[i], v2[i], rng)
    return out


@jit(cache=False)
def _numba_prior_draws(rng, width, index):
    out = np.empty(width.shape[0])
    for i in range(width.shape[0]):
        out[i] = st.prior_draw(width[i], index, rng)
    return out


def test_numba_kernels_equal_python_given_the_same_random_numbers():
    """numba draws from the Generator passed in with numpy's own algorithms, so the streams coincide."""
    rng = np.random.default_rng(15)
    n = 200
    s = rng.standard_cauchy(n) * 3
    a, b = rng.uniform(0.05, 3, n), rng.uniform(0.05, 3, n)
    u = np.random.default_rng(42).random(n)
    np.testing.assert_array_equal(
        _numba_split_cauchy(np.random.default_rng(42), s, a, b), st.split_cauchy_inversion(s, a, b, u)
    )
    z = np.random.default_rng(43).standard_normal(n)
    expected = [st.split_gaussian_from_normal(s[i], a[i], b[i], z[i]) for i in range(n)]
    np.testing.assert_allclose(_numba_split_gaussian(np.random.default_rng(43), s, a, b), expected, rtol=1e-15)
    mean, var = st.split_gaussian_moments(s, a, b)
    np.testing.assert_allclose(expected, mean + np.sqrt(var) * z, rtol=1e-12, atol=1e-14)
    u = np.random.default_rng(44).random(n)
    np.testing.assert_allclose(_numba_prior_draws(np.random.default_rng(44), a, 1), stats.cauchy(0, a).ppf(u),
                               rtol=1e-10)  # fmt: skip
    z = np.random.default_rng(45).standard_normal(n)
    np.testing.assert_allclose(_numba_prior_draws(np.random.default_rng(45), a, 2), np.sqrt(a) * z, rtol=1e-14)
    # the kernels advance the generator passed in: numba's global generator is not touched
    generator = np.random.default_rng(46)
    first = _numba_prior_draws(generator, a[:5], 2)
    assert not np.array_equal(first, _numba_prior_draws(generator, a[:5], 2))


def test_empty_and_full_parts():
    s = np.array([1.5, -2.0, 0.0])
    for index in ("cauchy", "gaussian"):
        np.testing.assert_array_equal(st.split(s, 0.0, 1.0, index, random_state=0), [0.0, 0.0, 0.0])
        np.testing.assert_array_equal(st.split(s, 1.0, 0.0, index, random_state=0), s)
        np.testing.assert_array_equal(st.split(s, 0.0, 0.0, index, random_state=0), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(st.split_cauchy_rejection(s, [0.0, 1.0, 0.0], [1.0, 0.0, 0.0], 0), [0.0, -2.0, 0.0])
    rng = np.random.default_rng(0)
    assert st.split_cauchy(1.5, 0.0, 1.0, rng) == 0.0 and st.split_cauchy(1.5, 1.0, 0.0, rng) == 1.5
    assert st.split_gaussian(1.5, 0.0, 1.0, rng) == 0.0 and st.split_gaussian(1.5, 1.0, 0.0, rng) == 1.5
    assert st.prior_draw(0.0, 1, rng) == 0.0
    np.testing.assert_array_equal(st.split_cauchy_cdf([-0.1, 0.0], 2.0, 0.0, 1.0), [0.0, 1.0])
    np.testing.assert_array_equal(st.split_cauchy_cdf([1.9, 2.0], 2.0, 1.0, 0.0), [0.0, 1.0])
    assert st.split_cauchy_inversion(1.0, 1.0, 2.0, [0.0, 1.0]).tolist() == [-np.inf, np.inf]


def test_split_shapes():
    out = st.split(np.zeros((3, 4)), np.ones(4), 2.0, "cauchy", random_state=1)
    assert out.shape == (3, 4)
    assert isinstance(st.split(0.3, 1.0, 1.0, 2, random_state=1), float)
    np.testing.assert_array_equal(
        st.split(np.arange(5.0), 1.0, 1.0, 1, random_state=3), st.split(np.arange(5.0), 1.0, 1.0, 1, random_state=3)
    )


def test_validation_errors():
    with pytest.raises(ValueError, match="index"):
        st.split(1.0, 1.0, 1.0, 1.5)
    with pytest.raises(ValueError, match="index"):
        st.log_prior(1.0, 1.0, "levy")
    with pytest.raises(ValueError, match="index"):
        st.compressed_width([[1]], [1.0], True)
    with pytest.raises(ValueError, match="width1"):
        st.split(1.0, -1.0, 1.0, 1)
    with pytest.raises(ValueError, match="finite"):
        st.split(np.nan, 1.0, 1.0, 1)
    with pytest.raises(ValueError, match="method"):
        st.split(1.0, 1.0, 1.0, 1, method="newton")
    with pytest.raises(ValueError, match="width"):
        st.log_prior(1.0, 0.0, 1)
    with pytest.raises(ValueError, match="u must be probabilities"):
        st.split_cauchy_inversion(1.0, 1.0, 1.0, 1.5)
    with pytest.raises(ValueError, match="n_orders"):
        st.compressed_width(np.ones((3, 4)), np.ones(3), 1)
    with pytest.raises(ValueError, match="order_counts"):
        st.compressed_width(-np.ones((3, 3)), np.ones(3), 1)
    with pytest.raises(ValueError, match="sigma1 > 0"):
        st.split_cauchy_normalizer(1.0, 0.0, 1.0)
    with pytest.raises(TypeError, match="real"):
        st.log_prior("a", 1.0, 1)
    with pytest.raises(ValueError, match="shape mismatch|broadcast"):
        st.split(np.ones(3), np.ones(2), 1.0, 1)
