import sys

from s2s_ad.cli import main

sys.exit(main())
