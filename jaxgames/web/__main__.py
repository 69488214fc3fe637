"""``python -m jaxgames.web``: see :mod:`jaxgames.web.cli`."""

import sys

from jaxgames.web.cli import main

if __name__ == "__main__":
    sys.exit(main())
