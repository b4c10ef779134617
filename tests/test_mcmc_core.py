"""The inference core tested directly: the slice sampler, the schedule, the chain runner,
the trace and the numba cache."""

import math
import os
import subprocess
import sys
import textwrap
import warnings

import joblib
import numba
import numpy as np
import pytest
from scipy import stats

from hdbayes.exceptions import InputValueError
from hdbayes.mcmc import ChainDraws, Schedule, Trace, chain_seeds, run_chains, slice_sample

# -- the slice sampler against known densities (Neal 2003) ---------------------------------


@numba.njit
def _normal_log_density(x, args):
    mean, sd = args
    return -0.5 * ((x - mean) / sd) ** 2


@numba.njit
def _gamma_log_density(x, args):
    (shape,) = args
    return (shape - 1.0) * math.log(x) - x


@numba.njit
def _bimodal_log_density(x, args):
    # 0.3 N(−4, 1) + 0.7 N(3, 0.5²): two modes 7 apart, separated by a deep valley
    a = math.log(0.3) - 0.5 * (x + 4.0) ** 2
    b = math.log(0.7) - math.log(0.5) - 0.5 * ((x - 3.0) / 0.5) ** 2
    m = max(a, b)
    return m + math.log(math.exp(a - m) + math.exp(b - m))


@numba.njit
def _draw_chain(log_density, args, x0, n, width, max_steps, lower, upper, rng):
    out = np.empty(n)
    x = x0
    current = log_density(x, args)
    for i in range(n):
        x, current = slice_sample(x, current, log_density, args, width, max_steps, lower, upper, rng)
        out[i] = x
    return out


def _thinned_draws(log_density, args, x0, lower, upper, seed, width=1.0, n=40_000, thin=20):
    rng = np.random.default_rng(seed)
    return _draw_chain(log_density, args, x0, n, width, 50, lower, upper, rng)[2000::thin]


def _bimodal_cdf(x):
    return 0.3 * stats.norm.cdf(x, -4.0, 1.0) + 0.7 * stats.norm.cdf(x, 3.0, 0.5)


@pytest.mark.parametrize(
    ("name", "log_density", "args", "x0", "lower", "upper", "width", "cdf"),
    [
        ("normal", _normal_log_density, (1.5, 2.0), 0.0, -np.inf, np.inf, 1.0, stats.norm(1.5, 2.0).cdf),
        ("gamma", _gamma_log_density, (2.5,), 1.0, 0.0, np.inf, 1.0, stats.gamma(2.5).cdf),
        ("bimodal", _bimodal_log_density, (), 0.0, -np.inf, np.inf, 8.0, _bimodal_cdf),
    ],
)
def test_slice_sampler_draws_pass_a_ks_test(name, log_density, args, x0, lower, upper, width, cdf):
    # thinned to about independent draws (1,900 of them); a correct sampler fails at 1e-3 once in a thousand
    draws = _thinned_draws(log_density, args, x0, lower, upper, seed=7, width=width)
    assert stats.kstest(draws, cdf).pvalue > 1e-3


def test_slice_sampler_with_a_wrong_density_fails_the_ks_test():
    """The KS check above can fail: draws of N(1.5, 2) are far from N(1.5, 1.6)."""
    draws = _thinned_draws(_normal_log_density, (1.5, 2.0), 0.0, -np.inf, np.inf, seed=7)
    assert stats.kstest(draws, stats.norm(1.5, 1.6).cdf).pvalue < 1e-3


def test_slice_sampler_stays_inside_the_support_and_depends_only_on_the_generator():
    a = _thinned_draws(_gamma_log_density, (0.5,), 1.0, 0.0, np.inf, seed=3, n=5000, thin=1)
    b = _thinned_draws(_gamma_log_density, (0.5,), 1.0, 0.0, np.inf, seed=3, n=5000, thin=1)
    np.testing.assert_array_equal(a, b)
    assert (a > 0).all()


# -- the schedule ---------------------------------------------------------------------------


