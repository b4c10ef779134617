"""The ``hdbayes`` command.

Subcommands::

    hdbayes demo [--out DIR] [--seed N]
    hdbayes reproduce NAME [--full] [--out DIR] [--seed N] [--n-jobs N]
    hdbayes classify --train FILE --test FILE --target COLUMN --out FILE [--model MODEL] [--seed N] [options]
    hdbayes regress --train FILE --test FILE --target COLUMN --out FILE [--plot PNG] [options]

* ``demo`` runs the naive Bayes simulation at a small size: calibration table, expected
  vs actual error with and without correction, figures (default folder ``hdbayes-demo``).
* ``reproduce NAME`` runs an experiment of the papers (``--full`` for the paper's size)
  and writes ``summary.md``, CSV tables and PNG figures into a folder (default
  ``hdbayes-output/NAME``). ``--n-jobs`` is capped at the number of usable cores (``-1``:
  all of them). The run time is printed, never written into ``summary.md``: two runs with
  the same seed write byte-identical ``summary.md`` and result tables (wall-clock
  measurements go to separate timing CSVs).
* ``classify`` fits a model on a training CSV and writes the predicted class and the
  class probabilities of every row of a test CSV.
* ``regress`` fits group spike-and-slab linear regression (EP) and writes the predictive
  mean and standard deviation of every test row.

Input files are comma-separated CSV with a header row of distinct column names: UTF-8 (an
optional byte-order mark) or UTF-16 with a byte-order mark, each possibly gzip-compressed
(recognised by its first bytes, whatever the file name); a one-column header holding ';'
or a tab is refused as semicolon- or tab-separated. Every column but the target is a
feature and must be numeric and finite. Class labels are text (surrounding spaces
ignored): distinct texts are distinct classes (``1``, ``01``, ``+1`` and ``1.0`` are
four); they become integers, which sort as numbers, only when every label is an integer
spelled the way it is written back (``-3``, ``12``), so the output columns
``P(target=label)`` spell the labels as the training file does. ``classify --binarize T``
(a number, or ``median`` for each feature's training median) maps feature values > T to 1;
``bernoulli-nb`` then selects by mutual information on the binarised features.
``categorical-nb --n-levels L`` reserves the levels 0..L-1 (for values unseen in
training); ``categorical-naive-bayes`` (``BiasCorrectedCategoricalNB``) selects by
Pearson's X² and corrects, its features integer level codes (``--n-levels`` is both
estimators' ``n_levels``). ``--model linear`` is ``BayesianLinearClassifier`` on every feature column (no selection:
``--n-features``, ``--threshold`` and ``--class-pseudo-count`` do not apply), the recommended model for
expression data. ``--n-features K`` is the estimators' ``n_features_to_select``;
``--class-pseudo-count C`` (every model that selects) is the Dirichlet pseudo-count of each class
(``class_pseudo_count``); ``--alpha A`` (bernoulli-nb, categorical-nb, multinomial-nb) is
the feature smoothing pseudo-count (scikit-learn's ``alpha``). An option that the chosen
model, or the chosen variant of it, does not use is refused with one line naming both
(``--alpha2-x applies only with --variant per-class``); the table
``_MODEL_OPTIONS`` is that one rule. The command is a translator: a number outside the range that the estimator's
own ``_parameter_constraints`` allow is refused before any file is read, in the estimator's range
(``--alpha must be a finite number >= 0, got -1``), and a value of the data that the model cannot take (not 0/1,
negative, not a level code) is refused by the estimator, its message naming the file, line and column of the
cell (the error's ``location``). ``--seed`` (demo, reproduce, classify) is an integer
from 0 to 2**32 - 1. The MCMC models (gaussian, mixture) print the posterior mean, R-hat
and effective sample size of each variable the estimator monitors (its
``mcmc_summary()``).

Output files: ``classify`` writes the columns ``prediction`` (the most probable class) and
``P(target=label)`` for every class, ``regress`` the columns ``prediction`` (the
predictive mean) and ``std``; one row per test row. An output (``--out``, ``--plot``) that
is the same file as an input or the other output, under any name (a link,
``./x/../train.csv``), is refused before any work. Missing output folders are created.
``--out -`` writes the CSV to standard output (the report lines then go to standard
error). A regular file is replaced atomically (a failed run leaves the old one intact) and
keeps its permissions; a new one gets the umask's; a symbolic link's target is replaced,
the link kept; a device or FIFO is written through. ``demo`` and ``reproduce`` write into
a new folder, an empty one, or one they wrote before (marked by a ``.hdbayes-output``
manifest), whose files are replaced as one set (see :mod:`hdbayes._io`); a folder holding
anything hdbayes did not write (a user's file, a subfolder, a symbolic link) is refused
before any work.

Exit status: 0 success; 2 bad input (missing, empty or malformed file, non-numeric or
non-finite value, a single class or a single training row, an option out of range such as
``--n-features`` larger than the number of feature columns, a result that would not be
finite), with one line on standard error and no output written; 3 ``reproduce`` finished
but an acceptance check failed (``[FAIL]``); 4 out of memory (one line, ``hdbayes CMD: out
of memory while <phase>: ...``, nothing written; an impossible size option such as
``--chains 1000000000`` is refused as bad input instead, naming the option); 1 a bug in
hdbayes (a traceback and a request to report it); 130 interrupted (Ctrl-C, at start-up
too: the console script imports the command inside the same handler,
:mod:`hdbayes._entry`). A closed output pipe ends the command quietly (status 141, as a
process killed by SIGPIPE). Warnings are printed as one line each, ``hdbayes: warning:
...``, after a successful run.
"""

from __future__ import annotations

import argparse
import csv
import errno
import io
import math
import os
import re
import sys
import time
import traceback
import warnings
from pathlib import Path
from types import SimpleNamespace
from typing import NamedTuple

import hdbayes
from hdbayes._io import STDOUT, check_distinct_files, check_output_file, check_output_folder, write_file
from hdbayes.exceptions import InputValueError, is_input_error
from hdbayes.experiments.registry import EXPERIMENTS

__all__ = ["main"]

# models corrected for selection bias (selection inside the estimator) and the generative models of
# hdbayes.discrete (selection, if asked for, by mutual information in a pipeline)
CORRECTED_MODELS = ("naive-bayes", "categorical-naive-bayes", "gaussian", "mixture")
DISCRETE_MODELS = ("bernoulli-nb", "categorical-nb", "multinomial-nb", "dcm")
# models on every feature (no selection)
ALL_FEATURE_MODELS = ("linear",)
MODELS = CORRECTED_MODELS + DISCRETE_MODELS + ALL_FEATURE_MODELS
_SELECTING_MODELS = frozenset(CORRECTED_MODELS + DISCRETE_MODELS)
_NAIVE_BAYES_FAMILY = {"bernoulli-nb", "categorical-nb", "multinomial-nb"}
_BINARY_MODELS = {"naive-bayes", "mixture", "bernoulli-nb"}
_CATEGORY_MODELS = {"categorical-nb", "categorical-naive-bayes"}


