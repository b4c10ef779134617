"""Genotype data as chunked dask arrays: a case–control simulator and a PLINK ``.bed`` loader.

Both return the one Bunch layout of :mod:`hdbayes.datasets` with ``X`` a ``dask.array`` of
minor-allele counts (0, 1, 2) per person (row) and variant (column), each chunk made where it is
computed (on a worker of a ``distributed`` cluster), so that the matrix is never held by one process.

:func:`simulate_genotypes`
    Hardy–Weinberg genotypes with per-variant allele frequencies and a few case–control variants,
    generated chunk by chunk from a seed (eqs. G1–G4 below). Same seed, same matrix, whatever
    the chunks and the scheduler.
:func:`read_plink`
    A PLINK 1 ``.bed``/``.bim``/``.fam`` triple read lazily through ``bed-reader`` (the optional
    extra ``hdbayes[plink]``): each chunk is read from the file by the task that needs it.

``binarize="minor-allele-present"`` gives the 0/1 features of the binary models (a count ≥ 1 is 1),
``binarize=None`` the counts 0/1/2, the categorical features of
:class:`~hdbayes.discrete.BayesianCategoricalNB`. dask (and bed-reader) are imported only when
these functions are called.
"""

from __future__ import annotations

import numbers
import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from hdbayes._validation import check_count, check_generator, check_positive
from hdbayes.exceptions import InputTypeError, InputValueError

from ._common import check_probability, check_sizes, data_bunch, file_key, numbered_names

if TYPE_CHECKING:
    from typing import Literal

    from sklearn.utils import Bunch

    from hdbayes._validation import RandomStateLike

__all__ = ["read_plink", "simulate_genotypes"]

MINOR_ALLELE_PRESENT = "minor-allele-present"
_TILE = 4096  # variants per seeding tile (a multiple of 4: four 16-bit uniforms per 64-bit word)
_UNIT = 65536  # the uniforms are 16-bit integers u in [0, 65536)
_WORDS = _TILE // 4  # 64-bit words per row of a tile


# -- seeds ------------------------------------------------------------------------------------------
def _root_key(random_state):
    """(entropy, spawn key) of the root seed: an int is used as SeedSequence(int); None takes fresh
    entropy; a Generator (or RandomState) gives one drawn integer (advancing it)."""
    if isinstance(random_state, np.random.SeedSequence):
        return random_state.entropy, tuple(random_state.spawn_key)
    if random_state is None:
        return np.random.SeedSequence().entropy, ()
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, (bool, np.bool_)):
        if random_state < 0:
            raise InputValueError(f"random_state must be a non-negative int, got {random_state}")
        return int(random_state), ()
    return int(check_generator(random_state).integers(0, 2**63)), ()


def _child(key, index):
    """Child ``index`` of the root seed: equal to ``SeedSequence(entropy).spawn(index + 1)[index]``."""
    entropy, spawn_key = key
    return np.random.SeedSequence(entropy, spawn_key=spawn_key + (int(index),))


_LABELS, _DESIGN, _FIRST_TILE = 0, 1, 2  # children of the root: labels, informative variants, tile t at 2 + t


def _labels(key, start, stop, case_fraction):
    """y_i = [v_i < case fraction] for rows start..stop-1 (eq. G1): v_i the i-th float64 of the labels' stream."""
    bits = np.random.PCG64(_child(key, _LABELS))
    bits.advance(start)  # one 64-bit word per float64 uniform
    return (np.random.Generator(bits).random(stop - start) < case_fraction).astype(np.int64)


def _tile_frequencies(key, tile, low, high):
    """The allele frequencies q_j of the _TILE variants of ``tile`` (eq. G2), from the tile's first child."""
    frequencies = _child(key, _FIRST_TILE + tile).spawn(2)[0]
    return np.random.Generator(np.random.PCG64(frequencies)).uniform(low, high, _TILE)


def _thresholds(q):
    """(T1, T2) of eq. (G3): a genotype is [u ≥ T1] + [u ≥ T2], so P(g ≥ 1) ≈ 1 − (1 − q)², P(g = 2) ≈ q²."""
    return np.rint(_UNIT * (1.0 - q) ** 2).astype(np.int64), np.rint(_UNIT * (1.0 - q * q)).astype(np.int64)


def _case_frequency(q, odds_ratio):
    """The cases' allele frequency of an informative variant: allelic odds ratio ``odds_ratio`` (eq. G4)."""
    return odds_ratio * q / (1.0 - q + odds_ratio * q)


