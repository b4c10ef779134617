"""Imports do only what the job needs (issue 28): fitting and predicting with any estimator imports no
``scipy.stats``, matplotlib, ArviZ, dask, tqdm or pandas, and the command's help imports no numerical stack.

Each check runs in a fresh interpreter (a subprocess), where the modules loaded are those of the job alone.
scikit-learn itself imports ``scipy.stats`` and pandas (``sklearn.utils.fixes``, 1.9) when they are
installed, so for those two the test asks who imports them: an ``__import__`` hook records every import
statement that a module of hdbayes executes, found in ``sys.modules`` or not, and none may name them.
"""

import json
import subprocess
import sys
import textwrap

import pytest

FORBIDDEN = ("scipy.stats", "pandas", "matplotlib", "arviz", "dask", "tqdm")

# tiny data, one fit and one predict (or transform) per public estimator, each step's new modules recorded
_SCRIPT = textwrap.dedent(
    """
    import builtins, json, sys

    FORBIDDEN = {forbidden!r}
    hdbayes_imports = set()
    _original_import = builtins.__import__

    def _recording_import(name, globals=None, locals=None, fromlist=(), level=0):
        importer = (globals or {{}}).get("__name__") or ""
        if level == 0 and (importer == "hdbayes" or importer.startswith("hdbayes.")):
            for target in (name, *(f"{{name}}.{{item}}" for item in fromlist or ())):
                hdbayes_imports.add((importer, target))
        return _original_import(name, globals, locals, fromlist, level)

    builtins.__import__ = _recording_import

    def loaded():
        return {{module for module in sys.modules if any(
            module == name or module.startswith(name + ".") for name in FORBIDDEN)}}

    import sklearn.base  # what scikit-learn loads by itself
    report = {{"sklearn": sorted(loaded()), "steps": {{}}}}

    import numpy as np

    import hdbayes

    rng = np.random.default_rng(0)
    n, p = 24, 12
    y = np.arange(n) % 2
    binary = (rng.random((n, p)) < 0.3 + 0.4 * y[:, None]).astype(int)
    levels = rng.integers(0, 3, (n, p))
    normal = rng.standard_normal((n, p)) + y[:, None]
    counts = rng.poisson(2.0, (n, p))
    regression = normal @ np.r_[1.0, -1.0, np.zeros(p - 2)]
    mcmc = dict(n_iter=12, burn_in=4, thin=1, n_chains=1, random_state=0)
    cases = {{
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
    }}
    for name in {names!r}:
        parameters, X, target = cases[name]
        before = loaded()
        hdbayes_imports.clear()
        model = getattr(hdbayes, name)(**parameters).fit(X, target)
        for method in ("predict_proba", "predict", "transform"):
            if hasattr(model, method):
                getattr(model, method)(X)
        report["steps"][name] = {{
            "new": sorted(loaded() - before),
            "by_hdbayes": sorted(
                f"{{importer}} imports {{target}}" for importer, target in hdbayes_imports
                if any(target == bad or target.startswith(bad + ".") for bad in FORBIDDEN)
            ),
        }}
    report["all"] = sorted({{module.split(".")[0] for module in sys.modules}})
    print(json.dumps(report))
    """
)

ESTIMATORS = (
    "BiasCorrectedNaiveBayes", "BiasCorrectedCategoricalNB", "BiasCorrectedGaussianClassifier", "BiasCorrectedMixture",
    "BayesianBernoulliNB", "BayesianCategoricalNB", "BayesianMultinomialNB", "DCMClassifier",
    "MutualInformationSelector", "FeatureBinarizer", "ShrunkCovarianceWhitener", "BayesianLinearClassifier",
    "CompressedSequenceModel", "CompressedInteractionClassifier", "GroupSpikeSlabRegression", "GroupSpikeSlabGibbs",
)  # fmt: skip


def _run(names):
    code = _SCRIPT.format(forbidden=FORBIDDEN, names=tuple(names))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


CHECKED = ESTIMATORS


@pytest.fixture(scope="module")
def report():
    return _run(CHECKED)


def test_the_registry_lists_every_public_estimator():
    import inspect

    import hdbayes

    public = {name for name in hdbayes.__all__ if inspect.isclass(getattr(hdbayes, name))}
    assert public == set(ESTIMATORS)


@pytest.mark.parametrize("name", CHECKED)
def test_fit_and_predict_import_nothing_the_job_does_not_need(report, name):
    """No module of hdbayes imports a forbidden module while the estimator is fitted and predicts, and the
    step loads none that scikit-learn did not load already."""
    step = report["steps"][name]
    assert step["by_hdbayes"] == []
    assert step["new"] == []


def test_only_scikit_learn_brings_scipy_stats_and_pandas(report):
    """After every estimator, the forbidden modules loaded are exactly those ``import sklearn.base`` loads
    (scipy.stats and pandas, when installed, in scikit-learn 1.9): none of matplotlib, ArviZ, dask, tqdm."""
    top_level = set(report["all"])
    assert not top_level & {"matplotlib", "arviz", "dask", "tqdm"}
    sklearn_roots = {module.split(".")[0] for module in report["sklearn"]}
    assert top_level & {"pandas"} <= sklearn_roots


