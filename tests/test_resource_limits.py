"""Size options are refused before allocating when their memory cannot fit (issue 26).

Every size parameter (chains, iterations with saved draws, categories / levels, quadrature points, Monte Carlo
pools, uncompressed interaction patterns) is checked against the memory this process can use before the arrays
are made: a huge value is refused at once with an input error naming it, instead of numpy's "Unable to allocate
426 PiB" or a process that grows until the machine swaps.
"""

import time

import numpy as np
import pytest

import hdbayes
from hdbayes import _validation
from hdbayes._validation import check_memory, check_n_jobs, format_bytes, usable_memory
from hdbayes.exceptions import InputValueError
from hdbayes.mcmc import Schedule
from hdbayes.mcmc.chains import CHAIN_OVERHEAD, chain_memory, check_chain_memory
from hdbayes.selection_bias import MixtureSampler

HUGE = 10**12


def _data(name):
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 10)
    if name in ("BiasCorrectedMixture", "BiasCorrectedNaiveBayes"):
        return rng.integers(0, 2, (20, 6)), y
    if name == "BiasCorrectedGaussianClassifier":
        return rng.normal(size=(20, 6)), y
    if name.startswith("Compressed") or "Categorical" in name:
        return rng.integers(0, 3, (20, 4)), y
    return rng.normal(size=(20, 6)), rng.normal(size=20)


SHORT = {"n_iter": 12, "burn_in": 4, "thin": 1, "progress": False}

# (estimator, the huge setting, the options named in the message)
CASES = [
    ("BiasCorrectedGaussianClassifier", {"n_chains": 10**9}, ["n_chains"]),
    ("BiasCorrectedGaussianClassifier", {"n_iter": HUGE}, ["n_iter"]),
    ("BiasCorrectedGaussianClassifier", {"n_mc": HUGE, "n_features_to_select": 2}, ["n_mc"]),
    ("BiasCorrectedGaussianClassifier",
     {"n_mc": HUGE, "n_features_to_select": 2, "variant": "per-class"}, ["n_mc"]),
    ("BiasCorrectedMixture", {"n_chains": 10**9}, ["n_chains"]),
    ("BiasCorrectedMixture", {"n_chains": 10**7, "sampler": MixtureSampler(n_alpha=1000)}, ["n_chains"]),
    ("BiasCorrectedMixture", {"n_iter": HUGE}, ["n_iter"]),
    ("BiasCorrectedMixture", {"sampler": MixtureSampler(n_alpha=HUGE)}, ["n_alpha"]),
    ("BiasCorrectedMixture", {"n_theta": 10**6}, ["n_theta"]),
    ("CompressedInteractionClassifier", {"n_chains": 10**9, "order": 2}, ["n_chains"]),
    ("CompressedSequenceModel", {"n_iter": HUGE, "order": 2}, ["n_iter"]),
    ("GroupSpikeSlabGibbs", {"n_chains": 10**9, "groups": 3}, ["n_chains"]),
    ("GroupSpikeSlabGibbs", {"n_iter": HUGE, "groups": 3}, ["n_iter"]),
    ("BayesianCategoricalNB", {"n_levels": 10**15}, ["n_levels"]),
    ("BayesianCategoricalNB", {"n_levels": [2, 10**15, 3, 2]}, ["n_levels"]),
    ("BiasCorrectedCategoricalNB", {"n_levels": 10**15}, ["n_levels"]),
    ("BiasCorrectedCategoricalNB", {"n_alpha": HUGE}, ["n_alpha"]),
    ("BiasCorrectedCategoricalNB", {"n_theta": HUGE}, ["n_theta"]),
    ("BiasCorrectedNaiveBayes", {"n_alpha": HUGE}, ["n_alpha"]),
    ("BiasCorrectedNaiveBayes", {"n_theta": 10**6}, ["n_theta"]),
    ("BiasCorrectedNaiveBayes", {"n_theta": 10**6 + 1, "theta_rule": "simpson", "n_alpha": 10**4,
                                 "alpha_rule": "midpoint"}, ["n_theta"]),
]  # fmt: skip


