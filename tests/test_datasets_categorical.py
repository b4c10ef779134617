"""The categorical naive Bayes simulator against its model, docs/categorical_correction.md (C1)–(C3).

Moments are compared with their values under the model, each with a margin of about 5 standard errors of the
statistic (stated at each check), computed from the model itself, so a fixed seed passes on any CPU.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from hdbayes.datasets import simulate_categorical_naive_bayes, simulate_naive_bayes
from hdbayes.exceptions import InputTypeError, InputValueError


def test_layout_labels_and_levels():
    sim = simulate_categorical_naive_bayes(n_classes=4, n_levels=3, n_features=300, n_samples=42, n_test=17,
                                           random_state=0)  # fmt: skip
    assert list(sim)[:6] == ["X", "y", "X_test", "y_test", "feature_names", "DESCR"]
    assert sim.X.shape == (42, 300) and sim.X_test.shape == (17, 300) and sim.X.dtype == np.int8
    assert sim.X.min() == 0 and sim.X.max() == 2 and sim.X_test.max() <= 2
    # balanced: n // G of each class, the remainder of distinct classes
    assert sorted(np.bincount(sim.y, minlength=4)) == [10, 10, 11, 11]
    assert sorted(np.bincount(sim.y_test, minlength=4)) == [4, 4, 4, 5]
    assert sim.theta.shape == (300, 3) and sim.phi.shape == (4, 300, 3) and sim.alpha == 300.0
    np.testing.assert_allclose(sim.theta.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(sim.phi.sum(axis=2), 1.0, rtol=0, atol=1e-12)
    assert sim.feature_names[0] == "x0" and "G = 4" in sim.DESCR
    unbalanced = simulate_categorical_naive_bayes(n_classes=3, n_features=5, n_samples=600, n_test=3,
                                                  balanced=False, random_state=1)  # fmt: skip
    assert set(np.unique(unbalanced.y)) == {0, 1, 2} and np.bincount(unbalanced.y).std() > 0


def test_same_seed_same_data_and_generator_is_advanced():
    a = simulate_categorical_naive_bayes(n_features=2000, n_samples=30, n_test=30, random_state=5)
    b = simulate_categorical_naive_bayes(n_features=2000, n_samples=30, n_test=30, random_state=5)
    for key in ("X", "y", "X_test", "y_test", "theta", "phi"):
        np.testing.assert_array_equal(a[key], b[key])
    rng = np.random.default_rng(5)
    c = simulate_categorical_naive_bayes(n_features=20, n_samples=5, n_test=5, random_state=rng)
    d = simulate_categorical_naive_bayes(n_features=20, n_samples=5, n_test=5, random_state=rng)
    assert not np.array_equal(c.theta, d.theta)


def test_paper_size_generates_fast_enough_in_memory():
    # the size: p = 10 000 × 2200 cases (speed is measured in the benchmarks; here only that it runs)
    sim = simulate_categorical_naive_bayes(n_classes=4, n_levels=3, random_state=0)
    assert sim.X.shape == (200, 10000) and sim.X_test.shape == (2000, 10000)
    assert np.array_equal(np.bincount(sim.y), [50] * 4)


@pytest.mark.parametrize("n_levels", [2, 3, 5])
def test_theta_is_uniform_on_the_simplex(n_levels):
    # under the uniform distribution on the simplex each coordinate is Beta(1, L − 1)
    p = 20000
    sim = simulate_categorical_naive_bayes(n_levels=n_levels, n_features=p, n_samples=2, n_test=1, random_state=2)
    for level in range(n_levels):
        result = stats.kstest(sim.theta[:, level], stats.beta(1, n_levels - 1).cdf)
        assert result.statistic < 1.95 / np.sqrt(p)  # the KS test's 0.1 % critical value


@pytest.mark.parametrize(("n_levels", "alpha"), [(2, 300.0), (3, 10.0), (4, 0.5)])
def test_phi_given_theta_has_the_dirichlet_moments(n_levels, alpha):
    # E φ = θ and Var φ = θ(1 − θ)/(α + 1), each class independently
    p, G = 20000, 3
    sim = simulate_categorical_naive_bayes(n_classes=G, n_levels=n_levels, alpha=alpha, n_features=p, n_samples=3,
                                           n_test=1, random_state=3)  # fmt: skip
    theta, phi = sim.theta[None], sim.phi
    variance = np.broadcast_to(theta * (1 - theta) / (alpha + 1), phi.shape)
    # level 0's deviations summed over classes and features: standard normal under the model (the sum over all
    # levels is 0 by construction)
    z = (phi[:, :, 0] - theta[:, :, 0]).sum() / np.sqrt(variance[:, :, 0].sum())
    assert abs(z) < 5
    ratio = ((phi - theta) ** 2).sum() / variance.sum()
    # a mean of G·p = 60 000 independent features' terms: its standard error is about 0.01 at these α
    # (measured |ratio − 1| ≤ 0.007 and |cross| ≤ 0.01 for this seed)
    assert abs(ratio - 1) < 0.05
    # independent classes given θ: the deviations of two classes are uncorrelated
    cross = ((phi[0] - theta[0]) * (phi[1] - theta[0])).sum() / variance[0].sum()
    assert abs(cross) < 0.05


@pytest.mark.parametrize(("n_classes", "n_levels", "alpha"), [(3, 2, 300.0), (4, 3, 20.0)])
def test_per_class_frequencies_have_the_dirichlet_multinomial_moments(n_classes, n_levels, alpha):
    # the frequency f of level l among the N cases of class g: E f = θ_l and, with φ integrated out,
    # Var f = θ_l (1 − θ_l)(α + N) / (N (α + 1)) (the Dirichlet–multinomial); given φ, E f = φ and
    # Var f = φ(1 − φ)/N
    p, n = 20000, 40 * n_classes
    sim = simulate_categorical_naive_bayes(n_classes=n_classes, n_levels=n_levels, alpha=alpha, n_features=p,
                                           n_samples=n, n_test=1, random_state=4)  # fmt: skip
    N = n // n_classes
    onehot = sim.X[:, :, None] == np.arange(n_levels)
    freq = np.stack([onehot[sim.y == g].mean(axis=0) for g in range(n_classes)])  # (G, p, L)
    theta = sim.theta[None]
    marginal = np.broadcast_to(theta * (1 - theta) * (alpha + N) / (N * (alpha + 1)), freq.shape)
    assert abs(((freq - theta) ** 2).sum() / marginal.sum() - 1) < 0.05
    conditional = sim.phi * (1 - sim.phi) / N
    assert abs(((freq - sim.phi) ** 2).sum() / conditional.sum() - 1) < 0.05
    # level 0's deviations from φ summed over classes and features: standard normal under the model
    assert abs((freq - sim.phi)[:, :, 0].sum() / np.sqrt(conditional[:, :, 0].sum())) < 5


def test_two_classes_two_levels_match_the_binary_simulator_in_distribution():
    # G = L = 2 is the model of simulate_naive_bayes; level 1's class frequencies have the same moments
    p, alpha = 20000, 50.0
    cat = simulate_categorical_naive_bayes(n_classes=2, n_levels=2, alpha=alpha, n_features=p, n_samples=60,
                                           n_test=1, random_state=6)  # fmt: skip
    binary = simulate_naive_bayes(alpha=alpha, n_features=p, n_samples=60, n_test=1, random_state=6)
    for sim, theta in ((cat, cat.theta[:, 1]), (binary, binary.theta)):
        freq = np.stack([sim.X[sim.y == g].mean(axis=0) for g in (0, 1)])
        variance = theta * (1 - theta) * (alpha + 30) / (30 * (alpha + 1))
        assert abs(((freq - theta) ** 2).sum() / (2 * variance.sum()) - 1) < 0.05


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"n_classes": 1}, InputValueError, "n_classes"),
        ({"n_levels": 1}, InputValueError, "n_levels"),
        ({"n_levels": 128}, InputValueError, "n_levels"),
        ({"n_levels": 2.5}, InputTypeError, "n_levels"),
        ({"alpha": 0.0}, InputValueError, "alpha"),
        ({"alpha": "big"}, InputTypeError, "alpha"),
        ({"n_features": 0}, InputValueError, "n_features"),
        ({"n_samples": 0}, InputValueError, "n_samples"),
    ],
)
def test_bad_arguments_are_named(kwargs, error, match):
    with pytest.raises(error, match=match):
        simulate_categorical_naive_bayes(**{"n_features": 5, "n_samples": 5, "n_test": 5, **kwargs})
