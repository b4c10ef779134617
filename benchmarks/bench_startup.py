"""Start-up cost of the ``hdbayes`` command and of each estimator (issue 28).

Run from the project root (the colon CSV needs HDBAYES_DATA or a download):

    HDBAYES_DATA=../shared/data nice -n 10 .venv/bin/python benchmarks/bench_startup.py

Two parts, each printed as a markdown table (paste them into BENCHMARKS.md):

1. **Commands.** The whole-process CPU seconds (user + system of the child, from ``os.wait4``) of
   ``hdbayes --help``, ``hdbayes classify --help``, ``hdbayes demo`` and a small ``classify`` job per
   model and a small ``regress`` job, each with a warm compile cache and with an empty one, the median
   of ``--repeat`` runs (warm and empty alternate). The cache is numba's, which the package's kernels
   use through :func:`hdbayes._numba.jit`: it goes where ``NUMBA_CACHE_DIR`` points, so every run here
   sets it, to a folder primed by one untimed run of the same command (warm) or to a fresh empty folder
   (empty). The ``classify`` jobs read the 62 × 2000 colon data written as CSV (the features as
   stored by :func:`hdbayes.datasets.load_colon`; train and test are the same file), as level codes
   (each gene cut at its tertiles) for the categorical models and as counts (``round(exp(x))``) for the
   multinomial ones; ``regress`` reads 60 × 100 simulated rows in groups of 5. For the two MCMC models
   the warm job also runs at a second ``--n-iter``, and the table splits its CPU into a fixed part and
   a part per iteration (a straight line through the two medians).
2. **Imports.** For each public estimator, a child process imports numpy, scipy, scikit-learn and numba,
   then the estimator, then fits it on tiny data and predicts (or transforms) with it; the table gives
   the CPU seconds of each stage (``time.process_time``: ``python -X importtime`` measures wall-clock time,
   which a busy machine inflates), the whole process's, and the top-level packages that the estimator's
   own stages loaded (those of the diff of ``sys.modules``).

The compile cache is keyed by the package's source, so a tree that someone is editing recompiles
between runs: to measure a commit, export it (``git archive COMMIT src | tar -x -C DIR``) and run
with ``PYTHONPATH=DIR/src``, which the child processes inherit.

``--json FILE`` also writes every measurement (each run's CPU seconds) as JSON; ``--only NAME ...``
runs some of the commands (``--list`` names them); ``--no-commands`` / ``--no-imports`` skip a part.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

HDBAYES = [sys.executable, "-m", "hdbayes"]
# the job and its second number of iterations, for the fixed and per-iteration parts of the MCMC models
MCMC_JOBS = {"classify gaussian": ("--n-iter", 200, 400), "classify mixture": ("--n-iter", 200, 400)}


def _write_csv(path, columns, matrix, target, labels):
    """A CSV of ``matrix`` (numbers as Python prints them) with the target column ``target`` last."""
    with open(path, "w") as file:
        file.write(",".join([*columns, target]) + "\n")
        for row, label in zip(matrix.tolist(), labels.tolist(), strict=True):
            file.write(",".join(map(repr, row)) + f",{label}\n")


def write_inputs(folder):
    """Write the CSV inputs of the jobs into ``folder``; return their paths by kind."""
    from hdbayes.datasets import load_colon

    colon = load_colon()
    X, y = np.asarray(colon.X, dtype=float), np.asarray(colon.y)
    names = [f"g{j}" for j in range(X.shape[1])]
    paths = {kind: str(Path(folder) / f"{kind}.csv") for kind in ("colon", "levels", "counts", "regress")}
    _write_csv(paths["colon"], names, X, "class", y)
    cuts = np.quantile(X, [1 / 3, 2 / 3], axis=0)
    _write_csv(paths["levels"], names, (X > cuts[0]).astype(int) + (X > cuts[1]).astype(int), "class", y)
    _write_csv(paths["counts"], names, np.round(np.exp(X)).astype(int), "class", y)
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((60, 100))
    beta = np.zeros(100)
    beta[:10] = rng.standard_normal(10)
    _write_csv(paths["regress"], [f"x{j}" for j in range(100)], Z, "y", Z @ beta + 0.1 * rng.standard_normal(60))
    return paths


def commands(paths, out):
    """The timed commands: name → argument list (without the interpreter)."""
    colon, levels, counts = paths["colon"], paths["levels"], paths["counts"]
    out = Path(out) / "out"

    def classify(model, data, *options):
        return ["classify", "--model", model, "--train", data, "--test", data, "--target", "class",
                "--out", str(out / f"{model}.csv"), *options]  # fmt: skip

    binary = ("--n-features", "10", "--binarize", "median")
    return {
        "help": ["--help"],
        "classify-help": ["classify", "--help"],
        "demo": ["demo", "--out", str(out / "demo")],
        "classify naive-bayes": classify("naive-bayes", colon, *binary),
        "classify categorical-naive-bayes": classify(
            "categorical-naive-bayes", levels, "--n-features", "10", "--n-levels", "3"
        ),  # fmt: skip
        "classify gaussian": classify("gaussian", colon, "--n-features", "10", "--n-iter", "200", "--burn-in", "50"),
        "classify mixture": classify("mixture", colon, *binary, "--n-iter", "200", "--burn-in", "50"),
        "classify bernoulli-nb": classify("bernoulli-nb", colon, *binary),
        "classify categorical-nb": classify("categorical-nb", levels, "--n-levels", "3"),
        "classify multinomial-nb": classify("multinomial-nb", counts),
        "classify dcm": classify("dcm", counts),
        "regress": [
            "regress",
            "--train",
            paths["regress"],
            "--test",
            paths["regress"],
            "--target",
            "y",
            "--group-size",
            "5",
            "--out",
            str(out / "regress.csv"),
        ],  # fmt: skip
    }


def cpu_seconds(argv, cache):
    """User + system CPU seconds of the whole child process running ``argv`` with NUMBA_CACHE_DIR=``cache``."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache, "PYTHONWARNINGS": "ignore"}
    process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stderr = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({process.returncode}):\n{stderr.decode(errors='replace')}")
    return usage.ru_utime + usage.ru_stime


