"""The ``hdbayes`` command under accident and attack (issue 26).

Outputs that are inputs under another name, numeric-looking class labels, options foreign
to the chosen model or variant, out-of-memory and huge size options, Ctrl-C during start-up,
option messages, and the file encodings the reader recognises. Every refusal is exit status
2 with one line on standard error and nothing written; running out of memory is exit status 4.
"""

from __future__ import annotations

import argparse
import gzip
import math
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

from hdbayes import cli
from hdbayes.cli import main

TRAIN = "f0,f1,f2,cls\n1,0,1,a\n0,1,0,b\n1,1,1,a\n0,0,0,b\n1,0,0,a\n0,1,1,b\n1,1,0,a\n0,0,1,b\n"
TEST = "f0,f1,f2,cls\n1,0,1,a\n0,1,1,b\n1,1,0,b\n"
REGRESS = "x0,x1,x2,x3,y\n1,0,2,1,1.5\n0,1,1,0,2.5\n1,1,0,2,0.3\n0,0,1,1,1.1\n2,1,0,0,0.2\n0,2,1,1,2.0\n"


def _run(argv, capsys):
    try:
        status = main(argv)
    except SystemExit as exit_info:  # argparse
        status = exit_info.code
    return status, capsys.readouterr()


def _one_line_refusal(status, captured, *fragments):
    assert status == 2, captured.err
    assert captured.err.count("\n") == 1 and captured.err.startswith("hdbayes"), captured.err
    assert "Traceback" not in captured.err
    for fragment in fragments:
        assert fragment in captured.err, captured.err


def _listing(folder):
    return sorted((str(p.relative_to(folder)), p.is_symlink() or p.read_bytes()) for p in folder.rglob("*")
                  if not p.is_dir())  # fmt: skip


@pytest.fixture()
def files(tmp_path):
    paths = {"train": tmp_path / "train.csv", "test": tmp_path / "test.csv", "regress": tmp_path / "r.csv",
             "groups": tmp_path / "groups.csv"}  # fmt: skip
    paths["train"].write_text(TRAIN)
    paths["test"].write_text(TEST)
    paths["regress"].write_text(REGRESS)
    paths["groups"].write_text("feature,group\nx0,0\nx1,0\nx2,1\nx3,1\n")
    (tmp_path / "x").mkdir()
    return paths


def _alias(tmp_path, victim, how):
    """Another name of the file ``victim``."""
    if how == "same":
        return victim
    if how == "symlink":
        link = tmp_path / f"link-{victim.name}"
        link.symlink_to(victim)
        return link
    if how == "hardlink":
        link = tmp_path / f"hard-{victim.name}"
        os.link(victim, link)
        return link
    if how == "dotdot":
        return tmp_path / "x" / ".." / victim.name
    if how == "dotdot-missing":
        return tmp_path / "nowhere" / ".." / victim.name
    raise AssertionError(how)


ALIASES = ["same", "symlink", "hardlink", "dotdot", "dotdot-missing"]


# ---------------------------------------------------------------------------------------------------------
# 1. an output that is an input


@pytest.mark.parametrize("how", ALIASES)
@pytest.mark.parametrize("victim", ["train", "test"])
def test_classify_out_that_is_an_input_is_refused(files, tmp_path, capsys, how, victim):
    out = _alias(tmp_path, files[victim], how)
    before = _listing(tmp_path)
    argv = ["classify", "--train", str(files["train"]), "--test", str(files["test"]), "--target", "cls",
            "--model", "bernoulli-nb", "--out", str(out)]  # fmt: skip
    status, captured = _run(argv, capsys)
    _one_line_refusal(status, captured, "--out is the same file as", f"--{victim}")
    assert _listing(tmp_path) == before
    assert not (tmp_path / "nowhere").exists()


