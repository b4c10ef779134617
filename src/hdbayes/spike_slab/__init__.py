"""Group feature selection in linear regression with generalised spike-and-slab priors.

Hernández-Lobato, Hernández-Lobato & Dupont (JMLR 2013; "the paper" below):

* :mod:`~hdbayes.spike_slab.model` — the model every engine shares: groups, priors and their checks,
  centring of X and y, the evidence fixed point over the hyperparameters (paper §2;
  the fixed point is this library's, docs/spike_slab.md);
* :mod:`~hdbayes.spike_slab.ep` — expectation propagation (site updates as pure functions, the
  parallel damped loop, the Woodbury and direct paths, the evidence eq. 28);
* :mod:`~hdbayes.spike_slab.exact` — exact enumeration of the 2^G configurations (the oracle);
* :mod:`~hdbayes.spike_slab.gibbs` — a collapsed Gibbs sampler for the same model;
* :mod:`~hdbayes.spike_slab.design` — sequential experimental design (paper §4);
* :mod:`~hdbayes.spike_slab.estimator` — the scikit-learn regressor :class:`GroupSpikeSlabRegression`;
* :mod:`~hdbayes.spike_slab.plotting` — the group-inclusion-probability plot.

Exports follow the rule of :mod:`hdbayes` (explicit ``__all__``, imported lazily).
"""

from hdbayes import _lazy_exports

_EXPORTS = {  # module -> the names it exports
    ".ep": ("EPResult", "SiteParameters", "expectation_propagation"),
    ".estimator": ("GroupSpikeSlabRegression",),
    ".exact": ("ExactPosterior", "exact_posterior"),
    ".gibbs": ("GroupSpikeSlabGibbs",),
    ".model": ("check_groups",),
}

__all__ = [
    "EPResult", "ExactPosterior", "GroupSpikeSlabGibbs", "GroupSpikeSlabRegression", "SiteParameters",
    "check_groups", "exact_posterior", "expectation_propagation",
]

__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS)