def with_iterations(argv, option, value):
    """``argv`` with ``option`` set to ``value``."""
    argv = list(argv)
    argv[argv.index(option) + 1] = str(value)
    return argv


def time_commands(jobs, repeat, scratch):
    """Median CPU seconds of each job, warm and empty cache; the MCMC jobs' two iteration counts."""
    results = {}
    for name, argv in jobs.items():
        warm_cache = tempfile.mkdtemp(dir=scratch, prefix="warm-")
        cpu_seconds(HDBAYES + argv, warm_cache)  # primes the warm cache (untimed)
        runs = {"warm": [], "empty": []}
        variants = {"warm": argv}
        if name in MCMC_JOBS:
            option, _, more = MCMC_JOBS[name]
            variants["warm, more iterations"] = with_iterations(argv, option, more)
            runs["warm, more iterations"] = []
        for _ in range(repeat):
            for variant, variant_argv in variants.items():
                runs[variant].append(cpu_seconds(HDBAYES + variant_argv, warm_cache))
            empty = tempfile.mkdtemp(dir=scratch, prefix="empty-")
            runs["empty"].append(cpu_seconds(HDBAYES + argv, empty))
            shutil.rmtree(empty, ignore_errors=True)
        shutil.rmtree(warm_cache, ignore_errors=True)
        results[name] = runs
        medians = {variant: statistics.median(values) for variant, values in runs.items()}
        print(f"  {name}: " + ", ".join(f"{key} {value:.2f} s" for key, value in medians.items()), file=sys.stderr)
    return results