def _make(name, setting):
    cls = getattr(hdbayes, name)
    params = cls().get_params()
    kwargs = {key: value for key, value in SHORT.items() if key in params}
    kwargs.update(setting)
    return cls(**kwargs)


@pytest.mark.parametrize(("name", "setting", "named"), CASES, ids=lambda v: v if isinstance(v, str) else None)
def test_a_huge_size_option_is_refused_at_once_naming_it(name, setting, named):
    X, y = _data(name)
    with pytest.raises(InputValueError):  # the first call also compiles what fit runs before the check
        _make(name, setting).fit(X, y)
    start = time.perf_counter()
    with pytest.raises(InputValueError, match=r"would need about .* this process can use about") as error:
        _make(name, setting).fit(X, y)
    assert time.perf_counter() - start < 1.0
    for option in named:
        assert f"{option} = " in str(error.value) or f"max({option}) = " in str(error.value)


def test_the_uncompressed_patterns_of_a_high_order_are_refused_before_they_are_expanded(monkeypatch):
    from hdbayes.interactions import models

    X = np.random.default_rng(0).integers(0, 2, (30, 6))
    y = np.tile([0, 1], 15)
    monkeypatch.setattr(_validation, "usable_memory", lambda: 10_000)  # the 30 cases' patterns need more
    monkeypatch.setattr(models, "expand_grouping", lambda grouping: pytest.fail("expanded before the check"))
    with pytest.raises(InputValueError, match=r"order = 6 with compress=False would need about"):
        hdbayes.CompressedInteractionClassifier(order=6, compress=False, n_iter=4, burn_in=2, thin=1).fit(X, y)


def test_check_memory_names_the_option_and_both_amounts(monkeypatch):
    monkeypatch.setattr(_validation, "usable_memory", lambda: 24 * 10**9)
    assert check_memory(10**9, "n_chains = 4") == 1e9
    message = "n_chains = 1000000000 would need about 80 GB for the saved draws; this process can use about 24 GB"
    with pytest.raises(InputValueError, match=message):
        check_memory(80 * 10**9, "n_chains = 1000000000", purpose="the saved draws")


def test_an_unknown_memory_size_refuses_nothing(monkeypatch):
    monkeypatch.setattr(_validation, "usable_memory", lambda: None)
    assert check_memory(1e30, "n_chains = 1") == 1e30


def test_format_bytes():
    assert [format_bytes(value) for value in (5, 1234, 8e9, 80e9, 4.26e17)] == [
        "5 bytes", "1.2 kB", "8 GB", "80 GB", "426 PB",
    ]  # fmt: skip


def test_usable_memory_is_the_least_known_limit(monkeypatch):
    monkeypatch.setattr(_validation, "_cgroup_memory_left", lambda: 3 * 10**9)
    monkeypatch.setattr(_validation, "_meminfo_available", lambda: 5 * 10**9)
    monkeypatch.setattr(_validation, "_address_space_left", lambda: None)
    assert usable_memory() == 3 * 10**9
    monkeypatch.setattr(_validation, "_cgroup_memory_left", lambda: None)
    assert usable_memory() == 5 * 10**9
    monkeypatch.setattr(_validation, "_meminfo_available", lambda: None)
    assert usable_memory() > 0  # the physical memory


def test_usable_memory_reads_this_machine():
    available = usable_memory()
    assert available is not None and 10**6 < available < 10**15


def test_cgroup_v2_limit_minus_usage(monkeypatch, tmp_path):
    (tmp_path / "memory.max").write_text("4000000000\n")
    (tmp_path / "memory.current").write_text("1000000000\n")
    real_join = _validation.os.path.join

    def join(first, *rest):
        if first == "/sys/fs/cgroup":
            return real_join(str(tmp_path), *[part for part in rest if part])
        return real_join(first, *rest)

    monkeypatch.setattr(_validation.os.path, "join", join)
    assert _validation._cgroup_memory_left() == 3 * 10**9


