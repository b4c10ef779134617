"""The ``hdbayes`` command: happy paths and one-line errors with no partial output."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hdbayes.cli import main
from hdbayes.datasets import simulate_naive_bayes


@pytest.fixture()
def csv_files(tmp_path):
    data = simulate_naive_bayes(n_features=120, n_train=80, n_test=30, random_state=3)
    columns = [f"gene{j}" for j in range(120)]
    train = pd.DataFrame(data.X_train, columns=columns)
    train["status"] = np.where(data.y_train == 1, "tumour", "normal")
    test = pd.DataFrame(data.X_test, columns=columns)
    test["status"] = np.where(data.y_test == 1, "tumour", "normal")
    train_path, test_path = tmp_path / "train.csv", tmp_path / "test.csv"
    train.to_csv(train_path, index=False)
    test.to_csv(test_path, index=False)
    return train_path, test_path, train, test


def classify(train, test, out, *extra, target="status"):
    return main(
        [
            "classify",
            "--train",
            str(train),
            "--test",
            str(test),
            "--target",
            target,
            "--model",
            "naive-bayes",
            "--out",
            str(out),
            *extra,
        ]
    )


def test_help_exits_cleanly(capsys):
    for argv in (["--help"], ["classify", "--help"], ["reproduce", "--help"], ["demo", "--help"]):
        with pytest.raises(SystemExit) as exit_info:
            main(argv)
        assert exit_info.value.code == 0
    assert "--n-features" in capsys.readouterr().out


def test_classify_writes_probabilities(csv_files, tmp_path, capsys):
    train, test, _, test_frame = csv_files
    out = tmp_path / "predictions.csv"
    assert classify(train, test, out, "--n-features", "10") == 0
    predictions = pd.read_csv(out)
    assert list(predictions.columns) == ["prediction", "P(status=normal)", "P(status=tumour)"]
    assert len(predictions) == len(test_frame)
    np.testing.assert_allclose(predictions.iloc[:, 1:].sum(axis=1), 1.0, atol=1e-12)
    expected = np.where(predictions["P(status=tumour)"] >= 0.5, "tumour", "normal")
    assert (predictions["prediction"] == expected).all()
    assert "kept 10 of 120 features" in capsys.readouterr().out


def test_classify_matches_the_estimator(csv_files, tmp_path):
    from hdbayes import BiasCorrectedNaiveBayes

    train, test, train_frame, test_frame = csv_files
    out = tmp_path / "p.csv"
    assert classify(train, test, out, "--n-features", "7", "--no-correct") == 0
    features = [c for c in train_frame.columns if c != "status"]
    model = BiasCorrectedNaiveBayes(n_features=7, correct=False, random_state=0)
    model.fit(train_frame[features].to_numpy(float), train_frame["status"].to_numpy())
    proba = model.predict_proba(test_frame[features].to_numpy(float))
    np.testing.assert_allclose(pd.read_csv(out)["P(status=tumour)"], proba[:, 1], rtol=1e-12)


def _bad_csv(tmp_path, text, name="bad.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    "make_train, extra, message",
    [
        (lambda p, t: _bad_csv(p, ""), ["--n-features", "2"], "empty"),
        (lambda p, t: _bad_csv(p, 'a,b,status\n1,0,x\n"1,0\n'), ["--n-features", "1"], "not a valid CSV"),
        (lambda p, t: _bad_csv(p, "a,b,status\n"), ["--n-features", "1"], "no rows"),
        (lambda p, t: p / "missing.csv", ["--n-features", "1"], "not found"),
        (lambda p, t: t, ["--n-features", "500"], "--n-features 500 is more than the 120 feature columns"),
        (lambda p, t: t, ["--n-features", "0"], "at least 1"),
        (lambda p, t: _bad_csv(p, "a,b,status\n1,0,x\n0,1,x\n"), ["--n-features", "1"], "single class"),
        (lambda p, t: _bad_csv(p, "a,b,status\n1,,x\n0,1,y\n"), ["--n-features", "1"], "line 2, column 'b': missing value"),
        (lambda p, t: _bad_csv(p, "a,b,status\n1,q,x\n0,1,y\n"), ["--n-features", "1"], "line 2, column 'b': 'q' is not a number"),
        (lambda p, t: _bad_csv(p, "a,b,status\n1,0.5,x\n0,1,y\n"), ["--n-features", "1"], "binary"),
    ],
)
def test_classify_errors_are_one_line_and_leave_no_output(csv_files, tmp_path, capsys, make_train, extra, message):
    train, test, _, _ = csv_files
    out = tmp_path / "out" / "predictions.csv"
    bad_train = make_train(tmp_path, train)
    # the small hand-written files (columns a, b) are their own test file
    status = classify(bad_train, test if bad_train in (train, tmp_path / "missing.csv") else bad_train, out, *extra)
    err = capsys.readouterr().err
    assert status == 2
    assert message in err
    assert err.count("\n") == 1 and err.startswith("hdbayes classify: error:")
    assert not out.exists()
    assert not list(tmp_path.glob("out/.predictions*"))


def test_classify_missing_target_and_feature_columns(csv_files, tmp_path, capsys):
    train, test, _, test_frame = csv_files
    assert classify(train, test, tmp_path / "o.csv", "--n-features", "2", target="nope") == 2
    assert "target column 'nope'" in capsys.readouterr().err
    short = tmp_path / "short.csv"
    test_frame.drop(columns=["gene5"]).to_csv(short, index=False)
    assert classify(train, short, tmp_path / "o.csv", "--n-features", "2") == 2
    assert "gene5" in capsys.readouterr().err


def test_n_features_and_threshold_are_exclusive(csv_files, tmp_path):
    train, test, _, _ = csv_files
    with pytest.raises(SystemExit) as exit_info:
        classify(train, test, tmp_path / "o.csv", "--n-features", "2", "--threshold", "0.2")
    assert exit_info.value.code == 2


def test_demo_prints_calibration_and_writes_figures(tmp_path, capsys):
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "| C | Corr # | Pred | Actual | Unc # | Pred | Actual |" in text
    assert "expected_error" in text and "[x] k=10: corrected |expected - actual error| <= 0.03" in text
    for name in ("summary.md", "results.csv", "fig2_5_error_rates.png", "fig2_7_alpha_posterior.png"):
        assert (out / name).stat().st_size > 0


def test_classify_with_exact_theta_rule(csv_files, tmp_path):
    train, test, _, _ = csv_files
    simpson, exact = tmp_path / "s.csv", tmp_path / "e.csv"
    assert classify(train, test, simpson, "--n-features", "5") == 0
    assert classify(train, test, exact, "--n-features", "5", "--theta-rule", "exact") == 0
    a, b = pd.read_csv(simpson).iloc[:, 1].to_numpy(), pd.read_csv(exact).iloc[:, 1].to_numpy()
    assert np.abs(a - b).max() < 0.05 and not np.array_equal(a, b)


def test_classify_gaussian_multiclass(tmp_path, capsys):
    from hdbayes.datasets import simulate_gaussian

    data = simulate_gaussian(n_features=60, n_train=90, n_test=20, random_state=2)
    columns = [f"g{j}" for j in range(60)]
    for name, X, y in (("train", data.X_train, data.y_train), ("test", data.X_test, data.y_test)):
        frame = pd.DataFrame(X, columns=columns)
        frame["kind"] = np.array(list("ABCDEF"))[y]
        frame.to_csv(tmp_path / f"{name}.csv", index=False)
    out = tmp_path / "pred.csv"
    argv = ["--model", "gaussian", "--n-features", "5", "--n-iter", "300", "--burn-in", "100", "--thin", "4"]
    status = main(["classify", "--train", str(tmp_path / "train.csv"), "--test", str(tmp_path / "test.csv"),
                   "--target", "kind", "--out", str(out), *argv])  # fmt: skip
    assert status == 0
    predictions = pd.read_csv(out)
    assert list(predictions.columns) == ["prediction"] + [f"P(kind={c})" for c in "ABCDEF"]
    np.testing.assert_allclose(predictions.iloc[:, 1:].sum(axis=1), 1.0, atol=1e-12)
    assert "R-hat" in capsys.readouterr().out


def test_classify_rejects_options_of_the_other_model(csv_files, tmp_path, capsys):
    train, test, _, _ = csv_files
    assert classify(train, test, tmp_path / "o.csv", "--n-features", "2", "--n-iter", "100") == 2
    assert "--n-iter applies to --model gaussian or mixture only" in capsys.readouterr().err


def test_classify_mixture(csv_files, tmp_path, capsys):
    train, test, _, _ = csv_files
    out = tmp_path / "m.csv"
    argv = ["--model", "mixture", "--n-features", "5", "--n-iter", "30", "--burn-in", "10", "--thin", "2"]
    assert classify(train, test, out, *argv) == 0
    predictions = pd.read_csv(out)
    np.testing.assert_allclose(predictions.iloc[:, 1:].sum(axis=1), 1.0, atol=1e-12)
    assert "log_alpha: posterior mean" in capsys.readouterr().out


@pytest.fixture()
def count_files(tmp_path):
    from hdbayes.datasets import simulate_bursty_documents

    corpus = simulate_bursty_documents(160, 40, concentration=4, class_spread=0.5, random_state=0)
    X = corpus.X.toarray()
    columns = [f"w{j}" for j in range(X.shape[1])]
    paths = []
    for name, rows in (("train", slice(0, 120)), ("test", slice(120, 160))):
        frame = pd.DataFrame(X[rows], columns=columns)
        frame["topic"] = np.where(corpus.y[rows] == 1, "sport", "politics")
        frame.to_csv(tmp_path / f"{name}.csv", index=False)
        paths.append(tmp_path / f"{name}.csv")
    return paths


@pytest.mark.parametrize(
    "argv, kept",
    [
        (["--model", "multinomial-nb"], None),
        (["--model", "multinomial-nb", "--method", "posterior_mean", "--n-features", "10"], 10),
        (["--model", "dcm", "--n-features", "15"], 15),
        (["--model", "bernoulli-nb", "--binarize", "0"], None),
        (["--model", "bernoulli-nb", "--binarize", "0", "--threshold", "0.01"], "threshold"),
    ],
)
def test_classify_discrete_models(count_files, tmp_path, capsys, argv, kept):
    train, test = count_files
    out = tmp_path / "pred.csv"
    status = main(["classify", "--train", str(train), "--test", str(test), "--target", "topic", "--out", str(out),
                   *argv])  # fmt: skip
    assert status == 0, capsys.readouterr().err
    predictions = pd.read_csv(out)
    assert list(predictions.columns) == ["prediction", "P(topic=politics)", "P(topic=sport)"]
    np.testing.assert_allclose(predictions.iloc[:, 1:].sum(axis=1), 1.0, atol=1e-12)
    printed = capsys.readouterr().out
    if kept is None:
        assert "used all 40 features" in printed
    elif kept == "threshold":
        assert "kept " in printed and " of 40 features (threshold " in printed
    else:
        assert f"kept {kept} of 40 features" in printed
    assert "actual error rate" in printed


def test_classify_discrete_model_options_and_counts(count_files, tmp_path, capsys):
    train, test = count_files
    base = ["classify", "--train", str(train), "--test", str(test), "--target", "topic"]
    out = tmp_path / "pred.csv"
    assert main([*base, "--model", "dcm", "--no-correct", "--out", str(out)]) == 2
    assert "--no-correct applies to --model gaussian or mixture or naive-bayes only" in capsys.readouterr().err
    assert main([*base, "--model", "dcm", "--method", "map", "--out", str(out)]) == 2
    assert "--method applies to --model" in capsys.readouterr().err
    assert main([*base, "--model", "categorical-nb", "--out", str(out)]) == 2  # counts as category codes
    assert "was not seen in training" in capsys.readouterr().err
    frame = pd.read_csv(train)
    frame["w0"] = frame["w0"].astype(float)
    frame.loc[0, "w0"] = 0.5
    frame.to_csv(tmp_path / "fractional.csv", index=False)
    argv = ["classify", "--train", str(tmp_path / "fractional.csv"), "--test", str(test), "--target", "topic"]
    assert main([*argv, "--model", "dcm", "--out", str(out)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "integer" in error
    assert not out.exists()


@pytest.fixture()
def regression_files(tmp_path):
    from hdbayes.datasets import simulate_block_sparse

    data = simulate_block_sparse(n_samples=60, n_features=64, group_size=4, n_active_groups=3, noise_std=0.01,
                                 n_test=20, random_state=0)  # fmt: skip
    columns = [f"x{j}" for j in range(64)]
    for name, X, y in (("train", data.X, data.y), ("test", data.X_test, data.y_test)):
        frame = pd.DataFrame(X, columns=columns)
        frame["response"] = y
        frame.to_csv(tmp_path / f"{name}.csv", index=False)
    return tmp_path / "train.csv", tmp_path / "test.csv", data


def regress(train, test, out, *extra):
    return main(["regress", "--train", str(train), "--test", str(test), "--target", "response", "--out", str(out),
                 *extra])  # fmt: skip


def test_regress_matches_the_estimator_and_finds_the_groups(regression_files, tmp_path, capsys):
    from hdbayes import GroupSpikeSlabRegression

    train, test, data = regression_files
    out, plot = tmp_path / "pred.csv", tmp_path / "groups.png"
    argv = ["--group-size", "4", "--prior-inclusion", "0.2", "--noise-variance", "1e-4", "--plot", str(plot)]
    assert regress(train, test, out, *argv) == 0
    predictions = pd.read_csv(out)
    assert list(predictions.columns) == ["prediction", "std"]
    model = GroupSpikeSlabRegression(groups=4, prior_inclusion=0.2, noise_variance=1e-4).fit(data.X, data.y)
    mean, std = model.predict(data.X_test, return_std=True)
    np.testing.assert_allclose(predictions["prediction"], mean, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(predictions["std"], std, rtol=1e-10)
    printed = capsys.readouterr().out
    assert "16 groups of 64 features" in printed and "test root mean squared error" in printed
    top = printed.split("most probable groups (P(included), features):\n")[1].splitlines()[:3]
    found = {int(line.split()[1].rstrip(",")[1:]) // 4 for line in top}
    assert found == set(np.asarray(data.active_groups).tolist())
    assert plot.read_bytes()[:4] == b"\x89PNG"


def test_regress_groups_file_and_errors(regression_files, tmp_path, capsys):
    train, test, _ = regression_files
    out = tmp_path / "pred.csv"
    groups = pd.DataFrame({"feature": [f"x{j}" for j in range(64)], "group": np.arange(64) // 8})
    groups.to_csv(tmp_path / "groups.csv", index=False)
    assert regress(train, test, out, "--groups", str(tmp_path / "groups.csv"), "--noise-variance", "1e-4") == 0
    assert "8 groups of 64 features" in capsys.readouterr().out
    out.unlink()
    groups.iloc[:-1].to_csv(tmp_path / "short.csv", index=False)
    assert regress(train, test, out, "--groups", str(tmp_path / "short.csv")) == 2
    assert "gives no group for the feature column 'x63'" in capsys.readouterr().err
    pd.concat([groups, groups.iloc[:1]]).to_csv(tmp_path / "twice.csv", index=False)
    assert regress(train, test, out, "--groups", str(tmp_path / "twice.csv")) == 2
    assert "lists feature 'x0' twice" in capsys.readouterr().err
    assert regress(train, test, out, "--prior-inclusion", "1.5") == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "--prior-inclusion must be in (0, 1], got 1.5" in error
    assert not out.exists()
