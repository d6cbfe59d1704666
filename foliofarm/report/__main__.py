import sys

from foliofarm.report import main

sys.exit(main())