@pytest.mark.parametrize("how", ALIASES)
@pytest.mark.parametrize(
    "output, victim",
    [
        ("--out", "train"),
        ("--out", "test"),
        ("--out", "groups"),
        ("--plot", "train"),
        ("--plot", "test"),
        ("--plot", "groups"),
        ("--plot", "out"),
    ],  # fmt: skip
)
def test_regress_output_that_is_an_input_or_the_other_output_is_refused(files, tmp_path, capsys, how, output,
                                                                        victim):  # fmt: skip
    test = tmp_path / "rtest.csv"
    test.write_text(REGRESS)
    paths = {"train": files["regress"], "test": test, "groups": files["groups"], "out": tmp_path / "pred.csv"}
    paths["out"].write_text("my earlier predictions")
    alias = _alias(tmp_path, paths[victim], how)
    argv = ["regress", "--train", str(paths["train"]), "--test", str(paths["test"]), "--target", "y",
            "--groups", str(paths["groups"])]  # fmt: skip
    argv += ["--out", str(alias)] if output == "--out" else ["--out", str(paths["out"]), "--plot", str(alias)]
    before = _listing(tmp_path)
    status, captured = _run(argv, capsys)
    _one_line_refusal(status, captured, f"{output} is the same file as", f"--{victim}")
    assert _listing(tmp_path) == before


def test_the_same_input_twice_is_fine(files, tmp_path, capsys):
    out = tmp_path / "p.csv"
    argv = ["classify", "--train", str(files["train"]), "--test", str(files["train"]), "--target", "cls",
            "--model", "bernoulli-nb", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    assert pd.read_csv(out).shape == (8, 3)


# ---------------------------------------------------------------------------------------------------------
# 2. class labels are text


def _classify_labels(tmp_path, train_labels, test_labels=None, name="cls"):
    rng = np.random.default_rng(0)
    n = len(train_labels)
    X = rng.integers(0, 2, size=(n + len(test_labels or [1]), 3))
    frame = pd.DataFrame(X[:n], columns=["f0", "f1", "f2"]).astype(str)
    frame[name] = train_labels
    frame.to_csv(tmp_path / "lt.csv", index=False)
    test = pd.DataFrame(X[n:], columns=["f0", "f1", "f2"]).astype(str)
    if test_labels is not None:
        test[name] = test_labels
    test.to_csv(tmp_path / "lte.csv", index=False)
    out = tmp_path / "lp.csv"
    argv = ["classify", "--train", str(tmp_path / "lt.csv"), "--test", str(tmp_path / "lte.csv"), "--target", name,
            "--model", "bernoulli-nb", "--out", str(out)]  # fmt: skip
    return argv, out


@pytest.mark.parametrize(
    "labels, columns",
    [
        (["1", "01", "2"], ["01", "1", "2"]),  # three classes: "01" is not "1"
        (["1", "01"], ["01", "1"]),  # two classes, not "a single class"
        (["1", "+1"], ["+1", "1"]),
        (["1", "1.0"], ["1", "1.0"]),
        (["0", "-0"], ["-0", "0"]),
        (["0.0", "-0.0"], ["-0.0", "0.0"]),
        (["1e2", "100"], ["100", "1e2"]),
        (["2", "10"], ["2", "10"]),  # integers: numeric order
        (["-3", "7", "12"], ["-3", "7", "12"]),
        (["0.5", "1.5", "10.5"], ["0.5", "1.5", "10.5"]),  # not integers: text
        (["b", "a", "B"], ["B", "a", "b"]),
    ],
)
def test_distinct_label_strings_stay_distinct_classes(tmp_path, capsys, labels, columns):
    argv, out = _classify_labels(tmp_path, labels * 4)
    status, captured = _run(argv, capsys)
    assert status == 0, captured.err
    written = pd.read_csv(out, dtype=str)
    assert list(written.columns) == ["prediction"] + [f"P(cls={c})" for c in columns]
    assert set(written["prediction"]) <= set(columns)


def test_labels_reader_converts_only_when_distinct_strings_stay_distinct(tmp_path):
    from hdbayes.cli import _read_csv

    cases = {("1", "2", "10"): np.int64, ("1", "01"): str, ("1.5", "2"): str, ("1.5", "2.0"): str,
             ("-1", "+1"): str, ("inf", "1.0"): str, ("99999999999999999999", "1"): str}  # fmt: skip
    for cells, kind in cases.items():
        path = tmp_path / "l.csv"
        path.write_text("f,c\n" + "".join(f"0,{cell}\n" for cell in cells))
        labels = _read_csv(path, "training").labels("c")
        assert len(np.unique(labels)) == len(set(cells)), cells
        if kind is str:
            assert labels.dtype.kind == "U", cells
        else:
            assert labels.dtype == kind, cells
        assert [str(v) for v in labels] == list(cells), cells  # the output column names spell the input


def test_test_labels_are_matched_as_text(tmp_path, capsys):
    """The error rate is reported when every test label spells a training class, compared as text."""
    argv, _ = _classify_labels(tmp_path, ["01", "1"] * 4, ["1", "01"])
    status, captured = _run(argv, capsys)
    assert status == 0 and "actual error rate" in captured.out
    argv, _ = _classify_labels(tmp_path, ["1", "2"] * 4, ["01", "2"])
    status, captured = _run(argv, capsys)
    assert status == 0 and "actual error rate" not in captured.out


# ---------------------------------------------------------------------------------------------------------
# 3. options foreign to the model or the variant


def _subparser(name):
    parser = cli._build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[name]


def _value(action):
    """A valid command-line value of an option."""
    if action.nargs == 0:
        return []
    if action.choices:
        return [sorted(action.choices)[-1]]
    return ["2"]


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--alpha2-x", "3"], "--alpha2-x applies only with --variant per-class"),
        (["--variant", "per-feature", "--alpha2-x", "learn"], "--alpha2-x applies only with --variant per-class"),
        (["--class-scale", "plug-in"], "--class-scale applies only with --variant per-class"),
        (["--variant", "shared", "--class-scale", "equal"], "--class-scale applies only with --variant per-class"),
    ],
)  # fmt: skip
def test_options_of_another_variant_are_refused(files, tmp_path, capsys, extra, message):
    out = tmp_path / "p.csv"
    argv = ["classify", "--train", str(files["train"]), "--test", str(files["test"]), "--target", "cls",
            "--model", "gaussian", "--out", str(out), *extra]  # fmt: skip
    _one_line_refusal(*_run(argv, capsys), message)
    assert not out.exists()


