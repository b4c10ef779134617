"""Group feature selection in linear regression with generalised spike-and-slab priors.

Hernández-Lobato, Hernández-Lobato & Dupont (JMLR 2013), restated in spec ``spike-slab-ep.md``:

* :mod:`~hdbayes.spike_slab.ep` — expectation propagation (site updates as pure functions, the
  parallel damped loop, the Woodbury and direct paths, the evidence eq. 28);
* :mod:`~hdbayes.spike_slab.exact` — exact enumeration of the 2^G configurations (the oracle);
* :mod:`~hdbayes.spike_slab.gibbs` — a collapsed Gibbs sampler for the same model;
* :mod:`~hdbayes.spike_slab.design` — sequential experimental design (spec §5);
* :mod:`~hdbayes.spike_slab.estimator` — the scikit-learn regressor :class:`GroupSpikeSlabRegression`;
* :mod:`~hdbayes.spike_slab.plotting` — the group-inclusion-probability plot.
"""

from .ep import EPResult, SiteParameters, check_groups, expectation_propagation
from .exact import ExactPosterior, exact_posterior

__all__ = [
    "EPResult",
    "ExactPosterior",
    "GroupSpikeSlabGibbs",
    "GroupSpikeSlabRegression",
    "SiteParameters",
    "check_groups",
    "exact_posterior",
    "expectation_propagation",
]


def __getattr__(name):
    if name == "GroupSpikeSlabGibbs":
        from .gibbs import GroupSpikeSlabGibbs

        return GroupSpikeSlabGibbs
    if name == "GroupSpikeSlabRegression":
        from .estimator import GroupSpikeSlabRegression

        return GroupSpikeSlabRegression
    raise AttributeError(f"module 'hdbayes.spike_slab' has no attribute {name!r}")
