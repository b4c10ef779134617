"""Property-based tests of the command line: malformed files and odd option values.

Every generated case must end either with exit status 2, exactly one line on standard
error naming the problem and no output file, or with exit status 0 and a correct result
(finite probabilities summing to 1, one row per test row). Never a traceback, never
exit status 1. ``main`` runs in-process; the sizes are small and ``max_examples``
bounded so that the whole file takes seconds (``--hypothesis-show-statistics`` prints
the number of generated cases).
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hdbayes.cli import _cli_terms, _read_csv, main

SETTINGS = {"deadline": None, "suppress_health_check": [HealthCheck.function_scoped_fixture]}
_case = itertools.count()

CORRUPTIONS = (
    "none",
    "ragged",
    "non_numeric",
    "blank_cell",
    "nan",
    "inf",
    "huge",
    "overflowing_literal",
    "bom",
    "duplicate_name",
    "one_class",
    "one_row",
    "constant_column",
    "empty_file",
    "header_only",
    "quoted_comma",
    "unterminated_quote",
)


@st.composite
def datasets(draw, corruption=None):
    """(train text, test text, number of test rows, corruption) for a small binary problem.

    ``corruption``: one of CORRUPTIONS, or None to draw one (about half the files valid).
    """
    n_features = draw(st.integers(1, 5))
    n_train = draw(st.integers(4, 10))
    n_test = draw(st.integers(1, 4))
    values = draw(st.lists(st.integers(0, 1), min_size=(n_train + n_test) * n_features,
                           max_size=(n_train + n_test) * n_features))  # fmt: skip
    X = np.array(values).reshape(n_train + n_test, n_features)
    y = ["a", "b"] * n_train
    names = [f"f{j}" for j in range(n_features)]
    rows = [[str(v) for v in X[i]] + [y[i] if i < n_train else y[i - n_train]] for i in range(n_train + n_test)]
    if corruption is None:
        corruption = draw(st.one_of(st.just("none"), st.sampled_from(CORRUPTIONS)))
    in_test = draw(st.booleans())
    train_rows, test_rows = rows[:n_train], rows[n_train:]
    target_rows = test_rows if in_test else train_rows
    i = draw(st.integers(0, len(target_rows) - 1))
    j = draw(st.integers(0, n_features - 1))
    header = [*names, "cls"]
    prefix = {"train": "", "test": ""}
    which = "test" if in_test else "train"
    if corruption == "ragged":
        target_rows[i] = target_rows[i][:-1] if draw(st.booleans()) else [*target_rows[i], "1"]
    elif corruption == "non_numeric":
        target_rows[i][j] = draw(st.sampled_from(["x", "1.0.0", "yes", "0x1", "--1"]))
    elif corruption == "blank_cell":
        target_rows[i][j] = draw(st.sampled_from(["", " ", "NA", "null"]))
    elif corruption == "nan":
        target_rows[i][j] = "nan"
    elif corruption == "inf":
        target_rows[i][j] = draw(st.sampled_from(["inf", "-inf", "Infinity"]))
    elif corruption == "huge":
        target_rows[i][j] = draw(st.sampled_from(["1e308", "-1e308", "1.7976931348623157e308", "5e-324"]))
    elif corruption == "overflowing_literal":
        target_rows[i][j] = "1e400"
    elif corruption == "bom":
        prefix[which] = "\ufeff"
    elif corruption == "duplicate_name":
        header = [*names, "cls"]
        header[j] = "cls" if draw(st.booleans()) else header[(j + 1) % len(header)]
    elif corruption == "one_class":
        for row in train_rows:
            row[-1] = "a"
    elif corruption == "one_row":
        del train_rows[1:]
    elif corruption == "constant_column":
        for row in train_rows:
            row[j] = "1"
    elif corruption == "quoted_comma":
        target_rows[i][j] = '"1,5"'
    elif corruption == "unterminated_quote":
        target_rows[i][j] = '"1'

    def text(rows, head):
        if corruption == "empty_file" and head == which:
            return ""
        body = [] if corruption == "header_only" and head == which else rows
        return prefix[head] + "\n".join(",".join(row) for row in [header, *body]) + "\n"

    return text(train_rows, "train"), text(test_rows, "test"), len(test_rows), corruption


def options(model, n_features):
    """Random selection, binarisation and MCMC options, as ``--option=value`` strings."""
    selection = st.one_of(
        st.just([]),
        st.sampled_from([1, 2, n_features]).map(lambda k: [f"--n-features={k}"]),
        st.sampled_from([-1, 0, 1, 2, n_features, n_features + 1]).map(lambda k: [f"--n-features={k}"]),
        st.sampled_from(["nan", "inf", "-1", "0", "0.05", "10", "x"]).map(lambda t: [f"--threshold={t}"]),
    )
    binarize = st.one_of(
        st.sampled_from([[], ["--binarize=0"], ["--binarize=0.5"], ["--binarize=median"]]),
        st.sampled_from([["--binarize=nan"], ["--binarize=-inf"], ["--binarize=abc"], ["--binarize=1e308"],
                         ["--binarize=-1"]]),
    )  # fmt: skip
    parts = [selection]
    if model in ("naive-bayes", "bernoulli-nb", "mixture"):
        parts.append(binarize)
    if model == "categorical-nb":
        parts.append(st.sampled_from([[], ["--n-levels=0"], ["--n-levels=1"], ["--n-levels=2"],
                                      ["--n-levels=-3"]]))  # fmt: skip
    if model in ("gaussian", "mixture"):
        parts.append(st.tuples(st.sampled_from([0, 1, 6, 12]), st.sampled_from([-1, 0, 2, 20]),
                               st.sampled_from([0, 1, 2]), st.sampled_from([0, 1, 2])).map(
            lambda c: [f"--n-iter={c[0]}", f"--burn-in={c[1]}", f"--thin={c[2]}", f"--chains={c[3]}"]))  # fmt: skip
    return st.tuples(*parts).map(lambda groups: [option for group in groups for option in group])


def _run(argv, capsys):
    try:
        status = main(argv)
    except SystemExit as exit_info:  # argparse: --help or a malformed option
        status = exit_info.code
    return status, capsys.readouterr()


def _check_case(tmp_path, capsys, model, train_text, test_text, n_test, extra):
    folder = tmp_path / f"case{next(_case)}"
    folder.mkdir()
    (folder / "train.csv").write_text(train_text, encoding="utf-8")
    (folder / "test.csv").write_text(test_text, encoding="utf-8")
    out = folder / "out" / "pred.csv"
    argv = ["classify", "--train", str(folder / "train.csv"), "--test", str(folder / "test.csv"),
            "--target", "cls", "--model", model, "--out", str(out), *extra]  # fmt: skip
    status, captured = _run(argv, capsys)
    assert "Traceback" not in captured.err, captured.err
    assert status in (0, 2), (status, captured.err)
    if status == 2:
        assert captured.err.count("\n") == 1 and captured.err.startswith("hdbayes"), captured.err
        assert "error: " in captured.err and len(captured.err.split("error: ", 1)[1].strip()) > 10
        assert not out.exists() and not (folder / "out").exists()
        return "refused"
    for line in captured.err.splitlines():
        assert line.startswith("hdbayes: warning: "), captured.err
    predictions = pd.read_csv(out)
    assert len(predictions) == n_test
    proba = predictions.filter(like="P(cls=").to_numpy(dtype=np.float64)
    assert proba.shape[1] == 2
    assert np.isfinite(proba).all() and (proba >= 0).all() and (proba <= 1).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-9)
    return "ok"


def _draw_and_check(tmp_path, capsys, data, dataset, model):
    """Draw options for ``model`` sized to the dataset's features, then run and check the case."""
    train_text, test_text, n_test, _ = dataset
    n_features = max(1, train_text.split("\n", 1)[0].count(","))
    extra = data.draw(options(model, n_features))
    _check_case(tmp_path, capsys, model, train_text, test_text, n_test, extra)


