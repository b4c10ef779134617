"""The Bayesian Gaussian classifier with F-statistic selection and bias correction (Li 2009, 2012).

* :class:`BiasCorrectedGaussianClassifier` (:mod:`~hdbayes.selection_bias.gaussian.estimator`) — the estimator;
  it looks its ``variant`` up and runs that variant's chain;
* the variants, one module each with its prior (a parameter object), its adjustment factor and its chain:
  :class:`SharedSpread` (:mod:`~hdbayes.selection_bias.gaussian.shared`, ``"shared"``, Li 2009),
  :class:`PerFeatureSpread` (:mod:`~hdbayes.selection_bias.gaussian.per_feature`, ``"per-feature"``, Li 2012)
  and :class:`PerClassVariance` (:mod:`~hdbayes.selection_bias.gaussian.per_class`, ``"per-class"``), on the
  base of :mod:`~hdbayes.selection_bias.gaussian._variant`; the numerics their factors share are in
  :mod:`~hdbayes.selection_bias.gaussian._factor`, the compiled chain of the two models with global scales in
  :mod:`~hdbayes.selection_bias.gaussian._scales_kernel`;
* the predictive from the draws (:mod:`~hdbayes.selection_bias.gaussian.predict`), shared by the variants.

Exports follow the rule of :mod:`hdbayes` (explicit ``__all__``, imported lazily).
"""

from hdbayes import _lazy_exports

_EXPORTS = {  # module -> the names it exports
    "hdbayes.statistics.gaussian_moments": ("class_statistics",),
    ".estimator": ("BiasCorrectedGaussianClassifier",),
    ".per_class": (
        "ALPHA2_GRID",
        "ClassVarianceGridAdjustment",
        "PerClassVariance",
        "PerClassVarianceAdjustment",
        "per_class_chain",
        "plug_in_class_scale",
    ),
    ".per_feature": ("PerFeatureGaussianAdjustment", "PerFeatureSpread", "per_feature_chain"),
    ".predict": ("log_class_numerators", "rao_blackwell_log_class_numerators"),
    ".shared": ("GaussianAdjustment", "SharedSpread", "gibbs_chain"),
}

__all__ = [
    "ALPHA2_GRID",
    "BiasCorrectedGaussianClassifier",
    "ClassVarianceGridAdjustment",
    "GaussianAdjustment",
    "PerClassVariance",
    "PerClassVarianceAdjustment",
    "PerFeatureGaussianAdjustment",
    "PerFeatureSpread",
    "SharedSpread",
    "class_statistics",
    "gibbs_chain",
    "log_class_numerators",
    "per_class_chain",
    "per_feature_chain",
    "plug_in_class_scale",
    "rao_blackwell_log_class_numerators",
]

__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS)
