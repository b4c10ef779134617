"""Issue 14's cluster benchmark: BiasCorrectedNaiveBayes on genotypes generated on the workers of a LocalCluster.

Run from the project root (the full size takes several minutes on 2 cores)::

    .venv/bin/python benchmarks/bench_dask.py           # n = 20 000, p = 10^6, 2 workers × 1 thread, 4 GB each
    .venv/bin/python benchmarks/bench_dask.py --quick   # seconds: the same passes at n = 600, p = 2·10^4

Passes, each on data generated chunk by chunk on the workers by ``simulate_genotypes`` (binarised, minor allele
present), never persisted, so every pass generates X again:

1. *generation*: every chunk generated and dropped (a 1 × 1 corner kept per chunk) — the generation cost alone;
2. *fit*: ``BiasCorrectedNaiveBayes(n_features_to_select=k).fit(X, y)`` (the statistics scanned on the workers and
   tree-reduced, the selection and the model on the client), then the client's part timed alone by refitting from
   the gathered statistics (``fit_statistics``), so that scan = fit − model − generation;
3. *predict*: ``predict_proba`` of the ``n_test`` held-out rows (a dask array, computed);
4. *in memory*: the same model fitted by one process on a matrix that fits (n × ``--memory-features``), for the
   throughput per core of the in-memory scan;
5. *scaling*: the statistics pass (generation + scan) at n × ``--scaling-features`` on 1 and then 2 workers;
6. *gaussian*: dense float32 data generated chunk-wise (10 informative genes shifted by 0.5 in class 1), the per-class
   moments (``GaussianClassMoments.from_dask``: counts, means and centred sums of squares merged over the chunks) and
   the one-way F statistics from them, checked against ``hdbayes.selection.f_statistic`` on 300 genes; the top k are
   the selection of the Gaussian classifier; then ``BiasCorrectedGaussianClassifier(k).fit`` on the dask array (its
   moments on the workers, X read once; the selection and the sampler on the client from the moments alone), and
   the client's part timed alone by refitting from the gathered moments (``fit_statistics``);
7. *categorical*: the genotype codes 0/1/2 themselves (``binarize=None``), ``BiasCorrectedCategoricalNB(k,
   n_levels=3, correct=False)`` fitted on the cluster (the 2 × 3 tables of every variant counted on the workers,
   ``CategoricalClassCounts.from_dask``; the exact correction enumerates Π_g C(N_g + 2, 2) tables, out of reach at
   this n), against the binary statistics pass on the same cluster and the same fit in memory (the first
   4000 rows); n and p of its own (``--categorical-samples``, ``--categorical-features``).

Peak memory per worker is the largest resident set size the worker's own system monitor recorded (every 100 ms)
during the pass. Throughput is cells (n × p) per second per worker thread. ``--json PATH`` writes every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import dask
import dask.array as da
import numpy as np
from sklearn.base import clone

from hdbayes import BiasCorrectedCategoricalNB, BiasCorrectedGaussianClassifier, BiasCorrectedNaiveBayes
from hdbayes.datasets import simulate_genotypes
from hdbayes.statistics import BinaryClassCounts, CategoricalClassCounts, GaussianClassMoments

PRESENT = "minor-allele-present"


def _corner(block):
    return np.asarray(block[:1, :1], dtype=np.int64)


def _peak_since(start, dask_worker=None):
    """The largest RSS (bytes) the worker's system monitor recorded since ``start`` (epoch seconds)."""
    q = dask_worker.monitor.quantities
    samples = [m for t, m in zip(list(q["time"]), list(q["memory"])) if t >= start]
    return max(samples, default=dask_worker.monitor.get_process_memory())


