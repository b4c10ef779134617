"""The experiments of the papers, run by ``hdbayes reproduce NAME``: the registry :data:`EXPERIMENTS`.

Exports follow the rule of :mod:`hdbayes` (explicit ``__all__``, imported lazily). The experiment
modules themselves (``hdbayes.experiments.colon`` ...) are imported only when run.
"""

from hdbayes import _lazy_exports

_EXPORTS = {  # module -> the names it exports
    ".registry": ("EXPERIMENTS", "Experiment"),
}

__all__ = [
    "EXPERIMENTS", "Experiment",
]

__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS)