@settings(max_examples=120, **SETTINGS)
@given(data=st.data(), dataset=datasets(), model=st.sampled_from(["naive-bayes", "bernoulli-nb"]))
def test_fast_models_refuse_or_answer(tmp_path, capsys, data, dataset, model):
    _draw_and_check(tmp_path, capsys, data, dataset, model)


@settings(max_examples=30, **SETTINGS)
@given(data=st.data(), dataset=datasets(), model=st.sampled_from(["categorical-nb", "multinomial-nb", "dcm"]))
def test_discrete_models_refuse_or_answer(tmp_path, capsys, data, dataset, model):
    _draw_and_check(tmp_path, capsys, data, dataset, model)


@settings(max_examples=12, **SETTINGS)
@given(data=st.data(), dataset=datasets(), model=st.sampled_from(["gaussian", "mixture"]))
def test_mcmc_models_refuse_or_answer(tmp_path, capsys, data, dataset, model):
    _draw_and_check(tmp_path, capsys, data, dataset, model)


finite = st.floats(allow_nan=False, allow_infinity=False, width=64)


@settings(max_examples=60, **SETTINGS)
@given(
    values=st.integers(1, 6).flatmap(
        lambda n: st.lists(st.lists(finite, min_size=n, max_size=n), min_size=1, max_size=6)
    ),  # fmt: skip
    bom=st.booleans(),
    crlf=st.booleans(),
)
def test_reader_round_trips_finite_numbers(tmp_path, values, bom, crlf):
    """Any finite float64 matrix written by pandas is read back exactly, with its column names."""
    names = [f"col {j}" for j in range(len(values[0]))]
    frame = pd.DataFrame(values, columns=names)
    path = tmp_path / f"round{next(_case)}.csv"
    text = frame.to_csv(index=False, float_format=lambda v: repr(float(v)), lineterminator="\r\n" if crlf else "\n")
    path.write_text(("\ufeff" if bom else "") + text, encoding="utf-8")
    table = _read_csv(path, "training")
    assert table.columns == names
    np.testing.assert_array_equal(table.numbers(names), np.array(values, dtype=np.float64))


