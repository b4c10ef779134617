"""The ``hdbayes`` command: happy paths and one-line errors with no partial output."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from hdbayes.cli import ALL_FEATURE_MODELS, MODELS, main
from hdbayes.datasets import simulate_naive_bayes


@pytest.fixture()
def csv_files(tmp_path):
    data = simulate_naive_bayes(n_features=120, n_samples=80, n_test=30, random_state=3)
    columns = [f"gene{j}" for j in range(120)]
    train = pd.DataFrame(data.X, columns=columns)
    train["status"] = np.where(data.y == 1, "tumour", "normal")
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
    model = BiasCorrectedNaiveBayes(n_features_to_select=7, correct=False, random_state=0)
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
        (lambda p, t: t, ["--n-features", "500"], "--n-features 500 is larger than the number of features p=120"),
        (lambda p, t: t, ["--n-features", "0"], "at least 1"),
        (lambda p, t: _bad_csv(p, "a,b,status\n1,0,x\n0,1,x\n"), ["--n-features", "1"], "single class"),
        (
            lambda p, t: _bad_csv(p, "a,b,status\n1,,x\n0,1,y\n"),
            ["--n-features", "1"],
            "line 2, column 'b': missing value",
        ),
        (
            lambda p, t: _bad_csv(p, "a,b,status\n1,q,x\n0,1,y\n"),
            ["--n-features", "1"],
            "line 2, column 'b': 'q' is not a number",
        ),
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


def test_classify_with_exact_theta_rule(csv_files, tmp_path):
    train, test, _, _ = csv_files
    simpson, exact = tmp_path / "s.csv", tmp_path / "e.csv"
    assert classify(train, test, simpson, "--n-features", "5", "--theta-rule", "simpson") == 0
    assert classify(train, test, exact, "--n-features", "5", "--theta-rule", "exact") == 0
    a, b = pd.read_csv(simpson).iloc[:, 1].to_numpy(), pd.read_csv(exact).iloc[:, 1].to_numpy()
    assert np.abs(a - b).max() < 0.05 and not np.array_equal(a, b)


def test_the_mixture_takes_the_theta_rule(csv_files, tmp_path):
    """--theta-rule reaches the mixture's adjustment factor (its estimator's theta_rule): close probabilities, not
    the same ones."""
    train, test, _, _ = csv_files
    runs = {}
    for rule in ("simpson", "exact"):
        out = tmp_path / f"{rule}.csv"
        assert classify(train, test, out, "--model", "mixture", "--n-features", "5", "--n-iter", "120", "--burn-in",
                        "20", "--theta-rule", rule) == 0  # fmt: skip
        runs[rule] = pd.read_csv(out).iloc[:, 1].to_numpy()
    assert np.abs(runs["simpson"] - runs["exact"]).max() < 0.05
    assert not np.array_equal(runs["simpson"], runs["exact"])


def test_classify_with_the_thesis_quadrature_by_name(csv_files, tmp_path):
    """--theta-rule simpson --alpha-rule midpoint is the thesis's setting; the default is the accurate one."""
    train, test, _, _ = csv_files
    thesis, default = tmp_path / "t.csv", tmp_path / "d.csv"
    options = ("--n-features", "5")
    assert classify(train, test, thesis, *options, "--theta-rule", "simpson", "--alpha-rule", "midpoint") == 0
    assert classify(train, test, default, *options) == 0
    a, b = pd.read_csv(thesis).iloc[:, 1].to_numpy(), pd.read_csv(default).iloc[:, 1].to_numpy()
    assert np.abs(a - b).max() < 0.1 and not np.array_equal(a, b)
    with pytest.raises(SystemExit) as exit_info:
        classify(train, test, tmp_path / "o.csv", *options, "--alpha-rule", "gauss")
    assert exit_info.value.code == 2


@pytest.mark.parametrize("spread", [None, "per-feature"])
def test_classify_gaussian_multiclass(tmp_path, capsys, spread):
    from hdbayes.datasets import simulate_gaussian

    data = simulate_gaussian(n_features=60, n_samples=90, n_test=20, random_state=2)
    columns = [f"g{j}" for j in range(60)]
    for name, X, y in (("train", data.X, data.y), ("test", data.X_test, data.y_test)):
        frame = pd.DataFrame(X, columns=columns)
        frame["kind"] = np.array(list("ABCDEF"))[y]
        frame.to_csv(tmp_path / f"{name}.csv", index=False)
    out = tmp_path / "pred.csv"
    argv = ["--model", "gaussian", "--n-features", "5", "--n-iter", "300", "--burn-in", "100", "--thin", "4"]
    argv += ["--variant", spread] if spread else []
    status = main(["classify", "--train", str(tmp_path / "train.csv"), "--test", str(tmp_path / "test.csv"),
                   "--target", "kind", "--out", str(out), *argv])  # fmt: skip
    assert status == 0
    predictions = pd.read_csv(out)
    assert list(predictions.columns) == ["prediction"] + [f"P(kind={c})" for c in "ABCDEF"]
    np.testing.assert_allclose(predictions.iloc[:, 1:].sum(axis=1), 1.0, atol=1e-12)
    printed = capsys.readouterr().out
    assert "R-hat" in printed and ("log_s_mu" in printed) == (spread == "per-feature")