def test_chain_memory_formula():
    schedule = Schedule(100, 20, 4)  # 20 saved draws
    expected = 3 * (2 * 20 * 40 + 2 * 20 * 16 + CHAIN_OVERHEAD) + 8 * 100
    assert chain_memory(schedule, 3, 40, 16) == expected
    assert check_chain_memory(schedule, 3, 40, 16) == expected


def test_run_chains_refuses_before_running_a_chain(monkeypatch):
    from hdbayes.mcmc import run_chains

    monkeypatch.setattr(_validation, "usable_memory", lambda: 10**6)
    with pytest.raises(InputValueError, match=r"n_chains = 100 chains of n_iter = 100 .* 80 saved draws of 1000 bytes"):
        run_chains(lambda *args: pytest.fail("a chain ran"), Schedule(100, 20), n_chains=100, draw_bytes=1000)


@pytest.mark.parametrize(("n_jobs", "n_tasks", "expected"), [
    (None, None, None), (1, None, 1), (10**9, None, "cores"), (10**9, 1, 1), (-1, None, "cores"), (-10**9, None, 1),
])  # fmt: skip
def test_n_jobs_is_capped_at_the_usable_cores(n_jobs, n_tasks, expected):
    from hdbayes._threads import usable_cores

    assert check_n_jobs(n_jobs, n_tasks) == (usable_cores() if expected == "cores" else expected)


def test_n_jobs_zero_is_refused():
    with pytest.raises(InputValueError, match="n_jobs must be at least 1"):
        check_n_jobs(0)


def test_a_huge_n_jobs_runs_the_chains_on_the_usable_cores():
    from hdbayes.mcmc import ChainDraws, run_chains

    def chain(rng, schedule, advance):
        return ChainDraws(posterior={"x": rng.normal(size=schedule.n_saved)})

    many = run_chains(chain, Schedule(6, 2), n_chains=3, random_state=1, n_jobs=10**9, progress=False)
    one = run_chains(chain, Schedule(6, 2), n_chains=3, random_state=1, n_jobs=1, progress=False)
    np.testing.assert_array_equal(many["x"], one["x"])


# -- prediction reads the selected columns only, in row batches ---------------------------------------------------

SELECTING = {
    "BiasCorrectedNaiveBayes": {},
    "BiasCorrectedCategoricalNB": {},
    "BiasCorrectedMixture": {"n_iter": 12, "burn_in": 4, "thin": 1, "progress": False},
    "BiasCorrectedGaussianClassifier": {"n_iter": 12, "burn_in": 4, "thin": 1, "progress": False},
}


def _selecting_fit(name, p=500, k=20, **options):
    rng = np.random.default_rng(1)
    y = np.tile([0, 1], 100)
    X = rng.integers(0, 2, (200, p)).astype(np.int8)
    X[:, 3] = y  # one informative feature
    model = getattr(hdbayes, name)(n_features_to_select=k, random_state=0, **SELECTING[name], **options)
    return model.fit(X.astype(np.float64) if name == "BiasCorrectedGaussianClassifier" else X, y)


def _old_path(model, X):
    """What prediction computed before issue 26: all p columns validated, then the joint log-likelihood at once."""
    return model._checked_joint_log_likelihood(model._validate_for_prediction(X), model._joint_log_likelihood)


def _peak(function, *args):
    import tracemalloc

    tracemalloc.start()
    try:
        result = function(*args)
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("name", SELECTING)
def test_prediction_memory_is_bounded_by_the_selected_columns_and_a_batch(name, monkeypatch):
    model = _selecting_fit(name)
    X = np.random.default_rng(2).integers(0, 2, (10_000, 500)).astype(np.int8)  # 5 MB
    if name == "BiasCorrectedGaussianClassifier":
        X = X.astype(np.float32)  # 20 MB
    expected, old_peak = _peak(_old_path, model, X)
    monkeypatch.setattr(_validation, "PREDICTION_BATCH_BYTES", 2**19)
    jll, peak = _peak(model.predict_joint_log_proba, X)
    np.testing.assert_allclose(jll, expected, rtol=1e-12, atol=1e-12)  # the row batches' products may round apart
    np.testing.assert_allclose(model.predict_proba(X), np.exp(expected - expected.max(axis=1, keepdims=True))
                               / np.exp(expected - expected.max(axis=1, keepdims=True)).sum(axis=1, keepdims=True),
                               rtol=1e-12, atol=1e-12)  # fmt: skip
    assert peak < 0.5 * X.nbytes, (peak, X.nbytes)  # before: 2x (float32 Gaussian) to 20x (int8) the input
    assert peak < old_peak / 3


