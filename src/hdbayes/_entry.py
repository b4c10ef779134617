"""The ``hdbayes`` console script: the command line, with Ctrl-C during start-up handled too.

Importing :mod:`hdbayes.cli` takes a moment (argparse, the experiments' registry); an interrupt
then would otherwise print a ``KeyboardInterrupt`` traceback. Here the import happens inside
the same ``try`` as the run, so Ctrl-C at any point prints ``hdbayes: interrupted`` and exits
with status 130, like an interrupt during the work (:func:`hdbayes.cli.main`).

The command's process also defers :mod:`scipy.stats` (:func:`defer_import`): scikit-learn's base
module imports it for a function that fitting and predicting never call, and building its
distributions' docstrings is about half of the start-up of a small job (0.45–1.0 s CPU of about 2 s).
Whatever uses it (``hdbayes reproduce``, the selection tests of the categorical models) imports
it on its first attribute, unchanged.
"""

import importlib
import importlib.util
import sys
import threading
import types

__all__ = ["defer_import", "main"]

#: Modules the command defers: imported at start-up by a dependency, used by few jobs.
DEFERRED = ("scipy.stats",)


class _DeferredModule(types.ModuleType):
    """Stands in ``sys.modules`` for a module not imported yet; its first attribute imports it.

    It has the module's ``__spec__``, ``__loader__``, ``__file__`` and (a package) ``__path__``, so an
    ``import`` statement binds it, and imports a submodule, without importing the module itself; any other
    attribute (``from … import name``, ``module.name``) imports the real module in its place and is
    answered by it.
    """

    _lock = threading.Lock()

    def __getattr__(self, name):
        with _DeferredModule._lock:
            real = sys.modules.get(self.__name__)
            if real is self or real is None:
                del sys.modules[self.__name__]
                parent, _, child = self.__name__.rpartition(".")
                if parent and getattr(sys.modules.get(parent), child, None) is self:
                    delattr(sys.modules[parent], child)  # so the import sets the real one there
                real = importlib.import_module(self.__name__)
                for child, value in vars(self).items():  # submodules imported while it stood in
                    if sys.modules.get(f"{self.__name__}.{child}") is value and child not in vars(real):
                        setattr(real, child, value)
        return getattr(real, name)


def defer_import(name):
    """Put a stand-in for the module ``name`` in ``sys.modules`` until an attribute of it is used.

    Nothing happens if the module is imported already or cannot be found. The parent package is
    imported (it must be, to find the module) and gets the stand-in as its attribute.

    Parameters
    ----------
    name : str
        The dotted name of the module, e.g. ``"scipy.stats"``.

    Returns
    -------
    bool
        True if a stand-in was put in place.
    """
    if name in sys.modules:
        return False
    spec = importlib.util.find_spec(name)
    if spec is None:
        return False
    stand_in = _DeferredModule(name)
    stand_in.__spec__ = spec
    stand_in.__loader__ = spec.loader
    stand_in.__file__ = spec.origin
    stand_in.__package__ = name.rpartition(".")[0]
    if spec.submodule_search_locations is not None:  # a package: its submodules import on their own
        stand_in.__package__ = name
        stand_in.__path__ = spec.submodule_search_locations
    sys.modules[name] = stand_in
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, stand_in)
    return True


def main(argv=None):
    """Run the ``hdbayes`` command; return its exit status (see :mod:`hdbayes.cli`).

    Called as the console script (``argv`` None), the process defers the modules of :data:`DEFERRED` (not for
    ``--help`` or ``--version``); called from Python with ``argv``, it leaves the caller's imports alone.
    """
    try:
        if argv is None and not {"-h", "--help", "--version"} & set(sys.argv[1:]):
            # (finding scipy.stats imports scipy: not for the help, which imports no numerical package)
            for name in DEFERRED:
                defer_import(name)
        from hdbayes.cli import main as run

        return run(argv)
    except KeyboardInterrupt:
        print("hdbayes: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
