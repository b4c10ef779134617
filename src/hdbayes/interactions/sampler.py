"""Compiled MCMC for compressed logistic interaction models (Li & Neal; thesis §3.3, §3.4.4).

State: the compressed parameters s[g, k] — one per group g and parameterised class k
(K = 2: one set, class 0 has linear predictor 0; K > 2: K sets) — and τ_o = log σ_o for
the orders o = 1..O (σ_0 is fixed). The linear predictors lv[i, k] are cached, so the
update of s[g, k] touches only the cases of group g (its expression E_g).

One iteration (thesis §3.4.4) = one slice-sampling update (stepping out + shrinkage, Neal
2003) of every s[g, k], then ``n_sigma_updates`` slice updates of every τ_o with the
Jacobian of σ = e^τ:

    log f(τ_o) = −α_o τ − λ_o e^{−τ} + Σ_{g: n_{g,o} > 0} Σ_k log P^s(s[g, k]; W_g),
    W_g = Σ_o n_{g,o} σ_o^α,   λ_o = (α_o + 1) w_o,

where σ_o ~ Inverse-Gamma(α_o, λ_o) (mode w_o) and τ is confined to [−30, 30] to guard
exp() overflow.

Both conditionals are evaluated with one logarithm: the likelihood's Σ log(1 + e^{shift + v})
as a product of 1 + odds · e^v (:func:`softplus_sum`, odds computed once per update) and the
σ_o conditional's prior terms as a product over width classes (:func:`tau_log_density`); the
products are kept in range with frexp, so an evaluation costs a multiplication per case or
parameter instead of an exp and a log. Initial state s = 0, σ_o = w_o. The slice updates are written out for
these two densities (no function arguments), so everything is cached by numba. The
chain draws from numba's generator, seeded at its start: a chain's output depends only
on its seed (not on the thread it runs in).
"""

from __future__ import annotations

import math

import numpy as np

from hdbayes._numba import jit
from hdbayes.interactions.stable import _LOG_2PI, _LOG_PI, _split_cauchy_prepare, _split_cauchy_solve, log_prior_scalar
from hdbayes.interactions.stable import prior_draw as _prior_draw
from hdbayes.mcmc.slice import slice_sample

__all__ = [
    "TAU_BOUND",
    "chain_arguments",
    "log_likelihood",
    "predict_kernel",
    "run_chain",
    "s_log_density",
    "sigma_log_prior_kernel",
    "softplus_sum",
    "tau_log_density",
    "tau_log_slice_density",
]

#: |log σ_o| is confined to this bound (guards exp() against overflow).
TAU_BOUND = 30.0
_LN2 = math.log(2.0)


@jit
def _logaddexp(a, b):
    if a > b:
        return a + math.log1p(math.exp(b - a))
    return b + math.log1p(math.exp(a - b))


@jit
def sigma_log_prior_kernel(tau, alpha_o, lam_o):
    """log density of τ = log σ under σ ~ IG(α_o, λ_o), up to a constant: −α_o τ − λ_o e^{−τ}."""
    return -alpha_o * tau - lam_o * math.exp(-tau)


# ---------------------------------------------------------------------------------------------
# conditional of one compressed parameter


@jit
def softplus_sum(n, odds, shift, v):
    """Σ_{j<n} log(1 + e^{shift_j + v}) with one logarithm, given ``odds`` = e^{shift}.

    The factors 1 + odds_j e^v ≥ 1 are multiplied and the product's binary exponent is moved
    out with frexp before it can overflow; a term whose factor is ≥ 1e150 (or whose odds
    overflowed, stored as inf) is added as a stable logaddexp(0, shift_j + v). Rounding
    error about n × 1e-16 in absolute terms.
    """
    t = math.exp(v) if v < 700.0 else np.inf
    product = 1.0
    exponent = 0
    extra = 0.0
    for j in range(n):
        x = odds[j] * t
        if x < 1e150:  # False for inf and for inf · 0 = NaN
            product *= 1.0 + x
            if product > 1e150:
                product, e = math.frexp(product)
                exponent += e
        else:
            extra += _logaddexp(0.0, shift[j] + v)
    return math.log(product) + exponent * _LN2 + extra


