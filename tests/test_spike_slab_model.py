"""The group spike-and-slab model shared by the engines: groups, priors, centring, the evidence fixed point.

Hernández-Lobato et al. (2013) §2 (the model) and §3.3 (the evidence fixed point; docs/spike_slab.md); and the
module boundaries of issue 12: the engines take the model from :mod:`hdbayes.spike_slab.model`, not from one
another's internals.
"""

from __future__ import annotations

import ast
import pathlib
from types import SimpleNamespace

import numpy as np
import pytest
from scipy.special import expit, logit

import hdbayes.spike_slab as spike_slab
from hdbayes.exceptions import InputTypeError, InputValueError
from hdbayes.spike_slab.ep import evidence_statistics, expectation_propagation
from hdbayes.spike_slab.model import (
    EvidenceStatistics,
    center_data,
    check_coded_model,
    check_group_codes,
    check_group_values,
    check_groups,
    log_normal_at_zero,
    matching_shift,
    maximise_evidence,
    update_hyperparameters,
)

PACKAGE = pathlib.Path(spike_slab.__file__).parent


# ------------------------------------------------------------------------------------ the user's groups and priors


def test_check_groups_forms():
    np.testing.assert_array_equal(check_groups(None, 3)[0], [0, 1, 2])
    np.testing.assert_array_equal(check_groups(2, 4)[0], [0, 0, 1, 1])
    codes, n_groups = check_groups(["b", "a", "b"], 3)
    assert n_groups == 2 and codes.tolist() == [1, 0, 1]
    codes, n_groups = check_groups([[2, 0], [1]], 3)
    assert n_groups == 2 and codes.tolist() == [0, 1, 0]
    np.testing.assert_array_equal(check_groups(np.array([3.0, 3.0, 7.0]), 3)[0], [0, 0, 1])


@pytest.mark.parametrize(
    ("groups", "message"),
    [
        ([[0, 1], [1, 2]], "groups overlap: feature 1"),
        ([[0, 1]], "feature 2 is in no group"),
        ([[0, 5], [1, 2]], "outside 0..2"),
        ([0, 1], "groups has length 2, but X has 3 features"),
        (np.array([0.0, np.nan, 1.0]), "NaN"),
        (np.array([0.5, 1.0, 1.0]), "groups must be integers .* label 0.5 of feature 0"),
        (2, "must be >= 1 and divide n_features=3"),
        (np.zeros((3, 1)), "1-D array"),
        ([[0, 1], []], "group 1 is empty"),
    ],
)
def test_check_groups_errors(groups, message):
    with pytest.raises(ValueError, match=message):
        check_groups(groups, 3)


def test_check_group_values():
    np.testing.assert_array_equal(check_group_values("p0", 0.2, 3, upper=1.0), [0.2] * 3)
    for bad, message in ((0.0, r"in \(0, 1\), got 0$"), (1.0, r"in \(0, 1\), got 1$"), ([0.1, 0.2], "has 2 values"),
                         (np.nan, "finite")):  # fmt: skip
        with pytest.raises(ValueError, match=message):
            check_group_values("p0", bad, 3, upper=1.0)
    with pytest.raises(ValueError, match="slab_variance must be > 0"):
        check_group_values("slab_variance", -1.0, 3)


# ---------------------------------------------------------------------------------------------- the engines' form


def test_check_coded_model_keeps_codes_and_broadcasts():
    codes, p0, vs, noise = check_coded_model(np.array([0, 0, 2]), np.array([0.2, 0.3, 0.4]), 2.0, 0.5, 3)
    assert codes.dtype == np.int64 and codes.tolist() == [0, 0, 2]  # group 1 stays empty, no renumbering
    np.testing.assert_array_equal(p0, [0.2, 0.3, 0.4])
    np.testing.assert_array_equal(vs, [2.0, 2.0, 2.0])
    assert noise == 0.5
    codes, p0, _, _ = check_coded_model(np.array([1, 0]), 0.3, 1.0, 1.0, 2)
    assert p0.shape == (2,)


@pytest.mark.parametrize(
    ("groups", "error", "message"),
    [
        (np.array([0, 1]), InputValueError, r"one group index per feature \(3\)"),
        (np.array([0.0, 1.0, 1.0]), InputTypeError, "integer group indices"),
        (np.array([0, 1, 3]), InputValueError, r"in 0..2 .* got 0..3"),
        (np.array([-1, 0, 1]), InputValueError, r"in 0..2"),
    ],
)
def test_check_group_codes_errors(groups, error, message):
    with pytest.raises(error, match=message):
        check_group_codes(groups, 3, 3)


