"""Correction for feature-selection bias (Li 2007 thesis ch. 2; Li 2009; docs/citing.md).

* :class:`BiasCorrectedNaiveBayes` — binary naive Bayes, α integrated by quadrature (thesis §2.3);
* :class:`BiasCorrectedMixture` — the two-component mixture model by MCMC (thesis §2.4), its sampler's settings
  :class:`MixtureSampler`;
* :class:`BiasCorrectedCategoricalNB` — G classes and L-level features, X² selection (issue 15);
* :class:`BiasCorrectedGaussianClassifier` — the Gaussian classifier with the F-statistic (Li 2009), its
  variants :class:`SharedSpread`, :class:`PerFeatureSpread` and :class:`PerClassVariance`
  (:mod:`~hdbayes.selection_bias.gaussian`);
* the adjustment factors q^{p−k}: :func:`naive_bayes_log_discard_probability`
  (:mod:`~hdbayes.selection_bias.adjustment`), :func:`mixture_log_discard_probability`
  (:mod:`~hdbayes.selection_bias.mixture_adjustment`),
  :func:`categorical_log_discard_probability` (:mod:`~hdbayes.selection_bias.categorical_adjustment`) and
  :class:`GaussianAdjustment` (:mod:`~hdbayes.selection_bias.gaussian.shared`).

Exports follow the rule of :mod:`hdbayes` (explicit ``__all__``, imported lazily).
"""

from hdbayes import _lazy_exports

_EXPORTS = {  # module -> the names it exports
    ".adjustment": ("naive_bayes_log_discard_probability",),
    ".categorical": ("BiasCorrectedCategoricalNB",),
    ".categorical_adjustment": ("categorical_log_discard_probability",),
    ".gaussian": ("BiasCorrectedGaussianClassifier", "PerClassVariance", "PerFeatureSpread", "SharedSpread"),
    ".gaussian.shared": ("GaussianAdjustment",),
    ".mixture": ("BiasCorrectedMixture", "MixtureSampler"),
    ".mixture_adjustment": ("mixture_log_discard_probability",),
    ".naive_bayes": ("BiasCorrectedNaiveBayes",),
}

__all__ = [
    "BiasCorrectedCategoricalNB",
    "BiasCorrectedGaussianClassifier",
    "BiasCorrectedMixture",
    "BiasCorrectedNaiveBayes",
    "GaussianAdjustment",
    "MixtureSampler",
    "PerClassVariance",
    "PerFeatureSpread",
    "SharedSpread",
    "categorical_log_discard_probability",
    "mixture_log_discard_probability",
    "naive_bayes_log_discard_probability",
]

__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS)