@jit
def s_log_density(v, args):
    """log f(v) of s[g, k] up to a constant: n_k v − Σ_j log(1 + e^{shift_j + v}) + log P^s(v; W_g).

    ``args`` = (n, n_k, odds, shift, width, index). Over the cases of g, Σ [I(y_i = k)(base_i + v)
    − log(e^{other_i} + e^{base_i + v})] equals this with shift_i = base_i − other_i and
    n_k = #{i: y_i = k}, less terms free of v.
    """
    n, n_k, odds, shift, width, index = args
    return n_k * v - softplus_sum(n, odds, shift, v) + log_prior_scalar(v, width, index)


# ---------------------------------------------------------------------------------------------
# conditional of one log σ_o


@jit
def tau_log_density(tau, alpha_o, lam_o, index, n_classes, class_ptr, class_rest, class_count, class_sumsq, values):
    """log f(τ_o) of the module docstring, with one logarithm for all the prior terms.

    Groups whose order counts n_{g,·} are equal share the width W_c = rest_c + n_{c,o} σ_o^α
    (class c). With M parameters in all,

        Cauchy (α = 1):   Σ log C(s; 0, W) = −M log π − Σ log(W + s²/W),
        Gaussian (α = 2): Σ log N(s; 0, W) = −½ M log 2π − ½ Σ log W − ½ Σ_c S_c / W_c,

    (S_c = Σ s² over class c), and each Σ log(·) is computed as the logarithm of a product
    renormalised with frexp (:func:`_log_product`), so an evaluation costs a
    multiplication per parameter instead of a logarithm.

    Parameters
    ----------
    tau : float
        log σ_o (outside ±TAU_BOUND the density is 0).
    alpha_o, lam_o : float
        Inverse-Gamma hyperprior of σ_o.
    index : int
        1 (Cauchy) or 2 (Gaussian).
    n_classes : int
        Number of width classes among the groups with n_{g,o} > 0.
    class_ptr : int64 array (n_classes + 1,)
        ``values[class_ptr[c]:class_ptr[c + 1]]`` are the parameters s[g, k] of class c.
    class_rest, class_count : float64 arrays
        rest_c = Σ_{o' ≠ o} n_{c,o'} σ_{o'}^α and n_{c,o}.
    class_sumsq : float64 array
        S_c (used when index = 2).
    values : float64 array
        The parameters, contiguous by class.
    """
    if tau < -TAU_BOUND or tau > TAU_BOUND:
        return -np.inf
    power = math.exp(index * tau)
    m = class_ptr[n_classes]
    if index == 2:
        quadratic = 0.0
        for c in range(n_classes):
            quadratic += class_sumsq[c] / (class_rest[c] + class_count[c] * power)
        log_widths = _log_product(index, n_classes, class_ptr, class_rest, class_count, power, values)
        return sigma_log_prior_kernel(tau, alpha_o, lam_o) - 0.5 * (m * _LOG_2PI + log_widths + quadratic)
    log_terms = _log_product(index, n_classes, class_ptr, class_rest, class_count, power, values)
    return sigma_log_prior_kernel(tau, alpha_o, lam_o) - m * _LOG_PI - log_terms


@jit
def _log_product(index, n_classes, class_ptr, class_rest, class_count, power, values):
    """Σ_c Σ_{j ∈ c} log f_j, f_j = W_c + s_j²/W_c (index 1) or W_c (index 2), with one log.

    The running product is kept within [1e-150, 1e150] by moving its binary exponent out
    with frexp; a factor outside that range is added as a logarithm. The rounding error is
    that of the product, about (number of factors) × 1e-16 in absolute terms.
    """
    product = 1.0
    exponent = 0
    extra = 0.0
    for c in range(n_classes):
        width = class_rest[c] + class_count[c] * power
        inverse = 1.0 / width
        for j in range(class_ptr[c], class_ptr[c + 1]):
            if index == 1:
                v = values[j]
                factor = width + v * v * inverse
            else:
                factor = width
            if 1e-150 < factor < 1e150:
                product *= factor
                if not 1e-150 < product < 1e150:
                    product, e = math.frexp(product)
                    exponent += e
            elif math.isinf(factor):  # s² / W overflows: log(W + s²/W) = 2 log|s| − log W + log1p(W²/s²)
                a = abs(values[j])
                extra += 2.0 * math.log(a) - math.log(width) + math.log1p((width / a) ** 2)
            else:
                extra += math.log(factor)
    return math.log(product) + exponent * _LN2 + extra


