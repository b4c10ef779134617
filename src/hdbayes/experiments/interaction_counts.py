"""Experiment: how much compressing parameters saves (Li & Neal §3.6; thesis §3.4.3, §3.5.2).

Two parts, no MCMC — only counts of parameters:

* **Sequences** (thesis §3.4.3): histories from the hidden Markov model with 8 hidden
  states; for every order O the number of interaction patterns expressed by the 500
  training histories (intercept included) against the number of distinct expressions
  (superpatterns). The paper: the ratio reaches 0.207 at O = 20.
* **Classification** (thesis §3.5.2): N = 200 cases with p features uniform on {0..K−1}; three
  sweeps — K varied, p varied, O varied. The paper: the compressed count falls with K,
  both counts grow very quickly with p with a falling ratio, and the compressed count
  stops growing with O (at O = 4 in its figure).

Counting times are in ``timing_sequence_counts.csv`` and ``timing_classification_counts.csv``
only, so that two runs with the same seed write identical results.
"""

from __future__ import annotations

import time

import numpy as np

from hdbayes.datasets import simulate_hmm
from hdbayes.experiments._report import Report, markdown_table
from hdbayes.experiments._runner import bar, summary_markdown
from hdbayes.experiments._runtime import split_timings
from hdbayes.interactions.patterns import count_parameters

__all__ = ["run"]

SEQUENCE_ORDERS = (1, 2, 3, 4, 5, 7, 10, 12, 15, 17, 20)
PAPER_RATIO_AT_20 = 0.207


def _classification_sweeps(full):
    """(name, p, K, O) settings of the three sweeps (the paper's fixed values are lost; ours are
    documented in the summary)."""
    settings = []
    for values in (2, 3, 4, 5, 6) if full else (2, 3, 4, 5):
        settings.append(("K varied", 7, values, 5))
    for p in (5, 6, 7, 8, 9, 10) if full else (5, 6, 7, 8):
        settings.append(("p varied", p, 3, 5))
    for order in range(1, 8):
        settings.append(("O varied", 7, 3, order))
    return settings


def run(full=False, random_state=0, progress=None, n_jobs=None):
    """Run the experiment.

    Parameters
    ----------
    full : bool, default=False
        Orders up to 20 for sequences and p up to 10 / K up to 6 for classification;
        otherwise orders up to 12 and p up to 8.
    random_state : int
    progress : bool or None
    n_jobs : int, optional
        Unused (counting is single-threaded); accepted for a uniform interface.

    Returns
    -------
    Report
    """
    hmm = simulate_hmm(n_samples=500, n_test=1, random_state=random_state)
    orders = [o for o in SEQUENCE_ORDERS if full or o <= 12]
    sequence_rows = []
    for order in bar(orders, desc="sequence orders", progress=progress):
        start = time.perf_counter()
        original, compressed = count_parameters(hmm.X, order, kind="sequence")
        sequence_rows.append(
            {"order": order, "original": int(original), "compressed": int(compressed),
             "ratio": compressed / original, "seconds": time.perf_counter() - start}
        )  # fmt: skip

    classification_rows = []
    for sweep, p, values, order in bar(_classification_sweeps(full), desc="classification", progress=progress):
        # one data set per (p, K), shared by all orders: the draw of the brute-force reference counts below
        X = np.random.default_rng(random_state).integers(0, values, size=(200, p))
        start = time.perf_counter()
        original, compressed = count_parameters(X, order, kind="classification")
        classification_rows.append(
            {"sweep": sweep, "p": p, "K": values, "order": order, "original": int(original),
             "compressed": int(compressed), "ratio": compressed / original,
             "seconds": time.perf_counter() - start}
        )  # fmt: skip

    report = Report(name="interaction-counts")
    report.timings["timing_sequence_counts"] = split_timings(sequence_rows, ["seconds"], ["order"])
    report.timings["timing_classification_counts"] = split_timings(
        classification_rows, ["seconds"], ["sweep", "p", "K", "order"]
    )
    report.tables["sequence_counts"] = sequence_rows
    report.tables["classification_counts"] = classification_rows
    report.checks = _checks(sequence_rows, classification_rows, full, random_state)
    report.figures = {
        "sequence_counts": _figure_sequences(sequence_rows),
        "classification_counts": _figure_classification(classification_rows),
    }
    report.summary = summary_markdown(
        "Interaction counts: original against compressed parameters",
        [
            f"Sequences: 500 training histories of the 8-state hidden Markov model (seed {random_state}); "
            "counts per class (the intercept included).",
            "",
            markdown_table(sequence_rows),
            f"The paper's ratio at order 20: {PAPER_RATIO_AT_20}.",
            "",
            "Classification: 200 cases, features uniform on {0..K−1}. The paper's fixed values of the sweeps "
            "are lost; here K varied at p = 7, O = 5; p varied at K = 3, O = 5; O varied at p = 7, K = 3.",
            "",
            markdown_table(classification_rows),
        ],
        report.checks,
        heading="Checks",
    )
    return report