def test_every_classify_option_is_in_the_one_table(tmp_path, capsys):
    """Each option either applies to every model or is in ``_MODEL_OPTIONS``; given to a model or variant that
    does not use it, it is refused (before the files are read) with one line naming the option and the model
    or the option it needs."""
    parser = _subparser("classify")
    options = {a.dest: a for a in parser._actions if a.option_strings and a.dest != "help"}
    assert set(options) == set(cli._MODEL_OPTIONS) | cli._SHARED_OPTIONS["classify"]
    assert not set(cli._MODEL_OPTIONS) & cli._SHARED_OPTIONS["classify"]
    missing = str(tmp_path / "missing.csv")
    base = ["classify", "--train", missing, "--test", missing, "--target", "cls", "--out", str(tmp_path / "p.csv")]
    refused = 0
    for dest, rule in cli._MODEL_OPTIONS.items():
        flag = options[dest].option_strings[0]
        for model in cli.MODELS:
            if model not in rule.models:
                status, captured = _run([*base, "--model", model, flag, *_value(options[dest])], capsys)
                _one_line_refusal(status, captured, f"{flag} applies to --model ")
                refused += 1
        if rule.needs is not None:
            needed, value = rule.needs
            needed_flag = "--" + needed.replace("_", "-")
            model = sorted(rule.models)[0]
            # the needed option absent (or, when it is itself conditional, satisfied up the chain)
            chain = []
            other = cli._MODEL_OPTIONS[needed].needs if needed in cli._MODEL_OPTIONS else None
            while other is not None:
                chain = ["--" + other[0].replace("_", "-"), other[1], *chain]
                other = cli._MODEL_OPTIONS[other[0]].needs
            status, captured = _run([*base, "--model", model, *chain, flag, *_value(options[dest])], capsys)
            _one_line_refusal(status, captured, f"{flag} applies only with {needed_flag} {value}")
            refused += 1
    assert refused > 40
    shared = _subparser("regress")
    assert {a.dest for a in shared._actions if a.option_strings and a.dest != "help"} == cli._SHARED_OPTIONS["regress"]


