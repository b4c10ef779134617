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
        parts.append(st.sampled_from([[], ["--n-categories=0"], ["--n-categories=1"], ["--n-categories=2"],
                                      ["--n-categories=-3"]]))  # fmt: skip
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
