import sys

from hdbayes._entry import main

sys.exit(main())
