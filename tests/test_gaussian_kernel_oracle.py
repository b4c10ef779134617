"""Oracle of the Gaussian classifier's chain kernels (issue 28): the draws on a fixed seed, recorded before the
kernels were rewritten to compile faster (plain loops instead of numpy's array methods and slice assignment).

Recorded with numba 0.68 on x86-64, where the rewritten kernels reproduce every saved array bit for bit. The
comparison allows a relative 1e-9 for another CPU's ``exp``/``log`` (a chain whose Metropolis decisions all agree
stays within it; one that flips a decision would differ by far more and fail).
"""

import numpy as np
import pytest

from hdbayes import BiasCorrectedGaussianClassifier
from hdbayes.datasets import simulate_gaussian
from hdbayes.selection_bias import PerClassVariance

MCMC = dict(n_iter=60, burn_in=20, thin=2, random_state=3)
VARIANTS = {
    "g-shared": dict(n_features_to_select=5),
    "g-uncorrected": dict(n_features_to_select=5, correct=False),
    "g-perfeature": dict(n_features_to_select=5, variant="per-feature"),
    "g-perclass": dict(n_features_to_select=5, variant="per-class"),
    "g-perclass-fixed": dict(n_features_to_select=5, variant=PerClassVariance(alpha2_x=3.0, class_scale="plug-in")),
    "g-samples": dict(n_features_to_select=5, predictive="samples", n_chains=2),
}
# (first, middle, last) of each flattened array: predict_proba on the test rows, the trace's draws
ORACLE = {
    "g-shared": {
        "proba": (0.25879857979833043, 0.23846058005921303, 0.29759308902279374),
        "posterior/mu": (0.027852057801992847, -0.04194634080558136, -0.002460826263957697),
        "posterior/tau_x": (1.0339822803716978, 0.94516814751155, 0.23611953039588154),
        "posterior/nu": (-0.10790102318261385, -0.23404824756607093, -0.07274683427862265),
        "posterior/log_tau_mu": (2.9922030333613456, 4.001670430033367, 4.347703388925655),
        "warmup/log_tau_nu": (2.819545117366818, 3.3607326546802296, 4.362114719964434),
        "sample_stats/acceptance_rate": (0.4, 0.5, 0.5),
    },
    "g-uncorrected": {
        "proba": (0.41915446473276835, 0.24745770880038412, 0.46751709270914116),
        "posterior/mu": (0.5618377397802417, 1.004041810930147, 0.040341899279466895),
        "posterior/tau_x": (1.4164518185515018, 1.7215963627308197, 0.3081401702542906),
        "posterior/nu": (-0.20050174716479335, 0.14828170243110028, -0.15133050640943177),
        "posterior/log_tau_mu": (0.5306255975145101, 1.1879800687644202, 1.6732916349670826),
        "warmup/log_tau_nu": (3.6627629420465344, 4.10748029952178, 3.407999677278646),
        "sample_stats/acceptance_rate": (0.0, 0.0, 0.0),
    },
    "g-perfeature": {
        "proba": (0.37079119266235944, 0.23213305565291947, 0.3349650441265065),
        "posterior/mu": (0.8121109737634779, 0.7236504279373345, -0.41609933603466887),
        "posterior/w_x": (0.651426527773218, 0.6172363035553382, 2.614209727318978),
        "posterior/w_mu": (0.18883568261036118, 0.12374690325582108, 0.051937554204504875),
        "posterior/nu": (-0.16553660462434694, 0.10164604241309652, -0.2916509168600257),
        "posterior/log_s_mu": (-4.842502333031189, -4.390732514382871, -4.633623362508572),
        "posterior/log_s_x": (-0.1381496364923891, 0.03218980237454795, -0.10020646628556752),
        "warmup/log_tau_nu": (3.6279853512068834, 4.6168243721261435, 5.821521468757917),
        "sample_stats/acceptance_rate": (0.5, 0.6, 0.4),
    },
    "g-perclass": {
        "proba": (0.30451814257592325, 0.24248239500078334, 0.28291710499947276),
        "posterior/mu": (0.5459230121781408, 0.681650551816368, -0.17103728865489323),
        "posterior/w_x": (0.8054645809593424, 0.8924000574956786, 1.7936206597185318),
        "posterior/v": (0.7429281127680439, 0.9289280856533492, 1.7936206597185318),
        "posterior/w_mu": (0.22754714293030798, 0.16157397826146577, 0.01616170980129748),
        "posterior/nu": (-0.16756234632783812, 0.014786945527073572, -0.15458239064427687),
        "posterior/log_s_mu": (-4.523848755544818, -3.437315257245365, -5.733853879254671),
        "posterior/log_s_x": (0.011112933862735097, 0.3688346824233627, 0.13516014399054732),
        "posterior/alpha2_x": (128.0, 64.0, np.inf),
        "warmup/log_tau_nu": (2.3119111060401045, 3.812958072204233, 5.513302784955457),
        "sample_stats/acceptance_rate": (0.65, 0.45, 0.35),
    },
    "g-perclass-fixed": {
        "proba": (0.3393858717091375, 0.2574393574330165, 0.25706826037739056),
        "posterior/mu": (0.2580342494563103, -0.06344105957489028, 0.16755669297522485),
        "posterior/w_x": (2.0097700762740964, 1.1044003273771088, 5.444462808832999),
        "posterior/v": (0.6942573986378554, 0.6020823574544797, 1.0789727167345804),
        "posterior/w_mu": (0.05911965877634041, 0.032436240263912466, 0.02546473051903715),
        "posterior/nu": (-0.022590509117098707, -0.2938443261439536, -0.10096590906670336),
        "posterior/log_s_mu": (-3.71906286793076, -4.787522315153788, -4.5907986712826),
        "posterior/log_s_x": (-0.07639855743618598, -0.42434148592231846, -0.20625038225023976),
        "warmup/log_tau_nu": (3.8151489945649306, 4.3995946750349235, 3.9888824324173773),
        "sample_stats/acceptance_rate": (0.5, 0.55, 0.35),
    },
    "g-samples": {
        "proba": (0.24974360627197748, 0.24251835181168765, 0.2868063983611346),
        "posterior/mu": (0.027852057801992847, 0.5528377003438458, -0.3276556035582221),
        "posterior/tau_x": (1.0339822803716978, 1.3345771468237653, 0.45681948168329867),
        "posterior/nu": (-0.10790102318261385, -0.05234017284947214, -0.17647082875715286),
        "posterior/log_tau_mu": (2.9922030333613456, 2.7821565172227585, 3.5960523640804323),
        "warmup/log_tau_nu": (2.819545117366818, 3.6678316945758183, 4.863974534229487),
        "sample_stats/acceptance_rate": (0.4, 0.5, 0.6),
    },
}


@pytest.fixture(scope="module")
def data():
    return simulate_gaussian(n_features=60, n_samples=30, n_test=10, random_state=0)


@pytest.mark.parametrize("variant", VARIANTS)
def test_draws_match_the_recorded_oracle(data, variant):
    model = BiasCorrectedGaussianClassifier(**VARIANTS[variant], **MCMC).fit(data.X, data.y)
    for name, expected in ORACLE[variant].items():
        if name == "proba":
            values = model.predict_proba(data.X_test)
        else:
            group, key = name.split("/")
            values = getattr(model.trace_, group)[key]
        values = np.asarray(values).ravel()
        picked = [values[0], values[values.size // 2], values[-1]]
        np.testing.assert_allclose(picked, expected, rtol=1e-9, atol=0, err_msg=f"{variant}: {name}")