# ---------------------------------------------------------------------------------------------------------
# 4. resources


@pytest.mark.parametrize("where", ["fit", "read"])
def test_out_of_memory_is_its_own_exit_status(files, tmp_path, capsys, monkeypatch, where):
    from hdbayes import BayesianBernoulliNB

    def no_memory(*args, **kwargs):
        raise MemoryError("Unable to allocate 8.00 EiB for an array with shape (1000000000000000000,)")

    if where == "fit":
        monkeypatch.setattr(BayesianBernoulliNB, "fit", no_memory)
    else:
        monkeypatch.setattr(cli, "_read_csv", no_memory)
    out = tmp_path / "p.csv"
    argv = ["classify", "--train", str(files["train"]), "--test", str(files["test"]), "--target", "cls",
            "--model", "bernoulli-nb", "--out", str(out)]  # fmt: skip
    status, captured = _run(argv, capsys)
    assert status == cli.EXIT_OUT_OF_MEMORY == 4
    phase = "fitting the model" if where == "fit" else "reading the input files"
    assert captured.err == f"hdbayes classify: out of memory while {phase}: Unable to allocate 8.00 EiB for an " \
        "array with shape (1000000000000000000,)\n"  # fmt: skip
    assert not out.exists()


def test_out_of_memory_in_an_experiment(tmp_path, capsys, monkeypatch):
    from hdbayes.experiments import interaction_counts

    def run(**kwargs):
        raise MemoryError()

    monkeypatch.setattr(interaction_counts, "run", run)
    status, captured = _run(["reproduce", "interaction-counts", "--out", str(tmp_path / "o")], capsys)
    assert status == 4 and captured.err.count("\n") == 1
    assert captured.err.startswith("hdbayes reproduce: out of memory while running the experiment: ")
    assert not (tmp_path / "o").exists()


def test_enomem_from_the_system_is_out_of_memory(files, tmp_path, capsys, monkeypatch):
    """OSError ENOMEM (a failed fork or mmap) is running out of memory too, not a bad input."""
    import errno

    from hdbayes import BayesianBernoulliNB

    def no_memory(*args, **kwargs):
        raise OSError(errno.ENOMEM, "Cannot allocate memory")

    monkeypatch.setattr(BayesianBernoulliNB, "fit", no_memory)
    argv = ["classify", "--train", str(files["train"]), "--test", str(files["test"]), "--target", "cls",
            "--model", "bernoulli-nb", "--out", str(tmp_path / "p.csv")]  # fmt: skip
    status, captured = _run(argv, capsys)
    assert status == 4
    assert captured.err == "hdbayes classify: out of memory while fitting the model: Cannot allocate memory\n"
    assert not (tmp_path / "p.csv").exists()


def test_out_of_memory_is_documented(capsys):
    status, captured = _run(["--help"], capsys)
    assert status == 0 and "4 out of memory" in " ".join(captured.out.split())
    assert "4 out of memory" in " ".join(cli.__doc__.split())


def _estimator_checks_sizes():
    """Whether the estimators refuse sizes whose memory would not fit (issue 26, estimator side)."""
    from hdbayes import BayesianCategoricalNB

    X = np.array([[0, 1], [1, 0]])
    try:
        BayesianCategoricalNB(n_levels=10**15).fit(X, [0, 1])
    except MemoryError:
        return False
    except ValueError as error:
        return "n_levels" in str(error)
    return False


