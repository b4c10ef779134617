"""The panel rules for the θ integrals of three-level features with many training cases (eq. C14).

The exact rules cost O(n²) per table and α; the panel rules cost the same at any n, and their error is measured
by comparing two of them (the exact expansion where they disagree). Oracles: the exact moment expansion and,
for small n, exact rational arithmetic.
"""

import math

import numpy as np
import pytest

from hdbayes.datasets import simulate_categorical_naive_bayes
from hdbayes.exceptions import InputValueError
from hdbayes.selection_bias import BiasCorrectedCategoricalNB
from hdbayes.selection_bias import simplex_integrals as module
from hdbayes.selection_bias.categorical import categorical_feature_integrals


def tables_of(n_samples, n_classes, alpha, seed, n_tables=5):
    data = simulate_categorical_naive_bayes(n_classes=n_classes, n_levels=3, alpha=alpha, n_features=n_tables,
                                            n_samples=n_samples, n_test=1, random_state=seed)  # fmt: skip
    sizes = np.bincount(data.y)
    counts = np.stack([(data.X[data.y == g][:, :, None] == np.arange(3)).sum(axis=0) for g in range(n_classes)],
                      axis=1)  # fmt: skip
    return np.ascontiguousarray(counts, dtype=np.int64), sizes


def log_factorials(n):
    return np.array([math.lgamma(i + 1.0) for i in range(n + 5)])


ALPHAS = np.exp(np.linspace(np.log(0.05), np.log(1e9), 12))


@pytest.mark.parametrize("n_samples, n_classes, alpha", [(300, 2, 30.0), (400, 3, 2.0), (360, 4, 3000.0)])
def test_panels_equal_the_exact_expansion(n_samples, n_classes, alpha):
    tables, sizes = tables_of(n_samples, n_classes, alpha, seed=n_samples)
    lf = log_factorials(n_samples)
    marginal, q, n_exact = module._integrals_by_panels(tables, sizes, ALPHAS, lf)
    exact_marginal, exact_q = module._integrals_by_moments(tables, sizes, ALPHAS, lf)
    assert n_exact == 0  # the two panel rules agree to 1e-9 everywhere here (measured: to about 1e-12)
    np.testing.assert_allclose(marginal, exact_marginal, rtol=0, atol=1e-9)
    np.testing.assert_allclose(q, exact_q, rtol=0, atol=1e-9)


