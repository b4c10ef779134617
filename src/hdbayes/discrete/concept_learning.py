"""Bayesian concept learning: the number game (Murphy §3.2).

A concept is a set; hypotheses h are finite sets of integers (their extensions). The
examples D = (x_1..x_N) are positive examples drawn uniformly from the concept, so

    p(D | h) = I(D ⊆ h) / |h|^N                                   (size principle)
    p(h | D) = I(D ⊆ h) p(h) |h|^{-N} / Σ_h' I(D ⊆ h') p(h') |h'|^{-N}

(the summary of Murphy's chapter that this package follows drops |h|^{-N}, which would remove the size principle).
Predictions average over hypotheses (Bayes model averaging):

    p(x̃ ∈ C | D) = Σ_h I(x̃ ∈ h) p(h | D)          (generalisation, membership)
    p(x̃ | D)     = Σ_h I(x̃ ∈ h)/|h| · p(h | D)    (the next example's pmf)

and the plug-in approximation uses h_MAP only. As N grows, p(h | D) tends to a point
mass on h_MAP (δ_{h_MAP}(h), not h_MAP itself) and MAP → MLE.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import logsumexp

from hdbayes.exceptions import InputValueError

if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Self

__all__ = ["BayesianConceptLearner", "number_game_hypotheses"]


def number_game_hypotheses(n_max: int = 100) -> dict[str, frozenset[int]]:
    """The hypothesis space of Murphy's number game over 1..n_max.

    Even, odd, squares, powers of k (2..10), multiples of k (3..10), numbers ending in d (1..9),
    powers of 2 plus 37 / minus 32, and all intervals [a, b] with 1 ≤ a ≤ b ≤ n_max of length ≥ 2
    up to 20 (an [EXT] choice).

    Parameters
    ----------
    n_max : int, default=100
        The largest number of the universe 1..n_max.

    Returns
    -------
    dict of str to frozenset of int
        Each hypothesis's name and its extension.

    Examples
    --------
    >>> h = number_game_hypotheses()
    >>> sorted(h["powers of 2"]), len(h["even"])
    ([2, 4, 8, 16, 32, 64], 50)
    """
    if isinstance(n_max, bool) or not isinstance(n_max, int) or n_max < 10:
        shown = n_max if isinstance(n_max, (int, float)) else type(n_max).__name__
        raise InputValueError(f"n_max must be an integer >= 10, got {shown}")
    universe = range(1, n_max + 1)
    hypotheses = {
        "even": frozenset(x for x in universe if x % 2 == 0),
        "odd": frozenset(x for x in universe if x % 2 == 1),
        "squares": frozenset(x for x in universe if round(x**0.5) ** 2 == x),
    }
    for k in range(2, 11):
        hypotheses[f"powers of {k}"] = frozenset(k**e for e in range(1, 64) if k**e <= n_max)
    for k in range(3, 11):
        hypotheses[f"multiples of {k}"] = frozenset(x for x in universe if x % k == 0)
    for d in range(1, 10):
        hypotheses[f"ends in {d}"] = frozenset(x for x in universe if x % 10 == d)
    hypotheses["powers of 2 + {37}"] = hypotheses["powers of 2"] | {37}
    hypotheses["powers of 2 - {32}"] = hypotheses["powers of 2"] - {32}
    for a in range(1, n_max + 1):
        for b in range(a + 1, min(a + 20, n_max + 1)):
            hypotheses[f"interval {a}-{b}"] = frozenset(range(a, b + 1))
    return hypotheses


class BayesianConceptLearner:
    """Posterior over a finite hypothesis space from positive examples (Murphy §3.2).

    Parameters
    ----------
    hypotheses : mapping of str to collection of int
        Hypothesis names and their extensions (non-empty finite sets).
    prior : mapping of str to float, optional
        Prior weights (normalised; zeros allowed, e.g. a restricted learner); uniform by default.

    Attributes
    ----------
    hypothesis_names_ : list of str
    log_prior_, log_likelihood_, log_posterior_, posterior_ : ndarray of shape (n_hypotheses,)
        log p(h), log p(D | h) (−inf when D ⊄ h), log p(h | D), p(h | D).
    map_hypothesis_, mle_hypothesis_ : str
        argmax of log p(D | h) + log p(h) and of log p(D | h) (ties: the first in order).

    Examples
    --------
    >>> learner = BayesianConceptLearner({"even": range(2, 101, 2), "powers of 2": [2, 4, 8, 16, 32, 64]})
    >>> learner.fit([16]).posterior_.round(6).tolist()          # 25/28 for powers of 2
    [0.107143, 0.892857]
    >>> learner.predict_membership([32, 6, 3]).round(6).tolist()
    [1.0, 0.107143, 0.0]
    """

    def __init__(self, hypotheses: Mapping[str, Collection[int]], prior: Mapping[str, float] | None = None) -> None:
        self.hypotheses = hypotheses
        self.prior = prior

    def _check(self):
        if not isinstance(self.hypotheses, Mapping) or len(self.hypotheses) == 0:
            raise InputValueError("hypotheses must be a non-empty mapping of names to sets of integers")
        names = list(self.hypotheses)
        extensions = []
        for name in names:
            values = np.unique(np.asarray(list(self.hypotheses[name])))
            if values.size == 0:
                raise InputValueError(f"hypothesis {name!r} is empty")
            if not np.issubdtype(values.dtype, np.integer):
                raise InputValueError(f"hypothesis {name!r} must hold integers")
            extensions.append(values)
        universe = np.unique(np.concatenate(extensions))
        membership = np.zeros((len(names), universe.shape[0]), dtype=bool)
        for row, values in enumerate(extensions):
            membership[row, np.searchsorted(universe, values)] = True
        if self.prior is None:
            weights = np.ones(len(names))
        else:
            unknown = set(self.prior) - set(names)
            if unknown:
                raise InputValueError(f"prior names hypotheses that do not exist: {sorted(unknown)}")
            weights = np.array([float(self.prior.get(name, 0.0)) for name in names])
            if not np.all(np.isfinite(weights)) or np.any(weights < 0) or weights.sum() <= 0:
                raise InputValueError("prior weights must be finite, >= 0 and not all 0")
        return names, universe, membership, weights / weights.sum()

    def _lookup(self, xs):
        """Columns of ``xs`` in the universe (−1 for values in no hypothesis)."""
        xs = np.asarray(xs)
        if xs.ndim != 1 or (xs.size and not np.issubdtype(xs.dtype, np.integer)):
            raise InputValueError("examples must be a 1-D sequence of integers")
        position = np.clip(np.searchsorted(self._universe, xs), 0, self._universe.shape[0] - 1)
        return np.where(self._universe[position] == xs, position, -1)

    def fit(self, D: Iterable[int]) -> Self:
        """Posterior after the positive examples D (repeats count; D = [] gives the prior).

        Parameters
        ----------
        D : sequence of int
            The positive examples.

        Returns
        -------
        self
            The fitted learner.

        Raises
        ------
        InputValueError
            If no hypothesis with positive prior contains every example.
        """
        names, self._universe, self._membership, prior = self._check()
        self.hypothesis_names_ = names
        columns = self._lookup(D)
        sizes = self._membership.sum(axis=1)
        consistent = np.all(self._membership[:, columns[columns >= 0]], axis=1) & np.all(columns >= 0)
        with np.errstate(divide="ignore"):
            self.log_prior_ = np.log(prior)
            self.log_likelihood_ = np.where(consistent, -columns.shape[0] * np.log(sizes), -np.inf)
        joint = self.log_prior_ + self.log_likelihood_
        evidence = logsumexp(joint)
        if not np.isfinite(evidence):
            raise InputValueError("no hypothesis with positive prior probability contains every example")
        self.log_posterior_ = joint - evidence
        self.posterior_ = np.exp(self.log_posterior_)
        self.map_hypothesis_ = names[int(np.argmax(joint))]
        self.mle_hypothesis_ = names[int(np.argmax(self.log_likelihood_))]
        return self

    def _weights(self, plugin):
        if not hasattr(self, "posterior_"):
            raise InputValueError("this BayesianConceptLearner is not fitted yet; call fit(D) first")
        if plugin:
            return (np.array(self.hypothesis_names_) == self.map_hypothesis_).astype(np.float64)
        return self.posterior_

    def _indicators(self, xs):
        columns = self._lookup(xs)
        inside = np.zeros((self._membership.shape[0], columns.shape[0]))
        known = columns >= 0
        inside[:, known] = self._membership[:, columns[known]]
        return inside

    def predict_membership(self, xs: Iterable[int], plugin: bool = False) -> np.ndarray:
        """p(x̃ ∈ C | D) = Σ_h I(x̃ ∈ h) p(h | D) for each x̃.

        Parameters
        ----------
        xs : sequence of int
            The numbers x̃ to ask about.
        plugin : bool, default=False
            Use the MAP hypothesis h_MAP alone instead of averaging over the posterior.

        Returns
        -------
        ndarray of shape (len(xs),)
            The probability that each x̃ belongs to the concept.
        """
        return self._weights(plugin) @ self._indicators(xs)

    def predictive_pmf(self, xs: Iterable[int], plugin: bool = False) -> np.ndarray:
        """p(x̃ | D) = Σ_h I(x̃ ∈ h)/|h| · p(h | D), the next example's probability.

        Parameters
        ----------
        xs : sequence of int
            The numbers x̃ to ask about.
        plugin : bool, default=False
            Use the MAP hypothesis h_MAP alone instead of averaging over the posterior.

        Returns
        -------
        ndarray of shape (len(xs),)
            The probability that each x̃ is the next example.
        """
        sizes = self._membership.sum(axis=1)
        return (self._weights(plugin) / sizes) @ self._indicators(xs)