@jit
def tau_log_slice_density(tau, args):
    """:func:`tau_log_density` in the slice sampler's form: ``args`` = (α_o, λ_o, index, n_classes,
    class_ptr, class_rest, class_count, class_sumsq, values)."""
    alpha_o, lam_o, index, n_classes, class_ptr, class_rest, class_count, class_sumsq, values = args
    return tau_log_density(tau, alpha_o, lam_o, index, n_classes, class_ptr, class_rest, class_count, class_sumsq,
                           values)  # fmt: skip


# ---------------------------------------------------------------------------------------------
# likelihood


@jit
def _linear_predictors(indptr, indices, s, n_cases):
    lv = np.zeros((n_cases, s.shape[1]))
    for g in range(s.shape[0]):
        for p in range(indptr[g], indptr[g + 1]):
            i = indices[p]
            for k in range(s.shape[1]):
                lv[i, k] += s[g, k]
    return lv


@jit
def _log_likelihood(indptr, indices, s, y, n_classes):
    n = y.shape[0]
    lv = _linear_predictors(indptr, indices, s, n)
    total = 0.0
    for i in range(n):
        if n_classes == 2:
            total += (lv[i, 0] if y[i] == 1 else 0.0) - _logaddexp(0.0, lv[i, 0])
        else:
            m = lv[i, 0]
            for k in range(1, n_classes):
                m = max(m, lv[i, k])
            acc = 0.0
            for k in range(n_classes):
                acc += math.exp(lv[i, k] - m)
            total += lv[i, y[i]] - m - math.log(acc)
    return total


def log_likelihood(case_indptr, case_indices, s, y, n_classes):
    """log L(s) of the multinomial logit model (eq. 3.1, 3.8) from group parameters.

    Parameters
    ----------
    case_indptr, case_indices : ndarray of int
        Expressions of the groups (CSR, as in :mod:`hdbayes.interactions.patterns`).
    s : ndarray of shape (G, K') or (G,)
        Group parameters; K' = 1 for two classes (class 0 has linear predictor 0), else K.
    y : ndarray of int, shape (N,)
        Class codes 0..K−1.
    n_classes : int
        K ≥ 2.
    """
    s = np.asarray(s, np.float64)
    if s.ndim == 1:
        s = s[:, None]
    return float(
        _log_likelihood(
            np.asarray(case_indptr, np.int64),
            np.asarray(case_indices, np.int64),
            np.ascontiguousarray(s),
            np.asarray(y, np.int64),
            int(n_classes),
        )
    )


# ---------------------------------------------------------------------------------------------
# the chain


@jit
def _widths(order_counts, sigma, index):
    G, n_orders = order_counts.shape
    out = np.zeros(G)
    for g in range(G):
        w = 0.0
        for o in range(n_orders):
            if order_counts[g, o] > 0:
                w += order_counts[g, o] * sigma[o] ** index
        out[g] = w
    return out


