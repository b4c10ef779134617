"""Threads for the compiled kernels: how many cores this process may use, and one map over parts in threads.

The kernels compiled by :func:`hdbayes._numba.jit` release the GIL, so a batch split into independent parts runs
in parallel in threads of one process. Each part's result is computed on its own, so the result never depends on
the number of threads.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

__all__ = ["map_in_threads", "threads_for", "usable_cores"]


def usable_cores():
    """Number of CPU cores this process may use (affinity mask and cgroup quota respected)."""
    from joblib import cpu_count

    return max(int(cpu_count()), 1)


#: The most threads a kernel batch is split into (the kernels' loops are memory-light; more helps little).
MAX_KERNEL_THREADS = 4


def threads_for(n_parts, work, threshold):
    """How many threads a batch of ``work`` steps, divisible into ``n_parts`` parts, should use: 1 (run it in the
    calling thread) below ``threshold`` steps or on one core, else up to the usable cores, ``n_parts`` and
    :data:`MAX_KERNEL_THREADS`."""
    if work < threshold:
        return 1
    return max(min(usable_cores(), MAX_KERNEL_THREADS, int(n_parts)), 1)


def map_in_threads(function, parts):
    """``[function(part) for part in parts]``, one thread per part when there are several."""
    parts = list(parts)
    if len(parts) < 2:
        return [function(part) for part in parts]
    with ThreadPoolExecutor(len(parts)) as pool:
        return list(pool.map(function, parts))
