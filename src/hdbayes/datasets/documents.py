"""Bursty simulated documents: bags of words drawn from per-class Pólya urns (Murphy §3.5.5).

A document of class c with N words is drawn from the Dirichlet compound multinomial
DCM(α_c) by the Pólya urn: the t-th word (t = 0, 1, …) is a fresh draw from the class's
word distribution m_c = α_c/α_c0 with probability α_c0/(α_c0 + t), and otherwise a copy of
one of the t words already drawn, chosen uniformly. Then

    P(word t = j | counts n so far) = (α_jc + n_j)/(α_c0 + t),

exactly the sequential form of the DCM, so a word that has appeared once is likely to
appear again (burstiness) — the regime in which the multinomial model is wrong and the
DCM is right. The cost is O(N) per document, independent of the vocabulary size.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from hdbayes._numba import jit
from hdbayes._validation import check_count, check_generator, check_positive
from hdbayes.exceptions import InputValueError

from ._common import check_sizes, data_bunch, numbered_names

if TYPE_CHECKING:
    import scipy.sparse
    from numpy.typing import ArrayLike
    from sklearn.utils import Bunch

    from hdbayes._validation import RandomStateLike

__all__ = ["sample_polya_urn", "simulate_bursty_documents"]


@jit
def _polya_urn_documents(cdfs, concentrations, classes, lengths, fresh_uniform, word_uniform, copy_uniform):
    """Compiled urn draws; returns CSR (indptr, indices, counts) of the documents."""
    n_docs = classes.shape[0]
    total = lengths.sum()
    indptr = np.zeros(n_docs + 1, dtype=np.int64)
    indices = np.empty(total, dtype=np.int64)
    counts = np.empty(total, dtype=np.int64)
    start = 0
    nnz = 0
    for i in range(n_docs):
        c = classes[i]
        s = concentrations[c]
        n = lengths[i]
        words = np.empty(n, dtype=np.int64)
        for t in range(n):
            k = start + t
            if fresh_uniform[k] * (s + t) < s:
                words[t] = np.searchsorted(cdfs[c], word_uniform[k] * cdfs[c, -1], side="right")
            else:
                words[t] = words[int(copy_uniform[k] * t)]
        words.sort()
        t = 0
        while t < n:
            u = t
            while u < n and words[u] == words[t]:
                u += 1
            indices[nnz] = words[t]
            counts[nnz] = u - t
            nnz += 1
            t = u
        indptr[i + 1] = nnz
        start += n
    return indptr, indices[:nnz], counts[:nnz]


def _draw_documents(alpha, classes, lengths, rng):
    alpha = np.asarray(alpha, dtype=np.float64)
    cdfs = np.cumsum(alpha, axis=1)
    total = int(lengths.sum())
    indptr, indices, counts = _polya_urn_documents(
        cdfs, cdfs[:, -1].copy(), classes.astype(np.int64), lengths.astype(np.int64),
        rng.random(total), rng.random(total), rng.random(total),
    )  # fmt: skip
    # a word index can reach D only through rounding at the top of the cdf
    np.minimum(indices, alpha.shape[1] - 1, out=indices)
    return sp.csr_matrix((counts, indices, indptr), shape=(classes.shape[0], alpha.shape[1]))


def sample_polya_urn(
        alpha: ArrayLike, length: int, n_samples: int = 1, random_state: RandomStateLike = None
) -> scipy.sparse.csr_matrix:
    """Count vectors of ``n_samples`` documents of ``length`` words from DCM(alpha), by the Pólya urn.

    Parameters
    ----------
    alpha : array-like of shape (D,)
        Concentrations > 0.
    length : int
        Words per document (≥ 0).
    n_samples : int, default=1
        Number of documents.
    random_state : int, Generator or None
        Source of the random numbers.

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n_samples, D), integer counts
        One document per row: entry (i, j) is how many of document i's ``length`` words are word j.

    Examples
    --------
    >>> sample_polya_urn([1.0, 1.0, 1.0], 5, n_samples=2, random_state=0).sum(axis=1).tolist()
    [[5], [5]]
    """
    alpha = np.asarray(alpha, dtype=np.float64)
    if alpha.ndim != 1 or alpha.shape[0] < 1 or not np.all(np.isfinite(alpha)) or np.any(alpha <= 0):
        raise InputValueError("alpha must be a 1-D array of finite concentrations > 0")
    length = check_count("length", length, minimum=0)
    n_samples = check_count("n_samples", n_samples)
    rng = check_generator(random_state)
    classes = np.zeros(n_samples, dtype=np.int64)
    return _draw_documents(alpha[None, :], classes, np.full(n_samples, length), rng)


def simulate_bursty_documents(
    n_samples: int = 1000,
    n_words: int = 2000,
    *,
    n_test: int = 0,
    n_classes: int = 2,
    mean_length: float = 80,
    concentration: float | None = None,
    zipf_exponent: float = 1.1,
    class_spread: float = 0.7,
    random_state: RandomStateLike = None,
) -> Bunch:
    """Simulate documents from per-class Dirichlet-compound-multinomial (Pólya urn) models.

    Every class shares a Zipf-shaped word distribution (over a random order of the
    vocabulary) perturbed per class by log-normal factors, m_c ∝ zipf · exp(σ z_c),
    z_cj ~ N(0, 1); α_c = s · m_c. The document length is 1 + Poisson(mean_length − 1)
    and the class is uniform. A small concentration s makes documents bursty: each
    document uses few distinct words, repeated. s → ∞ gives the multinomial model.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of training documents.
    n_words : int, default=2000
        Vocabulary size (the number of features).
    n_test : int, default=0
        Number of test documents, drawn after the training ones (the training documents do not
        depend on it).
    n_classes : int, default=2
        Number of classes (≥ 2), drawn uniformly.
    mean_length : float, default=80
        Mean number of words per document (≥ 1).
    concentration : float, optional
        s = α_c0; default ``n_words / 20`` (strongly bursty).
    zipf_exponent : float, default=1.1
        Exponent of the shared Zipf-shaped word distribution (rank r has weight ∝ r^−exponent).
    class_spread : float, default=0.7
        σ, how much the classes' word distributions differ.
    random_state : int, Generator or None
        Source of the random numbers.

    Returns
    -------
    sklearn.utils.Bunch
        With keys

        X : scipy.sparse.csr_matrix of shape (n_samples, n_words)
            Word counts (int64).
        y : ndarray of shape (n_samples,)
            Class labels 0..C−1.
        X_test : scipy.sparse.csr_matrix of shape (n_test, n_words)
        y_test : ndarray of shape (n_test,)
        feature_names : ndarray of str
            ``w0``, ``w1``, ...
        DESCR : str
        alpha : ndarray of shape (C, n_words)
            The true DCM parameters α_c = s · m_c.

    Examples
    --------
    >>> corpus = simulate_bursty_documents(50, 300, n_test=10, random_state=0)
    >>> corpus.X.shape, corpus.X_test.shape, corpus.X.dtype, sorted(set(corpus.y.tolist()))
    ((50, 300), (10, 300), dtype('int64'), [0, 1])
    """
    n_samples, n_test = check_sizes(n_samples, n_test, test_minimum=0)
    n_words = check_count("n_words", n_words, minimum=2)
    n_classes = check_count("n_classes", n_classes, minimum=2)
    mean_length = check_positive("mean_length", mean_length)
    if mean_length < 1:
        raise InputValueError(f"mean_length must be at least 1, got {mean_length}")
    s = n_words / 20 if concentration is None else check_positive("concentration", concentration)
    zipf_exponent = check_positive("zipf_exponent", zipf_exponent, allow_zero=True)
    class_spread = check_positive("class_spread", class_spread, allow_zero=True)
    rng = check_generator(random_state)
    zipf = rng.permutation(np.arange(1, n_words + 1, dtype=np.float64) ** -zipf_exponent)
    means = zipf[None, :] * np.exp(class_spread * rng.standard_normal((n_classes, n_words)))
    means /= means.sum(axis=1, keepdims=True)
    alpha = s * means
    parts = []  # the training documents, then the test documents, each drawn as a whole
    for n in (n_samples, n_test):
        y = rng.integers(0, n_classes, size=n)
        lengths = 1 + rng.poisson(mean_length - 1, size=n)
        parts.append((_draw_documents(alpha, y, lengths, rng), y))
    (X, y), (X_test, y_test) = parts
    descr = (
        f"Bursty documents from per-class Pólya urns (DCM): {n_classes} classes, {n_words} words, mean length "
        f"{mean_length:g}, concentration {s:g}, {n_samples} training and {n_test} test documents."
    )
    return data_bunch(X, y, X_test, y_test, feature_names=numbered_names(n_words, "w"), DESCR=descr, alpha=alpha)
