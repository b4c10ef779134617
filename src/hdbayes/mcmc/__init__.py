"""Inference engines that know nothing about a particular model: the chain runner, the
trace and the slice sampler.

Exports follow the rule of :mod:`hdbayes` (explicit ``__all__``, imported lazily).
"""

from hdbayes import _lazy_exports

_EXPORTS = {
    "ChainDraws": ".chains",
    "Schedule": ".chains",
    "Trace": ".chains",
    "chain_seeds": ".chains",
    "run_chains": ".chains",
    "slice_sample": ".slice",
}

__all__ = ["ChainDraws", "Schedule", "Trace", "chain_seeds", "run_chains", "slice_sample"]

__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS)
