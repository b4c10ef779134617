"""The experiments of the papers, run by ``hdbayes reproduce NAME``: the registry :data:`EXPERIMENTS`."""

from hdbayes.experiments.registry import EXPERIMENTS, Experiment

__all__ = ["EXPERIMENTS", "Experiment"]
