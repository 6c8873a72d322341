from aicr_tui.cli import main

raise SystemExit(main())
