"""One way to compile a kernel: :func:`jit`, numba's ``njit`` with a disk cache that is safe by design.

Numba's own cache (``cache=True``) keys each compiled function by the contents of the
file that defines it. A kernel that calls a kernel of another module (the samplers call
:func:`hdbayes.mcmc.slice.slice_sample`, the adjustment factors call
:mod:`hdbayes.special`) is therefore not recompiled when only the callee changes: the
stale machine code is loaded and silently runs the old callee. The kernels compiled
here are keyed instead by their own **kernel stamp** (:func:`kernel_stamp`): a digest of
the kernel's code (bytecode, constants, names, nested functions; not its line numbers),
its compile options, and every global it refers to (numba freezes globals into the
machine code): a constant by value, an array by its bytes, another kernel or function by
its own stamp (so a changed callee, however deep, recompiles all its callers), a module
of hdbayes by the contents of its file, another library's module by its name. An edit
recompiles only the kernels it changes (an edit to the command line or to an experiment
recompiles nothing), and two different versions of a kernel (two checkouts, an edit while
a run is going on) never load each other's code. The cache files are named by the
kernel's qualified name without numba's line number, so that an edit above a kernel does
not orphan its entries. Cache files are written by numba through a temporary file and a
rename, so concurrent processes see either an old index (whose stamp then does not match
and is ignored) or a new one.

A kernel that takes a compiled function as an argument (the generic slice sampler)
is never cached on its own: numba cannot cache such signatures (the cached type refers
to a function object of another process, "underlying object has vanished"), and a
cached caller would embed the function's address ("dynamic globals"). It is therefore
compiled with ``cache=False, inline="always"``: inlined into each caller at numba's IR
level, where the log density is a fixed, static call, so the caller is an ordinary
kernel of arrays and scalars and is cached with its callee's code inside it.

The cache goes where numba puts it (``NUMBA_CACHE_DIR`` if the user set it, else the
package's ``__pycache__`` folders, else numba's user-wide cache folder).

Every index and compiled object is signed: the file holds an HMAC-SHA256 of its contents
(and of its file name and numba's version) under a secret key of 32 random bytes, kept in
the cache folder as ``hdbayes-<uid>.key``, created with mode 0600 and used only while it
is a regular file owned by this user and readable by no one else (else it is replaced by
a fresh key). The signature is checked before anything is unpickled, and a compiled
object also records its signature and kernel stamp, checked after. So an entry
that is truncated, garbled, overwritten in place, written by another user, copied from
another function or signature, or left by another numba version is a cache miss: the
kernel is compiled again and the entry overwritten, so the cache heals itself, and no
file that this user did not write is ever unpickled or run. The user's id is part of
every file name, so users who share a cache folder keep apart instead of overwriting
each other's entries on every run.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import hmac
import itertools
import os
import pickle
import re
import secrets
import stat
import types
import warnings
from pathlib import Path

import numba
from numba.core import config
from numba.core.caching import (
    CompileResultCacheImpl,
    FunctionCache,
    IndexDataCacheFile,
    InTreeCacheLocator,
    UserProvidedCacheLocator,
    UserWideCacheLocator,
)

__all__ = ["jit", "kernel_stamp", "package_fingerprint"]

_PACKAGE = Path(__file__).resolve().parent
_MAGIC = b"hdbayes numba cache 1\n"  # first bytes of every signed file (numba's own files start otherwise)
_KEY_BYTES = _TAG_BYTES = 32
_POSIX = os.name == "posix"  # owner and mode bits mean something (elsewhere the folder's ACL protects the key)
_USER = str(os.getuid()) if _POSIX else "user"


@functools.cache
def package_fingerprint() -> str:
    """SHA-256 of the names and contents of every ``.py`` file of the installed package.

    Computed once per process (a few milliseconds). The compile cache no longer uses it (each kernel has
    its own :func:`kernel_stamp`); it identifies a version of the package's source.
    """
    digest = hashlib.sha256()
    for path in sorted(_PACKAGE.rglob("*.py")):
        digest.update(path.relative_to(_PACKAGE).as_posix().encode())
        digest.update(b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


@functools.cache
def _file_digest(path: str) -> str:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return "unreadable"


def _in_package(module: types.ModuleType) -> bool:
    """Whether ``module`` is a module of hdbayes (its source is hashed; another library's is named only)."""
    path = getattr(module, "__file__", None)
    return path is not None and Path(path).resolve().is_relative_to(_PACKAGE)


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_stamps: dict = {}  # function -> its stamp, once computed (a kernel's globals do not change after import)


def _code_parts(code: types.CodeType, names: set):
    """The parts of a code object that decide what it computes (not its line numbers); collects its names."""
    names.update(code.co_names)
    yield code.co_code
    yield repr((code.co_names, code.co_varnames, code.co_freevars, code.co_cellvars, code.co_argcount,
                code.co_posonlyargcount, code.co_kwonlyargcount, code.co_flags)).encode()  # fmt: skip
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_parts(const, names)
        else:
            yield _value_text(const, (), set()).encode()


def _value_text(value, active, cycles) -> str:
    """A stable text that changes when ``value``, as numba would freeze it into a kernel, changes."""
    py_func = getattr(value, "py_func", None)
    if isinstance(py_func, types.FunctionType):  # a numba dispatcher: another kernel
        return f"kernel {_function_stamp(py_func, getattr(value, 'targetoptions', {}), active, cycles)}"
    if isinstance(value, types.FunctionType):
        return f"function {_function_stamp(value, {}, active, cycles)}"
    if isinstance(value, types.ModuleType):
        if _in_package(value):
            return f"module {value.__name__} {_file_digest(value.__file__)}"
        return f"module {value.__name__}"
    if isinstance(value, (tuple, list)):
        return f"{type(value).__name__}({', '.join(_value_text(item, active, cycles) for item in value)})"
    if isinstance(value, (frozenset, set)):
        return f"{type(value).__name__}({sorted(_value_text(item, active, cycles) for item in value)})"
    if hasattr(value, "dtype") and hasattr(value, "tobytes") and hasattr(value, "shape"):  # a numpy array or scalar
        return f"array {value.dtype} {value.shape} {hashlib.sha256(value.tobytes()).hexdigest()}"
    if isinstance(value, type):
        return f"class {value.__module__}.{value.__qualname__} {getattr(value, '_fields', '')}"
    if type(value).__repr__ is object.__repr__:
        return f"object {type(value).__module__}.{type(value).__qualname__}"
    return _ADDRESS.sub("", repr(value))


def _function_stamp(func: types.FunctionType, options, active=(), cycles=None) -> str:
    """The stamp of ``func`` (see :func:`kernel_stamp`).

    ``active`` are the functions being stamped: one met again (recursion) stands for itself by name, and is
    added to ``cycles``. A stamp is kept for the process only if no function stood in for itself while it was
    computed: on a cycle of kernels the texts would otherwise depend on which of them was stamped first.
    """
    if func in _stamps:
        return _stamps[func]
    if func in active:  # a kernel that calls itself, directly or not: its code is already in the digest
        if cycles is not None:
            cycles.add(func)
        return f"recursive {func.__module__}.{func.__qualname__}"
    active = (*active, func)
    own = set()
    digest = hashlib.sha256(f"{func.__module__}.{func.__qualname__}\0".encode())
    names = set()
    for part in _code_parts(func.__code__, names):
        digest.update(part)
        digest.update(b"\0")
    texts = [
        f"options {sorted((key, _value_text(value, active, own)) for key, value in dict(options).items())}",
        f"defaults {_value_text(func.__defaults__, active, own)} {_value_text(func.__kwdefaults__, active, own)}",
        *(f"cell {_value_text(cell.cell_contents, active, own)}" for cell in func.__closure__ or ()),
        *(
            f"global {name} {_value_text(func.__globals__[name], active, own)}"
            for name in sorted(names)
            if name in func.__globals__
        ),  # fmt: skip
    ]
    for text in texts:
        digest.update(text.encode())
        digest.update(b"\0")
    stamp = digest.hexdigest()
    if own:  # on a cycle: recomputed each time, from the function asked for (the same text whatever came first)
        if cycles is not None:
            cycles.update(own - {func})
    else:
        _stamps[func] = stamp
    return stamp


def kernel_stamp(function) -> str:
    """The source stamp of a compiled kernel: what its machine code depends on.

    A SHA-256 of the function's code (bytecode, constants, names, nested functions; not line
    numbers), of its compile options (the dispatcher's), of its default arguments and closure,
    and of every global name its code uses: a constant by value, an array by its bytes,
    another kernel or function by its own stamp (recursively), a module of hdbayes by its
    file's contents, another library's module by its name. Computed on the kernel's first
    compilation or cache look-up (when the module that defines it has finished importing)
    and kept for the process.

    Parameters
    ----------
    function : numba dispatcher or function
        The kernel (a plain function: one without compile options).

    Returns
    -------
    str
        64 hexadecimal digits.
    """
    return _function_stamp(getattr(function, "py_func", function), getattr(function, "targetoptions", {}))


class _PackageStamp:
    """Locator mixin: the entries' names carry the user's id instead of numba's line number; the source stamp is
    the kernel's (:func:`kernel_stamp`, set by :class:`_PackageFunctionCache`), not the file's."""

    def get_source_stamp(self):
        return None  # replaced by the kernel stamp (see _PackageFunctionCache)

    def get_disambiguator(self):
        # no line number: an edit above the kernel keeps its entries; the user's id in every file name: users
        # sharing a cache folder do not overwrite each other's entries
        return f"u{_USER}"


class _UserProvidedLocator(_PackageStamp, UserProvidedCacheLocator):
    pass


class _InTreeLocator(_PackageStamp, InTreeCacheLocator):
    pass


class _UserWideLocator(_PackageStamp, UserWideCacheLocator):
    pass


class _PackageCacheImpl(CompileResultCacheImpl):
    _locator_classes = [_UserProvidedLocator, _InTreeLocator, _UserWideLocator]


def _read_key(path: Path) -> bytes | None:
    """The key stored at ``path``; None if it is absent or not this user's secret (a link, shared, too short)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)  # no link, no FIFO wait
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        if _POSIX and (info.st_uid != os.getuid() or info.st_mode & 0o077):
            return None
        key = file.read(_KEY_BYTES + 1)
    return key if len(key) == _KEY_BYTES else None


def _create_key(path: Path) -> bytes:
    """Store a fresh random key at ``path`` (mode 0600) unless a usable one appeared meanwhile; return the key."""
    key = secrets.token_bytes(_KEY_BYTES)
    temporary = path.with_name(f"{path.name}.tmp.{secrets.token_hex(8)}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        with os.fdopen(fd, "wb") as file:
            if _POSIX:
                os.fchmod(fd, 0o600)  # whatever the umask
            file.write(key)
        try:
            os.link(temporary, path)  # created only if absent: processes starting together agree on one key
        except FileExistsError:
            existing = _read_key(path)
            if existing is not None:
                return existing
            os.replace(temporary, path)  # not this user's secret: replaced (its entries become misses)
        except OSError:  # a file system without hard links
            os.replace(temporary, path)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
    return key


@functools.cache
def _cache_key(folder: str) -> bytes | None:
    """This user's secret key for the cache folder ``folder``, created on first use; None if it cannot be."""
    path = Path(folder) / f"hdbayes-{_USER}.key"
    try:
        return _read_key(path) or _create_key(path)
    except OSError:  # a folder that is not writable: nothing is read from it or written to it
        return None


class _SignedCacheFile(IndexDataCacheFile):
    """numba's index and data files, signed with the user's key; an entry that does not verify is a miss.

    A file is ``_MAGIC``, an HMAC-SHA256 tag, then the pickled record; the tag covers the file's
    name, numba's version and the record, and is checked before unpickling. The index record is
    ``(fingerprint, {key: data file name})``, a data record ``(fingerprint, key, compiled object)``,
    so a data file is loaded only for the signature and the version of the kernel it was compiled for. The
    fingerprint is the kernel stamp, given as a string or as a function computing it on first use.
    """

    def __init__(self, cache_path, filename_base, source_stamp):
        self._stamp = source_stamp
        super().__init__(cache_path, filename_base, source_stamp)

    @property
    def _source_stamp(self):
        if callable(self._stamp):
            self._stamp = self._stamp()
        return self._stamp

    @_source_stamp.setter
    def _source_stamp(self, value):
        self._stamp = value

    def _secret(self) -> bytes | None:
        return _cache_key(self._cache_path)

    def _tag(self, secret: bytes, name: str, body) -> bytes:
        mac = hmac.new(secret, _MAGIC, hashlib.sha256)
        mac.update(f"{name}\0{self._version}\0".encode())
        mac.update(body)
        return mac.digest()

    def _write(self, path: str, record) -> None:
        secret = self._secret()
        if secret is None:
            return
        body = self._dump(record)
        with self._open_for_write(path) as file:  # a temporary file and a rename
            file.write(_MAGIC + self._tag(secret, os.path.basename(path), body) + body)

    def _read(self, path: str):
        """The record in ``path``; None if it is absent, unreadable, or not signed with this user's key."""
        secret = self._secret()
        if secret is None:
            return None
        try:
            with open(path, "rb") as file:
                raw = file.read()
        except OSError:
            return None
        head = len(_MAGIC) + _TAG_BYTES
        body = memoryview(raw)[head:]
        if raw[: len(_MAGIC)] != _MAGIC or not hmac.compare_digest(
            raw[len(_MAGIC) : head], self._tag(secret, os.path.basename(path), body)
        ):
            return None
        try:
            return pickle.loads(body)
        except Exception as error:  # signed by this user, yet unreadable: say so, and compile again
            warnings.warn(f"hdbayes: ignoring the cache entry {path} ({error!r})", RuntimeWarning, stacklevel=1)
            return None

    def _load_index(self):
        record = self._read(self._index_path)
        if record is None or record[0] != self._source_stamp:
            return {}
        return record[1]

    def _save_index(self, overloads):
        self._write(self._index_path, (self._source_stamp, overloads))

    def load(self, key):
        name = self._load_index().get(key)
        record = None if name is None else self._read(self._data_path(name))
        if record is None or record[0] != self._source_stamp or record[1] != key:
            return None
        return record[2]

    def save(self, key, data):
        if self._secret() is None:
            return
        overloads = self._load_index()
        try:
            name = overloads.get(key)
            if name is None:
                taken = set(overloads.values())
                name = next(name for name in map(self._data_name, itertools.count(1)) if name not in taken)
                overloads[key] = name
                self._save_index(overloads)
            self._write(self._data_path(name), (self._source_stamp, key, data))
        except OSError:  # a cache that cannot be written costs a compile in the next run, never this one
            pass


class _PackageFunctionCache(FunctionCache):
    _impl_class = _PackageCacheImpl

    def __init__(self, dispatcher):
        super().__init__(dispatcher.py_func)
        # computed on first use (callees may be defined later), from the dispatcher's own options, as when the
        # kernel is stamped as another kernel's callee: one stamp per kernel, whichever comes first
        stamp = functools.partial(kernel_stamp, dispatcher)
        self._cache_file = _SignedCacheFile(self._cache_path, self._impl.filename_base, stamp)


def jit(function=None, *, cache=True, **options):
    """Compile ``function`` with ``numba.njit(nogil=True, **options)``, cached by its :func:`kernel_stamp`.

    Use as ``@jit`` or ``@jit(error_model="numpy")``. ``cache=False`` compiles in memory
    only (for kernels that take a compiled function as an argument).
    """
    options.setdefault("nogil", True)

    def decorate(func):
        dispatcher = numba.njit(**options)(func)
        if cache and not config.DISABLE_JIT:
            try:
                dispatcher._cache = _PackageFunctionCache(dispatcher)
            except RuntimeError:  # no writable cache folder anywhere: compile in memory
                pass
        return dispatcher

    return decorate if function is None else decorate(function)