def test_exact_posterior_checks_its_model():
    X = np.ones((4, 2))
    with pytest.raises(InputValueError, match="prior_inclusion must be in"):
        spike_slab.exact_posterior(X, np.ones(4), np.array([0, 1]), np.array([0.5, 1.5]), np.ones(2), 1.0)
    with pytest.raises(InputValueError, match="noise_variance"):
        spike_slab.exact_posterior(X, np.ones(4), np.array([0, 1]), np.full(2, 0.5), np.ones(2), -1.0)


def test_center_data_without_intercept_is_the_identity():
    X, y = np.arange(6.0).reshape(3, 2), np.array([1.0, 2.0, 4.0])
    Xc, yc, x_offset, y_offset = center_data(X, y, False)
    assert Xc is X and yc is y and y_offset == 0.0
    np.testing.assert_array_equal(x_offset, 0.0)
    Xc, yc, x_offset, y_offset = center_data(X, y, True)
    np.testing.assert_allclose(Xc.mean(axis=0), 0.0, atol=1e-15)
    assert y_offset == pytest.approx(7.0 / 3.0) and yc.sum() == pytest.approx(0.0, abs=1e-14)


# ---------------------------------------------------------------------------------------------- evidence fixed point


def test_matching_shift_solves_its_equation_and_saturates():
    base = logit(np.array([0.1, 0.2, 0.7]))
    delta = matching_shift(base, 1.5)
    assert float(np.sum(expit(base + delta))) == pytest.approx(1.5, abs=1e-10)
    assert matching_shift(base, 0.0) == -40.0 and matching_shift(base, 3.0) == 40.0


def test_update_hyperparameters_without_valid_cavities():
    """σ0² ← E‖y − Xw‖²/n (floored at 1e-12 σ0²); no valid cavity leaves the scale of v_s where it was."""
    empty = np.zeros(0)
    stats = EvidenceStatistics(6.0, 3, 0.5, empty, empty, empty, empty)
    noise, shift, log_scale = update_hyperparameters(stats, 1.0, logit(np.array([0.5])), 0.25)
    assert noise == 2.0 and shift == pytest.approx(0.0, abs=1e-10) and log_scale == 0.25
    floor = EvidenceStatistics(0.0, 3, 0.5, empty, empty, empty, empty)
    assert update_hyperparameters(floor, 2.0, logit(np.array([0.5])), 0.0)[0] == 2e-12


def test_update_hyperparameters_scale_maximises_the_site_evidence():
    """The new log c maximises Σ_j log Z_j(c v_s) with the cavities fixed (checked on a grid)."""
    rng = np.random.default_rng(3)
    mean, variance, log_odds = rng.normal(scale=2.0, size=8), rng.uniform(0.1, 1.0, 8), rng.normal(size=8)
    base = np.full(8, 0.7)
    stats = EvidenceStatistics(1.0, 1, 1.0, mean, variance, log_odds, base)
    _, _, log_scale = update_hyperparameters(stats, 1.0, np.zeros(1), 0.0)

    def log_z(kappa):
        on = np.log(expit(log_odds)) + log_normal_at_zero(mean, variance + base * np.exp(kappa))
        off = np.log(expit(-log_odds)) + log_normal_at_zero(mean, variance)
        return float(np.sum(np.logaddexp(on, off)))

    grid = np.linspace(-5.0, 5.0, 2001)
    assert log_z(log_scale) >= max(log_z(k) for k in grid) - 1e-6
    assert -5.0 < log_scale < 5.0


def test_evidence_statistics_of_ep_against_a_dense_computation():
    """E_Q‖y − Xw‖² = ‖y − Xm‖² + tr(X V Xᵀ), on both EP paths (the direct one adds the part projected out)."""
    rng = np.random.default_rng(5)
    for n, solver in ((8, "woodbury"), (30, "direct")):
        X, y = rng.normal(size=(n, 6)), rng.normal(size=n)
        groups = np.array([0, 0, 1, 1, 2, 2])
        result = expectation_propagation(X, y, groups, np.full(3, 0.4), np.ones(3), 0.3, solver=solver)
        v = result.sites.variance
        V = np.linalg.inv(X.T @ X / 0.3 + np.diag(1.0 / v))
        expected = float(np.sum((y - X @ result.mean) ** 2) + np.trace(X @ V @ X.T))
        stats = evidence_statistics(result, groups, np.ones(3))
        assert result.solver == solver and stats.n_samples == n
        assert stats.expected_squared_error == pytest.approx(expected, rel=1e-9)
        assert stats.inclusion_sum == pytest.approx(float(np.sum(result.group_inclusion_probabilities)))


