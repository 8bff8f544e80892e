from aerie.cli import main

raise SystemExit(main())
