"""
Which groups are active? Posterior inclusion under the group spike-and-slab prior
=================================================================================

The group spike-and-slab prior of Hernández-Lobato, Hernández-Lobato & Dupont switches whole groups of regression
coefficients on or off: an inactive group is exactly zero, an active one is drawn from the slab (:doc:`/spike_slab`,
eq. 3–4). Its posterior gives every group an inclusion probability P(z_g = 1 | y, X), computed by expectation
propagation in :class:`~hdbayes.GroupSpikeSlabRegression` (eq. 20) and by collapsed Gibbs sampling in
:class:`~hdbayes.GroupSpikeSlabGibbs`.

The signal is the block-sparse one of the paper's reconstruction experiment: 512 coefficients in 128 groups of
4, of which 10 groups are active, measured by unit-norm random rows with noise 0.005. With 60 measurements the
posterior is sure which groups are active; with 40 it is not, and EP does not converge there, so the sampler
gives the probabilities.
"""

import matplotlib.pyplot as plt
import numpy as np

from hdbayes import GroupSpikeSlabGibbs, GroupSpikeSlabRegression
from hdbayes.datasets import simulate_block_sparse

data = simulate_block_sparse(n_samples=60, n_features=512, group_size=4, n_active_groups=10, noise_std=0.005,
                             random_state=0)  # fmt: skip
prior = dict(groups=4, prior_inclusion=10 / 128, slab_variance=1.0, noise_variance=0.005**2)
active = data.active_groups
inactive = np.setdiff1d(np.arange(128), active)

fits = {
    "60 measurements, EP (GroupSpikeSlabRegression)":
        GroupSpikeSlabRegression(**prior).fit(data.X, data.y),
    "40 measurements, collapsed Gibbs (GroupSpikeSlabGibbs, 2000 sweeps)":
        GroupSpikeSlabGibbs(**prior, n_iter=2000, burn_in=500, random_state=0).fit(data.X[:40], data.y[:40]),
}  # fmt: skip

fig, axes = plt.subplots(2, 1, figsize=(10, 5.5), sharex=True, sharey=True)
for ax, (name, model) in zip(axes, fits.items()):
    probability = model.group_inclusion_probabilities_
    error = np.linalg.norm(model.coef_ - data.coef) / np.linalg.norm(data.coef)
    print(f"{name}\n  active groups {active.tolist()}: P(z_g = 1) {np.round(probability[active], 2).tolist()}\n"
          f"  largest among the 118 inactive groups {probability[inactive].max():.2g} (group "
          f"{inactive[np.argmax(probability[inactive])]}), expected number of active groups {probability.sum():.2f}, "
          f"relative error of the posterior mean {error:.3f}")  # fmt: skip
    for groups, color, label in ((inactive, "0.55", "inactive groups"), (active, "tab:red", "truly active groups")):
        markers, stems, _ = ax.stem(groups, probability[groups], basefmt=" ", label=label)
        plt.setp(markers, color=color, markersize=4)
        plt.setp(stems, color=color, linewidth=1.2)
    ax.axhline(0.5, color="0.7", linestyle=":", linewidth=1)
    ax.set_ylim(-0.03, 1.05)
    ax.set_ylabel("P(z_g = 1 | y, X)")
    ax.set_title(name, fontsize=10)
axes[0].legend(loc="center right", fontsize="small")
axes[1].set_xlabel("group g (features 4g … 4g + 3)")
axes[1].set_xlim(-1, 128)
fig.suptitle("Group inclusion probabilities: 10 of 128 groups active, 512 coefficients")
fig.tight_layout()
plt.show()

# %%
# With 60 measurements (top) every truly active group has inclusion probability 1.00 and no inactive group
# reaches 1e-6: the support is found, and the posterior mean reconstructs the signal with a relative error of
# 0.026. With 40 measurements (bottom) the data cannot tell the groups apart: two active groups are nearly certain
# (0.96 and 0.99), the other eight spread between 0.03 and 0.65, and inactive groups reach 0.41, while the
# expected number of active groups (10.7) stays near the prior's 10. The posterior mean is then a blend of many
# supports, with an error of 0.63. This posterior has several modes, and the probabilities of the uncertain groups
# differ by up to about 0.3 between chains of this length (``random_state`` 0–3; ``n_chains`` runs several).
# Averaged over ten signals, the reconstruction switches from failure to success between 50 and 80 measurements
# (``hdbayes reproduce group-sparse-reconstruction``; :doc:`/spike_slab`).
