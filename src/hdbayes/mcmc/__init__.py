"""Inference engines that know nothing about a particular model: the chain runner, the
trace and the slice sampler.

Exports follow the rule of :mod:`hdbayes` (explicit ``__all__``, imported lazily).
"""

from hdbayes import _lazy_exports

_EXPORTS = {  # module -> the names it exports
    ".chains": ("ChainDraws", "Schedule", "Trace", "chain_seeds", "run_chains"),
    ".slice": ("slice_sample",),
}

__all__ = [
    "ChainDraws", "Schedule", "Trace", "chain_seeds", "run_chains", "slice_sample",
]

__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS)
