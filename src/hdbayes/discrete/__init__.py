"""Generative models for discrete data (spec ``generative-discrete.md``; seed 004, Murphy ch. 3).

* conjugate models: :class:`BetaBinomial`, :class:`DirichletMultinomial`,
  :func:`dirichlet_multinomial_log_pmf`;
* Bayesian concept learning (the number game): :class:`BayesianConceptLearner`,
  :func:`number_game_hypotheses`;
* the Bayesian naive Bayes family: :class:`BayesianBernoulliNB`, :class:`BayesianCategoricalNB`,
  :class:`BayesianMultinomialNB` on the shared :class:`GenerativeClassifier`;
* the Dirichlet-compound-multinomial (Pólya) document classifier :class:`DCMClassifier` with
  Minka's fixed point :func:`fit_dirichlet_multinomial` (an addition to the seed);
* mutual-information feature selection: :class:`MutualInformationSelector`,
  :func:`mutual_information_binary`, :func:`mutual_information_discrete`.
"""

from hdbayes.discrete._base import GenerativeClassifier
from hdbayes.discrete.concept_learning import BayesianConceptLearner, number_game_hypotheses
from hdbayes.discrete.conjugate import BetaBinomial, DirichletMultinomial, dirichlet_multinomial_log_pmf
from hdbayes.discrete.dcm import DCMClassifier, fit_dirichlet_multinomial
from hdbayes.discrete.mutual_information import (
    MutualInformationSelector,
    mutual_information_binary,
    mutual_information_discrete,
)
from hdbayes.discrete.naive_bayes import BayesianBernoulliNB, BayesianCategoricalNB, BayesianMultinomialNB

__all__ = [
    "BayesianBernoulliNB",
    "BayesianCategoricalNB",
    "BayesianConceptLearner",
    "BayesianMultinomialNB",
    "BetaBinomial",
    "DCMClassifier",
    "DirichletMultinomial",
    "GenerativeClassifier",
    "MutualInformationSelector",
    "dirichlet_multinomial_log_pmf",
    "fit_dirichlet_multinomial",
    "mutual_information_binary",
    "mutual_information_discrete",
    "number_game_hypotheses",
]
