"""``python -m botorch_mtucb``: see ``botorch_mtucb.experiments.cli``."""

import sys

from botorch_mtucb.experiments.cli import main

sys.exit(main())
