"""BiasCorrectedGaussianClassifier on lymphoma and SRBCT against scikit-learn, on the author's folds (issue 13).

Run from the project root (needs HDBAYES_DATA or a download of lymphoma.RData and SRBCT.rda):

    HDBAYES_DATA=../shared/data .venv/bin/python benchmarks/bench_gaussian_real.py [--quick] [--diagnose]

Protocol (issue 13): the folds of the author's ``mk_folds``, ``folds = rep(1:10, length = n)`` (case i,
0-based, is in fold i % 10); k = 10 and 50 genes selected by F inside each training fold, no whitening.
The Bayesian classifier selects by F itself (it needs all p features for the correction); the scikit-learn
peers get the same top-k columns through :class:`bench_gaussian.FSelector` (both use
:func:`hdbayes.selection.f_statistic`; ties, which do not occur on these data, are broken at random).
Priors α^x = 2, w^x = 0.3 as in ``bench_gaussian.py`` and the lymphoma experiment, the others the
defaults; the paper's MCMC (6000 iterations, 750 burn-in, thin 15; ``--quick``: 1200 / 200 / 5), one
chain, seed 0 in every fold. When the classifier has a ``variant`` parameter, ``variant="per-feature"``
is added as rows.

Measures: AMLP (mean −log p(true class)), error rate, expected error (mean 1 − max p), the AMLP
without lymphoma cases 1 and 42 (1-based, as in the issue), and the wall-clock seconds of the whole
cross-validation. ``--diagnose`` adds the study of lymphoma cases 1 and 42 written up in
``docs/gaussian_real_data.md``: per-gene contributions to the log-likelihood ratio, robust z-scores,
nearest neighbours, how GaussianNB and LDA score them, and class-conditional Student-t variants.
"""

from __future__ import annotations

import argparse
import inspect
import platform
import time

import numpy as np
import sklearn
from bench_gaussian import PRIOR, FSelector, methods, warm_up
from scipy.special import expit, gammaln, logsumexp, roots_genlaguerre
from sklearn.model_selection import PredefinedSplit, cross_val_predict

from hdbayes.datasets import load_lymphoma, load_srbct
from hdbayes.experiments._gaussian_cv import MCMC_PAPER
from hdbayes.experiments._report import markdown_table
from hdbayes.metrics import average_minus_log_probability, error_rate, expected_error_rate
from hdbayes.selection import f_statistic
from hdbayes.selection_bias.gaussian import (
    BiasCorrectedGaussianClassifier,
    PerClassVariance,
    PerFeatureSpread,
    SharedSpread,
)

N_FOLDS = 10
KS = (10, 50)
MCMC_QUICK = {"n_iter": 1200, "burn_in": 200, "thin": 5}
#: (precision per class, one weight per case, degrees of freedom) of the numpy Gibbs samplers of the diagnosis.
GIBBS_VARIANTS = [(False, False, np.inf), (False, False, 4.0), (False, False, 10.0), (False, True, 4.0),
                  (False, True, 10.0), (True, False, np.inf), (True, False, 4.0), (True, True, 4.0)]  # fmt: skip
#: the prototype samplers' priors (the class precisions' α^x, w^x of ``bench_gaussian``; vague spreads)
PROTOTYPE_PRIOR = {"alpha_x": PRIOR["alpha_x"], "w_x": PRIOR["w_x"], "alpha_mu": 1.5, "w_mu": 0.01, "alpha_nu": 1.5,
                   "w_nu": 0.01}  # fmt: skip
#: Lymphoma cases 1 and 42 of the issue (1-based, R) as 0-based rows.
LYMPHOMA_OUTLIERS = (0, 41)

#: Issue 13's measurements of BCBCSF 1.0-2 (the author's published package) on lymphoma, same folds and k:
#: (AMLP, error, expected error). "no offset": corrected, no predictive offset; "default offset": its
#: default tempering (the median posterior sd added to every sd).
PUBLISHED = {
    ("lymphoma", 10): {"no offset": (0.457, 0.048, 0.047), "default offset": (0.207, 0.065, 0.116)},
    ("lymphoma", 50): {"no offset": (1.224, 0.016, 0.010), "default offset": (0.264, 0.032, 0.008)},
}
#: Issue 13's hdbayes rows (before the issue), for reference: (AMLP, error, expected error).
ISSUE_HDBAYES = {
    ("lymphoma", 10): {"corrected": (0.526, 0.048, 0.058), "uncorrected": (0.464, 0.032, 0.048)},
    ("lymphoma", 50): {"corrected": (1.580, 0.048, 0.004), "uncorrected": (1.369, 0.032, 0.009)},
}
#: Issue 13 on SRBCT with BCBCSF 1.0-2 (k not stated there): AMLP corrected vs uncorrected.
PUBLISHED_SRBCT_AMLP = {"corrected": 0.3293, "uncorrected": 0.3294}


def author_folds(n):
    """The author's ``rep(1:10, length = n)``: case i (0-based) is in fold i % 10."""
    return PredefinedSplit(np.arange(n) % N_FOLDS)


def has_spread_option():
    """Whether the classifier has the per-feature spread of issue 13 (issue 30: a ``variant``)."""
    return "variant" in inspect.signature(BiasCorrectedGaussianClassifier).parameters


#: (row label, the fields of PerClassVariance, or None for variant="per-feature") of the per-feature Bayesian rows
#: (issue 13), each corrected and not
BAYES_VARIANTS = [
    ("per-feature spread", None),
    ("per-class variances", {"alpha2_x": 4.0}),
    ("per-class variances, α2_x learned", {"alpha2_x": "learn"}),
    ("per-class variances, plug-in class scale, α2_x learned", {"alpha2_x": "learn", "class_scale": "plug-in"}),
    ("per-class variances, plug-in class scale, α2_x = 4", {"alpha2_x": 4.0, "class_scale": "plug-in"}),
]


def all_methods(k, mcmc):
    """Name → (estimator, has probabilities): bench_gaussian's five, the Bayesian ones with ``mcmc``
    run lengths, plus the per-feature spread rows and the per-class variance rows (issue 13)."""
    out = {}
    for name, (model, has_proba) in methods(k, None).items():
        if name.startswith("Bayes"):
            model = model.set_params(**mcmc)
            name = "hdbayes " + name.removeprefix("Bayes Gaussian, ") + " (shared spread)"
        out[name] = (model, has_proba)
    if has_spread_option():
        for label, options in BAYES_VARIANTS:
            variant = PerFeatureSpread(**PRIOR) if options is None else PerClassVariance(**options, **PRIOR)
            for correct in (True, False):
                model = BiasCorrectedGaussianClassifier(
                    n_features_to_select=k, correct=correct, random_state=0, progress=False, variant=variant, **mcmc
                )
                out[f"hdbayes {'corrected' if correct else 'uncorrected'} ({label})"] = (model, True)
    return out


