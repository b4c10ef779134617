"""Experiments: small (or tiny) versions in the default run, the papers' sizes marked slow.

Every check of an experiment names its margin (see each module's constants); the default runs assert all
of them. Same seed, same bytes: the hmm and discrete-models tests write their reports twice and compare
the files (test_cli does the same for ``hdbayes demo``, the naive-bayes-simulation at the small size).
"""

from __future__ import annotations

import csv
import importlib

import matplotlib.figure
import numpy as np
import pytest

from hdbayes.cli import main
from hdbayes.exceptions import InputTypeError, InputValueError
from hdbayes.experiments import colon, naive_bayes_simulation
from hdbayes.experiments._report import Report
from hdbayes.experiments._runtime import cap_n_jobs, choose_size, usable_cores


@pytest.fixture(scope="module")
def colon_file():
    """colon.rda from HDBAYES_DATA or the user cache, downloaded if absent (skip when offline)."""
    from hdbayes.datasets import data_path

    try:
        return data_path("colon.rda")
    except OSError as error:
        pytest.skip(f"colon data unavailable: {error}")


def test_report_write_is_atomic(tmp_path):
    class Broken(matplotlib.figure.Figure):
        def savefig(self, *args, **kwargs):
            raise RuntimeError("disk full")

    report = Report(name="x", summary="# x\n", tables={"t": [{"a": 1}]}, figures={"f": Broken()})
    with pytest.raises(RuntimeError, match="disk full"):
        report.write(tmp_path / "out")
    assert list(tmp_path.iterdir()) == []
    report.figures = {}
    folder = report.write(tmp_path / "out")
    assert (folder / "summary.md").read_text() == "# x\n"
    assert list(csv.DictReader(open(folder / "t.csv"))) == [{"a": "1"}]


def test_naive_bayes_simulation_small():
    report = naive_bayes_simulation.run(full=False, random_state=0, progress=False)
    assert all(report.checks.values()), report.checks
    assert [set(r) for r in report.timings["timing"]] == [{"k", "method", "seconds"}] * len(report.tables["results"])
    rows = {(r["k"], r["method"]): r for r in report.tables["results"]}
    # correction leaves the 0.5-threshold error rate almost unchanged (thesis §2.3.5, Figure 2.5)
    for k in (10, 100, 500):
        assert abs(rows[k, "corrected"]["actual_error"] - rows[k, "uncorrected"]["actual_error"]) < 0.03
    # the calibration bins (Table 2.1 layout) as a table: every test case in one bin per k and method (issue 29)
    counts = {}
    for row in report.tables["calibration"]:
        counts[row["k"], row["method"]] = counts.get((row["k"], row["method"]), 0) + row["count"]
        assert 0 <= row["bin"] <= 9 and 0 <= row["predicted"] <= 1 and 0 <= row["actual"] <= 1
    assert set(counts.values()) == {naive_bayes_simulation.SIZES["small"].n_test}
    ks = naive_bayes_simulation.SIZES["small"].ks
    assert set(counts) == {(k, method) for k in ks for method in ("corrected", "uncorrected")}
    assert set(report.figures) == {
        "fig2_4_correlations",
        "fig2_5_error_rates",
        "fig2_6_amlp_brier",
        "fig2_7_alpha_posterior",
        "calibration",
    }


@pytest.mark.slow
def test_naive_bayes_simulation_paper_size():
    """Thesis §2.3.5 acceptance: calibrated when corrected, overconfident when not."""
    report = naive_bayes_simulation.run(full=True, random_state=0, progress=False)
    assert all(report.checks.values()), report.checks


def test_colon_small(tmp_path, colon_file):
    assert main(["reproduce", "colon", "--out", str(tmp_path / "colon")]) == 0
    rows = list(csv.DictReader(open(tmp_path / "colon" / "results.csv")))
    assert len(rows) == 6
    corrected = [float(r["amlp"]) for r in rows if r["method"] == "corrected"]
    uncorrected = [float(r["amlp"]) for r in rows if r["method"] == "uncorrected"]
    assert all(c < u for c, u in zip(corrected, uncorrected))
    assert (tmp_path / "colon" / "fig2_8_probabilities.png").stat().st_size > 0
    thresholds = list(csv.DictReader(open(tmp_path / "colon" / "thresholds.csv")))
    assert len(thresholds) == 3 and all(0 < float(r["gamma_min"]) <= float(r["gamma_max"]) < 1 for r in thresholds)


