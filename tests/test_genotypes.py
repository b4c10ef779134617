"""Genotype data on dask: the chunk-wise case–control simulator, the PLINK loader, joblib's Dask backend,
and the cluster benchmark's quick run."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hdbayes import BiasCorrectedNaiveBayes
from hdbayes.datasets import read_plink, simulate_genotypes
from hdbayes.exceptions import InputValueError

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

ROOT = Path(__file__).resolve().parents[1]
PRESENT = "minor-allele-present"


@pytest.fixture(autouse=True)
def synchronous():
    with dask.config.set(scheduler="sync"):
        yield


# -- the simulator against an in-memory oracle written from its docstring (eqs. G1-G4) --------------------
def oracle(seed, n_rows, p, *, n_informative, odds_ratio=1.5, low=0.05, high=0.5, case_fraction=0.5):
    """The whole matrix generated in memory: root.spawn() children 0 labels, 1 design, 2 + t tile t; each tile's
    children give its 4096 allele frequencies and a PCG64 stream of four 16-bit uniforms per 64-bit word."""
    n_tiles = -(-p // 4096)
    children = np.random.SeedSequence(seed).spawn(2 + n_tiles)
    y = np.random.Generator(np.random.PCG64(children[0])).random(n_rows) < case_fraction
    informative = np.sort(np.random.Generator(np.random.PCG64(children[1])).choice(p, n_informative, replace=False))
    uniforms, frequencies = [], []
    for tile in children[2:]:
        of_q, of_u = tile.spawn(2)
        frequencies.append(np.random.Generator(np.random.PCG64(of_q)).uniform(low, high, 4096))
        words = np.random.PCG64(of_u).random_raw(n_rows * 1024)
        uniforms.append(words.astype("<u8").view("<u2").reshape(n_rows, 4096).astype(np.int64))
    u = np.hstack(uniforms)[:, :p]
    q = np.tile(np.concatenate(frequencies)[:p], (n_rows, 1))
    case_q = odds_ratio * q / (1 - q + odds_ratio * q)
    q[np.ix_(y, informative)] = case_q[np.ix_(y, informative)]
    g = (u >= np.rint(65536 * (1 - q) ** 2)).astype(np.int8) + (u >= np.rint(65536 * (1 - q * q)))
    return g.astype(np.int8), y.astype(np.int64), informative


def test_the_simulator_equals_the_generation_in_memory_whatever_the_chunks():
    n, p = 61, 9000  # three tiles of 4096 variants, the last one partial
    expected, labels, informative = oracle(7, n + 9, p, n_informative=6)
    for chunks in [(61, -1), (17, 1000), (8, 4096), (25, 5000)]:  # rows and columns that do not divide n or p
        data = simulate_genotypes(n, p, n_informative=6, n_test=9, chunks=chunks, random_state=7)
        np.testing.assert_array_equal(data.X.compute(), expected[:n], err_msg=str(chunks))
        np.testing.assert_array_equal(data.X_test.compute(), expected[n:], err_msg=str(chunks))
        np.testing.assert_array_equal(data.y, labels[:n])
        np.testing.assert_array_equal(data.y_test, labels[n:])
        np.testing.assert_array_equal(data.informative_features, informative)
    binary = simulate_genotypes(n, p, n_informative=6, chunks=(20, 3000), binarize=PRESENT, random_state=7)
    np.testing.assert_array_equal(binary.X.compute(), (expected[:n] >= 1).astype(np.int8))
    assert binary.X.dtype == np.int8 and data.X.dtype == np.int8


def test_the_same_seed_gives_the_same_matrix_on_every_scheduler_and_rows_are_a_stable_prefix():
    data = simulate_genotypes(90, 5000, n_informative=4, chunks=(30, 2000), random_state=3)
    with dask.config.set(scheduler="threads"):
        threaded = data.X.compute()
    np.testing.assert_array_equal(threaded, data.X.compute())
    longer = simulate_genotypes(200, 5000, n_informative=4, chunks=(64, 4096), random_state=3)
    np.testing.assert_array_equal(longer.X[:90].compute(), threaded)
    np.testing.assert_array_equal(longer.y[:90], data.y)
    other = simulate_genotypes(90, 5000, n_informative=4, chunks=(30, 2000), random_state=4)
    assert (other.X.compute() != threaded).mean() > 0.3
    # a numpy Generator is drawn from once: two equal generators, equal data
    a = simulate_genotypes(20, 300, random_state=np.random.default_rng(1), chunks=(-1, -1))
    b = simulate_genotypes(20, 300, random_state=np.random.default_rng(1), chunks=(-1, -1))
    assert a.seed_entropy == b.seed_entropy
    np.testing.assert_array_equal(a.X.compute(), b.X.compute())


def test_labels_are_computed_without_generating_X():
    data = simulate_genotypes(50_000, 10**6, chunks=(1000, 10**5), random_state=0)  # 5e10 cells, never generated
    assert isinstance(data.y, np.ndarray) and data.y.shape == (50_000,)
    assert abs(data.y.mean() - 0.5) < 5 * 0.5 / np.sqrt(50_000)
    assert data.X.npartitions == 50 * 10


def test_genotype_frequencies_follow_hardy_weinberg_and_the_odds_ratio():
    n, p = 4000, 4096
    data = simulate_genotypes(n, p, n_informative=40, odds_ratio=3.0, chunks=(1500, 2048), random_state=11)
    X = data.X.compute().astype(np.float64)
    q = data.allele_frequency.compute()
    assert q.shape == (p,) and q.min() >= 0.05 and q.max() <= 0.5
    neutral = np.setdiff1d(np.arange(p), data.informative_features)
    controls = data.y == 0
    # allele frequency and heterozygosity of the neutral variants: their mean error over 4056 variants
    # is within 6 standard errors of zero (each variant's estimate has sd sqrt(q(1-q)/2n) resp. sqrt(h(1-h)/n))
    q_hat = X[:, neutral].mean(axis=0) / 2
    se = np.sqrt(np.mean(q[neutral] * (1 - q[neutral]) / (2 * n)) / neutral.size)
    assert abs(np.mean(q_hat - q[neutral])) < 6 * se
    h = 2 * q[neutral] * (1 - q[neutral])
    h_hat = (X[:, neutral] == 1).mean(axis=0)
    assert abs(np.mean(h_hat - h)) < 6 * np.sqrt(np.mean(h * (1 - h) / n) / neutral.size)
    # informative variants: controls at q_j, cases at q_j' (eq. G4), both recorded in the Bunch
    j = data.informative_features
    np.testing.assert_allclose(data.control_allele_frequency, q[j])
    case_q = data.case_allele_frequency
    np.testing.assert_allclose(case_q, 3.0 * q[j] / (1 - q[j] + 3.0 * q[j]))
    for rows, target in ((controls, q[j]), (~controls, case_q)):
        estimate = X[np.ix_(rows, j)].mean(axis=0) / 2
        se = np.sqrt(np.mean(target * (1 - target) / (2 * rows.sum())) / j.size)
        assert abs(np.mean(estimate - target)) < 6 * se


def test_the_naive_bayes_fit_on_simulated_chunks_equals_the_fit_in_memory():
    data = simulate_genotypes(150, 3000, n_informative=8, odds_ratio=3.0, n_test=40, binarize=PRESENT,
                              chunks=(37, 1100), random_state=2)  # fmt: skip
    chunked = BiasCorrectedNaiveBayes(n_features_to_select=10).fit(data.X, data.y)
    memory = BiasCorrectedNaiveBayes(n_features_to_select=10).fit(data.X.compute(), data.y)
    assert chunked.statistics_ == memory.statistics_
    np.testing.assert_array_equal(chunked.selected_features_, memory.selected_features_)
    np.testing.assert_array_equal(chunked.log_adjustment_, memory.log_adjustment_)
    assert np.intersect1d(chunked.selected_features_, data.informative_features).size >= 3
    np.testing.assert_array_equal(chunked.predict_proba(data.X_test).compute(),
                                  memory.predict_proba(data.X_test.compute()))  # fmt: skip


@pytest.mark.parametrize(
    "options, message",
    [
        ({"binarize": 0.5}, "binarize must be None"),
        ({"n_informative": 301}, "n_informative"),
        ({"chunks": (10,)}, "chunks must be a pair"),
        ({"chunks": (0, 10)}, "chunks \\(rows\\)"),
        ({"allele_frequency": (0.4, 0.2)}, "low <= high"),
        ({"allele_frequency": (0.1, 1.5)}, "allele_frequency"),
        ({"case_fraction": -0.1}, "case_fraction"),
        ({"random_state": -1}, "non-negative"),
    ],
)
def test_simulator_input_errors_name_the_option(options, message):
    with pytest.raises(InputValueError, match=message):
        simulate_genotypes(20, 300, **options)


def test_children_of_the_root_seed_are_its_spawned_children():
    from hdbayes.datasets.genotypes import _child

    spawned = np.random.SeedSequence(9).spawn(5)
    for k in (0, 1, 4):
        assert _child((9, ()), k).generate_state(4).tolist() == spawned[k].generate_state(4).tolist()


# -- PLINK files ---------------------------------------------------------------------------------------------
bed_reader = pytest.importorskip("bed_reader")


def write_bed(path, values, pheno=None, **properties):
    n, p = values.shape
    props = {"iid": [f"p{i}" for i in range(n)], "sid": [f"rs{j}" for j in range(p)], **properties}
    if pheno is not None:
        props["pheno"] = pheno
    bed_reader.to_bed(path, np.ascontiguousarray(values, dtype=np.float32), properties=props)
    return path


@pytest.fixture
def genotypes():
    rng = np.random.default_rng(0)
    values = rng.integers(0, 3, (23, 17)).astype(np.float32)
    values[rng.random(values.shape) < 0.05] = np.nan
    return values


def test_read_plink_equals_bed_readers_read_in_memory(tmp_path, genotypes):
    bed = write_bed(tmp_path / "cohort.bed", genotypes, pheno=["1", "2", "-9", "0"] + ["2"] * 19)
    expected = bed_reader.open_bed(bed).read(dtype="float32")
    assert np.isnan(expected).any()
    for chunks in [(5, 4), (23, 17), (-1, 6)]:
        data = read_plink(bed, chunks=chunks)
        assert data.X.dtype == np.float32
        np.testing.assert_array_equal(data.X.compute(), expected)
    present = read_plink(tmp_path / "cohort", chunks=(6, 5), binarize=PRESENT).X.compute()
    np.testing.assert_array_equal(present, np.where(np.isnan(expected), np.nan, expected >= 1))
    np.testing.assert_array_equal(data.feature_names, [f"rs{j}" for j in range(17)])
    np.testing.assert_array_equal(data.sample_ids, [f"p{i}" for i in range(23)])
    np.testing.assert_array_equal(data.y[:4], [0.0, 1.0, np.nan, np.nan])  # 1/2 case-control, -9 and 0 missing
    assert data.files["fam"].endswith("cohort.fam") and "23 persons × 17 variants" in data.DESCR
    a2 = read_plink(bed, count_A1=False).X.compute()
    np.testing.assert_array_equal(a2, 2 - expected)


def test_missing_calls_raise_naming_the_file_person_and_variant(tmp_path, genotypes):
    bed = write_bed(tmp_path / "gaps.bed", genotypes)
    i, j = np.argwhere(np.isnan(genotypes))[0]  # the first in row-major order
    X = read_plink(bed, missing="raise", chunks=(-1, -1)).X
    assert X.dtype == np.int8
    with pytest.raises(InputValueError, match=rf"gaps\.bed has a missing genotype call for person {i} .* variant {j} "):
        X.compute()
    complete = write_bed(tmp_path / "full.bed", np.nan_to_num(genotypes))
    data = read_plink(complete, missing="raise", binarize=PRESENT, chunks=(10, 10))
    np.testing.assert_array_equal(data.X.compute(), (np.nan_to_num(genotypes) >= 1).astype(np.int8))
    assert data.y is None  # bed-reader's default phenotype (0) is missing in case-control coding


def test_chunks_are_read_from_the_file_when_computed(tmp_path, genotypes):
    bed = write_bed(tmp_path / "lazy.bed", np.nan_to_num(genotypes))
    X = read_plink(bed, chunks=(8, 8)).X
    write_bed(bed, 2 - np.nan_to_num(genotypes))  # same shape, new content: the array reads the file anew
    np.testing.assert_array_equal(X.compute(), 2 - np.nan_to_num(genotypes))


def test_quantitative_phenotypes_and_naive_bayes_from_a_bed_file(tmp_path):
    data = simulate_genotypes(80, 600, n_informative=5, odds_ratio=3.0, chunks=(-1, -1), random_state=1)
    counts = data.X.compute()
    bed = write_bed(tmp_path / "sim.bed", counts, pheno=[str(1 + c) for c in data.y])
    loaded = read_plink(bed, binarize=PRESENT, missing="raise", chunks=(30, 250))
    np.testing.assert_array_equal(loaded.y, data.y)
    chunked = BiasCorrectedNaiveBayes(n_features_to_select=5).fit(loaded.X, loaded.y)
    memory = BiasCorrectedNaiveBayes(n_features_to_select=5).fit((counts >= 1).astype(np.int8), data.y)
    assert chunked.statistics_ == memory.statistics_
    np.testing.assert_array_equal(chunked.log_adjustment_, memory.log_adjustment_)
    quantitative = write_bed(tmp_path / "height.bed", counts[:3, :4], pheno=["1.5", "-9", "172"])
    np.testing.assert_array_equal(read_plink(quantitative).y, [1.5, np.nan, 172.0])


def test_plink_input_errors_name_the_file(tmp_path, genotypes):
    bed = write_bed(tmp_path / "x.bed", np.nan_to_num(genotypes))
    with pytest.raises(InputValueError, match="binarize"):
        read_plink(bed, binarize="median")
    with pytest.raises(InputValueError, match="missing must be"):
        read_plink(bed, missing="zero")
    os.remove(tmp_path / "x.bim")
    with pytest.raises(FileNotFoundError, match=r"x\.bim"):
        read_plink(bed)
    bad = write_bed(tmp_path / "magic.bed", np.nan_to_num(genotypes))
    with open(bad, "r+b") as file:
        file.write(b"\x00\x00\x00")
    with pytest.raises(InputValueError, match=r"magic\.bed is not a PLINK 1"):
        read_plink(bad)
    short = write_bed(tmp_path / "short.bed", np.nan_to_num(genotypes))
    with open(short, "r+b") as file:
        file.truncate(40)
    with pytest.raises(InputValueError, match=r"short\.bed has 40 bytes, but 23 persons .* × 17 variants"):
        read_plink(short)


def test_cross_validation_from_fold_statistics_scans_the_training_data_once():
    """docs/distributed.md: the statistics of each fold's rows computed once; a fold's training statistics are the
    sum of the other folds' (mergeable statistics), and fit_statistics gives the fold's model exactly."""
    from hdbayes.statistics import BinaryClassCounts

    data = simulate_genotypes(130, 2500, n_informative=6, odds_ratio=3.0, binarize=PRESENT, chunks=(26, 1000),
                              random_state=8)  # fmt: skip
    folds = [slice(start, start + 26) for start in range(0, 130, 26)]  # one row chunk each
    parts = [BinaryClassCounts.from_dask(data.X[f], data.y[f]) for f in folds]  # together: one pass over X
    X = data.X.compute()
    for k, held_out in enumerate(folds):
        train = sum(part for j, part in enumerate(parts) if j != k)
        chunked = BiasCorrectedNaiveBayes(n_features_to_select=8).fit_statistics(train)
        rows = np.ones(130, dtype=bool)
        rows[held_out] = False
        memory = BiasCorrectedNaiveBayes(n_features_to_select=8).fit(X[rows], data.y[rows])
        np.testing.assert_array_equal(chunked.selected_features_, memory.selected_features_)
        np.testing.assert_array_equal(chunked.predict_proba(data.X[held_out]).compute(),
                                      memory.predict_proba(X[held_out]))  # fmt: skip


# -- cross-validation and chains through joblib's Dask backend ---------------------------------------------
def test_cross_validation_and_chains_on_a_cluster_through_joblibs_dask_backend():
    joblib = pytest.importorskip("joblib")
    distributed = pytest.importorskip("distributed")
    from sklearn.model_selection import KFold, cross_val_score

    from hdbayes import BiasCorrectedGaussianClassifier
    from hdbayes.datasets import simulate_gaussian

    data = simulate_genotypes(120, 2000, n_informative=6, odds_ratio=3.0, binarize=PRESENT, chunks=(50, 700),
                              random_state=5)  # fmt: skip
    X = data.X.compute()
    model = BiasCorrectedNaiveBayes(n_features_to_select=10)
    folds = KFold(4, shuffle=True, random_state=0)
    serial = cross_val_score(model, X, data.y, cv=folds, scoring="neg_log_loss")
    # cross_val_score on the dask array itself: the folds are row selections of it (lazy), the fits chunked
    on_chunks = cross_val_score(model, data.X, data.y, cv=folds, scoring="neg_log_loss")
    np.testing.assert_allclose(on_chunks, serial, rtol=0, atol=1e-12)
    gaussian = simulate_gaussian(n_classes=2, n_features=30, n_samples=30, n_test=1, random_state=0)
    chains = BiasCorrectedGaussianClassifier(5, n_iter=40, burn_in=10, thin=2, n_chains=2, n_jobs=2, n_mc=50,
                                             random_state=3, progress=False)  # fmt: skip
    threads = chains.fit(gaussian.X, gaussian.y).trace_["mu"].copy()
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0")
    with cluster:
        with distributed.Client(cluster), joblib.parallel_backend("dask"):
            on_cluster = cross_val_score(model, X, data.y, cv=folds, scoring="neg_log_loss", n_jobs=2)
            draws = chains.fit(gaussian.X, gaussian.y).trace_["mu"]
    np.testing.assert_array_equal(on_cluster, serial)
    np.testing.assert_array_equal(draws, threads)


# -- the benchmark script cannot rot (about 40 s: three clusters of worker processes are started) -----------
@pytest.mark.slow
def test_the_cluster_benchmark_runs_at_its_quick_size(tmp_path):
    pytest.importorskip("distributed")
    script = ROOT / "benchmarks" / "bench_dask.py"
    result = subprocess.run(
        [sys.executable, str(script), "--quick", "--rules", "thesis", "--json", str(tmp_path / "out.json")],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    import json

    report = json.loads((tmp_path / "out.json").read_text())
    assert report["cluster"]["n_workers"] == 2 and report["fit"]["cells"] == report["fit"]["n"] * report["fit"]["p"]
    assert report["fit"]["seconds"] > 0 and report["fit"]["peak_memory_per_worker"]
    assert report["fit"]["auc_test"] > 0.5 and report["gaussian"]["informative_selected"] == 10
    assert report["gaussian"]["classifier_informative_selected"] == 10
    assert set(report["scaling"]["workers"]) == {"1", "2"} and report["in_memory"]["scan_seconds"] > 0
    assert set(report["gaussian_scaling"]["workers"]) == {"1", "2"}
    assert report["gaussian_in_memory"]["seconds"] > 0 and report["gaussian_in_memory"]["informative_in_top"] == 10
    assert "cells / s / core" in result.stdout
