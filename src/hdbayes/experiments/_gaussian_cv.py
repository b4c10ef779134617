"""Cross-validation driver shared by the Gaussian-model experiments (Li 2009, §4.2).

:func:`cross_validate_methods` runs one cross-validation of the bias-corrected
Gaussian classifier (optionally behind the shrunk-covariance whitening of eq. 12)
for each method — by default with and without correction — on the same folds,
and returns one row of measures per method (Li 2009 §3.4 and §4): actual and expected error
rates, average minus log probability, Brier score, and the average expected and
actual loss of the Bayes decisions under a given loss matrix. Feature selection
(top k by F) and the whitening are estimated on each training fold only, because
both live inside the estimator that :func:`sklearn.model_selection.cross_val_predict`
clones for every fold.
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.model_selection import cross_val_predict
from sklearn.pipeline import make_pipeline

from hdbayes.experiments._corrected import METHODS  # method name → the classifier's ``correct`` flag
from hdbayes.experiments._runner import probability_measures
from hdbayes.experiments._runtime import cap_n_jobs
from hdbayes.preprocessing import ShrunkCovarianceWhitener
from hdbayes.selection_bias.gaussian import BiasCorrectedGaussianClassifier

__all__ = [
    "MCMC_PAPER",
    "METHODS",
    "compare_methods",
    "cross_validate_methods",
    "error_gap",
    "gaussian_model",
    "loss_matrix_rows",
    "probability_rows",
    "seeds",
]

#: The paper's run lengths (Li 2009 §4.1): 6000 iterations, 750 burn-in, every 15th kept.
MCMC_PAPER = {"n_iter": 6000, "burn_in": 750, "thin": 15}


def gaussian_model(*, n_features_to_select, correct=True, lam=None, random_state=None, **params):
    """The classifier of Li (2009), behind the whitening of eq. 12 when ``lam`` is given.

    Parameters
    ----------
    n_features_to_select : int
        k, the number of features kept by F in ``fit`` (of the whitened features when
        ``lam`` is given).
    correct : bool
        Correct for selection bias.
    lam : float, optional
        λ of :class:`~hdbayes.preprocessing.ShrunkCovarianceWhitener`; None: no
        whitening.
    random_state : int, optional
        Seed of the classifier (chains, adjustment pool, tie-breaking).
    **params
        Other parameters of
        :class:`~hdbayes.selection_bias.gaussian.BiasCorrectedGaussianClassifier`
        (priors, run lengths; no progress bar unless ``progress`` is given).

    Returns
    -------
    estimator
    """
    classifier = BiasCorrectedGaussianClassifier(
        n_features_to_select=n_features_to_select, correct=correct, random_state=random_state,
        **{"progress": False, **params},
    )
    if lam is None:
        return classifier
    return make_pipeline(ShrunkCovarianceWhitener(lam=lam), classifier)


def cross_validate_methods(
    X, y, *, cv, n_features_to_select, loss, lam=None, methods=None, random_state=None, n_jobs=None, **params
):
    """Cross-validated predictive probabilities and measures for each method.

    Parameters
    ----------
    X : ndarray of shape (n, p)
        All candidate features; selection (and whitening) happen inside each fold.
    y : ndarray of int, shape (n,)
        Class labels ``0..G-1``; every class must be present in every training fold.
    cv : cross-validation splitter
        Used for every method, so all methods see the same folds (give a splitter
        with a fixed ``random_state``).
    n_features_to_select : int
        k.
    loss : ndarray of shape (G, G)
        Loss matrix ``L[true, guess]`` for the expected and actual loss.
    lam : float, optional
        Whitening λ (eq. 12), estimated on each training fold; None: no whitening.
    methods : dict of str to bool, optional
        Method name → ``correct``; default :data:`METHODS`.
    random_state : int, optional
        Seed of the classifier in every fold and method (common random numbers).
    n_jobs : int, optional
        Folds in parallel (joblib processes), capped at the usable cores; times are then
        wall-clock under parallelism.
    **params
        Priors and run lengths of the classifier.

    Returns
    -------
    rows : list of dict
        One per method: ``method``, ``k``, the measures of
        :func:`~hdbayes.experiments._runner.probability_measures` (with the loss), ``seconds`` (wall-clock of
        the whole
        cross-validation: whitening, selection, MCMC and prediction in all folds; an
        experiment moves it to its timings with
        :func:`~hdbayes.experiments._runtime.split_timings`).
    probabilities : dict of str to ndarray of shape (n, G)
        The cross-validated predictive probabilities by method.
    """
    methods = METHODS if methods is None else methods
    n_jobs = cap_n_jobs(n_jobs)
    rows, probabilities = [], {}
    for name, correct in methods.items():
        model = gaussian_model(n_features_to_select=n_features_to_select, correct=correct, lam=lam,
                               random_state=random_state, **params)  # fmt: skip
        start = time.perf_counter()
        proba = cross_val_predict(model, X, y, cv=cv, method="predict_proba", n_jobs=n_jobs)
        seconds = time.perf_counter() - start
        probabilities[name] = proba
        rows.append({"method": name, "k": n_features_to_select, **probability_measures(y, proba, loss=loss),
                     "seconds": seconds})  # fmt: skip
    return rows, probabilities


def compare_methods(rows, key):
    """Pair corrected and uncorrected rows that share ``key`` (e.g. "group" or "k").

    Returns
    -------
    list of (dict, dict)
        (corrected row, uncorrected row) in the order of first appearance.
    """
    by_key = {}
    for row in rows:
        by_key.setdefault(row[key], {})[row["method"]] = row
    return [(pair["corrected"], pair["uncorrected"]) for pair in by_key.values()]


def error_gap(row):
    """|expected − actual error rate| of a result row."""
    return abs(row["expected_error"] - row["actual_error"])


def probability_rows(y, probabilities, class_names, **labels):
    """Long table of predictive probabilities: one row per case and method."""
    rows = []
    for method, proba in probabilities.items():
        for i in range(y.shape[0]):
            row = {**labels, "case": i, "y": class_names[y[i]], "method": method}
            row.update({f"p_{name}": float(proba[i, g]) for g, name in enumerate(class_names)})
            rows.append(row)
    return rows


def loss_matrix_rows(loss, class_names):
    """The loss matrix as a table: one row per true class, one column per guess."""
    return [
        {"true": class_names[i], **{f"guess_{name}": float(loss[i, j]) for j, name in enumerate(class_names)}}
        for i in range(len(class_names))
    ]


def seeds(random_state, n):
    """``n`` independent integer seeds derived from ``random_state``."""
    return [int(s) for s in np.random.SeedSequence(random_state).generate_state(n)]
