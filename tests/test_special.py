"""Tests for hdbayes.special: the Beta–Bernoulli marginal U and the Beta-binomial table."""

import math

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import betaln, gammaln

from hdbayes.special import (
    beta_binomial_log_pmf_table,
    log_beta_bernoulli,
    log_rising_factorial,
    log_rising_factorial_table,
)


def _product_form(f1, f0, n1, n0):
    """U by its product form (thesis eq. 2.30), in exact-ish float arithmetic."""
    num = np.prod([f0 + l for l in range(n0)]) * np.prod([f1 + l for l in range(n1)])
    den = np.prod([f0 + f1 + l for l in range(n0 + n1)])
    return num / den


# ---------------------------------------------------------------------------
# log_rising_factorial
# ---------------------------------------------------------------------------


def test_log_rising_factorial_matches_gammaln():
    rng = np.random.default_rng(0)
    a = rng.uniform(0.01, 50.0, size=200)
    n = rng.integers(0, 80, size=200)
    expected = gammaln(a + n) - gammaln(a)
    np.testing.assert_allclose(log_rising_factorial(a, n), expected, rtol=1e-12, atol=1e-12)


def test_log_rising_factorial_limits_at_zero():
    out = log_rising_factorial(np.zeros(4), np.array([0, 1, 2, 10]))
    assert out[0] == 0.0
    assert np.all(np.isneginf(out[1:]))


def test_compiled_log_rising_factorial_equals_the_numpy_one():
    """The numba kernels' scalar twin (hdbayes._special_kernels) computes the same formulas as
    log_rising_factorial: both branches (a below and above 15), real n, a ~ 1e12 and the limits at a = 0."""
    from hdbayes._special_kernels import log_rising_factorial_scalar, stirling_tail

    rng = np.random.default_rng(1)
    a = np.concatenate([rng.uniform(0.01, 30.0, 300), [14.999999, 15.0, 1e6, 1e12], np.zeros(3)])
    n = np.concatenate([rng.uniform(0.0, 80.0, 300), [3.0, 3.0, 7.5, 3.0], [0.0, 1.0, 2.5]])
    compiled = np.array([log_rising_factorial_scalar(x, m) for x, m in zip(a, n)])
    np.testing.assert_allclose(compiled, log_rising_factorial(a, n), rtol=1e-14, atol=1e-14)
    assert compiled[-3] == 0.0 and np.all(np.isneginf(compiled[-2:]))
    from hdbayes.special import _stirling_tail

    z = np.array([15.0, 40.0, 1e4])
    np.testing.assert_allclose([stirling_tail(v) for v in z], _stirling_tail(z), rtol=1e-15)
    # the series' accuracy where it starts (log Γ(15) ≈ 25: the oracle's own rounding is about 4e-15)
    exact = gammaln(15.0) - (14.5 * np.log(15.0) - 15.0 + 0.5 * np.log(2 * np.pi))
    assert stirling_tail(15.0) == pytest.approx(exact, abs=2e-14)


def test_log_rising_factorial_table_matches_gammaln_and_zero_limit():
    a = np.array([[0.0, 0.3], [2.5, 1e6]])
    table = log_rising_factorial_table(a, 12)
    assert table.shape == (2, 2, 13)
    counts = np.arange(13)
    for idx in [(0, 1), (1, 0)]:
        expected = gammaln(a[idx] + counts) - gammaln(a[idx])
        np.testing.assert_allclose(table[idx], expected, rtol=1e-12, atol=1e-12)
    # for large a, gammaln differences cancel badly; compare with an exactly rounded sum of logs
    expected_large = [math.fsum(math.log(1e6 + l) for l in range(i)) for i in counts]
    np.testing.assert_allclose(table[1, 1], expected_large, rtol=1e-14)
    assert table[0, 0, 0] == 0.0
    assert np.all(np.isneginf(table[0, 0, 1:]))


# ---------------------------------------------------------------------------
# log_beta_bernoulli (U)
# ---------------------------------------------------------------------------


def test_log_beta_bernoulli_matches_betaln_form():
    rng = np.random.default_rng(1)
    f1 = rng.uniform(0.05, 30.0, size=300)
    f0 = rng.uniform(0.05, 30.0, size=300)
    n1 = rng.integers(0, 60, size=300)
    n0 = rng.integers(0, 60, size=300)
    expected = betaln(f1 + n1, f0 + n0) - betaln(f1, f0)
    np.testing.assert_allclose(log_beta_bernoulli(f1, f0, n1, n0), expected, rtol=1e-11, atol=1e-11)


@pytest.mark.parametrize(("f1", "f0", "n1", "n0"), [(1.0, 1.0, 1, 1), (0.7, 2.3, 4, 0), (3.0, 0.4, 2, 5)])
def test_log_beta_bernoulli_matches_product_form(f1, f0, n1, n0):
    assert np.exp(log_beta_bernoulli(f1, f0, n1, n0)) == pytest.approx(_product_form(f1, f0, n1, n0), rel=1e-12)


@pytest.mark.parametrize(("f1", "f0", "n1", "n0"), [(1.0, 1.0, 3, 2), (2.5, 4.0, 1, 6), (7.0, 1.5, 5, 5)])
def test_log_beta_bernoulli_is_the_integral_of_the_likelihood_against_beta(f1, f0, n1, n0):
    """U = ∫ ψ^{n1} (1 − ψ)^{n0} Beta(ψ; f1, f0) dψ (the corrected eq. 2.27)."""
    value, _ = integrate.quad(
        lambda psi: psi**n1 * (1 - psi) ** n0 * stats.beta.pdf(psi, f1, f0), 0.0, 1.0, epsabs=0, epsrel=1e-12
    )
    assert np.exp(log_beta_bernoulli(f1, f0, n1, n0)) == pytest.approx(value, rel=1e-9)


