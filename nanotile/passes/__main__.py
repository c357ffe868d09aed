"""``python -m nanotile.passes``: see nanotile.cli_options.main (a program, not a module other packages import)."""

import sys

from ..cli_options import main

sys.exit(main())