@settings(max_examples=40, **SETTINGS)
@given(message=st.text(max_size=80))
def test_cli_terms_gives_one_line(message):
    translated = _cli_terms(message)
    assert "\n" not in translated and "\r" not in translated
    assert "np.float64(" not in translated
    assert _cli_terms(translated) == translated


@pytest.mark.parametrize("corruption", CORRUPTIONS)
@settings(max_examples=4, **SETTINGS)
@given(data=st.data(), model=st.sampled_from(["naive-bayes", "bernoulli-nb"]))
def test_each_corruption(tmp_path, capsys, corruption, data, model):
    """Every kind of malformed file goes through the command (a few cases each, whatever the random draws)."""
    train_text, test_text, n_test, _ = data.draw(datasets(corruption))
    result = _check_case(tmp_path, capsys, model, train_text, test_text, n_test, ["--n-features=1"])
    if corruption in ("ragged", "non_numeric", "blank_cell", "nan", "inf", "overflowing_literal", "duplicate_name",
                      "one_class", "one_row", "empty_file", "header_only", "unterminated_quote"):  # fmt: skip
        assert result == "refused", corruption


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_non_finite_threshold_is_one_line(tmp_path, capsys, value):
    train = tmp_path / "t.csv"
    train.write_text("f0,f1,cls\n1,0,a\n0,1,b\n1,1,a\n0,0,b\n")
    out = tmp_path / "p.csv"
    status, captured = _run(["classify", "--train", str(train), "--test", str(train), "--target", "cls",
                             "--out", str(out), f"--threshold={value}"], capsys)  # fmt: skip
    assert status == 2 and captured.err.count("\n") == 1 and "--threshold must be a finite number" in captured.err
    assert not out.exists()


# ---------------------------------------------------------------------------------------------------------
# faults (issue 26): outputs that are inputs, links planted in output folders, numeric-looking labels, options
# foreign to the model or variant, huge sizes. Each case: exit status 0 or 2, never 1 or a traceback, one line
# and nothing written on 2, the victim file unchanged. The refusals come before any work, so the cases are fast.

