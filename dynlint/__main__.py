from dynlint.cli import main

raise SystemExit(main())
