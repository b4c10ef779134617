"""Tests for hdbayes.datasets.load_microarray: the sixteen datamicroarray files.

No test touches the network unless a file is absent from the shared data folder (then its download is
tried into a temporary cache, and the test is skipped if that fails). Downloads tested on purpose are served by
a patched ``urlopen``.
"""

from __future__ import annotations

import io
import os
import re
import urllib.request
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hdbayes.datasets import MICROARRAY_DATASETS, DataDownloadError, _fetch, load_microarray, microarray, real
from hdbayes.exceptions import InputTypeError, InputValueError


def _shared_data_dir() -> Path | None:
    candidates = []
    if os.environ.get("HDBAYES_DATA"):
        candidates.append(Path(os.environ["HDBAYES_DATA"]).expanduser())
    candidates.append(Path(__file__).resolve().parents[2] / "shared" / "data")
    for folder in candidates:
        if (folder / "microarray" / "MANIFEST.md").is_file():
            return folder
    return None


SHARED = _shared_data_dir()
MANIFEST = None if SHARED is None else (SHARED / "microarray" / "MANIFEST.md").read_text()


def _no_network(*args, **kwargs):
    raise AssertionError("unexpected network access")


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.delenv("HDBAYES_DATA", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    real._parsed_cache.clear()
    yield tmp_path
    real._parsed_cache.clear()


@pytest.fixture(scope="module")
def download_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("microarray-downloads")


def _load(name, download_dir, **kwargs):
    """Load from the shared folder; when the file is absent there, download it (skip if impossible)."""
    if SHARED is not None and (SHARED / "microarray" / f"{name}.RData").is_file():
        return load_microarray(name, data_home=SHARED, download=False, **kwargs)
    try:
        return load_microarray(name, data_home=download_dir, **kwargs)
    except DataDownloadError as exc:  # pragma: no cover - only without the shared data and the network
        pytest.skip(f"{name}.RData is absent and could not be downloaded: {exc}")


def _manifest_rows() -> dict[str, dict]:
    """The data manifest's table: file stem -> sha256, shape, classes, transform."""
    rows = {}
    for line in MANIFEST.splitlines():
        match = re.match(r"\| `(\w+)\.RData` \| (\w{64}) \| (\d+) × (\d+) \| ([^|]+) \| ([^|]+) \|", line)
        if match:
            stem, sha, n, p, classes, transform = match.groups()
            # labels may contain spaces (nakayama's): each is the text before " (N)", after the previous ", "
            counts = tuple((label, int(count)) for label, count in re.findall(r"([^,]+?) \((\d+)\)(?:, |\s*$)",
                                                                               classes.strip()))
            floor = re.search(r"max\(x, (\d+)\)", transform)
            rows[stem] = {"sha256": sha, "shape": (int(n), int(p)), "classes": counts,
                          "transform": f"log2floor{floor.group(1)}" if floor else "none"}  # fmt: skip
    return rows


def test_names():
    assert MICROARRAY_DATASETS == ("alon", "borovecki", "chowdary", "christensen", "golub", "gordon", "gravier", "khan",
                                   "nakayama", "pomeroy", "shipp", "singh", "sorlie", "su", "subramanian",
                                   "west")  # fmt: skip
    for name in MICROARRAY_DATASETS:  # the docstrings' tables agree with the loader's table
        info = microarray._INFO[name]
        classes = r",\s+".join(rf"{re.escape(label)} \({count}\)" for label, count in info.classes)
        row = rf"^\s*{name}\s+{info.shape[0]} x {info.shape[1]}\s+{classes}\s+{info.transform}$"
        assert re.search(row, load_microarray.__doc__, flags=re.MULTILINE), name
        assert re.search(row, microarray.__doc__, flags=re.MULTILINE), name


@pytest.mark.skipif(MANIFEST is None, reason="the data manifest microarray/MANIFEST.md is not available")
def test_registry_and_table_match_the_manifest():
    rows = _manifest_rows()
    assert sorted(rows) == list(MICROARRAY_DATASETS)
    for name, row in rows.items():
        entry = _fetch.REGISTRY[f"microarray/{name}.RData"]
        assert entry.sha256 == row["sha256"]
        assert entry.url == (
            "https://raw.githubusercontent.com/ramhiser/datamicroarray/"
            f"a95f6f68ed3debf48ee54f198435fa12aa655b16/data/{name}.RData"
        )
        info = microarray._INFO[name]
        assert (info.shape, info.classes, info.transform) == (row["shape"], row["classes"], row["transform"]), name


@pytest.mark.parametrize("name", MICROARRAY_DATASETS)
def test_every_data_set_loads_as_the_manifest_says(env, monkeypatch, name, download_dir):
    info = microarray._INFO[name]
    data = _load(name, download_dir)
    assert list(data)[:4] == ["X", "y", "feature_names", "DESCR"]
    assert data.X.shape == info.shape and data.X.dtype == np.float64 and data.X.flags.writeable
    assert np.isfinite(data.X).all()
    assert data.y.shape == (info.shape[0],) and data.y.dtype == object
    assert all(isinstance(label, str) for label in data.y)
    assert [(c, int(np.sum(data.y == c))) for c in data.target_names] == list(info.classes)
    assert data.transform == info.transform and data.name == name
    assert name in data.DESCR and str(info.shape[1]) in data.DESCR
    assert data.feature_names is None or data.feature_names.shape == (info.shape[1],)
    assert Path(data.filename).name == f"{name}.RData" and Path(data.filename).parent.name == "microarray"
    if info.transform != "none":
        floor = 1.0 if info.transform == "log2floor1" else 20.0
        assert data.X.min() >= np.log2(floor)


def test_transforms(env, download_dir):
    raw = _load("golub", download_dir, transform="none")
    assert raw.transform == "none" and raw.X.min() < 0  # raw MAS4 values, negatives present
    default = _load("golub", download_dir)
    np.testing.assert_array_equal(default.X, np.log2(np.maximum(raw.X, 20.0)))
    floor1 = _load("golub", download_dir, transform="log2floor1")
    assert floor1.transform == "log2floor1"
    np.testing.assert_array_equal(floor1.X, np.log2(np.maximum(raw.X, 1.0)))
    assert np.isclose(default.X[raw.X <= 20], np.log2(20)).all() and (raw.X <= 20).sum() > 1000
    alon_raw = _load("alon", download_dir, transform="none")
    np.testing.assert_array_equal(_load("alon", download_dir).X, np.log2(np.maximum(alon_raw.X, 1.0)))
    khan = _load("khan", download_dir)
    assert khan.transform == "none"
    np.testing.assert_array_equal(khan.X, _load("khan", download_dir, transform="none").X)
    np.testing.assert_array_equal(_load("khan", download_dir, transform="log2floor20").X, np.log2(20.0))


def test_returns_copies(env, download_dir):
    a = _load("sorlie", download_dir)
    a.X[:] = 0.0
    a.y[:] = "x"
    b = _load("sorlie", download_dir)
    assert np.abs(b.X).sum() > 0 and set(b.y) == {"1", "2", "3", "4", "5"}


def _sorlie_bytes(download_dir) -> bytes:
    return Path(_load("sorlie", download_dir).filename).read_bytes()


def test_corrupted_copy_is_refused(env, monkeypatch, download_dir):
    content = bytearray(_sorlie_bytes(download_dir))
    content[len(content) // 2] ^= 0x01
    folder = env / "data" / "microarray"
    folder.mkdir(parents=True)
    (folder / "sorlie.RData").write_bytes(bytes(content))
    monkeypatch.setattr(urllib.request, "urlopen", _no_network)
    with pytest.raises(ValueError, match="checksum mismatch for data file 'microarray/sorlie.RData'"):
        load_microarray("sorlie", data_home=env / "data")
    monkeypatch.setenv("HDBAYES_DATA", str(env / "data"))
    with pytest.raises(ValueError, match="checksum mismatch"):
        load_microarray("sorlie")
    assert (folder / "sorlie.RData").read_bytes() == bytes(content)  # never downloaded over


def test_found_under_hdbayes_data_then_downloaded_to_the_cache(env, monkeypatch, download_dir):
    content = _sorlie_bytes(download_dir)
    calls = []

    class Response(io.BytesIO):
        def __enter__(self):
            return self

    def serve(url, timeout=None):
        calls.append(url)
        return Response(content)

    monkeypatch.setattr(urllib.request, "urlopen", serve)
    monkeypatch.setenv("HDBAYES_DATA", str(env / "empty"))
    data = load_microarray("sorlie")
    assert calls == [_fetch.REGISTRY["microarray/sorlie.RData"].url]
    assert Path(data.filename) == env / "xdg" / "hdbayes" / "microarray" / "sorlie.RData"
    assert data.X.shape == (85, 456)
    folder = env / "empty" / "microarray"
    folder.mkdir(parents=True)
    (folder / "sorlie.RData").write_bytes(content)
    monkeypatch.setattr(urllib.request, "urlopen", _no_network)
    assert Path(load_microarray("sorlie").filename) == folder / "sorlie.RData"  # HDBAYES_DATA comes first


def test_missing_without_download(env, monkeypatch):
    monkeypatch.setattr(urllib.request, "urlopen", _no_network)
    with pytest.raises(FileNotFoundError, match="microarray/alon.RData"):
        load_microarray("alon", data_home=env, download=False)


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        (dict(name="colon"), InputValueError, "unknown microarray data set 'colon'; known: alon, borovecki, chowdary"),
        (dict(name=3), InputTypeError, "name must be one of"),
        (dict(name="alon", transform="log"), InputValueError, "transform must be one of"),
        (dict(name="alon", transform=None), InputTypeError, "transform must be one of"),
    ],
)
def test_bad_arguments(env, monkeypatch, kwargs, error, message):
    monkeypatch.setattr(urllib.request, "urlopen", _no_network)
    with pytest.raises(error, match=message):
        load_microarray(**kwargs, data_home=env, download=False)


