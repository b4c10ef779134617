"""The experiments of the papers that ``hdbayes reproduce NAME`` runs: name, module, one-line description.

Each module has ``run(full=False, random_state=0, progress=..., n_jobs=None, ...)`` returning a
:class:`~hdbayes.experiments._report.Report`. Importing this registry imports none of the experiment
modules (they are imported when run), so the command line's ``--help`` stays fast.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from types import ModuleType

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

    def load(self) -> ModuleType:
        """Import and return the experiment's module.

        Returns
        -------
        module
            The module ``hdbayes.experiments.<name>``, whose ``run`` runs the experiment.
        """
        return import_module(self.module)


def _experiment(name, description):
    """The experiment ``name``, run by the module of hdbayes.experiments named alike (``-`` → ``_``)."""
    return Experiment(name, f"hdbayes.experiments.{name.replace('-', '_')}", description)


#: Every reproducible experiment: its name (as given to ``hdbayes reproduce``) → its :class:`Experiment`.
#:
#: ``EXPERIMENTS[name].load().run()`` runs one.
EXPERIMENTS = {
    experiment.name: experiment
    for experiment in (
        _experiment(
            "naive-bayes-simulation",
            "naive Bayes with and without correction for selection bias on simulated data (thesis §2.3.5)",
        ),
        _experiment(
            "categorical-simulation",
            "naive Bayes for G classes and L-level features with and without correction, simulated (issue 15)",
        ),
        _experiment("colon", "the colon cancer genes with corrected naive Bayes (thesis §2.3.6)"),
        _experiment(
            "mixture-simulation",
            "the two-component mixture model with and without correction on simulated data (thesis §2.4.4)",
        ),
        _experiment(
            "gaussian-simulation",
            "the Gaussian classifier with and without correction on simulated data (Li 2009 §4.1)",
        ),
        _experiment("srbct", "the SRBCT tumour genes with the corrected Gaussian model (Li 2009 §4.2)"),
        _experiment("lymphoma", "the lymphoma genes with the corrected Gaussian model (Li 2009)"),
        _experiment(
            "interaction-counts",
            "how many parameters compressing interaction patterns saves (thesis §3.4.3, §3.5.2)",
        ),
        _experiment("hmm", "compressed sequence models on data from a hidden Markov model (thesis §3.4.3)"),
        _experiment(
            "english-text",
            "compressed sequence models predicting the characters of English text (thesis §3.4.5)",
        ),
        _experiment(
            "cauchy-classification",
            "compressed interaction classifiers on data from a Cauchy interaction model (thesis §3.5.3)",
        ),
        _experiment(
            "discrete-models",
            "conjugate models, the number game, Bayesian naive Bayes and the DCM on discrete data",
        ),
        _experiment(
            "group-sparse-reconstruction",
            "group spike-and-slab regression by EP reconstructing block-sparse signals",
        ),
        _experiment("prior-knowledge", "group spike-and-slab regression with a prior favouring groups known to matter"),
    )
}