def chain_arguments(
    grouping,
    y,
    n_classes,
    *,
    index,
    sigma0,
    alpha_o,
    w_o_scale,
    schedule,
    coef_width,
    sigma_width,
    max_steps,
    n_sigma_updates,
):
    """The arguments of :func:`run_chain` (all but the generator) for the groups of ``grouping``.

    Builds what the σ_o updates need from the order counts: the width classes (groups with
    equal rows n_{g,·} have equal widths W_g(σ), so the σ_o conditional sums them by
    class) and, per order o, the groups with n_{g,o} > 0 sorted by width class
    (``order_ptr``/``order_groups``), the hyperprior arrays α_o and w_o = ``w_o_scale``/o
    (entry 0 unused), and the iterations of ``schedule`` (the saved slot of every
    iteration, :meth:`hdbayes.mcmc.Schedule.slot`).

    Parameters
    ----------
    grouping : grouping or ExpandedGrouping
        Anything with ``case_indptr``, ``case_indices`` and ``order_counts`` (G, O + 1): the
        compressed groups, or one group per pattern (``compress=False``).
    y : array_like of int, shape (N,)
        Class codes 0..K−1.
    n_classes : int
        K.
    index, sigma0, alpha_o, w_o_scale, coef_width, sigma_width, max_steps, n_sigma_updates
        As for :func:`run_chain` (``alpha_o`` and ``w_o_scale`` as scalars).
    schedule : hdbayes.mcmc.Schedule
        Iterations, burn-in and thinning of a chain.

    Returns
    -------
    tuple
        ``run_chain(*args, rng)`` runs a chain; ``args[2]`` is the float64 order-count matrix
        that prediction uses too.
    """
    order_counts = np.asarray(grouping.order_counts)
    n_orders = order_counts.shape[1]
    width_class = np.unique(order_counts, axis=0, return_inverse=True)[1].ravel().astype(np.int64)
    order_lists = [np.flatnonzero(order_counts[:, o] > 0) for o in range(n_orders)]
    order_lists = [groups[np.argsort(width_class[groups], kind="stable")] for groups in order_lists]
    order_ptr = np.concatenate([[0], np.cumsum([a.size for a in order_lists])]).astype(np.int64)
    order_groups = np.concatenate(order_lists).astype(np.int64)
    alpha = np.full(n_orders, float(alpha_o))
    w_o = np.concatenate([[1.0], float(w_o_scale) / np.arange(1, n_orders)])
    slots = schedule.slots
    return (
        np.asarray(grouping.case_indptr).astype(np.int64),
        np.asarray(grouping.case_indices).astype(np.int64),
        order_counts.astype(np.float64),
        np.asarray(y).astype(np.int64),
        int(n_classes),
        int(index),
        float(sigma0),
        alpha,
        w_o,
        order_ptr,
        order_groups,
        width_class,
        slots,
        int(schedule.n_saved),
        int(schedule.burn_in),
        float(coef_width),
        float(sigma_width),
        int(max_steps),
        int(n_sigma_updates),
    )


