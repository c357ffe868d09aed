"""``python -m nanotile.passes``: see cli_options.main."""

import sys

from .cli_options import main

sys.exit(main())
