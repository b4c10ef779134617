"""Bayesian concept learning, the number game (Murphy §3.2; docs/discrete.md; T4)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from hdbayes.discrete.concept_learning import BayesianConceptLearner, number_game_hypotheses

T4 = {"even": range(2, 101, 2), "powers of 2": [2, 4, 8, 16, 32, 64]}


def _p_pow2(learner):
    return learner.posterior_[learner.hypothesis_names_.index("powers of 2")]


def test_t4_size_principle():
    learner = BayesianConceptLearner(T4).fit([16])
    np.testing.assert_allclose(np.exp(learner.log_likelihood_), [1 / 50, 1 / 6], rtol=1e-14)
    assert _p_pow2(learner) == pytest.approx(25 / 28, rel=1e-14)
    learner.fit([16, 8, 2, 64])
    np.testing.assert_allclose(np.exp(learner.log_likelihood_), [1.6e-7, 1 / 1296], rtol=1e-13)
    assert np.exp(learner.log_likelihood_[1] - learner.log_likelihood_[0]) == pytest.approx(390625 / 81, rel=1e-12)
    assert _p_pow2(learner) == pytest.approx(390625 / 390706, rel=1e-14)
    assert learner.map_hypothesis_ == learner.mle_hypothesis_ == "powers of 2"


def test_t4_data_overwhelm_the_prior():
    learner = BayesianConceptLearner(T4, prior={"even": 0.99, "powers of 2": 0.01})
    assert learner.fit([16]).map_hypothesis_ == "even"
    assert learner.fit([16]).mle_hypothesis_ == "powers of 2"
    assert _p_pow2(learner.fit([16, 8, 2, 64])) == pytest.approx(390625 / 398644, rel=1e-14)
    assert learner.map_hypothesis_ == "powers of 2"


def test_t4_membership_and_predictive():
    learner = BayesianConceptLearner(T4).fit([16])
    np.testing.assert_allclose(learner.predict_membership([32, 6, 3]), [1, 3 / 28, 0], rtol=1e-14, atol=0)
    np.testing.assert_array_equal(learner.predict_membership([32, 6, 3], plugin=True), [1, 0, 0])
    pmf = learner.predictive_pmf(np.arange(1, 101))
    assert pmf.sum() == pytest.approx(1.0, rel=1e-14)
    assert pmf[31] == pytest.approx(3 / 28 / 50 + 25 / 28 / 6, rel=1e-14)  # x̃ = 32


def test_t4_edge_cases():
    learner = BayesianConceptLearner(T4)
    assert _p_pow2(learner.fit([16, 6])) == 0.0
    np.testing.assert_allclose(learner.fit([]).posterior_, [0.5, 0.5])  # D = ∅: posterior = prior
    once, twice = learner.fit([16]).posterior_.copy(), learner.fit([16, 16]).posterior_
    assert twice[1] > once[1]  # a repeated example counts twice in N
    assert twice[1] == pytest.approx(625 / 634, rel=1e-14)
    with pytest.raises(ValueError, match="no hypothesis with positive prior"):
        learner.fit([3])
    with pytest.raises(ValueError, match="no hypothesis with positive prior"):
        BayesianConceptLearner(T4, prior={"even": 1.0, "powers of 2": 0.0}).fit([3, 5])


def test_posterior_concentrates_on_map_as_n_grows():
    hypotheses = number_game_hypotheses()
    learner = BayesianConceptLearner(hypotheses)
    data = [16, 8, 2, 64, 32]  # with 32: "powers of 2 - {32}" is ruled out
    masses = [learner.fit(data * k).posterior_.max() for k in (1, 2, 4, 8, 16)]
    assert learner.map_hypothesis_ == "powers of 2"
    assert np.all(np.diff(masses) > 0) and masses[-1] > 0.999
    pickle.loads(pickle.dumps(learner)).predict_membership([32])


def test_bad_input():
    with pytest.raises(ValueError, match="non-empty mapping"):
        BayesianConceptLearner({}).fit([1])
    with pytest.raises(ValueError, match="is empty"):
        BayesianConceptLearner({"a": []}).fit([1])
    with pytest.raises(ValueError, match="do not exist"):
        BayesianConceptLearner(T4, prior={"odd": 1.0}).fit([2])
    with pytest.raises(ValueError, match="not all 0"):
        BayesianConceptLearner(T4, prior={"even": 0.0}).fit([2])
    with pytest.raises(ValueError, match="integers"):
        BayesianConceptLearner(T4).fit([1.5])
    with pytest.raises(ValueError, match="not fitted"):
        BayesianConceptLearner(T4).predict_membership([2])
    with pytest.raises(ValueError, match="n_max"):
        number_game_hypotheses(5)
