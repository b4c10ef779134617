"""Inference engines that know nothing about a particular model.

Exports follow the rule of :mod:`hdbayes` (explicit ``__all__``, imported lazily).
"""

from hdbayes import _lazy_exports

_EXPORTS = {"slice_sample": ".slice"}

__all__ = ["slice_sample"]

__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS)
