"""hdbayes: Bayesian classification and regression with very many features.

The estimators follow the scikit-learn API. Feature selection happens inside ``fit``
so that cross-validation stays honest and the models know how many features were
discarded, which is what the correction for selection bias needs.

Estimators are imported lazily, so ``import hdbayes`` stays cheap.
"""

from importlib import import_module

__version__ = "0.1.0"

_ESTIMATORS = {
    "BayesianBernoulliNB": "hdbayes.discrete.naive_bayes",
    "BayesianCategoricalNB": "hdbayes.discrete.naive_bayes",
    "BayesianMultinomialNB": "hdbayes.discrete.naive_bayes",
    "BiasCorrectedGaussianClassifier": "hdbayes.selection_bias.gaussian",
    "BiasCorrectedMixture": "hdbayes.selection_bias.mixture",
    "BiasCorrectedNaiveBayes": "hdbayes.selection_bias.naive_bayes",
    "CompressedInteractionClassifier": "hdbayes.interactions.models",
    "CompressedSequenceModel": "hdbayes.interactions.models",
    "DCMClassifier": "hdbayes.discrete.dcm",
    "FeatureBinarizer": "hdbayes.binarizer",
    "GroupSpikeSlabGibbs": "hdbayes.spike_slab.gibbs",
    "GroupSpikeSlabRegression": "hdbayes.spike_slab.estimator",
    "MutualInformationSelector": "hdbayes.discrete.mutual_information",
    "ShrunkCovarianceWhitener": "hdbayes.preprocessing",
}

__all__ = [*_ESTIMATORS, "__version__"]


def __getattr__(name):
    if name in _ESTIMATORS:
        return getattr(import_module(_ESTIMATORS[name]), name)
    raise AttributeError(f"module 'hdbayes' has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
