import sys

from sensaopt.cli import main

sys.exit(main())
