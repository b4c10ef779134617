"""
Honest cross-validation with ``cross_val_predict``
==================================================

Feature selection is part of the fit of every hdbayes estimator: ``fit`` receives all p candidate features and
keeps the k most correlated with the class. Cross-validation of the estimator therefore repeats the selection
inside each fold, as it must. Selecting the features once on all the data and then cross-validating only the
fit on them is the classic mistake: the held-out cases took part in the selection, and the estimated error is
too low.

Here 2000 binary features are simulated with large α (nearly all of them useless). We compare three estimates
of the error rate of naive Bayes on the 10 selected features: ten-fold cross-validation done honestly, the same
after selecting once on all cases, and the error on 4000 new cases from the same model.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import StratifiedKFold, cross_val_predict

from hdbayes import BiasCorrectedNaiveBayes
from hdbayes.datasets import simulate_naive_bayes
from hdbayes.metrics import average_minus_log_probability, error_rate

data = simulate_naive_bayes(alpha=1000.0, n_features=2000, n_samples=100, n_test=4000, random_state=1)
cv = StratifiedKFold(n_splits=10, shuffle=True, random_state=0)
model = BiasCorrectedNaiveBayes(n_features_to_select=10, random_state=0)  # ties at the k-th broken at random

# honest: selection inside each fold's fit
honest = cross_val_predict(model, data.X, data.y, cv=cv, method="predict_proba")

# the mistake: select on all 100 cases, then cross-validate the fit on the 10 kept features
kept = model.fit(data.X, data.y).selected_features_
leaky = cross_val_predict(BiasCorrectedNaiveBayes(), data.X[:, kept], data.y, cv=cv,
                          method="predict_proba")

# the truth: the model fitted on all 100 cases, tested on new ones
test = model.predict_proba(data.X_test)

predictions = {
    "10-fold CV,\nselection inside": (data.y, honest),
    "10-fold CV after\nselecting on all": (data.y, leaky),
    "4000 new cases": (data.y_test, test),
}
estimates = {}
for name, (y, proba) in predictions.items():
    estimates[name] = error_rate(y, proba), average_minus_log_probability(y, proba)
    print(f"{name.replace(chr(10), ' '):35s} error rate {estimates[name][0]:.3f}, "
          f"minus log probability {estimates[name][1]:.3f}")

fig, ax = plt.subplots(figsize=(6, 4))
colors = ["tab:blue", "tab:red", "0.4"]
ax.bar(range(3), [err for err, _ in estimates.values()], color=colors)
ax.axhline(0.5, color="0.6", linestyle="--", linewidth=1)
ax.text(2.45, 0.505, "guessing", ha="right", va="bottom", fontsize="small", color="0.4")
ax.set_xticks(range(3), list(estimates))
ax.set_ylabel("error rate")
ax.set_ylim(0, 0.6)
ax.set_title("Selecting before cross-validating hides the error")
fig.tight_layout()
plt.show()

# %%
# Only the first estimate can be computed without new data and is close to the truth; passing the estimator,
# not a matrix of pre-selected features, to :func:`sklearn.model_selection.cross_val_predict` is all it takes.
# The selected features of the final fit are in ``model.selected_features_``:
print(np.sort(kept))
