"""Experiment: generative models for discrete data (Murphy ch. 3; docs/discrete.md).

Four parts:

* **The beta-binomial worked example** (Murphy §3.3): prior Beta(2, 2), N_1 = 3, N_0 = 17.
  Figure of prior, (normalised) likelihood and posterior Beta(5, 19); the posterior summaries;
  the predictive distribution of the number of heads in M = 10 future trials, Bayesian
  (beta-binomial) against the plug-in Bin(10, θ_MAP).
* **The number game** (Murphy §3.2): the size principle on h_even and h_pow2, the data
  overwhelming the prior, and the generalisation p(x̃ ∈ C | D) over Murphy's hypothesis space.
* **The black swan / add-one smoothing** (Murphy §3.3): the MLE predicts probability 0 for
  an event never seen, Laplace's rule (N_1 + 1)/(N + 2) does not; in document classification
  the multinomial MLE gives test documents probability zero under every class, add-one none.
* **A bursty corpus** (Murphy §3.5.5): documents drawn from per-class Pólya urns
  (:func:`hdbayes.datasets.documents.simulate_bursty_documents`); accuracy and log-loss of the
  multinomial naive Bayes (plug-in posterior mean = scikit-learn's ``MultinomialNB``), its
  exact Bayesian form, the Bernoulli naive Bayes and the DCM classifier. Fit times are in
  ``timing.csv`` only, so that two runs with the same seed write identical results.
"""

from __future__ import annotations

import time
from fractions import Fraction

import numpy as np
from scipy import stats

from hdbayes.datasets.documents import simulate_bursty_documents
from hdbayes.discrete.concept_learning import BayesianConceptLearner, number_game_hypotheses
from hdbayes.discrete.conjugate import BetaBinomial
from hdbayes.discrete.dcm import DCMClassifier
from hdbayes.discrete.naive_bayes import BayesianBernoulliNB, BayesianMultinomialNB
from hdbayes.experiments._report import Report, markdown_table
from hdbayes.experiments._runner import summary_markdown
from hdbayes.experiments._runtime import choose_size, split_timings
from hdbayes.metrics import error_rate

__all__ = ["run"]

#: corpus sizes: (training documents, test documents, vocabulary, mean length, concentration α_0, class spread)
SIZES = {"small": (600, 600, 1000, 60, 20.0, 0.35), "full": (5000, 5000, 20000, 60, 20.0, 0.35)}
PRIOR = (2, 2)
HEADS, TAILS = 3, 17
FUTURE_TRIALS = 10
BLACK_SWAN_DATA = ((0, 3), (0, 10), (1, 3), (3, 17))
#: The DCM must beat the multinomial naive Bayes by at least these margins on the bursty corpus (measured at
#: the small size, seeds 0–2: log-loss lower by 0.94–1.57 nats, accuracy higher by 0.06–0.12).
LOG_LOSS_MARGIN = 0.1
ACCURACY_MARGIN = 0.02


def _beta_binomial_part():
    prior = BetaBinomial(Fraction(PRIOR[0]), Fraction(PRIOR[1]))
    posterior = prior.update(HEADS, TAILS)
    low, high = posterior.credible_interval(0.95)
    summary = [
        {"quantity": "posterior", "value": f"Beta({posterior.a}, {posterior.b})", "float": float("nan")},
        {"quantity": "posterior mean", "value": str(posterior.mean()), "float": float(posterior.mean())},
        {"quantity": "posterior mode (MAP)", "value": str(posterior.mode()), "float": float(posterior.mode())},
        {"quantity": "MLE", "value": str(BetaBinomial.mle(Fraction(HEADS), TAILS)), "float": HEADS / (HEADS + TAILS)},
        {"quantity": "posterior variance", "value": str(posterior.var()), "float": float(posterior.var())},
        {"quantity": "shrinkage weight λ", "value": str(prior.shrinkage_weight(HEADS + TAILS)),
         "float": float(prior.shrinkage_weight(HEADS + TAILS))},
        {"quantity": "95% credible interval", "value": f"({low:.4f}, {high:.4f})", "float": float("nan")},
        {"quantity": "p(x̃ = 1 | D)", "value": str(posterior.predictive_proba()),
         "float": float(posterior.predictive_proba())},
    ]  # fmt: skip
    k = np.arange(FUTURE_TRIALS + 1)
    bayes = posterior.predictive_pmf(k, FUTURE_TRIALS)
    plugin = posterior.plugin_pmf(k, FUTURE_TRIALS, estimate="map")
    predictive = [
        {"heads": int(x), "beta_binomial": float(b), "plugin_map": float(p)} for x, b, p in zip(k, bayes, plugin)
    ]
    return prior, posterior, summary, predictive


