"""High-order interaction models made feasible by compressing parameters (Li & Neal; thesis ch. 3).

Building blocks so far:

* :mod:`hdbayes.interactions.patterns` — grouping of interaction patterns into superpatterns
  (patterns expressed by the same training cases), for sequences and for classification, and
  :func:`count_parameters`;
* :mod:`hdbayes.interactions.stable` — the Cauchy and Gaussian compressed priors and the
  splitting distributions of a compressed parameter (eq. 3.27–3.34).

The compressed logistic models themselves (MCMC over the compressed parameters) are not
implemented yet.
"""

from hdbayes.interactions.patterns import (
    ClassificationGrouping,
    SequenceGrouping,
    count_parameters,
    group_classification_patterns,
    group_sequence_patterns,
)
from hdbayes.interactions.stable import compressed_width, log_prior, split

__all__ = [
    "ClassificationGrouping",
    "SequenceGrouping",
    "compressed_width",
    "count_parameters",
    "group_classification_patterns",
    "group_sequence_patterns",
    "log_prior",
    "split",
]