def test_maximise_evidence_reports_a_failed_first_round():
    failed = SimpleNamespace(converged=False, log_evidence=np.nan, last_change=0.5, sites=None)
    p0, vs, noise, result = maximise_evidence(lambda *args: failed, None, np.full(2, 0.5), np.ones(2), 1.0)
    assert p0 is None and vs is None and noise is None and result is failed


def test_maximise_evidence_keeps_the_best_converged_round():
    """A toy engine whose evidence peaks at σ0² = 2: the loop moves σ0² there and keeps that round."""
    calls = []

    def fit(p0, vs, noise, init):
        calls.append(noise)
        return SimpleNamespace(converged=True, log_evidence=-(np.log(noise / 2.0) ** 2), last_change=0.0, sites=noise)

    def statistics(result, vs, log_scale):
        empty = np.zeros(0)
        return EvidenceStatistics(2.0 * 10, 10, 1.0, empty, empty, empty, empty)

    p0, vs, noise, result = maximise_evidence(fit, statistics, np.full(2, 0.5), np.ones(2), 7.0)
    assert noise == 2.0 and result.log_evidence == 0.0
    np.testing.assert_allclose(p0, 0.5, atol=1e-10)
    np.testing.assert_array_equal(vs, 1.0)
    assert calls[:2] == [7.0, 2.0]


def _toy_engine(fails_after=None):
    """The toy engine above (evidence peaking at σ0² = 2), its fit failing from round ``fails_after`` + 1 on."""
    calls = []

    def fit(p0, vs, noise, init):
        calls.append(noise)
        converged = fails_after is None or len(calls) <= fails_after
        return SimpleNamespace(converged=converged, log_evidence=-(np.log(noise / 2.0) ** 2), last_change=0.0,
                               sites=noise)  # fmt: skip

    def statistics(result, vs, log_scale):
        empty = np.zeros(0)
        return EvidenceStatistics(2.0 * 10, 10, 1.0, empty, empty, empty, empty)

    return fit, statistics


def test_maximise_evidence_says_when_it_stops_short_of_its_fixed_point():
    """Out of rounds, or the engine failing at a later round's values: a ConvergenceWarning, and the best converged
    round is kept; a fixed point reached gives none."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    start = (np.full(2, 0.5), np.ones(2), 7.0)
    with pytest.warns(ConvergenceWarning, match=r"1 rounds were used up \(last change 1.25 > rtol=0.0001\)"):
        _, _, noise, _ = maximise_evidence(*_toy_engine(), *start, max_rounds=1)
    assert noise == 7.0
    with pytest.warns(ConvergenceWarning, match="the fit at round 2's values did not converge"):
        _, _, noise, _ = maximise_evidence(*_toy_engine(fails_after=1), *start)
    assert noise == 7.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        assert maximise_evidence(*_toy_engine(), *start)[2] == 2.0


# ---------------------------------------------------------------------------------------------- module boundaries


def _imports(module):
    tree = ast.parse((PACKAGE / f"{module}.py").read_text(encoding="utf-8"))
    return [(node.module, alias.name) for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
            for alias in node.names]  # fmt: skip


@pytest.mark.parametrize("module", ["ep", "gibbs", "exact", "design", "estimator"])
def test_engines_take_the_model_from_model_and_no_private_names(module):
    imports = _imports(module)
    assert any(source in ("hdbayes.spike_slab.model", ".model") for source, _ in imports)
    private = [(source, name) for source, name in imports if "spike_slab" in source and name.startswith("_")]
    assert private == []
    model_names = {"center_data", "check_data_magnitudes", "check_groups", "check_model_parameters",
                   "check_group_values", "maximise_evidence"}  # fmt: skip
    from_ep = {name for source, name in imports if source in ("hdbayes.spike_slab.ep", ".ep")}
    assert not from_ep & model_names


def test_estimator_holds_no_linear_algebra():
    source = (PACKAGE / "estimator.py").read_text(encoding="utf-8")
    assert "linalg" not in source and "scipy.optimize" not in source
