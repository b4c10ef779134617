"""Simulator of the categorical naive Bayes model: G classes, features with L levels.

:func:`simulate_categorical_naive_bayes` generalises :func:`~hdbayes.datasets.simulate_naive_bayes`
(the binary model of Li (2007) thesis §2.3.5) to the model of ``docs/categorical_correction.md``,
equations (C1)–(C3), which :class:`~hdbayes.selection_bias.BiasCorrectedCategoricalNB` fits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from hdbayes._validation import check_count, check_generator, check_positive
from hdbayes.exceptions import InputValueError

from ._common import BLOCK_ELEMENTS, check_sizes, data_bunch, numbered_names

if TYPE_CHECKING:
    from sklearn.utils import Bunch

    from hdbayes._validation import RandomStateLike

__all__ = ["simulate_categorical_naive_bayes"]

# Levels are stored as int8 codes.
_MAX_LEVELS = 127


def _labels(n, n_classes, balanced, rng):
    """Class labels 0..G−1: ``n // G`` of each (the remainder of distinct random classes), shuffled;
    or i.i.d. uniform when not balanced."""
    if not balanced:
        return rng.integers(0, n_classes, size=n, dtype=np.int64)
    y = np.repeat(np.arange(n_classes, dtype=np.int64), n // n_classes)
    extra = rng.permutation(n_classes)[: n % n_classes].astype(np.int64)
    return rng.permutation(np.concatenate([y, extra]))


def _log_dirichlet(shape, rng):
    """Logs of Dirichlet(shape) draws along the last axis, stable for tiny shape parameters.

    A Gamma(a) variable is Gamma(a + 1) · U^{1/a} with U uniform on (0, 1], so its log is
    log Gamma(a + 1) + log(U)/a: finite even when a Gamma(a) draw itself would underflow to 0.
    """
    u = 1.0 - rng.random(shape.shape)  # in (0, 1]
    log_gamma = np.log(rng.gamma(shape + 1.0)) + np.log(u) / shape
    top = log_gamma.max(axis=-1, keepdims=True)
    return log_gamma - (top + np.log(np.exp(log_gamma - top).sum(axis=-1, keepdims=True)))


def simulate_categorical_naive_bayes(
    n_classes: int = 3,
    n_levels: int = 2,
    alpha: float = 300.0,
    n_features: int = 10000,
    n_samples: int = 200,
    n_test: int = 2000,
    balanced: bool = True,
    random_state: RandomStateLike = None,
) -> Bunch:
    r"""Simulate data from the Bayesian categorical naive Bayes model (thesis §2.3.5 extended).

    The model of ``docs/categorical_correction.md``, equations (C1)–(C3), with :math:`\alpha` fixed:

    .. math::

        \theta_j &\sim \mathrm{Uniform}(\Delta^{L-1}), \\
        \phi_{j1}, \dots, \phi_{jG} \mid \alpha, \theta_j
            &\overset{\text{iid}}{\sim} \mathrm{Dirichlet}(\alpha\theta_j), \\
        x^{(i)}_j \mid y^{(i)} = g, \phi &\sim \mathrm{Categorical}(\phi_{jg}),

    for features :math:`j = 1, \dots, p` with levels :math:`0, \dots, L-1`, independent given the
    class. Given :math:`\theta_j`, :math:`E\,\phi_{jgl} = \theta_{jl}` and
    :math:`\mathrm{Var}\,\phi_{jgl} = \theta_{jl}(1-\theta_{jl})/(\alpha+1)`. For G = L = 2 this is the
    model of :func:`~hdbayes.datasets.simulate_naive_bayes` (the same distribution, not the same draws).
    The defaults are the thesis's §2.3.5 design (α = 300, p = 10000, 200 training and 2000 test
    cases) with G = 3 classes.

    Parameters
    ----------
    n_classes : int, default=3
        Number of classes G ≥ 2.
    n_levels : int, default=2
        Number of levels L of every feature, 2 ≤ L ≤ 127.
    alpha : float, default=300.0
        Concentration :math:`\alpha > 0` of the Dirichlet prior of the class-conditional
        level probabilities.
    n_features : int, default=10000
        Number of features :math:`p \ge 1`.
    n_samples, n_test : int, default=200, 2000
        Numbers of training and test cases (each ≥ 1).
    balanced : bool, default=True
        If True, each of the training and test sets has ``n // G`` cases of each class, in random
        order, and the ``n % G`` remaining cases are of distinct classes chosen at random. If False,
        labels are i.i.d. uniform on the G classes.
    random_state : None, int or numpy.random.Generator, default=None
        Seed or generator (a Generator is used and advanced, not copied).

    Returns
    -------
    sklearn.utils.Bunch
        With keys

        X : ndarray of shape (n_samples, n_features), int8
            Level codes 0..L−1.
        y : ndarray of shape (n_samples,), int64
            Classes 0..G−1.
        X_test : ndarray of shape (n_test, n_features), int8
        y_test : ndarray of shape (n_test,), int64
        feature_names : ndarray of str
            ``x0``, ``x1``, ...
        DESCR : str
        theta : ndarray of shape (n_features, n_levels), float64
            Rows on the simplex.
        phi : ndarray of shape (n_classes, n_features, n_levels), float64
            ``phi[g, j, l]`` is :math:`P(x_j = l \mid y = g)`.
        alpha : float
            The concentration α the class-conditional probabilities were drawn with.

    Raises
    ------
    InputValueError, InputTypeError
        If an argument is out of range or of the wrong type, naming it.

    Notes
    -----
    Draw order for a given generator: ``theta``, ``phi`` (as Gamma variables), ``y``, ``y_test``,
    then the features in blocks of columns, training and test rows together. A level is drawn by
    comparing one float32 uniform with the cumulative level probabilities (float32, an error in a
    probability below :math:`10^{-7}`), so no float64 (n, p) temporaries are made. The Dirichlet
    draws are made in log space (:math:`\log\mathrm{Gamma}(a+1) + \log(U)/a`), so a tiny
    :math:`\alpha\theta_{jl}` gives a probability near 0, never a 0/0.

    Examples
    --------
    >>> from hdbayes.datasets import simulate_categorical_naive_bayes
    >>> sim = simulate_categorical_naive_bayes(n_classes=3, n_levels=3, n_features=50, n_samples=30,
    ...                                        n_test=9, random_state=0)
    >>> sim.X.shape, sim.X.dtype, int(sim.X.max()), sim.phi.shape, sim.y.tolist().count(2)
    ((30, 50), dtype('int8'), 2, (3, 50, 3), 10)
    """
    n_classes = check_count("n_classes", n_classes, minimum=2)
    n_levels = check_count("n_levels", n_levels, minimum=2)
    if n_levels > _MAX_LEVELS:
        raise InputValueError(f"n_levels must be at most {_MAX_LEVELS} (int8 level codes), got {n_levels}")
    alpha = check_positive("alpha", alpha)
    p = check_count("n_features", n_features)
    n_samples, n_test = check_sizes(n_samples, n_test)
    rng = check_generator(random_state)

    # θ_j uniform on the simplex: normalised standard exponentials (Dirichlet(1, ..., 1))
    exponentials = np.maximum(rng.standard_exponential((p, n_levels)), np.finfo(float).tiny)
    theta = exponentials / exponentials.sum(axis=1, keepdims=True)
    del exponentials
    log_phi = _log_dirichlet(np.broadcast_to(alpha * theta, (n_classes, p, n_levels)), rng)
    phi = np.exp(log_phi)
    del log_phi
    y_train = _labels(n_samples, n_classes, bool(balanced), rng)
    y_test = _labels(n_test, n_classes, bool(balanced), rng)

    n = n_samples + n_test
    y_all = np.concatenate([y_train, y_test])
    # cumulative level probabilities, the last (always 1) left out: (G, p, L − 1) float32
    cumulative = np.cumsum(phi[:, :, :-1], axis=2).astype(np.float32)
    block = max(1, BLOCK_ELEMENTS // n)
    X_train = np.empty((n_samples, p), dtype=np.int8)
    X_test = np.empty((n_test, p), dtype=np.int8)
    for j0 in range(0, p, block):
        j1 = min(p, j0 + block)
        u = rng.random((n, j1 - j0), dtype=np.float32)
        rows = cumulative[:, j0:j1][y_all]  # (n, b, L − 1)
        level = np.zeros((n, j1 - j0), dtype=np.int8)
        for edge in range(n_levels - 1):
            level += u >= rows[:, :, edge]
        del rows, u
        X_train[:, j0:j1] = level[:n_samples]
        X_test[:, j0:j1] = level[n_samples:]

    descr = (
        "Categorical data from the Bayesian naive Bayes model (thesis §2.3.5 extended; "
        f"docs/categorical_correction.md C1–C3): G = {n_classes} classes, L = {n_levels} levels, "
        f"alpha = {alpha:g}, p = {p} features, {n_samples} training and {n_test} test cases."
    )
    return data_bunch(X_train, y_train, X_test, y_test, feature_names=numbered_names(p), DESCR=descr,
                      theta=theta, phi=phi, alpha=alpha)  # fmt: skip