NUMBER_GAME_DATA = ((16,), (16, 8, 2, 64), (16, 6))
PROBES = (2, 6, 32, 37, 64, 80)


def _number_game_rows():
    """Posterior of h_pow2 against h_even (T4) and the generalisation over Murphy's hypothesis space."""
    pair = {"even": range(2, 101, 2), "powers of 2": [2, 4, 8, 16, 32, 64]}
    rows = []
    for prior_name, prior in (("uniform", None), ("even 0.99", {"even": 0.99, "powers of 2": 0.01})):
        for data in NUMBER_GAME_DATA:
            learner = BayesianConceptLearner(pair, prior=prior).fit(list(data))
            rows.append({"prior": prior_name, "D": str(list(data)), "p_pow2": float(learner.posterior_[1]),
                         "map": learner.map_hypothesis_})  # fmt: skip
    hypotheses = number_game_hypotheses()
    full = BayesianConceptLearner(hypotheses, prior=_number_game_prior(hypotheses))
    generalisation = []
    for data in NUMBER_GAME_DATA[:2]:
        membership = full.fit(list(data)).predict_membership(list(PROBES))
        generalisation.append({"D": str(list(data)), "map": full.map_hypothesis_,
                               **{f"p({x} in C)": float(p) for x, p in zip(PROBES, membership)}})  # fmt: skip
    return rows, generalisation


def _number_game_prior(hypotheses):
    """Murphy's kind of prior: every mathematical rule weight 1, the two conceptually unnatural
    rules ("powers of 2 + {37}", "powers of 2 - {32}") 10^-3, and the intervals together 20% of
    the mass (our choice; the summary of Murphy's chapter gives no numbers)."""
    names = list(hypotheses)
    intervals = [name for name in names if name.startswith("interval")]
    rules = [name for name in names if not name.startswith("interval")]
    prior = {name: (1e-3 if "{" in name else 1.0) for name in rules}
    rule_mass = sum(prior.values())
    prior.update({name: 0.25 * rule_mass / len(intervals) for name in intervals})
    return prior


def _black_swan_rows():
    rows = []
    for n1, n0 in BLACK_SWAN_DATA:
        rows.append(
            {"N1": n1, "N0": n0, "mle": n1 / (n1 + n0),
             "laplace_add_one": float(BetaBinomial(1, 1).update(n1, n0).predictive_proba()),
             "seed_misprint": (n1 + 1) / (n0 + n1 + 1),
             "beta_2_2": float(BetaBinomial(*PRIOR).update(n1, n0).predictive_proba())}
        )  # fmt: skip
    return rows


def _log_loss(model, X, y):
    """Average minus log probability of the true classes, from log probabilities (no underflow)."""
    log_proba = model.predict_log_proba(X)
    return float(-np.mean(log_proba[np.arange(y.shape[0]), np.searchsorted(model.classes_, y)]))