def measures(y, proba, exclude=()):
    """AMLP, error, expected error, and the AMLP without the rows in ``exclude``."""
    keep = np.setdiff1d(np.arange(y.shape[0]), np.asarray(exclude, dtype=int))
    return {
        "AMLP": average_minus_log_probability(y, proba),
        "error": error_rate(y, proba),
        "expected error": expected_error_rate(proba),
        "AMLP w/o cases 1, 42": average_minus_log_probability(y[keep], proba[keep]) if len(exclude) else "–",
    }


def compare(name, X, y, k, mcmc, exclude=(), only=None, n_jobs=None):
    """One row per method (those whose name contains ``only``, if given), and the cross-validated probabilities
    by method; ``n_jobs`` folds at once (joblib processes)."""
    cv = author_folds(X.shape[0])
    rows, probabilities = [], {}
    for method, (model, has_proba) in all_methods(k, mcmc).items():
        if only is not None and only not in method:
            continue
        start = time.perf_counter()
        proba = cross_val_predict(model, X, y, cv=cv, method="predict_proba" if has_proba else "predict",
                                  n_jobs=n_jobs)
        seconds = time.perf_counter() - start
        probabilities[method] = proba
        rows.append({"data": name, "k": k, "method": method, **measures(y, proba, exclude), "seconds": seconds})
    for label, values in PUBLISHED.get((name, k), {}).items():
        amlp, error, expected = values
        rows.append({"data": name, "k": k, "method": f"BCBCSF 1.0-2, {label} (issue 13)", "AMLP": amlp,
                     "error": error, "expected error": expected, "AMLP w/o cases 1, 42": "–",
                     "seconds": "–"})  # fmt: skip
    return rows, probabilities


# ---------------------------------------------------------------------------------------------------------------
# Diagnosis of lymphoma cases 1 and 42
# ---------------------------------------------------------------------------------------------------------------


def calibration_columns(y, proba):
    """AMLP, error and expected error of :func:`measures` (the prototypes' table columns)."""
    return {key: value for key, value in measures(y, proba).items() if key in ("AMLP", "error", "expected error")}


def robust_z(values, reference):
    """(values − median(reference)) / (1.4826 · MAD(reference)), column by column."""
    median = np.median(reference, axis=0)
    mad = 1.4826 * np.median(np.abs(reference - median), axis=0)
    return (values - median) / np.maximum(mad, 1e-12)


def fold_of(i, n):
    """Training and test rows of the author's fold holding case i."""
    fold = np.arange(n) % N_FOLDS
    return np.flatnonzero(fold != fold[i]), np.flatnonzero(fold == fold[i])


def fit_fold(X, y, train, k, correct, mcmc):
    return BiasCorrectedGaussianClassifier(
        n_features_to_select=k, correct=correct, random_state=0, progress=False, variant=SharedSpread(**PRIOR), **mcmc
    ).fit(X[train], y[train])


def gene_contributions(model, x, true, guess):
    """Per selected gene, log N(x_j; μ̄_true,j, 1/τ̄_j) − log N(x_j; μ̄_guess,j, 1/τ̄_j) at the posterior means
    (the plug-in log-likelihood ratio, true against predicted class), and x's z-scores in both classes."""
    mu = model.trace_.flat("mu").mean(axis=0)  # (G, k)
    tau = model.trace_.flat("tau_x").mean(axis=0)  # (k,)
    xs = x[model.selected_features_]
    z_true = (xs - mu[true]) * np.sqrt(tau)
    z_guess = (xs - mu[guess]) * np.sqrt(tau)
    return -0.5 * (z_true**2 - z_guess**2), z_true, z_guess


def diagnose_cases(X, y, mcmc):
    """Rows describing each outlying case at k = 10 and 50 (uncorrected and corrected fits of its fold)."""
    n = X.shape[0]
    rows, gene_rows = [], []
    for i in LYMPHOMA_OUTLIERS:
        train, _ = fold_of(i, n)
        for k in KS:
            for correct in (False, True):
                model = fit_fold(X, y, train, k, correct, mcmc)
                proba = model.predict_proba(X[i : i + 1])[0]
                # the predicted class, or the most probable other class when the prediction is right
                guess = int(np.argmax(np.where(np.arange(proba.shape[0]) == y[i], -np.inf, proba)))
                contrib, z_true, z_guess = gene_contributions(model, X[i], y[i], guess)
                order = np.argsort(contrib)
                rows.append({
                    "case (1-based)": i + 1, "true": int(y[i]), "k": k, "corrected": correct,
                    "predicted": int(np.argmax(proba)), "rival class": guess,
                    "−log p(true)": -np.log(max(proba[y[i]], 1e-300)),
                    "plug-in log LR true − rival": contrib.sum(),
                    "3 most negative genes (LR)": ", ".join(f"{model.selected_features_[j]} ({contrib[j]:.1f})"
                                                           for j in order[:3]),  # fmt: skip
                    "sum of the 3 most negative": contrib[order[:3]].sum(),
                    "genes with |z_true| > 3": int(np.sum(np.abs(z_true) > 3)),
                })  # fmt: skip
                if not correct:
                    for j in order[:5]:
                        gene_rows.append({"case (1-based)": i + 1, "k": k, "gene": int(model.selected_features_[j]),
                                          "LR contribution": contrib[j], "z in true class": z_true[j],
                                          "z in predicted class": z_guess[j]})  # fmt: skip
    return rows, gene_rows


def outlier_profile(X, y):
    """Robust z-scores of each case against its own class (other cases of the class), over all genes."""
    rows = []
    counts = []
    for i in range(X.shape[0]):
        same = np.flatnonzero((y == y[i]) & (np.arange(X.shape[0]) != i))
        z = np.abs(robust_z(X[i], X[same]))
        counts.append((np.sum(z > 5), np.median(z)))
    counts = np.array(counts)
    rank = np.argsort(-counts[:, 0])
    for i in LYMPHOMA_OUTLIERS:
        rows.append({"case (1-based)": i + 1, "class": int(y[i]),
                     "genes with robust |z| > 5 (of 4026)": int(counts[i, 0]),
                     "rank among 62 cases": int(np.flatnonzero(rank == i)[0]) + 1,
                     "median |z| over genes": counts[i, 1]})  # fmt: skip
    rows.append({"case (1-based)": "median case", "class": "–",
                 "genes with robust |z| > 5 (of 4026)": float(np.median(counts[:, 0])), "rank among 62 cases": "–",
                 "median |z| over genes": float(np.median(counts[:, 1]))})  # fmt: skip
    return rows