class _Rule(NamedTuple):
    """Where a ``classify`` option applies: the models that use it, the estimator parameter it sets (None: the
    CLI handles it), and ``needs``, None or ``(option, value)``: the variant of the model that uses it."""

    models: frozenset
    parameter: str | None
    needs: tuple[str, str] | None = None


# The one rule for the options that only some models or variants use: an option given to a model outside
# ``models``, or without the variant it ``needs``, is refused with one line naming both (_check_model_options).
_MODEL_OPTIONS = {
    "binarize": _Rule(frozenset(_BINARY_MODELS), None),
    "theta_rule": _Rule(frozenset({"naive-bayes", "mixture"}), "theta_rule"),
    "alpha_rule": _Rule(frozenset({"naive-bayes", "categorical-naive-bayes"}), "alpha_rule"),
    "variant": _Rule(frozenset({"gaussian"}), "variant"),
    "alpha2_x": _Rule(frozenset({"gaussian"}), "alpha2_x", ("variant", "per-class")),
    "class_scale": _Rule(frozenset({"gaussian"}), "class_scale", ("variant", "per-class")),
    "n_iter": _Rule(frozenset({"gaussian", "mixture"}), "n_iter"),
    "burn_in": _Rule(frozenset({"gaussian", "mixture"}), "burn_in"),
    "thin": _Rule(frozenset({"gaussian", "mixture"}), "thin"),
    "chains": _Rule(frozenset({"gaussian", "mixture"}), "n_chains"),
    "method": _Rule(frozenset(_NAIVE_BAYES_FAMILY), "method"),
    "alpha": _Rule(frozenset(_NAIVE_BAYES_FAMILY), "alpha"),
    "class_pseudo_count": _Rule(_SELECTING_MODELS, "class_pseudo_count"),
    "n_features": _Rule(_SELECTING_MODELS, None),
    "threshold": _Rule(_SELECTING_MODELS, None),
    "n_levels": _Rule(frozenset(_CATEGORY_MODELS), "n_levels"),
    "no_correct": _Rule(frozenset(CORRECTED_MODELS), None),
}
# options every model of the command uses (--seed: the random tie-breaks of selection and the MCMC chains; a model
# that draws nothing has nothing to seed); each other option of ``classify`` is in _MODEL_OPTIONS
_SHARED_OPTIONS = {
    "classify": frozenset({"train", "test", "target", "model", "seed", "out"}),
    "regress": frozenset(
        "train test target group_size groups prior_inclusion slab_variance noise_variance evidence plot out".split()
    ),
}
_ESTIMATORS = {
    "naive-bayes": "BiasCorrectedNaiveBayes",
    "categorical-naive-bayes": "BiasCorrectedCategoricalNB",
    "gaussian": "BiasCorrectedGaussianClassifier",
    "linear": "BayesianLinearClassifier",
    "mixture": "BiasCorrectedMixture",
    "bernoulli-nb": "BayesianBernoulliNB",
    "categorical-nb": "BayesianCategoricalNB",
    "multinomial-nb": "BayesianMultinomialNB",
    "dcm": "DCMClassifier",
}
# estimator parameters as the command line spells them, for messages coming from the library
_OPTION_NAMES = {
    "n_features_to_select": "--n-features",
    "class_pseudo_count": "--class-pseudo-count",
    "n_iter": "--n-iter",
    "burn_in": "--burn-in",
    "n_chains": "--chains",
    "n_levels": "--n-levels",
    "theta_rule": "--theta-rule",
    "alpha_rule": "--alpha-rule",
    "prior_inclusion": "--prior-inclusion",
    "slab_variance": "--slab-variance",
    "noise_variance": "--noise-variance",
    "random_state": "--seed",
    "alpha2_x": "--alpha2-x",
    "class_scale": "--class-scale",
}
# the selection options the command hands to the estimator or to the discrete models' selector itself (their
# _MODEL_OPTIONS rule has no parameter), with the parameter whose constraints check them
_SELECTION_PARAMETERS = {"n_features": "n_features_to_select", "threshold": "threshold", "binarize": "binarize"}
_MISSING = {"", "na", "n/a", "nan", "null", "none"}
_BUG_MESSAGE = "this is a bug in hdbayes, please report it (with the command and the traceback above)"
EXIT_OUT_OF_MEMORY = 4
"""Exit status of a command that ran out of memory (one line on standard error, nothing written)."""
_SEED_MAX = 2**32 - 1  # the seeds every estimator and experiment accepts (numpy's RandomState)


class InputError(InputValueError):
    """A problem with the user's input, reported as one line (exit status 2)."""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (exit status 2), like the command's other input errors."""

    def error(self, message):
        message = re.sub(r"^argument (--[\w-]+): must\b", r"\1 must", message)
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())} (see {self.prog} --help)\n")


def _number_or(word):
    """An argument type: a number or ``word`` (--binarize median, --alpha2-x learn)."""

    def parse(text):
        if text.strip().lower() == word:
            return word
        try:
            return float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a number or '{word}', got {text!r}") from None

    return parse


def _seed(text):
    """The argument type of every command's --seed: an integer from 0 to 2**32 - 1 (one check, one message)."""
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or not 0 <= value <= _SEED_MAX:
        # argparse prefixes "argument --seed: "; _Parser.error makes it "--seed must be ..."
        raise argparse.ArgumentTypeError(f"must be an integer from 0 to {_SEED_MAX}, got {text}")
    return value


def _usable_cores():
    """The cores this process may use: the experiments' one count (affinity mask and cgroup quota)."""
    from hdbayes.experiments._runtime import usable_cores

    return usable_cores()


def _add_data_arguments(parser, target_help):
    """--train, --test and --target, shared by the commands that fit on CSV files."""
    parser.add_argument("--train", required=True, help="training CSV with a header row")
    parser.add_argument("--test", required=True, help="test CSV with the same feature columns")
    parser.add_argument("--target", required=True, help=target_help)


def _experiments_epilog():
    """The experiments of ``hdbayes reproduce`` with their one-line descriptions, then the exit status."""
    width = max(len(name) for name in EXPERIMENTS)
    lines = ["experiments:"]
    lines += [f"  {name:<{width}}  {EXPERIMENTS[name].description}" for name in sorted(EXPERIMENTS)]
    lines += ["", "Exit status: 0 all acceptance checks passed, 3 a check failed ([FAIL]), 2 bad input, 4 out of "
              "memory."]  # fmt: skip
    return "\n".join(lines)


