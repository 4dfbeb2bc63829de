from dynlint.linter.cli import main

raise SystemExit(main())