def neighbours(X, y, k_selected=50):
    """Labels of the 5 nearest neighbours (correlation) of each outlying case: all genes and its fold's top k."""
    rows = []
    n = X.shape[0]
    for i in LYMPHOMA_OUTLIERS:
        train, _ = fold_of(i, n)
        top = np.argsort(-f_statistic(X[train], y[train]))[:k_selected]
        for label, columns in (("all 4026 genes", slice(None)), (f"fold's top {k_selected} by F", top)):
            Z = X[:, columns]
            corr = np.corrcoef(Z)[i]
            corr[i] = -np.inf
            nearest = np.argsort(-corr)[:5]
            centroid_corr = [np.corrcoef(Z[i], Z[np.setdiff1d(np.flatnonzero(y == g), [i])].mean(axis=0))[0, 1]
                             for g in range(3)]  # fmt: skip
            rows.append({"case (1-based)": i + 1, "class": int(y[i]), "genes": label,
                         "5 nearest (label, corr)": ", ".join(f"{y[j]} ({corr[j]:.2f})" for j in nearest),
                         "corr with class centroids 0 / 1 / 2": " / ".join(f"{c:.2f}" for c in centroid_corr),
                         })  # fmt: skip
    return rows


def peer_scores(X, y, probabilities_by_k):
    """−log p(true) of the two cases under every method of the main comparison."""
    rows = []
    for k, probabilities in probabilities_by_k.items():
        for method, proba in probabilities.items():
            if proba.ndim != 2:
                continue
            row = {"k": k, "method": method}
            for i in LYMPHOMA_OUTLIERS:
                row[f"case {i + 1}: −log p(true)"] = -np.log(max(proba[i, y[i]], 1e-300))
                row[f"case {i + 1}: predicted"] = int(np.argmax(proba[i]))
            rows.append(row)
    return rows


def gaussian_nb_view(X, y, k=50):
    """Why GaussianNB is not fooled: its class-specific variances of the genes that drive the error."""
    from sklearn.naive_bayes import GaussianNB

    rows = []
    for i in LYMPHOMA_OUTLIERS:
        train, _ = fold_of(i, X.shape[0])
        top = FSelector(k).fit(X[train], y[train]).indices_
        nb = GaussianNB().fit(X[train][:, top], y[train])
        x = X[i, top]
        log_dens = -0.5 * (np.log(2 * np.pi * nb.var_) + (x - nb.theta_) ** 2 / nb.var_)  # (G, k)
        totals = log_dens.sum(axis=1)
        guess = int(np.argmax(totals + np.log(nb.class_prior_)))
        rival = int(np.argmax(np.where(np.arange(3) == y[i], -np.inf, totals)))
        sd = np.sqrt(nb.var_)
        rows.append({"case (1-based)": i + 1, "k": k, "GaussianNB predicted": guess, "rival class": rival,
                     "log LR true − rival": float(totals[y[i]] - totals[rival]),
                     "genes favouring true / rival": f"{np.sum(log_dens[y[i]] > log_dens[rival])} / "
                                                     f"{np.sum(log_dens[y[i]] < log_dens[rival])}",
                     "median sd ratio class 0 / 1 / 2 (top k)": " / ".join(
                         f"{np.median(sd[g] / sd[0]):.2f}" for g in range(3))})  # fmt: skip
    return rows


# --- Student-t variants (scripts only, not in src/) -------------------------------------------------------------


def t_log_density(x, mu, tau, df):
    """log t_df(x; μ, scale 1/√τ), broadcast."""
    z2 = tau * (x - mu) ** 2
    return (gammaln((df + 1) / 2) - gammaln(df / 2) - 0.5 * np.log(df * np.pi) + 0.5 * np.log(tau)
            - (df + 1) / 2 * np.log1p(z2 / df))  # fmt: skip


def plug_in_t(models, X, y, df):
    """Cross-validated probabilities from t_df likelihoods at the posterior means of μ and τ^x of fitted models
    (one per fold; ``df = inf`` is the Gaussian plug-in)."""
    proba = np.empty((X.shape[0], 3))
    for _train, test, model in models:
        mu = model.trace_.flat("mu").mean(axis=0)
        tau = model.trace_.flat("tau_x").mean(axis=0)
        xs = X[test][:, model.selected_features_]
        if np.isinf(df):
            log_lik = (-0.5 * tau * (xs[:, None, :] - mu[None]) ** 2 + 0.5 * np.log(tau)).sum(axis=-1)
        else:
            log_lik = t_log_density(xs[:, None, :], mu[None], tau, df).sum(axis=-1)
        log_post = log_lik + model.class_log_prior_[None]
        proba[test] = np.exp(log_post - logsumexp(log_post, axis=1, keepdims=True))
    return proba


def student_t_gibbs(X, codes, n_classes, df, prior, mcmc, rng, per_case=False, class_tau=False):
    """Gibbs sampler of the manuscript's model with class-conditional Student-t features (uncorrected).

    x_ij | y_i = g, λ ~ N(μ_gj, 1/(λ τ_j)), λ ~ Gamma(df/2, rate df/2): one weight λ_ij per case and gene
    (independent t features), or with ``per_case`` one λ_i per case shared by its genes (a case whose whole
    profile is scaled); ``df = inf``: λ = 1 (the Gaussian model). ``class_tau``: one precision τ_gj per class
    and gene, each with the Gamma(α^x/2, α^x w^x/2) prior (heteroscedastic; GaussianNB's assumption). μ, ν,
    τ^μ, τ^ν as in the Gaussian model; τ and μ get weighted sums. Returns the saved draws of μ (S, G, k)
    and τ (S, G, k). One of the two weights of :func:`two_level_t_gibbs` (the same draws).
    """
    df_cell, df_case = (np.inf, df) if per_case else (df, np.inf)
    return two_level_t_gibbs(X, codes, n_classes, df_cell, df_case, prior, mcmc, rng, class_tau=class_tau)


