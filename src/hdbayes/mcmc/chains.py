"""One chain runner and one trace for every MCMC estimator of hdbayes.

A model supplies one function that runs a single chain::

    def chain(rng, schedule, advance):
        ...                      # n_iter iterations, drawing only from ``rng``
        return ChainDraws(posterior={...}, warmup={...}, sample_stats={...})

where ``rng`` is the chain's own :class:`numpy.random.Generator` (pass it into a numba
kernel: numba draws from it directly), ``schedule`` the :class:`Schedule` of
iterations (which iterations are burn-in, which are saved) and ``advance(n)`` reports
``n`` finished iterations to the progress bar (a compiled chain calls it once at the
end). :func:`run_chains` gives every chain its own generator (seeds drawn from
``random_state``), runs the chains in threads (``n_jobs``; the kernels release the GIL)
or one after another, shows one progress bar over all iterations of all chains, and
stacks the chains into a :class:`Trace`: arrays shaped (chain, draw, ...), with
``to_inference_data`` for ArviZ (posterior: the saved post-burn-in draws only;
``warmup_posterior``: what the model recorded during burn-in; ``sample_stats``: the
sampler's own statistics).

The results of a chain depend only on its seed, never on ``n_jobs`` or on the order
in which the threads run.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import threading
import warnings
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import numpy as np

from hdbayes._validation import check_count, check_generator, check_memory, check_n_jobs
from hdbayes.exceptions import InputValueError

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    import arviz as az

    from hdbayes._validation import RandomStateLike

__all__ = ["ChainDraws", "Schedule", "Trace", "chain_memory", "chain_seeds", "check_chain_memory", "run_chains"]

#: Bytes a chain costs besides its draws (its seed, generator and result objects), for :func:`chain_memory`.
CHAIN_OVERHEAD = 1024


@dataclasses.dataclass(frozen=True)
class Schedule:
    """Iterations of one chain: ``n_iter`` in all, the first ``burn_in`` discarded, then every ``thin``-th saved.

    The saved iterations are ``burn_in + thin``, ``burn_in + 2·thin``, … (1-based).

    Built from user parameters, it refuses settings that leave no draw, naming them.

    Parameters
    ----------
    n_iter : int
        Iterations of the chain (≥ 1).
    burn_in : int, default=0
        Iterations discarded at the start (≥ 0).
    thin : int, default=1
        Every ``thin``-th iteration after the burn-in is saved (≥ 1).
    """

    n_iter: int
    burn_in: int = 0
    thin: int = 1

    def __post_init__(self):
        object.__setattr__(self, "n_iter", check_count("n_iter", self.n_iter))
        object.__setattr__(self, "burn_in", check_count("burn_in", self.burn_in, minimum=0))
        object.__setattr__(self, "thin", check_count("thin", self.thin))
        if self.n_saved < 1:
            raise InputValueError(
                f"n_iter={self.n_iter}, burn_in={self.burn_in}, thin={self.thin} leave no draws: "
                "need n_iter >= burn_in + thin"
            )

    @property
    def n_saved(self) -> int:
        """Number of saved draws per chain, ``(n_iter − burn_in) // thin``."""
        return (self.n_iter - self.burn_in) // self.thin

    @property
    def saved_iterations(self) -> np.ndarray:
        """0-based indices of the saved iterations, shape (n_saved,)."""
        return np.arange(self.burn_in + self.thin - 1, self.n_iter, self.thin)[: self.n_saved]

    @property
    def slots(self) -> np.ndarray:
        """For every iteration, its index among the saved draws or −1: int64, shape (n_iter,).

        What a compiled chain reads instead of doing the index arithmetic.
        """
        slots = np.full(self.n_iter, -1, dtype=np.int64)
        slots[self.saved_iterations] = np.arange(self.n_saved)
        return slots

    def slot(self, iteration: int) -> int:
        """Index among the saved draws of 0-based ``iteration``, or −1 if it is not saved.

        Parameters
        ----------
        iteration : int
            A 0-based iteration of the chain.

        Returns
        -------
        int
            Its index among the saved draws, or −1.
        """
        offset = iteration + 1 - self.burn_in
        if iteration < self.burn_in or offset % self.thin or offset // self.thin > self.n_saved:
            return -1
        return offset // self.thin - 1