@pytest.mark.xfail(not _estimator_checks_sizes(), reason="the estimators' memory check (issue 26) has not landed",
                   strict=False)  # fmt: skip
@pytest.mark.parametrize(
    "extra, option",
    [(["--model", "gaussian", "--chains", "1000000000"], "--chains"),
     (["--model", "mixture", "--chains", "1000000000"], "--chains"),
     (["--model", "categorical-nb", "--n-levels", "1000000000000000"], "--n-levels"),
     (["--model", "categorical-naive-bayes", "--n-levels", "1000000000000000"], "--n-levels")],
)  # fmt: skip
def test_huge_sizes_are_refused_quickly_in_option_terms(files, tmp_path, extra, option):
    """In a subprocess with a time limit: without the estimators' check, a billion chains would run for ever."""
    out = tmp_path / "p.csv"
    argv = ["classify", "--train", str(files["train"]), "--test", str(files["test"]), "--target", "cls",
            "--out", str(out), *extra]  # fmt: skip
    env = {**os.environ, "MPLBACKEND": "Agg"}
    done = subprocess.run([sys.executable, "-m", "hdbayes", *argv], capture_output=True, text=True, env=env,
                          timeout=30)  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("hdbayes classify: error: ")
    assert option in done.stderr and "Traceback" not in done.stderr
    assert not out.exists()


# ---------------------------------------------------------------------------------------------------------
# 5. Ctrl-C during start-up

_INTERRUPT_DURING_IMPORT = """
import builtins, os, signal, sys
# a shell starts the command with Python's own Ctrl-C handler; a parent that ignores SIGINT (a pytest-xdist
# worker) would pass its SIG_IGN on to this process, and Python then installs no handler
signal.signal(signal.SIGINT, signal.default_int_handler)
real_import = builtins.__import__
def interrupting_import(name, *args, **kwargs):
    if name == "hdbayes.experiments.registry":
        os.kill(os.getpid(), signal.SIGINT)
    return real_import(name, *args, **kwargs)
builtins.__import__ = interrupting_import
sys.argv = ["hdbayes", "--version"]
from hdbayes._entry import main
sys.exit(main())
"""


def test_interrupt_while_importing_the_command_is_one_line():
    done = subprocess.run([sys.executable, "-c", _INTERRUPT_DURING_IMPORT], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 130, done.stderr
    assert done.stderr == "hdbayes: interrupted\n"


def test_the_console_script_and_python_m_use_the_entry_module():
    import tomllib
    from pathlib import Path

    pyproject = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    assert pyproject["project"]["scripts"]["hdbayes"] == "hdbayes._entry:main"
    source = (Path(cli.__file__).parent / "__main__.py").read_text()
    assert "hdbayes._entry" in source


@pytest.mark.parametrize("delay", [0.25, 0.5, 1.0])
def test_sigint_early_never_prints_a_traceback(tmp_path, delay, files):
    """SIGINT at a few moments of start-up: 'hdbayes: interrupted' (130), or killed before Python's handler.

    A signal that lands while Python itself starts (importing ``site``, before any code of hdbayes runs) makes
    the interpreter print a fatal error that no program can catch: that case is left out."""
    env = {**os.environ, "MPLBACKEND": "Agg"}
    argv = ["classify", "--train", str(files["train"]), "--test", str(files["test"]), "--target", "cls",
            "--model", "bernoulli-nb", "--out", str(tmp_path / "p.csv")]  # fmt: skip
    process = subprocess.Popen([sys.executable, "-m", "hdbayes", *argv], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=env)  # fmt: skip
    time.sleep(delay)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    status = process.returncode
    if b"init_import_site" in err:  # the interpreter had not started: out of any program's reach
        return
    assert b"Traceback" not in err, err.decode()
    assert status in (0, 130, -signal.SIGINT), (status, err.decode())
    if status == 130:
        assert err == b"hdbayes: interrupted\n"


def test_an_interrupt_inside_an_extension_import_is_an_interrupt(monkeypatch, capsys):
    # a compiled module interrupted while it initialises raises ImportError("initialization failed") from the
    # KeyboardInterrupt (seen with scipy's HiGHS wrapper when Ctrl-C lands during start-up)
    def interrupted_import(args):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as interrupt:
            raise ImportError("initialization failed") from interrupt

    monkeypatch.setattr(cli, "_demo", interrupted_import)
    assert cli.main(["demo"]) == 130
    assert capsys.readouterr().err == "hdbayes: interrupted\n"


# ---------------------------------------------------------------------------------------------------------
# 6. messages


def test_cli_terms_does_not_double_dashes():
    for message in ("--binarize must be a finite number or 'median', got inf", "--thin must be at least 1, got 0",
                    "lower --threshold or raise --thin", "--threshold 0.5 is too high"):  # fmt: skip
        assert cli._cli_terms(message) == message
    assert cli._cli_terms("thin must be at least 1") == "--thin must be at least 1"
    assert cli._cli_terms("need n_iter >= burn_in + thin") == "need --n-iter >= --burn-in + --thin"


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--model", "gaussian", "--thin", "0"], "--thin must be at least 1"),
        (["--binarize", "1e400"], "--binarize must be a finite number"),
    ],
)
def test_option_messages_have_two_dashes(files, tmp_path, capsys, extra, message):
    argv = ["classify", "--train", str(files["train"]), "--test", str(files["test"]), "--target", "cls",
            "--out", str(tmp_path / "p.csv"), *extra]  # fmt: skip
    status, captured = _run(argv, capsys)
    _one_line_refusal(status, captured, message)
    assert "---" not in captured.err


