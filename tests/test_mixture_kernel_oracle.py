"""Oracle of the mixture model's chain kernels (issue 28): the draws on a fixed seed, recorded before the kernels
were rewritten to compile faster (one signature per kernel, plain loops instead of numpy's array methods).

Recorded with numba 0.68 on x86-64, where the rewritten kernels reproduce every saved array bit for bit; the
comparison allows a relative 1e-9 for another CPU's ``exp``/``lgamma``.
"""

import numpy as np
import pytest

from hdbayes import BiasCorrectedMixture
from hdbayes.datasets import simulate_gaussian

MCMC = dict(n_features_to_select=6, binarize=None, n_iter=60, burn_in=20, thin=2, random_state=3)
VARIANTS = {"m": {}, "m-simpson": dict(theta_rule="simpson"), "m-uncorrected": dict(correct=False)}
# (first, middle, last) of each flattened array: predict_proba on the test rows, the trace's draws
ORACLE = {
    "m": {
        "proba": (0.430933388015622, 0.4336673936465711, 0.5737185465509378),
        "posterior/theta": (0.7134364573679386, 0.3083429424395751, 0.4896808566427129),
        "posterior/alpha": (11.448758625726065, 27.986340673076636, 7.556844300509831),
        "posterior/alpha0": (7.556844300509831, 7.556844300509831, 7.556844300509831),
        "warmup/log_alpha0": (0.956732897316179, 1.5739497065128636, 2.863561046946432),
        "posterior/ones": (5.0, 18.0, 1.0),
        "posterior/sizes": (12.0, 30.0, 2.0),
    },
    "m-simpson": {
        "proba": (0.4106712990884068, 0.40814122598837493, 0.5944599515120229),
        "posterior/theta": (0.29896012953506323, 0.7096643603947226, 0.510310141029088),
        "posterior/alpha": (279.59687265336805, 279.59687265336805, 48.56723612449512),
        "posterior/alpha0": (7.556844300509831, 98.49204321824377, 98.49204321824377),
        "warmup/log_alpha0": (0.956732897316179, 1.5739497065128636, 0.956732897316179),
        "posterior/ones": (2.0, 18.0, 15.0),
        "posterior/sizes": (3.0, 30.0, 27.0),
    },
    "m-uncorrected": {
        "proba": (0.5445930436147204, 0.45701153379022075, 0.7930308913104557),
        "posterior/theta": (0.4326208499853931, 0.7094798869891947, 0.35344318879160463),
        "posterior/alpha": (279.59687265336805, 4.825670585153344, 4.825670585153344),
        "posterior/alpha0": (4.825670585153344, 4.825670585153344, 2.603177716270055),
        "warmup/log_alpha0": (0.956732897316179, 2.863561046946432, 3.3317165580415167),
        "posterior/ones": (11.0, 7.0, 3.0),
        "posterior/sizes": (16.0, 19.0, 10.0),
    },
}


@pytest.fixture(scope="module")
def data():
    """Binary features (above the training medians) of a small Gaussian simulation, classes 0–1 against 2–4."""
    simulation = simulate_gaussian(n_features=60, n_samples=30, n_test=10, random_state=0)
    median = np.median(simulation.X, axis=0)
    return (
        (simulation.X > median).astype(int),
        (simulation.y >= 2).astype(int),
        (simulation.X_test > median).astype(int),
    )


@pytest.mark.parametrize("variant", VARIANTS)
def test_draws_match_the_recorded_oracle(data, variant):
    X, y, X_test = data
    model = BiasCorrectedMixture(**VARIANTS[variant], **MCMC).fit(X, y)
    for name, expected in ORACLE[variant].items():
        if name == "proba":
            values = model.predict_proba(X_test)
        else:
            group, key = name.split("/")
            values = getattr(model.trace_, group)[key]
        values = np.asarray(values, dtype=np.float64).ravel()
        picked = [values[0], values[values.size // 2], values[-1]]
        np.testing.assert_allclose(picked, expected, rtol=1e-9, atol=0, err_msg=f"{variant}: {name}")