def _corpus_part(size, random_state, progress):
    n_train, n_test, n_words, mean_length, concentration, spread = size
    corpus = simulate_bursty_documents(
        n_samples=n_train + n_test, n_words=n_words, mean_length=mean_length, concentration=concentration,
        class_spread=spread, random_state=random_state,
    )  # fmt: skip
    X_train, y_train = corpus.X[:n_train], corpus.y[:n_train]
    X_test, y_test = corpus.X[n_train:], corpus.y[n_train:]
    models = {
        "multinomial NB, posterior mean (= sklearn MultinomialNB, add-one)": BayesianMultinomialNB("posterior_mean"),
        "multinomial NB, exact Bayes (DCM of the posterior)": BayesianMultinomialNB("bayes"),
        "Bernoulli NB, Bayes": BayesianBernoulliNB(binarize=0.0),
        "DCM classifier (Minka fixed point)": DCMClassifier(),
    }
    rows = []
    fitted = {}
    for name, model in models.items():
        if progress:
            print(f"fitting {name}")
        start = time.perf_counter()
        model.fit(X_train, y_train)
        seconds = time.perf_counter() - start
        proba = model.predict_proba(X_test)
        rows.append(
            {"model": name, "accuracy": 1.0 - error_rate(y_test, proba),
             "log_loss": _log_loss(model, X_test, y_test), "fit_seconds": seconds}
        )  # fmt: skip
        fitted[name] = model
    mle = BayesianMultinomialNB("mle").fit(X_train, y_train)
    impossible_mle = np.mean(np.all(np.isneginf(mle.predict_joint_log_proba(X_test)), axis=1))
    add_one = fitted["multinomial NB, posterior mean (= sklearn MultinomialNB, add-one)"]
    impossible_add_one = np.mean(np.all(np.isneginf(add_one.predict_joint_log_proba(X_test)), axis=1))
    dcm = fitted["DCM classifier (Minka fixed point)"]
    concentration_rows = [
        {"class": int(c), "true_alpha0": float(corpus.alpha[c].sum()),
         "fitted_alpha0": float(dcm.total_concentration_[c]),
         "smoothed_alpha0": float(dcm.concentration_[c].sum()),
         "n_iter": int(dcm.n_iter_[c]), "converged": bool(dcm.converged_[c])}
        for c in range(dcm.classes_.shape[0])
    ]  # fmt: skip
    swan = {"mle": float(impossible_mle), "add_one": float(impossible_add_one)}
    return rows, concentration_rows, swan, corpus


