"""The experiments of the papers that ``hdbayes reproduce NAME`` runs: name, module, one-line description.

Each module has ``run(full=False, random_state=0, progress=..., n_jobs=None, ...)`` returning a
:class:`~hdbayes.experiments._report.Report`. Importing this registry imports none of the experiment
modules (they are imported when run), so the command line's ``--help`` stays fast.
"""

from __future__ import annotations

from importlib import import_module
from typing import NamedTuple

__all__ = ["EXPERIMENTS", "Experiment"]


class Experiment(NamedTuple):
    """One reproducible experiment.

    Attributes
    ----------
    name : str
        The name given to ``hdbayes reproduce``.
    module : str
        The module with the experiment's ``run`` function.
    description : str
        One line, shown by ``hdbayes reproduce --help``.
    """

    name: str
    module: str
    description: str

    def load(self):
        """Import and return the experiment's module."""
        return import_module(self.module)


_PACKAGE = "hdbayes.experiments"

EXPERIMENTS = {
    experiment.name: experiment
    for experiment in (
        Experiment(
            "naive-bayes-simulation",
            f"{_PACKAGE}.naive_bayes_simulation",
            "naive Bayes with and without correction for selection bias on simulated data (thesis §2.3.5)",
        ),
        Experiment("colon", f"{_PACKAGE}.colon", "the colon cancer genes with corrected naive Bayes (thesis §2.3.6)"),
        Experiment(
            "mixture-simulation",
            f"{_PACKAGE}.mixture_simulation",
            "the two-component mixture model with and without correction on simulated data (thesis §2.4.4)",
        ),
        Experiment(
            "gaussian-simulation",
            f"{_PACKAGE}.gaussian_simulation",
            "the Gaussian classifier with and without correction on simulated data (Li 2009 §4.1)",
        ),
        Experiment(
            "srbct", f"{_PACKAGE}.srbct", "the SRBCT tumour genes with the corrected Gaussian model (Li 2009 §4.2)"
        ),
        Experiment(
            "lymphoma", f"{_PACKAGE}.lymphoma", "the lymphoma genes with the corrected Gaussian model (Li 2009)"
        ),
        Experiment(
            "interaction-counts",
            f"{_PACKAGE}.interaction_counts",
            "how many parameters compressing interaction patterns saves (thesis §3.4.3, §3.5.2)",
        ),
        Experiment(
            "hmm",
            f"{_PACKAGE}.hmm",
            "compressed sequence models on data from a hidden Markov model (thesis §3.4.3)",
        ),
        Experiment(
            "english-text",
            f"{_PACKAGE}.english_text",
            "compressed sequence models predicting the characters of English text (thesis §3.4.5)",
        ),
        Experiment(
            "cauchy-classification",
            f"{_PACKAGE}.cauchy_classification",
            "compressed interaction classifiers on data from a Cauchy interaction model (thesis §3.5.3)",
        ),
        Experiment(
            "discrete-models",
            f"{_PACKAGE}.discrete_models",
            "conjugate models, the number game, Bayesian naive Bayes and the DCM on discrete data",
        ),
        Experiment(
            "group-sparse-reconstruction",
            f"{_PACKAGE}.group_sparse_reconstruction",
            "group spike-and-slab regression by EP reconstructing block-sparse signals",
        ),
        Experiment(
            "prior-knowledge",
            f"{_PACKAGE}.prior_knowledge",
            "group spike-and-slab regression with a prior favouring groups known to matter",
        ),
    )
}