@pytest.mark.slow
def test_naive_bayes_simulation_calibrated_on_average_over_seeds():
    """One data set can miss the 0.03 target by sampling; over 5 data sets the corrected model is
    calibrated on average and the uncorrected one is overconfident (measured over seeds 0-9:
    corrected mean |gap| 0.013-0.018, uncorrected 0.17 at k = 10 and 100)."""
    gaps = {}
    for seed in range(5):
        report = naive_bayes_simulation.run(full=True, random_state=seed, progress=False)
        for row in report.tables["results"]:
            gaps.setdefault((row["k"], row["method"]), []).append(row["expected_error"] - row["actual_error"])
    for k in (1, 10, 100, 1000):
        assert np.mean(np.abs(gaps[k, "corrected"])) < 0.03
        assert abs(np.mean(gaps[k, "corrected"])) < 0.02
    for k in (10, 100):
        assert np.mean(gaps[k, "uncorrected"]) < -0.1


@pytest.mark.slow
def test_colon_paper_size(colon_file):
    """Thesis §2.3.6 acceptance: AMLP better in >= 9 of 10 gene groups, paired t-test p < 0.01."""
    report = colon.run(full=True, random_state=0, progress=False)
    assert all(report.checks.values()), report.checks


def test_parallel_folds_with_joblib_and_dask_match_serial():
    """Cross-validation folds run in parallel with joblib's loky and Dask backends."""
    import joblib
    from distributed import Client, LocalCluster

    from hdbayes.datasets import simulate_naive_bayes

    data = simulate_naive_bayes(n_features=300, n_samples=40, n_test=1, random_state=5)
    serial = colon.loocv_probabilities(data.X, data.y, n_features_to_select=5)
    assert np.array_equal(colon.loocv_probabilities(data.X, data.y, n_features_to_select=5, n_jobs=2), serial)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        with Client(cluster), joblib.parallel_backend("dask"):
            on_dask = colon.loocv_probabilities(data.X, data.y, n_features_to_select=5, n_jobs=2)
    assert np.array_equal(on_dask, serial)


def test_gaussian_simulation_tiny():
    """Li (2009) §4.1 at p = 500, k = 10 and 50, 800 iterations: every check, with its margin."""
    from hdbayes.experiments import gaussian_simulation

    report = gaussian_simulation.run(random_state=0, progress=False, size="tiny")
    assert len(report.checks) == 9  # 4 at k = 10 (the overconfidence check starts at k = 50), 5 at k = 50
    assert all(report.checks.values()), report.checks
    rows = {(r["k"], r["method"]): r for r in report.tables["results"]}
    for k in gaussian_simulation.SIZES["tiny"].ks:
        corrected_gap = abs(rows[k, "corrected"]["expected_error"] - rows[k, "corrected"]["actual_error"])
        uncorrected_gap = abs(rows[k, "uncorrected"]["expected_error"] - rows[k, "uncorrected"]["actual_error"])
        assert corrected_gap < uncorrected_gap / 3  # measured ratios 0.06–0.2
    assert set(report.figures) == {"fig2_performance", "fig3_log_tau_mu_traces", "timing_fig2_fit_time"}
    assert "fit_seconds" not in rows[10, "corrected"] and len(report.timings["timing"]) == len(rows)


def test_gaussian_simulation_refuses_an_unknown_variant():
    from hdbayes.experiments import gaussian_simulation

    with pytest.raises(InputValueError, match="class_variance='per-class'"):
        gaussian_simulation.run(size="tiny", spread="shared", class_variance="per-class")


def test_gaussian_simulation_scale_checks_of_the_per_feature_variants():
    """The per-feature variants' checks on log s_μ compare with the unselected fit on all p features: they hold
    for a corrected mean near it and an uncorrected one above it, and fail otherwise."""
    from hdbayes.experiments import gaussian_simulation

    def by(corrected, uncorrected):
        row = dict(actual_error=0.5, expected_error=0.5, amlp=1.0)
        out = {(10, "corrected"): {**row, "log_s_mu_mean": corrected},
               (10, "uncorrected"): {**row, "expected_error": 0.3, "amlp": 1.5, "log_s_mu_mean": uncorrected},
               (500, "corrected"): {**row, "log_s_mu_mean": -5.4}}  # fmt: skip
        return gaussian_simulation._acceptance(out, [10], 0.05, "per-feature", 500)

    checks = by(-6.0, -3.0)
    assert len(checks) == 4 and all(checks.values()), checks
    assert [ok for name, ok in by(-7.5, -3.0).items() if "corrected mean" in name] == [False, True]
    assert [ok for name, ok in by(-6.0, -5.0).items() if "mean log s_mu" in name] == [True, False]