_TRAIN = "f0,f1,f2,cls\n1,0,1,a\n0,1,0,b\n1,1,1,a\n0,0,0,b\n1,0,0,a\n0,1,1,b\n"
_REGRESS = "x0,x1,x2,x3,y\n1,0,2,1,1.5\n0,1,1,0,2.5\n1,1,0,2,0.3\n0,0,1,1,1.1\n2,1,0,0,0.2\n0,2,1,1,2.0\n"


def _snapshot(folder):
    """Every entry under ``folder``: files with their bytes, links with their target, folders, to compare."""
    import os

    def content(path):
        return os.readlink(path) if path.is_symlink() else b"<folder>" if path.is_dir() else path.read_bytes()

    return sorted((str(p.relative_to(folder)), content(p)) for p in folder.rglob("*"))


def _fault_case(argv, capsys, folder, before, *, refused):
    """Run ``argv``; status 0 or 2 (2 when ``refused``), one line and an unchanged folder on 2."""
    status, captured = _run(argv, capsys)
    assert "Traceback" not in captured.err, captured.err
    assert status in (0, 2), (status, captured.err)
    if refused:
        assert status == 2, captured.err
    if status == 2:
        assert captured.err.count("\n") == 1 and captured.err.startswith("hdbayes"), captured.err
        assert _snapshot(folder) == before
    return status, captured


def _another_name(folder, victim, how, draw):
    """Another name of the existing file ``victim`` inside ``folder``."""
    import os

    if how == "same":
        return victim
    if how == "symlink":
        link = folder / f"link{draw(st.integers(0, 10**6))}.csv"
        if not link.exists():
            link.symlink_to(victim if draw(st.booleans()) else os.path.relpath(victim, folder))
        return link if link.resolve() == victim.resolve() else victim
    if how == "hardlink":
        link = folder / f"hard{draw(st.integers(0, 10**6))}.csv"
        if not link.exists():
            os.link(victim, link)
        return link if link.samefile(victim) else victim
    if how == "dotdot-missing":  # writing it would create the missing folder and replace the victim
        return folder / f"gone{draw(st.integers(0, 10**6))}" / ".." / victim.name
    sub = folder / "sub"
    sub.mkdir(exist_ok=True)
    return folder / "sub" / ".." / "." / victim.name  # "dotdot"


@settings(max_examples=150, **SETTINGS)
@given(data=st.data(), command=st.sampled_from(["classify", "regress"]),
       how=st.sampled_from(["same", "symlink", "hardlink", "dotdot", "dotdot-missing"]))  # fmt: skip
def test_an_output_that_is_an_input_is_refused(tmp_path, capsys, data, command, how):
    folder = tmp_path / f"alias{next(_case)}"
    folder.mkdir()
    paths = {"train": folder / "train.csv", "test": folder / "test.csv", "groups": folder / "groups.csv",
             "out": folder / "pred.csv"}  # fmt: skip
    paths["train"].write_text(_TRAIN if command == "classify" else _REGRESS)
    paths["test"].write_text(_TRAIN if command == "classify" else _REGRESS)
    paths["groups"].write_text("feature,group\nx0,0\nx1,0\nx2,1\nx3,1\n")
    paths["out"].write_text("earlier predictions")
    if command == "classify":
        output, victim = "--out", data.draw(st.sampled_from(["train", "test"]))
        argv = ["classify", "--target", "cls", "--model", data.draw(st.sampled_from(["naive-bayes", "bernoulli-nb"]))]
    else:
        output = data.draw(st.sampled_from(["--out", "--plot"]))
        victim = data.draw(st.sampled_from(["train", "test", "groups"] + (["out"] if output == "--plot" else [])))
        argv = ["regress", "--target", "y", "--groups", str(paths["groups"])]
    alias = _another_name(folder, paths[victim], how, data.draw)
    argv += ["--train", str(paths["train"]), "--test", str(paths["test"])]
    argv += ["--out", str(alias)] if output == "--out" else ["--out", str(paths["out"]), "--plot", str(alias)]
    before = _snapshot(folder)
    _, captured = _fault_case(argv, capsys, folder, before, refused=True)
    assert f"{output} is the same file as --{victim}" in captured.err, captured.err