@pytest.mark.parametrize(
    "command, extra, option",
    [("classify", ["--model", "bernoulli-nb", "--alpha", "1e308"], "--alpha 1e+308"),
     ("classify", ["--model", "multinomial-nb", "--alpha", "1e308"], "--alpha 1e+308"),
     ("regress", ["--noise-variance", "1e-300"], "--noise-variance 1e-300"),
     ("regress", ["--slab-variance", "1e308"], "--slab-variance 1e+308")],
)  # fmt: skip
def test_an_extreme_option_is_named_not_the_data(files, tmp_path, capsys, command, extra, option):
    out = tmp_path / "p.csv"
    if command == "classify":
        argv = ["classify", "--train", str(files["train"]), "--test", str(files["test"]), "--target", "cls"]
    else:
        argv = ["regress", "--train", str(files["regress"]), "--test", str(files["regress"]), "--target", "y"]
    status, captured = _run([*argv, "--out", str(out), *extra], capsys)
    if status == 0:  # the arithmetic coped: nothing to say
        return
    _one_line_refusal(status, captured, option)
    assert "rescale the data" not in captured.err
    assert not out.exists()


@pytest.mark.parametrize("seed", ["4294967296", "-1", "99999999999999999999", "1.5"])
@pytest.mark.parametrize("command", ["demo", "reproduce", "classify"])
def test_one_seed_check_for_every_command(files, tmp_path, capsys, command, seed):
    out = tmp_path / "o"
    argv = {"demo": ["demo", "--out", str(out)], "reproduce": ["reproduce", "interaction-counts", "--out", str(out)],
            "classify": ["classify", "--train", str(files["train"]), "--test", str(files["test"]), "--target", "cls",
                         "--out", str(out)]}[command]  # fmt: skip
    status, captured = _run([*argv, "--seed", seed], capsys)
    _one_line_refusal(status, captured, f"--seed must be an integer from 0 to 4294967295, got {seed}")
    assert not out.exists()


def test_the_largest_seed_is_accepted(files, tmp_path):
    argv = ["classify", "--train", str(files["train"]), "--test", str(files["test"]), "--target", "cls", "--model",
            "bernoulli-nb", "--n-features", "1", "--out", str(tmp_path / "p.csv"), "--seed", "4294967295"]  # fmt: skip
    assert main(argv) == 0


