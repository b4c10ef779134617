"""Generative models for discrete data (Murphy, *Machine Learning: a Probabilistic Perspective*, ch. 3).

Section numbers "§3.x" in this package are Murphy's; the package follows a summary of that chapter in a
machine-learning cheat sheet, whose misprints it corrects (docs/discrete.md; references in docs/citing.md).

* conjugate models: :class:`BetaBinomial`, :class:`DirichletMultinomial`,
  :func:`dirichlet_multinomial_log_pmf`;
* Bayesian concept learning (the number game): :class:`BayesianConceptLearner`,
  :func:`number_game_hypotheses`;
* the Bayesian naive Bayes family: :class:`BayesianBernoulliNB`, :class:`BayesianCategoricalNB`,
  :class:`BayesianMultinomialNB` on the shared :class:`GenerativeClassifier`;
* the Dirichlet-compound-multinomial (Pólya) document classifier :class:`DCMClassifier` (module ``dcm``) with
  Minka's fixed point :func:`fit_dirichlet_multinomial` (``minka``) on the histograms of word counts
  (``word_counts``; an addition to the seed);
* mutual-information feature selection: :class:`MutualInformationSelector`,
  :func:`mutual_information_binary`, :func:`mutual_information_discrete`.

Exports follow the rule of :mod:`hdbayes` (explicit ``__all__``, imported lazily).
"""

from hdbayes import _lazy_exports

_EXPORTS = {  # module -> the names it exports
    "._base": ("GenerativeClassifier",),
    ".concept_learning": ("BayesianConceptLearner", "number_game_hypotheses"),
    ".conjugate": ("BetaBinomial", "DirichletMultinomial", "dirichlet_multinomial_log_pmf"),
    ".dcm": ("DCMClassifier",),
    ".minka": ("fit_dirichlet_multinomial",),
    ".mutual_information": ("MutualInformationSelector", "mutual_information_binary", "mutual_information_discrete"),
    ".naive_bayes": ("BayesianBernoulliNB", "BayesianCategoricalNB", "BayesianMultinomialNB"),
}

__all__ = [
    "BayesianBernoulliNB", "BayesianCategoricalNB", "BayesianConceptLearner", "BayesianMultinomialNB",
    "BetaBinomial", "DCMClassifier", "DirichletMultinomial", "GenerativeClassifier", "MutualInformationSelector",
    "dirichlet_multinomial_log_pmf", "fit_dirichlet_multinomial", "mutual_information_binary",
    "mutual_information_discrete", "number_game_hypotheses",
]

__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS)