def _write_rdata(path: Path, name: str, x, y):
    rdata = pytest.importorskip("rdata")
    rdata.write_rda(path, {name: {"x": x, "y": y}})


def test_user_file(tmp_path):
    x = np.array([[0.5, 30.0], [2.0, -4.0], [8.0, 100.0]])
    y = pd.Categorical(["b", "a", "b"], categories=["b", "a", "unused"])
    _write_rdata(tmp_path / "mine.RData", "mine", x, y)
    data = microarray._read_microarray_file(tmp_path / "mine.RData", transform="log2floor1")
    np.testing.assert_array_equal(data.X, np.log2(np.maximum(x, 1.0)))
    assert data.y.tolist() == ["b", "a", "b"] and data.target_names.tolist() == ["b", "a"]
    assert data.transform == "log2floor1" and data.name == "mine"
    with pytest.raises(ValueError, match="object 'other' not found"):
        _write_rdata(tmp_path / "other.RData", "mine", x, y)
        microarray._read_microarray_file(tmp_path / "other.RData")
    with pytest.raises(ValueError, match="length 3"):
        _write_rdata(tmp_path / "short.RData", "short", x, pd.Categorical(["a", "b"]))
        microarray._read_microarray_file(tmp_path / "short.RData")
    with pytest.raises(InputValueError, match="transform"):
        microarray._read_microarray_file(tmp_path / "mine.RData", transform="default")
