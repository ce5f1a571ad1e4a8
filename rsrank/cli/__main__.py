"""``python -m rsrank.cli``: the same command line as ``rsrank``."""

import sys

from . import main

sys.exit(main())