@jit
def run_chain(
    case_indptr,
    case_indices,
    order_counts,
    y,
    n_classes,
    index,
    sigma0,
    alpha_o,
    w_o,
    order_ptr,
    order_groups,
    width_class,
    slots,
    n_saved,
    burn_in,
    coef_width,
    sigma_width,
    max_steps,
    n_sigma_updates,
    rng,
):
    """Run one chain of the compressed (or, with singleton groups, original) logistic model.

    Parameters
    ----------
    case_indptr, case_indices : int64 arrays
        Group expressions (CSR).
    order_counts : float64 array (G, O + 1)
        n_{g,o}.
    y : int64 array (N,)
        Class codes 0..K−1.
    n_classes : int
        K ≥ 2; K' = 1 parameter set if K = 2 (for class 1), else K.
    index : int
        1 (Cauchy) or 2 (Gaussian).
    sigma0 : float
        Fixed width of the intercept.
    alpha_o, w_o : float64 arrays (O + 1,)
        Hyperprior shapes and modes for o = 1..O (entry 0 unused).
    order_ptr, order_groups : int64 arrays
        Groups with n_{g,o} > 0: ``order_groups[order_ptr[o]:order_ptr[o + 1]]``, sorted by
        ``width_class`` within each order.
    width_class : int64 array (G,)
        Class of equal order counts n_{g,·} (equal widths W_g(σ)) of every group.
    slots : int64 array (n_iter,)
        Index among the saved draws of every iteration, −1 if it is not saved
        (:meth:`hdbayes.mcmc.Schedule.slot`).
    n_saved, burn_in : int
        Saved draws; iterations recorded as warm-up.
    coef_width, sigma_width : float
        Slice widths for s and for log σ_o.
    max_steps : int
        m, stepping-out limit.
    n_sigma_updates : int
        Slice updates of every log σ_o per iteration.
    rng : numpy.random.Generator
        The chain's generator.

    Returns
    -------
    s_saved : (n_saved, G, K'), sigma_saved : (n_saved, O + 1), sigma_warmup : (burn_in, O + 1)
        The saved draws of s and σ (column 0: the fixed σ_0) and σ at every burn-in iteration.
    """
    G, n_orders = order_counts.shape
    n = y.shape[0]
    n_iter = slots.shape[0]
    n_params = 1 if n_classes == 2 else n_classes
    s = np.zeros((G, n_params))
    lv = np.zeros((n, n_params))
    sigma = np.empty(n_orders)
    sigma[0] = sigma0
    for o in range(1, n_orders):
        sigma[o] = w_o[o]
    lam = np.empty(n_orders)
    for o in range(n_orders):
        lam[o] = (alpha_o[o] + 1.0) * w_o[o]
    widths = _widths(order_counts, sigma, index)

    s_saved = np.empty((n_saved, G, n_params))
    sigma_saved = np.empty((n_saved, n_orders))
    sigma_warmup = np.empty((min(burn_in, n_iter), n_orders))

    base = np.empty(n)
    shift = np.empty(n)
    odds = np.empty(n)
    values = np.empty(G * n_params)
    class_ptr = np.empty(G + 1, np.int64)
    class_rest = np.empty(G)
    class_count = np.empty(G)
    class_sumsq = np.empty(G)
    for it in range(n_iter):
        # ---- compressed parameters
        for g in range(G):
            lo, hi = case_indptr[g], case_indptr[g + 1]
            m = hi - lo
            for k in range(n_params):
                cls = k + 1 if n_classes == 2 else k
                old = s[g, k]
                n_k = 0
                for j in range(m):
                    i = case_indices[lo + j]
                    base[j] = lv[i, k] - old
                    if y[i] == cls:
                        n_k += 1
                    if n_classes == 2:
                        shift[j] = base[j]
                    else:
                        # base − log Σ_{c ≠ k} exp(lv[i, c])
                        mx = -np.inf
                        for c in range(n_classes):
                            if c != k and lv[i, c] > mx:
                                mx = lv[i, c]
                        acc = 0.0
                        for c in range(n_classes):
                            if c != k:
                                acc += math.exp(lv[i, c] - mx)
                        shift[j] = base[j] - mx - math.log(acc)
                    odds[j] = math.exp(shift[j]) if shift[j] < 300.0 else np.inf
                args = (m, n_k, odds, shift, widths[g], index)
                f0 = s_log_density(old, args)
                new, _ = slice_sample(old, f0, s_log_density, args, coef_width, max_steps, -np.inf, np.inf, rng)
                s[g, k] = new
                for j in range(m):
                    lv[case_indices[lo + j], k] = base[j] + new
        # ---- hyperparameters σ_1..σ_O
        for o in range(1, n_orders):
            a = order_ptr[o]
            m = order_ptr[o + 1] - a
            if m == 0:
                continue
            power = sigma[o] ** index
            n_cls = 0
            for j in range(m):
                g = order_groups[a + j]
                if j == 0 or width_class[g] != width_class[order_groups[a + j - 1]]:
                    class_count[n_cls] = order_counts[g, o]
                    class_rest[n_cls] = max(widths[g] - class_count[n_cls] * power, 0.0)
                    class_sumsq[n_cls] = 0.0
                    class_ptr[n_cls] = j * n_params
                    n_cls += 1
                for k in range(n_params):
                    v = s[g, k]
                    values[j * n_params + k] = v
                    class_sumsq[n_cls - 1] += v * v
            class_ptr[n_cls] = m * n_params
            tau = math.log(sigma[o])
            targs = (alpha_o[o], lam[o], index, n_cls, class_ptr, class_rest, class_count, class_sumsq, values)
            f0 = tau_log_slice_density(tau, targs)
            for _ in range(n_sigma_updates):
                tau, f0 = slice_sample(
                    tau, f0, tau_log_slice_density, targs, sigma_width, max_steps, -TAU_BOUND, TAU_BOUND, rng
                )
            sigma[o] = math.exp(tau)
            power = sigma[o] ** index
            c = -1
            for j in range(m):
                g = order_groups[a + j]
                if j == 0 or width_class[g] != width_class[order_groups[a + j - 1]]:
                    c += 1
                widths[g] = class_rest[c] + class_count[c] * power
        widths = _widths(order_counts, sigma, index)  # no drift from incremental updates
        if it < burn_in:
            sigma_warmup[it] = sigma
        slot = slots[it]
        if slot >= 0:
            s_saved[slot] = s
            sigma_saved[slot] = sigma
    return s_saved, sigma_saved, sigma_warmup


# ---------------------------------------------------------------------------------------------
# prediction (thesis eq. 3.25, §3.4.2, §3.5.1)


@jit
def _log_sum_exp_add(top, total, t, k, x):
    """Add e^x to the running sum e^{top[t, k]} · total[t, k] (log-sum-exp without a second pass)."""
    if x == -np.inf:
        return
    if x <= top[t, k]:
        total[t, k] += math.exp(x - top[t, k])
    else:
        total[t, k] = total[t, k] * math.exp(top[t, k] - x) + 1.0
        top[t, k] = x