@dataclasses.dataclass
class ChainDraws:
    """What one chain returns: dicts of arrays whose first axis is the draw.

    ``posterior`` holds the ``schedule.n_saved`` saved draws of each variable;
    ``warmup`` anything recorded during burn-in (for example every burn-in value of a
    hyperparameter); ``sample_stats`` per-draw statistics of the sampler (acceptance
    rates, step counts, log densities).

    Parameters
    ----------
    posterior : mapping of str to ndarray
        The saved draws of each variable, shape (n_saved, ...).
    warmup : mapping of str to ndarray, optional
        Values recorded during burn-in, each with the draw as first axis.
    sample_stats : mapping of str to ndarray, optional
        Per-draw statistics of the sampler, shape (n_saved, ...).
    """

    posterior: Mapping[str, np.ndarray]
    warmup: Mapping[str, np.ndarray] = dataclasses.field(default_factory=dict)
    sample_stats: Mapping[str, np.ndarray] = dataclasses.field(default_factory=dict)


class Trace:
    """Draws of several chains: every array shaped (chain, draw, ...).

    Parameters
    ----------
    posterior, warmup, sample_stats : dict of str to ndarray
        Variables by group; arrays shaped (n_chains, n_draws, ...). ``warmup`` may have
        another number of draws than ``posterior``.
    dims : dict of str to list of str, optional
        Names of the axes after (chain, draw), per variable (ArviZ's ``dims``).
    coords : dict, optional
        Coordinates of those axes (ArviZ's ``coords``).
    monitored : sequence of str, optional
        Scalar variables worth a convergence summary (:meth:`summary`), in order.
    schedule : Schedule, optional
        The iterations the draws came from.
    """

    def __init__(
            self, posterior: Mapping[str, np.ndarray], warmup: Mapping[str, np.ndarray] | None = None,
            sample_stats: Mapping[str, np.ndarray] | None = None, *, dims: dict[str, list[str]] | None = None,
            coords: dict[str, Any] | None = None, monitored: Sequence[str] = (), schedule: Schedule | None = None
    ) -> None:  # fmt: skip
        self.posterior = dict(posterior)
        self.warmup = dict(warmup or {})
        self.sample_stats = dict(sample_stats or {})
        self.dims = dict(dims or {})
        self.coords = dict(coords or {})
        self.monitored = tuple(monitored)
        self.schedule = schedule
        shapes = {name: values.shape[:2] for name, values in self.posterior.items()}
        if len(set(shapes.values())) > 1:
            raise ValueError(f"posterior variables differ in (chain, draw) shape: {shapes}")
        for name in self.monitored:
            if name not in self.posterior:
                raise ValueError(f"monitored variable {name!r} is not in the posterior")

    @classmethod
    def from_chains(cls, chains: Sequence[ChainDraws], **kwargs: Any) -> Trace:
        """Stack a list of :class:`ChainDraws` (one per chain) along a new first axis.

        Parameters
        ----------
        chains : list of ChainDraws
            The draws of each chain, all with the same variables and numbers of draws.
        **kwargs
            Passed on to the constructor (``dims``, ``coords``, ``monitored``, ``schedule``).

        Returns
        -------
        Trace
            Every variable of shape (n_chains, n_draws, ...).
        """

        def stack(group):
            names = list(getattr(chains[0], group))
            return {name: np.stack([np.asarray(getattr(chain, group)[name]) for chain in chains]) for name in names}

        return cls(stack("posterior"), stack("warmup"), stack("sample_stats"), **kwargs)

    @property
    def n_chains(self) -> int:
        """Number of chains (the first axis of every posterior array)."""
        return next(iter(self.posterior.values())).shape[0] if self.posterior else 0

    @property
    def n_draws(self) -> int:
        """Saved draws per chain."""
        return next(iter(self.posterior.values())).shape[1] if self.posterior else 0

    def __getitem__(self, name):
        return self.posterior[name]

    def flat(self, name: str) -> np.ndarray:
        """The draws of ``name`` with the chains concatenated.

        Parameters
        ----------
        name : str
            A variable of ``posterior``.

        Returns
        -------
        ndarray of shape (chain·draw, ...)
            Its draws, chain after chain.
        """
        values = self.posterior[name]
        return values.reshape((-1,) + values.shape[2:])

    def to_inference_data(self) -> az.InferenceData:
        """The trace as an ArviZ ``InferenceData``.

        Returns
        -------
        arviz.InferenceData
            ``posterior`` (post-burn-in draws only), ``warmup_posterior`` (when anything was
            recorded during burn-in) and ``sample_stats``, all with dims (chain, draw, ...).
        """
        import arviz as az

        return az.from_dict(
            posterior=self.posterior,
            warmup_posterior=self.warmup or None,
            sample_stats=self.sample_stats or None,
            save_warmup=bool(self.warmup),
            dims={name: list(axes) for name, axes in self.dims.items()},
            coords=self.coords or None,
        )

    def summary(self, var_names: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
        """Convergence summary of scalar variables (the monitored ones by default).

        Parameters
        ----------
        var_names : list of str, optional
            The scalar variables to summarise (default: the monitored ones).

        Returns
        -------
        dict of str to dict
            Per variable: ``mean``, ``sd``, ``ess_bulk`` and, with two or more chains,
            ``r_hat`` (rank-normalised split R-hat; NaN with one chain): ArviZ's ``ess(method="bulk")`` and
            ``rhat()``, computed without importing ArviZ (:mod:`hdbayes.mcmc._diagnostics`).
        """
        from hdbayes.mcmc._diagnostics import bulk_ess, rank_rhat

        names = list(self.monitored if var_names is None else var_names)
        result = {}
        for name in names:
            values = np.asarray(self.posterior[name], dtype=float)
            if values.ndim != 2:
                raise ValueError(f"summary needs scalar variables; {name!r} has shape {values.shape[2:]} per draw")
            with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
                # a variable constant over the draws has no defined ESS or R-hat: NaN, without a warning
                warnings.simplefilter("ignore", RuntimeWarning)
                ess = bulk_ess(values)
                r_hat = rank_rhat(values)
            result[name] = {"mean": float(values.mean()), "sd": float(values.std()), "ess_bulk": ess, "r_hat": r_hat}
        return result

    def __repr__(self):
        variables = ", ".join(f"{name}{tuple(v.shape[2:]) or ''}" for name, v in self.posterior.items())
        return f"Trace(n_chains={self.n_chains}, n_draws={self.n_draws}, posterior=[{variables}])"


def chain_memory(schedule: Schedule, n_chains: int, draw_bytes: int, warmup_bytes: int = 0) -> float:
    """Estimate of the memory ``n_chains`` chains of ``schedule`` need, in bytes.

    n_chains · (2 · n_saved · draw_bytes + 2 · burn_in · warmup_bytes + :data:`CHAIN_OVERHEAD`) + 8 · n_iter:
    every chain's saved draws (and what it records during burn-in) are held twice at the end, in the
    chains' results and in the stacked :class:`Trace`; the 8 · n_iter bytes are the schedule's table of
    slots (:attr:`Schedule.slots`).

    Parameters
    ----------
    schedule : Schedule
        The iterations of each chain.
    n_chains : int
        Number of chains.
    draw_bytes : int
        Bytes of one saved draw of all variables and sampler statistics.
    warmup_bytes : int, default=0
        Bytes recorded per burn-in iteration.

    Returns
    -------
    float
        The estimate (a float: it may exceed int64).
    """
    per_chain = 2.0 * schedule.n_saved * draw_bytes + 2.0 * schedule.burn_in * warmup_bytes + CHAIN_OVERHEAD
    return float(n_chains) * per_chain + 8.0 * schedule.n_iter


def check_chain_memory(schedule: Schedule, n_chains: int, draw_bytes: int = 8, warmup_bytes: int = 0) -> float:
    """Refuse chains whose draws cannot fit in memory (:func:`chain_memory`), before anything is allocated.

    The message names ``n_chains`` and the schedule's ``n_iter``, ``burn_in`` and ``thin`` with the estimate
    (see :func:`hdbayes._validation.check_memory`).

    Parameters
    ----------
    schedule : Schedule
        The iterations of each chain.
    n_chains : int
        Number of chains (≥ 1).
    draw_bytes : int, default=8
        Bytes of one saved draw (default: one number, the least any model saves).
    warmup_bytes : int, default=0
        Bytes recorded per burn-in iteration.

    Returns
    -------
    float
        The estimate in bytes.

    Raises
    ------
    InputValueError
        When the estimate exceeds the memory this process can use.
    """
    n_chains = check_count("n_chains", n_chains)
    return check_memory(
        chain_memory(schedule, n_chains, draw_bytes, warmup_bytes),
        f"n_chains = {n_chains} chains of n_iter = {schedule.n_iter} iterations (burn_in = {schedule.burn_in}, "
        f"thin = {schedule.thin}: {schedule.n_saved} saved draws of {int(draw_bytes)} bytes per chain)",
        purpose="the saved draws",
    )


def chain_seeds(random_state: RandomStateLike, n_chains: int) -> list[int]:
    """The seeds of ``n_chains`` chains, drawn from ``random_state``.

    Parameters
    ----------
    random_state : int, numpy.random.Generator or None
        The source of the seeds; a Generator is advanced, so that the caller can draw more
        from it afterwards.
    n_chains : int
        Number of chains (≥ 1).

    Returns
    -------
    list of int
        One seed per chain, in [0, 2³¹ − 1).
    """
    rng = check_generator(random_state)
    return [int(seed) for seed in rng.integers(0, 2**31 - 1, size=check_count("n_chains", n_chains))]


def _show_progress(progress):
    if progress is None:  # only on an interactive terminal
        return bool(getattr(sys.stderr, "isatty", lambda: False)()) and not os.environ.get("CI")
    return bool(progress)


def run_chains(
        chain: Callable, schedule: Schedule, *, n_chains: int = 1, random_state: RandomStateLike = None,
        n_jobs: int | None = None, progress: bool | None = None, desc: str = "MCMC",
        trace_options: dict[str, Any] | None = None, seeds: Sequence[int] | None = None, draw_bytes: int = 8,
        warmup_bytes: int = 0) -> Trace:  # fmt: skip
    """Run ``n_chains`` independent chains of ``chain(rng, schedule, advance) -> ChainDraws``.

    Parameters
    ----------
    chain : callable
        Runs one chain (see the module docstring). It must draw only from ``rng``.
    schedule : Schedule
        Iterations per chain.
    n_chains : int, default=1
        Number of independent chains (≥ 1).
    random_state : int, Generator or None
        Seeds of the chains (see :func:`chain_seeds`); ignored when ``seeds`` is given.
    n_jobs : int or None
        Chains run at once in threads (``None``: one after another; −1: as many as
        chains), capped at the usable cores and at the number of chains
        (:func:`hdbayes._validation.check_n_jobs`; under another joblib backend, at the number of
        chains only). Results do not depend on it.
    progress : bool or None
        One progress bar over all iterations (``None``: only on an interactive terminal).
    desc : str
        Label of the progress bar.
    trace_options : dict, optional
        Keyword arguments of :class:`Trace` (``dims``, ``coords``, ``monitored``).
    seeds : sequence of int, optional
        The chains' seeds, when the caller has drawn them.
    draw_bytes, warmup_bytes : int, default=8, 0
        Bytes of one saved draw and of one burn-in iteration's record: the chains are refused before they
        start when they would not fit in memory (:func:`check_chain_memory`).

    Returns
    -------
    Trace
        The saved draws of every chain.
    """
    from joblib import Parallel, delayed
    from joblib._parallel_backends import SequentialBackend, ThreadingBackend
    from joblib.parallel import get_active_backend

    check_chain_memory(schedule, n_chains if seeds is None else max(len(seeds), 1), draw_bytes, warmup_bytes)
    if seeds is None:
        seeds = chain_seeds(random_state, n_chains)
    seeds = [int(seed) for seed in seeds]
    parallel = len(seeds) > 1 and n_jobs != 1
    backend = get_active_backend(prefer="threads")[0] if parallel else None
    # processes (loky, Dask) cannot share a progress bar: they report whole chains as they finish
    shared = backend is None or isinstance(backend, (ThreadingBackend, SequentialBackend))
    if parallel and shared:  # threads of this process: no more than its cores (nor than the chains)
        n_jobs = check_n_jobs(n_jobs, len(seeds))
    elif parallel and n_jobs is not None and n_jobs > 0:  # workers elsewhere: no more than the chains
        n_jobs = min(int(n_jobs), len(seeds))
    bar = _progress_bar(len(seeds) * schedule.n_iter, desc, progress)
    lock = threading.Lock()

    def advance(n=1):
        with lock:
            bar.update(n)

    def one(seed, report):
        draws = chain(np.random.default_rng(seed), schedule, report)
        for name, values in draws.posterior.items():
            if np.shape(values)[0] != schedule.n_saved:
                raise RuntimeError(f"chain returned {np.shape(values)[0]} draws of {name!r}, not {schedule.n_saved}")
        return draws

    try:
        if not parallel:
            chains = [one(seed, advance) for seed in seeds]
        elif shared:
            chains = Parallel(n_jobs=n_jobs, prefer="threads")(delayed(one)(seed, advance) for seed in seeds)
        else:
            chains = []
            results = Parallel(n_jobs=n_jobs, prefer="threads", return_as="generator")(
                delayed(one)(seed, _ignore) for seed in seeds
            )
            for draws in results:
                chains.append(draws)
                bar.update(schedule.n_iter)
    finally:
        bar.close()
    return Trace.from_chains(chains, schedule=schedule, **(trace_options or {}))


class _NoBar:
    """The progress bar that is not shown (tqdm is not even imported)."""

    def update(self, n=1):
        pass

    def close(self):
        pass


def _progress_bar(total, desc, progress):
    """A tqdm bar of ``total`` iterations if ``progress`` asks for one (see :func:`run_chains`), else a no-op."""
    if not _show_progress(progress):
        return _NoBar()
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, leave=False)


def _ignore(n=1):
    """Progress callback of a chain run in another process."""
