import sys

from tests.mutation.plugin import main

sys.exit(main())
