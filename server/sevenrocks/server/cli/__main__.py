"""``python -m sevenrocks.server.cli`` is the ``sevenrocks`` command."""

from . import main

main()
