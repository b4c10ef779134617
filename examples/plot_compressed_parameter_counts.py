"""
How many parameters does compression leave? Patterns against groups as the order grows
=======================================================================================

A logistic model with all interactions up to order O has a coefficient for every pattern, and the number of
possible patterns grows exponentially with O. Only the patterns that some training case expresses enter the
likelihood, and patterns expressed by exactly the same training cases enter it only through the sum of their
coefficients: :class:`~hdbayes.CompressedSequenceModel` and :class:`~hdbayes.CompressedInteractionClassifier`
sample one compressed parameter per such group (Li & Neal; :doc:`/interactions`). The counts need no MCMC:
:func:`hdbayes.interactions.count_parameters` groups the patterns of the training inputs.

Two simulated training sets: 500 binary histories of 20 symbols from the hidden Markov model of the paper
(sequence prediction, suffix patterns of length ≤ O), and 200 cases with 7 features of 3 values each
(classification, patterns over any ≤ O of the features). A fitted model reports the same counts in
``n_original_`` and ``n_compressed_`` and samples ``n_compressed_`` parameters per coefficient set.
"""

from math import comb

import matplotlib.pyplot as plt
import numpy as np

from hdbayes import CompressedSequenceModel
from hdbayes.datasets import simulate_cauchy_classification, simulate_hmm
from hdbayes.interactions import count_parameters

hmm = simulate_hmm(n_samples=500, n_test=1, random_state=0)
cases = simulate_cauchy_classification(n_samples=200, n_test=1, random_state=0)
n_features, n_values = cases.X.shape[1], 3

settings = {
    "sequences: 500 HMM histories": dict(
        X=hmm.X, kind="sequence", orders=np.arange(1, 21),
        possible=lambda order: 2 ** (order + 1) - 1,  # suffixes of length 0..O over 2 symbols
    ),
    "classification: 200 cases, p = 7, 3 values": dict(
        X=cases.X, kind="classification", orders=np.arange(1, n_features + 1),
        possible=lambda order: sum(comb(n_features, o) * n_values**o for o in range(order + 1)),
    ),
}  # fmt: skip

fig, axes = plt.subplots(1, 2, figsize=(10, 4))
counts = {}
for ax, (name, setting) in zip(axes, settings.items()):
    orders = setting["orders"]
    rows = np.array([count_parameters(setting["X"], order, kind=setting["kind"]) for order in orders])
    possible = [setting["possible"](order) for order in orders]
    counts[name] = rows
    print(f"{name} (all possible patterns at O = {orders[-1]}: {possible[-1]})")
    for order, (original, compressed) in zip(orders, rows):
        print(f"  O = {order:2d}: {original:5d} expressed patterns, {compressed:4d} groups, "
              f"ratio {compressed / original:.3f}")  # fmt: skip
    ax.plot(orders, possible, color="0.6", linestyle="--", label="all possible patterns")
    ax.plot(orders, rows[:, 0], "o-", color="tab:red", markersize=4, label="expressed patterns (original)")
    ax.plot(orders, rows[:, 1], "s-", color="tab:blue", markersize=4, label="groups (compressed)")
    ax.annotate(f"groups / patterns {rows[-1, 1] / rows[-1, 0]:.3f}", (orders[-1], rows[-1, 1]), xytext=(0, -14),
                textcoords="offset points", ha="right", fontsize="small", color="tab:blue")
    ax.set_yscale("log")
    ax.set_xlabel("interaction order O")
    ax.set_xticks(orders[orders % 2 == 0] if orders.size > 10 else orders)
    ax.set_title(name, fontsize=10)
axes[0].set_ylabel("parameters per class")
axes[0].legend(loc="upper left", fontsize="small")
fig.suptitle("Compressing interaction parameters: original against compressed counts")
fig.tight_layout()
plt.show()

# %%
# A fitted model carries the same counts. At O = 20 its MCMC runs over the compressed parameters only
# (``trace_["s"]`` has one column per group), and ``grouping_.order_counts`` says how many patterns of each order
# every group stands for:
model = CompressedSequenceModel(order=20, n_iter=200, burn_in=100, random_state=0).fit(hmm.X, hmm.y)
print(f"n_original_ = {model.n_original_}, n_compressed_ = {model.n_compressed_}, "
      f"trace_['s'] shape {model.trace_['s'].shape} (chain, draw, group, coefficient set)")
patterns_per_group = model.grouping_.order_counts.sum(axis=1)
print(f"patterns per group: median {np.median(patterns_per_group):g}, largest {patterns_per_group.max()}")

# %%
# For sequences (left) the possible patterns double with every order (2 097 151 at O = 20). The expressed ones
# grow by at most 500 per order, since each history expresses one suffix of each length (369 more from O = 19 to
# 20, 3516 in all). The groups grow ever more slowly (737 at O = 20, a ratio of 0.210; the paper's is 0.207):
# beyond some depth a history's longer suffixes are expressed by that history alone and join the group it already
# has. For classification (right) all patterns are expressed up to O = 3 and the groups stop growing at O = 5
# (3269), while the expressed patterns grow on to 8104 of the 16 384 possible at O = 7. Compression keeps the
# number of sampled parameters bounded by the training data whatever O is.