def run(full=False, random_state=0, progress=None, n_jobs=None, *, size=None):
    """Run the experiment.

    Parameters
    ----------
    full : bool, default=False
        5000 + 5000 documents over 20 000 words; otherwise 600 + 600 over 1000 words.
    random_state : int
    progress : bool or None
        Print a line per fitted model.
    n_jobs : int, optional
        Unused (the fits are fast); accepted for a uniform interface.
    size : {"small", "full"}, optional
        Overrides ``full``.

    Returns
    -------
    Report
    """
    _, size = choose_size(SIZES, full, size)
    prior, posterior, summary, predictive = _beta_binomial_part()
    swan_rows = _black_swan_rows()
    number_rows, generalisation_rows = _number_game_rows()
    corpus_rows, concentration_rows, swan_documents, _ = _corpus_part(size, random_state, bool(progress))

    report = Report(name="discrete-models")
    report.timings["timing"] = split_timings(corpus_rows, ["fit_seconds"], ["model"])
    report.tables = {
        "beta_binomial_posterior": summary,
        "beta_binomial_predictive": predictive,
        "number_game": number_rows,
        "number_game_generalisation": generalisation_rows,
        "black_swan": swan_rows,
        "bursty_corpus": corpus_rows,
        "dcm_concentration": concentration_rows,
    }
    report.figures = {
        "beta_binomial": _figure_beta_binomial(prior, posterior, predictive),
        "bursty_corpus": _figure_corpus(corpus_rows),
    }
    report.checks = _checks(posterior, predictive, swan_rows, swan_documents, corpus_rows, concentration_rows)
    report.checks.update(_number_game_checks(number_rows))
    n_train, n_test, n_words, mean_length, concentration, spread = size
    report.summary = summary_markdown(
        "Generative models for discrete data",
        [
            f"## Beta-binomial: prior Beta{PRIOR}, N1 = {HEADS}, N0 = {TAILS} (Murphy §3.3)",
            "",
            markdown_table(summary, ["quantity", "value", "float"]),
            f"Predictive distribution of the number of heads in M = {FUTURE_TRIALS} future trials: Bayesian "
            "beta-binomial Bb(x | 5, 19, 10) against the plug-in Bin(x | 10, θ_MAP = 2/11).",
            "",
            markdown_table(predictive),
            "## The number game: h_even (|h| = 50) against h_pow2 (|h| = 6) (Murphy §3.2)",
            "",
            markdown_table(number_rows),
            "Generalisation p(x̃ ∈ C | D) over Murphy's hypothesis space (even, odd, squares, powers, multiples, "
            "endings, intervals), with a prior of weight 1 per rule, 10^-3 for the two unnatural rules "
            "'powers of 2 ± one number' and 20% of the mass on the intervals:",
            "",
            markdown_table(generalisation_rows),
            "## Black swan: p(x̃ = 1 | D) after N1 heads in N tosses",
            "",
            markdown_table(swan_rows),
            "The MLE judges an unseen outcome impossible; Laplace's rule (N1 + 1)/(N + 2) (add-one smoothing) "
            "does not. The summary's misprinted (N1 + 1)/(N + 1) is shown for comparison.",
            "",
            f"In the documents below the multinomial MLE gives {swan_documents['mle']:.1%} of the test documents "
            f"probability zero under every class (a word never seen in any class it could belong to); "
            f"add-one smoothing gives {swan_documents['add_one']:.1%}.",
            "",
            f"## Bursty corpus: {n_train} training and {n_test} test documents, {n_words} words "
            f"(Pólya urns with α_0 = {concentration}, mean length {mean_length}, class spread σ = {spread}; "
            f"seed {random_state})",
            "",
            markdown_table(corpus_rows),
            "Log-loss is the average minus log probability of the true class (nats), from log probabilities.",
            "",
            "The DCM's maximum-likelihood concentration α̂_0 per class (before smoothing) against the truth:",
            "",
            markdown_table(concentration_rows),
        ],
        report.checks,
        heading="Checks",
    )
    return report


def _checks(posterior, predictive, swan_rows, swan_documents, corpus_rows, concentration_rows):
    bayes = np.array([row["beta_binomial"] for row in predictive])
    plugin = np.array([row["plugin_map"] for row in predictive])
    k = np.arange(FUTURE_TRIALS + 1)
    by_model = {row["model"].split(",")[0].split(" (")[0]: row for row in corpus_rows}
    multinomial = corpus_rows[0]
    dcm = by_model["DCM classifier"]
    checks = {
        "posterior is Beta(5, 19) with mean 5/24, mode 2/11, variance 19/2880 (T1)": (
            (posterior.a, posterior.b) == (5, 19) and posterior.mean() == Fraction(5, 24)
            and posterior.mode() == Fraction(2, 11) and posterior.var() == Fraction(19, 2880)
        ),
        "predictive equals scipy.stats.betabinom(10, 5, 19) to 1e-12": bool(
            np.allclose(bayes, stats.betabinom.pmf(k, 10, 5, 19), rtol=1e-12, atol=0)
        ),
        "Bayesian predictive has the heavier tail: P(x >= 6) above the plug-in's": bool(
            bayes[6:].sum() > plugin[6:].sum()
        ),
        "black swan: MLE 0, Laplace 1/5 after 0 heads in 3 (T2)": (
            swan_rows[0]["mle"] == 0.0 and abs(swan_rows[0]["laplace_add_one"] - 0.2) < 1e-15
        ),
        "multinomial MLE gives some test documents probability zero under every class, add-one none": (
            swan_documents["mle"] > 0 and swan_documents["add_one"] == 0
        ),
        (f"DCM log-loss {dcm['log_loss']:.3f} at least {LOG_LOSS_MARGIN:g} below the multinomial naive Bayes "
         f"{multinomial['log_loss']:.3f}"): dcm["log_loss"] <= multinomial["log_loss"] - LOG_LOSS_MARGIN,
        (f"DCM accuracy {dcm['accuracy']:.3f} at least {ACCURACY_MARGIN:g} above the multinomial naive Bayes "
         f"{multinomial['accuracy']:.3f}"): dcm["accuracy"] >= multinomial["accuracy"] + ACCURACY_MARGIN,
        "fitted α_0 within 25% of the true α_0 in every class": all(
            abs(row["fitted_alpha0"] / row["true_alpha0"] - 1) < 0.25 for row in concentration_rows
        ),
        "the fixed point converged in every class": all(row["converged"] for row in concentration_rows),
    }  # fmt: skip
    return {name: bool(value) for name, value in checks.items()}