def predict_kernel(
    s_saved, sigma_saved, order_counts, test_ptr, test_groups, test_counts, new_counts, n_classes, index, rng
):
    """log of the predictive probabilities averaged over the saved samples, shape (T, K).

    For every sample and test case t, each touched group g (``test_groups[test_ptr[t]:
    test_ptr[t + 1]]``, expressed members counted per order in ``test_counts``) contributes
    its part s_g^t drawn from the split (3.27) with Σ_1 = Σ_o t_{g,o} σ_o^α and
    Σ_2 = W_g − Σ_1 (s_g itself if Σ_2 ≤ 1e-12 W_g); the new patterns contribute one
    prior draw with width Σ_o new_counts[t, o] σ_o^α per parameter set. The linear
    predictors go through the log-softmax (K = 2: logistic, class 0 at 0), and the
    probabilities are averaged over samples in log space (a running log-sum-exp), so a
    probability far below 1e-308 keeps its logarithm. Draws from the generator ``rng``,
    sample by sample, case by case, in the order of the touched groups.

    Test cases that touch a group in the same way (the same group and counts) share one
    split distribution per sample: the distinct (group, counts) rows are found here, and
    the compiled kernel computes per sample, once per row, the widths and what the
    Cauchy quantile needs apart from the uniform (``_split_cauchy_prepare``), then per case
    only solves for its own draw. A group of which a case expresses every member (most
    touched groups) needs no split and no width: it contributes s_g. Cost per sample
    O(R (O + 1) + E + S · I) for E touched (case, group) entries, R ≤ E distinct partial
    rows (touching part of a group), S ≤ E entries with a proper split and I ≈ 4
    evaluations of the split CDF per Cauchy split (before, O(E (O + 1)) and about 14.5
    evaluations per split); memory O(E + R K' + T K) besides the draws.

    Parameters
    ----------
    s_saved : float64 array (n_samples, G, K')
        Saved draws of the compressed parameters.
    sigma_saved : float64 array (n_samples, O + 1)
        Saved draws of σ_o.
    order_counts : float64 array (G, O + 1)
        n_{g,o} of every group.
    test_ptr, test_groups, test_counts, new_counts : arrays
        Touched groups of every test case (CSR), their expressed members per order (float64,
        one row per entry) and the new patterns of every case per order (float64, (T, O + 1)).
    n_classes : int
        K.
    index : int
        1 (Cauchy) or 2 (Gaussian).
    rng : numpy.random.Generator
        The source of every draw.

    Returns
    -------
    ndarray of shape (T, K)
    """
    order_counts = np.ascontiguousarray(order_counts, dtype=np.float64)
    test_groups = np.ascontiguousarray(test_groups, dtype=np.int64)
    test_counts = np.asarray(test_counts, dtype=np.float64).reshape(test_groups.shape[0], order_counts.shape[1])
    entry_row = np.full(test_groups.shape[0], -1, np.int64)  # −1: the case expresses the whole group
    partial = np.flatnonzero(np.any(test_counts != order_counts[test_groups], axis=1))
    row_group = np.empty(0, np.int64)
    row_counts = np.empty((0, order_counts.shape[1]))
    if partial.size:
        keys = np.column_stack([test_groups[partial].astype(np.float64), test_counts[partial]])
        rows, inverse = np.unique(keys, axis=0, return_inverse=True)
        entry_row[partial] = inverse.ravel()
        row_group = rows[:, 0].astype(np.int64)
        row_counts = np.ascontiguousarray(rows[:, 1:])
    return _predict_samples(
        np.ascontiguousarray(s_saved, dtype=np.float64), np.ascontiguousarray(sigma_saved, dtype=np.float64),
        order_counts, np.ascontiguousarray(test_ptr, dtype=np.int64), test_groups, entry_row, row_group, row_counts,
        np.ascontiguousarray(new_counts, dtype=np.float64), int(n_classes), int(index), rng,
    )  # fmt: skip


