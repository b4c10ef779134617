"""Simulators for the experiments of the papers.

:func:`simulate_naive_bayes` draws data from the Bayesian binary naive Bayes
model of Li (2007) thesis §2.3 (equations 2.16, 2.22 and 2.26), as in the
simulation experiment of §2.3.5.
"""

from __future__ import annotations

from numbers import Real
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from hdbayes._validation import check_count, check_generator, check_positive
from hdbayes.exceptions import InputValueError

from ._common import BLOCK_ELEMENTS, check_probability, check_sizes, data_bunch, numbered_names

if TYPE_CHECKING:
    from sklearn.utils import Bunch

    from hdbayes._validation import RandomStateLike

__all__ = ["simulate_gaussian", "simulate_mixture", "simulate_naive_bayes", "simulate_probit"]



def _labels(n: int, balanced: bool, rng: np.random.Generator) -> np.ndarray:
    if not balanced:
        return rng.integers(0, 2, size=n, dtype=np.int64)
    y = np.zeros(n, dtype=np.int64)
    y[n // 2 : 2 * (n // 2)] = 1
    if n % 2:
        y[-1] = rng.integers(0, 2)  # the odd case's class is a fair coin flip
    return rng.permutation(y)


def simulate_naive_bayes(
    alpha: float = 300.0,
    n_features: int = 10000,
    n_samples: int = 200,
    n_test: int = 2000,
    balanced: bool = True,
    random_state: RandomStateLike = None,
    *,
    sparse: bool = False,
) -> Bunch:
    r"""Simulate binary data from the Bayesian naive Bayes model (thesis §2.3.5).

    The generative model of Li (2007) thesis §2.3, equations (2.16), (2.22)
    and (2.26), with the hyperparameter :math:`\alpha` fixed:

    .. math::

        \theta_j &\sim \mathrm{Uniform}(0, 1), \\
        \phi_{0,j},\ \phi_{1,j} \mid \alpha, \theta_j
            &\overset{\text{iid}}{\sim}
            \mathrm{Beta}(\alpha\theta_j,\ \alpha(1-\theta_j)), \\
        x^{(i)}_j \mid y^{(i)}, \phi &\sim \mathrm{Bernoulli}(\phi_{y^{(i)},j}),

    for features :math:`j = 1, \dots, p`, features independent given the class.
    Given :math:`\theta_j`, :math:`E\,\phi_{c,j} = \theta_j` and
    :math:`\mathrm{Var}\,\phi_{c,j} = \theta_j(1-\theta_j)/(\alpha+1)`, so a
    large :math:`\alpha` makes most features nearly useless.  The thesis
    experiment (§2.3.5) uses :math:`\alpha = 300`, :math:`p = 10000`, 200
    training and 2000 test cases, each with equal numbers of both classes:
    the defaults here.

    Parameters
    ----------
    alpha : float, default=300.0
        Concentration :math:`\alpha > 0` of the Beta prior of the class
        probabilities (true :math:`\log\alpha = 5.7` in the thesis).
    n_features : int, default=10000
        Number of features :math:`p \ge 1`.
    n_samples, n_test : int, default=200, 2000
        Numbers of training and test cases (each :math:`\ge 1`).
    balanced : bool, default=True
        If True, each of the training and test sets has ``n // 2`` cases of
        each class, in random order (as in the thesis); when ``n`` is odd the
        class of the remaining case is a fair coin flip, so the counts are
        ``floor(n/2)`` and ``ceil(n/2)`` in some order.  If False, labels are
        i.i.d. Bernoulli(1/2) (the model's :math:`\psi` fixed at 1/2).
    random_state : None, int or numpy.random.Generator, default=None
        Seed or generator (passed to :func:`numpy.random.default_rng`; a
        Generator is used and advanced, not copied; a legacy ``RandomState``
        is accepted and a seed drawn from it).  The same seed and arguments
        give identical output, dense or sparse.
    sparse : bool, default=False
        If True, ``X`` and ``X_test`` are :class:`scipy.sparse.csc_matrix`
        of dtype int8 with the same values as the dense output for the same
        seed.  Note that under this model about half the entries are 1
        (:math:`E\,\theta_j = 1/2`), so CSC storage takes about 2.5 bytes per
        entry (int8 data plus int32 row index per non-zero) against 1 byte for
        dense int8; it is built column block by column block into preallocated
        arrays, without dense (n, p) temporaries.

    Returns
    -------
    sklearn.utils.Bunch
        With keys

        X : ndarray of shape (n_samples, n_features), int8, or csc_matrix
        y : ndarray of shape (n_samples,), int64 (0/1)
        X_test : ndarray of shape (n_test, n_features), int8, or csc_matrix
        y_test : ndarray of shape (n_test,), int64 (0/1)
        feature_names : ndarray of str
            ``x0``, ``x1``, ...
        DESCR : str
        theta : ndarray of shape (n_features,), float64
        phi : ndarray of shape (2, n_features), float64
            ``phi[c, j]`` is :math:`\phi_{c,j} = P(x_j = 1 \mid y = c)`.
        alpha : float
            The concentration α the class probabilities were drawn with.

    Notes
    -----
    Draw order for a given generator: ``theta``, ``phi[0]``, ``phi[1]``,
    ``y``, ``y_test``, then the features in blocks of columns (training and test
    rows drawn together).  Bernoulli draws compare float32 uniforms with
    float32 :math:`\phi` (a probability error below :math:`10^{-7}`), so no
    float64 (n, p) temporaries are made; the peak extra memory is a few tens
    of MB regardless of ``n_features``.

    Examples
    --------
    >>> from hdbayes.datasets import simulate_naive_bayes
    >>> sim = simulate_naive_bayes(n_features=500, n_samples=20, n_test=10, random_state=0)
    >>> sim.X.shape, sim.X.dtype, int(sim.y.sum())
    ((20, 500), dtype('int8'), 10)
    """
    alpha = check_positive("alpha", alpha)
    p = check_count("n_features", n_features)
    n_samples, n_test = check_sizes(n_samples, n_test)
    rng = check_generator(random_state)

    theta = rng.random(p)
    theta[theta == 0.0] = 2.0**-54  # random() is in [0, 1); Beta needs a > 0
    a, b = alpha * theta, alpha * (1.0 - theta)
    phi = np.empty((2, p))
    phi[0] = rng.beta(a, b)
    phi[1] = rng.beta(a, b)
    del a, b
    y_train = _labels(n_samples, bool(balanced), rng)
    y_test = _labels(n_test, bool(balanced), rng)

    n = n_samples + n_test
    y_all = np.concatenate([y_train, y_test])
    phi32 = phi.astype(np.float32)
    block = max(1, BLOCK_ELEMENTS // n)

    if sparse:
        builders = [_CSCBuilder(phi, y_train, p), _CSCBuilder(phi, y_test, p)]
    else:
        X_train = np.empty((n_samples, p), dtype=np.int8)
        X_test = np.empty((n_test, p), dtype=np.int8)

    for j0 in range(0, p, block):
        j1 = min(p, j0 + block)
        # (features, cases) layout: row j of `ones` is feature j0 + j for all cases.
        prob = phi32[:, j0:j1].T[:, y_all]  # (b, n) float32, P(x = 1)
        ones = rng.random((j1 - j0, n), dtype=np.float32) < prob
        del prob
        if sparse:
            builders[0].add(ones[:, :n_samples], j0)
            builders[1].add(ones[:, n_samples:], j0)
        else:
            X_train[:, j0:j1] = ones[:, :n_samples].T
            X_test[:, j0:j1] = ones[:, n_samples:].T
        del ones

    if sparse:
        X_train, X_test = (bld.finish() for bld in builders)

    descr = (
        "Binary data from the Bayesian naive Bayes model (Li 2007 thesis §2.3.5): "
        f"alpha = {alpha:g}, p = {p} features, {n_samples} training and {n_test} test cases."
    )
    return data_bunch(X_train, y_train, X_test, y_test, feature_names=numbered_names(p), DESCR=descr,
                      theta=theta, phi=phi, alpha=alpha)  # fmt: skip


class _CSCBuilder:
    """Accumulate column blocks of a 0/1 matrix into preallocated CSC arrays.

    The capacity is the expected number of ones (known from ``phi`` before X
    is drawn) plus a generous margin; in the (astronomically unlikely) case it
    is exceeded the index array grows geometrically.
    """

    def __init__(self, phi: np.ndarray, y: np.ndarray, p: int):
        self.n_rows = y.shape[0]
        n1 = int(y.sum())
        n0 = self.n_rows - n1
        mean = n0 * phi[0] + n1 * phi[1]
        var = n0 * phi[0] * (1 - phi[0]) + n1 * phi[1] * (1 - phi[1])
        capacity = int(np.ceil(mean.sum() + 10.0 * np.sqrt(var.sum()) + 1024))
        capacity = min(capacity, self.n_rows * p)
        big = max(capacity, p + 1) > np.iinfo(np.int32).max
        self.index_dtype = np.int64 if big else np.int32
        self.indices = np.empty(capacity, dtype=self.index_dtype)
        self.indptr = np.zeros(p + 1, dtype=np.int64)
        self.nnz = 0
        self.p = p

    def add(self, ones_t: np.ndarray, j0: int) -> None:
        """Add columns ``j0 : j0 + len(ones_t)``; ``ones_t`` is (columns, rows) bool."""
        counts = ones_t.sum(axis=1)
        flat = np.flatnonzero(ones_t)  # C order: by column, then row -> CSC order
        k = flat.shape[0]
        if self.nnz + k > self.indices.shape[0]:
            new = max(self.nnz + k, int(self.indices.shape[0] * 1.5))
            grown = np.empty(new, dtype=self.index_dtype)
            grown[: self.nnz] = self.indices[: self.nnz]
            self.indices = grown
        self.indices[self.nnz : self.nnz + k] = flat % self.n_rows
        self.indptr[j0 + 1 : j0 + 1 + counts.shape[0]] = self.nnz + np.cumsum(counts)
        self.nnz += k

    def finish(self) -> sp.csc_matrix:
        nnz = self.nnz
        index_dtype = np.int64 if nnz > np.iinfo(np.int32).max else self.index_dtype
        indices = self.indices[:nnz]
        if self.indices.shape[0] - nnz > nnz // 8 + 4096:
            indices = indices.copy()  # do not keep a much larger buffer alive
        indices = indices.astype(index_dtype, copy=False)
        indptr = self.indptr.astype(index_dtype, copy=False)
        data = np.ones(nnz, dtype=np.int8)
        self.indices = None
        return sp.csc_matrix((data, indices, indptr), shape=(self.n_rows, self.p), copy=False)


def simulate_gaussian(
    n_classes: int = 6,
    n_features: int = 4000,
    n_samples: int = 200,
    n_test: int = 5000,
    *,
    tau_nu: float = 100.0,
    tau_mu: float = 100.0,
    alpha_x: float = 4.0,
    w_x: float = 1.0,
    random_state: RandomStateLike = None,
) -> Bunch:
    r"""Simulate data from the Bayesian Gaussian classification model (Li 2009, §4.1).

    .. math::

        \nu_j \sim N(0, 1/\tau^\nu), \quad
        \mu_j^{(g)} \mid \nu_j \sim N(\nu_j, 1/\tau^\mu), \quad
        \tau_j^x \sim \mathrm{Gamma}(\alpha^x/2,\ \mathrm{rate}\ \alpha^x w^x/2), \\
        y \sim \mathrm{Uniform}\{0, \dots, G-1\}, \quad
        x_j \mid y = g \sim N(\mu_j^{(g)}, 1/\tau_j^x),

    features independent given the class. The paper's experiment: G = 6, p = 4000,
    τ^ν = τ^μ = 100, α^x = 4, w^x = 1 (so τ^x_j ~ Gamma(2, rate 2)), 200 training and
    5000 test cases — the defaults here.

    Parameters
    ----------
    n_classes : int, default=6
        Number of classes G, drawn uniformly.
    n_features : int, default=4000
        Number of features p.
    n_samples, n_test : int, default=200, 5000
        Numbers of training and test cases.
    tau_nu, tau_mu : float, default=100
        Precisions of the feature means ν_j and of the class means around them.
    alpha_x, w_x : float, default=4, 1
        Gamma prior of the per-feature precisions τ^x_j (prior mean 1/w^x).
    random_state : None, int or numpy.random.Generator
        Source of the random numbers.

    Returns
    -------
    sklearn.utils.Bunch
        ``X`` (n_samples, p), ``y``, ``X_test``, ``y_test`` (labels 0..G−1), ``feature_names``,
        ``DESCR``, ``mu`` (G, p), ``nu`` (p,), ``tau_x`` (p,), and the settings ``tau_mu``, ``tau_nu``.

    Examples
    --------
    >>> from hdbayes.datasets import simulate_gaussian
    >>> sim = simulate_gaussian(n_classes=3, n_features=50, n_samples=30, n_test=10, random_state=0)
    >>> sim.X.shape, sim.X_test.shape, sim.mu.shape
    ((30, 50), (10, 50), (3, 50))
    """
    n_classes = check_count("n_classes", n_classes, minimum=2)
    n_features = check_count("n_features", n_features)
    n_samples, n_test = check_sizes(n_samples, n_test)
    tau_nu, tau_mu = check_positive("tau_nu", tau_nu), check_positive("tau_mu", tau_mu)
    alpha_x, w_x = check_positive("alpha_x", alpha_x), check_positive("w_x", w_x)
    rng = check_generator(random_state)
    nu = rng.normal(0.0, 1.0 / np.sqrt(tau_nu), size=n_features)
    mu = nu + rng.normal(0.0, 1.0 / np.sqrt(tau_mu), size=(n_classes, n_features))
    tau_x = rng.gamma(alpha_x / 2.0, 2.0 / (alpha_x * w_x), size=n_features)
    y = rng.integers(0, n_classes, size=n_samples + n_test)
    X = mu[y] + rng.standard_normal((n_samples + n_test, n_features)) / np.sqrt(tau_x)
    descr = (
        f"Gaussian classification data (Li 2009 §4.1): G = {n_classes} classes, p = {n_features} features, "
        f"tau_nu = {tau_nu:g}, tau_mu = {tau_mu:g}, alpha_x = {alpha_x:g}, w_x = {w_x:g}, "
        f"{n_samples} training and {n_test} test cases."
    )
    n = n_samples
    return data_bunch(X[:n], y[:n], X[n:], y[n:], feature_names=numbered_names(n_features), DESCR=descr,
                      mu=mu, nu=nu, tau_x=tau_x, tau_mu=tau_mu, tau_nu=tau_nu)  # fmt: skip


def simulate_mixture(
    alpha: float = 300.0,
    n_features: int = 10000,
    n_samples: int = 200,
    n_test: int = 2000,
    *,
    phi00: float = 0.1,
    phi10: float = 0.9,
    random_state: RandomStateLike = None,
) -> Bunch:
    r"""Simulate data from the Bayesian binary mixture model (thesis §2.4.4).

    Equal numbers of latent labels z = 0 and z = 1 in each set (in random order);
    the response x_0 ~ Bernoulli(φ_{z,0}) with φ_{0,0} = ``phi00`` and φ_{1,0} =
    ``phi10``; features θ_j ~ Uniform(0, 1), φ_{z,j} ~ Beta(αθ_j, α(1 − θ_j)),
    x_j ~ Bernoulli(φ_{z,j}). The thesis: α = 300, φ_00 = 0.1, φ_10 = 0.9, p = 10000,
    200 training and 2000 test cases (the defaults): ``n_samples`` training and ``n_test``
    test cases.

    Parameters
    ----------
    alpha : float, default=300.0
        Concentration α > 0 of the Beta prior of the features' probabilities.
    n_features : int, default=10000
        Number of features p (the response x_0 not counted).
    n_samples, n_test : int, default=200, 2000
        Numbers of training and test cases.
    phi00, phi10 : float, default=0.1, 0.9
        P(x_0 = 1 | z = 0) and P(x_0 = 1 | z = 1), in [0, 1].
    random_state : None, int or numpy.random.Generator
        Source of the random numbers.

    Returns
    -------
    sklearn.utils.Bunch
        ``X``, ``y`` (the response x_0), ``X_test``, ``y_test`` (int8 / int64), ``feature_names``,
        ``DESCR``, ``z``, ``z_test`` (the latent labels of the training and test cases), ``theta``,
        ``phi`` (2, p), ``alpha``.

    Examples
    --------
    >>> from hdbayes.datasets import simulate_mixture
    >>> sim = simulate_mixture(n_features=40, n_samples=20, n_test=10, random_state=0)
    >>> sim.X.shape, sim.z_test.shape, int(sim.z.sum())
    ((20, 40), (10,), 10)
    """
    n_features = check_count("n_features", n_features)
    n_samples, n_test = check_sizes(n_samples, n_test)
    alpha = check_positive("alpha", alpha)
    phi00, phi10 = check_probability("phi00", phi00), check_probability("phi10", phi10)
    rng = check_generator(random_state)
    theta = rng.uniform(size=n_features)
    phi = rng.beta(alpha * theta, alpha * (1.0 - theta), size=(2, n_features))
    parts = []  # (X, y, z) of the training cases, then of the test cases
    for n in (n_samples, n_test):
        z = _labels(n, True, rng)
        y = (rng.uniform(size=n) < np.where(z == 1, phi10, phi00)).astype(np.int64)
        X = (rng.uniform(size=(n, n_features)).astype(np.float32) < phi[z].astype(np.float32)).astype(np.int8)
        parts.append((X, y, z))
    (X, y, z), (X_test, y_test, z_test) = parts
    descr = (
        f"Binary mixture data (Li 2007 thesis §2.4.4): alpha = {alpha:g}, phi00 = {phi00:g}, phi10 = {phi10:g}, "
        f"p = {n_features} features, {n_samples} training and {n_test} test cases."
    )
    return data_bunch(X, y, X_test, y_test, feature_names=numbered_names(n_features), DESCR=descr, z=z,
                      z_test=z_test, theta=theta, phi=phi, alpha=alpha)  # fmt: skip


def simulate_probit(
    n_classes: int = 2,
    n_features: int = 2000,
    n_samples: int = 100,
    n_test: int = 500,
    *,
    n_informative: int = 10,
    signal_sd: float = 2.0,
    random_state: RandomStateLike = None,
) -> Bunch:
    r"""Simulate a weak linear signal among many independent genes: the (multinomial) probit model.

    .. math::

        x_j \sim N(0, 1) \text{ iid}, \quad
        \beta_{cj} \sim N(0, \sigma^2 / s) \ (j \le s), \ \beta_{cj} = 0 \ (j > s), \\
        f_c(x) = \textstyle\sum_j \beta_{cj} x_j, \quad
        y = \arg\max_c\, (f_c(x) + \varepsilon_c), \ \varepsilon_c \sim N(0, 1) \text{ iid},

    for C ≥ 2 classes (with C = 2 this is the binary probit model p(y = 1 | x) = Φ((f_1 − f_0)/√2)). The
    class latents f_c have standard deviation σ (``signal_sd``) at a random case: only ``n_informative`` = s
    of the p genes carry the signal, the rest are noise a classifier on all genes must learn to ignore. With
    s = 10, σ = 2 and p = 2000 the signal is weak for n in the hundreds: predicting the training class
    frequencies is a serious competitor.

    Parameters
    ----------
    n_classes : int, default=2
        Number of classes C.
    n_features : int, default=2000
        Number of genes p.
    n_samples, n_test : int, default=100, 500
        Numbers of training and test cases.
    n_informative : int, default=10
        Number s of genes that carry the signal (the first s columns); at most ``n_features``.
    signal_sd : float, default=2.0
        σ, the standard deviation of each class latent f_c (0 gives labels independent of x).
    random_state : None, int or numpy.random.Generator
        Source of the random numbers.

    Returns
    -------
    sklearn.utils.Bunch
        ``X`` (n_samples, p), ``y``, ``X_test``, ``y_test`` (labels 0..C−1), ``feature_names``, ``DESCR``,
        ``coef`` (C, p), the β of the model.

    Examples
    --------
    >>> from hdbayes.datasets import simulate_probit
    >>> sim = simulate_probit(n_classes=3, n_features=50, n_samples=30, n_test=10, random_state=0)
    >>> sim.X.shape, sim.X_test.shape, sim.coef.shape
    ((30, 50), (10, 50), (3, 50))
    """
    n_classes = check_count("n_classes", n_classes, minimum=2)
    n_features = check_count("n_features", n_features)
    n_samples, n_test = check_sizes(n_samples, n_test)
    n_informative = check_count("n_informative", n_informative)
    if n_informative > n_features:
        raise InputValueError(f"n_informative must be at most n_features={n_features}, got {n_informative}")
    if isinstance(signal_sd, bool) or not isinstance(signal_sd, Real) or not np.isfinite(signal_sd) or signal_sd < 0:
        raise InputValueError(f"signal_sd must be a finite number >= 0, got {signal_sd!r}")
    rng = check_generator(random_state)
    coef = np.zeros((n_classes, n_features))
    coef[:, :n_informative] = rng.normal(0.0, float(signal_sd) / np.sqrt(n_informative), (n_classes, n_informative))
    X = rng.standard_normal((n_samples + n_test, n_features))
    latent = X[:, :n_informative] @ coef[:, :n_informative].T + rng.standard_normal((n_samples + n_test, n_classes))
    y = np.argmax(latent, axis=1).astype(np.int64)
    descr = (
        f"Probit data with a weak signal: C = {n_classes} classes, p = {n_features} independent N(0, 1) genes, "
        f"{n_informative} of them informative, latent sd {float(signal_sd):g}; {n_samples} training and "
        f"{n_test} test cases."
    )
    n = n_samples
    return data_bunch(X[:n], y[:n], X[n:], y[n:], feature_names=numbered_names(n_features), DESCR=descr, coef=coef)