@settings(max_examples=100, **SETTINGS)
@given(data=st.data(), command=st.sampled_from(["demo", "reproduce"]),
       plant=st.sampled_from(["summary.md", "results.csv", "figure.png", "notes", "sub/inner"]),
       target=st.sampled_from(["file", "folder", "dangling", "parent"]))  # fmt: skip
def test_links_planted_in_an_output_folder_are_refused(tmp_path, capsys, data, command, plant, target):
    """A folder hdbayes wrote before (its manifest present) with a symbolic link planted inside: refused before
    any work, the link and its target untouched."""
    from hdbayes._io import MANIFEST

    folder = tmp_path / f"planted{next(_case)}"
    out = folder / "out"
    out.mkdir(parents=True)
    (out / MANIFEST).write_text("# written by hdbayes; files listed here are replaced by the next run\nsummary.md\n")
    (out / "summary.md").write_text("# an earlier run\n")
    victim = folder / "victim.txt"
    victim.write_text("someone's thesis")
    link = out / plant
    link.parent.mkdir(exist_ok=True)
    link.unlink(missing_ok=True)  # summary.md: the link takes the place of the file hdbayes wrote
    link.symlink_to({"file": victim, "folder": folder, "dangling": folder / "nothing", "parent": ".."}[target])
    before = _snapshot(folder)
    argv = ["demo", "--out", str(out)] if command == "demo" else ["reproduce", "interaction-counts", "--out", str(out)]
    argv += ["--seed", str(data.draw(st.integers(0, 2**32 - 1)))]
    _fault_case(argv, capsys, folder, before, refused=True)


_LABELS = ["1", "01", "+1", "1.0", "1e0", "-0", "0", "00", "2", "10", "-3", "0.5", "1.50", "a", "NaNa"]


@settings(max_examples=80, **SETTINGS)
@given(labels=st.lists(st.sampled_from(_LABELS), min_size=1, max_size=3, unique=True),
       model=st.sampled_from(["bernoulli-nb", "multinomial-nb"]), data=st.data())  # fmt: skip
def test_numeric_looking_labels_stay_distinct(tmp_path, capsys, labels, model, data):
    folder = tmp_path / f"labels{next(_case)}"
    folder.mkdir()
    n = 4 * len(labels)
    X = np.array(data.draw(st.lists(st.integers(0, 1), min_size=3 * (n + 2), max_size=3 * (n + 2)))).reshape(-1, 3)
    X[: len(labels), 0] = 0  # every feature varies in training
    X[len(labels) : 2 * len(labels), 0] = 1
    rows = [",".join(map(str, X[i])) + "," + labels[i % len(labels)] for i in range(n)]
    (folder / "train.csv").write_text("f0,f1,f2,cls\n" + "\n".join(rows) + "\n")
    (folder / "test.csv").write_text("f0,f1,f2\n" + "\n".join(",".join(map(str, X[i])) for i in (n, n + 1)) + "\n")
    out = folder / "p.csv"
    argv = ["classify", "--train", str(folder / "train.csv"), "--test", str(folder / "test.csv"), "--target", "cls",
            "--model", model, "--out", str(out)]  # fmt: skip
    before = _snapshot(folder)
    status, captured = _fault_case(argv, capsys, folder, before, refused=len(labels) == 1)
    if status == 2:
        assert "single class" in captured.err
        return
    written = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert sorted(written.columns[1:]) == sorted(f"P(cls={label})" for label in labels)
    assert set(written["prediction"]) <= set(labels)
    if all(label.lstrip("-").isdigit() and str(int(label)) == label for label in labels):  # integers: numeric order
        assert list(written.columns[1:]) == [f"P(cls={label})" for label in sorted(labels, key=int)]


