"""High-order interaction models made feasible by compressing parameters (Li & Neal; thesis ch. 3).

* :mod:`hdbayes.interactions.patterns` — grouping of interaction patterns into superpatterns
  (patterns expressed by the same training cases), for sequences and for classification, and
  :func:`count_parameters`;
* :mod:`hdbayes.interactions.stable` — the Cauchy and Gaussian compressed priors and the
  splitting distributions of a compressed parameter (eq. 3.27–3.34);
* :mod:`hdbayes.interactions.sampler` — the compiled slice-sampling MCMC over compressed
  parameters and per-order widths σ_o, and prediction by splitting;
* :mod:`hdbayes.interactions.priors` — the compressed models' priors as parameter objects, :class:`CauchyPrior` and
  :class:`GaussianPrior` (the hyperparameters and the slice sampler's tuning);
* :mod:`hdbayes.interactions.models` — :class:`CompressedSequenceModel` and
  :class:`CompressedInteractionClassifier`.

Exports follow the rule of :mod:`hdbayes` (explicit ``__all__``, imported lazily).
"""

from hdbayes import _lazy_exports

_EXPORTS = {  # module -> the names it exports
    ".models": ("CompressedInteractionClassifier", "CompressedSequenceModel"),
    ".patterns": (
        "ClassificationGrouping", "SequenceGrouping", "count_parameters", "group_classification_patterns",
        "group_sequence_patterns",
    ),
    ".priors": ("CauchyPrior", "GaussianPrior"),
    ".stable": ("compressed_width", "log_prior", "split"),
}

__all__ = [
    "CauchyPrior", "ClassificationGrouping", "CompressedInteractionClassifier", "CompressedSequenceModel",
    "GaussianPrior", "SequenceGrouping", "compressed_width", "count_parameters", "group_classification_patterns",
    "group_sequence_patterns", "log_prior", "split",
]

__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS)