def note(text):
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def timed(client, action, what):
    """(seconds, value, peak RSS per worker in bytes) of ``action()`` run on ``client``'s cluster."""
    note(what)
    client.run(lambda dask_worker: dask_worker.monitor.update())
    start_epoch = time.time()
    start = time.perf_counter()
    value = action()
    seconds = time.perf_counter() - start
    time.sleep(0.25)  # one more monitor sample
    peaks = client.run(_peak_since, start_epoch)
    return seconds, value, sorted(int(v) for v in peaks.values())


def cluster(n_workers, memory_limit):
    from distributed import Client, LocalCluster

    with dask.config.set({"distributed.admin.system-monitor.interval": "100ms"}):
        local = LocalCluster(n_workers=n_workers, threads_per_worker=1, memory_limit=memory_limit, processes=True,
                             dashboard_address=":0")  # fmt: skip
    return local, Client(local)


def genotypes(args, n, p, n_test=0, binarize=PRESENT):
    return simulate_genotypes(n, p, n_informative=args.informative, odds_ratio=args.odds_ratio, n_test=n_test,
                              binarize=binarize, chunks=tuple(args.chunks), random_state=args.seed)  # fmt: skip


RULES = {"default": {}, "thesis": {"alpha_rule": "midpoint", "theta_rule": "simpson", "n_theta": 21}}


def naive_bayes(args):
    return BiasCorrectedNaiveBayes(n_features_to_select=args.k, **RULES[args.rules])


def gb(values):
    return "/".join(f"{v / 1e9:.2f}" for v in values)


def rate(cells, seconds, cores):
    return cells / seconds / cores


def auc(y, p1):
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(y, p1))


def warm_up(rules):
    """A tiny fit and prediction, so that numba's compilation (cached on disk, but loaded once per process) is
    not timed: run on the client and on every worker."""
    data = simulate_genotypes(60, 300, binarize=PRESENT, chunks=(-1, -1), random_state=0)
    X = data.X.compute(scheduler="sync")
    BiasCorrectedNaiveBayes(n_features_to_select=5, **RULES[rules]).fit(X, data.y).predict_proba(X)


def naive_bayes_on_cluster(args, report):
    n, p, k = args.n_samples, args.n_features, args.k
    local, client = cluster(args.workers, args.memory_limit)
    with local, client:
        note("warm-up (numba compilation) on the client and the workers")
        warm_up(args.rules)
        client.run(warm_up, args.rules)
        data = genotypes(args, n, p, n_test=args.n_test)
        X, y = data.X, data.y
        cells = n * p
        report["cluster"] = {"n_workers": args.workers, "threads_per_worker": 1, "memory_limit": args.memory_limit,
                             "chunks": list(X.chunksize), "n_chunks": X.npartitions}  # fmt: skip
        seconds, _, peaks = timed(client, lambda: X.map_blocks(_corner, chunks=(1, 1)).sum().compute(), "generation")
        report["generation"] = {"seconds": seconds, "peak_memory_per_worker": peaks,
                                "cells_per_s_per_core": rate(cells, seconds, args.workers)}  # fmt: skip
        model = naive_bayes(args)
        seconds, _, peaks = timed(client, lambda: model.fit(X, y), "fit")
        start = time.perf_counter()
        naive_bayes(args).fit_statistics(model.statistics_, classes=model.classes_)
        client_model = time.perf_counter() - start
        scan = max(seconds - client_model - report["generation"]["seconds"], 1e-9)
        report["fit"] = {"n": n, "p": p, "k": k, "cells": cells, "seconds": seconds,
                         "client_model_seconds": client_model, "scan_seconds": scan, "peak_memory_per_worker": peaks,
                         "cells_per_s_per_core": rate(cells, seconds, args.workers),
                         "scan_cells_per_s_per_core": rate(cells, scan, args.workers),
                         "informative_selected": int(np.isin(data.informative_features,
                                                             model.selected_features_).sum()),
                         "n_informative": int(data.informative_features.size)}  # fmt: skip
        seconds, probabilities, peaks = timed(client, lambda: model.predict_proba(data.X_test).compute(), "predict")
        report["fit"]["auc_test"] = auc(data.y_test, probabilities[:, 1])
        report["predict"] = {"n_test": args.n_test, "seconds": seconds, "peak_memory_per_worker": peaks}


