"""Oracle of DCMClassifier's fixed-point kernel (issue 28): the fit on fixed data, recorded before the kernel was
split by the kind of its tables (integer counts compile only the finite-sum branch, real counts only the
Gamma-function branch).

Recorded with numba 0.68 on x86-64, where the split kernel reproduces every value bit for bit; the comparison
allows a relative 1e-9 for another CPU's ``log``/``exp``.
"""

import numpy as np
import pytest

from hdbayes import DCMClassifier
from hdbayes.datasets import simulate_gaussian

# (first, middle, last) of predict_proba on the test rows and of the fitted concentrations, flattened
ORACLE = {
    "integer": {
        "proba": (3.787611656154936e-06, 0.5869679827960653, 0.5488645244467587),
        "concentration": (0.5815031043477252, 0.4904838913142598, 0.5197674815582121),
    },
    "real": {"proba": (2.3433360669285954e-07, 0.5200013959681907, 0.3804386821269028)},
}


@pytest.mark.parametrize("kind", ORACLE)
def test_fit_matches_the_recorded_oracle(kind):
    data = simulate_gaussian(n_features=60, n_samples=30, n_test=10, random_state=0)
    X, X_test = np.exp(data.X), np.exp(data.X_test)
    if kind == "integer":
        X, X_test = np.round(X).astype(int), np.round(X_test).astype(int)
    model = DCMClassifier().fit(X, data.y)
    values = {"proba": model.predict_proba(X_test), "concentration": model.concentration_}
    for name, expected in ORACLE[kind].items():
        flat = np.asarray(values[name], dtype=np.float64).ravel()
        picked = [flat[0], flat[flat.size // 2], flat[-1]]
        np.testing.assert_allclose(picked, expected, rtol=1e-9, atol=0, err_msg=f"{kind}: {name}")
