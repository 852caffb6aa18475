import sys

from ._cli import main

if __name__ == "__main__":  # guarded: worker processes re-import the main module
    sys.exit(main())