@pytest.mark.parametrize(("n_iter", "burn_in", "thin"), [(10, 0, 1), (10, 3, 2), (11, 3, 4), (7, 6, 1)])
def test_schedule_saved_iterations_match_slot(n_iter, burn_in, thin):
    schedule = Schedule(n_iter, burn_in, thin)
    slots = [schedule.slot(i) for i in range(n_iter)]
    saved = [i for i, s in enumerate(slots) if s >= 0]
    np.testing.assert_array_equal(schedule.saved_iterations, saved)
    assert [slots[i] for i in saved] == list(range(schedule.n_saved)) == list(range(len(saved)))
    assert schedule.n_saved == (n_iter - burn_in) // thin
    np.testing.assert_array_equal(schedule.slots, slots)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_iter": 5, "burn_in": 5}, "leave no draws"),
        ({"n_iter": 5, "burn_in": 2, "thin": 4}, "leave no draws"),
        ({"n_iter": 0}, "n_iter"),
        ({"n_iter": 5, "thin": 0}, "thin"),
        ({"n_iter": 5, "burn_in": -1}, "burn_in"),
    ],
)
def test_schedule_refuses_settings_without_draws(kwargs, message):
    with pytest.raises(InputValueError, match=message):
        Schedule(**kwargs)


# -- the chain runner and the trace ---------------------------------------------------------


def _random_walk_chain(rng, schedule, advance):
    """A Gaussian AR(1) chain recording x after burn-in and every burn-in value."""
    x, saved, warm = 0.0, [], []
    for iteration in range(schedule.n_iter):
        x = 0.5 * x + rng.standard_normal()
        if iteration < schedule.burn_in:
            warm.append(x)
        if schedule.slot(iteration) >= 0:
            saved.append(x)
        advance()
    n = len(saved)
    return ChainDraws(
        posterior={"x": np.array(saved), "pair": np.column_stack([saved, np.square(saved)])},
        warmup={"x": np.array(warm)},
        sample_stats={"lp": -0.5 * np.square(saved)[:n]},
    )


def test_run_chains_shapes_groups_and_independence_of_n_jobs():
    schedule = Schedule(60, 20, 4)
    options = {"dims": {"pair": ["moment"]}, "monitored": ("x",)}
    trace = run_chains(_random_walk_chain, schedule, n_chains=3, random_state=5, trace_options=options)
    assert isinstance(trace, Trace)
    assert trace["x"].shape == (3, 10) and trace["pair"].shape == (3, 10, 2)
    assert trace.warmup["x"].shape == (3, 20)
    assert trace.flat("pair").shape == (30, 2)
    threaded = run_chains(_random_walk_chain, schedule, n_chains=3, random_state=5, n_jobs=2, trace_options=options)
    np.testing.assert_array_equal(trace["pair"], threaded["pair"])
    with joblib.parallel_config(backend="loky", n_jobs=2):
        processes = run_chains(_random_walk_chain, schedule, n_chains=3, random_state=5, trace_options=options)
    np.testing.assert_array_equal(trace["x"], processes["x"])
    # every chain has its own seed, and they differ
    assert not np.array_equal(trace["x"][0], trace["x"][1])
    assert chain_seeds(5, 3) == chain_seeds(np.random.default_rng(5), 3)

    idata = trace.to_inference_data()
    assert idata.posterior["x"].dims == ("chain", "draw")
    assert idata.posterior["pair"].dims == ("chain", "draw", "moment")
    assert idata.posterior.sizes["draw"] == 10  # post-burn-in draws only
    assert idata.warmup_posterior.sizes["draw"] == 20
    assert "lp" in idata.sample_stats
    summary = trace.summary()
    assert set(summary) == {"x"} and np.isfinite(summary["x"]["r_hat"])


def test_summary_of_a_constant_variable_is_nan_without_a_warning():
    trace = Trace({"k": np.ones((2, 10))}, monitored=("k",))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        row = trace.summary()["k"]
    assert row["mean"] == 1.0 and row["sd"] == 0.0


def _ar1_chains(rng, n_chains, n_draws, phi, shift=0.0):
    """Autoregressive chains x_t = φ x_t−1 + ε_t, the last chain shifted by ``shift`` (not mixed)."""
    x = np.empty((n_chains, n_draws))
    x[:, 0] = rng.standard_normal(n_chains)
    for t in range(1, n_draws):
        x[:, t] = phi * x[:, t - 1] + rng.standard_normal(n_chains)
    x[-1] += shift
    return x