def student_t_predict(x, mus, taus, df, class_log_prior, per_case=False):
    """log P(y = g | x, data) ∝ class prior × mean over draws of the t predictive of x (λ integrated out)."""
    k = x.shape[-1]
    if per_case:  # multivariate t with a shared scale: Q = Σ τ_j (x_j − μ_j)²
        q = (taus * (x[None, None] - mus) ** 2).sum(axis=-1)  # (S, G)
        log_lik = (gammaln((df + k) / 2) - gammaln(df / 2) - k / 2 * np.log(df * np.pi)
                   + 0.5 * np.log(taus).sum(axis=-1) - (df + k) / 2 * np.log1p(q / df))  # fmt: skip
    elif np.isinf(df):
        log_lik = (0.5 * np.log(taus / (2 * np.pi)) - 0.5 * taus * (x[None, None] - mus) ** 2).sum(axis=-1)
    else:
        log_lik = t_log_density(x[None, None], mus, taus, df).sum(axis=-1)  # (S, G)
    log_post = logsumexp(log_lik, axis=0) - np.log(log_lik.shape[0]) + class_log_prior
    return np.exp(log_post - logsumexp(log_post))


def student_t_cv(X, y, k, df, mcmc, per_case=False, class_tau=False):
    """Cross-validated probabilities of the (uncorrected) Student-t model on the author's folds."""
    n = X.shape[0]
    proba = np.empty((n, 3))
    prior = PROTOTYPE_PRIOR
    for fold in range(N_FOLDS):
        train, test = np.flatnonzero(np.arange(n) % N_FOLDS != fold), np.flatnonzero(np.arange(n) % N_FOLDS == fold)
        top = FSelector(k).fit(X[train], y[train]).indices_
        counts = np.bincount(y[train], minlength=3)
        class_log_prior = np.log((counts + 1.0) / (counts.sum() + 3.0))
        mus, taus = student_t_gibbs(X[train][:, top], y[train], 3, df, prior, mcmc, np.random.default_rng(fold),
                                    per_case, class_tau)  # fmt: skip
        for i in test:
            proba[i] = student_t_predict(X[i, top], mus, taus, df, class_log_prior, per_case)
    return proba


def robust_variants(X, y, mcmc):
    """AMLP / error / expected error of the plug-in t and the Student-t Gibbs variants, k = 10 and 50."""
    n = X.shape[0]
    rows = []
    for k in KS:
        models = {}
        for correct in (False, True):
            models[correct] = []
            for fold in range(N_FOLDS):
                train = np.flatnonzero(np.arange(n) % N_FOLDS != fold)
                test = np.flatnonzero(np.arange(n) % N_FOLDS == fold)
                models[correct].append((train, test, fit_fold(X, y, train, k, correct, mcmc)))
        for correct in (False, True):
            for df in (np.inf, 30.0, 10.0, 4.0, 2.0):
                proba = plug_in_t(models[correct], X, y, df)
                label = "Gaussian" if np.isinf(df) else f"t, df = {df:g}"
                fit = "corrected" if correct else "uncorrected"
                rows.append({"k": k, "variant": f"plug-in at posterior means of the {fit} fit: {label}",
                             **measures(y, proba, LYMPHOMA_OUTLIERS), "seconds": "–"})  # fmt: skip
        for class_tau, per_case, df in GIBBS_VARIANTS:
            start = time.perf_counter()
            proba = student_t_cv(X, y, k, df, mcmc, per_case, class_tau)
            seconds = time.perf_counter() - start
            if np.isinf(df):
                label = "Gaussian Gibbs (numpy)"
            else:
                label = f"Student-t Gibbs, df = {df:g}, " + ("one weight per case" if per_case else
                                                              "one weight per case and gene")  # fmt: skip
            label += ", precision per class and gene" if class_tau else ", precision per gene"
            rows.append({"k": k, "variant": label + " (uncorrected)", **measures(y, proba, LYMPHOMA_OUTLIERS),
                         "seconds": seconds, **{f"−log p(true) case {i + 1}": -np.log(max(proba[i, y[i]], 1e-300))
                                                for i in LYMPHOMA_OUTLIERS}})  # fmt: skip
    return rows


TWO_LEVEL_VARIANTS = [(4.0, np.inf), (np.inf, 4.0), (4.0, 4.0), (10.0, 4.0), (2.0, 4.0), (4.0, 10.0)]
#: (cell weight, df_case) with a contaminated-normal cell weight (π, κ): v_ij = 1/κ with probability π, else 1.
CONTAMINATED_VARIANTS = [((0.01, 25.0), np.inf), ((0.02, 25.0), np.inf), ((0.02, 100.0), np.inf),
                         ((0.05, 25.0), np.inf), ((0.02, 25.0), 4.0), (np.inf, (0.1, 4.0)), (np.inf, (0.1, 9.0)),
                         ((0.02, 25.0), (0.1, 4.0))]  # fmt: skip


def _random_walk(rng, start, log_target, steps, step_sd=0.3):
    """``steps`` random-walk Metropolis moves of sd ``step_sd`` from ``start`` under ``log_target``; the end point."""
    x, current = start, log_target(start)
    for _ in range(steps):
        proposal = x + step_sd * rng.standard_normal()
        candidate = log_target(proposal)
        if np.log(rng.random()) < candidate - current:
            x, current = proposal, candidate
    return x


