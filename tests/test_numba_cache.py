"""The compiled-kernel cache of :mod:`hdbayes._numba` heals itself and loads only what this user wrote.

Every test compiles a tiny kernel (two signatures, so two entries) in fresh processes with
``NUMBA_CACHE_DIR`` in ``tmp_path``, and the package fingerprint pointed at the kernel's own
folder, so that an edit elsewhere in the package during the run cannot turn a hit into a miss.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap

import numpy as np
import pytest

pytestmark = pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="needs compiled code")
posix_only = pytest.mark.skipif(os.name != "posix", reason="the key's privacy is checked by owner and mode bits")

_KERNEL = """
import numpy as np
from hdbayes._numba import jit


@jit
def total(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += np.log1p(x[i] * x[i])
    return s
"""

_SCRIPT = """
import json, pathlib, sys
sys.path.insert(0, {root!r})
import hdbayes._numba as hn
hn._PACKAGE = pathlib.Path({root!r}) / "kernels"
import numpy as np
from kernels.kern import total
results = [total(np.arange(1.0, 6.0)), total(np.arange(1, 6))]
stats = total.stats
print(json.dumps({{"results": results, "hits": sum(stats.cache_hits.values()),
                  "misses": sum(stats.cache_misses.values())}}))
"""

# the exact values: sum of log1p(k^2) for k = 1..5, for a float and an int array
EXPECTED = float(np.sum(np.log1p(np.arange(1.0, 6.0) ** 2)))


def _run(root, cache):
    """Run the kernel in a fresh process; its results and cache hits and misses (the process must exit 0)."""
    script = textwrap.dedent(_SCRIPT.format(root=str(root)))
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert out.returncode == 0, f"exit status {out.returncode}\n{out.stderr[-3000:]}"
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["results"] == pytest.approx([EXPECTED, EXPECTED], rel=1e-12)
    return report


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """The kernel's package, and a cache that a first process filled (both entries compiled: two misses)."""
    root = tmp_path_factory.mktemp("numba_cache")
    package = root / "kernels"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "kern.py").write_text(_KERNEL)
    report = _run(root, root / "cache")
    assert (report["hits"], report["misses"]) == (0, 2), report
    return root, report["results"]


@pytest.fixture
def cache(source, tmp_path):
    """A copy of the filled cache (the key keeps its mode) for one test to damage."""
    shutil.copytree(source[0] / "cache", tmp_path / "cache")
    return tmp_path / "cache"


def _files(cache, pattern):
    files = sorted(cache.rglob(pattern))
    assert files, f"no {pattern} in the cache"
    return files


def _assert_healed(source, cache):
    """The damaged entries were recompiled and rewritten: a next process loads both of them."""
    report = _run(source[0], cache)
    assert (report["hits"], report["misses"]) == (2, 0), report


def test_a_second_process_loads_both_entries(source, cache):
    assert len(_files(cache, "*.nbc")) == 2
    report = _run(source[0], cache)
    assert (report["hits"], report["misses"]) == (2, 0), report
    assert report["results"] == source[1]  # bit for bit


def test_a_truncated_data_entry_is_a_miss_and_is_rewritten(source, cache):
    for path in _files(cache, "*.nbc"):
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
    report = _run(source[0], cache)  # numba alone: UnpicklingError "pickle data was truncated", in every later run
    assert report["misses"] == 2, report
    _assert_healed(source, cache)


def test_a_garbage_index_is_a_miss_and_is_rewritten(source, cache):
    (index,) = _files(cache, "*.nbi")
    index.write_bytes(b"garbage\n")
    report = _run(source[0], cache)  # numba alone: ValueError from unpickling the version, in every later run
    assert report["misses"] == 2, report
    _assert_healed(source, cache)


def test_an_entry_corrupted_in_place_is_never_loaded(source, cache):
    """Bytes overwritten inside the machine code, same file size: numba alone loads it and dies (SIGSEGV)."""
    for path in _files(cache, "*.nbc"):
        data = bytearray(path.read_bytes())
        start = data.find(b"\x7fELF")  # the object code; its first section starts after the 64-byte header
        start = start + 64 if start >= 0 else len(data) // 2
        data[start : start + 256] = bytes(256)
        path.write_bytes(bytes(data))
    report = _run(source[0], cache)
    assert report["misses"] == 2, report
    _assert_healed(source, cache)