@jit
def _predict_samples(
    s_saved, sigma_saved, order_counts, test_ptr, test_groups, entry_row, row_group, row_counts, new_counts,
    n_classes, index, rng,
):  # fmt: skip
    """:func:`predict_kernel` given the distinct partial rows (``entry_row`` −1: whole group)."""
    n_samples = s_saved.shape[0]
    n_params = s_saved.shape[2]
    n_orders = order_counts.shape[1]
    T = test_ptr.shape[0] - 1
    R = row_group.shape[0]
    top = np.full((T, n_classes), -np.inf)
    total = np.zeros((T, n_classes))
    power = np.empty(n_orders)
    lin = np.empty(n_params)
    kind = np.empty((R, n_params), np.int64)  # per row and sample: 0 the whole s_g, 1 nothing, 2 a split
    prep = np.empty((R, n_params, 9))  # the split's parameters apart from the random number
    for r in range(n_samples):
        for o in range(n_orders):
            power[o] = sigma_saved[r, o] ** index
        for j in range(R):
            g = row_group[j]
            whole = 0.0
            part = 0.0
            for o in range(n_orders):
                whole += order_counts[g, o] * power[o]
                part += row_counts[j, o] * power[o]
            rest = whole - part
            for k in range(n_params):
                if rest <= 1e-12 * whole:
                    kind[j, k] = 0
                elif part <= 0.0:  # an empty part: 0, no draw (as split_cauchy, split_gaussian)
                    kind[j, k] = 1
                elif index == 1:
                    kind[j, k] = 2
                    c, ss, a, b, delta, shape, f_m, phi_left, phi_right = _split_cauchy_prepare(
                        s_saved[r, g, k], part, rest
                    )
                    prep[j, k, 0] = c
                    prep[j, k, 1] = ss
                    prep[j, k, 2] = a
                    prep[j, k, 3] = b
                    prep[j, k, 4] = delta
                    prep[j, k, 5] = shape
                    prep[j, k, 6] = f_m
                    prep[j, k, 7] = phi_left
                    prep[j, k, 8] = phi_right
                else:  # split_gaussian_from_normal's mean and standard deviation
                    kind[j, k] = 2
                    both = part + rest
                    prep[j, k, 0] = s_saved[r, g, k] * (part / both)
                    prep[j, k, 1] = math.sqrt(part * (rest / both))
        for t in range(T):
            for k in range(n_params):
                lin[k] = 0.0
            for p in range(test_ptr[t], test_ptr[t + 1]):
                g = test_groups[p]
                j = entry_row[p]
                for k in range(n_params):
                    if j < 0 or kind[j, k] == 0:
                        lin[k] += s_saved[r, g, k]
                    elif kind[j, k] == 2:
                        if index == 1:
                            u = rng.random()
                            while u <= 0.0:
                                u = rng.random()
                            lin[k] += _split_cauchy_solve(
                                prep[j, k, 0], prep[j, k, 1], prep[j, k, 2], prep[j, k, 3], prep[j, k, 4],
                                prep[j, k, 5], prep[j, k, 6], prep[j, k, 7], prep[j, k, 8], u,
                            )  # fmt: skip
                        else:
                            lin[k] += prep[j, k, 0] + prep[j, k, 1] * rng.standard_normal()
            new_width = 0.0
            for o in range(n_orders):
                new_width += new_counts[t, o] * power[o]
            if new_width > 0.0:
                for k in range(n_params):
                    lin[k] += _prior_draw(new_width, index, rng)
            if n_classes == 2:
                z = lin[0]
                # log p1 = −log(1 + e^{−z}), log p0 = −log(1 + e^{z}): one exp, one log1p
                if z >= 0:
                    log_p1 = -math.log1p(math.exp(-z))
                    log_p0 = log_p1 - z
                else:
                    log_p0 = -math.log1p(math.exp(z))
                    log_p1 = log_p0 + z
                _log_sum_exp_add(top, total, t, 0, log_p0)
                _log_sum_exp_add(top, total, t, 1, log_p1)
            else:
                mx = lin[0]
                for k in range(1, n_classes):
                    mx = max(mx, lin[k])
                acc = 0.0
                for k in range(n_classes):
                    acc += math.exp(lin[k] - mx)
                log_norm = mx + math.log(acc)
                for k in range(n_classes):
                    _log_sum_exp_add(top, total, t, k, lin[k] - log_norm)
    log_n = math.log(n_samples)
    out = np.empty((T, n_classes))
    for t in range(T):
        for k in range(n_classes):
            out[t, k] = top[t, k] + math.log(total[t, k]) - log_n if total[t, k] > 0.0 else -np.inf
    return out