def two_level_t_gibbs(X, codes, n_classes, df_cell, df_case, prior, mcmc, rng, class_tau=True, cell_mix=None,
                      case_mix=None, log_factor=None, case_factor=None, case_share_prior=None, trace=None,
                      class_scale=None, scale_factor=None):
    """Gibbs sampler with class precisions per class and gene and two latent scale weights, optionally corrected.

    x_ij | y_i = g ~ N(μ_gj, 1/(u_i v_ij τ_gj)), u_i ~ Gamma(df_case/2, rate df_case/2) one weight per case
    (shared by its genes), v_ij ~ Gamma(df_cell/2, rate df_cell/2) one per cell; an infinite df fixes that
    weight at 1; ``cell_mix=(π, κ)`` makes the cell weight two-valued instead (a contaminated normal: v_ij = 1/κ
    with probability π, else 1; ``df_cell`` is then ignored), and ``case_mix=(π_c, κ_c)`` the case weight
    (u_i = 1/κ_c with probability π_c; ``df_case`` ignored). τ_gj ~ Gamma(α^x/2, α^x w^x/2) (with
    ``class_tau=False`` one τ_j per gene, the manuscript's); μ_gj ~ N(ν_j, 1/τ^μ), ν_j ~ N(0, 1/τ^ν), τ^μ and τ^ν
    with Gamma(α/2, α w/2) priors. ``log_factor=(grid, values)``: (p − k) log b(τ^μ) on a grid of log τ^μ (the
    selection-bias correction of the spread, ``bench_contaminated_factor.log_factor_table``), interpolated; τ^μ
    is then updated by random-walk Metropolis in log τ^μ (5 steps of sd 0.3 per sweep) and kept inside the grid.
    ``case_factor``: with ``case_mix``, a function of the tuple of outlying-case counts per class returning such a
    table (``bench_contaminated_factor.case_log_factor_table``); the case states are then drawn one at a time
    with the factor's change in their odds. ``case_share_prior=(a, b)``: π_c is one per class, Beta(a, b), drawn
    each sweep (its saved draws go to ``trace["case_share"]``, (S, G), if a dict is given).
    ``class_scale=(shape, rate)``: a variance scale per class shared by all genes (with ``class_tau``),
    τ_gj | s_g ~ Gamma(α^x/2, rate α^x w^x s_g/2), s_g ~ Gamma(shape, rate) (draws to ``trace["class_scale"]``);
    ``scale_factor(log τ^μ, s)`` = (p − k) log b(τ^μ; s) corrects τ^μ and s (random-walk Metropolis; it takes
    precedence over ``log_factor`` and ``case_factor`` for τ^μ, so combine it with neither); ``class_scale=("fixed",
    s)`` holds s at given values (a plug-in) and ``scale_factor`` then corrects τ^μ only. Returns the saved
    draws of μ and τ, each (S, G, k).
    """
    n, k = X.shape
    onehot = np.zeros((n, n_classes))
    onehot[np.arange(n), codes] = 1.0
    counts = onehot.sum(axis=0)
    mu = (onehot.T @ X) / counts[:, None]
    nu = mu.mean(axis=0)
    tau = np.tile(1.0 / np.maximum(((X - mu[codes]) ** 2).mean(axis=0), 1e-12), (n_classes, 1))
    u, v = np.ones(n), np.ones((n, k))
    scale = np.ones(n_classes)
    tau_mu = n_classes * k / max(((mu - nu) ** 2).sum(), 1e-12)
    tau_nu = k / max((nu**2).sum(), 1e-12)
    a, b = prior["alpha_x"], prior["alpha_x"] * prior["w_x"]
    mus, taus = [], []
    for it in range(mcmc["n_iter"]):
        r2 = tau[codes] * (X - mu[codes]) ** 2
        if case_mix is not None:  # contaminated case: u = 1/κ_c with probability ∝ π_c Π_j N(x_ij; μ, κ_c/(v τ))
            share, inflation = case_mix
            if case_share_prior is not None:  # π_c per class, Beta(a, b) prior, drawn from its conditional
                flagged = np.bincount(codes[u < 1.0], minlength=n_classes)
                case_share = rng.beta(case_share_prior[0] + flagged, case_share_prior[1] + counts - flagged)
                share = case_share[codes]
            log_odds = (np.log(share / (1.0 - share)) - 0.5 * k * np.log(inflation)
                        + 0.5 * (v * r2).sum(axis=1) * (1.0 - 1.0 / inflation))  # fmt: skip
            if case_factor is None:
                u = np.where(rng.random(n) < expit(log_odds), 1.0 / inflation, 1.0)
            else:  # corrected: the discarded features share the cases' states, so b depends on the counts c
                outlying = np.bincount(codes[u < 1.0], minlength=n_classes)
                eta = np.log(tau_mu)
                for i in range(n):
                    normal, odd = outlying.copy(), outlying.copy()
                    normal[codes[i]] -= u[i] < 1.0
                    odd[codes[i]] += u[i] == 1.0
                    grid, on = case_factor(tuple(odd))
                    _, off = case_factor(tuple(normal))
                    shift = np.interp(eta, grid, on) - np.interp(eta, grid, off)
                    is_odd = rng.random() < expit(log_odds[i] + shift)
                    u[i] = 1.0 / inflation if is_odd else 1.0
                    outlying = odd if is_odd else normal
        elif np.isfinite(df_case):
            u = rng.gamma((df_case + k) / 2, 1.0, size=n) / ((df_case + (v * r2).sum(axis=1)) / 2)
        if cell_mix is not None:  # contaminated normal: v = 1/κ with probability ∝ π N(x; μ, κ/(uτ)), else 1
            share, inflation = cell_mix
            log_odds = (np.log(share / (1.0 - share)) - 0.5 * np.log(inflation)
                        + 0.5 * u[:, None] * r2 * (1.0 - 1.0 / inflation))  # fmt: skip
            v = np.where(rng.random((n, k)) < expit(log_odds), 1.0 / inflation, 1.0)
        elif np.isfinite(df_cell):
            v = rng.gamma((df_cell + 1) / 2, 1.0, size=(n, k)) / ((df_cell + u[:, None] * r2) / 2)
        weight = u[:, None] * v
        precision = tau_mu + tau * (onehot.T @ weight)
        mu = (nu * tau_mu + tau * (onehot.T @ (weight * X))) / precision
        mu += rng.standard_normal((n_classes, k)) / np.sqrt(precision)
        resid = onehot.T @ (weight * (X - mu[codes]) ** 2)
        if class_tau:
            tau = rng.gamma((a + counts[:, None]) / 2, 1.0, size=(n_classes, k)) / ((b * scale[:, None] + resid) / 2)
        else:
            tau = np.tile(rng.gamma((a + n) / 2, 1.0, size=k) / ((b + resid.sum(axis=0)) / 2), (n_classes, 1))
        p_nu = tau_nu + n_classes * tau_mu
        nu = mu.sum(axis=0) * tau_mu / p_nu + rng.standard_normal(k) / np.sqrt(p_nu)
        shape_mu = (prior["alpha_mu"] + n_classes * k) / 2
        rate_mu = (prior["alpha_mu"] * prior["w_mu"] + ((mu - nu) ** 2).sum()) / 2
        if class_scale is not None and isinstance(class_scale[0], str):  # ("fixed", s): a plug-in scale
            scale = np.asarray(class_scale[1], dtype=np.float64)
        elif class_scale is not None:  # s_g ~ Gamma(shape, rate): τ_gj | s_g ~ Gamma(α^x/2, rate α^x w^x s_g/2)
            shape_s = class_scale[0] + k * a / 2
            rates_s = class_scale[1] + b * tau.sum(axis=1) / 2
            if scale_factor is None:
                scale = rng.gamma(shape_s, 1.0, size=n_classes) / rates_s
            else:  # corrected: b(τ^μ; s)^{p−k} in each s_g's target, random-walk Metropolis in log s_g
                for g in range(n_classes):

                    def scale_target(ell, g=g):
                        trial = scale.copy()
                        trial[g] = np.exp(ell)
                        return shape_s * ell - rates_s[g] * trial[g] + scale_factor(np.log(tau_mu), trial)

                    scale[g] = np.exp(_random_walk(rng, np.log(scale[g]), scale_target, steps=3))
        if case_factor is not None:
            log_factor = case_factor(tuple(np.bincount(codes[u < 1.0], minlength=n_classes)))
        if log_factor is None and scale_factor is None:
            tau_mu = rng.gamma(shape_mu) / rate_mu
        else:  # corrected: random-walk Metropolis on η = log τ^μ, target Gamma(shape, rate) in η × b(τ^μ)^{p−k}
            if scale_factor is not None:
                start = np.log(tau_mu)

                def log_target(eta):
                    return shape_mu * eta - rate_mu * np.exp(eta) + scale_factor(eta, scale)
            else:
                grid, values = log_factor
                start = float(np.clip(np.log(tau_mu), grid[0], grid[-1]))

                def log_target(eta):
                    if not grid[0] <= eta <= grid[-1]:
                        return -np.inf
                    return shape_mu * eta - rate_mu * np.exp(eta) + np.interp(eta, grid, values)

            tau_mu = np.exp(_random_walk(rng, start, log_target, steps=5))
        tau_nu = rng.gamma((prior["alpha_nu"] + k) / 2) / ((prior["alpha_nu"] * prior["w_nu"] + (nu**2).sum()) / 2)
        if it >= mcmc["burn_in"] and (it - mcmc["burn_in"]) % mcmc["thin"] == 0:
            mus.append(mu.copy())
            taus.append(tau.copy())
            if trace is not None and case_share_prior is not None:
                trace.setdefault("case_share", []).append(case_share.copy())
            if trace is not None and class_scale is not None:
                trace.setdefault("class_scale", []).append(scale.copy())
    return np.array(mus), np.array(taus)


