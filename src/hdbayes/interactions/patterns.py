"""Grouping interaction patterns into superpatterns (Li & Neal; thesis §3.3–3.5, eq. 3.44–3.49).

A pattern fixes the values of some discrete inputs; its *expression* E is the set of
training cases that have those values. The coefficients of patterns with the same
expression enter the likelihood only through their sum (thesis eq. 3.9–3.10), so they
form one **group** and the model samples one compressed parameter s_g per group and
class. Patterns expressed by no training case do not enter the likelihood at all.

Everything here depends on the training **inputs** only (never on the responses), so the
grouping — and therefore the numbers of original and compressed parameters — is the same
for every class ("per class" counts). Each group records

* its expression, as CSR-like arrays ``case_indices[case_indptr[g]:case_indptr[g + 1]]``
  (sorted training-case indices, 0-based);
* ``order_counts[g, o]`` = n_{g,o}, the number of its patterns of order o, from which the
  compressed prior width is W_g = Σ_o n_{g,o} σ_o^α (α = 1: Cauchy scale, α = 2: Gaussian
  variance; thesis eq. 3.12, 3.49).

The two kinds of model group their patterns in their own modules, whose public names this module gathers:

* sequences — :mod:`hdbayes.interactions.sequence_patterns` (:func:`group_sequence_patterns`, thesis §3.4.1);
* classification — :mod:`hdbayes.interactions.classification_patterns` (:func:`group_classification_patterns`,
  thesis §3.5.1);
* what both share (input checks, :class:`ExpressedGroups`, the grouping base) —
  :mod:`hdbayes.interactions._grouping`;

and :func:`count_parameters` counts the original and compressed parameters of either (thesis §3.4.3, §3.5.2).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hdbayes.interactions._grouping import ExpressedGroups
from hdbayes.interactions.classification_patterns import ClassificationGrouping, group_classification_patterns
from hdbayes.interactions.sequence_patterns import SequenceGrouping, group_sequence_patterns

if TYPE_CHECKING:
    from typing import Literal

    from numpy.typing import ArrayLike

__all__ = [
    "ClassificationGrouping",
    "ExpressedGroups",
    "SequenceGrouping",
    "count_parameters",
    "group_classification_patterns",
    "group_sequence_patterns",
]


def count_parameters(
    X: ArrayLike, order: int, kind: Literal["sequence", "classification"] = "sequence"
) -> tuple[int, int]:
    """The numbers of original and compressed parameters **per class** (as counted in thesis §3.4.3).

    Parameters
    ----------
    X : array_like of shape (N, O) or (N, p)
        Training inputs (see :func:`group_sequence_patterns` /
        :func:`group_classification_patterns`).
    order : int
        Highest order of the patterns.
    kind : {"sequence", "classification"}
        Suffix patterns of histories, or patterns over any ≤ ``order`` features.

    Returns
    -------
    n_original : int
        Distinct patterns of order ≤ ``order`` (intercept included) expressed by at least
        one training case.
    n_compressed : int
        Number of distinct non-empty expressions = groups = compressed parameters.

    Notes
    -----
    The grouping uses the inputs only, so both counts are the same for every class; a
    model with K sampled coefficient sets has K times as many in total (K ≥ 3; one set
    for K = 2).
    """
    if kind == "sequence":
        grouping = group_sequence_patterns(X, order)
    elif kind == "classification":
        grouping = group_classification_patterns(X, order)
    else:
        raise ValueError(f"kind must be 'sequence' or 'classification', got {kind!r}")
    return grouping.n_patterns, grouping.n_groups
