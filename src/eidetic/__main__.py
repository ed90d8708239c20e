import sys

if len(sys.argv) == 4 and sys.argv[1] == "hook":  # an agent's hook: the lean client, nothing else loaded
    from .hooks.client import main as hook

    sys.exit(hook(sys.argv[2:]))

from .cli.main import main  # noqa: E402

sys.exit(main())