def _gaussian_csv_argv(tmp_path, random_state, n_iter):
    """``classify`` arguments for simulated Gaussian training and test CSVs (30 genes, target ``kind``), k = 4."""
    from hdbayes.datasets import simulate_gaussian

    data = simulate_gaussian(n_features=30, n_samples=60, n_test=10, random_state=random_state)
    paths = {}
    for name, X, y in (("train", data.X, data.y), ("test", data.X_test, data.y_test)):
        frame = pd.DataFrame(X, columns=[f"g{j}" for j in range(30)])
        frame["kind"] = y
        paths[name] = tmp_path / f"{name}.csv"
        frame.to_csv(paths[name], index=False)
    return ["classify", "--train", str(paths["train"]), "--test", str(paths["test"]), "--target", "kind", "--model",
            "gaussian", "--n-features", "4", "--n-iter", str(n_iter), "--burn-in", "50", "--thin", "5"]  # fmt: skip


def test_classify_gaussian_per_class_variances(tmp_path, capsys):
    argv = _gaussian_csv_argv(tmp_path, 3, 200)
    out = tmp_path / "pred.csv"
    assert main([*argv, "--out", str(out), "--variant", "per-class", "--alpha2-x", "3"]) == 0
    np.testing.assert_allclose(pd.read_csv(out).iloc[:, 1:].sum(axis=1), 1.0, atol=1e-12)
    assert "log_s_x" in capsys.readouterr().out
    assert main([*argv, "--out", str(out), "--variant", "per-feature", "--alpha2-x", "3"]) == 2
    assert "--alpha2-x applies only with --variant per-class" in capsys.readouterr().err
    assert main([*argv, "--out", str(out), "--variant", "per-class", "--alpha2-x", "0"]) == 2
    assert "--alpha2-x" in capsys.readouterr().err
    learned = tmp_path / "learned.csv"
    assert main([*argv, "--out", str(learned), "--variant", "per-class", "--alpha2-x", "learn", "--no-correct"]) == 0
    np.testing.assert_allclose(pd.read_csv(learned).iloc[:, 1:].sum(axis=1), 1.0, atol=1e-12)
    with pytest.raises(SystemExit) as stop:
        main([*argv, "--out", str(tmp_path / "no.csv"), "--variant", "per-class", "--alpha2-x", "often"])
    assert stop.value.code == 2
    assert "must be a number or 'learn'" in capsys.readouterr().err and not (tmp_path / "no.csv").exists()


def test_classify_gaussian_plug_in_class_scale(tmp_path, capsys):
    """--class-scale plug-in reaches the estimator (its fit differs from the default's) and needs per-class
    variances: exit 2, one line naming both options, no output file."""
    argv = [*_gaussian_csv_argv(tmp_path, 4, 150), "--no-correct"]
    outputs = {}
    for scale in ("equal", "plug-in"):
        outputs[scale] = tmp_path / f"{scale}.csv"
        assert main([*argv, "--out", str(outputs[scale]), "--variant", "per-class", "--alpha2-x", "4",
                     "--class-scale", scale]) == 0  # fmt: skip
    plug_in = pd.read_csv(outputs["plug-in"]).iloc[:, 1:].to_numpy()
    np.testing.assert_allclose(plug_in.sum(axis=1), 1.0, atol=1e-12)
    assert not np.allclose(plug_in, pd.read_csv(outputs["equal"]).iloc[:, 1:].to_numpy())
    capsys.readouterr()
    refused = tmp_path / "refused.csv"
    assert main([*argv, "--out", str(refused), "--variant", "per-feature", "--class-scale", "plug-in"]) == 2
    err = capsys.readouterr().err
    assert "--class-scale applies only with --variant per-class" in err and len(err.strip().splitlines()) == 1
    assert not refused.exists()


