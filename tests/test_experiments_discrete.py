"""Experiment discrete-models (Murphy §3.3, §3.5.5; docs/discrete.md): small size by default, the full size slow.

Checks asserted at the small size with the default seed: all of them (T1 values, scipy agreement,
heavier Bayesian tail, black swan, MLE zero-probability documents, DCM log-loss at least 0.1 below and
accuracy at least 0.02 above the multinomial naive Bayes, α_0 recovered within 25%, convergence). A
second run with the same seed writes byte-identical files (fit times apart).
"""

from __future__ import annotations

import matplotlib.figure
import numpy as np
import pytest

from hdbayes.experiments import discrete_models


def test_discrete_models_small(tmp_path, identical_outputs):
    report = discrete_models.run(full=False, random_state=0, progress=False)
    assert report.name == "discrete-models"
    assert all(report.checks.values()), report.checks
    assert len(report.checks) == 11
    predictive = report.tables["beta_binomial_predictive"]
    assert len(predictive) == 11
    assert sum(row["beta_binomial"] for row in predictive) == pytest.approx(1.0, rel=1e-12)
    assert predictive[3]["beta_binomial"] == pytest.approx(76475 / 420732, rel=1e-12)
    rows = {row["model"].split(",")[0].split(" (")[0]: row for row in report.tables["bursty_corpus"]}
    assert set(rows) == {"multinomial NB", "Bernoulli NB", "DCM classifier"}
    losses = [row["log_loss"] for row in report.tables["bursty_corpus"]]
    assert np.argmin(losses) == 3  # the DCM has the lowest log-loss of the four models
    generalisation = report.tables["number_game_generalisation"]
    assert generalisation[1]["map"] == "powers of 2" and generalisation[1]["p(32 in C)"] > 0.9
    assert generalisation[1]["p(37 in C)"] < 0.1
    swan = report.tables["black_swan"][0]
    assert (swan["mle"], swan["laplace_add_one"], swan["seed_misprint"]) == (0.0, 0.2, 0.25)
    assert set(report.figures) == {"beta_binomial", "bursty_corpus"}
    assert all(isinstance(f, matplotlib.figure.Figure) for f in report.figures.values())
    identical_outputs(report, discrete_models.run(full=False, random_state=0, progress=False), tmp_path / "twice")
    folder = report.write(tmp_path / "discrete-models")
    assert (folder / "summary.md").exists() and (folder / "bursty_corpus.csv").exists()
    assert (folder / "beta_binomial.png").exists()
    assert "fit_seconds" not in report.tables["bursty_corpus"][0] and len(report.timings["timing"]) == 4


def test_discrete_models_other_seed_keeps_the_dcm_ahead():
    report = discrete_models.run(full=False, random_state=1, progress=False)
    rows = report.tables["bursty_corpus"]
    assert rows[3]["log_loss"] < rows[0]["log_loss"]


@pytest.mark.slow
def test_discrete_models_full_size():
    report = discrete_models.run(full=True, random_state=0, progress=False)
    assert all(report.checks.values()), report.checks
