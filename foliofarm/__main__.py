from foliofarm.cli import main

raise SystemExit(main())