def test_entries_swapped_between_signatures_are_not_loaded(source, cache):
    """Each entry is bound to its signature: the float64 code is never run on an int64 array (numba alone: 0.0)."""
    first, second = _files(cache, "*.nbc")
    a, b = first.read_bytes(), second.read_bytes()
    first.write_bytes(b)
    second.write_bytes(a)
    report = _run(source[0], cache)
    assert report["misses"] == 2, report
    _assert_healed(source, cache)


def test_an_entry_written_under_another_key_is_not_loaded(source, cache):
    (key,) = _files(cache, "*.key")
    key.write_bytes(bytes(len(key.read_bytes())))  # another user's key, or a forger's guess: no entry verifies
    report = _run(source[0], cache)
    assert report["misses"] == 2, report
    _assert_healed(source, cache)


@posix_only
def test_a_key_readable_by_others_is_replaced(source, cache):
    (key,) = _files(cache, "*.key")
    old = key.read_bytes()
    key.chmod(0o644)  # others may have read it: it is no longer a secret
    report = _run(source[0], cache)
    assert report["misses"] == 2, report
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert key.read_bytes() != old
    _assert_healed(source, cache)


def test_concurrent_first_compiles_agree_and_leave_a_loadable_cache(source, tmp_path):
    cache = tmp_path / "cache"  # empty: both processes compile, create the key and write the entries at once
    script = textwrap.dedent(_SCRIPT.format(root=str(source[0])))
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    command = [sys.executable, "-c", script]
    pipes = dict(stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    processes = [subprocess.Popen(command, **pipes) for _ in range(2)]
    outputs = [process.communicate() for process in processes]
    for process, (_, stderr) in zip(processes, outputs):
        assert process.returncode == 0, stderr[-3000:]
    results = [json.loads(stdout.strip().splitlines()[-1])["results"] for stdout, _ in outputs]
    assert results[0] == results[1] == source[1]  # bit for bit
    assert len(_files(cache, "*.key")) == 1  # both processes signed with one key
    report = _run(source[0], cache)
    assert (report["hits"], report["misses"]) == (2, 0), report
    assert report["results"] == source[1]


# -- in process: the key file and the signed records ---------------------------------------------------------------


@posix_only
def test_the_key_is_created_private_once_and_a_link_is_not_followed(tmp_path):
    from hdbayes._numba import _USER, _cache_key, _read_key

    folder = tmp_path / "cache"
    folder.mkdir()
    key = _cache_key(str(folder))
    (path,) = folder.glob("*.key")
    assert path.name == f"hdbayes-{_USER}.key" and len(key) == 32
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and path.read_bytes() == key
    assert _read_key(path) == key
    assert list(folder.iterdir()) == [path]  # no temporary file left behind

    target = tmp_path / "known"
    target.write_bytes(bytes(32))
    target.chmod(0o600)
    other = tmp_path / "other"
    other.mkdir()
    (other / path.name).symlink_to(target)  # a planted link to a private file whose content others know
    assert _read_key(other / path.name) is None
    fresh = _cache_key(str(other))
    assert fresh != bytes(32) and not (other / path.name).is_symlink()
    assert target.read_bytes() == bytes(32)  # the link's target is left alone


def test_a_signed_record_is_read_back_and_a_tampered_one_is_not(tmp_path):
    from hdbayes._numba import _MAGIC, _SignedCacheFile

    file = _SignedCacheFile(str(tmp_path), "kern.f-1-u0.py311", "fingerprint")
    file.save(("sig", "arch"), b"compiled object")
    assert file.load(("sig", "arch")) == b"compiled object"
    assert file.load(("other sig", "arch")) is None
    stale = _SignedCacheFile(str(tmp_path), "kern.f-1-u0.py311", "another fingerprint")  # the package changed
    assert stale.load(("sig", "arch")) is None
    (data,) = tmp_path.glob("*.nbc")
    raw = bytearray(data.read_bytes())
    raw[-1] ^= 1
    data.write_bytes(bytes(raw))
    assert file.load(("sig", "arch")) is None
    file.save(("sig", "arch"), b"compiled object")  # the miss is overwritten in place
    assert file.load(("sig", "arch")) == b"compiled object" and len(list(tmp_path.glob("*.nbc"))) == 1

    # signed with this user's key yet not a record (a bug, not damage): reported, and a miss
    body = b"not a pickle"
    tag = file._tag(file._secret(), file._index_name, body)
    (tmp_path / file._index_name).write_bytes(_MAGIC + tag + body)
    with pytest.warns(RuntimeWarning, match="ignoring the cache entry"):
        assert file.load(("sig", "arch")) is None


def test_the_key_is_the_kernel_not_its_file(tmp_path):
    """Each kernel is keyed by its own stamp (its code and the globals it uses), not by the file or the package:
    lines added above it and a new module keep its entries; a global it uses, changed, recompiles it."""
    package = tmp_path / "kernels"
    package.mkdir()
    (package / "__init__.py").write_text("")
    kernel = _KERNEL.replace("np.log1p(x[i] * x[i])", "np.log1p(SCALE * x[i] * x[i])") + "\nSCALE = 1.0\n"
    (package / "kern.py").write_text(kernel)
    cache = tmp_path / "cache"
    report = _run(tmp_path, cache)
    assert (report["hits"], report["misses"]) == (0, 2), report
    (package / "other.py").write_text("VALUE = 1\n")
    edited = '"""Edited above the kernel."""\n\n\n' + kernel + "\n\ndef helper():\n    return 2\n"
    (package / "kern.py").write_text(edited)
    report = _run(tmp_path, cache)
    assert (report["hits"], report["misses"]) == (2, 0), report  # numba's own cache: two misses
    (package / "kern.py").write_text(kernel.replace("SCALE = 1.0", "SCALE = 1"))  # same results, another constant
    report = _run(tmp_path, cache)
    assert (report["hits"], report["misses"]) == (0, 2), report


def test_kernel_stamps_follow_callees_and_ignore_line_numbers():
    """The stamp of a kernel changes with its callee's code and with a constant it uses, not with its position."""
    from hdbayes._numba import jit, kernel_stamp

    def make(offset, lines_above, scale):
        namespace = {"jit": jit, "SCALE": scale}
        source = "\n" * lines_above + textwrap.dedent(
            f"""
            @jit
            def callee(x):
                return x + {offset}

            @jit
            def caller(x):
                return SCALE * callee(x)
            """
        )
        exec(compile(source, "<kernels>", "exec"), namespace)
        return kernel_stamp(namespace["caller"])

    base = make(1.0, 0, 2.0)
    assert len(base) == 64 and make(1.0, 7, 2.0) == base
    assert make(2.0, 0, 2.0) != base  # the callee changed
    assert make(1.0, 0, 3.0) != base  # a global constant changed


def test_a_kernel_has_one_stamp_whichever_is_stamped_first(tmp_path, monkeypatch):
    """A kernel's cache uses the stamp the kernel gets as another's callee (its options included), and a
    process's order of compiling or loading does not change it."""
    import importlib.util

    from hdbayes import _numba
    from hdbayes._numba import kernel_stamp

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    source = tmp_path / "kernels_for_stamps.py"
    source.write_text(
        "from hdbayes._numba import jit\n\n@jit(error_model='numpy')\ndef callee(x):\n    return x + 1.0\n\n"
        "@jit\ndef caller(x):\n    return callee(x)\n"
    )

    def load(name):
        spec = importlib.util.spec_from_file_location(name, source)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.callee, module.caller

    callee, caller = load("kernels_for_stamps")
    stamps = (kernel_stamp(callee), kernel_stamp(caller))  # the callee first, then as the caller's callee
    assert callee._cache._cache_file._source_stamp == stamps[0]  # the cache's own stamp, same options
    assert caller._cache._cache_file._source_stamp == stamps[1]
    for function in (callee.py_func, caller.py_func):
        _numba._stamps.pop(function)
    assert kernel_stamp(caller) == stamps[1] and kernel_stamp(callee) == stamps[0]
