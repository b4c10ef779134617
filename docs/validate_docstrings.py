"""Numpydoc's docstring validation over hdbayes's public API; prints one line per error.

Usage (from the project root)::

    python docs/validate_docstrings.py                 # the checks of docs/conf.py (DOCSTRING_CHECKS)
    python docs/validate_docstrings.py --checks all    # every numpydoc check
    python docs/validate_docstrings.py --summary       # counts per check and per file only

The public API is every class and function in the ``__all__`` of the packages documented by the site
(``API_PACKAGES`` of ``docs/conf.py``) and, for a class, its public methods and properties defined in hdbayes
(inherited scikit-learn methods are scikit-learn's). A record (dataclass or NamedTuple) may document its fields
under Attributes only. The exit status is 1 when an error is found.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import sys
from collections import Counter
from importlib import import_module
from pathlib import Path

from numpydoc.docscrape import ClassDoc
from numpydoc.validate import ERROR_MSGS, validate

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS.parent / "src"))


def _conf():
    spec_path = DOCS / "conf.py"
    namespace = {"__file__": str(spec_path), "__name__": "conf"}
    exec(compile(spec_path.read_text(), str(spec_path), "exec"), namespace)  # noqa: S102 (our own conf.py)
    return namespace


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
        package that exports it.
    """
    seen, names = set(), []
    for package in packages:
        module = import_module(package)
        for name in module.__all__:
            if name == "__version__":
                continue
            obj = getattr(module, name)
            if not callable(obj) or id(obj) in seen:  # data (a dict, a constant) has no docstring of its own
                continue
            seen.add(id(obj))
            full = f"{package}.{name}"
            names.append(full)
            if isinstance(obj, type):
                for member, value in vars(obj).items():
                    if member.startswith("_") or not (inspect.isfunction(value) or isinstance(value, property)):
                        continue
                    names.append(f"{full}.{member}")
    return names


def _is_record(obj):
    """A dataclass or a NamedTuple: its constructor's parameters are its fields."""
    named_tuple = isinstance(obj, type) and issubclass(obj, tuple) and hasattr(obj, "_fields")
    return named_tuple or (isinstance(obj, type) and dataclasses.is_dataclass(obj))


def _documented_attributes(obj):
    """The names in the Attributes section of a class's docstring ("a, b : type" counts both)."""
    names = set()
    for attribute in ClassDoc(obj, config={"show_class_members": False})["Attributes"]:
        names.update(part.strip() for part in attribute.name.split(","))
    return names


def _fields_documented_as_attributes(name, code, message):
    """A record whose undocumented constructor parameters (PR01) are all in its Attributes section: its fields are
    documented once, as what they are (a record is built by a factory or by hdbayes, rarely by hand)."""
    if code != "PR01":
        return False
    module, _, attribute = name.rpartition(".")
    obj = getattr(import_module(module), attribute, None)
    if obj is None or not _is_record(obj):
        return False
    missing = set(message[message.index("{") + 1 : message.index("}")].replace("'", "").split(", "))
    return missing <= _documented_attributes(obj)


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
        result = validate(name)
        where = f"{result.get('file') or '?'}:{result.get('file_line') or '?'}"
        errors += [(where, name, code, message) for code, message in result["errors"]
                   if code in checks and not _fields_documented_as_attributes(name, code, message)]  # fmt: skip
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
