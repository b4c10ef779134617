"""A Bayesian linear classifier on all features.

* :mod:`~hdbayes.linear.model` — standardisation, the dual form K = s² X̃X̃ᵀ/p + σ_b² 11ᵀ, the factor kernel,
  the atypicality of new arrays, the grid of ln s² and its posterior weights;
* ``hdbayes.linear.likelihoods`` — the likelihoods of the latent values, each with its inference, behind one
  interface (binary probit and multinomial probit by EP, softmax by Laplace);
* :mod:`~hdbayes.linear.ep` — expectation propagation for the probit likelihood (two classes) and its
  evidence and leave-one-out densities;
* :mod:`~hdbayes.linear.stacking` — Bayesian stacking weights from leave-one-out densities;
* :mod:`~hdbayes.linear.laplace` — the Laplace approximation for the softmax likelihood (more classes);
* :mod:`~hdbayes.linear.estimator` — the scikit-learn classifier :class:`BayesianLinearClassifier`.

Exports follow the rule of :mod:`hdbayes` (explicit ``__all__``, imported lazily).
"""

from hdbayes import _lazy_exports

_EXPORTS = {  # module -> the names it exports
    ".ep": ("EPFit", "probit_ep"),
    ".estimator": ("BayesianLinearClassifier",),
    ".laplace": ("LaplaceFit", "softmax_laplace"),
    ".stacking": ("stacking_weights",),
}

__all__ = ["BayesianLinearClassifier", "EPFit", "LaplaceFit", "probit_ep", "softmax_laplace", "stacking_weights"]

__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS)
