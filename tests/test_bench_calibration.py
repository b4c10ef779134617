"""Small versions of benchmarks/bench_weak_signal.py, bench_garbage_in.py and bench_default_rule.py."""

import csv
import os
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
weak = pytest.importorskip("bench_weak_signal")
garbage = pytest.importorskip("bench_garbage_in")
rule = pytest.importorskip("bench_default_rule")


def _shared_golub():
    folder = os.environ.get("HDBAYES_DATA")
    return folder is not None and (Path(folder) / "microarray" / "golub.RData").is_file()


def test_weak_signal_writes_rows_and_the_summary_checks_the_target(tmp_path):
    out = tmp_path / "weak.csv"
    rows = weak.run([50], [2], [0], {"hdbayes": {}, "class_frequencies": {}}, out)
    assert [row["method"] for row in rows] == ["hdbayes", "class_frequencies"]
    with open(out, newline="") as handle:
        written = list(csv.DictReader(handle))
    assert len(written) == 2 and list(written[0]) == weak.COLUMNS
    frequencies = next(row for row in rows if row["method"] == "class_frequencies")
    assert frequencies["amlp"] == pytest.approx(0.70, abs=0.05)  # a balanced two-class problem: about ln 2
    text, met = weak.summarize(written)
    assert "| 50 | 2 |" in text and met  # no logistic_all row: the target is judged only where both peers ran
    assert next(row for row in rows if row["method"] == "hdbayes")["amlp"] <= frequencies["amlp"] + 0.03


def test_weak_signal_summary_says_when_the_target_is_missed():
    rows = [{"n": 50, "classes": 2, "seed": 0, "method": m, "amlp": a}
            for m, a in [("hdbayes", 0.80), ("class_frequencies", 0.70), ("logistic_all", 0.75)]]  # fmt: skip
    text, met = weak.summarize(rows)
    assert not met and text.rstrip().endswith("| no |")


def test_the_class_frequencies_are_smoothed_by_one_case_a_class():
    P = weak.class_frequencies(np.array([0, 0, 0, 2]), 3, 2)
    np.testing.assert_allclose(P, [[4 / 7, 1 / 7, 2 / 7]] * 2)


def test_garbage_arrays_carry_no_class_information():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 30)) * np.arange(1, 31) + 100.0
    noise = garbage.garbage(X, "noise", rng)
    permuted = garbage.garbage(X, "permuted", rng)
    assert noise.shape == permuted.shape == (garbage.N_ARRAYS, 30)
    np.testing.assert_allclose(noise.mean(axis=0), X.mean(axis=0), atol=0.5 * X.std(axis=0).max())
    assert all(any(np.array_equal(np.sort(row), np.sort(x)) for x in X) for row in permuted[:10])


@pytest.mark.skipif(not _shared_golub(), reason="golub.RData is not in HDBAYES_DATA")
def test_garbage_in_on_golub_meets_the_target(tmp_path):
    rows = garbage.run(["golub"], {}, out=tmp_path / "garbage.csv")
    assert [row["kind"] for row in rows] == ["noise", "permuted"]
    assert all(row["target_met"] for row in rows), rows
    assert "Target met in 2 of 2" in garbage.markdown(rows)


def test_the_rule_excludes_a_candidate_worse_than_knowing_nothing(tmp_path):
    weak_csv = tmp_path / "weak.csv"
    with open(weak_csv, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(weak.COLUMNS)
        for method, amlp in [("class_frequencies", 0.70), ("hdbayes", 0.71), ("factor", 0.72),
                             ("earlier_default", 0.95)]:  # fmt: skip
            writer.writerow([50, 2, 0, method, amlp, 0.5, 0.5, 0.1])
    excess = rule.weak_excess(weak_csv)
    assert excess == pytest.approx({"hdbayes": 0.01, "factor": 0.02, "earlier_default": 0.25})
    rows = []
    for name, earlier, default, factor in [("a", 0.10, 0.20, 0.30), ("b", 0.10, 0.20, 0.15)]:
        for candidate, amlp in [("earlier_default", earlier), ("hdbayes", default), ("factor", factor)]:
            rows.append({"dataset": name, "seed": 0, "candidate": candidate, "amlp": amlp, "error": 0.1,
                         "expected_error": 0.1})  # fmt: skip
    text = rule.summarize(rows, excess)
    # the earlier default is best on the data sets but excluded by the weak-signal rule
    assert "admissible: factor, hdbayes; chosen on all sets: hdbayes" in text
    # leave a out: factor is best on b alone; leave b out: hdbayes is best on a
    assert "a: factor, b: hdbayes" in text
    assert "leave-one-data-set-out: mean AMLP 0.250" in text
