"""The sufficient statistics of a Dirichlet-compound-multinomial fit: histograms of word counts and lengths.

:class:`WordCountHistogram` holds, for a set of documents, how many have the value v for word j (every seen
pair (j, v)) and how many have the length N; histograms of two shards add up to those of their union.
Minka's fixed point (:mod:`hdbayes.discrete.minka`) fits the concentrations from them, and
:class:`~hdbayes.discrete.dcm.DCMClassifier` keeps one per class.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from hdbayes._validation import feature_label
from hdbayes.discrete.conjugate import check_count_matrix
from hdbayes.exceptions import InputValueError

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["WordCountHistogram"]


def _run_lengths(keys):
    """Start of every run of equal consecutive entries of the sorted key arrays ``keys``."""
    if keys[0].shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    new = np.zeros(keys[0].shape[0], dtype=bool)
    new[0] = True
    for key in keys:
        new[1:] |= key[1:] != key[:-1]
    return np.flatnonzero(new)


def _histogram(words, values, counts, n_features):
    """(words, values, counts) of the distinct (word, value) pairs, sorted by word then value, with
    the total count of each; ``counts`` None counts every pair once."""
    words = np.asarray(words, dtype=np.int64)
    values = np.asarray(values, dtype=np.float64)
    counts = np.ones(words.shape[0], dtype=np.int64) if counts is None else np.asarray(counts, dtype=np.int64)
    top = values.max(initial=0.0)
    if values.size and top < 2**31 and n_features * (top + 1) < 2**62 and np.all(values == np.round(values)):
        size = int(top) + 1  # small integers: one int64 key per pair, word · (top + 1) + value
        keys = words * size + values.astype(np.int64)
        if n_features * size <= max(4_000_000, 8 * values.size):
            table = np.bincount(keys, weights=counts, minlength=n_features * size)
            keys = np.flatnonzero(table)
            totals = np.rint(table[keys]).astype(np.int64)
        else:
            keys, inverse = np.unique(keys, return_inverse=True)
            totals = np.bincount(inverse, weights=counts, minlength=keys.shape[0])
            totals = np.rint(totals).astype(np.int64)
        return keys // size, (keys % size).astype(np.float64), totals
    order = np.lexsort((values, words))
    words, values, counts = words[order], values[order], counts[order]
    starts = _run_lengths((words, values))
    if starts.size == 0:
        return words, values, counts
    return words[starts], values[starts], np.add.reduceat(counts, starts)


class WordCountHistogram:
    """The sufficient statistics of a Dirichlet-compound-multinomial fit: histograms of counts.

    For documents x_1..x_n over D words, ``counts[k]`` documents have the value ``values[k]``
    (> 0) for word ``words[k]`` (distinct (word, value) pairs, sorted), and
    ``length_counts[k]`` documents have the length N_i = Σ_j x_ij = ``lengths[k]`` (> 0); the
    remaining documents are empty. Minka's fixed point (:mod:`hdbayes.discrete.minka`) needs nothing else: for integer
    counts the exceedance counts G_j(l) = #{i: x_ij > l} and H(l) = #{i: N_i > l} (see the
    module docstring) are sums over these histograms, for real values the digamma sums run
    over the histogram's entries. Two shards' histograms added are the histograms of their
    union, so :class:`~hdbayes.discrete.dcm.DCMClassifier` fits from chunks (``partial_fit``, dask arrays) without
    keeping documents; the size is the number of distinct (word, count) pairs, not the
    number of non-zeros. Immutable, compared by value, picklable.

    Examples
    --------
    >>> X = np.array([[2, 0, 1], [1, 1, 0], [2, 0, 0]])
    >>> h = WordCountHistogram.from_data(X[:2]) + WordCountHistogram.from_data(X[2:])
    >>> h.words.tolist(), h.values.tolist(), h.counts.tolist()
    ([0, 0, 1, 2], [1.0, 2.0, 1.0, 1.0], [1, 2, 1, 1])
    >>> h == WordCountHistogram.from_data(X), h.n_documents
    (True, 3)
    """

    __hash__ = None

    def __init__(self, n_features, n_documents, words, values, counts, lengths, length_counts):
        self.n_features = int(n_features)
        self.n_documents = int(n_documents)
        self.words, self.values, self.counts = _histogram(words, values, counts, self.n_features)
        lengths = np.asarray(lengths, dtype=np.float64)
        length_counts = np.asarray(length_counts, dtype=np.int64)
        order = np.argsort(lengths, kind="stable")
        lengths, length_counts = lengths[order], length_counts[order]
        starts = _run_lengths((lengths,))
        self.lengths = lengths[starts]
        self.length_counts = np.add.reduceat(length_counts, starts) if starts.size else length_counts
        if (self.words.size and (self.words.min() < 0 or self.words.max() >= self.n_features)) or (
            self.values <= 0).any() or (self.lengths <= 0).any() or (self.counts < 0).any() or (
            self.length_counts.sum() > self.n_documents):  # fmt: skip
            raise InputValueError("inconsistent histograms: words in 0..D-1, values and lengths > 0, counts >= 0")
        for array in (self.words, self.values, self.counts, self.lengths, self.length_counts):
            array.setflags(write=False)

    @classmethod
    def from_data(cls, X):
        """The histograms of count data X (n documents × D words; dense or sparse, values ≥ 0)."""
        return cls._of_checked(check_count_matrix(X, integer=False))

    @classmethod
    def _of_checked(cls, X):
        X = sp.csr_matrix(X)
        with np.errstate(over="ignore"):
            lengths = np.asarray(X.sum(axis=1), dtype=np.float64).ravel()
        nonzero = X.data != 0
        lengths = lengths[lengths != 0]
        return cls(X.shape[1], X.shape[0], X.indices[nonzero], X.data[nonzero], None, lengths,
                   np.ones(lengths.shape[0], dtype=np.int64))  # fmt: skip

    @classmethod
    def zero(cls, n_features):
        """The histograms of no documents (the neutral element of ``+``)."""
        empty = np.zeros(0)
        return cls(n_features, 0, empty, empty, empty, empty, empty)

    @property
    def n_nonzero(self) -> int:
        """The number of non-zero entries of the documents."""
        return int(self.counts.sum())

    def __add__(self, other):
        if not isinstance(other, WordCountHistogram):
            return NotImplemented
        if other.n_features != self.n_features:
            raise InputValueError(f"cannot add the histograms of {self.n_features} and of {other.n_features} words")
        cat = np.concatenate
        return WordCountHistogram(
            self.n_features, self.n_documents + other.n_documents, cat([self.words, other.words]),
            cat([self.values, other.values]), cat([self.counts, other.counts]), cat([self.lengths, other.lengths]),
            cat([self.length_counts, other.length_counts]),
        )  # fmt: skip

    def __radd__(self, other):
        if isinstance(other, int) and other == 0:
            return self
        return NotImplemented

    def __eq__(self, other):
        if not isinstance(other, WordCountHistogram):
            return NotImplemented
        return (self.n_features, self.n_documents) == (other.n_features, other.n_documents) and all(
            np.array_equal(getattr(self, name), getattr(other, name))
            for name in ("words", "values", "counts", "lengths", "length_counts")
        )

    def __reduce__(self):
        return (type(self), (self.n_features, self.n_documents, self.words, self.values, self.counts, self.lengths,
                             self.length_counts))  # fmt: skip

    def __repr__(self):
        return (
            f"WordCountHistogram(n_documents={self.n_documents}, n_features={self.n_features}, "
            f"n_pairs={self.words.shape[0]})"
        )

    def overflow_cause(self, feature_names: Sequence[str] | None = None) -> str | None:
        """The largest value and its word, as the likely cause of a non-finite result (None: no values)."""
        if self.values.size == 0:
            return None
        k = int(np.argmax(self.values))
        return (
            f"the value {float(self.values[k]):g} of {feature_label(int(self.words[k]), feature_names)} is too large "
            "for double-precision arithmetic"
        )