def test_classify_rejects_options_of_the_other_model(csv_files, tmp_path, capsys):
    train, test, _, _ = csv_files
    assert classify(train, test, tmp_path / "o.csv", "--n-features", "2", "--n-iter", "100") == 2
    assert "--n-iter applies to --model gaussian or mixture only" in capsys.readouterr().err
    assert classify(train, test, tmp_path / "o.csv", "--n-features", "2", "--variant", "per-feature") == 2
    assert "--variant applies to --model gaussian only" in capsys.readouterr().err


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
    assert (
        "--no-correct applies to --model categorical-naive-bayes or gaussian or mixture or naive-bayes only"
        in capsys.readouterr().err
    )
    assert main([*base, "--model", "dcm", "--method", "map", "--out", str(out)]) == 2
    assert "--method applies to --model" in capsys.readouterr().err
    assert main([*base, "--model", "categorical-nb", "--out", str(out)]) == 2  # counts as category codes
    assert "was not seen in training" in capsys.readouterr().err
    frame = pd.read_csv(train)
    frame["w0"] = frame["w0"].astype(float)
    frame.loc[0, "w0"] = 0.5  # weights such as tf-idf are accepted by the multinomial and DCM models
    frame.to_csv(tmp_path / "fractional.csv", index=False)
    argv = ["classify", "--train", str(tmp_path / "fractional.csv"), "--test", str(test), "--target", "topic"]
    assert main([*argv, "--model", "dcm", "--out", str(out)]) == 0
    assert pd.read_csv(out).shape == (40, 3)
    out.unlink()
    assert main([*argv, "--model", "categorical-nb", "--out", str(out)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "line 2, column 'w0': X must hold integer category codes" in error
    assert "feature 'w0' has the value 0.5" in error
    frame.loc[0, "w0"] = -1.0
    frame.to_csv(tmp_path / "negative.csv", index=False)
    argv = ["classify", "--train", str(tmp_path / "negative.csv"), "--test", str(test), "--target", "topic"]
    for model in ("dcm", "multinomial-nb"):
        assert main([*argv, "--model", model, "--out", str(out)]) == 2
        error = capsys.readouterr().err
        assert error.count("\n") == 1 and "column 'w0': Negative values in data passed to" in error
        assert "has the value -1" in error
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
    assert error.count("\n") == 1 and "--prior-inclusion must be in (0, 1), got 1.5" in error
    assert not out.exists()


# ---------------------------------------------------------------------------------------------------------
# never lose or damage a user's files


def _argv(train, test, out, *extra, target="cls", model="naive-bayes"):
    return ["classify", "--train", str(train), "--test", str(test), "--target", target, "--model", model,
            "--out", str(out), *extra]  # fmt: skip


@pytest.fixture()
def small(tmp_path):
    """Real-valued and 0/1 training and test files (12 features, 40 + 20 rows), column 'cls'."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 12))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=60) > 0, "a", "b")
    columns = [f"f{j}" for j in range(12)]
    paths = {}
    for kind, values in (("real", X), ("binary", (X > 0).astype(int))):
        frame = pd.DataFrame(values, columns=columns)
        frame["cls"] = y
        for name, rows in (("train", slice(0, 40)), ("test", slice(40, 60))):
            paths[kind, name] = tmp_path / f"{kind}_{name}.csv"
            frame.iloc[rows].to_csv(paths[kind, name], index=False)
    return paths


def _binary(small):
    return small["binary", "train"], small["binary", "test"]


@pytest.mark.parametrize("command", ["demo", "reproduce"])
def test_a_foreign_folder_is_refused_and_untouched(tmp_path, monkeypatch, capsys, command):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "thesis.tex").write_text("years of work")
    argv = ["demo", "--out", "."] if command == "demo" else ["reproduce", "interaction-counts", "--out", "."]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not empty and was not written by hdbayes" in err
    assert [p.name for p in tmp_path.iterdir()] == ["thesis.tex"]
    monkeypatch.setenv("HOME", str(tmp_path))
    assert main(["demo", "--out", "~"]) == 2
    assert [p.name for p in tmp_path.iterdir()] == ["thesis.tex"]


def test_reproduce_twice_into_the_same_folder_refuses_a_users_file(tmp_path, monkeypatch, capsys):
    """A second run replaces the folder hdbayes wrote as a whole; a file the user added there is refused before
    any work (exit 2, one line) and left alone."""
    from hdbayes.experiments import interaction_counts
    from hdbayes.experiments._report import Report

    runs = []

    def run(full=False, random_state=0, progress=None, n_jobs=None):
        runs.append(1)
        return Report(name="x", summary=f"# run {len(runs)}\n", tables={"t": [{"a": len(runs)}]})

    monkeypatch.setattr(interaction_counts, "run", run)
    out = tmp_path / "results"
    assert main(["reproduce", "interaction-counts", "--out", str(out)]) == 0
    assert main(["reproduce", "interaction-counts", "--out", str(out)]) == 0
    assert (out / "summary.md").read_text() == "# run 2\n"
    assert "results in" in capsys.readouterr().out
    (out / "my-notes.txt").write_text("mine")
    assert main(["reproduce", "interaction-counts", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "my-notes.txt was not written by hdbayes" in err
    assert len(runs) == 2 and (out / "my-notes.txt").read_text() == "mine"
    assert (out / "summary.md").read_text() == "# run 2\n"


def test_reproduce_exits_3_on_a_failed_check_and_caps_n_jobs(tmp_path, monkeypatch, capsys):
    import hdbayes.cli as cli
    from hdbayes.experiments import interaction_counts
    from hdbayes.experiments._report import Report

    seen = []
    checks = {"holds": True}

    def run(full=False, random_state=0, progress=None, n_jobs=None):
        seen.append(n_jobs)
        return Report(name="x", summary="# s\n", checks=dict(checks))

    monkeypatch.setattr(interaction_counts, "run", run)
    monkeypatch.setattr(cli, "_usable_cores", lambda: 2)
    base = ["reproduce", "interaction-counts", "--out", str(tmp_path / "o")]
    assert main([*base, "--n-jobs", "1000"]) == 0
    assert seen[-1] == 2 and "--n-jobs 1000 capped at the 2 usable cores" in capsys.readouterr().out
    assert main([*base, "--n-jobs", "-1"]) == 0 and seen[-1] == 2
    assert main([*base, "--n-jobs", "1"]) == 0 and seen[-1] == 1
    assert main([*base, "--n-jobs", "0"]) == 2 and len(seen) == 3
    assert "--n-jobs must be -1" in capsys.readouterr().err
    checks["fails"] = False
    assert main(base) == 3
    out = capsys.readouterr().out
    assert "[FAIL] fails" in out and "1 of 2 acceptance checks failed" in out


def test_reproduce_help_names_the_exit_status_and_the_cap(capsys):
    with pytest.raises(SystemExit):
        main(["reproduce", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "3 a check failed" in text and "capped at the usable cores" in text


def test_reproduce_help_lists_every_experiment_with_its_description(capsys):
    from hdbayes.experiments import EXPERIMENTS

    with pytest.raises(SystemExit):
        main(["reproduce", "--help"])
    lines = capsys.readouterr().out.splitlines()
    for name, experiment in EXPERIMENTS.items():
        assert any(line.split() == [name, *experiment.description.split()] for line in lines), name


def test_classify_writes_through_symlinks_and_special_files(small, tmp_path, capsys):
    import os

    train, test = _binary(small)
    real = tmp_path / "kept" / "real.csv"
    real.parent.mkdir()
    real.write_text("old")
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    assert main(_argv(train, test, link, "--n-features", "3")) == 0
    assert link.is_symlink() and pd.read_csv(real).shape == (20, 3)
    assert main(_argv(train, test, os.devnull, "--n-features", "3")) == 0
    assert not os.path.isfile(os.devnull)
    capsys.readouterr()
    assert main(_argv(train, test, "-", "--n-features", "3")) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("prediction,P(cls=a),P(cls=b)\n") and len(captured.out.splitlines()) == 21
    assert "kept 3 of 12 features" in captured.err and "wrote 20 predictions to standard output" in captured.err


def test_classify_output_follows_the_umask(small, tmp_path):
    import os
    import stat

    train, test = _binary(small)
    previous = os.umask(0o022)
    try:
        assert main(_argv(train, test, tmp_path / "new" / "p.csv", "--n-features", "3")) == 0
        assert stat.S_IMODE(os.stat(tmp_path / "new" / "p.csv").st_mode) == 0o644
        assert stat.S_IMODE(os.stat(tmp_path / "new").st_mode) == 0o755
        os.chmod(tmp_path / "new" / "p.csv", 0o600)
        assert main(_argv(train, test, tmp_path / "new" / "p.csv", "--n-features", "4")) == 0
        assert stat.S_IMODE(os.stat(tmp_path / "new" / "p.csv").st_mode) == 0o600
    finally:
        os.umask(previous)


def test_closed_pipe_exits_quietly(small, tmp_path):
    import os
    import subprocess
    import sys

    rng = np.random.default_rng(1)
    frame = pd.DataFrame((rng.random((5000, 12)) > 0.5).astype(int), columns=[f"f{j}" for j in range(12)])
    frame.to_csv(tmp_path / "big.csv", index=False)
    env = {**os.environ, "MPLBACKEND": "Agg"}
    command = [sys.executable, "-m", "hdbayes", *_argv(small["binary", "train"], tmp_path / "big.csv", "-",
                                                       "--n-features", "3")]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert process.stdout.readline() == b"prediction,P(cls=a),P(cls=b)\n"
    process.stdout.close()
    err = process.stderr.read().decode()
    assert process.wait(timeout=120) == 141
    assert err == ""


# ---------------------------------------------------------------------------------------------------------
# refuse before writing, never a silent NaN


def _refused(capsys, status, out, *fragments):
    err = capsys.readouterr().err
    assert status == 2, err
    assert err.count("\n") == 1 and err.startswith("hdbayes "), err
    for fragment in fragments:
        assert fragment in err, err
    assert not out.exists()
    assert not list(out.parent.glob(f".{out.name}*"))


def _selection(model, k):
    """``--n-features k`` for a model that selects; nothing for a model on every feature."""
    return [] if model in ALL_FEATURE_MODELS else ["--n-features", str(k)]


@pytest.mark.parametrize("model", MODELS)
def test_a_single_class_or_row_is_refused_for_every_model(small, tmp_path, capsys, model):
    train, test = _binary(small)
    frame = pd.read_csv(train)
    frame["cls"] = "a"
    frame.to_csv(tmp_path / "one_class.csv", index=False)
    frame.iloc[:1].to_csv(tmp_path / "one_row.csv", index=False)
    out = tmp_path / "p.csv"
    status = main(_argv(tmp_path / "one_class.csv", test, out, *_selection(model, 2), model=model))
    _refused(capsys, status, out, "target column 'cls'", "single class (a)")
    status = main(_argv(tmp_path / "one_row.csv", test, out, *_selection(model, 2), model=model))
    _refused(capsys, status, out, "single row", "'cls'")


def test_the_linear_model_uses_every_feature(small, tmp_path, capsys):
    train, test = _binary(small)
    out = tmp_path / "p.csv"
    assert main(_argv(train, test, out, model="linear")) == 0
    assert "used all 12 features" in capsys.readouterr().out
    frame = pd.read_csv(out)
    assert list(frame.columns) == ["prediction", "P(cls=a)", "P(cls=b)", "atypicality"]
    np.testing.assert_allclose(frame[["P(cls=a)", "P(cls=b)"]].sum(axis=1), 1.0)
    assert frame["atypicality"].between(0.0, 1.0).all()
    status = main(_argv(train, test, tmp_path / "q.csv", "--n-features", "3", model="linear"))
    _refused(capsys, status, tmp_path / "q.csv", "--n-features applies to --model ")


def test_the_linear_model_warns_about_test_rows_unlike_the_training_rows(small, tmp_path, capsys):
    train, test = _binary(small)
    frame = pd.read_csv(test)
    features = [c for c in frame.columns if c != "cls"]
    frame.loc[:, features] = frame[features].to_numpy() * 1e3  # rows a thousand times the size of any training row
    frame.to_csv(tmp_path / "odd.csv", index=False)
    out = tmp_path / "p.csv"
    assert main(_argv(train, tmp_path / "odd.csv", out, model="linear")) == 0
    assert "arrays are unlike the training arrays" in capsys.readouterr().err
    assert (pd.read_csv(out)["atypicality"] > 0.5).all()


@pytest.mark.parametrize("model", [model for model in MODELS if model not in ALL_FEATURE_MODELS])
def test_more_features_than_columns_is_refused_for_every_model(small, tmp_path, capsys, model):
    train, test = _binary(small)
    out = tmp_path / "p.csv"
    status = main(_argv(train, test, out, "--n-features", "13", model=model))
    _refused(capsys, status, out, "--n-features 13 is larger than the number of features p=12")


def test_gaussian_overflow_is_refused_naming_the_value(small, tmp_path, capsys):
    test = pd.read_csv(small["real", "test"])
    test.loc[3, "f0"] = 1e308  # f0 is the most relevant feature: it is kept
    test.to_csv(tmp_path / "huge.csv", index=False)
    out = tmp_path / "p.csv"
    argv = _argv(small["real", "train"], tmp_path / "huge.csv", out, "--n-features", "3", "--n-iter", "60",
                 "--burn-in", "10", model="gaussian")  # fmt: skip
    _refused(capsys, main(argv), out, "not finite", "1e+308", "'f0'")


@pytest.mark.parametrize("where", ["X_train", "X_test", "y"])
def test_regress_overflow_is_refused(regression_files, tmp_path, capsys, where):
    train, test, _ = regression_files
    frame = pd.read_csv(train if where != "X_test" else test)
    frame.loc[2, "response" if where == "y" else "x5"] = 1e308
    changed = tmp_path / "changed.csv"
    frame.to_csv(changed, index=False)
    out = tmp_path / "out" / "p.csv"
    status = regress(test if where == "X_test" else changed, changed if where == "X_test" else test, out,
                     "--group-size", "4")  # fmt: skip
    _refused(capsys, status, out)


def test_regress_plot_folder_is_refused_before_writing(regression_files, tmp_path, capsys):
    train, test, _ = regression_files
    out = tmp_path / "p.csv"
    _refused(capsys, regress(train, test, out, "--group-size", "4", "--plot", str(tmp_path)), out, "is a folder")


def test_regress_messages(regression_files, tmp_path, capsys):
    train, test, _ = regression_files
    frame = pd.read_csv(train)
    frame["response"] = frame["response"].astype(object)
    frame.loc[3, "response"] = "high"
    frame.to_csv(tmp_path / "text_y.csv", index=False)
    out = tmp_path / "p.csv"
    _refused(capsys, regress(tmp_path / "text_y.csv", test, out), out, "line 5, column 'response'",
             "'high' is not a number (the target y must be numeric)")  # fmt: skip
    groups = pd.DataFrame({"feature": [f"x{j}" for j in range(64)], "group": [f"g{j // 8}" for j in range(64)]})
    groups.to_csv(tmp_path / "groups.csv", index=False)
    _refused(capsys, regress(train, test, out, "--groups", str(tmp_path / "groups.csv")), out,
             "groups must be integers, got 'g0'")  # fmt: skip
    _refused(capsys, regress(train, test, out, "--group-size", "5"), out, "--group-size 5 must be >= 1 and divide")


def test_binarize_that_makes_every_feature_constant_is_refused(small, tmp_path, capsys):
    out = tmp_path / "p.csv"
    argv = _argv(small["real", "train"], small["real", "test"], out, "--n-features", "3", "--binarize", "500")
    _refused(capsys, main(argv), out, "every feature is constant on the training data after --binarize 500")


@pytest.mark.parametrize("model", ["naive-bayes", "bernoulli-nb"])
def test_zero_statistic_selection_warns(small, tmp_path, capsys, model):
    train = pd.read_csv(small["binary", "train"])
    for j in range(1, 12):
        train[f"f{j}"] = 0
    train.to_csv(tmp_path / "constant.csv", index=False)
    out = tmp_path / "p.csv"
    assert main(_argv(tmp_path / "constant.csv", small["binary", "test"], out, "--n-features", "3", model=model)) == 0
    err = capsys.readouterr().err
    # said once, by the CLI or by the estimator
    assert err.startswith("hdbayes: warning: 2 of the 3 ") and re.search(
        r"(statistic of|\|correlation\||information) 0", err
    )
    assert err.count("\n") == 1


def test_threshold_above_every_statistic_is_refused(small, tmp_path, capsys):
    train, test = _binary(small)
    out = tmp_path / "p.csv"
    for model, threshold in (("naive-bayes", "0.99"), ("bernoulli-nb", "5"), ("mixture", "0.99"), ("gaussian", "1e9")):
        _refused(capsys, main(_argv(train, test, out, "--threshold", threshold, model=model)), out,
                 "exceeds --threshold ")  # fmt: skip


# ---------------------------------------------------------------------------------------------------------
# right answers and messages


@pytest.mark.parametrize("binarize", ["0", "median"])
def test_bernoulli_nb_binarizes_before_selecting(small, tmp_path, binarize):
    from sklearn.pipeline import make_pipeline

    from hdbayes import BayesianBernoulliNB, MutualInformationSelector
    from hdbayes.binarizer import FeatureBinarizer

    train, test = small["real", "train"], small["real", "test"]
    out = tmp_path / "p.csv"
    assert main(_argv(train, test, out, "--n-features", "4", "--binarize", binarize, model="bernoulli-nb")) == 0
    frame, test_frame = pd.read_csv(train), pd.read_csv(test)
    features = [f"f{j}" for j in range(12)]
    model = make_pipeline(
        FeatureBinarizer(threshold=0.0 if binarize == "0" else "median"),
        MutualInformationSelector(n_features_to_select=4, random_state=0),
        BayesianBernoulliNB(),
    ).fit(frame[features], frame["cls"])
    expected = model.predict_proba(test_frame[features])
    np.testing.assert_allclose(pd.read_csv(out)[["P(cls=a)", "P(cls=b)"]], expected, rtol=1e-12)


@pytest.mark.parametrize("model", ["naive-bayes", "mixture"])
def test_binarize_median_for_the_corrected_models(small, tmp_path, capsys, model):
    from hdbayes import BiasCorrectedNaiveBayes

    out = tmp_path / "p.csv"
    extra = ["--n-iter", "20", "--burn-in", "5"] if model == "mixture" else []
    argv = _argv(small["real", "train"], small["real", "test"], out, "--n-features", "3", "--binarize", "median",
                 *extra, model=model)  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    predictions = pd.read_csv(out)
    assert len(predictions) == 20
    np.testing.assert_allclose(predictions[["P(cls=a)", "P(cls=b)"]].sum(axis=1), 1.0, atol=1e-12)
    if model == "naive-bayes":
        frame, test_frame = pd.read_csv(small["real", "train"]), pd.read_csv(small["real", "test"])
        features = [f"f{j}" for j in range(12)]
        medians = frame[features].median()
        fitted = BiasCorrectedNaiveBayes(n_features_to_select=3, random_state=0).fit(
            (frame[features] > medians).astype(float), frame["cls"]
        )
        expected = fitted.predict_proba((test_frame[features] > medians).astype(float))
        np.testing.assert_allclose(predictions[["P(cls=a)", "P(cls=b)"]], expected, rtol=1e-12)


def test_categorical_nb_n_levels(small, tmp_path, capsys):
    train, test = _binary(small)
    frame = pd.read_csv(train)
    frame["f5"] = 0
    frame.to_csv(tmp_path / "zero.csv", index=False)
    out = tmp_path / "p.csv"
    _refused(capsys, main(_argv(tmp_path / "zero.csv", test, out, model="categorical-nb")), out,
             f"test file {test}, line ", ", column 'f5': ",
             "feature 'f5' has category 1, which was not seen in training (categories 0..0)",
             "reserve it with --n-levels")  # fmt: skip
    assert main(_argv(tmp_path / "zero.csv", test, out, "--n-levels", "2", model="categorical-nb")) == 0
    assert pd.read_csv(out).shape == (20, 3)
    _refused(capsys, main(_argv(train, test, tmp_path / "q.csv", "--n-levels", "2")), tmp_path / "q.csv",
             "--n-levels applies to --model categorical-naive-bayes or categorical-nb only")  # fmt: skip


def test_categorical_naive_bayes_is_the_estimator(tmp_path):
    """classify --model categorical-naive-bayes: genotype-like codes 0/1/2, three classes; the probabilities are
    BiasCorrectedCategoricalNB's on the same data."""
    from hdbayes import BiasCorrectedCategoricalNB

    rng = np.random.default_rng(3)
    X = rng.integers(0, 3, size=(45, 12))
    y = np.array(["a", "b", "c"])[rng.integers(0, 3, 45)]
    X[:, 0] = np.where(y == "a", 2, X[:, 0])
    columns = [f"snp{j}" for j in range(12)]
    frame = pd.DataFrame(X, columns=columns).assign(cls=y)
    frame.iloc[:30].to_csv(tmp_path / "train.csv", index=False)
    frame.iloc[30:].to_csv(tmp_path / "test.csv", index=False)
    out = tmp_path / "p.csv"
    argv = _argv(tmp_path / "train.csv", tmp_path / "test.csv", out, "--n-features", "3", "--n-levels", "3",
                 model="categorical-naive-bayes")  # fmt: skip
    assert main(argv) == 0
    expected = (
        BiasCorrectedCategoricalNB(n_features_to_select=3, n_levels=3, random_state=0)
        .fit(frame.iloc[:30][columns], y[:30])
        .predict_proba(frame.iloc[30:][columns])
    )
    np.testing.assert_allclose(pd.read_csv(out)[["P(cls=a)", "P(cls=b)", "P(cls=c)"]], expected, rtol=1e-10)


@pytest.mark.parametrize(
    "text, fragments",
    [
        ("f0,f1,cls\n1,0,a\n0,1,b\n1,1\n", ["line 4 has 2 fields, expected 3"]),
        ("f0,f1,f1,cls\n1,0,1,a\n0,1,0,b\n", ["duplicate column name 'f1'"]),
        ("f0,f1,cls\n1,0,a\n0,x,b\n", ["line 3, column 'f1': 'x' is not a number"]),
        ("f0,f1,cls\n1,0,a\n0,inf,b\n", ["line 3, column 'f1': 'inf' is not a finite number"]),
        ("f0,,cls\n1,0,a\n0,1,b\n", ["column 2 of the header has no name"]),
        ("\n\n", ["empty"]),
        (b"f0,f1,cls\n1,\xff,a\n", ["not UTF-8"]),
    ],
)
def test_csv_messages(tmp_path, capsys, text, fragments):
    path = tmp_path / "train.csv"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    out = tmp_path / "p.csv"
    _refused(capsys, main(_argv(path, path, out, "--n-features", "1")), out, *fragments)


def test_byte_order_mark_is_handled(small, tmp_path, capsys):
    train, test = _binary(small)
    (tmp_path / "bom.csv").write_bytes(b"\xef\xbb\xbf" + train.read_bytes())
    assert main(_argv(tmp_path / "bom.csv", test, tmp_path / "p.csv", "--n-features", "2")) == 0
    assert "kept 2 of 12 features" in capsys.readouterr().out


def test_bad_test_value_names_file_line_and_column(small, tmp_path, capsys):
    train, test = _binary(small)
    frame = pd.read_csv(test).astype(object)
    frame.loc[6, "f4"] = "?"
    frame.to_csv(tmp_path / "t.csv", index=False)
    out = tmp_path / "p.csv"
    _refused(capsys, main(_argv(train, tmp_path / "t.csv", out, "--n-features", "2")), out,
             f"test file {tmp_path / 't.csv'}, line 8, column 'f4': '?' is not a number")  # fmt: skip


def test_non_binary_feature_message_names_the_option(small, tmp_path, capsys):
    out = tmp_path / "p.csv"
    status = main(_argv(small["real", "train"], small["real", "test"], out, "--n-features", "2"))
    _refused(capsys, status, out, f"training file {small['real', 'train']}, line 2, column 'f0': ",
             "X must hold binary features (0/1)", "pass --binarize T (or --binarize median)")  # fmt: skip


def test_cli_terms_translates_library_messages():
    from hdbayes.cli import _cli_terms

    assert _cli_terms("n_features_to_select=13 is larger than p") == "--n-features 13 is larger than p"
    assert _cli_terms("pass binarize=<threshold> (or 'median') to binarize") == (
        "pass --binarize T (or --binarize median) to binarize"
    )
    assert (
        _cli_terms("found np.float64(2.0) and\n n_iter must be positive") == "found 2.0 and --n-iter must be positive"
    )


def test_a_bug_is_exit_1_with_a_traceback(small, tmp_path, capsys, monkeypatch):
    from hdbayes import BayesianBernoulliNB
    from hdbayes.exceptions import InputValueError

    train, test = _binary(small)
    out = tmp_path / "p.csv"

    def broken(self, X, y):
        raise ValueError("internal inconsistency")

    monkeypatch.setattr(BayesianBernoulliNB, "fit", broken)
    assert main(_argv(train, test, out, model="bernoulli-nb")) == 1
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and "ValueError: internal inconsistency" in err
    assert err.rstrip().splitlines()[-1] == "hdbayes classify: " + (
        "this is a bug in hdbayes, please report it (with the command and the traceback above)"
    )
    assert not out.exists()

    def refuses(self, X, y):
        raise InputValueError("n_features_to_select=3 is too many\nfor this")

    monkeypatch.setattr(BayesianBernoulliNB, "fit", refuses)
    _refused(capsys, main(_argv(train, test, out, model="bernoulli-nb")), out, "--n-features 3 is too many for this")


def test_warnings_are_one_line_and_a_normal_run_is_quiet(small, tmp_path, capsys, monkeypatch):
    import warnings

    from hdbayes import BayesianBernoulliNB

    train, test = _binary(small)
    argv = _argv(small["real", "train"], small["real", "test"], tmp_path / "g.csv", "--n-features", "3",
                 "--n-iter", "60", "--burn-in", "10", "--thin", "1", model="gaussian")  # fmt: skip
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert "R-hat n/a (1 chain)" in captured.out and "nan" not in captured.out
    fit = BayesianBernoulliNB.fit

    def noisy(self, X, y):
        warnings.warn("n_iter reached\nwithout convergence", RuntimeWarning, stacklevel=1)
        return fit(self, X, y)

    monkeypatch.setattr(BayesianBernoulliNB, "fit", noisy)
    assert main(_argv(train, test, tmp_path / "p.csv", model="bernoulli-nb")) == 0
    assert capsys.readouterr().err == "hdbayes: warning: --n-iter reached without convergence\n"


def test_demo_prints_calibration_and_is_byte_identical_for_the_same_seed(tmp_path, capsys):
    first, second = tmp_path / "a", tmp_path / "b"
    assert main(["demo", "--out", str(first)]) == 0
    text = capsys.readouterr().out
    assert "| C | Corr # | Pred | Actual | Unc # | Pred | Actual |" in text
    assert "expected_error" in text and "[x] k=10: corrected |expected - actual error| <= 0.03" in text
    assert text.rstrip().endswith(" s.") and "the run took" in text.splitlines()[-1]  # time on the terminal
    for name in ("summary.md", "results.csv", "fig2_5_error_rates.png", "fig2_7_alpha_posterior.png"):
        assert (first / name).stat().st_size > 0
    assert main(["demo", "--out", str(second)]) == 0
    assert "the run took" not in (first / "summary.md").read_text()
    for name in ["summary.md", *(p.name for p in first.glob("*.csv") if not p.name.startswith("timing"))]:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name


def test_too_few_draws_and_arviz_are_quiet(small, tmp_path):
    """A fresh process with an empty cache: no ArviZ FutureWarning, no ArviZ log line on stderr."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "MPLBACKEND": "Agg", "XDG_CACHE_HOME": str(tmp_path / "cache")}
    argv = _argv(small["real", "train"], small["real", "test"], tmp_path / "g.csv", "--n-features", "3",
                 "--n-iter", "30", "--burn-in", "10", "--thin", "10", model="gaussian")  # fmt: skip
    done = subprocess.run([sys.executable, "-m", "hdbayes", *argv], capture_output=True, text=True, env=env,
                          timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert "R-hat and effective sample size n/a (only 2 draws per chain: raise --n-iter or lower --thin)" in (
        done.stdout
    )


def test_smoothing_and_class_pseudo_count_reach_the_estimator(small, tmp_path, capsys):
    """--alpha is the discrete naive Bayes' feature smoothing (scikit-learn's alpha), --class-pseudo-count the
    Dirichlet pseudo-count of every class: the predictions are those of the estimator given the same values."""
    from hdbayes import BayesianBernoulliNB

    train, test = _binary(small)
    out = tmp_path / "p.csv"
    argv = _argv(train, test, out, "--alpha", "0.5", "--class-pseudo-count", "3", model="bernoulli-nb")
    assert main(argv) == 0, capsys.readouterr().err
    frame, test_frame = pd.read_csv(train), pd.read_csv(test)
    features = [c for c in frame.columns if c != "cls"]
    expected = BayesianBernoulliNB(alpha=0.5, class_pseudo_count=3.0).fit(frame[features], frame["cls"])
    np.testing.assert_allclose(pd.read_csv(out).iloc[:, 1:].to_numpy(), expected.predict_proba(test_frame[features]),
                               rtol=1e-12)  # fmt: skip


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--alpha", "-1"], "--alpha must be a finite number >= 0, got -1"),
        (["--class-pseudo-count", "-1"], "--class-pseudo-count must be a finite number >= 0, got -1"),
        (["--class-pseudo-count", "nan"], "--class-pseudo-count must be a finite number >= 0"),
    ],
)
def test_smoothing_options_out_of_range_are_refused(small, tmp_path, capsys, extra, message):
    train, test = _binary(small)
    out = tmp_path / "p.csv"
    _refused(capsys, main(_argv(train, test, out, *extra, model="bernoulli-nb")), out, message)


def test_alpha_is_refused_for_the_other_models(small, tmp_path, capsys):
    train, test = _binary(small)
    out = tmp_path / "p.csv"
    _refused(capsys, main(_argv(train, test, out, "--alpha", "2", "--n-features", "3")), out,
             "--alpha applies to --model bernoulli-nb or categorical-nb or multinomial-nb only")  # fmt: skip


def test_mcmc_lines_come_from_the_estimators_summary():
    """The CLI prints the model's own monitored variables (mcmc_summary), whatever they are called."""
    from types import SimpleNamespace

    from hdbayes.cli import _mcmc_lines

    summary = {"sigma": {"mean": 1.25, "sd": 0.1, "ess_bulk": 321.4, "r_hat": 1.002},
               "log_kappa": {"mean": -0.5, "sd": 0.2, "ess_bulk": float("nan"), "r_hat": float("nan")}}  # fmt: skip
    model = SimpleNamespace(mcmc_summary=lambda: summary, trace_=SimpleNamespace(n_chains=2, n_draws=50))
    assert _mcmc_lines(model) == [
        "sigma: posterior mean 1.250, R-hat 1.002, effective sample size 321",
        "log_kappa: posterior mean -0.500, R-hat n/a, effective sample size n/a",
    ]
    one = SimpleNamespace(mcmc_summary=lambda: {"sigma": summary["sigma"]},
                          trace_=SimpleNamespace(n_chains=1, n_draws=3))  # fmt: skip
    assert _mcmc_lines(one) == ["sigma: posterior mean 1.250; R-hat and effective sample size n/a (only 3 draws per "
                                "chain: raise --n-iter or lower --thin)"]  # fmt: skip
