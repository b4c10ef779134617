"""Gaussian-model experiments on real data (Li 2009 §4.2): SRBCT and lymphoma.

The tiny versions (short chains, SRBCT: one gene group and 10-fold CVs; lymphoma: 5 folds) run by
default with every check; the small and paper-size runs are marked slow. Both skip when the data file
is unavailable (no HDBAYES_DATA, no cache, offline).
"""

from __future__ import annotations

import matplotlib.figure
import numpy as np
import pytest
from sklearn.model_selection import KFold
from sklearn.pipeline import Pipeline

from hdbayes.datasets import simulate_gaussian
from hdbayes.experiments import _gaussian_cv
from hdbayes.experiments._runner import probability_measures
from hdbayes.metrics import random_lognormal_loss
from hdbayes.preprocessing import ShrunkCovarianceWhitener
from hdbayes.selection_bias.gaussian import BiasCorrectedGaussianClassifier, SharedSpread

MEASURES = {"actual_error", "expected_error", "amlp", "brier", "expected_loss", "actual_loss"}


def _data_file(name):
    from hdbayes.datasets import data_path

    try:
        return data_path(name)
    except OSError as error:
        pytest.skip(f"{name} unavailable: {error}")


@pytest.fixture(scope="module")
def srbct_file():
    return _data_file("SRBCT.rda")


@pytest.fixture(scope="module")
def lymphoma_file():
    return _data_file("lymphoma.RData")


# ---------------------------------------------------------------------------
# the shared driver


def test_gaussian_model_whitens_only_when_lam_given():
    plain = _gaussian_cv.gaussian_model(n_features_to_select=3, correct=False, variant=SharedSpread(alpha_x=2.0),
                                        random_state=1)  # fmt: skip
    assert isinstance(plain, BiasCorrectedGaussianClassifier)
    assert (plain.n_features_to_select, plain.correct, plain.variant.alpha_x, plain.random_state) == (3, False, 2.0, 1)
    assert plain.progress is False  # no progress bar inside the folds
    piped = _gaussian_cv.gaussian_model(n_features_to_select=3, lam=10.0)
    assert isinstance(piped, Pipeline)
    assert isinstance(piped.steps[0][1], ShrunkCovarianceWhitener) and piped.steps[0][1].lam == 10.0
    assert piped.steps[-1][1].correct is True


def test_cross_validate_methods_rows_and_probabilities():
    data = simulate_gaussian(n_classes=3, n_features=40, n_samples=45, n_test=1, random_state=0)
    X, y = data.X, data.y
    loss = random_lognormal_loss(3, random_state=0)
    rows, proba = _gaussian_cv.cross_validate_methods(
        X, y, cv=KFold(5, shuffle=True, random_state=0), n_features_to_select=5, loss=loss, lam=10.0, random_state=0,
        n_iter=200, burn_in=50, thin=5,
    )  # fmt: skip
    assert [r["method"] for r in rows] == ["corrected", "uncorrected"]
    assert all(MEASURES | {"seconds"} <= set(r) and r["k"] == 5 for r in rows)
    for name, P in proba.items():
        assert P.shape == (45, 3)
        np.testing.assert_allclose(P.sum(axis=1), 1.0)
        row = next(r for r in rows if r["method"] == name)
        assert row == {**row, **probability_measures(y, P, loss=loss)}
    pairs = _gaussian_cv.compare_methods(rows, "k")
    assert len(pairs) == 1 and pairs[0][0]["method"] == "corrected" and pairs[0][1]["method"] == "uncorrected"
    long = _gaussian_cv.probability_rows(y, proba, ["a", "b", "c"], group=1)
    assert len(long) == 90 and set(long[0]) == {"group", "case", "y", "method", "p_a", "p_b", "p_c"}


def test_seeds_are_reproducible_and_distinct():
    assert _gaussian_cv.seeds(0, 4) == _gaussian_cv.seeds(0, 4)
    assert len(set(_gaussian_cv.seeds(0, 4))) == 4
    assert _gaussian_cv.seeds(0, 4) != _gaussian_cv.seeds(1, 4)


# ---------------------------------------------------------------------------
# SRBCT


