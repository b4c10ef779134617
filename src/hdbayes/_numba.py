"""One way to compile a kernel: :func:`jit`, numba's ``njit`` with a disk cache that is safe by design.

Numba's own cache (``cache=True``) keys each compiled function by the contents of the
file that defines it. A kernel that calls a kernel of another module (the samplers call
:func:`hdbayes.mcmc.slice.slice_sample`, the adjustment factors call
:mod:`hdbayes.special`) is therefore not recompiled when only the callee changes: the
stale machine code is loaded and silently runs the old callee. The kernels compiled
here are keyed instead by a fingerprint of the whole ``hdbayes`` package (the contents
of every ``.py`` file in it), so any change anywhere in the package recompiles every
kernel on its next use, and two different versions of the package (two checkouts, an
edit while a run is going on) never load each other's code. Cache files are written
by numba through a temporary file and a rename, so concurrent processes see either an
old index (whose fingerprint then does not match and is ignored) or a new one.

A kernel that takes a compiled function as an argument (the generic slice sampler)
is never cached on its own: numba cannot cache such signatures (the cached type refers
to a function object of another process, "underlying object has vanished"), and a
cached caller would embed the function's address ("dynamic globals"). It is therefore
compiled with ``cache=False, inline="always"``: inlined into each caller at numba's IR
level, where the log density is a fixed, static call, so the caller is an ordinary
kernel of arrays and scalars and is cached with its callee's code inside it.

The cache goes where numba puts it (``NUMBA_CACHE_DIR`` if the user set it, else the
package's ``__pycache__`` folders, else numba's user-wide cache folder).
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

import numba
from numba.core import config
from numba.core.caching import (
    CompileResultCacheImpl,
    FunctionCache,
    InTreeCacheLocator,
    UserProvidedCacheLocator,
    UserWideCacheLocator,
)

__all__ = ["jit", "package_fingerprint"]

_PACKAGE = Path(__file__).resolve().parent


@functools.cache
def package_fingerprint() -> str:
    """SHA-256 of the names and contents of every ``.py`` file of the installed package.

    Computed once per process (a few milliseconds); it is the "source stamp" of every
    cached kernel, so a change to any module invalidates the whole cache.
    """
    digest = hashlib.sha256()
    for path in sorted(_PACKAGE.rglob("*.py")):
        digest.update(path.relative_to(_PACKAGE).as_posix().encode())
        digest.update(b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


class _PackageStamp:
    """Locator mixin: the source stamp is the package fingerprint, not the one file's hash."""

    def get_source_stamp(self):
        return package_fingerprint()


class _UserProvidedLocator(_PackageStamp, UserProvidedCacheLocator):
    pass


class _InTreeLocator(_PackageStamp, InTreeCacheLocator):
    pass


class _UserWideLocator(_PackageStamp, UserWideCacheLocator):
    pass


class _PackageCacheImpl(CompileResultCacheImpl):
    _locator_classes = [_UserProvidedLocator, _InTreeLocator, _UserWideLocator]


class _PackageFunctionCache(FunctionCache):
    _impl_class = _PackageCacheImpl


def jit(function=None, *, cache=True, **options):
    """Compile ``function`` with ``numba.njit(nogil=True, **options)``, cached by package fingerprint.

    Use as ``@jit`` or ``@jit(error_model="numpy")``. ``cache=False`` compiles in memory
    only (for kernels that take a compiled function as an argument).
    """
    options.setdefault("nogil", True)

    def decorate(func):
        dispatcher = numba.njit(**options)(func)
        if cache and not config.DISABLE_JIT:
            try:
                dispatcher._cache = _PackageFunctionCache(func)
            except RuntimeError:  # no writable cache folder anywhere: compile in memory
                pass
        return dispatcher

    return decorate if function is None else decorate(function)