def _number_game_checks(rows):
    by = {(row["prior"], row["D"]): row["p_pow2"] for row in rows}
    return {
        "number game: p(pow2 | {16}) = 25/28, p(pow2 | {16, 8, 2, 64}) = 390625/390706 (T4)": bool(
            abs(by["uniform", "[16]"] - 25 / 28) < 1e-12
            and abs(by["uniform", "[16, 8, 2, 64]"] - 390625 / 390706) < 1e-12
        ),
        "number game: the data overwhelm a 0.99 prior on even (390625/398644), and 6 rules out pow2": bool(
            abs(by["even 0.99", "[16, 8, 2, 64]"] - 390625 / 398644) < 1e-12 and by["uniform", "[16, 6]"] == 0.0
        ),
    }


def _figure_beta_binomial(prior, posterior, predictive):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 3.8), layout="constrained")
    left, right = fig.subplots(1, 2)
    theta = np.linspace(0.0005, 0.9995, 999)
    left.plot(theta, stats.beta(float(prior.a), float(prior.b)).pdf(theta), color="tab:red", label="prior Beta(2, 2)")
    likelihood = stats.beta(HEADS + 1, TAILS + 1).pdf(theta)  # θ^3 (1 − θ)^17, normalised
    left.plot(theta, likelihood, color="black", linestyle=":", label="likelihood (normalised)")
    left.plot(theta, posterior.to_scipy().pdf(theta), color="tab:blue", linestyle="--", label="posterior Beta(5, 19)")
    left.set_xlabel("θ")
    left.set_ylabel("density")
    left.legend(frameon=False)
    left.set_title("prior, likelihood, posterior")
    k = np.array([row["heads"] for row in predictive])
    right.bar(k - 0.2, [row["beta_binomial"] for row in predictive], width=0.4, color="tab:blue",
              label="Bayesian Bb(x | 5, 19, 10)")  # fmt: skip
    right.bar(k + 0.2, [row["plugin_map"] for row in predictive], width=0.4, color="tab:grey",
              label="plug-in Bin(x | 10, θ_MAP)")  # fmt: skip
    right.set_xlabel("heads in 10 future tosses")
    right.set_ylabel("probability")
    right.legend(frameon=False)
    right.set_title("posterior predictive")
    return fig


def _figure_corpus(rows):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 3.6), layout="constrained")
    left, right = fig.subplots(1, 2)
    names = [row["model"].split(" (")[0] for row in rows]
    positions = np.arange(len(rows))
    left.barh(positions, [row["accuracy"] for row in rows], color="tab:blue")
    left.set_yticks(positions, names, fontsize=8)
    left.set_xlabel("accuracy")
    right.barh(positions, [row["log_loss"] for row in rows], color="tab:red")
    right.set_yticks(positions, [])
    right.set_xlabel("log-loss (nats)")
    fig.suptitle("Bursty simulated corpus: multinomial naive Bayes against the DCM")
    return fig