def _valid_values(action):
    if action.nargs == 0:
        return st.just([action.option_strings[0]])
    if action.choices:
        return st.sampled_from(sorted(action.choices)).map(lambda v: [action.option_strings[0], v])
    # 2 and 3 are in every numeric option's range (--n-levels needs at least 2: refused before any file is read)
    return st.sampled_from(["2", "3"]).map(lambda v: [action.option_strings[0], v])


@settings(max_examples=150, **SETTINGS)
@given(data=st.data(), model=st.sampled_from(["naive-bayes", "categorical-naive-bayes", "gaussian", "mixture",
                                              "bernoulli-nb", "categorical-nb", "multinomial-nb", "dcm"]))  # fmt: skip
def test_options_foreign_to_the_model_are_refused(tmp_path, capsys, data, model):
    """Random options with valid values, given to a missing training file: refused as foreign exactly when one
    is foreign to the model or its variant (_MODEL_OPTIONS), else the file is reported missing."""
    import argparse

    from hdbayes import cli

    parser = cli._build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["classify"]
    actions = {a.dest: a for a in sub._actions if a.dest in cli._MODEL_OPTIONS}
    chosen = data.draw(st.lists(st.sampled_from(sorted(actions)), max_size=4, unique=True).filter(
        lambda names: not {"n_features", "threshold"} <= set(names)))  # argparse: one or the other  # fmt: skip
    extra, values = [], {}
    for dest in chosen:
        option = data.draw(_valid_values(actions[dest]))
        extra += option
        values[dest] = option[1] if len(option) > 1 else True
    foreign = [dest for dest in chosen if model not in cli._MODEL_OPTIONS[dest].models
               or (cli._MODEL_OPTIONS[dest].needs is not None
                   and values.get(cli._MODEL_OPTIONS[dest].needs[0]) != cli._MODEL_OPTIONS[dest].needs[1])]  # fmt: skip
    missing = tmp_path / "missing.csv"
    argv = ["classify", "--train", str(missing), "--test", str(missing), "--target", "cls", "--model", model,
            "--out", str(tmp_path / "p.csv"), *extra]  # fmt: skip
    status, captured = _fault_case(argv, capsys, tmp_path, _snapshot(tmp_path), refused=True)
    if foreign:
        assert any(f"--{dest.replace('_', '-')} applies " in captured.err for dest in foreign), captured.err
    else:
        assert "training file not found" in captured.err, captured.err


def _estimators_check_sizes():
    """Whether the estimators refuse a size whose memory would not fit (the estimator side of issue 26)."""
    from hdbayes import BayesianCategoricalNB

    try:
        BayesianCategoricalNB(n_levels=10**15).fit(np.array([[0, 1], [1, 0]]), [0, 1])
    except MemoryError:
        return False
    except ValueError as error:
        return "n_levels" in str(error)
    return False


@pytest.mark.skipif(not _estimators_check_sizes(), reason="the estimators' memory check (issue 26) has not landed: "
                    "a billion MCMC chains would run for ever")  # fmt: skip
@settings(max_examples=50, **SETTINGS)
@given(option=st.sampled_from([("--chains", ("gaussian", "mixture")), ("--n-iter", ("gaussian", "mixture")),
                               ("--n-levels", ("categorical-nb", "categorical-naive-bayes"))]),
       size=st.integers(10**12, 10**18), data=st.data())  # fmt: skip
def test_huge_sizes_are_refused(tmp_path, capsys, option, size, data):
    folder = tmp_path / f"huge{next(_case)}"
    folder.mkdir()
    (folder / "train.csv").write_text(_TRAIN)
    flag, models = option
    out = folder / "p.csv"
    argv = ["classify", "--train", str(folder / "train.csv"), "--test", str(folder / "train.csv"), "--target", "cls",
            "--model", data.draw(st.sampled_from(models)), "--out", str(out), flag, str(size)]  # fmt: skip
    _, captured = _fault_case(argv, capsys, folder, _snapshot(folder), refused=True)
    assert flag in captured.err
