"""The package's public surface: the export rule of every package, experiment registry and their contracts."""

from __future__ import annotations

import inspect
import pkgutil
import subprocess
import sys
from importlib import import_module
from pathlib import Path

import pytest
from sklearn.base import BaseEstimator

import hdbayes
from hdbayes.experiments import EXPERIMENTS


@pytest.mark.parametrize("name", sorted(set(hdbayes.__all__) - {"__version__"}))
def test_every_export_is_an_estimator(name):
    obj = getattr(hdbayes, name)
    assert inspect.isclass(obj) and issubclass(obj, BaseEstimator)
    assert name in dir(hdbayes)


def test_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        hdbayes.Nope  # noqa: B018


@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_every_experiment_has_the_run_interface(name):
    experiment = EXPERIMENTS[name]
    assert experiment.name == name and experiment.module.startswith("hdbayes.experiments.")
    assert experiment.description and "\n" not in experiment.description and len(experiment.description) <= 100
    module = experiment.load()
    assert module is import_module(experiment.module)
    parameters = inspect.signature(module.run).parameters
    assert list(parameters)[:4] == ["full", "random_state", "progress", "n_jobs"]
    assert parameters["full"].default is False


def test_the_cli_reads_the_registry_of_the_experiments_package():
    import hdbayes.cli as cli

    assert cli.EXPERIMENTS is EXPERIMENTS


# the export rule written in hdbayes/__init__.py, checked for the top level and every subpackage
PACKAGES = ["hdbayes", *sorted(f"hdbayes.{m.name}" for m in pkgutil.iter_modules(hdbayes.__path__) if m.ispkg)]
HEAVY = ("numba", "scipy", "sklearn")


def test_every_subpackage_is_checked():
    assert {"hdbayes.datasets", "hdbayes.selection_bias", "hdbayes.spike_slab", "hdbayes.experiments"} <= set(PACKAGES)


@pytest.mark.parametrize("package", PACKAGES)
def test_every_package_follows_the_export_rule(package):
    module = import_module(package)
    names = module.__all__
    assert isinstance(names, list) and names == sorted(names) and len(set(names)) == len(names)
    source = {name: where for where, exported in module._EXPORTS.items() for name in exported}
    assert sum(map(len, module._EXPORTS.values())) == len(source)  # no name exported twice
    assert set(source) == set(names) - {"__version__"}
    for name in names:
        value = getattr(module, name)
        assert name in dir(module)
        if name != "__version__":
            assert getattr(import_module(source[name], package), name) is value
    with pytest.raises(AttributeError, match=f"module '{package}' has no attribute 'not_exported'"):
        module.not_exported  # noqa: B018


@pytest.mark.parametrize("package", PACKAGES)
def test_importing_a_package_imports_no_heavy_dependency(package):
    """``import hdbayes`` and every subpackage stay cheap: numba, scipy and scikit-learn wait for a first use."""
    code = (
        f"import sys; import {package}; "
        f"print(' '.join(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == []


# -- the layers of docs/architecture.md: a module imports only from lower layers -----------------------------

LAYERS = [
    {"__init__", "exceptions", "_numba", "_threads", "special", "metrics", "plotting", "_parameters"},  # foundations
    {"_validation", "_io"},  # input checks and file writing
    # shared statistics and rules, the core, the contract, the compiled special functions
    {"selection", "statistics", "quadrature", "mcmc", "base", "_special_kernels"},
    {"selection_bias", "discrete", "interactions", "spike_slab", "linear", "preprocessing", "binarizer", "datasets"},
    {"experiments"},  # the papers' experiments
    {"cli"},  # the command line
    {"_entry"},  # the console script: imports the command line inside its Ctrl-C handler
    {"__main__"},  # python -m hdbayes
]
# inside a layer only the core may use itself (base runs chains through mcmc; the statistics use selection's
# correlation); model packages stay apart
SAME_LAYER_ALLOWED = {("base", "mcmc"), ("statistics", "selection")}


def _imports_by_unit():
    import ast

    root = Path(hdbayes.__file__).parent
    edges = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root).with_suffix("").parts
        unit = parts[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    folder = path.relative_to(root).parent.parts
                    package = ".".join(("hdbayes",) + folder[: len(folder) - node.level + 1])
                    names = [package + ("." + node.module if node.module else "")]
                else:
                    names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                if name.startswith("hdbayes."):
                    target = name.split(".")[1]
                else:
                    target = "__init__" if name == "hdbayes" else None
                if target and target != unit:
                    edges.setdefault(unit, set()).add((target, str(path.relative_to(root))))
    return edges


def test_every_module_imports_only_from_lower_layers():
    layer_of = {unit: i for i, layer in enumerate(LAYERS) for unit in layer}
    edges = _imports_by_unit()
    assert set(edges) <= set(layer_of), f"units missing from LAYERS: {set(edges) - set(layer_of)}"
    wrong = [
        f"{where} imports {target}"
        for unit, targets in edges.items()
        for target, where in targets
        if layer_of[target] > layer_of[unit]
        or (layer_of[target] == layer_of[unit] and (unit, target) not in SAME_LAYER_ALLOWED)
    ]
    assert not wrong, wrong