@pytest.mark.parametrize(
    ("n_chains", "n_draws", "phi", "shift", "rounding"),
    [(4, 200, 0.0, 0.0, None), (2, 101, 0.9, 0.0, None), (3, 57, -0.5, 3.0, None), (1, 40, 0.6, 0.0, None),
     (2, 7, 0.3, 0.0, None), (4, 4, 0.0, 0.0, None), (2, 300, 0.99, 0.0, None), (3, 80, 0.2, 1.0, 0.5)],
)  # fmt: skip
def test_summary_diagnostics_equal_arviz(n_chains, n_draws, phi, shift, rounding):
    """Bulk ESS and rank-normalised split R-hat, computed without ArviZ, equal ArviZ's (relative 1e-9): odd
    draw counts, one chain, four draws, negative and strong autocorrelation, a chain that has not mixed, ties."""
    import arviz as az

    from hdbayes.mcmc._diagnostics import bulk_ess, rank_rhat

    x = _ar1_chains(np.random.default_rng(n_draws), n_chains, n_draws, phi, shift)
    if rounding is not None:
        x = np.round(x / rounding) * rounding  # many tied values
    np.testing.assert_allclose(bulk_ess(x), float(az.ess(x, method="bulk")), rtol=1e-9)
    if n_chains >= 2:
        np.testing.assert_allclose(rank_rhat(x), float(az.rhat(x)), rtol=1e-9)
    else:
        assert np.isnan(rank_rhat(x))
    summary = Trace({"x": x}, monitored=("x",)).summary()["x"]
    assert summary["ess_bulk"] == bulk_ess(x)
    assert summary["r_hat"] == rank_rhat(x) or (np.isnan(summary["r_hat"]) and n_chains == 1)


def test_summary_diagnostics_of_degenerate_draws():
    """Fewer than 4 draws or a NaN draw: NaN; constant draws: ArviZ's conventions (ESS = the split draws, R-hat
    NaN)."""
    import arviz as az

    from hdbayes.mcmc._diagnostics import bulk_ess, rank_rhat

    assert np.isnan(bulk_ess(np.ones((2, 3)))) and np.isnan(rank_rhat(np.ones((2, 3))))
    nan = np.random.default_rng(0).standard_normal((2, 10))
    nan[1, 3] = np.nan
    assert np.isnan(bulk_ess(nan)) and np.isnan(rank_rhat(nan))
    constant = np.full((2, 11), 3.0)
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert bulk_ess(constant) == float(az.ess(constant, method="bulk")) == 20.0
        assert np.isnan(rank_rhat(constant)) and np.isnan(float(az.rhat(constant)))


def test_run_chains_reports_a_chain_with_the_wrong_number_of_draws():
    def short(rng, schedule, advance):
        return ChainDraws(posterior={"x": np.zeros(schedule.n_saved - 1)})

    with pytest.raises(RuntimeError, match="draws of 'x'"):
        run_chains(short, Schedule(10), random_state=0)


# -- the numba cache is keyed per kernel, callees included ---------------------------------------

_CALLER = """
import sys
sys.path.insert(0, {root!r})
import hdbayes._numba as hn
hn._PACKAGE = __import__("pathlib").Path({root!r}) / "pkg"
import numpy as np
from pkg.caller import draw, twice
assert 0.0 < draw(np.random.default_rng(0)) < 1.0
print(twice(1.0))
"""


@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="needs compiled code")
def test_cache_recompiles_a_caller_when_a_callee_in_another_module_changes(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "callee.py").write_text("from hdbayes._numba import jit\n\n@jit\ndef value(x):\n    return x + 1.0\n")
    (package / "caller.py").write_text(
        "import numpy as np\nfrom hdbayes._numba import jit\nfrom hdbayes.mcmc import slice_sample\n"
        "from pkg.callee import value\n\n"
        "@jit\ndef twice(x):\n    return 2.0 * value(x)\n\n"
        "@jit\ndef flat(x, args):\n    return 0.0\n\n"
        "@jit\ndef draw(rng):  # passes a compiled density to the slice sampler, and is cached all the same\n"
        "    return slice_sample(0.5, 0.0, flat, (), 1.0, 10, 0.0, 1.0, rng)[0]\n"
    )
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}

    def run():
        script = textwrap.dedent(_CALLER.format(root=str(tmp_path)))
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
        return float(out.stdout.strip())

    assert run() == 4.0
    cached = {path.name.split("-")[0] for path in (tmp_path / "cache").rglob("*.nbi")}
    assert {"caller.twice", "caller.draw"} <= cached, cached  # both callers were cached
    assert run() == 4.0  # loaded from the cache
    (package / "callee.py").write_text("from hdbayes._numba import jit\n\n@jit\ndef value(x):\n    return x + 2.0\n")
    assert run() == 6.0  # numba's own cache (keyed by caller.py alone) would still give 4.0
