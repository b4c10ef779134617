"""The ``hdbayes`` command.

Subcommands:

* ``hdbayes demo`` — the naive Bayes simulation at a small size: calibration table,
  expected vs actual error with and without correction, figures;
* ``hdbayes reproduce NAME`` — an experiment of the papers (``--full`` for the
  paper's size), results and figures written to a folder;
* ``hdbayes classify`` — fit on a training CSV, predict a test CSV.

Errors in the input (missing or empty files, malformed CSV, bad values) end the
command with exit status 2 and a one-line message on standard error; output files
are written atomically, so a failed run leaves none behind.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import hdbayes

__all__ = ["main"]

EXPERIMENTS = {
    "naive-bayes-simulation": "hdbayes.experiments.naive_bayes_simulation",
    "colon": "hdbayes.experiments.colon",
    "gaussian-simulation": "hdbayes.experiments.gaussian_simulation",
    "srbct": "hdbayes.experiments.srbct",
    "lymphoma": "hdbayes.experiments.lymphoma",
    "mixture-simulation": "hdbayes.experiments.mixture_simulation",
    "interaction-counts": "hdbayes.experiments.interaction_counts",
    "hmm": "hdbayes.experiments.hmm",
    "english-text": "hdbayes.experiments.english_text",
    "cauchy-classification": "hdbayes.experiments.cauchy_classification",
    "discrete-models": "hdbayes.experiments.discrete_models",
    "group-sparse-reconstruction": "hdbayes.experiments.group_sparse_reconstruction",
    "prior-knowledge": "hdbayes.experiments.prior_knowledge",
}

# models corrected for selection bias (selection inside the estimator) and the generative models of
# hdbayes.discrete (selection, if asked for, by mutual information in a pipeline)
CORRECTED_MODELS = ("naive-bayes", "gaussian", "mixture")
DISCRETE_MODELS = ("bernoulli-nb", "categorical-nb", "multinomial-nb", "dcm")
MODELS = CORRECTED_MODELS + DISCRETE_MODELS
_NAIVE_BAYES_FAMILY = {"bernoulli-nb", "categorical-nb", "multinomial-nb"}
# options that only some models understand: option -> (models, estimator parameter)
_MODEL_OPTIONS = {
    "binarize": ({"naive-bayes", "mixture", "bernoulli-nb"}, "binarize"),
    "theta_rule": ({"naive-bayes"}, "theta_rule"),
    "n_iter": ({"gaussian", "mixture"}, "n_iter"),
    "burn_in": ({"gaussian", "mixture"}, "burn_in"),
    "thin": ({"gaussian", "mixture"}, "thin"),
    "chains": ({"gaussian", "mixture"}, "n_chains"),
    "method": (_NAIVE_BAYES_FAMILY, "method"),
    "no_correct": (set(CORRECTED_MODELS), None),
}
_ESTIMATORS = {
    "naive-bayes": "BiasCorrectedNaiveBayes",
    "gaussian": "BiasCorrectedGaussianClassifier",
    "mixture": "BiasCorrectedMixture",
    "bernoulli-nb": "BayesianBernoulliNB",
    "categorical-nb": "BayesianCategoricalNB",
    "multinomial-nb": "BayesianMultinomialNB",
    "dcm": "DCMClassifier",
}


class InputError(Exception):
    """A problem with the user's input, reported as one line."""


def _add_data_arguments(parser, target_help):
    """--train, --test and --target, shared by the commands that fit on CSV files."""
    parser.add_argument("--train", required=True, help="training CSV with a header row")
    parser.add_argument("--test", required=True, help="test CSV with the same feature columns")
    parser.add_argument("--target", required=True, help=target_help)


