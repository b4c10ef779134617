"""
MCMC traces of the Gaussian classifier in ArviZ
===============================================

:class:`~hdbayes.BiasCorrectedGaussianClassifier` (Li 2009) samples its hyperparameters by MCMC. The fitted
``trace_`` converts to an :class:`arviz.InferenceData`, so ArviZ's summaries and plots apply directly. Here three
classes and 300 continuous features are simulated from the model, the 10 features with the largest F statistic
are kept, and two short chains are run.
"""

import arviz as az
import matplotlib.pyplot as plt

from hdbayes import BiasCorrectedGaussianClassifier
from hdbayes.datasets import simulate_gaussian

data = simulate_gaussian(n_classes=3, n_features=300, n_samples=60, n_test=500, random_state=0)
model = BiasCorrectedGaussianClassifier(
    n_features_to_select=10, n_iter=1000, burn_in=200, thin=4, n_chains=2, random_state=0, progress=False
)
model.fit(data.X, data.y)
idata = model.trace_.to_inference_data()
print(idata.posterior)

# %%
# The scalar hyperparameters: the trace of each chain (right) and its density (left). Overlapping chains and
# densities are the first sign that the sampler has mixed.
scalars = [name for name, values in idata.posterior.data_vars.items() if values.ndim == 2]
az.plot_trace(idata, var_names=scalars, compact=True, figsize=(9, 2 * len(scalars)))
plt.tight_layout()
plt.show()

# %%
# The numbers behind the picture: effective sample sizes and R-hat from ArviZ.
print(az.summary(idata, var_names=scalars, kind="diagnostics"))
print(f"test accuracy {(model.predict(data.X_test) == data.y_test).mean():.3f}")