def two_level_t_predict(x, mus, taus, df_cell, df_case, class_log_prior, n_nodes=60, cell_mix=None, case_mix=None):
    """Class probabilities of one case, both weights integrated out: the cell weight in closed form (a t_df_cell
    density per gene, a two-component normal mixture with ``cell_mix``, or the normal), the case weight by
    generalised Gauss–Laguerre quadrature."""

    def log_lik(scale):
        if cell_mix is not None:
            share, inflation = cell_mix
            z2 = taus * scale * (x[None, None] - mus) ** 2
            normal = 0.5 * np.log(taus * scale / (2 * np.pi))
            return np.logaddexp(np.log1p(-share) + normal - 0.5 * z2,
                                np.log(share) + normal - 0.5 * np.log(inflation) - 0.5 * z2 / inflation).sum(-1)
        if np.isinf(df_cell):
            return (0.5 * np.log(taus * scale / (2 * np.pi)) - 0.5 * taus * scale * (x[None, None] - mus) ** 2).sum(-1)
        return t_log_density(x[None, None], mus, taus * scale, df_cell).sum(axis=-1)  # (S, G)

    if case_mix is not None:  # π_c a number, or per draw and class (S, G) when it was learned
        share, inflation = case_mix
        log_lik_draws = np.logaddexp(np.log1p(-share) + log_lik(1.0), np.log(share) + log_lik(1.0 / inflation))
    elif np.isinf(df_case):
        log_lik_draws = log_lik(1.0)
    else:  # u = t / a with t ~ Gamma(a, 1), a = df_case / 2: ∫ f(u) p(u) du = Σ w_q f(t_q / a) / Γ(a)
        shape = df_case / 2
        nodes, weights = roots_genlaguerre(n_nodes, shape - 1)
        log_weights = np.log(weights) - gammaln(shape)
        log_lik_draws = logsumexp(np.stack([log_lik(t / shape) for t in nodes]) + log_weights[:, None, None], axis=0)
    log_post = logsumexp(log_lik_draws, axis=0) - np.log(log_lik_draws.shape[0]) + class_log_prior
    return np.exp(log_post - logsumexp(log_post))


def two_level_t_rows(name, X, y, mcmc, variants=TWO_LEVEL_VARIANTS):
    """AMLP / error / expected error and the three worst cases of each (df_cell, df_case) of TWO_LEVEL_VARIANTS,
    k = 10 and 50, on the author's folds (uncorrected: no adjustment factor exists for these models)."""
    n, n_classes = X.shape[0], int(y.max()) + 1
    prior = PROTOTYPE_PRIOR
    rows = []
    for k in KS:
        for cell, case in variants:
            df_cell, cell_mix = (np.inf, cell) if isinstance(cell, tuple) else (cell, None)
            df_case, case_mix = (np.inf, case) if isinstance(case, tuple) else (case, None)
            start = time.perf_counter()
            proba = np.empty((n, n_classes))
            for fold in range(N_FOLDS):
                train = np.flatnonzero(np.arange(n) % N_FOLDS != fold)
                test = np.flatnonzero(np.arange(n) % N_FOLDS == fold)
                top = FSelector(k).fit(X[train], y[train]).indices_
                counts = np.bincount(y[train], minlength=n_classes)
                class_log_prior = np.log((counts + 1.0) / (counts.sum() + n_classes))
                mus, taus = two_level_t_gibbs(X[train][:, top], y[train], n_classes, df_cell, df_case, prior, mcmc,
                                              np.random.default_rng(fold), cell_mix=cell_mix,
                                              case_mix=case_mix)  # fmt: skip
                for i in test:
                    proba[i] = two_level_t_predict(X[i, top], mus, taus, df_cell, df_case, class_log_prior,
                                                   cell_mix=cell_mix, case_mix=case_mix)  # fmt: skip
            minus_log = -np.log(np.maximum(proba[np.arange(n), y], 1e-300))
            worst = np.argsort(-minus_log)[:3]
            rows.append({"data": name, "k": k, "cell": f"π {cell[0]:g}, κ {cell[1]:g}" if cell_mix else df_cell,
                         "case": f"π {case[0]:g}, κ {case[1]:g}" if case_mix else df_case,
                         **calibration_columns(y, proba),
                         "worst cases (1-based): −log p(true)": ", ".join(f"{i + 1}: {minus_log[i]:.2f}"
                                                                          for i in worst),
                         "seconds": time.perf_counter() - start})  # fmt: skip
    return rows


#: log τ^μ grid of the corrected contaminated-cell prototype's factor table
LOG_TAU_MU_GRID = np.arange(-3.0, 7.0001, 0.25)


