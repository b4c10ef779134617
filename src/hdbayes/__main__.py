import sys

from hdbayes.cli import main

sys.exit(main())
