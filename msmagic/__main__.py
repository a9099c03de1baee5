"""``python -m msmagic``: see :mod:`msmagic.cli`."""

import sys

from msmagic.cli import main

if __name__ == "__main__":
    sys.exit(main())
