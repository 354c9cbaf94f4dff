"""`python -m codec`: Shellscope's command line (see codec.cli)."""

import sys

from codec.cli import main

if __name__ == "__main__":
    sys.exit(main())
