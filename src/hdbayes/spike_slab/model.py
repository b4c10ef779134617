"""The group spike-and-slab model, shared by every inference engine (Hernández-Lobato et al. 2013, §2).

``y = X w + ε``, ``ε ~ N(0, σ0² I)`` (eq. 1); the features are partitioned into G groups, each group is
either exactly zero (spike) or drawn from ``N(0, v_{s,g} I)`` (slab, eq. 3), and the group indicators
are independent Bernoulli(p0,g) (eq. 4). This module holds what does not depend on how the posterior
is computed:

* the group structure and the priors, and their checks: :func:`check_model_parameters` for the
  user's forms (group sizes, labels, index lists; scalars or one value per group), and
  :func:`check_coded_model` for the engines' form (codes 0..G−1 and arrays of length G);
* the centring of X and y for an intercept with a flat prior (:func:`center_data`) and the overflow
  check of the centred data (:func:`check_data_magnitudes`); :func:`prepare_fit`, the one preamble of
  every estimator's ``fit`` after its validation of (X, y) (the model's checks, centring), returning a
  :class:`FitProblem`;
* the evidence fixed point over (σ0², a shift of logit p0, a scale of v_s) (not the paper's;
  docs/spike_slab.md):
  :func:`update_hyperparameters` is one step from an engine's sufficient quantities,
  :func:`maximise_evidence` the loop around any engine that reports them.

The engines — :mod:`~hdbayes.spike_slab.ep` (expectation propagation), :mod:`~hdbayes.spike_slab.gibbs`
(collapsed Gibbs), :mod:`~hdbayes.spike_slab.exact` (enumeration) and :mod:`~hdbayes.spike_slab.design`
(sequential design over EP) — import the model from here and nothing from each other's internals.
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass
from numbers import Integral, Real
from typing import TYPE_CHECKING

import numpy as np
import scipy.optimize
from scipy.special import expit, log_expit, logit
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval

from hdbayes._validation import check_positive, feature_label, overflow_error
from hdbayes.exceptions import InputTypeError, InputValueError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import ArrayLike

__all__ = [
    "LOG_2PI",
    "MODEL_PARAMETER_CONSTRAINTS",
    "OVERFLOW_CAUSE",
    "EvidenceStatistics",
    "FitProblem",
    "center_data",
    "check_coded_model",
    "check_data_magnitudes",
    "check_group_codes",
    "check_group_values",
    "check_groups",
    "check_model_parameters",
    "log_normal_at_zero",
    "log_site_normaliser",
    "matching_shift",
    "maximise_evidence",
    "prepare_fit",
    "update_hyperparameters",
]

LOG_2PI = float(np.log(2.0 * np.pi))


#: ``_parameter_constraints`` of the model's parameters, shared by every estimator of it. A prior
#: given per group is checked against the groups in :func:`check_model_parameters`.
MODEL_PARAMETER_CONSTRAINTS = {
    "groups": [None, Interval(Integral, 1, None, closed="left"), "array-like"],
    "prior_inclusion": [Interval(Real, 0, 1, closed="neither"), "array-like"],
    "slab_variance": [Interval(Real, 0, np.inf, closed="neither"), "array-like"],
    "noise_variance": [Interval(Real, 0, np.inf, closed="neither")],
    "fit_intercept": ["boolean"],
}


def log_normal_at_zero(mean, variance):
    """``log N(0 | mean, variance)``, elementwise."""
    return -0.5 * (LOG_2PI + np.log(variance) + mean * mean / variance)


def log_site_normaliser(cavity_mean, cavity_variance, cavity_log_odds, slab_variance):
    """``log κ_j = log(σ(p^c) N(0 | m^c, v^c + v_s) + σ(−p^c) N(0 | m^c, v^c))``, elementwise.

    The normaliser of a coefficient's spike-and-slab factor against its Gaussian cavity (m^c, v^c)
    with p^c the cavity log-odds of its group indicator (paper eq. 28).
    """
    return np.logaddexp(log_expit(cavity_log_odds) + log_normal_at_zero(cavity_mean, cavity_variance + slab_variance),
                        log_expit(-cavity_log_odds) + log_normal_at_zero(cavity_mean, cavity_variance))  # fmt: skip


# ----------------------------------------------------------------------------------------------
# the group structure and the priors
# ----------------------------------------------------------------------------------------------


def check_groups(groups: int | ArrayLike | Sequence[Sequence[int]], n_features: int) -> tuple[np.ndarray, int]:
    """Validate a partition of the features into groups.

    Parameters
    ----------
    groups : None, int, array-like of length ``n_features``, or list of index lists
        * None: one group per feature (the ordinary spike-and-slab prior);
        * an int ``s``: consecutive groups of ``s`` features (``n_features`` must be a multiple);
        * a 1-D array of labels (integers or strings), one per feature; groups are numbered in
          the sorted order of the labels;
        * a list of index lists (as skglm's ``GroupLasso``), which must partition
          ``range(n_features)`` without overlap; groups are numbered in the list's order.
    n_features : int
        Number of features d.

    Returns
    -------
    codes : ndarray of int64, shape (n_features,)
        The group g(j) of each feature, values 0..G−1.
    n_groups : int
        The number of groups G.
    """
    if groups is None:
        return np.arange(n_features, dtype=np.int64), n_features
    if isinstance(groups, numbers.Integral) and not isinstance(groups, bool):
        size = int(groups)
        if size < 1 or n_features % size:
            raise InputValueError(f"groups={size} (a group size) must be >= 1 and divide n_features={n_features}")
        return np.arange(n_features, dtype=np.int64) // size, n_features // size
    if isinstance(groups, (list, tuple)) and any(isinstance(g, (list, tuple, np.ndarray)) for g in groups):
        return _groups_from_index_lists(groups, n_features)
    labels = np.asarray(groups)
    if labels.ndim != 1:
        raise InputValueError(f"groups must be a 1-D array of labels (one per feature), got shape {labels.shape}")
    if labels.shape[0] != n_features:
        raise InputValueError(f"groups has length {labels.shape[0]}, but X has {n_features} features")
    if labels.dtype.kind == "f":
        bad = np.flatnonzero(~np.isfinite(labels))
        if bad.size:
            raise InputValueError(f"groups contains NaN or infinite labels (feature {int(bad[0])}: {labels[bad[0]]:g})")
        bad = np.flatnonzero(labels != np.round(labels))
        if bad.size:
            raise InputValueError(f"groups must be integers (or strings): the label {labels[bad[0]]:g} of feature "
                                  f"{int(bad[0])} is not an integer")  # fmt: skip
    elif labels.dtype.kind == "O":
        for j, v in enumerate(labels):
            if isinstance(v, float) and not np.isfinite(v):
                raise InputValueError(f"groups contains NaN or infinite labels (feature {j}: {v:g})")
            if isinstance(v, (float, np.floating)) and v != round(v):
                raise InputValueError(f"groups must be integers (or strings): the label {v:g} of feature {j} "
                                      "is not an integer")  # fmt: skip
    elif labels.dtype.kind not in "iuUSb":
        raise InputTypeError(f"groups must be integers or strings, got labels of type {labels.dtype.name}")
    try:
        _, codes = np.unique(labels, return_inverse=True)
    except TypeError as error:
        raise InputTypeError(
            f"groups labels must be mutually comparable (all integers or all strings): {error}"
        ) from None
    codes = codes.astype(np.int64).ravel()
    return codes, int(codes.max()) + 1


def _groups_from_index_lists(groups, n_features):
    codes = np.full(n_features, -1, dtype=np.int64)
    for g, members in enumerate(groups):
        members = np.asarray(members)
        if members.size and (members.dtype.kind not in "iu"):
            raise InputTypeError(
                f"group {g} must list integer feature indices, got values of type {members.dtype.name}"
            )
        members = members.astype(np.int64)
        if members.size == 0:
            raise InputValueError(f"group {g} is empty")
        if members.min() < 0 or members.max() >= n_features:
            raise InputValueError(f"group {g} holds an index outside 0..{n_features - 1}")
        taken = codes[members] >= 0
        if taken.any() or np.unique(members).size != members.size:
            j = int(members[taken][0]) if taken.any() else int(members[0])
            first = int(codes[j]) if codes[j] >= 0 else g
            raise InputValueError(f"groups overlap: feature {j} appears in more than one group (first in group "
                                  f"{first}); groups must partition the features")  # fmt: skip
        codes[members] = g
    missing = np.flatnonzero(codes < 0)
    if missing.size:
        raise InputValueError(f"groups do not cover every feature: feature {int(missing[0])} is in no group")
    return codes, len(groups)


def check_group_values(name, value, n_groups, *, upper=None):
    """A scalar or one value per group, finite and > 0 (and < ``upper`` if given), as an array of length G."""
    try:
        array = np.asarray(value, dtype=float) if not isinstance(value, (str, bool)) else None
    except (TypeError, ValueError):
        array = None
    if array is None or array.ndim > 1:
        raise InputTypeError(f"{name} must be a number or a 1-D array with one value per group")
    if array.ndim == 1 and array.shape[0] != n_groups:
        raise InputValueError(f"{name} has {array.shape[0]} values, but there are {n_groups} groups")
    flat = np.atleast_1d(array)
    if not np.all(np.isfinite(flat)):
        raise InputValueError(f"{name} must be finite, got {flat[~np.isfinite(flat)][0]:g}")
    bad = (flat <= 0) | ((flat >= upper) if upper is not None else False)
    if np.any(bad):
        interval = f"in (0, {upper:g})" if upper is not None else "> 0"
        where = f" (group {int(np.flatnonzero(bad)[0])})" if array.ndim == 1 else ""
        raise InputValueError(f"{name} must be {interval}, got {flat[bad][0]:g}{where}")
    return np.broadcast_to(array, (n_groups,)).astype(float)


def check_model_parameters(groups, prior_inclusion, slab_variance, noise_variance, n_features):
    """Validate the model of Hernández-Lobato et al. (2013) §2 for ``n_features`` features.

    Returns
    -------
    codes : ndarray of int64, shape (d,)
    n_groups : int
    prior_inclusion, slab_variance : ndarray of shape (G,)
        p0,g in (0, 1) and v_{s,g} > 0.
    noise_variance : float
        σ0² > 0.
    """
    codes, n_groups = check_groups(groups, n_features)
    return (codes, n_groups, check_group_values("prior_inclusion", prior_inclusion, n_groups, upper=1.0),
            check_group_values("slab_variance", slab_variance, n_groups),
            check_positive("noise_variance", noise_variance))  # fmt: skip


def center_data(X, y, fit_intercept):
    """Centre X and y for an intercept with a flat prior; returns (X, y, X_offset, y_offset).

    A constant column becomes exactly zero (its offset is its value, not a rounded mean), so that
    EP recognises it as carrying no information (``r_j = 0``; see :func:`expectation_propagation`).
    """
    if not fit_intercept:
        return X, y, np.zeros(X.shape[1]), 0.0
    with np.errstate(over="ignore", invalid="ignore"):
        x_offset, y_offset = X.mean(axis=0), float(y.mean())
        constant = np.flatnonzero(np.all(X == X[:1], axis=0)) if X.shape[0] else np.zeros(0, dtype=np.int64)
        x_offset[constant] = X[0, constant]
        centred = X - x_offset
        centred[:, constant] = 0.0
        return centred, y - y_offset, x_offset, y_offset


def check_data_magnitudes(X_raw, y_raw, X, y, feature_names=None):
    """Raise an input error naming the column of X (or y) whose sum of squares overflows.

    ``X_raw, y_raw`` are the data as given (to quote the offending value and row), ``X, y`` the
    centred data the model uses; ``feature_names`` names the columns (``feature_names_in_``).
    """
    with np.errstate(over="ignore", invalid="ignore"):
        column_squares = np.einsum("ij,ij->j", X, X)
        y_squares = float(y @ y)
    bad = np.flatnonzero(~np.isfinite(column_squares))
    if bad.size:
        j = int(bad[0])
        raise overflow_error(f"X {feature_label(j, feature_names)}", "its sum of squares", X_raw[:, j])
    if not np.isfinite(y_squares):
        raise overflow_error("y", "its sum of squares", y_raw)


#: The cause an estimator names when an engine's output is not finite.
OVERFLOW_CAUSE = "X or y is too large for the hyperparameters; rescale them"


@dataclass(frozen=True)
class FitProblem:
    """The data and the model as an engine takes them, after an estimator's checks (:func:`prepare_fit`).

    Attributes
    ----------
    X, y : ndarray of shape (n, d) and (n,)
        The data, centred if the estimator fits an intercept.
    x_offset : ndarray of shape (d,)
    y_offset : float
        What was subtracted (zeros without an intercept).
    groups : ndarray of int64, shape (d,)
        g(j) in 0..G−1.
    n_groups : int
    prior_inclusion, slab_variance : ndarray of shape (G,)
    noise_variance : float
    """

    X: np.ndarray
    y: np.ndarray
    x_offset: np.ndarray
    y_offset: float
    groups: np.ndarray
    n_groups: int
    prior_inclusion: np.ndarray
    slab_variance: np.ndarray
    noise_variance: float

    def intercept(self, coef):
        """The intercept of the uncentred data that goes with the coefficients ``coef``."""
        return float(self.y_offset - self.x_offset @ coef)


def prepare_fit(X, y, groups, prior_inclusion, slab_variance, noise_variance, *, fit_intercept, feature_names=None):
    """The preamble of every estimator's ``fit`` after validating (X, y): check the model for X's width, centre.

    Single parameters are already checked by the estimator's ``_parameter_constraints``; the checks here are
    those that need the data: the groups against the features, one prior value per group, and the magnitudes
    of the centred data.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The validated float64 features.
    y : ndarray of shape (n,)
        The validated float64 responses.
    groups, prior_inclusion, slab_variance, noise_variance
        The model in the user's forms (see :func:`check_model_parameters`).
    fit_intercept : bool
        Whether to centre X and y (an intercept with a flat prior).
    feature_names : array-like of str, optional
        The names of the features, for messages.

    Returns
    -------
    FitProblem
    """
    codes, n_groups, prior_inclusion, slab_variance, noise_variance = check_model_parameters(
        groups, prior_inclusion, slab_variance, noise_variance, X.shape[1]
    )
    centred, y_centred, x_offset, y_offset = center_data(X, y, fit_intercept)
    check_data_magnitudes(X, y, centred, y_centred, feature_names)
    return FitProblem(centred, y_centred, x_offset, y_offset, codes, n_groups, prior_inclusion, slab_variance,
                      noise_variance)  # fmt: skip


def check_group_codes(groups, n_groups, n_features):
    """Validate engine-level group codes: integers g(j) in 0..G−1, one per feature (as :func:`check_groups` returns).

    Unlike :func:`check_groups` the codes are not renumbered (an empty group stays empty).

    Returns
    -------
    ndarray of int64, shape (n_features,)
    """
    codes = np.asarray(groups)
    if codes.shape != (n_features,):
        raise InputValueError(f"groups must hold one group index per feature ({n_features}), got shape {codes.shape}")
    if codes.size and codes.dtype.kind not in "iu":
        raise InputTypeError(f"groups must be integer group indices, got values of type {codes.dtype.name}")
    if codes.size and (codes.min() < 0 or codes.max() >= n_groups):
        raise InputValueError(f"groups must be in 0..{n_groups - 1} (one prior value per group), got {codes.min()}.."
                              f"{codes.max()}")  # fmt: skip
    return codes.astype(np.int64, copy=False)


def check_coded_model(groups, prior_inclusion, slab_variance, noise_variance, n_features):
    """Validate the model as the engines take it: group codes and per-group priors (see :func:`check_model_parameters`).

    ``groups`` are codes g(j) in 0..G−1 (not renumbered); G is the length of ``prior_inclusion`` or
    ``slab_variance`` when either is an array, else ``max g(j) + 1``.

    Returns
    -------
    codes : ndarray of int64, shape (d,)
    prior_inclusion, slab_variance : ndarray of shape (G,)
    noise_variance : float
    """
    sizes = [np.shape(value)[0] for value in (prior_inclusion, slab_variance) if np.ndim(value) == 1]
    codes = np.asarray(groups)
    n_groups = sizes[0] if sizes else (int(codes.max()) + 1 if codes.size and codes.dtype.kind in "iu" else 0)
    codes = check_group_codes(codes, n_groups, n_features)
    return (codes, check_group_values("prior_inclusion", prior_inclusion, n_groups, upper=1.0),
            check_group_values("slab_variance", slab_variance, n_groups),
            check_positive("noise_variance", noise_variance))  # fmt: skip


# ----------------------------------------------------------------------------------------------
# the evidence fixed point (docs/spike_slab.md, "Estimator")
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EvidenceStatistics:
    """What one step of the evidence fixed point needs from an inference engine at its stationary point.

    Attributes
    ----------
    expected_squared_error : float
        ``E_Q‖y − Xw‖² = ‖y − Xm‖² + tr(X V Xᵀ)`` (with the part of y projected out, on a QR path).
    n_samples : int
        The n that divides it.
    inclusion_sum : float
        ``Σ_g P(z_g = 1 | y)`` under the approximation.
    cavity_mean, cavity_variance, cavity_log_odds : ndarray of shape (m,)
        The valid cavities (``v^c > 0``) of the per-coefficient sites, with p^c the log-odds of the
        cavity on the coefficient's group indicator.
    base_slab_variance : ndarray of shape (m,)
        ``v_{s,g(j)}`` of those coefficients before the common scale (the scale multiplies it).
    """

    expected_squared_error: float
    n_samples: int
    inclusion_sum: float
    cavity_mean: np.ndarray
    cavity_variance: np.ndarray
    cavity_log_odds: np.ndarray
    base_slab_variance: np.ndarray


def matching_shift(base_logit, target):
    """The δ with ``Σ_g σ(logit p0,g + δ) = target``, searched in [−40, 40].

    The sum increases in δ; a target beyond what δ = ±40 reaches (every group certainly in or out)
    gives the end of the interval, where the prior is already as extreme as double precision allows.
    """

    def excess(delta):
        return float(np.sum(expit(base_logit + delta))) - target

    if excess(-40.0) >= 0.0:
        return -40.0
    if excess(40.0) <= 0.0:
        return 40.0
    return float(scipy.optimize.brentq(excess, -40.0, 40.0, xtol=1e-12))


def update_hyperparameters(statistics, noise_variance, base_logit, log_scale):
    """One fixed-point step of (σ0², δ, log c) with the engine's state held fixed (docs/spike_slab.md, "Estimator").

    At an EP fixed point ``∂ log Z_EP/∂θ = Σ_i E_{tilted_i}[∂ log f_i/∂θ]`` (f1 and f3 are exact, so
    their tilted distribution is Q). Setting each component to zero:
    ``σ0² ← E_Q‖y − Xw‖²/n``; the shift δ of logit p0 solves ``Σ_g σ(logit p0,g + δ) = Σ_g σ(p_g)``;
    the scale c of v_s maximises ``Σ_j log Z_j(c v_s)`` with the cavities fixed, searched within
    ``log c ± 5``.

    Parameters
    ----------
    statistics : EvidenceStatistics
    noise_variance : float
        The current σ0² (floors the new one at 1e-12 σ0²).
    base_logit : ndarray of shape (G,)
        logit p0,g as given (before the shift).
    log_scale : float
        The current log c.

    Returns
    -------
    noise_variance, shift, log_scale : float
    """
    s = statistics
    new_noise = max(s.expected_squared_error / s.n_samples, 1e-12 * noise_variance)
    new_shift = matching_shift(base_logit, s.inclusion_sum)

    def minus_log_z(kappa):
        vs = s.base_slab_variance * np.exp(kappa)
        return -float(np.sum(log_site_normaliser(s.cavity_mean, s.cavity_variance, s.cavity_log_odds, vs)))

    new_log_scale = log_scale
    if s.cavity_mean.size:  # zero columns have flat cavities and no say in v_s
        found = scipy.optimize.minimize_scalar(minus_log_z, bounds=(log_scale - 5.0, log_scale + 5.0),
                                               method="bounded", options={"xatol": 1e-6})  # fmt: skip
        if np.isfinite(found.fun) and np.isfinite(found.x):
            new_log_scale = float(found.x)
    return float(new_noise), float(new_shift), new_log_scale


def maximise_evidence(fit, statistics, prior_inclusion, slab_variance, noise_variance, *, max_rounds=100,
                      rtol=1e-4):  # fmt: skip
    """Fixed-point maximisation of an engine's log evidence over σ0², a shift of logit p0 and a scale of v_s.

    Each round fits the engine (warm-started from the previous round's state) and takes one
    :func:`update_hyperparameters` step. Stops when the three change by less than ``rtol``
    (relative for σ0²), after at most ``max_rounds`` rounds; the fit with the largest evidence among
    the converged rounds is kept. A fixed point that stops otherwise (``max_rounds`` used up, or the
    engine not converging at a later round's values) says so with a ``ConvergenceWarning``.

    Parameters
    ----------
    fit : callable
        ``fit(prior_inclusion, slab_variance, noise_variance, init)`` returns a result with
        ``converged``, ``log_evidence``, ``last_change`` and ``sites`` (the next round's ``init``;
        None in the first round).
    statistics : callable
        ``statistics(result, slab_variance, log_scale)`` returns the :class:`EvidenceStatistics` of a
        result fitted with ``slab_variance`` (which is the base v_s times ``exp(log_scale)``).
    prior_inclusion, slab_variance : ndarray of shape (G,)
        The starting p0,g and v_{s,g}.
    noise_variance : float
        The starting σ0².

    Returns
    -------
    prior_inclusion, slab_variance : ndarray of shape (G,)
    noise_variance : float
    result
        The engine's result at those values; if the first round already failed (not converged, or
        a non-finite evidence), that failed result, with None for the three values.
    """
    base_logit = logit(prior_inclusion)
    shift = log_scale = 0.0
    init, best, stopped = None, None, None
    for round_ in range(1, max_rounds + 1):
        p0, vs = expit(base_logit + shift), slab_variance * np.exp(log_scale)
        result = fit(p0, vs, noise_variance, init)
        if not (result.converged and np.isfinite(result.log_evidence)):
            stopped = f"the fit at round {round_}'s values did not converge"
            break
        if best is None or result.log_evidence > best[3].log_evidence:
            best = (p0, vs, noise_variance, result)
        init = result.sites
        new_noise, new_shift, new_log_scale = update_hyperparameters(statistics(result, vs, log_scale), noise_variance,
                                                                     base_logit, log_scale)  # fmt: skip
        change = max(abs(np.log(new_noise / noise_variance)), abs(new_shift - shift), abs(new_log_scale - log_scale))
        noise_variance, shift, log_scale = new_noise, new_shift, new_log_scale
        if change < rtol:
            break
    else:
        stopped = f"{max_rounds} rounds were used up (last change {change:.3g} > rtol={rtol:g})"
    if best is None:
        return None, None, None, result
    if stopped is not None:
        warnings.warn(
            f"the evidence maximisation did not reach its fixed point: {stopped}; the converged round of largest "
            "evidence is kept",
            ConvergenceWarning,
            stacklevel=3,
        )
    p0, vs, noise, result = best
    return p0, vs, float(noise), result