@pytest.mark.slow
def test_naive_bayes_predicts_200000_rows_of_500_int8_features_within_the_inputs_size():
    model = _selecting_fit("BiasCorrectedNaiveBayes", k=50)
    X = np.random.default_rng(3).integers(0, 2, (200_000, 500)).astype(np.int8)  # 100 MB
    proba, peak = _peak(model.predict_proba, X)
    assert peak < 1.0 * X.nbytes, (peak, X.nbytes)  # measured 0.5x; the old path peaked at 20x (2 GB)
    np.testing.assert_allclose(proba[:1000], model.predict_proba(X[:1000]), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", ["BiasCorrectedNaiveBayes", "BiasCorrectedMixture", "BiasCorrectedCategoricalNB"])
def test_only_the_selected_columns_values_are_checked_and_they_are_named_in_the_whole_x(name):
    import pandas as pd

    binary = {} if name == "BiasCorrectedCategoricalNB" else {"binarize": None}  # 0/1 values only
    model = _selecting_fit(name, p=30, k=5, **binary)
    selected = model.selected_features_
    unselected = np.setdiff1d(np.arange(30), selected)[0]
    X = np.zeros((4, 30))
    X[1, unselected] = 7.5  # not read by the model: not checked
    reference = model.predict_proba(np.zeros((4, 30)))
    np.testing.assert_array_equal(model.predict_proba(X), reference)
    j = int(selected[-1])
    X[2, j] = 0.5
    with pytest.raises(InputValueError, match=rf"feature {j} has the value 0.5"):
        model.predict_proba(X)
    names = [f"g{i}" for i in range(30)]
    model = getattr(hdbayes, name)(n_features_to_select=5, random_state=0, **SELECTING[name], **binary)
    rng = np.random.default_rng(1)
    y = np.tile([0, 1], 100)
    train = pd.DataFrame(rng.integers(0, 2, (200, 30)), columns=names)
    model.fit(train, y)
    j = int(model.selected_features_[0])
    test = pd.DataFrame(np.zeros((3, 30)), columns=names)
    test.iloc[1, j] = 0.5
    with pytest.raises(InputValueError, match=rf"feature 'g{j}' has the value 0.5"):
        model.predict(test)
    with pytest.raises(InputValueError, match="The feature names should match"):
        model.predict(test.rename(columns={"g0": "other"}))


@pytest.mark.parametrize("name", SELECTING)
def test_prediction_keeps_the_shape_and_finiteness_checks(name):
    model = _selecting_fit(name, p=30, k=5)
    with pytest.raises(InputValueError, match=r"X has 29 features, but \w+ is expecting 30 features as input"):
        model.predict(np.zeros((3, 29)))
    X = np.zeros((3, 30))
    X[1, model.selected_features_[0]] = np.nan
    with pytest.raises(InputValueError, match="Input X contains NaN"):
        model.predict(X)
    with pytest.raises(InputValueError, match="0 sample"):
        model.predict(np.zeros((0, 30)))
    assert model.predict(np.zeros((3, 30)).tolist()).shape == (3,)  # lists are validated whole, as before


def test_a_row_named_in_a_later_batch_is_numbered_in_the_whole_x(monkeypatch):
    model = _selecting_fit("BiasCorrectedGaussianClassifier", p=30, k=5)
    monkeypatch.setattr(_validation, "PREDICTION_BATCH_BYTES", 4096)  # a few rows per batch
    X = np.zeros((500, 30))
    j = int(model.selected_features_[1])
    X[437, j] = 1e308
    with pytest.raises(InputValueError, match=rf"row 437 is not finite; its value 1e\+308 of feature {j}\b"):
        model.predict_proba(X)