def test_srbct_tiny(srbct_file, tmp_path):
    from hdbayes.experiments import srbct

    report = srbct.run(random_state=0, progress=False, size="tiny")
    assert len(report.checks) == 4
    assert all(report.checks.values()), report.checks
    rows = report.tables["results"]
    assert [(r["group"], r["method"]) for r in rows] == [(1, "corrected"), (1, "uncorrected")]
    assert all(r["p"] in (230, 231) and r["k"] == 10 and MEASURES <= set(r) and "seconds" not in r for r in rows)
    whole = report.tables["whole_data"]
    assert [r["method"] for r in whole] == ["corrected", "uncorrected"]
    assert all(r["k"] == 50 and 0 <= r["misclassified"] <= 83 for r in whole)
    assert len(report.tables["probabilities"]) == 2 * 83 + 83 * 2
    assert [(r.get("group"), r["method"]) for r in report.timings["timing"]] == [
        (1, "corrected"), (1, "uncorrected"), (None, "corrected"), (None, "uncorrected"),
    ]  # fmt: skip
    loss = report.tables["loss_matrix"]
    assert [row[f"guess_{row['true']}"] for row in loss] == [0.0] * 4
    figure = report.figures["fig4_srbct"]
    assert isinstance(figure, matplotlib.figure.Figure) and len(figure.axes) == 4
    assert "## Acceptance checks" in report.summary
    folder = report.write(tmp_path / "srbct")
    assert {p.name for p in folder.iterdir() if not p.name.startswith(".")} == {
        "summary.md", "results.csv", "whole_data.csv", "probabilities.csv", "loss_matrix.csv", "fig4_srbct.png",
        "timing.csv",
    }  # fmt: skip


@pytest.mark.slow
def test_srbct_small(srbct_file):
    from hdbayes.experiments import srbct

    report = srbct.run(full=False, random_state=0, progress=False, n_jobs=2)
    assert all(report.checks.values()), report.checks
    assert len(report.tables["probabilities"]) == 2 * 83 * 2 + 83 * 2


@pytest.mark.slow
def test_srbct_paper_size(srbct_file):
    from hdbayes.experiments import srbct

    report = srbct.run(full=True, random_state=0, progress=False)
    assert all(report.checks.values()), report.checks
    assert len(report.tables["results"]) == 20


# ---------------------------------------------------------------------------
# lymphoma


def test_lymphoma_tiny(lymphoma_file):
    from hdbayes.experiments import lymphoma

    report = lymphoma.run(random_state=0, progress=False, size="tiny")
    assert len(report.checks) == 2
    assert all(report.checks.values()), report.checks
    rows = report.tables["results"]
    assert [(r["k"], r["method"]) for r in rows] == [
        (10, "corrected"), (10, "uncorrected"), (50, "corrected"), (50, "uncorrected"),
    ]  # fmt: skip
    assert all(MEASURES <= set(r) for r in rows)
    # with 50 genes the error rate is small whatever the correction
    assert all(r["actual_error"] <= 0.1 for r in rows if r["k"] == 50)
    assert len(report.tables["probabilities"]) == 2 * 2 * 62
    fits = report.tables["whole_data_fit"]
    assert [(r["k"], r["method"]) for r in fits] == [(r["k"], r["method"]) for r in rows]
    # the correction conditions on the discarded genes having small F: it can only raise τ^μ
    for corrected, uncorrected in _gaussian_cv.compare_methods(fits, "k"):
        assert corrected["log_tau_mu_mean"] > uncorrected["log_tau_mu_mean"]
    assert len(report.figures["measures_vs_k"].axes) == 4
    assert "No whitening" in report.summary


@pytest.mark.slow
def test_lymphoma_small(lymphoma_file):
    from hdbayes.experiments import lymphoma

    report = lymphoma.run(full=False, random_state=0, progress=False, n_jobs=2)
    assert all(report.checks.values()), report.checks


@pytest.mark.slow
def test_lymphoma_paper_mcmc(lymphoma_file):
    from hdbayes.experiments import lymphoma

    report = lymphoma.run(full=True, random_state=0, progress=False)
    assert all(report.checks.values()), report.checks
