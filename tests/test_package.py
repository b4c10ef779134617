"""The package's public surface: lazy exports, experiment registry and their contracts."""

from __future__ import annotations

import inspect
from importlib import import_module

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