def prototype_folds(X, y, k):
    """For each of the author's folds: (train, test, top k by F, γ = the largest F of a discarded feature, class
    counts, the class log prior with one pseudo-count) on the training cases."""
    n, n_classes = X.shape[0], int(y.max()) + 1
    for fold in range(N_FOLDS):
        train = np.flatnonzero(np.arange(n) % N_FOLDS != fold)
        test = np.flatnonzero(np.arange(n) % N_FOLDS == fold)
        f_values = f_statistic(X[train], y[train])
        top = np.argsort(-f_values, kind="stable")[:k]
        threshold = float(np.sort(f_values)[::-1][k])
        counts = np.bincount(y[train], minlength=n_classes)
        yield fold, train, test, top, threshold, counts, np.log((counts + 1.0) / (counts.sum() + n_classes))


def corrected_contaminated_rows(name, X, y, mcmc, cell_mix=(0.02, 25.0), n_pool=64):
    """AMLP / error / expected error of the contaminated-cell prototype, uncorrected and corrected (the spread τ^μ
    with the exact factor of ``bench_contaminated_factor``, eq. R6, over a pool of ``n_pool`` class variances),
    k = 10 and 50, the author's folds, the same seeds; and the seconds of the factor tables."""
    from bench_contaminated_factor import log_factor_table

    n, n_classes, prior = X.shape[0], int(y.max()) + 1, PROTOTYPE_PRIOR
    rows = []
    for k in KS:
        proba = {False: np.empty((n, n_classes)), True: np.empty((n, n_classes))}
        table_seconds = 0.0
        for fold, train, test, top, threshold, counts, class_log_prior in prototype_folds(X, y, k):
            start = time.perf_counter()
            values = log_factor_table(counts, threshold, X.shape[1] - k, cell_mix[0], cell_mix[1], prior["alpha_x"],
                                      prior["w_x"], LOG_TAU_MU_GRID, n_pool=n_pool)  # fmt: skip
            table_seconds += time.perf_counter() - start
            for correct in (False, True):
                mus, taus = two_level_t_gibbs(X[train][:, top], y[train], n_classes, np.inf, np.inf, prior, mcmc,
                                              np.random.default_rng(fold), cell_mix=cell_mix,
                                              log_factor=(LOG_TAU_MU_GRID, values) if correct else None)  # fmt: skip
                for i in test:
                    proba[correct][i] = two_level_t_predict(X[i, top], mus, taus, np.inf, np.inf, class_log_prior,
                                                            cell_mix=cell_mix)  # fmt: skip
        for correct in (False, True):
            rows.append({"data": name, "k": k, "cell": f"π {cell_mix[0]:g}, κ {cell_mix[1]:g}",
                         "corrected": correct,
                         **calibration_columns(y, proba[correct]),
                         "factor tables (s)": table_seconds if correct else 0.0})  # fmt: skip
    return rows


def corrected_case_rows(name, X, y, mcmc, case_mix=(0.1, 4.0), n_pool=64):
    """AMLP / error / expected error of the contaminated-case prototype, uncorrected and corrected (one factor
    table per count vector of outlying cases the chain visits, cached), k = 10 and 50, the author's folds."""
    from bench_contaminated_factor import case_log_factor_table

    n, n_classes, prior = X.shape[0], int(y.max()) + 1, PROTOTYPE_PRIOR
    rows = []
    for k in KS:
        proba = {False: np.empty((n, n_classes)), True: np.empty((n, n_classes))}
        table_seconds, n_tables = 0.0, 0
        for fold, train, test, top, threshold, counts, class_log_prior in prototype_folds(X, y, k):
            cache = {}

            def case_factor(outlying, counts=counts, threshold=threshold, cache=cache):
                nonlocal table_seconds, n_tables
                if outlying not in cache:
                    start = time.perf_counter()
                    cache[outlying] = (LOG_TAU_MU_GRID, case_log_factor_table(
                        counts, threshold, X.shape[1] - k, outlying, case_mix[1], prior["alpha_x"], prior["w_x"],
                        LOG_TAU_MU_GRID, n_pool=n_pool))  # fmt: skip
                    table_seconds += time.perf_counter() - start
                    n_tables += 1
                return cache[outlying]

            for correct in (False, True):
                mus, taus = two_level_t_gibbs(X[train][:, top], y[train], n_classes, np.inf, np.inf, prior, mcmc,
                                              np.random.default_rng(fold), case_mix=case_mix,
                                              case_factor=case_factor if correct else None)  # fmt: skip
                for i in test:
                    proba[correct][i] = two_level_t_predict(X[i, top], mus, taus, np.inf, np.inf, class_log_prior,
                                                            case_mix=case_mix)  # fmt: skip
        for correct in (False, True):
            rows.append({"data": name, "k": k, "case": f"π {case_mix[0]:g}, κ {case_mix[1]:g}", "corrected": correct,
                         **calibration_columns(y, proba[correct]),
                         "factor tables": f"{n_tables} in {table_seconds:.1f} s" if correct else ""})  # fmt: skip
    return rows


def corrected_scale_rows(name, X, y, mcmc, scale_prior=(2.0, 2.0), n_pool=64, plug_in=False):
    """AMLP / error / expected error of the per-class prototype with a variance scale per class shared by all genes
    (no contamination), uncorrected and corrected: b(τ^μ; s) is the per-class model's exact factor
    (``per_class_log_b``, eq. P20–P28) with the pool of class variances scaled by s, evaluated inside the chain.
    ``plug_in``: s held at :func:`plug_in_class_scale` of each training fold (all genes), only τ^μ corrected."""
    from bench_contaminated_factor import precision_prior_pool

    from hdbayes.selection_bias.gaussian._factor import per_class_log_b

    n, n_classes, prior = X.shape[0], int(y.max()) + 1, PROTOTYPE_PRIOR
    pool = precision_prior_pool(prior["alpha_x"], prior["w_x"], n_classes, n_pool)
    rows = []
    for k in KS:
        proba = {False: np.empty((n, n_classes)), True: np.empty((n, n_classes))}
        scales = {False: [], True: []}
        seconds = {False: 0.0, True: 0.0}
        for fold, train, test, top, threshold, counts, class_log_prior in prototype_folds(X, y, k):
            as_float = counts.astype(np.float64)

            def scale_factor(log_tau_mu, scale, as_float=as_float, threshold=threshold):
                return (X.shape[1] - k) * per_class_log_b(-log_tau_mu, pool * scale[None, :], as_float, threshold)

            scale = ("fixed", plug_in_class_scale(X[train], y[train], prior["w_x"])) if plug_in else scale_prior
            for correct in (False, True):
                trace, start = {}, time.perf_counter()
                mus, taus = two_level_t_gibbs(X[train][:, top], y[train], n_classes, np.inf, np.inf, prior, mcmc,
                                              np.random.default_rng(fold), class_scale=scale, trace=trace,
                                              scale_factor=scale_factor if correct else None)  # fmt: skip
                seconds[correct] += time.perf_counter() - start
                scales[correct].append(np.mean(trace["class_scale"], axis=0))
                for i in test:
                    proba[correct][i] = two_level_t_predict(X[i, top], mus, taus, np.inf, np.inf, class_log_prior)
        for correct in (False, True):
            rows.append({"data": name, "k": k, "corrected": correct,
                         **calibration_columns(y, proba[correct]),
                         "mean s_g": np.array2string(np.mean(scales[correct], axis=0), precision=2),
                         "seconds": seconds[correct]})  # fmt: skip
    return rows