def _build_parser():
    parser = _Parser(
        prog="hdbayes",
        description="Bayesian classification with very many features and calibrated predictions "
        "after feature selection.",
        epilog="Exit status: 0 success, 2 bad input (one line on standard error, nothing written), "
        "3 reproduce: an acceptance check failed, 4 out of memory (one line, nothing written), 1 a bug in "
        "hdbayes, 130 interrupted.",
    )
    parser.add_argument("--version", action="version", version=f"hdbayes {hdbayes.__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = sub.add_parser(
        "demo",
        help="run the naive Bayes simulation at a small size and print the calibration",
        description="Simulate binary data from the naive Bayes model (thesis §2.3.5, p = 2000 features), "
        "select the top k by |correlation|, fit with and without correction for selection bias, print "
        "calibration tables and expected vs actual error rates, and save the figures.",
    )
    demo.add_argument(
        "--out",
        default="hdbayes-demo",
        help="output folder: new, empty, or written by hdbayes before (default: %(default)s)",
    )
    demo.add_argument("--seed", type=_seed, default=0, help="seed of the simulated data (default: %(default)s)")

    reproduce = sub.add_parser(
        "reproduce",
        help="reproduce an experiment of the papers",
        description="Run an experiment of the papers and write summary.md, CSV tables and PNG figures.",
        epilog=_experiments_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    reproduce.add_argument("name", choices=sorted(EXPERIMENTS), metavar="NAME", help="experiment (listed below)")
    reproduce.add_argument("--full", action="store_true", help="the paper's size (default: a small fast size)")
    reproduce.add_argument(
        "--out", help="output folder: new, empty, or written by hdbayes before (default: hdbayes-output/NAME)"
    )
    reproduce.add_argument("--seed", type=_seed, default=0, help="random seed (default: %(default)s)")
    reproduce.add_argument(
        "--n-jobs",
        type=int,
        help="parallel fits or folds with joblib; -1: all usable cores; capped at the usable cores",
    )

    classify = sub.add_parser(
        "classify",
        help="fit on a training CSV and predict a test CSV",
        description="Fit a model on the training CSV (all columns but the target are candidate features; "
        "feature selection happens inside the fit) and write predicted classes and class probabilities "
        "for the rows of the test CSV.",
    )
    _add_data_arguments(classify, "name of the class column in the training CSV")
    classify.add_argument(
        "--model",
        choices=MODELS,
        default="naive-bayes",
        help="model (default: %(default)s); linear: BayesianLinearClassifier on every feature, for expression data",
    )
    group = classify.add_mutually_exclusive_group()
    group.add_argument(
        "--n-features",
        type=int,
        metavar="K",
        help="number of features to keep (k; discrete models: by mutual information)",
    )
    group.add_argument(
        "--threshold",
        type=float,
        metavar="T",
        help="keep features whose statistic (|correlation|, F or mutual information) exceeds this",
    )
    classify.add_argument(
        "--no-correct", action="store_true", help="naive-bayes, gaussian, mixture: do not correct for selection bias"
    )
    classify.add_argument(
        "--method",
        choices=("mle", "map", "posterior_mean", "bayes"),
        help="bernoulli-nb, categorical-nb, multinomial-nb: parameter estimate or full Bayes (default: bayes)",
    )
    classify.add_argument(
        "--alpha",
        type=float,
        metavar="A",
        help="bernoulli-nb, categorical-nb, multinomial-nb: feature smoothing pseudo-count (scikit-learn's alpha; "
        "default: 1)",
    )
    classify.add_argument(
        "--class-pseudo-count",
        type=float,
        metavar="C",
        help="pseudo-count of every class in the Dirichlet prior of the class probabilities (default: 1)",
    )
    classify.add_argument(
        "--binarize",
        type=_number_or("median"),
        metavar="T",
        help="naive-bayes, mixture, bernoulli-nb: map feature values > T to 1, others to 0; T is a number or "
        "'median' (each feature's training median); bernoulli-nb selects after binarising",
    )
    classify.add_argument(
        "--n-levels",
        type=int,
        metavar="L",
        help="categorical-nb, categorical-naive-bayes: every feature takes the levels 0..L-1 (default: those "
        "seen in training)",
    )
    classify.add_argument(
        "--theta-rule",
        choices=("simpson", "exact"),
        help="naive-bayes, mixture: the θ integrals (of the adjustment factor) by exact Gauss–Legendre (default) or "
        "the thesis's 21-point Simpson rule",
    )
    classify.add_argument(
        "--alpha-rule",
        choices=("adaptive", "midpoint"),
        help="naive-bayes, categorical-naive-bayes: α integration by the adaptive rule in log α (default, converged "
        "to 1e-4) or the thesis's 30-point midpoint rule in prior quantiles (with --theta-rule simpson: the "
        "thesis's setting)",
    )
    classify.add_argument(
        "--variant",
        choices=("shared", "per-feature", "per-class"),
        help="gaussian: one spread of the class means for all features (Li 2009, default), one per feature with "
        "its own variance (Li 2012), or also one variance per class and feature, scattered around the feature's "
        "level",
    )
    classify.add_argument(
        "--alpha2-x",
        type=_number_or("learn"),
        metavar="A",
        help="gaussian, --variant per-class: degrees of freedom of the class variances around the "
        "feature's level (larger: closer to pooled), or 'learn' (the default) to sample it on a grid from 1 to "
        "infinity",
    )
    classify.add_argument(
        "--class-scale",
        choices=("equal", "plug-in"),
        help="gaussian, --variant per-class: centre every class's variances on the same level (default) "
        "or on a level per class estimated from all features' within-class variances (plug-in)",
    )
    classify.add_argument("--n-iter", type=int, metavar="N", help="gaussian, mixture: MCMC iterations per chain")
    classify.add_argument("--burn-in", type=int, metavar="N", help="gaussian, mixture: iterations discarded")
    classify.add_argument("--thin", type=int, metavar="N", help="gaussian, mixture: keep every THIN-th iteration")
    classify.add_argument("--chains", type=int, metavar="N", help="gaussian, mixture: number of chains (default: 1)")
    classify.add_argument("--seed", type=_seed, default=0, help="random seed (default: %(default)s)")
    classify.add_argument("--out", required=True, help="output CSV of predictions ('-': standard output)")

    regress = sub.add_parser(
        "regress",
        help="group spike-and-slab linear regression (EP): fit a training CSV, predict a test CSV",
        description="Fit GroupSpikeSlabRegression (Hernández-Lobato et al. 2013) on the training CSV (all "
        "columns but the target are features), write the predictive mean and standard deviation of every "
        "test row, and print the posterior inclusion probabilities of the groups.",
    )
    _add_data_arguments(regress, "name of the numeric response column")
    grouping = regress.add_mutually_exclusive_group()
    grouping.add_argument("--group-size", type=int, help="consecutive groups of this many feature columns")
    grouping.add_argument(
        "--groups", help="CSV with columns 'feature' and 'group' (an integer) giving every feature column's group"
    )
    regress.add_argument("--prior-inclusion", type=float, default=0.5, help="p0 (default: %(default)s)")
    regress.add_argument("--slab-variance", type=float, default=1.0, help="v_s (default: %(default)s)")
    regress.add_argument("--noise-variance", type=float, default=1.0, help="σ0² (default: %(default)s)")
    regress.add_argument("--evidence", action="store_true", help="choose p0, v_s and σ0² by maximising EP's evidence")
    regress.add_argument("--plot", help="also save the group inclusion probabilities as a PNG figure")
    regress.add_argument("--out", required=True, help="output CSV of predictions ('-': standard output)")
    return parser


# ---------------------------------------------------------------------------------------------------------
# reading CSV files


class _Table:
    """A CSV file as read: column names, cells as strings, the file line of every row."""

    def __init__(self, path, what, columns, cells, lines):
        self.path, self.what, self.columns, self.cells, self.lines = path, what, columns, cells, lines
        self.index = {name: j for j, name in enumerate(columns)}

    def __len__(self):
        return len(self.cells)

    def where(self, row, column):
        """How a message names a cell: file, line and column."""
        return f"{self.what} file {self.path}, line {self.lines[row]}, column {column!r}"

    def numbers(self, names, *, purpose="a number"):
        """The columns ``names`` as a float64 matrix; refuses a non-numeric, missing or non-finite cell."""
        import numpy as np

        positions = [self.index[name] for name in names]
        strings = np.array([[row[j] for j in positions] for row in self.cells], dtype=object).reshape(
            len(self.cells), len(positions)
        )
        try:
            values = strings.astype(np.float64)
        except (ValueError, OverflowError):
            values = None
        if values is None:
            for i, row in enumerate(strings):
                for j, cell in enumerate(row):
                    try:
                        float(cell)
                    except (ValueError, OverflowError):
                        if cell.strip().lower() in _MISSING:
                            raise InputError(f"{self.where(i, names[j])}: missing value") from None
                        raise InputError(f"{self.where(i, names[j])}: {cell.strip()!r} is not {purpose}") from None
        bad = ~np.isfinite(values)
        if bad.any():
            i, j = np.argwhere(bad)[0]
            cell = strings[i, j].strip()
            what = "missing value" if cell.lower() in _MISSING else f"{cell!r} is not a finite number"
            raise InputError(f"{self.where(i, names[j])}: {what}")
        return values

    def strings(self, name):
        """A column of class labels as text (surrounding spaces removed); refuses a missing cell."""
        j = self.index[name]
        cells = [row[j].strip() for row in self.cells]
        for i, cell in enumerate(cells):
            if cell.lower() in _MISSING:
                raise InputError(f"{self.where(i, name)}: missing value in the target column")
        return cells

    def labels(self, name):
        """A column of class labels: distinct texts are distinct classes (see :func:`_typed_labels`)."""
        return _typed_labels(self.strings(name))


def _typed_labels(cells):
    """Class labels from their texts: integers only when that keeps every text its own class, else the texts.

    Integers when every text is an integer written the way Python writes it back (``12``, ``-3``; not ``01``,
    ``+1``, ``-0``, ``1.0``) and fits in 64 bits; otherwise the texts (``0.5`` stays text: scikit-learn takes
    non-integer numbers for a regression target). So distinct texts stay distinct classes, integers sort as
    numbers, and the output columns ``P(target=label)`` spell the labels as the file does.
    """
    import numpy as np

    if all(re.fullmatch(r"-?\d+", cell) and str(int(cell)) == cell for cell in cells):
        values = [int(cell) for cell in cells]
        if all(-(2**63) <= v < 2**63 for v in values):
            return np.array(values, dtype=np.int64)
    return np.array(cells, dtype=object).astype(str)


def _decode(raw, path, what):
    """The text of a file's bytes: gzip-compressed (magic bytes 1f 8b, whatever the name) or not, UTF-8 with an
    optional byte-order mark or UTF-16 with one."""
    if raw[:2] == b"\x1f\x8b":
        import gzip
        import zlib

        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as error:
            raise InputError(f"{what} file {path} is not a valid gzip file ({error})") from None
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        try:
            return raw.decode("utf-16")
        except UnicodeDecodeError as error:
            reason = f"{error.reason} at offset {error.start}"
            raise InputError(f"{what} file {path} is not UTF-16 text ({reason})") from None
    if b"\x00" in raw:
        raise InputError(
            f"{what} file {path} has NUL bytes: UTF-16 without a byte-order mark, or not a text file; save it as UTF-8"
        )
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(
            f"{what} file {path} is not UTF-8 text (byte {raw[error.start]:#04x} at offset {error.start})"
        ) from None


def _read_csv(path, what):
    """Read a CSV file with a header row into a :class:`_Table`, refusing what pandas would guess around."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"{what} file not found: {path}")
    if path.is_dir():
        raise InputError(f"{what} file {path} is a folder")
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise InputError(f"cannot read the {what} file {path}: {error.strerror or error}") from None
    text = _decode(raw, path, what)
    if not text.strip():
        raise InputError(f"{what} file is empty: {path}")
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    cells, lines = [], []
    try:
        header = None
        for row in reader:
            if not row or (len(row) == 1 and not row[0].strip()):
                continue  # blank line
            if header is None:
                header = [name.strip() for name in row]
                for separator, name in ((";", "semicolon"), ("\t", "tab")):
                    if len(header) == 1 and separator in header[0]:
                        raise InputError(
                            f"{what} file {path} looks {name}-separated; hdbayes reads comma-separated files"
                        )
                continue
            if len(row) != len(header):
                raise InputError(
                    f"{what} file {path} is not a valid CSV: line {reader.line_num} has {len(row)} "
                    f"field{'s' if len(row) != 1 else ''}, expected {len(header)}"
                )
            cells.append(row)
            lines.append(reader.line_num)
    except csv.Error as error:
        raise InputError(f"{what} file {path} is not a valid CSV: line {reader.line_num}: {error}") from None
    for j, name in enumerate(header):
        if not name:
            raise InputError(f"{what} file {path}: column {j + 1} of the header has no name")
    seen = set()
    for name in header:
        if name in seen:
            raise InputError(f"{what} file {path}: duplicate column name {name!r}")
        seen.add(name)
    if not cells:
        raise InputError(f"{what} file {path} has a header but no rows")
    return _Table(path, what, header, cells, lines)


def _read_train_test(args):
    """Read and check the training and test files: columns, numbers, at least two training rows."""
    train = _read_csv(args.train, "training")
    test = _read_csv(args.test, "test")
    if args.target not in train.index:
        raise InputError(f"target column {args.target!r} is not in the training file {args.train}")
    columns = [c for c in train.columns if c != args.target]
    if not columns:
        raise InputError(f"the training file {args.train} has no feature columns besides {args.target!r}")
    missing = [c for c in columns if c not in test.index]
    if missing:
        raise InputError(f"the test file {args.test} lacks the feature column {missing[0]!r}")
    if len(train) < 2:
        raise InputError(
            f"the training file {args.train} has a single row; at least two are needed to fit {args.target!r}"
        )
    return SimpleNamespace(
        train=train, test=test, columns=columns, X_train=train.numbers(columns), X_test=test.numbers(columns)
    )


def _frame(values, columns):
    import pandas as pd

    return pd.DataFrame(values, columns=columns, copy=False)


def _largest_input(data, extra=()):
    """A phrase naming the input value of largest magnitude (the likely cause of an overflow)."""
    import numpy as np

    best = None
    for table, values, names in ((data.train, data.X_train, data.columns), (data.test, data.X_test, data.columns),
                                 *extra):  # fmt: skip
        if values.size == 0:
            continue
        flat = int(np.argmax(np.abs(values)))
        i, j = np.unravel_index(flat, values.shape)
        if best is None or abs(values[i, j]) > best[0]:
            best = (abs(values[i, j]), table.where(i, names[j]), values[i, j])
    if best is None:
        return None
    return f"the largest input value is {best[2]:g} ({best[1]}); rescale the data"


def _check_finite(name, values, data, extra=()):
    import numpy as np

    from hdbayes._validation import check_finite_output

    if not np.isfinite(np.asarray(values, dtype=np.float64)).all():
        check_finite_output(name, values, cause=_largest_input(data, extra))


def _write_output(path, write, *, binary=False):
    """Write an output file (see :func:`hdbayes._io.write_file`), naming the path in an error."""
    try:
        write_file(path, write, binary=binary)
    except BrokenPipeError:
        raise
    except OSError as error:
        raise InputError(f"cannot write {path}: {error.strerror or error}") from None


def _report_stream(out):
    """Where the report lines go: standard error when the predictions go to standard output."""
    if out == STDOUT:
        return sys.stderr
    try:
        if os.path.samefile(out, f"/proc/self/fd/{sys.stdout.fileno()}"):
            return sys.stderr
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        pass
    return sys.stdout


# ---------------------------------------------------------------------------------------------------------
# classify


def _constraint_text(constraints, integral):
    """What a scikit-learn ``_parameter_constraints`` entry allows of a number, in words: ``at least 1``, ``a
    finite number > 0``, ``in (0, 1)``, with the words it also takes (``or 'median'``)."""
    from sklearn.utils._param_validation import Interval, StrOptions

    texts = []
    for constraint in constraints:
        if isinstance(constraint, Interval):
            left = constraint.left
            if integral and constraint.right is None and left is not None and constraint.closed in ("left", "both"):
                texts.append(f"at least {left:g}")
            else:
                texts.append(_range_text(constraint))
    words = [f"'{word}'" for c in constraints if isinstance(c, StrOptions) for word in sorted(c.options)]
    return " or ".join(texts + words)


def _check_option_ranges(args, parameters, owner):
    """Refuse a number outside the range that the estimator's own ``_parameter_constraints`` allow, before
    anything is read: the command and the estimators cannot disagree (one range, one message).

    ``parameters`` maps the command's options to the parameters they set; ``owner(parameter)`` is the class
    whose constraints hold for it and the parameter's name there (the estimator, or for a discrete model's
    selection the :class:`~hdbayes.MutualInformationSelector`), or None when no estimator takes it.
    """
    from numbers import Integral

    from sklearn.utils._param_validation import Interval

    for option, parameter in parameters.items():
        value = getattr(args, option, None)
        if not _given(value) or isinstance(value, (str, bool)):
            continue
        found = owner(parameter)
        if found is None:
            continue
        cls, name = found
        constraints = cls._parameter_constraints[name]
        intervals = [c for c in constraints if isinstance(c, Interval)]
        if intervals and not (math.isfinite(value) and any(value in c for c in intervals)):
            integral = all(c.type is Integral for c in intervals)
            raise InputError(f"{_flag(option)} must be {_constraint_text(constraints, integral)}, got {value:g}")


def _classify_parameters():
    """The ``classify`` options that set an estimator's (or the selector's) parameter, and its name."""
    return {option: rule.parameter or _SELECTION_PARAMETERS[option] for option, rule in _MODEL_OPTIONS.items()
            if rule.parameter or option in _SELECTION_PARAMETERS}  # fmt: skip


def _classify_owner(model):
    """Where the constraints of a ``classify`` parameter of ``model`` are: (class, parameter) or None."""

    def owner(parameter):
        if model in DISCRETE_MODELS and parameter in ("n_features_to_select", "threshold"):
            return hdbayes.MutualInformationSelector, parameter
        if model == "bernoulli-nb" and parameter == "binarize":
            from hdbayes.binarizer import FeatureBinarizer

            return FeatureBinarizer, "threshold"
        estimator = getattr(hdbayes, _ESTIMATORS[model])
        if parameter in estimator._parameter_constraints:
            return estimator, parameter
        if model == "gaussian":  # --alpha2-x and --class-scale: fields of the per-class variant
            from hdbayes.selection_bias import PerClassVariance

            if parameter in PerClassVariance._parameter_constraints:
                return PerClassVariance, parameter
        return None

    return owner


def _check_classes(args, data):
    """At least two classes in the target column (named with its file), before any fitting."""
    import numpy as np

    y = data.train.labels(args.target)
    classes = np.unique(y)
    if classes.shape[0] < 2:
        raise InputError(
            f"the target column {args.target!r} of {args.train} has a single class ({classes[0]}); "
            "a classifier needs at least two"
        )
    data.y_train = y


def _raise_located(error, table, columns):
    """Raise an estimator's input error about one value of the data with the file, line and column of its CSV
    cell (``error.location``: the row of X and the feature's name, or its index in ``columns``, None when the
    estimator saw other columns than the file's); re-raise it unchanged when it names no cell."""
    location = getattr(error, "location", None)
    if location is not None:
        row, column = location
        if not isinstance(column, str) and columns is not None and 0 <= column < len(columns):
            column = columns[column]
        if isinstance(column, str) and column in table.index and 0 <= row < len(table):
            raise InputError(f"{table.where(row, column)}: {_cli_terms(error)}") from error
    raise error


def _flag(option):
    return "--" + option.replace("_", "-")


def _given(value):
    """Whether an option was given (argparse leaves the optional ones None, a flag False)."""
    return value is not None and value is not False


def _check_model_options(args):
    """Refuse every option the chosen model, or the chosen variant of it, does not use (:data:`_MODEL_OPTIONS`)."""
    for option, rule in _MODEL_OPTIONS.items():
        if not _given(getattr(args, option)):
            continue
        if args.model not in rule.models:
            raise InputError(f"{_flag(option)} applies to --model {' or '.join(sorted(rule.models))} only")
        if rule.needs is not None:
            needed, value = rule.needs
            if getattr(args, needed) != value:
                raise InputError(f"{_flag(option)} applies only with {_flag(needed)} {value}")


def _build_model(args):
    """The estimator named by --model, refusing options that belong to other models.

    The selection-bias models select inside ``fit``; a discrete model is preceded by a
    :class:`~hdbayes.MutualInformationSelector` when --n-features or --threshold is given,
    and ``bernoulli-nb --binarize`` by a :class:`~hdbayes.binarizer.FeatureBinarizer`, so that
    selection ranks the binarised features.
    """
    _check_model_options(args)
    params = {}
    for option, rule in _MODEL_OPTIONS.items():
        value = getattr(args, option)
        if _given(value) and rule.parameter is not None:
            params[rule.parameter] = value
    estimator = getattr(hdbayes, _ESTIMATORS[args.model])
    if args.model in DISCRETE_MODELS:
        from sklearn.pipeline import make_pipeline

        steps = []
        if args.model == "bernoulli-nb" and args.binarize is not None:
            from hdbayes.binarizer import FeatureBinarizer

            steps.append(FeatureBinarizer(threshold=args.binarize))
        if args.n_features is not None or args.threshold is not None:
            selector = hdbayes.MutualInformationSelector(
                n_features_to_select=args.n_features, threshold=args.threshold, random_state=args.seed
            )
            if not steps:  # it gets the CSV's columns: hand the kept ones on by name, so messages can name them
                selector.set_output(transform="pandas")
            steps.append(selector)
        if args.model == "bernoulli-nb":
            params["binarize"] = None  # 0/1 features, or those of the FeatureBinarizer step: others are refused
        model = estimator(**params)
        return make_pipeline(*steps, model) if steps else model
    if args.model in ALL_FEATURE_MODELS:
        return estimator(**params, random_state=args.seed)
    if args.model in ("gaussian", "mixture"):
        params["n_jobs"] = min(params.get("n_chains", 1), _usable_cores())
    if args.model in _BINARY_MODELS:
        params["binarize"] = args.binarize  # None: the features must be 0/1 already (the estimator refuses others)
    if params.get("variant") == "per-class":  # --alpha2-x and --class-scale are fields of the per-class variance
        from hdbayes.selection_bias import PerClassVariance

        params["variant"] = PerClassVariance(**{name: params.pop(name) for name in ("alpha2_x", "class_scale")
                                                 if name in params})  # fmt: skip
    return estimator(
        n_features_to_select=args.n_features, threshold=args.threshold, correct=not args.no_correct, **params,
        random_state=args.seed,
    )  # fmt: skip


def _selector(model):
    """The fitted step that selected features (the estimator itself or a pipeline's selector), or None."""
    for step in getattr(model, "named_steps", {}).values() if hasattr(model, "steps") else [model]:
        if hasattr(step, "selection_"):
            return step
    return None


def _mcmc_lines(model):
    """One line of diagnostics per monitored variable of the fitted model (``model.mcmc_summary()``, which does
    not import ArviZ: a few seconds of CPU saved)."""
    summary = model.mcmc_summary()
    n_chains, draws = model.trace_.n_chains, model.trace_.n_draws
    lines = []
    for name, stats in summary.items():
        if draws < 4:
            lines.append(
                f"{name}: posterior mean {stats['mean']:.3f}; R-hat and effective sample size n/a (only {draws} "
                "draws per chain: raise --n-iter or lower --thin)"
            )
            continue
        rhat, ess = stats["r_hat"], stats["ess_bulk"]
        if n_chains > 1:
            shown = f"R-hat {rhat:.3f}" if math.isfinite(rhat) else "R-hat n/a"
        else:
            shown = "R-hat n/a (1 chain)"
        ess_shown = f"{ess:.0f}" if math.isfinite(ess) else "n/a"
        if n_chains > 1 and math.isfinite(rhat) and rhat > 1.1:
            warnings.warn(
                f"R-hat of {name} > 1.1; the chains have not mixed, consider more iterations (--n-iter)", stacklevel=2
            )
        lines.append(f"{name}: posterior mean {stats['mean']:.3f}, {shown}, effective sample size {ess_shown}")
    return lines


def _classify(args):
    import numpy as np
    import pandas as pd

    from hdbayes.metrics import average_minus_log_probability, error_rate, expected_error_rate

    check_output_file(args.out)
    check_distinct_files({"--train": args.train, "--test": args.test}, {"--out": args.out})
    model = _build_model(args)  # refuses options of other models before reading anything
    _check_option_ranges(args, _classify_parameters(), _classify_owner(args.model))
    args.phase = "reading the input files"
    data = _read_train_test(args)
    _check_classes(args, data)
    X_train, X_test = _frame(data.X_train, data.columns), _frame(data.X_test, data.columns)
    # the estimators check the values their model needs (0/1, counts, level codes); their errors name the cell
    columns = None if hasattr(model, "steps") else data.columns
    args.phase = "fitting the model"
    with warnings.catch_warnings(record=True) as fit_warnings:
        warnings.simplefilter("always")
        try:
            model.fit(X_train, data.y_train)  # an empty selection is the estimator's input error
        except InputValueError as error:
            _raise_located(error, data.train, columns)
    for caught in fit_warnings:  # handed on to main's one-line printing
        warnings.warn_explicit(caught.message, caught.category, caught.filename, caught.lineno)
    # the estimators may already warn about kept features with a statistic of 0: then say it once
    zero_warned = any(re.search(r"\bof the \d+ (kept|selected) features\b", str(w.message)) for w in fit_warnings)
    args.phase = "predicting"
    try:
        proba = model.predict_proba(X_test)
    except InputValueError as error:
        _raise_located(error, data.test, columns)
    _check_finite("a predicted probability", proba, data)
    classes = model.classes_
    output = pd.DataFrame({"prediction": model.predict(X_test)})
    for j, label in enumerate(classes):
        output[f"P({args.target}={label})"] = proba[:, j]
    if hasattr(model, "atypicality"):  # the probability that a test row is unrelated to the training rows
        output["atypicality"] = model.atypicality(X_test)

    lines = []
    holder = _selector(model)
    if holder is not None:
        kept = np.asarray(holder.selected_features_)
        selected = ", ".join(str(data.columns[j]) for j in kept[:10])
        more = "" if kept.shape[0] <= 10 else ", ..."
        lines.append(
            f"kept {kept.shape[0]} of {len(data.columns)} features (threshold {holder.threshold_:.4g}): "
            f"{selected}{more}"
        )
        scores = getattr(holder.selection_, "scores", None)
        if scores is not None:
            zero = int(np.sum(np.asarray(scores)[kept] <= 0))
            if zero and not zero_warned:
                warnings.warn(
                    f"{zero} of the {kept.shape[0]} kept features have a selection statistic of 0 (constant in "
                    "training or unrelated to the class): they were picked at random",
                    stacklevel=2,
                )
    else:
        lines.append(f"used all {len(data.columns)} features")
    if args.model in ("gaussian", "mixture"):
        lines += _mcmc_lines(model)
    lines.append(f"expected error rate on the test rows: {expected_error_rate(proba):.4f}")
    if args.target in data.test.index:
        try:
            labels = data.test.strings(args.target)
        except InputError:
            labels = None
        positions = {str(label): k for k, label in enumerate(classes)}  # compared as text, as the file spells them
        if labels is not None:
            if all(label in positions for label in labels):
                codes = np.array([positions[label] for label in labels], dtype=np.intp)
                lines.append(
                    f"actual error rate: {error_rate(codes, proba):.4f}; average minus log probability: "
                    f"{average_minus_log_probability(codes, proba):.4f}"
                )
    lines.append(f"wrote {len(output)} predictions to {'standard output' if args.out == STDOUT else args.out}")

    args.phase = "writing the output"
    report = _report_stream(args.out)
    _write_output(args.out, lambda target: output.to_csv(target, index=False))
    for line in lines:
        print(line, file=report)


# ---------------------------------------------------------------------------------------------------------
# regress


def _read_groups(path, columns):
    """Group labels (integers) of the feature columns from a CSV with columns 'feature' and 'group'."""
    table = _read_csv(path, "groups")
    if not {"feature", "group"} <= set(table.columns):
        raise InputError(f"groups file {path} needs the columns 'feature' and 'group'")
    features = [row[table.index["feature"]].strip() for row in table.cells]
    labels = {}
    for i, (feature, row) in enumerate(zip(features, table.cells)):
        cell = row[table.index["group"]].strip()
        if not re.fullmatch(r"[+-]?\d+", cell):
            raise InputError(f"{table.where(i, 'group')}: groups must be integers, got {cell!r}")
        if feature in labels:
            raise InputError(f"groups file {path} lists feature {feature!r} twice; groups must not overlap")
        labels[feature] = int(cell)
    missing = [c for c in columns if c not in labels]
    if missing:
        raise InputError(f"groups file {path} gives no group for the feature column {missing[0]!r}")
    return [labels[c] for c in columns]


def _range_text(interval):
    """A scikit-learn ``Interval`` in words: ``in (0, 1)``, ``a finite number > 0``."""
    closed_left = interval.closed in ("left", "both")
    closed_right = interval.closed in ("right", "both")
    left = None if interval.left is None or math.isinf(interval.left) else interval.left
    right = None if interval.right is None or math.isinf(interval.right) else interval.right
    if left is not None and right is not None:
        return f"in {'[' if closed_left else '('}{left:g}, {right:g}{']' if closed_right else ')'}"
    if left is not None:
        return f"a finite number {'>=' if closed_left else '>'} {left:g}"
    if right is not None:
        return f"a finite number {'<=' if closed_right else '<'} {right:g}"
    return "a finite number"


def _check_regress_options(args, n_columns):
    if args.group_size is not None and (args.group_size < 1 or n_columns % args.group_size):
        raise InputError(
            f"--group-size {args.group_size} must be >= 1 and divide the number of feature columns ({n_columns})"
        )
    _check_option_ranges(args, {option: option for option in ("prior_inclusion", "slab_variance", "noise_variance")},
                         lambda parameter: (hdbayes.GroupSpikeSlabRegression, parameter))  # fmt: skip


def _regress(args):
    import numpy as np
    import pandas as pd

    check_output_file(args.out)
    if args.plot is not None:
        if args.plot == STDOUT:
            raise InputError("--plot needs a file name")
        check_output_file(args.plot)
    check_distinct_files({"--train": args.train, "--test": args.test, "--groups": args.groups},
                         {"--out": args.out, "--plot": args.plot})  # fmt: skip
    args.phase = "reading the input files"
    data = _read_train_test(args)
    _check_regress_options(args, len(data.columns))
    y_train = data.train.numbers([args.target], purpose="a number (the target y must be numeric)")[:, 0]
    groups = _read_groups(args.groups, data.columns) if args.groups else args.group_size
    model = hdbayes.GroupSpikeSlabRegression(
        groups=groups, prior_inclusion=args.prior_inclusion, slab_variance=args.slab_variance,
        noise_variance=args.noise_variance, hyperparameters="evidence" if args.evidence else "fixed",
    )  # fmt: skip
    args.phase = "fitting the model"
    model.fit(_frame(data.X_train, data.columns), y_train)
    args.phase = "predicting"
    mean, std = model.predict(_frame(data.X_test, data.columns), return_std=True)
    target = ((data.train, y_train[:, None], [args.target]),)
    for name, values in (("a predictive mean", mean), ("a predictive standard deviation", std),
                         ("the log evidence", model.log_evidence_),
                         ("a group inclusion probability", model.group_inclusion_probabilities_)):  # fmt: skip
        _check_finite(name, values, data, target)
    output = pd.DataFrame({"prediction": mean, "std": std})

    names = {}
    for column, code in zip(data.columns, model.groups_):
        names.setdefault(int(code), []).append(str(column))
    order = np.argsort(-model.group_inclusion_probabilities_, kind="stable")[:10]
    lines = [
        f"{model.n_groups_} groups of {len(data.columns)} features; EP "
        f"{'converged' if model.converged_ else 'stopped'} (EP iterations: {model.n_iter_}); "
        f"log evidence {model.log_evidence_:.4f}"
    ]
    if args.evidence:
        lines.append(f"chosen by evidence: p0 {float(np.mean(model.prior_inclusion_)):.4g}, "
                     f"v_s {float(np.mean(model.slab_variance_)):.4g}, σ0² {model.noise_variance_:.4g}")  # fmt: skip
    lines.append("most probable groups (P(included), features):")
    for g in order:
        members = names[int(g)]
        shown = ", ".join(members[:5]) + (", ..." if len(members) > 5 else "")
        lines.append(f"  {model.group_inclusion_probabilities_[g]:.4f}  {shown}")
    if args.target in data.test.index:
        try:
            truth = data.test.numbers([args.target])[:, 0]
        except InputError:
            truth = None
        if truth is not None:
            rmse = float(np.sqrt(np.mean((mean - truth) ** 2)))
            if math.isfinite(rmse):
                lines.append(f"test root mean squared error: {rmse:.4g}")
    lines.append(f"wrote {len(output)} predictions to {'standard output' if args.out == STDOUT else args.out}")

    figure = None
    args.phase = "drawing the figure"
    if args.plot:
        from matplotlib.figure import Figure

        figure = Figure(figsize=(7.0, 3.0), layout="constrained")
        model.plot_group_inclusion_probabilities(ax=figure.subplots())
    args.phase = "writing the output"
    report = _report_stream(args.out)
    _write_output(args.out, lambda target: output.to_csv(target, index=False))
    if figure is not None:
        _write_output(args.plot, lambda target: figure.savefig(target, format="png", dpi=120))
    for line in lines:
        print(line, file=report)


# ---------------------------------------------------------------------------------------------------------
# demo and reproduce


def _run_experiment(args, name, out, full, seed, n_jobs=None):
    check_output_folder(out)
    args.phase = "running the experiment"
    module = EXPERIMENTS[name].load()
    start = time.perf_counter()
    report = module.run(full=full, random_state=seed, n_jobs=n_jobs)
    seconds = time.perf_counter() - start
    args.phase = "writing the results"
    folder = report.write(out)
    return report, folder, seconds


def _demo(args):
    report, folder, seconds = _run_experiment(args, "naive-bayes-simulation", args.out, False, args.seed)
    print(report.summary)
    print(f"Figures and tables written to {folder}/; the run took {seconds:.1f} s.")


def _reproduce(args):
    n_jobs, cores = args.n_jobs, _usable_cores()
    if n_jobs is not None:
        if n_jobs == 0 or n_jobs < -1:
            raise InputError(f"--n-jobs must be -1 (all usable cores) or at least 1, got {n_jobs}")
        if n_jobs == -1:
            n_jobs = cores
        elif n_jobs > cores:
            print(f"--n-jobs {n_jobs} capped at the {cores} usable cores")
            n_jobs = cores
    out = args.out or os.path.join("hdbayes-output", args.name)
    report, folder, seconds = _run_experiment(args, args.name, out, args.full, args.seed, n_jobs)
    print(f"{args.name}: finished in {seconds:.1f} s; results in {folder}/")
    for name, ok in report.checks.items():
        print(f"  [{'pass' if ok else 'FAIL'}] {name}")
    failed = sum(not ok for ok in report.checks.values())
    if failed:
        print(f"{failed} of {len(report.checks)} acceptance checks failed")
        return 3
    return 0


# ---------------------------------------------------------------------------------------------------------
# messages and the entry point


def _cli_terms(message):
    """A library message in the command line's words: option names, no numpy reprs, one line."""
    message = " ".join(str(message).split())
    message = re.sub(r"\bnp\.(?:float|int|uint|bool|str)_?\d*\(([^()]*)\)", r"\1", message)
    message = re.sub(r"binarize=<threshold>(?: \(or 'median'\))?", "--binarize T (or --binarize median)", message)
    for parameter, option in _OPTION_NAMES.items():
        message = re.sub(rf"\b{parameter} ?= ?(?!=)", f"{option} ", message)
        message = re.sub(rf"\b{parameter}\b", option, message)
    # the estimators' parameter names that are also options' names; never one already written as an option
    message = re.sub(r"(?<![\w-])(threshold|binarize|thin) ?= ?(?!=)", r"--\1 ", message)
    message = re.sub(r"\b(lower|raise|increase|decrease) (threshold|binarize|thin)\b", r"\1 --\2", message)
    message = re.sub(r"\bthe (threshold) (?=[-+\d.])", r"--\1 ", message)  # "exceeds the threshold 0.9"
    message = re.sub(r"(?<![\w-])(thin|binarize) must\b", r"--\1 must", message)
    message = re.sub(r"(?<=[+*] )(thin)\b", r"--\1", message)  # "need n_iter >= burn_in + thin"
    return message


# options that scale the arithmetic: a value this far from 1 is the likelier cause of a result that is not finite
_SCALE_OPTIONS = ("alpha", "class_pseudo_count", "alpha2_x", "prior_inclusion", "slab_variance", "noise_variance")
_EXTREME = 1e30


def _blame_extreme_options(args, message):
    """A refused non-finite result of the fit or the prediction, blamed on the options far from 1 if any (the
    library's message then blames the data, which the user cannot tell apart)."""
    if args.phase not in ("fitting the model", "predicting") or not re.search(r"not finite|overflow", message):
        return message
    extreme = []
    for option in _SCALE_OPTIONS:
        value = getattr(args, option, None)
        if isinstance(value, float) and value != 0 and not 1 / _EXTREME <= abs(value) <= _EXTREME:
            extreme.append(f"{_flag(option)} {value:g}")
    if not extreme:
        return message
    verb = "is" if len(extreme) == 1 else "are"
    return f"{message.split(';')[0]}; {' and '.join(extreme)} {verb} too extreme for floating-point arithmetic: " \
        "choose a moderate value"  # fmt: skip


def _warning_line(message, category, filename, lineno, file=None, line=None):
    return f"hdbayes: warning: {_cli_terms(message)}"


def _quiet_broken_pipe():
    """Point standard output at /dev/null so that Python's final flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        pass


def main(argv=None):
    """Entry point of the ``hdbayes`` command; returns the exit status.

    0 success, 2 bad input (one line on standard error), 3 a failed acceptance check of
    ``reproduce``, 4 out of memory (one line), 1 a bug (traceback), 130 interrupted, 141
    closed output pipe.
    """
    args = _build_parser().parse_args(argv)
    args.phase = "checking the options"
    handlers = {"demo": _demo, "reproduce": _reproduce, "classify": _classify, "regress": _regress}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        # ArviZ 0.23 announces its 1.0 API at import; not the user's concern
        warnings.filterwarnings("ignore", category=FutureWarning, module=r"arviz(\.|$)")
        warnings.filterwarnings("ignore", category=FutureWarning, message=r"\s*ArviZ is undergoing")
        try:
            status = handlers[args.command](args) or 0
        except BrokenPipeError:
            _quiet_broken_pipe()
            return 141
        except KeyboardInterrupt:
            print("hdbayes: interrupted", file=sys.stderr)
            return 130
        except Exception as error:
            if _caused_by_interrupt(error):  # Ctrl-C inside an extension module's import, re-raised as its error
                print("hdbayes: interrupted", file=sys.stderr)
                return 130
            if isinstance(error, MemoryError) or (isinstance(error, OSError) and error.errno == errno.ENOMEM):
                detail = (error.strerror if isinstance(error, OSError) else _cli_terms(error)) or "no detail given"
                print(f"hdbayes {args.command}: out of memory while {args.phase}: {detail}", file=sys.stderr)
                return EXIT_OUT_OF_MEMORY
            if isinstance(error, (InputError, OSError)) or is_input_error(error):
                message = _blame_extreme_options(args, _cli_terms(error)) or type(error).__name__
                if isinstance(error, OSError) and error.filename is not None and error.strerror:
                    message = f"{error.filename}: {error.strerror}"
                print(f"hdbayes {args.command}: error: {message}", file=sys.stderr)
                return 2
            traceback.print_exc()
            print(f"hdbayes {args.command}: {_BUG_MESSAGE}", file=sys.stderr)
            return 1
    shown = set()
    for warning in caught:
        line = _warning_line(warning.message, warning.category, warning.filename, warning.lineno)
        if line not in shown:
            shown.add(line)
            print(line, file=sys.stderr)
    return status


def _caused_by_interrupt(error: BaseException) -> bool:
    """Whether a KeyboardInterrupt is in the chain of causes of ``error`` (a compiled module whose initialisation
    is interrupted raises ``ImportError("initialization failed")`` from it)."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, KeyboardInterrupt):
            return True
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return False


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