def in_memory(args, report):
    n, p = args.n_samples, args.memory_features
    data = genotypes(args, n, p)
    X = data.X.compute(scheduler="threads")
    y = data.y
    start = time.perf_counter()
    counts = BinaryClassCounts.from_data(X, y)
    statistics = time.perf_counter() - start
    note("in memory")
    model = naive_bayes(args)
    start = time.perf_counter()
    model.fit(X, y)
    seconds = time.perf_counter() - start
    start = time.perf_counter()
    naive_bayes(args).fit_statistics(counts, classes=model.classes_)
    client_model = time.perf_counter() - start
    scan = max(seconds - client_model, 1e-9)
    report["in_memory"] = {"n": n, "p": p, "cells": n * p, "fit_seconds": seconds, "statistics_seconds": statistics,
                           "model_seconds": client_model, "scan_seconds": scan,
                           "scan_cells_per_s_per_core": rate(n * p, scan, 1),
                           "statistics_cells_per_s_per_core": rate(n * p, statistics, 1)}  # fmt: skip
    del X


def one_then_two_workers(args, n, p, statistics_pass, label):
    """Time ``statistics_pass()`` (which builds its lazy array and computes its statistics) on a cluster of 1 and
    then 2 workers; the seconds, peaks and the speedup, for the report."""
    rows = {}
    for workers in (1, 2):
        local, client = cluster(workers, args.memory_limit)
        with local, client:
            seconds, _, peaks = timed(client, statistics_pass, f"{label}, {workers} worker(s)")
            rows[workers] = {"seconds": seconds, "peak_memory_per_worker": peaks}
    return {"n": n, "p": p, "workers": rows, "speedup": rows[1]["seconds"] / rows[2]["seconds"]}


def scaling(args, report):
    n, p = args.n_samples, args.scaling_features

    def statistics_pass():
        data = genotypes(args, n, p)
        return BinaryClassCounts.from_dask(data.X, data.y)

    report["scaling"] = one_then_two_workers(args, n, p, statistics_pass, "scaling")


def categorical(args, report):
    """Genotype codes 0/1/2 on the cluster: the categorical model's tables against the binary counts."""
    n, p, k = args.categorical_samples, args.categorical_features, args.categorical_k

    def model():
        return BiasCorrectedCategoricalNB(n_features_to_select=k, n_levels=3, correct=False)

    tiny = simulate_genotypes(60, 300, chunks=(-1, -1), random_state=0)
    model().fit(tiny.X.compute(scheduler="sync"), tiny.y)  # numba's compilation, not timed below
    local, client = cluster(args.workers, args.memory_limit)
    with local, client:
        client.run(warm_up, args.rules)
        codes, binary = genotypes(args, n, p, binarize=None), genotypes(args, n, p)
        binary_seconds, _, _ = timed(client, lambda: BinaryClassCounts.from_dask(binary.X, binary.y), "binary counts")
        tables_seconds, tables, peaks = timed(client, lambda: CategoricalClassCounts.from_dask(codes.X, codes.y),
                                              "categorical tables")  # fmt: skip
        fitted = model()
        fit_seconds, _, _ = timed(client, lambda: fitted.fit(codes.X, codes.y), "categorical fit")
    start = time.perf_counter()
    model().fit_statistics(tables)
    client_model = time.perf_counter() - start
    n_memory = min(n, 4000)
    X = codes.X[:n_memory].compute(scheduler="threads")
    start = time.perf_counter()
    model().fit(X, codes.y[:n_memory])
    memory_seconds = time.perf_counter() - start
    report["categorical"] = {"n": n, "p": p, "k": k, "cells": n * p, "binary_counts_seconds": binary_seconds,
                             "tables_seconds": tables_seconds, "fit_seconds": fit_seconds,
                             "client_model_seconds": client_model, "peak_memory_per_worker": peaks,
                             "tables_cells_per_s_per_core": rate(n * p, tables_seconds, args.workers),
                             "memory_n": n_memory, "memory_fit_seconds": memory_seconds,
                             "memory_cells_per_s_per_core": rate(n_memory * p, memory_seconds, 1),
                             "informative_selected": int(np.isin(codes.informative_features,
                                                                 fitted.selected_features_).sum())}  # fmt: skip