def test_the_recording_hook_sees_a_forbidden_import():
    """The check can fail: an hdbayes module that imports scipy.stats inside a function is caught, even when
    scipy.stats is already loaded (the hook sees the import statement, not the loading)."""
    code = textwrap.dedent(
        """
        import builtins, sys, types
        import scipy.stats
        seen = []
        _original = builtins.__import__
        def hook(name, globals=None, locals=None, fromlist=(), level=0):
            importer = (globals or {}).get("__name__") or ""
            if importer.startswith("hdbayes"):
                seen.extend([name, *(f"{name}.{item}" for item in fromlist or ())])
            return _original(name, globals, locals, fromlist, level)
        builtins.__import__ = hook
        module = types.ModuleType("hdbayes.fake")
        exec("def f():\\n    from scipy import stats\\n    return stats", module.__dict__)
        module.f()
        print("scipy.stats" in seen)
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "True"


@pytest.mark.parametrize("argv", [["--help"], ["classify", "--help"], ["regress", "--help"]], ids=" ".join)
def test_the_command_help_imports_no_numerical_stack(argv):
    """``hdbayes --help`` and ``hdbayes classify --help`` start like a command-line tool: no numpy, scipy,
    scikit-learn or numba."""
    code = textwrap.dedent(
        f"""
        import contextlib, io, sys
        from hdbayes._entry import main
        with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.suppress(SystemExit):
            main({argv!r})
        heavy = {{"numpy", "scipy", "sklearn", "numba", "pandas", "llvmlite"}}
        print(" ".join(sorted({{module.split(".")[0] for module in sys.modules}} & heavy)), "|", len(out.getvalue()))
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    heavy, length = result.stdout.split("|")
    assert heavy.split() == []
    assert int(length) > 200  # the help was printed


def _python(code, **kwargs):
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, **kwargs)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()


def test_a_deferred_module_is_imported_on_its_first_attribute():
    """``defer_import``: an import statement binds the stand-in, a submodule imports without the package's
    ``__init__``, and the first attribute imports the real module, which then takes its place everywhere."""
    lines = _python(
        """
        import sys
        from hdbayes._entry import defer_import
        print(defer_import("scipy.stats"), defer_import("scipy.stats"), defer_import("hdbayes_no_such_module"))
        import scipy.stats
        import scipy.stats as stats
        print(type(sys.modules["scipy.stats"]).__name__, stats is sys.modules["scipy.stats"])
        import scipy.stats._qmc  # a submodule: the package's __init__ still waits
        print(type(sys.modules["scipy.stats"]).__name__)
        from scipy.stats import norm
        real = sys.modules["scipy.stats"]
        print(type(real).__name__, scipy.stats is real, norm.cdf(0.0), stats.norm is norm)
        print(real.qmc.Sobol is scipy.stats._qmc.Sobol)
        """
    )
    assert lines == [
        "True False False",
        "_DeferredModule True",
        "_DeferredModule",
        "module True 0.5 True",
        "True",
    ]


def _colon_like_csv(path, n=30, p=12):
    import numpy as np

    rng = np.random.default_rng(1)
    y = np.arange(n) % 2
    X = rng.poisson(3.0 + 2.0 * y[:, None], (n, p))
    rows = [",".join([*(f"g{j}" for j in range(p)), "class"])]
    rows += [",".join([*map(str, row), str(label)]) for row, label in zip(X.tolist(), y.tolist(), strict=True)]
    path.write_text("\n".join(rows) + "\n")
    return str(path)


@pytest.mark.parametrize(
    "options, deferred",
    [
        (["--model", "naive-bayes", "--n-features", "4", "--binarize", "median"], True),
        (["--model", "multinomial-nb"], True),
        # the discrete models' selector is scikit-learn's SelectorMixin: sklearn.feature_selection imports
        # sklearn.metrics, which imports scipy.stats; the job runs as before with it imported
        (["--model", "bernoulli-nb", "--n-features", "4", "--binarize", "median"], False),
    ],
    ids=["naive-bayes", "multinomial-nb", "bernoulli-nb-selecting"],
)
def test_the_command_defers_scipy_stats(tmp_path, options, deferred):
    """The console script's process does not import scipy.stats for a job that does not use it (about half of
    a small job's start-up), and a job that uses it gets it."""
    data = _colon_like_csv(tmp_path / "train.csv")
    argv = ["hdbayes", "classify", "--train", data, "--test", data, "--target", "class",
            "--out", str(tmp_path / "out.csv"), *options]  # fmt: skip
    lines = _python(
        f"""
        import sys
        sys.argv = {argv!r}
        from hdbayes._entry import main
        status = main()
        print(status, type(sys.modules.get("scipy.stats")).__name__)
        """
    )
    assert lines[-1] == f"0 {'_DeferredModule' if deferred else 'module'}"
    assert (tmp_path / "out.csv").read_text().count("\n") == 31


def test_main_called_from_python_defers_nothing():
    """``main(argv)`` from a caller's process leaves the caller's imports alone."""
    lines = _python(
        """
        import contextlib, io, sys
        from hdbayes._entry import main
        with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
            main(["--help"])
        print("scipy.stats" in sys.modules)
        """
    )
    assert lines == ["False"]


@pytest.mark.parametrize("argv", [["--help"], ["classify", "--help"], ["--version"]], ids=" ".join)
def test_the_console_script_help_imports_no_numerical_stack(argv):
    """As the console script (``main()`` reading ``sys.argv``), the help and the version import no scipy either:
    the deferral of scipy.stats, which has to import scipy to find it, is skipped for them."""
    lines = _python(
        f"""
        import contextlib, io, sys
        sys.argv = ["hdbayes", *{argv!r}]
        from hdbayes._entry import main
        with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
            main()
        print(" ".join(sorted({{m.split(".")[0] for m in sys.modules}} & {{"numpy", "scipy", "sklearn", "numba"}})))
        """
    )
    assert lines == [""] or lines == []