def _build_parser():
    parser = argparse.ArgumentParser(
        prog="hdbayes",
        description="Bayesian classification with very many features and calibrated predictions "
        "after feature selection.",
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
    demo.add_argument("--out", default="hdbayes-demo", help="output folder (default: %(default)s)")
    demo.add_argument("--seed", type=int, default=0, help="seed of the simulated data (default: %(default)s)")

    reproduce = sub.add_parser(
        "reproduce",
        help="reproduce an experiment of the papers",
        description="Run an experiment of the papers and write summary.md, CSV tables and PNG figures.",
    )
    reproduce.add_argument("name", choices=sorted(EXPERIMENTS), help="experiment")
    reproduce.add_argument("--full", action="store_true", help="the paper's size (default: a small fast size)")
    reproduce.add_argument("--out", help="output folder (default: hdbayes-output/NAME)")
    reproduce.add_argument("--seed", type=int, default=0, help="random seed (default: %(default)s)")
    reproduce.add_argument("--n-jobs", type=int, help="parallel fits or folds with joblib (-1: all cores)")

    classify = sub.add_parser(
        "classify",
        help="fit on a training CSV and predict a test CSV",
        description="Fit a model on the training CSV (all columns but the target are candidate features; "
        "feature selection happens inside the fit) and write predicted classes and class probabilities "
        "for the rows of the test CSV.",
    )
    _add_data_arguments(classify, "name of the class column in the training CSV")
    classify.add_argument("--model", choices=MODELS, default="naive-bayes", help="model (default: %(default)s)")
    group = classify.add_mutually_exclusive_group()
    group.add_argument(
        "--n-features", type=int, help="number of features to keep (k; discrete models: by mutual information)"
    )
    group.add_argument(
        "--threshold",
        type=float,
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
        "--binarize",
        type=float,
        help="naive-bayes, mixture, bernoulli-nb: map feature values > this to 1, others to 0",
    )
    classify.add_argument(
        "--theta-rule",
        choices=("simpson", "exact"),
        help="naive-bayes: θ integration by the thesis's 21-point Simpson rule (default) or exact Gauss–Legendre",
    )
    classify.add_argument("--n-iter", type=int, help="gaussian, mixture: MCMC iterations per chain")
    classify.add_argument("--burn-in", type=int, help="gaussian, mixture: iterations discarded")
    classify.add_argument("--thin", type=int, help="gaussian, mixture: keep every THIN-th iteration")
    classify.add_argument("--chains", type=int, help="gaussian, mixture: number of chains (default: 1)")
    classify.add_argument("--seed", type=int, default=0, help="random seed (default: %(default)s)")
    classify.add_argument("--out", required=True, help="output CSV of predictions")

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
    grouping.add_argument("--groups", help="CSV with columns 'feature' and 'group' giving every feature column's group")
    regress.add_argument("--prior-inclusion", type=float, default=0.5, help="p0 (default: %(default)s)")
    regress.add_argument("--slab-variance", type=float, default=1.0, help="v_s (default: %(default)s)")
    regress.add_argument("--noise-variance", type=float, default=1.0, help="σ0² (default: %(default)s)")
    regress.add_argument("--evidence", action="store_true", help="choose p0, v_s and σ0² by maximising EP's evidence")
    regress.add_argument("--plot", help="also save the group inclusion probabilities as a PNG figure")
    regress.add_argument("--out", required=True, help="output CSV of predictions")
    return parser


def _read_csv(path, what):
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise InputError(f"{what} file not found: {path}")
    if path.stat().st_size == 0:
        raise InputError(f"{what} file is empty: {path}")
    try:
        frame = pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise InputError(f"{what} file {path} is not a valid CSV: {first_line}") from None
    if frame.shape[0] == 0:
        raise InputError(f"{what} file {path} has a header but no rows")
    return frame


def _features(frame, columns, path):
    import numpy as np
    import pandas as pd

    non_numeric = [c for c in columns if not pd.api.types.is_numeric_dtype(frame[c])]
    if non_numeric:
        raise InputError(f"{path}: feature column {non_numeric[0]!r} is not numeric")
    values = frame[columns].to_numpy(dtype=np.float64)
    if not np.isfinite(values).all():
        row, col = np.argwhere(~np.isfinite(values))[0]
        raise InputError(f"{path}: missing or non-finite value in column {columns[col]!r}, row {row + 1}")
    return values


def _read_train_test(args):
    """The training and test frames, the feature columns and the two feature matrices."""
    train = _read_csv(args.train, "training")
    test = _read_csv(args.test, "test")
    if args.target not in train.columns:
        raise InputError(f"target column {args.target!r} is not in {args.train}")
    columns = [c for c in train.columns if c != args.target]
    if not columns:
        raise InputError(f"{args.train} has no feature columns besides {args.target!r}")
    missing = [c for c in columns if c not in test.columns]
    if missing:
        raise InputError(f"test file {args.test} lacks the feature column {missing[0]!r}")
    if train[args.target].isna().any():
        raise InputError(f"target column {args.target!r} has missing values")
    return train, test, columns, _features(train, columns, args.train), _features(test, columns, args.test)


def _write_atomically(path, write):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
    os.close(handle)
    try:
        write(temporary)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _build_model(args):
    """The estimator named by --model, refusing options that belong to other models.

    The selection-bias models select inside ``fit``; a discrete model is preceded by a
    :class:`~hdbayes.MutualInformationSelector` when --n-features or --threshold is given.
    """
    params = {}
    for option, (models, parameter) in _MODEL_OPTIONS.items():
        value = getattr(args, option)
        if value is None or value is False:
            continue
        if args.model not in models:
            raise InputError(f"--{option.replace('_', '-')} applies to --model {' or '.join(sorted(models))} only")
        if parameter is not None:
            params[parameter] = value
    estimator = getattr(hdbayes, _ESTIMATORS[args.model])
    if args.model in DISCRETE_MODELS:
        model = estimator(**params)
        if args.n_features is None and args.threshold is None:
            return model
        from sklearn.pipeline import make_pipeline

        selector = hdbayes.MutualInformationSelector(
            n_features=args.n_features, threshold=args.threshold, random_state=args.seed
        )
        return make_pipeline(selector, model)
    if args.model in ("gaussian", "mixture"):
        params["n_jobs"] = params.get("n_chains", 1)
    return estimator(
        n_features=args.n_features, threshold=args.threshold, correct=not args.no_correct, **params,
        random_state=args.seed,
    )  # fmt: skip


def _print_mcmc_diagnostics(model):
    import arviz as az

    idata = model.to_inference_data()
    name = "log_tau_mu" if "log_tau_mu" in idata.posterior else "log_alpha"
    rhat = float(az.rhat(idata)[name]) if model.n_chains > 1 else float("nan")
    ess = float(az.ess(idata)[name])
    mean = float(idata.posterior[name].mean())
    print(f"{name}: posterior mean {mean:.3f}, R-hat {rhat:.3f}, effective sample size {ess:.0f}")
    if model.n_chains > 1 and rhat > 1.1:
        print("warning: R-hat > 1.1; the chains have not mixed, consider more iterations (--n-iter)")


def _classify(args):
    import numpy as np
    import pandas as pd

    from hdbayes.metrics import average_minus_log_probability, error_rate, expected_error_rate

    train, test, columns, X_train, X_test = _read_train_test(args)
    y_train = train[args.target].to_numpy()

    model = _build_model(args)
    model.fit(X_train, y_train)
    proba = model.predict_proba(X_test)
    output = pd.DataFrame({"prediction": model.predict(X_test)}, index=test.index)
    for j, label in enumerate(model.classes_):
        output[f"P({args.target}={label})"] = proba[:, j]
    _write_atomically(args.out, lambda tmp: output.to_csv(tmp, index=False))

    holder = model.steps[0][1] if hasattr(model, "steps") else model
    if hasattr(holder, "selected_features_"):
        kept = holder.selected_features_
        selected = ", ".join(str(columns[j]) for j in kept[:10])
        more = "" if kept.shape[0] <= 10 else ", ..."
        print(f"kept {kept.shape[0]} of {len(columns)} features (threshold {holder.threshold_:.4g}): {selected}{more}")
    else:
        print(f"used all {len(columns)} features")
    if args.model in ("gaussian", "mixture"):
        _print_mcmc_diagnostics(model)
    print(f"expected error rate on the test rows: {expected_error_rate(proba):.4f}")
    if args.target in test.columns and not test[args.target].isna().any():
        labels = test[args.target].to_numpy()
        known = np.isin(labels, model.classes_)
        if known.all():
            codes = np.searchsorted(model.classes_, labels)
            print(
                f"actual error rate: {error_rate(codes, proba):.4f}; average minus log probability: "
                f"{average_minus_log_probability(codes, proba):.4f}"
            )
    print(f"wrote {len(output)} predictions to {args.out}")


def _read_groups(path, columns):
    """Group labels of the feature columns from a CSV with columns 'feature' and 'group'."""
    frame = _read_csv(path, "groups")
    if not {"feature", "group"} <= set(frame.columns):
        raise InputError(f"groups file {path} needs the columns 'feature' and 'group'")
    twice = frame["feature"][frame["feature"].duplicated()]
    if len(twice):
        raise InputError(f"groups file {path} lists feature {twice.iloc[0]!r} twice; groups must not overlap")
    labels = dict(zip(frame["feature"].astype(str), frame["group"]))
    missing = [c for c in columns if str(c) not in labels]
    if missing:
        raise InputError(f"groups file {path} gives no group for the feature column {missing[0]!r}")
    return [labels[str(c)] for c in columns]


def _regress(args):
    import numpy as np
    import pandas as pd

    train, test, columns, X_train, X_test = _read_train_test(args)
    if not pd.api.types.is_numeric_dtype(train[args.target]):
        raise InputError(f"target column {args.target!r} is not numeric")
    y_train = train[args.target].to_numpy(dtype=np.float64)
    groups = _read_groups(args.groups, columns) if args.groups else args.group_size
    model = hdbayes.GroupSpikeSlabRegression(
        groups=groups, prior_inclusion=args.prior_inclusion, slab_variance=args.slab_variance,
        noise_variance=args.noise_variance, hyperparameters="evidence" if args.evidence else "fixed",
    ).fit(X_train, y_train)  # fmt: skip
    mean, std = model.predict(X_test, return_std=True)
    output = pd.DataFrame({"prediction": mean, "std": std}, index=test.index)

    figure = None
    if args.plot:
        from matplotlib.figure import Figure

        figure = Figure(figsize=(7.0, 3.0), layout="constrained")
        model.plot_group_inclusion_probabilities(ax=figure.subplots())
    _write_atomically(args.out, lambda tmp: output.to_csv(tmp, index=False))
    if figure is not None:
        _write_atomically(args.plot, lambda tmp: figure.savefig(tmp, format="png", dpi=120))

    names = {}
    for column, code in zip(columns, model.groups_):
        names.setdefault(int(code), []).append(str(column))
    order = np.argsort(-model.group_inclusion_probabilities_, kind="stable")[:10]
    print(f"{model.n_groups_} groups of {len(columns)} features; EP {'converged' if model.converged_ else 'stopped'} "
          f"(EP iterations: {model.n_iter_}); log evidence {model.log_evidence_:.4f}")  # fmt: skip
    if args.evidence:
        print(f"chosen by evidence: p0 {float(np.mean(model.prior_inclusion_)):.4g}, "
              f"v_s {float(np.mean(model.slab_variance_)):.4g}, σ0² {model.noise_variance_:.4g}")  # fmt: skip
    print("most probable groups (P(included), features):")
    for g in order:
        members = names[int(g)]
        shown = ", ".join(members[:5]) + (", ..." if len(members) > 5 else "")
        print(f"  {model.group_inclusion_probabilities_[g]:.4f}  {shown}")
    if args.target in test.columns and pd.api.types.is_numeric_dtype(test[args.target]):
        truth = test[args.target].to_numpy(dtype=np.float64)
        if np.isfinite(truth).all():
            print(f"test root mean squared error: {float(np.sqrt(np.mean((mean - truth) ** 2))):.4g}")
    print(f"wrote {len(output)} predictions to {args.out}")


def _run_experiment(name, out, full, seed, n_jobs=None):
    from importlib import import_module

    module = import_module(EXPERIMENTS[name])
    start = time.perf_counter()
    report = module.run(full=full, random_state=seed, n_jobs=n_jobs)
    folder = report.write(out)
    return report, folder, time.perf_counter() - start


def _print_checks(report):
    for name, ok in report.checks.items():
        print(f"  [{'pass' if ok else 'FAIL'}] {name}")


def _demo(args):
    report, folder, seconds = _run_experiment("naive-bayes-simulation", args.out, False, args.seed)
    print(report.summary)
    print(f"Figures and tables written to {folder}/ in {seconds:.1f} s.")


def _reproduce(args):
    out = args.out or os.path.join("hdbayes-output", args.name)
    report, folder, seconds = _run_experiment(args.name, out, args.full, args.seed, args.n_jobs)
    print(f"{args.name}: finished in {seconds:.1f} s; results in {folder}/")
    _print_checks(report)


def main(argv=None):
    """Entry point of the ``hdbayes`` command; returns the exit status."""
    args = _build_parser().parse_args(argv)
    handlers = {"demo": _demo, "reproduce": _reproduce, "classify": _classify, "regress": _regress}
    try:
        handlers[args.command](args)
    except (InputError, ValueError, TypeError, OSError) as error:
        message = " ".join(str(error).split()) or type(error).__name__
        print(f"hdbayes {args.command}: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("hdbayes: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
