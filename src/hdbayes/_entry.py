"""The ``hdbayes`` console script: the command line, with Ctrl-C during start-up handled too.

Importing :mod:`hdbayes.cli` takes a moment (argparse, the experiments' registry); an interrupt
then would otherwise print a ``KeyboardInterrupt`` traceback. Here the import happens inside
the same ``try`` as the run, so Ctrl-C at any point prints ``hdbayes: interrupted`` and exits
with status 130, like an interrupt during the work (:func:`hdbayes.cli.main`).
"""

import sys

__all__ = ["main"]


def main(argv=None):
    """Run the ``hdbayes`` command; return its exit status (see :mod:`hdbayes.cli`)."""
    try:
        from hdbayes.cli import main as run

        return run(argv)
    except KeyboardInterrupt:
        print("hdbayes: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
