"""The HMM sequence-prediction experiment (thesis §3.4.3; Li & Neal §3.6): small run by default, the paper's
size slow.

The small run is made twice with the same seed: the written files (timings apart) are byte-identical.
"""

from __future__ import annotations

import matplotlib.figure
import numpy as np
import pytest

from hdbayes.experiments import hmm

FIGURES = {"fig3_7_parameters", "timing_fig3_7", "fig3_8_sigma_autocorrelation", "fig3_9_performance"}


def test_small_run(tmp_path, identical_outputs):
    small_report = hmm.run(full=False, random_state=0, progress=False)
    assert len(small_report.checks) == 3
    assert all(small_report.checks.values()), small_report.checks
    rows = small_report.tables["results"]
    orders = hmm.SETTINGS["small"]["orders"]
    assert [(r["order"], r["compressed"]) for r in rows] == [(o, c) for o in orders for c in (True, False)]
    for row in rows:
        assert 0 < row["n_compressed"] <= row["n_original"]
        assert row["ratio"] == pytest.approx(row["n_compressed"] / row["n_original"])
        assert row["n_sampled"] == (row["n_compressed"] if row["compressed"] else row["n_original"])
        assert "fit_seconds" not in row and "predict_seconds" not in row
        assert 0 <= row["error_rate"] <= 1 and np.isfinite(row["amlp"])
    # counts do not depend on compression; order 1 expresses the intercept and both symbols
    by = {(r["order"], r["compressed"]): r for r in rows}
    assert by[1, True]["n_original"] == 3
    assert by[8, True]["n_original"] == by[8, False]["n_original"]
    timings = small_report.timings["timing"]
    assert [(t["order"], t["compressed"]) for t in timings] == [(r["order"], r["compressed"]) for r in rows]
    assert all(t["fit_seconds"] > 0 and t["predict_seconds"] > 0 for t in timings)
    acf = small_report.tables["sigma_autocorrelation"]
    assert {r["sigma_order"] for r in acf} == {4, 5, 6, 7, 8}
    assert all(r["acf"] == pytest.approx(1.0) for r in acf if r["lag"] == 0)
    # lags in iterations: the saved draws are every thin-th iteration after burn-in
    assert max(r["lag"] for r in acf) == hmm.MAX_LAG * hmm.SETTINGS["small"]["thin"]
    assert set(small_report.figures) == FIGURES
    assert all(isinstance(f, matplotlib.figure.Figure) for f in small_report.figures.values())
    identical_outputs(small_report, hmm.run(full=False, random_state=0, progress=False), tmp_path / "twice")
    folder = small_report.write(tmp_path / "hmm")
    assert {p.name for p in folder.iterdir()} >= {"summary.md", "results.csv", "timing.csv"} | {
        f"{f}.png" for f in FIGURES
    }


def test_autocorrelation():
    rng = np.random.default_rng(0)
    white = hmm.autocorrelation(rng.standard_normal(5000), max_lag=5)
    assert white[0] == 1.0 and np.all(np.abs(white[1:]) < 0.05)
    ar = np.zeros(20000)
    for t in range(1, ar.size):
        ar[t] = 0.9 * ar[t - 1] + rng.standard_normal()
    assert hmm.autocorrelation(ar, max_lag=3) == pytest.approx(0.9 ** np.arange(4), abs=0.03)
    assert hmm.autocorrelation(np.ones(10), max_lag=3)[0] == 1.0
    assert len(hmm.autocorrelation(np.arange(4.0), max_lag=50)) == 4


@pytest.mark.slow
def test_paper_size():
    """Thesis §3.4.3 (Li & Neal §3.6): ratio 0.207 (± 0.02) at O = 20, O = 5 beats O = 1, no collapse, comp ≈
    uncomp."""
    report = hmm.run(full=True, random_state=0, progress=False)
    assert all(report.checks.values()), report.checks
    assert len(report.tables["results"]) == 11 * 4
    assert set(report.figures) == FIGURES