@pytest.mark.parametrize("option", ["--prior-inclusion", "--slab-variance", "--noise-variance"])
@pytest.mark.parametrize("value", ["0", "1", "0.5", "-1", "1e-9", "nan", "inf", "2"])
def test_regress_ranges_are_the_estimators(files, tmp_path, capsys, option, value):
    from hdbayes import GroupSpikeSlabRegression

    parameter = option[2:].replace("-", "_")
    interval = next(c for c in GroupSpikeSlabRegression._parameter_constraints[parameter] if hasattr(c, "closed"))
    valid = not math.isnan(float(value)) and float(value) in interval and math.isfinite(float(value))
    out = tmp_path / "p.csv"
    argv = ["regress", "--train", str(files["regress"]), "--test", str(files["regress"]), "--target", "y",
            "--out", str(out), option, value]  # fmt: skip
    status, captured = _run(argv, capsys)
    if valid:
        assert status == 0, captured.err
    else:
        _one_line_refusal(status, captured, f"{option} must be ")
        assert "parameter of" not in captured.err and "float in the range" not in captured.err
        if option == "--prior-inclusion":
            assert "--prior-inclusion must be in (0, 1), got" in captured.err


def _classify_file(tmp_path, capsys, train_path):
    out = tmp_path / "enc.csv"
    argv = ["classify", "--train", str(train_path), "--test", str(train_path), "--target", "cls",
            "--model", "bernoulli-nb", "--out", str(out)]  # fmt: skip
    status, captured = _run(argv, capsys)
    return status, captured, out


@pytest.mark.parametrize("encoding", ["gzip", "gzip-named-csv", "utf-16", "utf-16-be", "utf-16-le-bom", "utf-8-bom"])
def test_gzip_and_utf16_files_are_read(tmp_path, capsys, encoding):
    plain = tmp_path / "plain.csv"
    plain.write_text(TRAIN)
    assert _classify_file(tmp_path, capsys, plain)[0] == 0
    expected = (tmp_path / "enc.csv").read_bytes()
    (tmp_path / "enc.csv").unlink()
    path = tmp_path / ("t.csv.gz" if encoding == "gzip" else "t.csv")
    if encoding.startswith("gzip"):
        path.write_bytes(gzip.compress(TRAIN.encode()))
    elif encoding == "utf-16":
        path.write_bytes(TRAIN.encode("utf-16"))
    elif encoding == "utf-16-be":
        path.write_bytes(b"\xfe\xff" + TRAIN.encode("utf-16-be"))
    elif encoding == "utf-16-le-bom":
        path.write_bytes(b"\xff\xfe" + TRAIN.encode("utf-16-le"))
    else:
        path.write_bytes(b"\xef\xbb\xbf" + TRAIN.encode())
    status, captured, out = _classify_file(tmp_path, capsys, path)
    assert status == 0, captured.err
    assert out.read_bytes() == expected


@pytest.mark.parametrize(
    "content, fragment",
    [
        (TRAIN.replace(",", ";").encode(), "looks semicolon-separated; hdbayes reads comma-separated files"),
        (TRAIN.replace(",", "\t").encode(), "looks tab-separated; hdbayes reads comma-separated files"),
        (gzip.compress(TRAIN.encode(), mtime=0)[:20], "is not a valid gzip file"),
        (TRAIN.encode("utf-16-le"), "NUL bytes"),
        (b"\xff\xfe" + TRAIN.encode("utf-16-le")[:-1], "not UTF-16 text"),
        (gzip.compress(b"", mtime=0), "empty"),
    ],
    ids=["semicolon", "tab", "truncated-gzip", "utf16-without-bom", "bad-utf16", "empty-gzip"],
)
def test_encoding_problems_are_one_line(tmp_path, capsys, content, fragment):
    path = tmp_path / "bad.csv"
    path.write_bytes(content)
    status, captured, out = _classify_file(tmp_path, capsys, path)
    _one_line_refusal(status, captured, fragment)
    assert not out.exists()
