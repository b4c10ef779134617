"""Numpydoc's docstring validation over hdbayes's public API; prints one line per error.

Usage (from the project root)::

    python docs/validate_docstrings.py                 # the checks of docs/conf.py (DOCSTRING_CHECKS)
    python docs/validate_docstrings.py --checks all    # every numpydoc check
    python docs/validate_docstrings.py --summary       # counts per check and per file only

The objects are those the documentation site validates as it builds: every class, function and data object in
the ``__all__`` of the packages documented by the site (``API_PACKAGES`` of ``docs/conf.py``) and, for a class,
its public methods, classmethods, properties and ``__call__`` defined in hdbayes, inherited ones included (those of
scikit-learn, NamedTuple or object are theirs). As in the build, a record whose fields are all documented under
Attributes is exempt from PR01 (``numpydoc_validation_overrides`` of ``docs/conf.py``) and module data is
validated with its ``#:`` comment. The exit status is 1 when an error is found.
"""

from __future__ import annotations

import argparse
import inspect
import re
import sys
from collections import Counter
from importlib import import_module
from pathlib import Path

from numpydoc.docscrape import get_doc_object
from numpydoc.validate import ERROR_MSGS, validate

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS.parent / "src"))


def _conf():
    spec_path = DOCS / "conf.py"
    namespace = {"__file__": str(spec_path), "__name__": "conf"}
    exec(compile(spec_path.read_text(), str(spec_path), "exec"), namespace)  # noqa: S102 (our own conf.py)
    return namespace


def _hdbayes_members(cls):
    """The public members of a class that hdbayes defines: own and inherited from hdbayes classes, by name."""
    members = []
    for klass in cls.__mro__:
        if not klass.__module__.startswith("hdbayes"):
            continue
        for member, value in vars(klass).items():
            if member in members or (member.startswith("_") and member != "__call__"):
                continue
            # a method wrapped by a descriptor (scikit-learn's available_if) is what the class attribute gives
            if isinstance(value, property) or (callable(getattr(cls, member, None)) and not inspect.isclass(value)):
                members.append(member)
    return members


def public_objects(packages):
    """The full names of the public objects and of their classes' public members.

    Parameters
    ----------
    packages : list of str
        Package names whose ``__all__`` is documented.

    Returns
    -------
    list of str
        Full dotted names (``hdbayes.discrete.DCMClassifier.fit``), each object once, under the first
        package that exports it; a class's members under the class's name, inherited ones too
        (``hdbayes.BayesianBernoulliNB.predict``), as the site documents them.
    """
    seen, names = set(), []
    for package in packages:
        module = import_module(package)
        for name in module.__all__:
            if name == "__version__":
                continue
            obj = getattr(module, name)
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            full = f"{package}.{name}"
            names.append(full)
            if isinstance(obj, type):
                names += [f"{full}.{member}" for member in _hdbayes_members(obj)]
    return names


def validate_object(full_name, conf):
    """Numpydoc's validation of one object, as the build does it.

    Parameters
    ----------
    full_name : str
        The object's full dotted name.
    conf : dict
        The namespace of ``docs/conf.py``.

    Returns
    -------
    dict
        Numpydoc's report (``errors``, ``file``, ``file_line``, ...), without the errors the build's
        ``numpydoc_validation_overrides`` exempt.
    """
    package, _, name = full_name.rpartition(".")
    try:
        obj = getattr(import_module(package), name)
    except ModuleNotFoundError:  # a class's member: "package" is the class
        obj = None
    if obj is not None and not isinstance(obj, type) and not callable(obj):  # module data: its "#:" comment
        text = "\n".join(conf["data_docstring"](full_name))
        result = validate(get_doc_object(obj, what="data", doc=text))  # its "docstring" is its type's, as in the build
    else:
        result = validate(full_name)
    overrides = {code: re.compile("|".join(patterns)) for code, patterns in
                 conf.get("numpydoc_validation_overrides", {}).items() if patterns}  # fmt: skip
    result["errors"] = [(code, message) for code, message in result["errors"]
                        if not (code in overrides and overrides[code].search(result["docstring"]))]  # fmt: skip
    return result


def main(argv=None):
    """Validate the docstrings and print the errors.

    Parameters
    ----------
    argv : list of str, optional
        Command-line arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        0 when no error is found, else 1.
    """
    conf = _conf()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--checks", default=",".join(conf["DOCSTRING_CHECKS"]),
                        help="comma-separated numpydoc check codes, or 'all'")
    parser.add_argument("--summary", action="store_true", help="print the counts only")
    args = parser.parse_args(argv)
    checks = set(ERROR_MSGS) if args.checks == "all" else set(args.checks.split(","))
    errors = []
    names = public_objects([package for package, _ in conf["API_PACKAGES"]])
    for name in names:
        result = validate_object(name, conf)
        where = f"{result.get('file') or '?'}:{result.get('file_line') or '?'}"
        errors += [(where, name, code, message) for code, message in result["errors"] if code in checks]
    if not args.summary:
        for where, name, code, message in errors:
            print(f"{where}: {name}: {code} {message}")
    print(f"\n{len(errors)} errors in {len({e[1] for e in errors})} of {len(names)} objects; checks {sorted(checks)}")
    for code, count in Counter(e[2] for e in errors).most_common():
        print(f"  {code} {count:4d}  {ERROR_MSGS[code]}")
    root = str(DOCS.parent) + "/"
    for path, count in Counter(e[0].split(":")[0].replace(root, "") for e in errors).most_common():
        print(f"  {count:4d}  {path}")
    return int(bool(errors))


if __name__ == "__main__":
    sys.exit(main())