def plug_in_class_scale(X_train, y_train, w_x):
    """ŝ_g from all genes of the training cases: under τ_gj ~ Gamma(1, rate w^x s_g) (α^x = 2) the median of the
    class variance 1/τ_gj is w^x s_g/ln 2, so ŝ_g = ln 2 · median_j(within-class variance of class g)/w^x."""
    n_classes = int(y_train.max()) + 1
    variances = np.array([X_train[y_train == g].var(axis=0, ddof=1) for g in range(n_classes)])
    return np.log(2.0) * np.median(variances, axis=1) / w_x


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="short chains (1200 / 200 / 5) instead of the paper's")
    parser.add_argument("--diagnose", action="store_true", help="also the study of lymphoma cases 1 and 42")
    parser.add_argument("--skip-srbct", action="store_true")
    parser.add_argument("--n-jobs", type=int, default=None, help="folds cross-validated at once (joblib processes)")
    parser.add_argument("--two-level", action="store_true",
                        help="only the Student-t prototypes with a weight per case and one per cell (uncorrected)")
    parser.add_argument("--contaminated", action="store_true",
                        help="with --two-level: contaminated-normal cell weights (π, κ) instead of Student-t ones")
    parser.add_argument("--corrected-contaminated", action="store_true",
                        help="the contaminated-cell prototype uncorrected and corrected (exact factor, eq. R6)")
    parser.add_argument("--corrected-cases", action="store_true",
                        help="the contaminated-case prototype uncorrected and corrected (a factor per count vector)")
    parser.add_argument("--corrected-scale", action="store_true",
                        help="the per-class prototype with a variance scale per class, uncorrected and corrected")
    parser.add_argument("--plug-in-scale", action="store_true",
                        help="the scale per class fixed at all genes' class variances, τ^μ uncorrected and corrected")
    parser.add_argument("--only", metavar="TEXT", help="only the methods whose name contains TEXT, e.g. 'per-class'")
    args = parser.parse_args()
    mcmc = MCMC_QUICK if args.quick else MCMC_PAPER
    print(f"machine: {platform.processor() or platform.machine()}, python {platform.python_version()}, "
          f"numpy {np.__version__}, scikit-learn {sklearn.__version__}; MCMC {mcmc}; "
          f"spread option: {'yes' if has_spread_option() else 'no'}\n")  # fmt: skip
    warm_up()
    lymphoma = load_lymphoma()
    datasets = {"lymphoma": (lymphoma.X, lymphoma.y, LYMPHOMA_OUTLIERS)}
    if not args.skip_srbct:
        srbct = load_srbct()
        datasets["srbct"] = (srbct.X, srbct.y, ())
    prototypes = [  # (chosen, title, rows of one data set)
        (args.corrected_scale, "A variance scale per class shared by all genes, uncorrected and corrected",
         corrected_scale_rows),
        (args.plug_in_scale, "The scale per class fixed at all genes' class variances, uncorrected and corrected",
         lambda name, X, y, mcmc: corrected_scale_rows(name, X, y, mcmc, plug_in=True)),
        (args.corrected_cases, "Contaminated cases, uncorrected and corrected (a factor per count vector of outlying "
         "cases)", corrected_case_rows),
        (args.corrected_contaminated, "Contaminated cells, uncorrected and corrected (uncorrected prototype sampler "
         "+ exact factor)", corrected_contaminated_rows),
        (args.two_level, "Class precisions per class and gene, Student-t or contaminated weights per case and per "
         "cell (uncorrected)", lambda name, X, y, mcmc: two_level_t_rows(
             name, X, y, mcmc, CONTAMINATED_VARIANTS if args.contaminated else TWO_LEVEL_VARIANTS)),
    ]  # fmt: skip
    for chosen, title, rows_of in prototypes:
        if chosen:
            rows = [row for name, (X, y, _) in datasets.items() for row in rows_of(name, X, y, mcmc)]
            print(f"## {title}\n")
            print(markdown_table(rows))
            return
    probabilities_by_k = {}
    for name, (X, y, exclude) in datasets.items():
        for k in KS:
            rows, probabilities = compare(name, X, y, k, mcmc, exclude, args.only, args.n_jobs)
            if name == "lymphoma":
                probabilities_by_k[k] = probabilities
            print(f"## {name}: folds i % 10, top {k} by F inside each fold\n")
            print(markdown_table(rows))
    print(f"Issue 13, BCBCSF 1.0-2 on SRBCT: AMLP corrected {PUBLISHED_SRBCT_AMLP['corrected']} vs uncorrected "
          f"{PUBLISHED_SRBCT_AMLP['uncorrected']} (k not stated in the issue).\n")  # fmt: skip
    if args.diagnose:
        X, y = lymphoma.X, lymphoma.y
        print("## Lymphoma cases 1 and 42 under every method (−log p(true class))\n")
        print(markdown_table(peer_scores(X, y, probabilities_by_k)))
        rows, gene_rows = diagnose_cases(X, y, mcmc)
        print("## The fits of their folds: plug-in log-likelihood ratio (true − predicted class) by gene\n")
        print(markdown_table(rows))
        print(markdown_table(gene_rows))
        print("## Robust z-scores against the case's own class (median, 1.4826 MAD; all genes)\n")
        print(markdown_table(outlier_profile(X, y)))
        print("## Nearest neighbours (Pearson correlation between cases)\n")
        print(markdown_table(neighbours(X, y)))
        print("## GaussianNB on the same fold and genes\n")
        print(markdown_table(gaussian_nb_view(X, y)))
        print("## Heavy tails: plug-in t likelihoods and Student-t Gibbs samplers (uncorrected)\n")
        rows = robust_variants(X, y, mcmc)
        print(markdown_table(rows, columns=list(dict.fromkeys(column for row in rows for column in row))))


if __name__ == "__main__":
    main()