def command_table(results):
    """The markdown table of the commands' medians."""
    lines = ["| command | warm CPU s | empty cache CPU s | empty − warm |", "|---|---:|---:|---:|"]
    for name, runs in results.items():
        warm, empty = statistics.median(runs["warm"]), statistics.median(runs["empty"])
        shown = {"help": "--help", "classify-help": "classify --help"}.get(name, name)
        lines.append(f"| `hdbayes {shown}` | {warm:.2f} | {empty:.2f} | {empty - warm:+.2f} |")
    mcmc = [(name, runs) for name, runs in results.items() if "warm, more iterations" in runs]
    if mcmc:
        lines += ["", "| MCMC job (warm) | fixed CPU s | CPU ms per iteration |", "|---|---:|---:|"]
        for name, runs in mcmc:
            _, few, many = MCMC_JOBS[name]
            t_few, t_many = statistics.median(runs["warm"]), statistics.median(runs["warm, more iterations"])
            per_iteration = (t_many - t_few) / (many - few)
            lines.append(f"| `{name}` | {t_few - few * per_iteration:.2f} | {1000 * per_iteration:.2f} |")
    return "\n".join(lines)


# tiny data and one fit + predict (or transform) per public estimator, run in a child process
_ESTIMATOR_SCRIPT = """
import numpy as np
rng = np.random.default_rng(0)
n, p = 24, 12
y = np.arange(n) % 2
binary = (rng.random((n, p)) < 0.3 + 0.4 * y[:, None]).astype(int)
levels = rng.integers(0, 3, (n, p))
normal = rng.standard_normal((n, p)) + y[:, None]
counts = rng.poisson(2.0, (n, p))
regression = normal @ np.r_[1.0, -1.0, np.zeros(p - 2)]
mcmc = dict(n_iter=20, burn_in=5, thin=1, n_chains=1, random_state=0)
cases = {
    "BiasCorrectedNaiveBayes": (dict(n_features_to_select=4), binary, y),
    "BiasCorrectedCategoricalNB": (dict(n_features_to_select=4), levels, y),
    "BiasCorrectedGaussianClassifier": (dict(n_features_to_select=4, **mcmc), normal, y),
    "BiasCorrectedMixture": (dict(n_features_to_select=4, **mcmc), binary, y),
    "BayesianBernoulliNB": (dict(), binary, y),
    "BayesianCategoricalNB": (dict(), levels, y),
    "BayesianMultinomialNB": (dict(), counts, y),
    "DCMClassifier": (dict(), counts, y),
    "MutualInformationSelector": (dict(n_features_to_select=4), binary, y),
    "FeatureBinarizer": (dict(), normal, y),
    "ShrunkCovarianceWhitener": (dict(), normal, y),
    "BayesianLinearClassifier": (dict(random_state=0), normal, y),
    "CompressedSequenceModel": (dict(order=2, **mcmc), levels[:, :4], y),
    "CompressedInteractionClassifier": (dict(order=2, **mcmc), binary[:, :4], y),
    "GroupSpikeSlabRegression": (dict(groups=3), normal, regression),
    "GroupSpikeSlabGibbs": (dict(groups=3, **mcmc), normal, regression),
}


def run(name):
    import hdbayes

    parameters, X, target = cases[name]
    model = getattr(hdbayes, name)(**parameters).fit(X, target)
    if hasattr(model, "predict_proba"):
        model.predict_proba(X)
    if hasattr(model, "predict"):
        model.predict(X)
    else:
        model.transform(X)
"""

# the stages of an estimator's job, each timed in CPU seconds in one child process: the libraries first, in the
# order they import each other (scikit-learn 1.9 imports scipy.stats and pandas), then the estimator's modules,
# then its first fit and prediction (numba's first use and the cached kernels' loading included)
_STAGES = """
import json, sys, time
cpu, loaded, report = time.process_time(), set(sys.modules), {{"cpu": {{}}, "new": {{}}}}

def stage(label):
    global cpu, loaded
    now = time.process_time()
    report["cpu"][label] = now - cpu
    tops = {{m.split(".")[0] for m in sys.modules if not m.startswith("_")}}
    report["new"][label] = sorted(tops - {{m.split(".")[0] for m in loaded}})
    cpu, loaded = now, set(sys.modules)

import numpy
stage("numpy")
import scipy.sparse, scipy.special
stage("scipy (special, sparse)")
import sklearn.base, sklearn.utils.validation
stage("scikit-learn (scipy.stats, pandas)")
import numba
stage("numba")
import hdbayes
getattr(hdbayes, {name!r})
stage("the estimator's modules")
"""
_STAGES_END = """
run({name!r})
stage("fit and predict")
report["total"] = time.process_time()
print(json.dumps(report))
"""
STAGES = ("numpy", "scipy (special, sparse)", "scikit-learn (scipy.stats, pandas)", "numba",
          "the estimator's modules", "fit and predict")  # fmt: skip