#: Brute-force counts (every pattern enumerated) (original, compressed) for p = 7, K = 3, orders 1..7, seed 0.
REFERENCE_P7_K3 = [(22, 22), (211, 211), (1156, 1155), (3732, 3002), (6604, 3256), (7837, 3256), (8028, 3256)]


def _checks(sequence_rows, classification_rows, full, random_state):
    checks = {}
    if full:
        ratio = sequence_rows[-1]["ratio"]
        checks[f"sequence ratio at order 20 in [0.187, 0.227] (got {ratio:.3f})"] = bool(0.187 <= ratio <= 0.227)
    ratios = [row["ratio"] for row in sequence_rows]
    checks["sequence ratio never increases with the order"] = bool(np.all(np.diff(ratios) <= 1e-12))
    by_sweep = {}
    for row in classification_rows:
        by_sweep.setdefault(row["sweep"], []).append(row)
    compressed_by_k = [row["compressed"] for row in by_sweep["K varied"]]
    checks["compressed count falls as K grows beyond 3 (p = 7, O = 5)"] = bool(
        np.all(np.diff(compressed_by_k[1:]) <= 0)
    )
    ratio_by_p = [row["ratio"] for row in by_sweep["p varied"]]
    checks["ratio falls as p grows (K = 3, O = 5)"] = bool(np.all(np.diff(ratio_by_p) <= 1e-12))
    compressed_by_order = [row["compressed"] for row in by_sweep["O varied"]]
    checks["compressed count stops growing by order 6 (p = 7, K = 3)"] = bool(
        compressed_by_order[-1] == compressed_by_order[5]
    )
    if random_state == 0:
        counts = [(row["original"], row["compressed"]) for row in by_sweep["O varied"]]
        checks["p = 7, K = 3 counts equal the brute-force reference"] = counts == REFERENCE_P7_K3
    return checks


def _figure_sequences(rows):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 3.8), layout="constrained")
    left, right = fig.subplots(1, 2)
    orders = [r["order"] for r in rows]
    left.plot(orders, [r["original"] for r in rows], "o-", color="black", label="original")
    left.plot(orders, [r["compressed"] for r in rows], "o--", color="tab:blue", label="compressed")
    left.set_xlabel("order")
    left.set_ylabel("number of parameters (per class)")
    left.legend(frameon=False)
    right.plot(orders, [r["ratio"] for r in rows], "o-", color="black")
    right.axhline(PAPER_RATIO_AT_20, color="grey", linestyle=":", linewidth=0.8)
    right.set_xlabel("order")
    right.set_ylabel("compressed / original")
    fig.suptitle("Sequences from the hidden Markov model (dotted: the paper's 0.207 at order 20)")
    return fig


def _figure_classification(rows):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(12, 3.8), layout="constrained")
    for ax, (sweep, x_name) in zip(fig.subplots(1, 3), (("K varied", "K"), ("p varied", "p"), ("O varied", "order"))):
        chosen = [r for r in rows if r["sweep"] == sweep]
        xs = [r[x_name] for r in chosen]
        ax.plot(xs, [r["original"] for r in chosen], "o-", color="black", label="original")
        ax.plot(xs, [r["compressed"] for r in chosen], "o--", color="tab:blue", label="compressed")
        ax.set_yscale("log")
        ax.set_xlabel(x_name)
        ax.set_title(sweep, fontsize=10)
        ax.legend(frameon=False, fontsize=8)
    fig.axes[0].set_ylabel("number of parameters")
    fig.suptitle("Classification with 200 cases: original against compressed parameters")
    return fig
