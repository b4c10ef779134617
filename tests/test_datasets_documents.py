"""Bursty simulated documents: the Pólya urn sampler draws exactly from the DCM (Murphy §3.5.5; docs/discrete.md)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from hdbayes.datasets.documents import sample_polya_urn, simulate_bursty_documents
from hdbayes.discrete.conjugate import dirichlet_multinomial_log_pmf


def _chi_square_against_dcm(alpha, length, n_samples, seed):
    X = sample_polya_urn(alpha, length, n_samples=n_samples, random_state=seed).toarray()
    compositions = np.array([c for c in itertools.product(range(length + 1), repeat=len(alpha)) if sum(c) == length])
    expected = np.exp(dirichlet_multinomial_log_pmf(compositions, alpha)) * n_samples
    index = {tuple(c): i for i, c in enumerate(compositions)}
    observed = np.bincount([index[tuple(row)] for row in X], minlength=len(compositions))
    return stats.chisquare(observed, expected).pvalue


def test_t8_urn_with_two_colours_is_uniform_over_compositions():
    # α = (1, 1), two draws: (2,0), (1,1), (0,2) each have probability 1/3 (DCM), not (1/4, 1/2, 1/4)
    X = sample_polya_urn([1.0, 1.0], 2, n_samples=30_000, random_state=0).toarray()
    frequencies = np.bincount(X[:, 0], minlength=3) / X.shape[0]
    np.testing.assert_allclose(frequencies, [1 / 3, 1 / 3, 1 / 3], atol=0.01)
    assert _chi_square_against_dcm([1.0, 1.0], 2, 30_000, 1) > 1e-3


def test_urn_matches_dcm_pmf():
    assert _chi_square_against_dcm([3.0, 4.0, 5.0], 6, 20_000, 2) > 1e-3
    assert _chi_square_against_dcm([0.2, 0.5, 1.5], 5, 20_000, 3) > 1e-3


def test_sampler_shapes_reproducibility_and_validation():
    a = sample_polya_urn([0.5, 0.5, 2.0], 7, n_samples=5, random_state=4)
    b = sample_polya_urn([0.5, 0.5, 2.0], 7, n_samples=5, random_state=4)
    assert sp.issparse(a) and a.shape == (5, 3)
    assert (a != b).nnz == 0
    assert np.all(np.asarray(a.sum(axis=1)).ravel() == 7)
    assert sample_polya_urn([1.0, 2.0], 0, n_samples=3, random_state=0).nnz == 0
    with pytest.raises(ValueError, match="concentrations > 0"):
        sample_polya_urn([1.0, 0.0], 3)
    with pytest.raises(ValueError, match="length must be at least 0"):
        sample_polya_urn([1.0, 1.0], -1)


def test_simulated_corpus_is_bursty():
    corpus = simulate_bursty_documents(400, 500, concentration=10, mean_length=50, random_state=0)
    X = corpus.X
    assert X.shape == (400, 500) and X.dtype == np.int64
    assert corpus.alpha.shape == (2, 500)
    np.testing.assert_allclose(corpus.alpha.sum(axis=1), 10.0)
    lengths = np.asarray(X.sum(axis=1)).ravel()
    assert lengths.min() >= 1
    # a multinomial with the same word distribution would use far more distinct words per document
    rng = np.random.default_rng(0)
    multinomial = np.array([np.count_nonzero(rng.multinomial(n, corpus.alpha[c] / 10.0))
                            for n, c in zip(lengths, corpus.y)])  # fmt: skip
    assert np.diff(X.indptr).mean() < 0.6 * multinomial.mean()
    again = simulate_bursty_documents(400, 500, concentration=10, mean_length=50, random_state=0)
    assert (again.X != X).nnz == 0 and np.array_equal(again.y, corpus.y)


def test_simulator_validation():
    with pytest.raises(ValueError, match="n_classes must be at least 2"):
        simulate_bursty_documents(10, 10, n_classes=1)
    with pytest.raises(ValueError, match="mean_length must be at least 1"):
        simulate_bursty_documents(10, 10, mean_length=0.5)
    with pytest.raises(ValueError, match="concentration must be a finite number > 0"):
        simulate_bursty_documents(10, 10, concentration=-1.0)