def _gaussian_block(seed, n_informative, shift, labels, block_info=None):
    (i, j), ((r0, r1), (c0, c1)) = block_info[None]["chunk-location"], block_info[None]["array-location"]
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(1, i, j)))
    x = rng.standard_normal((r1 - r0, c1 - c0), dtype=np.float32)
    informative = np.arange(max(c0, 0), min(c1, n_informative)) - c0  # the first n_informative genes
    if informative.size:
        x[np.ix_(labels[r0:r1] == 1, informative)] += np.float32(shift)
    return x


def gaussian(args, report):
    from hdbayes.selection import f_statistic

    n, p, k = args.gaussian_samples, args.gaussian_features, args.k
    local, client = cluster(args.workers, args.memory_limit)
    with local, client:
        labels, X = _gaussian_data(args, n, p)
        y = da.from_array(labels, chunks=(X.chunks[0],))
        generation, _, gen_peaks = timed(client, lambda: X.map_blocks(_corner, chunks=(1, 1)).sum().compute(),
                                         "gaussian generation")
        seconds, moments, peaks = timed(client, lambda: GaussianClassMoments.from_dask(X, y, classes=(0, 1)),
                                        "gaussian moments and F")
        f = moments.f_statistic()
        selected = np.argsort(-f, kind="stable")[:k]
        check_columns = min(p, 300)
        reference = f_statistic(X[:, :check_columns].compute(), labels)
        iterations = args.gaussian_iterations
        classifier = BiasCorrectedGaussianClassifier(k, n_iter=iterations, burn_in=iterations // 8,
                                                     thin=max(1, iterations // 400), random_state=args.seed,
                                                     progress=False)  # fmt: skip
        fit_seconds, _, fit_peaks = timed(client, lambda: classifier.fit(X, y), "gaussian classifier fit")
    start = time.perf_counter()
    clone(classifier).fit_statistics(classifier.statistics_)
    model_seconds = time.perf_counter() - start
    np.testing.assert_allclose(f[:check_columns], reference, rtol=1e-6)
    cells = n * p
    report["gaussian"] = {"n": n, "p": p, "k": k, "bytes": cells * 4, "generation_seconds": generation,
                          "generation_peak_memory_per_worker": gen_peaks, "f_seconds": seconds,
                          "peak_memory_per_worker": peaks, "cells_per_s_per_core": rate(cells, seconds, args.workers),
                          "scan_cells_per_s_per_core": rate(cells, max(seconds - generation, 1e-9), args.workers),
                          "informative_selected": int(np.sum(selected < 10)),
                          "classifier_fit_seconds": fit_seconds, "classifier_peak_memory_per_worker": fit_peaks,
                          "classifier_n_iter": iterations, "classifier_model_seconds": model_seconds,
                          "classifier_informative_selected": int(np.sum(classifier.selected_features_ < 10)),
                          "f_checked_against_f_statistic_columns": check_columns}  # fmt: skip


def _gaussian_data(args, n, p):
    """The Gaussian benchmark's labels and dask array (generated on the workers, chunk by chunk, from the seed)."""
    labels = np.random.default_rng(np.random.SeedSequence(args.seed, spawn_key=(0,))).random(n) < 0.5
    labels = labels.astype(np.int64)
    rows, cols = args.gaussian_chunks
    X = da.map_blocks(_gaussian_block, args.seed, 10, 0.5, labels, dtype=np.float32,
                      chunks=da.core.normalize_chunks((rows, cols), (n, p)), meta=np.empty((0, 0), np.float32))
    return labels, X


def gaussian_in_memory(args, report):
    """The per-class moments and F of the Gaussian data in one process, on a size that fits: the scan throughput
    the chunked pass is compared with."""
    n, p = args.gaussian_samples, args.gaussian_memory_features
    labels, X = _gaussian_data(args, n, p)
    X = X.compute(scheduler="threads")
    note("gaussian in memory")
    start = time.perf_counter()
    f = GaussianClassMoments.from_data(X, labels, classes=(0, 1)).f_statistic()
    seconds = time.perf_counter() - start
    report["gaussian_in_memory"] = {"n": n, "p": p, "cells": n * p, "seconds": seconds,
                                    "cells_per_s_per_core": rate(n * p, seconds, 1),
                                    "informative_in_top": int(np.sum(np.argsort(-f, kind="stable")[:args.k] < 10))}
    del X


def gaussian_scaling(args, report):
    """The Gaussian statistics pass (generation + moments + F) on 1 and then 2 workers."""
    n, p = args.gaussian_samples, args.gaussian_scaling_features

    def statistics_pass():
        labels, X = _gaussian_data(args, n, p)
        y = da.from_array(labels, chunks=(X.chunks[0],))
        return GaussianClassMoments.from_dask(X, y, classes=(0, 1)).f_statistic()

    report["gaussian_scaling"] = one_then_two_workers(args, n, p, statistics_pass, "gaussian scaling")


def row(*cells):
    print("| " + " | ".join(str(c) for c in cells) + " |")


def print_naive_bayes(report):
    c, fit, gen, pred = report["cluster"], report["fit"], report["generation"], report["predict"]
    print(f"\nLocalCluster: {c['n_workers']} workers × 1 thread, memory_limit {c['memory_limit']}, chunks "
          f"{c['chunks']} ({c['n_chunks']} chunks)")
    print(f"BiasCorrectedNaiveBayes(n_features_to_select={fit['k']}, {report['rules']} rules) on n = {fit['n']} × "
          f"p = {fit['p']} binary genotypes ({fit['cells']:.3g} cells) generated on the workers; "
          "cells / s / core = n·p / (seconds × workers)\n")
    row("pass", "seconds", "peak memory per worker (GB)", "cells / s / core")
    row("---", "---:", "---:", "---:")
    row("generation only", f"{gen['seconds']:.1f}", gb(gen["peak_memory_per_worker"]),
        f"{gen['cells_per_s_per_core']:.3g}")
    row("fit (generation + scan + client model)", f"{fit['seconds']:.1f}", gb(fit["peak_memory_per_worker"]),
        f"{fit['cells_per_s_per_core']:.3g}")
    row("  of which client model (selection, adjustment factor)", f"{fit['client_model_seconds']:.1f}", "", "")
    row("  scan = fit − model − generation", f"{fit['scan_seconds']:.1f}", "",
        f"{fit['scan_cells_per_s_per_core']:.3g}")
    row(f"predict_proba of {pred['n_test']} held-out rows", f"{pred['seconds']:.1f}",
        gb(pred["peak_memory_per_worker"]), "")
    print(f"\n{fit['informative_selected']} of the {fit['n_informative']} informative variants selected; "
          f"test AUC {fit['auc_test']:.3f}")


def print_scaling(title, s):
    print(f"\n{title} at n = {s['n']} × p = {s['p']}: 1 worker {s['workers'][1]['seconds']:.1f} s, 2 workers "
          f"{s['workers'][2]['seconds']:.1f} s, speedup {s['speedup']:.2f}")


def print_report(report):
    print(f"\nLoad average (1 min) before: {report['load_before']:.1f}, after: {report['load_after']:.1f}")
    if "fit" in report:
        print_naive_bayes(report)
    if "in_memory" in report:
        m = report["in_memory"]
        print(f"\nIn memory, one process: n = {m['n']} × p = {m['p']} ({m['cells']:.3g} cells): fit "
              f"{m['fit_seconds']:.2f} s, of which model {m['model_seconds']:.2f} s; scan {m['scan_seconds']:.2f} s = "
              f"{m['scan_cells_per_s_per_core']:.3g} cells / s / core (statistics alone "
              f"{m['statistics_cells_per_s_per_core']:.3g}).")
        if "fit" in report:
            ratio = report["fit"]["scan_cells_per_s_per_core"] / m["scan_cells_per_s_per_core"]
            print(f"Chunked scan / in-memory scan throughput per core: {ratio:.2f}")
    if "scaling" in report:
        print_scaling("Scaling, statistics pass (generation + scan)", report["scaling"])
    if "gaussian" in report:
        g = report["gaussian"]
        print(f"\nGaussian: n = {g['n']} × p = {g['p']} dense float32 ({g['bytes'] / 1e9:.1f} GB) generated on the "
              f"workers; generation {g['generation_seconds']:.1f} s; GaussianClassMoments.from_dask + F, k = {g['k']}: "
              f"{g['f_seconds']:.1f} s ({g['cells_per_s_per_core']:.3g} cells / s / core; scan alone "
              f"{g['scan_cells_per_s_per_core']:.3g}), peak {gb(g['peak_memory_per_worker'])} GB per worker; "
              f"{g['informative_selected']} of 10 informative genes in the top {g['k']}; F equal to f_statistic on the "
              f"first {g['f_checked_against_f_statistic_columns']} genes (rtol 1e-6)")
        print(f"BiasCorrectedGaussianClassifier({g['k']}, n_iter={g['classifier_n_iter']}).fit on the dask array "
              f"(moments on the workers, X read once; selection and sampler on the client from the moments): "
              f"{g['classifier_fit_seconds']:.1f} s, peak {gb(g['classifier_peak_memory_per_worker'])} GB per worker; "
              f"{g['classifier_informative_selected']} of 10 informative genes selected; the client's part alone "
              f"(fit_statistics on the gathered moments) {g['classifier_model_seconds']:.1f} s")
    if "gaussian_in_memory" in report:
        m = report["gaussian_in_memory"]
        print(f"\nGaussian in memory, one process: n = {m['n']} × p = {m['p']} ({m['cells']:.3g} cells): moments + F "
              f"{m['seconds']:.2f} s = {m['cells_per_s_per_core']:.3g} cells / s / core")
        if "gaussian" in report:
            ratio = report["gaussian"]["scan_cells_per_s_per_core"] / m["cells_per_s_per_core"]
            print(f"Gaussian chunked scan / in-memory throughput per core: {ratio:.2f}")
    if "gaussian_scaling" in report:
        print_scaling("Gaussian scaling, statistics pass (generation + moments + F)", report["gaussian_scaling"])
    if "categorical" in report:
        c = report["categorical"]
        print(f"\nCategorical: genotype codes 0/1/2, n = {c['n']} × p = {c['p']} generated on the workers; "
              f"CategoricalClassCounts.from_dask {c['tables_seconds']:.1f} s ({c['tables_cells_per_s_per_core']:.3g} "
              f"cells / s / core, peak {gb(c['peak_memory_per_worker'])} GB per worker) against "
              f"BinaryClassCounts.from_dask {c['binary_counts_seconds']:.1f} s on the same cluster (ratio "
              f"{c['tables_seconds'] / c['binary_counts_seconds']:.2f}); BiasCorrectedCategoricalNB({c['k']}, "
              f"n_levels=3, correct=False).fit on the dask array {c['fit_seconds']:.1f} s, of which the client's model "
              f"{c['client_model_seconds']:.2f} s; {c['informative_selected']} of the informative variants selected. "
              f"In memory (n = {c['memory_n']}): {c['memory_fit_seconds']:.2f} s = "
              f"{c['memory_cells_per_s_per_core']:.3g} cells / s / core.")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="n = 600, p = 2e4 (seconds), every pass")
    parser.add_argument("--n-samples", type=int, default=20_000)
    parser.add_argument("--n-features", type=int, default=1_000_000)
    parser.add_argument("--n-test", type=int, default=2000)
    parser.add_argument("--k", type=int, default=100, help="n_features_to_select")
    parser.add_argument("--rules", choices=sorted(RULES), default="default",
                        help="the model's integration rules: the defaults, or the thesis's 30 midpoint α and 21 "
                             "Simpson θ points (alpha_rule='midpoint', theta_rule='simpson', n_theta=21)")
    parser.add_argument("--chunks", type=int, nargs=2, default=[2000, 65536], metavar=("ROWS", "VARIANTS"))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-limit", default="4GB")
    parser.add_argument("--informative", type=int, default=20)
    parser.add_argument("--odds-ratio", type=float, default=1.5)
    parser.add_argument("--memory-features", type=int, default=50_000, help="p of the in-memory comparison")
    parser.add_argument("--scaling-features", type=int, default=100_000, help="p of the 1 → 2 worker scaling run")
    parser.add_argument("--gaussian-samples", type=int, default=100_000)
    parser.add_argument("--gaussian-features", type=int, default=30_000)
    parser.add_argument("--gaussian-iterations", type=int, default=6000,
                        help="n_iter of BiasCorrectedGaussianClassifier (burn-in n_iter/8, thinned to 400 draws)")
    parser.add_argument("--gaussian-chunks", type=int, nargs=2, default=[10_000, 5000], metavar=("ROWS", "GENES"))
    parser.add_argument("--gaussian-memory-features", type=int, default=3000,
                        help="p of the Gaussian in-memory comparison (n = --gaussian-samples, float32)")
    parser.add_argument("--gaussian-scaling-features", type=int, default=6000,
                        help="p of the Gaussian 1 → 2 worker scaling run")
    parser.add_argument("--categorical-samples", type=int, default=20_000,
                        help="n of the categorical (genotype codes 0/1/2) pass")
    parser.add_argument("--categorical-features", type=int, default=100_000, help="p of the categorical pass")
    parser.add_argument("--categorical-k", type=int, default=10, help="n_features_to_select of the categorical pass")
    parser.add_argument("--skip", nargs="*", default=[],
                        choices=["naive-bayes", "memory", "scaling", "gaussian", "gaussian-memory", "gaussian-scaling",
                                 "categorical"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="write every figure to this file")
    args = parser.parse_args(argv)
    if args.quick:
        args.n_samples, args.n_features, args.n_test, args.chunks = 600, 20_000, 200, [250, 8192]
        args.memory_features, args.scaling_features = 20_000, 20_000
        args.gaussian_samples, args.gaussian_features, args.gaussian_chunks = 3000, 2000, [1000, 700]
        args.gaussian_iterations = 200
        args.gaussian_memory_features, args.gaussian_scaling_features = 1000, 1400
        args.categorical_samples, args.categorical_features = 600, 20_000
    report = {"argv": sys.argv[1:] if argv is None else argv, "rules": args.rules, "load_before": os.getloadavg()[0]}
    if "naive-bayes" not in args.skip:
        naive_bayes_on_cluster(args, report)
    if "memory" not in args.skip:
        in_memory(args, report)
    if "scaling" not in args.skip:
        scaling(args, report)
    if "gaussian" not in args.skip:
        gaussian(args, report)
    if "gaussian-memory" not in args.skip:
        gaussian_in_memory(args, report)
    if "gaussian-scaling" not in args.skip:
        gaussian_scaling(args, report)
    if "categorical" not in args.skip:
        categorical(args, report)
    report["load_after"] = os.getloadavg()[0]
    print_report(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