@pytest.mark.slow
@pytest.mark.parametrize("variant", [
    ("per-feature", "pooled"),
    ("per-feature", "per-class", "learn"),
    ("per-feature", "per-class", "learn", "plug-in"),
    pytest.param(("per-feature", "per-class"), marks=pytest.mark.xfail(strict=True, reason=(
        "per-class variances with alpha2_x = 4 on these equal-variance data: the class variances' sampling noise "
        "is read as real, and with many weak features the predictions are overconfident (measured, seed 0: "
        "corrected |expected - actual error| 0.083 at k = 10, 0.204 at k = 50; docs/gaussian.md)"))),
])  # fmt: skip
def test_gaussian_simulation_tiny_with_every_variant(variant):
    """Issue 13: the simulation passes its checks with every variant of the classifier (the shared one:
    test_gaussian_simulation_tiny). Measured at the tiny size, seed 0: see docs/gaussian.md. The per-class
    variant does not (a strict xfail: it fails today, and the test says so when that changes)."""
    from hdbayes.experiments import gaussian_simulation

    spread, class_variance, *rest = variant
    alpha2_x = rest[0] if rest else 4.0
    class_scale = rest[1] if len(rest) > 1 else "equal"
    report = gaussian_simulation.run(random_state=0, progress=False, size="tiny", spread=spread,
                                     class_variance=class_variance, alpha2_x=alpha2_x,
                                     class_scale=class_scale)  # fmt: skip
    assert len(report.checks) == 9
    assert all(report.checks.values()), report.checks
    assert "log_s_mu_mean" in report.tables["results"][0]


def test_mixture_simulation_tiny():
    """Thesis §2.4.4 at p = 1000 and 100 training cases: every check, with its margin."""
    from hdbayes.experiments import mixture_simulation

    report = mixture_simulation.run(random_state=0, progress=False, size="tiny")
    assert len(report.checks) == 5
    assert all(report.checks.values()), report.checks
    assert set(report.figures) == {"fig2_13_error_rates", "fig2_14_amlp_brier", "alpha_traces"}
    assert {r["k"] for r in report.timings["timing"]} == {1, 10, 100}
    # issue 29: the model on every feature, and the latent labels against the responses
    (complete,) = report.tables["complete_data"]
    assert complete["k"] == 1000 and 0 < complete["amlp"] < 1.5
    assert report.timings["timing_complete"][0]["seconds_per_50_iterations"] > 0
    (truth,) = report.tables["latent_truth"]
    assert 0.5 <= truth["z_x0_agreement"] <= 1 and truth["phi00"] < 0.5 < truth["phi10"]
    for row in [*report.tables["results"], complete]:
        assert 0.5 <= row["z_x0_agreement"] <= 1 and 0 <= row["phi0_low"] <= row["phi0_high"] <= 1
        assert 0 <= row["smaller_component"] <= 50  # of 100 training cases


def test_latent_label_summary_against_hand_counts():
    """z = x_0 for every case, then z = 1 − x_0 (the same partition, labels swapped), then half of each:
    agreement 1, 1 and 0.5; φ from the counts by hand."""
    from types import SimpleNamespace

    from hdbayes.experiments.mixture_simulation import latent_label_summary

    # 10 cases, 4 with x_0 = 1; draws: (ones[z=0, x_0], ones[z=1, x_0]) and (sizes[z=0], sizes[z=1])
    ones = np.array([[0, 4], [4, 0], [2, 2]])
    sizes = np.array([[6, 4], [4, 6], [5, 5]])
    theta = np.full((3, 2), 0.5)
    posterior = {"ones": np.stack([ones, ones], axis=-1), "sizes": sizes, "alpha0": np.array([2.0, 2.0, 2.0]),
                 "theta": theta, "smaller_component": sizes.min(axis=1)}  # fmt: skip
    model = SimpleNamespace(trace_=SimpleNamespace(flat=posterior.__getitem__))
    summary = latent_label_summary(model)
    assert summary["z_x0_agreement"] == pytest.approx((1 + 1 + 0.5) / 3)
    low = [(1 + 0) / 8, (1 + 0) / 8, (1 + 2) / 7]  # (α_0 θ_0 + ones) / (α_0 + sizes), the smaller
    high = [(1 + 4) / 6, (1 + 4) / 6, (1 + 2) / 7]
    assert summary["phi0_low"] == pytest.approx(np.mean(low)) and summary["phi0_high"] == pytest.approx(np.mean(high))
    assert summary["smaller_component"] == pytest.approx(13 / 3)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "n_jobs"), [("mixture_simulation", None), ("gaussian_simulation", 2)])