def test_log_beta_bernoulli_endpoint_limits():
    # U(0, f0, n1, n0) = 1 if n1 = 0 else 0; U(f1, 0, n1, n0) = 1 if n0 = 0 else 0
    assert log_beta_bernoulli(0.0, 2.0, 0, 5) == pytest.approx(0.0, abs=1e-14)
    assert np.isneginf(log_beta_bernoulli(0.0, 2.0, 1, 5))
    assert log_beta_bernoulli(3.0, 0.0, 4, 0) == pytest.approx(0.0, abs=1e-14)
    assert np.isneginf(log_beta_bernoulli(3.0, 0.0, 4, 1))
    # no counts at all: U = 1 whatever the parameters
    assert log_beta_bernoulli(0.0, 5.0, 0, 0) == 0.0
    # the limits are the continuous limits of U
    small = 1e-10
    assert np.exp(log_beta_bernoulli(small, 2.0, 0, 5)) == pytest.approx(1.0, abs=1e-8)
    assert np.exp(log_beta_bernoulli(small, 2.0, 2, 5)) < 1e-9


def test_log_beta_bernoulli_broadcasts():
    out = log_beta_bernoulli(np.array([1.0, 2.0])[:, None], 1.0, np.arange(3)[None, :], 1)
    assert out.shape == (2, 3)
    assert out[1, 2] == pytest.approx(betaln(4.0, 2.0) - betaln(2.0, 1.0), rel=1e-12)


def test_beta_bernoulli_sums_to_one_over_sequences():
    """Σ over all 2^n binary sequences of U = 1 (it is a distribution over sequences)."""
    n = 7
    counts = np.arange(n + 1)
    log_choose = gammaln(n + 1) - gammaln(counts + 1) - gammaln(n - counts + 1)
    total = np.exp(log_choose + log_beta_bernoulli(1.7, 0.6, counts, n - counts)).sum()
    assert total == pytest.approx(1.0, abs=1e-13)


# ---------------------------------------------------------------------------
# beta_binomial_log_pmf_table
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(("a", "b", "n"), [(1.0, 1.0, 10), (0.3, 2.7, 25), (40.0, 5.0, 60), (1e4, 3e4, 15)])
def test_beta_binomial_table_matches_scipy(a, b, n):
    table = beta_binomial_log_pmf_table(a, b, n)
    expected = stats.betabinom.logpmf(np.arange(n + 1), n, a, b)
    np.testing.assert_allclose(table, expected, rtol=1e-10, atol=1e-10)
    assert np.exp(table).sum() == pytest.approx(1.0, abs=1e-12)


def test_beta_binomial_table_vectorised_over_parameters():
    rng = np.random.default_rng(2)
    a = rng.uniform(0.1, 20, size=(3, 4))
    b = rng.uniform(0.1, 20, size=(3, 4))
    table = beta_binomial_log_pmf_table(a, b, 9)
    assert table.shape == (3, 4, 10)
    expected = stats.betabinom.logpmf(np.arange(10), 9, a[..., None], b[..., None])
    np.testing.assert_allclose(table, expected, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(np.exp(table).sum(axis=-1), 1.0, atol=1e-12)


def test_beta_binomial_table_point_mass_limits():
    at_zero = np.exp(beta_binomial_log_pmf_table(0.0, 3.0, 6))  # θ = 0: all zeros
    np.testing.assert_array_equal(at_zero, np.eye(7)[0])
    at_one = np.exp(beta_binomial_log_pmf_table(3.0, 0.0, 6))  # θ = 1: all ones
    np.testing.assert_array_equal(at_one, np.eye(7)[6])
    assert not np.isnan(beta_binomial_log_pmf_table(np.array([0.0, 2.0]), np.array([2.0, 0.0]), 5)).any()


def test_beta_binomial_table_n_zero():
    np.testing.assert_array_equal(beta_binomial_log_pmf_table(2.0, 3.0, 0), [0.0])


@pytest.mark.parametrize("a", [0.3, 1.0, 9.99, 14.99, 15.0, 57.5, 1e4, 1e8, 1e12])
@pytest.mark.parametrize("n", [0, 1, 2, 7, 150, 3000])
def test_log_rising_factorial_matches_exact_log_sums(a, n):
    import math

    exact = math.fsum(math.log(a + l) for l in range(n))
    assert float(log_rising_factorial(a, n)) == pytest.approx(exact, rel=1e-13, abs=1e-13)


def test_log_rising_factorial_broadcasts_and_avoids_cancellation():
    a = np.array([[2.0], [1e11]])
    n = np.array([[0, 5, 40]])
    out = log_rising_factorial(a, n)
    assert out.shape == (2, 3)
    np.testing.assert_allclose(out[0], gammaln(2.0 + n[0]) - gammaln(2.0), rtol=1e-14)
    # the log-Gamma difference is off by far more than this at a = 1e11
    expected = 40 * np.log(1e11) + sum(np.log1p(l / 1e11) for l in range(40))
    assert out[1, 2] == pytest.approx(expected, rel=1e-15)