def _exact_log_integral(table, sizes, alpha):
    """log ∫ Π_g Π_l (αθ_l)_{I_gl} / (α)_{N_g} dθ on the uniform simplex, in exact integer arithmetic (integer α):
    the polynomials h_l(θ) = Π_g Π_{i<I_gl}(αθ + i), scaled by a!, convolved over the levels and weighted by
    1/(s + 2)! (eq. C13)."""
    scaled = []
    for level in range(3):
        coefficients = [1]
        for g in range(table.shape[0]):
            for i in range(int(table[g, level])):
                shifted = [0] + coefficients
                coefficients = [i * c for c in coefficients] + [0]
                coefficients = [c + alpha * d for c, d in zip(coefficients, shifted, strict=True)]
        scaled.append([c * math.factorial(a) for a, c in enumerate(coefficients)])
    pair = [0] * (len(scaled[0]) + len(scaled[1]) - 1)
    for a, x in enumerate(scaled[0]):
        for b, y in enumerate(scaled[1]):
            pair[a + b] += x * y
    top = len(pair) + len(scaled[2]) + 1
    numerator = 0
    for s, x in enumerate(pair):
        for c, y in enumerate(scaled[2]):
            numerator += x * y * (math.factorial(top) // math.factorial(s + c + 2))
    denominator = math.factorial(top)
    for size in sizes:
        for i in range(int(size)):
            denominator *= alpha + i
    return math.log(2 * numerator) - math.log(denominator)


@pytest.mark.parametrize("alpha", [1, 30, 3000])
def test_panels_against_exact_rational_arithmetic(alpha):
    tables, sizes = tables_of(160, 2, 30.0, seed=7, n_tables=2)
    marginal, _, _ = module._integrals_by_panels(tables, sizes, np.array([float(alpha)]), log_factorials(160))
    for u in range(tables.shape[0]):
        assert marginal[0, u] == pytest.approx(_exact_log_integral(tables[u], sizes, alpha), rel=0, abs=1e-11)


def test_disagreeing_rules_fall_back_to_the_exact_expansion(monkeypatch):
    tables, sizes = tables_of(300, 2, 30.0, seed=1, n_tables=3)
    lf = log_factorials(300)
    monkeypatch.setattr(module, "_PANEL_TOLERANCE", -1.0)  # no two rules ever agree
    marginal, q, n_exact = module._integrals_by_panels(tables, sizes, ALPHAS[:4], lf)
    assert n_exact == 4 * 3
    exact_marginal, exact_q = module._integrals_by_moments(tables, sizes, ALPHAS[:4], lf)
    np.testing.assert_array_equal(marginal, exact_marginal)
    np.testing.assert_array_equal(q, exact_q)


def test_auto_uses_the_panels_beyond_the_exact_rule_and_only_for_three_levels():
    tables, sizes = tables_of(300, 2, 30.0, seed=2, n_tables=3)
    auto = categorical_feature_integrals(tables, sizes, ALPHAS[:3])
    panels = categorical_feature_integrals(tables, sizes, ALPHAS[:3], method="panels")
    for a, b in zip(auto, panels, strict=True):
        np.testing.assert_array_equal(a, b)
    small, sizes_small = tables_of(40, 2, 30.0, seed=2, n_tables=3)  # n = 40: the exact rule (21² nodes)
    exact = categorical_feature_integrals(small, sizes_small, ALPHAS[:3], method="quadrature")
    np.testing.assert_array_equal(categorical_feature_integrals(small, sizes_small, ALPHAS[:3])[0], exact[0])
    with pytest.raises(InputValueError, match="3 levels"):
        categorical_feature_integrals(np.ones((1, 2, 4), dtype=np.int64), [4, 4], ALPHAS[:1], method="panels")


def test_a_fit_with_many_cases_matches_the_exact_integrals():
    data = simulate_categorical_naive_bayes(n_classes=2, n_levels=3, alpha=30.0, n_features=200, n_samples=400,
                                            n_test=50, random_state=3)  # fmt: skip
    model = BiasCorrectedCategoricalNB(n_features_to_select=5, correct=False, random_state=0).fit(data.X, data.y)
    exact_marginal, exact_q = categorical_feature_integrals(model.level_counts_, model.class_count_,
                                                            model.alpha_grid_, method="moments")  # fmt: skip
    np.testing.assert_allclose(model.log_integral_, exact_q, rtol=0, atol=1e-9)
    np.testing.assert_allclose(model.log_marginal_likelihood_, exact_marginal.sum(axis=1), rtol=0, atol=5e-9)


def test_panels_on_random_tables_with_absent_levels_and_extreme_alpha():
    """Tables from random Dirichlet-multinomials (a fifth with a level that never occurs, so the mode sits on an
    edge of the simplex), α from 0.02 to 1e10: the panels or, where their two rules disagree, the exact
    expansion, against the exact expansion."""
    rng = np.random.default_rng(5)
    alphas = np.exp(np.linspace(np.log(0.02), np.log(1e10), 8))
    for _ in range(20):
        n_classes, n = int(rng.integers(2, 5)), int(rng.integers(290, 500))
        sizes = rng.multinomial(n - 2 * n_classes, np.ones(n_classes) / n_classes) + 2
        theta = rng.dirichlet(np.ones(3) * rng.choice([0.3, 1.0, 5.0]))
        if rng.random() < 0.2:
            theta[rng.integers(3)] = 0.0
            theta /= theta.sum()
        concentration = 10 ** rng.uniform(-1, 3)
        table = np.array([rng.multinomial(size, rng.dirichlet(concentration * theta + 1e-12)) for size in sizes])
        lf = log_factorials(n)
        marginal, q, _ = module._integrals_by_panels(table[None].astype(np.int64), sizes, alphas, lf)
        exact_marginal, exact_q = module._integrals_by_moments(table[None].astype(np.int64), sizes, alphas, lf)
        np.testing.assert_allclose(marginal, exact_marginal, rtol=0, atol=2e-9)
        np.testing.assert_allclose(q, exact_q, rtol=0, atol=2e-9)


def test_a_rule_that_fails_is_not_accepted(monkeypatch):
    tables, sizes = tables_of(300, 2, 30.0, seed=4, n_tables=1)
    original = module._panel_integrals
    calls = []

    def failing(table, sizes, alpha, x1, w1, x2, w2):  # a NaN in one log Q of the first rule of each pair only
        marginal, q = original(table, sizes, alpha, x1, w1, x2, w2)
        calls.append(1)
        if len(calls) % 2 == 1:
            q = q.copy()
            q[0, 1] = np.nan
        return marginal, q

    monkeypatch.setattr(module, "_panel_integrals", failing)
    _, q, n_exact = module._integrals_by_panels(tables, sizes, ALPHAS[:2], log_factorials(300))
    assert n_exact == 2 and np.isfinite(q).all()
