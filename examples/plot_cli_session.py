"""
A command-line session: ``hdbayes classify`` on CSV files
=========================================================

The ``hdbayes`` command fits a model on a training CSV file and writes the predicted class and the class
probabilities of every row of a test CSV file, without writing any Python. Here a small data set is simulated from
the naive Bayes model (1000 binary features, α = 100, 200 training and 1000 test cases), written to ``train.csv`` and
``test.csv`` in a temporary folder, and classified twice, keeping the 10 features most correlated with the class:
once with the correction for that selection (the default) and once with ``--no-correct``. The script calls
:func:`hdbayes.cli.main` with the arguments a user would type after ``hdbayes``, then reads the predictions file
back and compares the predicted probabilities with the true classes of the test cases.
"""

import contextlib
import shlex
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from hdbayes.cli import main
from hdbayes.datasets import simulate_naive_bayes
from hdbayes.metrics import calibration_table

data = simulate_naive_bayes(alpha=100.0, n_features=1000, n_samples=200, n_test=1000, random_state=0)
columns = [f"gene{j}" for j in range(data.X.shape[1])]

fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.5))
left.plot([0, 1], [0, 1], color="0.6", linestyle="--", label="perfect calibration")
with tempfile.TemporaryDirectory() as tmp:
    folder = Path(tmp)
    for X, y, name in ((data.X, data.y, "train.csv"), (data.X_test, data.y_test, "test.csv")):
        table = pd.DataFrame(X, columns=columns)
        table.insert(0, "class", y)  # the test file may hold the class too: then the actual error is reported
        table.to_csv(folder / name, index=False)

    for extra, color in (([], "tab:blue"), (["--no-correct"], "tab:red")):
        name = "uncorrected" if extra else "corrected"
        args = ["classify", "--train", "train.csv", "--test", "test.csv", "--target", "class",
                "--model", "naive-bayes", "--n-features", "10", "--out", f"{name}.csv", *extra]  # fmt: skip
        print("$ hdbayes " + shlex.join(args))
        with contextlib.chdir(folder):  # run in the temporary folder: nothing is written outside it
            status = main(args)
        print(f"(exit status {status})\n")

        predictions = pd.read_csv(folder / f"{name}.csv")
        p1 = predictions["P(class=1)"].to_numpy()
        table = calibration_table(data.y_test, p1, n_bins=10)
        used = table.count >= 20  # tenths with enough test cases to estimate a frequency
        left.plot(table.mean_predicted[used], table.actual_fraction[used], "o-", color=color, label=name)
        for truth, offset in ((0, -0.15), (1, 0.15)):
            jitter = np.random.default_rng(truth).uniform(-0.06, 0.06, size=np.sum(data.y_test == truth))
            position = (0 if extra else 1) + offset + jitter
            right.scatter(position, p1[data.y_test == truth], s=4, alpha=0.4,
                          color="tab:green" if truth else "tab:purple",
                          label=f"true class {truth}" if not extra else None)  # fmt: skip
    print("first rows of corrected.csv:")
    print(pd.read_csv(folder / "corrected.csv").head(3).to_string(index=False))

left.set_xlabel("P(class=1) in the predictions file (mean in each tenth)")
left.set_ylabel("observed frequency of class 1")
left.set_title("calibration on the 1000 rows of test.csv")
left.set_xlim(0, 1)
left.set_ylim(0, 1)
left.legend(loc="upper left", fontsize="small")
right.set_xticks([0, 1], ["--no-correct", "corrected (default)"])
right.set_ylabel("P(class=1) in the predictions file")
right.set_ylim(0, 1.12)
right.set_yticks(np.linspace(0, 1, 6))
right.set_title("predicted probability by true class")
right.legend(loc="upper center", fontsize="small", markerscale=3, ncol=2)
fig.tight_layout()
plt.show()

# %%
# Both runs keep the same 10 features and make nearly the same decisions (test error 0.337 corrected, 0.335
# uncorrected), but only the corrected probabilities can be taken at face value: it expects an error rate of
# 0.326, the uncorrected fit 0.232. The uncorrected fit pushes many test cases towards 0 or 1, and its
# calibration curve is flatter than the diagonal; its average minus log probability is 0.652 against 0.604.
# The options of ``hdbayes classify`` (``hdbayes classify --help``, :doc:`/getting_started`) are estimator
# parameters, so the same fit in Python is ``BiasCorrectedNaiveBayes(n_features_to_select=10)``.