def _design(key, n_features, n_informative):
    """The informative variants (sorted column indices), from the root's design stream."""
    rng = np.random.Generator(np.random.PCG64(_child(key, _DESIGN)))
    return np.sort(rng.choice(n_features, size=n_informative, replace=False)).astype(np.int64)


def _tile_uniforms(key, tile, start, stop):
    """The 16-bit uniforms u_ij of rows start..stop-1 of ``tile``, shape (rows, _TILE): row i is words
    i·_TILE/4 ... of the tile's PCG64 stream (its second child), each word four little-endian 16-bit u."""
    bits = np.random.PCG64(_child(key, _FIRST_TILE + tile).spawn(2)[1])
    bits.advance(start * _WORDS)
    words = bits.random_raw((stop - start) * _WORDS).astype("<u8", copy=False)
    return words.view("<u2").reshape(stop - start, _TILE)


def _compact(thresholds):
    """Thresholds as uint16 when they fit (so that ``u >= T`` runs on 16-bit integers), else as int32."""
    return thresholds.astype(np.uint16 if thresholds.max(initial=0) < _UNIT else np.int32)


def _genotype_block(rows, columns, *, key, low, high, informative, odds_ratio, case_fraction, binary):
    """The genotypes of rows ``rows`` = (start, stop) and columns ``columns`` = (start, stop)."""
    r0, r1 = rows
    c0, c1 = columns
    y = _labels(key, r0, r1, case_fraction).astype(bool)
    out = np.empty((r1 - r0, c1 - c0), dtype=np.int8)
    for tile in range(c0 // _TILE, (c1 - 1) // _TILE + 1):
        first = tile * _TILE
        lo, hi = max(c0, first) - first, min(c1, first + _TILE) - first  # the tile's columns in the block
        u = _tile_uniforms(key, tile, r0, r1)[:, lo:hi]
        q = _tile_frequencies(key, tile, low, high)[lo:hi]
        t1, t2 = _thresholds(q)
        target = out[:, first + lo - c0:first + hi - c0]
        np.greater_equal(u, _compact(t1), out=target, casting="unsafe")
        if not binary:
            target += u >= _compact(t2)
        special = informative[(informative >= first + lo) & (informative < first + hi)] - first - lo
        if special.size and y.any():
            case_t1, case_t2 = _thresholds(_case_frequency(q[special], odds_ratio))
            cases = u[np.ix_(y, special)]
            genotype = (cases >= case_t1).astype(np.int8)
            if not binary:
                genotype += cases >= case_t2
            target[np.ix_(y, special)] = genotype
    return out


def _check_chunks(chunks, n_rows, n_features):
    """(row chunk size, column chunk size) from an int pair (−1: the whole axis)."""
    if not isinstance(chunks, (tuple, list)) or len(chunks) != 2:
        raise InputValueError(f"chunks must be a pair (rows, variants) of chunk sizes, got {chunks!r}")
    sizes = []
    for name, value, total in zip(("rows", "variants"), chunks, (n_rows, n_features)):
        if isinstance(value, numbers.Integral) and not isinstance(value, bool) and value == -1:
            sizes.append(max(total, 1))
        else:
            sizes.append(check_count(f"chunks ({name})", value))
    return tuple(sizes)


def _genotype_matrix(key, start, stop, n_features, chunks, options):
    """The dask array of rows start..stop-1, chunked ``chunks``, each chunk made by its task."""
    import dask.array as da
    from dask.base import tokenize

    rows, cols = chunks
    row_chunks = tuple(min(rows, stop - s) for s in range(start, stop, rows)) or (0,)
    col_chunks = tuple(min(cols, n_features - s) for s in range(0, n_features, cols))
    row_starts = np.cumsum((start,) + row_chunks[:-1])
    col_starts = np.cumsum((0,) + col_chunks[:-1])

    def block(block_info=None):
        i, j = block_info[None]["chunk-location"]
        r0, c0 = int(row_starts[i]), int(col_starts[j])
        return _genotype_block((r0, r0 + row_chunks[i]), (c0, c0 + col_chunks[j]), key=key, **options)

    return da.map_blocks(block, chunks=(row_chunks, col_chunks), dtype=np.int8, meta=np.empty((0, 0), np.int8),
                         name=f"genotypes-{tokenize(key, start, stop, n_features, chunks, options)}")


_DESCR_SIMULATED = """Simulated case–control genotypes (hdbayes.datasets.simulate_genotypes).

{n} training and {m} test persons (rows) × {p} variants (columns), a dask array of {kind};
{k} informative variants (allelic odds ratio {odds_ratio:g} in the cases), the others independent of
the class; allele frequencies uniform on [{low:g}, {high:g}]; chunks {chunks}; generated chunk by chunk from
the seed (entropy {entropy}).
"""


def simulate_genotypes(
    n_samples: int,
    n_features: int,
    *,
    n_informative: int = 10,
    odds_ratio: float = 1.5,
    allele_frequency: tuple[float, float] = (0.05, 0.5),
    case_fraction: float = 0.5,
    n_test: int = 0,
    binarize: Literal["minor-allele-present"] | None = None,
    chunks: tuple[int, int] = (2000, 8 * _TILE),
    random_state: RandomStateLike = None,
) -> Bunch:
    r"""Simulate case–control genotypes as a dask array, each chunk generated on the worker computing it.

    Person i (row) has class y_i (1 = case) and, at variant j (column), g_ij ∈ {0, 1, 2} copies of
    the minor allele, under Hardy–Weinberg equilibrium with allele frequency q_j (or q_j′ in the
    cases at an informative variant):

    .. math::

        y_i &= [v_i < \pi]                                                    && \text{(G1)} \\
        q_j &\sim \mathrm{Uniform}(a, b)                                       && \text{(G2)} \\
        g_{ij} &= [u_{ij} \ge T_1(q)] + [u_{ij} \ge T_2(q)],\quad
            T_1 = \mathrm{round}(2^{16}(1-q)^2),\ T_2 = \mathrm{round}(2^{16}(1-q^2)) && \text{(G3)} \\
        q_j' &= \frac{\mathrm{OR}\, q_j}{1 - q_j + \mathrm{OR}\, q_j}            && \text{(G4)}

    with u_ij uniform on the 16-bit integers {0, ..., 2^16 − 1}, so that P(g = 0) = (1 − q)², P(g = 1)
    = 2q(1 − q) and P(g = 2) = q² to 2^-16; q = q_j′ (eq. G4, allelic odds ratio OR) for the cases at
    the ``n_informative`` informative variants and q = q_j otherwise. Variants are independent given
    the class (no linkage disequilibrium).

    **Reproducibility.** The randomness is laid out on a fixed grid, not on the chunks: the root seed
    (``random_state``) has children (:meth:`numpy.random.SeedSequence.spawn`) 0 = the labels (v_i, the
    i-th float64 of its PCG64 stream), 1 = the choice of informative variants and 2 + t = tile t of
    4096 variants, whose own two children give the tile's q_j and its u_ij (row i of the tile is
    words 1024·i ... of a PCG64 stream, reached by ``advance``). A chunk therefore computes its
    entries alone, from (random_state, its position), and it is guaranteed that:

    - the matrix depends on ``random_state``, ``n_features`` and the model's parameters only: **not
      on ``chunks``** (any row and column chunking, any scheduler or number of workers, gives the
      same matrix, bit for bit);
    - the rows are a prefix-stable stream: ``X_test`` holds rows ``n_samples`` ... of the same
      stream, so that ``simulate_genotypes(n + m, ...).X`` is ``X`` and ``X_test`` stacked, and
      the first rows do not depend on how many follow;
    - the labels are computed from their own stream without generating X (``y`` is a numpy array).

    Column chunks that are multiples of 4096 waste nothing; other widths regenerate a tile's
    uniforms in each chunk it overlaps (the result is the same).

    Parameters
    ----------
    n_samples : int
        Training persons (rows of ``X``).
    n_features : int
        Variants (columns).
    n_informative : int, default=10
        Variants whose allele frequency differs between cases and controls (eq. G4), chosen uniformly
        among the columns (``informative_features`` of the result).
    odds_ratio : float, default=1.5
        Allelic odds ratio OR of the informative variants (1: no signal).
    allele_frequency : (float, float), default=(0.05, 0.5)
        The range (a, b) of the allele frequencies q_j, within [0, 1].
    case_fraction : float, default=0.5
        π, the probability that a person is a case.
    n_test : int, default=0
        Test persons (``X_test``, ``y_test``; none when 0).
    binarize : {None, "minor-allele-present"}, default=None
        None: the counts 0/1/2; ``"minor-allele-present"``: [g ≥ 1] (0/1).
    chunks : (int, int), default=(2000, 32768)
        Rows and variants per chunk (−1: the whole axis).
    random_state : None, int, SeedSequence or numpy Generator
        The root seed. An int (or a SeedSequence) is used as is; a Generator gives a drawn integer;
        None takes fresh entropy (recorded in ``DESCR`` and ``seed_entropy``).

    Returns
    -------
    Bunch
        ``X`` (dask array, int8, ``n_samples`` × ``n_features``), ``y`` (int64 0/1), ``X_test``,
        ``y_test`` (when ``n_test`` > 0), ``feature_names`` (``snp0``, ...), ``DESCR``, then
        ``informative_features`` (sorted column indices), ``control_allele_frequency`` and
        ``case_allele_frequency`` (q_j and q_j′ of the informative variants), ``allele_frequency``
        (a lazy dask array of all q_j) and ``seed_entropy``.

    Examples
    --------
    >>> from hdbayes.datasets import simulate_genotypes
    >>> data = simulate_genotypes(100, 10_000, n_informative=5, chunks=(40, 4096), random_state=0)
    >>> data.X.shape, data.X.chunks[0], data.X.dtype.name
    ((100, 10000), (40, 40, 20), 'int8')
    >>> int(data.X[:, data.informative_features].max().compute()) <= 2
    True
    """
    n_samples, n_test = check_sizes(n_samples, n_test, test_minimum=0)
    n_features = check_count("n_features", n_features)
    n_informative = check_count("n_informative", n_informative, minimum=0)
    if n_informative > n_features:
        raise InputValueError(f"n_informative ({n_informative}) cannot exceed n_features ({n_features})")
    odds_ratio = check_positive("odds_ratio", odds_ratio)
    case_fraction = check_probability("case_fraction", case_fraction)
    if not isinstance(allele_frequency, (tuple, list)) or len(allele_frequency) != 2:
        raise InputValueError(f"allele_frequency must be a pair (low, high), got {allele_frequency!r}")
    low, high = (check_probability("allele_frequency", value) for value in allele_frequency)
    if low > high:
        raise InputValueError(f"allele_frequency must be (low, high) with low <= high, got {allele_frequency!r}")
    binary = _check_genotype_binarize(binarize)
    chunks = _check_chunks(chunks, n_samples + n_test, n_features)
    key = _root_key(random_state)
    informative = _design(key, n_features, n_informative)
    options = {"low": low, "high": high, "informative": informative, "odds_ratio": odds_ratio,
               "case_fraction": case_fraction, "binary": binary}  # fmt: skip

    import dask.array as da
    from dask.base import tokenize

    X = _genotype_matrix(key, 0, n_samples, n_features, chunks, options)
    X_test = y_test = None
    if n_test:
        X_test = _genotype_matrix(key, n_samples, n_samples + n_test, n_features, chunks, options)
        y_test = _labels(key, n_samples, n_samples + n_test, case_fraction)
    control = np.array([_tile_frequencies(key, j // _TILE, low, high)[j % _TILE] for j in informative])
    col_chunks = X.chunks[1]
    starts = np.cumsum((0,) + col_chunks[:-1])

    def frequencies(block_info=None):
        j = block_info[None]["chunk-location"][0]
        c0, c1 = int(starts[j]), int(starts[j] + col_chunks[j])
        tiles = range(c0 // _TILE, (c1 - 1) // _TILE + 1)
        q = np.concatenate([_tile_frequencies(key, t, low, high) for t in tiles])
        return q[c0 - tiles[0] * _TILE:c1 - tiles[0] * _TILE]

    allele = da.map_blocks(frequencies, chunks=(col_chunks,), dtype=np.float64, meta=np.empty(0),
                           name=f"allele-frequency-{tokenize(key, n_features, chunks, low, high)}")
    descr = _DESCR_SIMULATED.format(
        n=n_samples, m=n_test, p=n_features, k=n_informative, odds_ratio=odds_ratio, low=low, high=high,
        chunks=chunks, entropy=key[0], kind="0/1 minor-allele presence" if binary else "minor-allele counts 0/1/2",
    )  # fmt: skip
    return data_bunch(
        X, _labels(key, 0, n_samples, case_fraction), X_test, y_test,
        feature_names=numbered_names(n_features, "snp"), DESCR=descr, informative_features=informative,
        control_allele_frequency=control, case_allele_frequency=_case_frequency(control, odds_ratio),
        allele_frequency=allele, seed_entropy=key[0],
    )  # fmt: skip


def _check_genotype_binarize(binarize):
    if binarize is None:
        return False
    if isinstance(binarize, str) and binarize == MINOR_ALLELE_PRESENT:
        return True
    raise InputValueError(f"binarize must be None (counts 0/1/2) or {MINOR_ALLELE_PRESENT!r}, got {binarize!r}")


# -- PLINK .bed files ---------------------------------------------------------------------------------
_BED_MAGIC = b"\x6c\x1b\x01"  # PLINK 1 .bed, variant-major
_MISSING_OPTIONS = ("nan", "raise")


class _BedChunks:
    """A PLINK .bed file as an array-like for ``dask.array.from_array``: indexing by a pair of slices
    reads those persons and variants from the file (in the task that asks for them), as int8 counts
    with missing calls NaN (float32) or an error."""

    ndim = 2

    def __init__(self, path, shape, *, count_A1, binary, missing):
        self.path, self.shape = os.fspath(path), tuple(shape)
        self.count_A1, self.binary, self.missing = count_A1, binary, missing
        self.dtype = np.dtype(np.float32 if missing == "nan" else np.int8)

    def __getitem__(self, index):
        from bed_reader import open_bed

        rows, cols = index
        n, p = self.shape
        with open_bed(self.path, iid_count=n, sid_count=p, count_A1=self.count_A1, num_threads=1) as bed:
            values = bed.read(index=np.s_[rows, cols], dtype="int8", order="C", num_threads=1)
        absent = values == -127  # bed-reader's missing value for int8
        if self.binary:
            values = np.minimum(values, 1, out=values)
        if self.missing == "nan":
            values = values.astype(np.float32)
            values[absent] = np.nan
        elif absent.any():
            i, j = np.argwhere(absent)[0]
            raise InputValueError(
                f"{self.path} has a missing genotype call for person {rows.indices(n)[0] + i} (row) at variant "
                f"{cols.indices(p)[0] + j} (column); pass missing='nan' to read missing calls as NaN"
            )
        return values


def _bed_files(path):
    path = Path(os.fspath(path))
    prefix = path.with_suffix("") if path.suffix in (".bed", ".bim", ".fam") else path
    files = {ext: prefix.with_name(prefix.name + "." + ext) for ext in ("bed", "bim", "fam")}
    for file in files.values():
        if not file.is_file():
            raise FileNotFoundError(f"PLINK file {file} not found (read_plink needs the .bed, .bim and .fam of "
                                    f"{prefix})")
    return files


def _phenotype(values, fam):
    """The .fam phenotype as float64 with NaN for missing (−9, or 0 / NA for case–control), case–control
    coded 1/2 recoded 0 (control) / 1 (case); None when every person's phenotype is missing."""
    text = np.char.strip(np.asarray(values, dtype=str))
    number = np.full(text.shape, np.nan)
    present = ~np.isin(text, ("-9", "NA", "na", "nan", ""))
    try:
        number[present] = text[present].astype(np.float64)
    except ValueError as error:
        raise InputValueError(f"{fam}: the phenotype (6th column) holds a non-number ({error})") from None
    number[number == -9] = np.nan
    known = number[np.isfinite(number)]
    if np.isin(known, (0.0, 1.0, 2.0)).all():  # case–control: 1 control, 2 case, 0 missing
        number[number == 0] = np.nan
        number -= 1.0
    return None if np.isnan(number).all() else number


def read_plink(
        path: str | os.PathLike[str], *, chunks: tuple[int, int] = (2000, 8 * _TILE),
        binarize: Literal["minor-allele-present"] | None = None, missing: Literal["nan", "raise"] = "nan",
        count_A1: bool = True) -> Bunch:
    """Read a PLINK 1 ``.bed``/``.bim``/``.fam`` triple lazily into a chunked dask array (needs ``bed-reader``).

    Only the ``.fam`` and ``.bim`` (persons and variants) are read here; every chunk of ``X`` is read
    from the ``.bed`` by the task that computes it (on a ``distributed`` worker, the file must be at the
    same path there), through ``bed_reader.open_bed`` with one thread.

    Parameters
    ----------
    path : str or path-like
        The ``.bed`` file, or the common prefix of the three files.
    chunks : (int, int), default=(2000, 32768)
        Persons and variants per chunk (−1: the whole axis).
    binarize : {None, "minor-allele-present"}, default=None
        None: the counts 0/1/2 of the counted allele (categorical features);
        ``"minor-allele-present"``: [count ≥ 1] (0/1, the binary models' features).
    missing : {"nan", "raise"}, default="nan"
        A missing call: NaN (X is float32), or an error naming the file, the person and the variant when
        its chunk is computed (X is int8, four times smaller).
    count_A1 : bool, default=True
        Count allele 1 of the ``.bim`` (the minor allele in files written by PLINK 1.9, whose A1 is the
        minor allele unless told otherwise); False counts allele 2.

    Returns
    -------
    Bunch
        ``X`` (dask array, persons × variants), ``y`` (the ``.fam`` phenotype as float64, NaN where
        missing (−9; 0 as well for case–control), a case–control phenotype coded 1/2 recoded 0 = control,
        1 = case; None when all are missing), ``feature_names`` (variant ids of the ``.bim``), ``DESCR``,
        then ``sample_ids`` and ``family_ids`` (of the ``.fam``), ``chromosome``, ``bp_position``,
        ``allele_1``, ``allele_2`` (of the ``.bim``) and ``files``.
    """
    try:
        from bed_reader import open_bed
    except ImportError as error:  # pragma: no cover - the optional extra is installed in CI
        raise ImportError("read_plink needs bed-reader: pip install 'hdbayes[plink]'") from error
    import dask.array as da
    from dask.base import tokenize

    binary = _check_genotype_binarize(binarize)
    if missing not in _MISSING_OPTIONS:
        raise InputValueError(f"missing must be one of {_MISSING_OPTIONS}, got {missing!r}")
    if not isinstance(count_A1, (bool, np.bool_)):
        raise InputTypeError(f"count_A1 must be True or False, got {count_A1!r}")
    files = _bed_files(path)
    with open(files["bed"], "rb") as bed_file:
        magic = bed_file.read(3)
    if magic != _BED_MAGIC:
        raise InputValueError(f"{files['bed']} is not a PLINK 1 variant-major .bed file (first bytes {magic!r})")
    try:
        with open_bed(files["bed"], count_A1=bool(count_A1), num_threads=1) as bed:
            n, p = bed.shape
            props = {name: getattr(bed, name) for name in
                     ("iid", "fid", "pheno", "sid", "chromosome", "bp_position", "allele_1", "allele_2")}  # fmt: skip
    except (ValueError, IndexError) as error:
        raise InputValueError(f"{files['fam']} / {files['bim']}: cannot be read as PLINK files ({error})") from None
    expected = 3 + p * -(-n // 4)
    if files["bed"].stat().st_size != expected:
        raise InputValueError(
            f"{files['bed']} has {files['bed'].stat().st_size} bytes, but {n} persons (.fam) × {p} variants (.bim) "
            f"need {expected}: the files do not belong together or the .bed is truncated"
        )
    if n == 0 or p == 0:
        raise InputValueError(f"{files['bed']} holds {n} persons × {p} variants; at least one of each is required")
    rows, cols = _check_chunks(chunks, n, p)
    source = _BedChunks(files["bed"].resolve(), (n, p), count_A1=bool(count_A1), binary=binary, missing=missing)
    name = "plink-" + tokenize(file_key(files["bed"]), rows, cols, binary, missing, bool(count_A1))
    X = da.from_array(source, chunks=(rows, cols), asarray=False, fancy=False, lock=False, name=name,
                      meta=np.empty((0, 0), dtype=source.dtype))  # fmt: skip
    kind = "0/1 allele presence" if binary else "allele counts 0/1/2"
    descr = (
        f"PLINK genotypes read from {files['bed']} (hdbayes.datasets.read_plink).\n\n{n} persons × {p} variants, "
        f"{kind} of allele {'1' if count_A1 else '2'}, missing calls {'NaN' if missing == 'nan' else 'refused'}; "
        f"chunks ({rows}, {cols}), each read from the file by its task.\n"
    )
    return data_bunch(
        X, _phenotype(props["pheno"], files["fam"]), feature_names=np.asarray(props["sid"], dtype=object),
        DESCR=descr, sample_ids=np.asarray(props["iid"], dtype=object),
        family_ids=np.asarray(props["fid"], dtype=object), chromosome=np.asarray(props["chromosome"], dtype=object),
        bp_position=np.asarray(props["bp_position"]), allele_1=np.asarray(props["allele_1"], dtype=object),
        allele_2=np.asarray(props["allele_2"], dtype=object), files={k: os.fspath(v) for k, v in files.items()},
    )  # fmt: skip