def test_simulation_small(name, n_jobs):
    experiment = importlib.import_module(f"hdbayes.experiments.{name}")
    report = experiment.run(full=False, random_state=0, progress=False, n_jobs=n_jobs)
    assert all(report.checks.values()), report.checks


@pytest.mark.slow
def test_gaussian_simulation_paper_size():
    from hdbayes.experiments import gaussian_simulation

    report = gaussian_simulation.run(full=True, random_state=0, progress=False, n_jobs=2)
    failed = [name for name, ok in report.checks.items() if not ok]
    assert len(failed) <= 1, failed  # one data set: a gap can exceed 0.03 by sampling (see the docs)


def test_interaction_counts_paper_size():
    """Li & Neal §3.6 / thesis §3.5.2 counts (no MCMC, so the paper's size runs in seconds):
    HMM ratio at order 20 within 0.207 ± 0.02 (measured 0.210; seeds 0–7: 0.209–0.217), and the
    classification counts equal the brute-force reference counts for seed 0 (every pattern enumerated)."""
    from hdbayes.experiments import interaction_counts

    report = interaction_counts.run(full=True, random_state=0, progress=False)
    assert all(report.checks.values()), report.checks
    assert set(report.figures) == {"sequence_counts", "classification_counts"}


def test_n_jobs_is_capped_at_the_usable_cores():
    cores = usable_cores()
    assert cores >= 1
    assert cap_n_jobs(None) is None
    assert cap_n_jobs(1000) == cores and cap_n_jobs(1) == 1
    assert cap_n_jobs(-1) == cores and cap_n_jobs(-(cores + 5)) == 1
    with pytest.raises(InputValueError, match="n_jobs"):
        cap_n_jobs(0)
    with pytest.raises(InputTypeError, match="n_jobs"):
        cap_n_jobs(2.5)


def test_colon_starts_no_more_workers_than_cores(monkeypatch):
    """An experiment given n_jobs=1000 hands joblib at most the usable cores."""
    seen = []

    def fake_cross_val_predict(*args, n_jobs=None, **kwargs):
        seen.append(n_jobs)
        return np.full((len(args[2]), 2), 0.5)

    monkeypatch.setattr(colon, "cross_val_predict", fake_cross_val_predict)
    colon.loocv_probabilities(np.zeros((4, 3)), np.array([0, 1, 0, 1]), n_features_to_select=1, n_jobs=1000)
    assert seen == [usable_cores()]


def test_size_names_are_checked():
    sizes = {"tiny": 1, "small": 2, "full": 3}
    assert choose_size(sizes) == ("small", 2) and choose_size(sizes, full=True) == ("full", 3)
    assert choose_size(sizes, full=True, size="tiny") == ("tiny", 1)
    with pytest.raises(InputValueError, match="size must be one of 'tiny', 'small', 'full', got 'huge'"):
        choose_size(sizes, size="huge")


def test_colon_selection_thresholds_against_numpy():
    """γ of each leave-one-out fold is the k-th largest |Pearson correlation| on the fold's training cases."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(12, 7)).astype(float)
    y = np.array([0, 1] * 6)
    gammas = []
    for left_out in range(12):
        keep = np.arange(12) != left_out
        corr = [abs(np.corrcoef(X[keep, j], y[keep])[0, 1]) if X[keep, j].std() > 0 else 0.0 for j in range(7)]
        gammas.append(sorted(corr)[-3])
    found = colon.selection_thresholds(X, y, n_features_to_select=3)
    assert found["gamma_min"] == pytest.approx(min(gammas), abs=1e-12)
    assert found["gamma_max"] == pytest.approx(max(gammas), abs=1e-12)
    assert found["gamma_median"] == pytest.approx(float(np.median(gammas)), abs=1e-12)


def test_training_against_test_correlations():
    """Fig. 2.4 in numbers: ranks and correlations agree with a direct computation on a small simulation."""
    from hdbayes.datasets import simulate_naive_bayes
    from hdbayes.selection import abs_correlation

    data = simulate_naive_bayes(alpha=300, n_features=300, n_samples=60, n_test=200, random_state=3)
    found = naive_bayes_simulation.training_against_test(data)
    train, test = abs_correlation(data.X, data.y), abs_correlation(data.X_test, data.y_test)
    order = np.argsort(-train, kind="stable")
    best_test = int(np.argmax(test))
    # rank 1 + the number of features with a strictly larger training |COR| (ties share the best rank)
    descending = train[order]
    assert found["test_best_training_rank"] == int(np.flatnonzero(descending == train[best_test])[0]) + 1
    assert found["test_best_test_cor"] == test.max() and found["training_best_training_cor"] == train.max()
    assert found["training_best_test_cor"] == test[order[0]]
