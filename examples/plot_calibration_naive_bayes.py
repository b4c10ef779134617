"""
Calibration of naive Bayes before and after the correction
==========================================================

Keep the 10 features most correlated with the class out of 2000 simulated binary features, fit naive Bayes to
them, and compare the predicted probabilities with what happens on 4000 test cases. The ordinary fit
(``correct=False``) forgets that 1990 features were discarded for being weak, and its probabilities are too
extreme; :class:`~hdbayes.BiasCorrectedNaiveBayes` also conditions on the discarded features' correlations being
below the threshold γ (Li, Zhang & Neal 2008), and its probabilities match the observed frequencies.
"""

import matplotlib.pyplot as plt
import numpy as np

from hdbayes import BiasCorrectedNaiveBayes
from hdbayes.datasets import simulate_naive_bayes
from hdbayes.metrics import calibration_table, error_rate, expected_error_rate

data = simulate_naive_bayes(n_features=2000, n_samples=200, n_test=4000, random_state=0)

fig, ax = plt.subplots(figsize=(5.5, 5))
ax.plot([0, 1], [0, 1], color="0.6", linestyle="--", label="perfect calibration")
for correct, color in ((False, "tab:red"), (True, "tab:blue")):
    model = BiasCorrectedNaiveBayes(n_features_to_select=10, correct=correct, random_state=0)
    model.fit(data.X, data.y)
    p1 = model.predict_proba(data.X_test)[:, 1]
    proba = np.column_stack([1 - p1, p1])
    table = calibration_table(data.y_test, p1, n_bins=10)
    used = table.count >= 20  # categories with enough cases to estimate a frequency
    name = "corrected" if correct else "uncorrected"
    actual, expected = error_rate(data.y_test, proba), expected_error_rate(proba)
    print(f"{name:11s}  test error {actual:.3f}, expected by the model {expected:.3f}")
    ax.plot(table.mean_predicted[used], table.actual_fraction[used], "o-", color=color,
            label=f"{name}: expects {expected:.0%} errors, makes {actual:.0%}")

ax.set_xlabel("predicted probability of class 1 (mean in each tenth)")
ax.set_ylabel("observed frequency of class 1")
ax.set_title("k = 10 of p = 2000 features, 4000 test cases")
ax.legend(loc="upper left", fontsize="small")
ax.set_xlim(0, 1)
ax.set_ylim(0, 1)
fig.tight_layout()
plt.show()

# %%
# Both fits rank the test cases the same way, so their error rates agree; only the corrected one knows how
# often it will be wrong. The correction costs one integral over the hyperparameter α and one over θ per
# feature, independent of the 1990 discarded features (see :doc:`/naive_bayes`).
