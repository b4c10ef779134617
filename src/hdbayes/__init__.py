"""hdbayes: Bayesian classification and regression with very many features.

The estimators follow the scikit-learn API. Feature selection happens inside ``fit``
so that cross-validation stays honest and the models know how many features were
discarded, which is what the correction for selection bias needs.
"""

from hdbayes.selection_bias.naive_bayes import BiasCorrectedNaiveBayes

__all__ = ["BiasCorrectedNaiveBayes", "__version__"]
__version__ = "0.1.0"