def import_profile(name, cache):
    """CPU seconds of each stage of ``name``'s job and the top-level packages each stage loaded (one child)."""
    code = _STAGES.format(name=name) + _ESTIMATOR_SCRIPT + _STAGES_END.format(name=name)
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "NUMBA_CACHE_DIR": cache}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"{name} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def import_table(names, cache):
    """The markdown table of the estimators' import profiles (CPU seconds by stage)."""
    header = ["estimator", *STAGES, "process CPU s", "loaded by the estimator's modules, fit and predict"]
    lines = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 2) + "---|"]
    for name in names:
        _loaded_modules(name, cache)  # fills the cache before the timed run
        report = import_profile(name, cache)
        cells = [f"{report['cpu'][stage]:.2f}" for stage in STAGES]
        new = report["new"]["the estimator's modules"] + report["new"]["fit and predict"]
        shown = ", ".join(sorted(set(new) - {"hdbayes"})) or "–"
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {report['total']:.2f} | {shown} |")
        print(f"  imports of {name}: {report['total']:.2f} s", file=sys.stderr)
    return "\n".join(lines) + (
        "\n\n(CPU seconds of each stage in one process, warm cache; the last column lists the top-level packages"
        " that the estimator's modules and its fit and predict loaded first)"
    )


def _loaded_modules(name, cache):
    """The modules loaded once ``name`` is fitted and has predicted."""
    code = _ESTIMATOR_SCRIPT + f"\nrun({name!r})\nimport sys\nprint(' '.join(sorted(sys.modules)))\n"
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "NUMBA_CACHE_DIR": cache}
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    return set(output.split())


ESTIMATORS = (
    "BiasCorrectedNaiveBayes", "BiasCorrectedCategoricalNB", "BiasCorrectedGaussianClassifier", "BiasCorrectedMixture",
    "BayesianBernoulliNB", "BayesianCategoricalNB", "BayesianMultinomialNB", "DCMClassifier",
    "MutualInformationSelector", "FeatureBinarizer", "ShrunkCovarianceWhitener", "BayesianLinearClassifier",
    "CompressedSequenceModel", "CompressedInteractionClassifier", "GroupSpikeSlabRegression", "GroupSpikeSlabGibbs",
)  # fmt: skip


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per command and cache state (median)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="time only these commands")
    parser.add_argument("--list", action="store_true", help="list the commands and exit")
    parser.add_argument("--no-commands", action="store_true", help="skip the commands")
    parser.add_argument("--no-imports", action="store_true", help="skip the estimators' import profiles")
    parser.add_argument("--json", help="also write every measurement to this JSON file")
    args = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="hdbayes-bench-startup-")
    try:
        jobs = commands({kind: "DATA" for kind in ("colon", "levels", "counts", "regress")}, scratch)
        if args.list:
            print("\n".join(jobs))
            return
        unknown = set(args.only or ()) - set(jobs)
        if unknown:
            parser.error(f"unknown commands {sorted(unknown)} (see --list)")
        record = {"python": platform.python_version(), "machine": platform.machine(), "cores": os.cpu_count(),
                  "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}  # fmt: skip
        if not args.no_commands:
            jobs = commands(write_inputs(scratch), scratch)
            if args.only:
                jobs = {name: argv for name, argv in jobs.items() if name in args.only}
            record["commands"] = time_commands(jobs, args.repeat, scratch)
            print(textwrap.dedent(f"""
                Whole-process CPU seconds (user + system), median of {args.repeat}
                ({record['date']}, Python {record['python']}, {record['cores']} cores):
                """))  # fmt: skip
            print(command_table(record["commands"]))
        if not args.no_imports:
            print("\nImports of each estimator (fit and predict on tiny data, warm cache):\n")
            print(import_table(ESTIMATORS, tempfile.mkdtemp(dir=scratch, prefix="imports-")))
        if args.json:
            Path(args.json).write_text(json.dumps(record, indent=1) + "\n")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
