"""hdbayes: Bayesian classification and regression with very many features.

The estimators follow the scikit-learn API. Feature selection happens inside ``fit``
so that cross-validation stays honest and the models know how many features were
discarded, which is what the correction for selection bias needs.

Export rule, followed by every package ``__init__`` of hdbayes (this one and each
subpackage's; ``tests/test_package.py`` checks it):

1. The package's public names are listed in an explicit, sorted ``__all__``; each is
   defined in a submodule, and a table ``_EXPORTS`` maps each submodule to the names of
   ``__all__`` it defines (every name but ``__version__`` once; nothing else).
2. The names are imported lazily, on first use, by the module ``__getattr__`` that
   :func:`_lazy_exports` builds (PEP 562); ``dir()`` lists them. ``from hdbayes.discrete
   import DCMClassifier`` and ``hdbayes.discrete.DCMClassifier`` both work.
3. An ``__init__`` imports nothing else (no numpy, scipy, numba, scikit-learn), so
   ``import hdbayes`` or ``import hdbayes.<subpackage>`` costs milliseconds; the cost is
   paid by the first name used.

The top level exports the estimators and transformers (each a scikit-learn
``BaseEstimator``) and ``__version__``; the subpackages export their public API.

``__version__`` has one source, the ``version`` of ``pyproject.toml``: it is read from the installed
distribution's metadata (:func:`importlib.metadata.version`) on first access, like the other names, so
that ``import hdbayes`` does not pay for :mod:`importlib.metadata`.
"""

import sys
from importlib import import_module

__version__: str  # bound on first access by __getattr__ below, from the distribution's metadata

_EXPORTS = {  # module -> the names it exports
    "hdbayes.binarizer": ("FeatureBinarizer",),
    "hdbayes.discrete.dcm": ("DCMClassifier",),
    "hdbayes.discrete.mutual_information": ("MutualInformationSelector",),
    "hdbayes.discrete.naive_bayes": ("BayesianBernoulliNB", "BayesianCategoricalNB", "BayesianMultinomialNB"),
    "hdbayes.interactions.models": ("CompressedInteractionClassifier", "CompressedSequenceModel"),
    "hdbayes.linear.estimator": ("BayesianLinearClassifier",),
    "hdbayes.preprocessing": ("ShrunkCovarianceWhitener",),
    "hdbayes.selection_bias.categorical": ("BiasCorrectedCategoricalNB",),
    "hdbayes.selection_bias.gaussian": ("BiasCorrectedGaussianClassifier",),
    "hdbayes.selection_bias.mixture": ("BiasCorrectedMixture",),
    "hdbayes.selection_bias.naive_bayes": ("BiasCorrectedNaiveBayes",),
    "hdbayes.spike_slab.estimator": ("GroupSpikeSlabRegression",),
    "hdbayes.spike_slab.gibbs": ("GroupSpikeSlabGibbs",),
}

__all__ = [
    "BayesianBernoulliNB", "BayesianCategoricalNB", "BayesianLinearClassifier", "BayesianMultinomialNB",
    "BiasCorrectedCategoricalNB", "BiasCorrectedGaussianClassifier", "BiasCorrectedMixture",
    "BiasCorrectedNaiveBayes", "CompressedInteractionClassifier", "CompressedSequenceModel", "DCMClassifier",
    "FeatureBinarizer", "GroupSpikeSlabGibbs", "GroupSpikeSlabRegression", "MutualInformationSelector",
    "ShrunkCovarianceWhitener",
    "__version__",
]


def _lazy_exports(package, exports):
    """The module ``__getattr__`` and ``__dir__`` of a package that exports ``exports`` lazily (PEP 562).

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    exports : dict of str to tuple of str
        Each module, absolute (``"hdbayes.discrete.dcm"``) or relative to the package
        (``".dcm"``) → the names it exports.

    Returns
    -------
    __getattr__, __dir__ : callables
        To assign to the package's module globals of the same names. The first access to a
        name imports its module and stores the value in the package, so later accesses are
        plain attribute look-ups.
    """
    exports = {name: module for module, names in exports.items() for name in names}

    def __getattr__(name):
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(exports[name], package), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__():
        return sorted(set(vars(sys.modules[package])) | set(exports))

    return __getattr__, __dir__


_exported_getattr, _exported_dir = _lazy_exports(__name__, _EXPORTS)


def __getattr__(name: str) -> object:
    if name == "__version__":
        from importlib.metadata import version

        value = version(__name__)
        globals()["__version__"] = value
        return value
    return _exported_getattr(name)


def __dir__() -> list[str]:
    return sorted(set(_exported_dir()) | {"__version__"})
