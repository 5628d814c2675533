"""``python -m diffimpact``: the ``diffimpact`` command line (``diffimpact.cli``)."""

import sys

from diffimpact.cli import main

sys.exit(main())
