"""``python -m stockade`` runs the command line."""

import sys

from stockade.cli import main

sys.exit(main())
