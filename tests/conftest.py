"""Suite-wide settings.

Launched bots run uncontained (``SEVENROCKS_SANDBOX=off``) unless a test names its
sandbox: most tests keep their bots in pytest's private temporary folders, which a
sandboxed bot (another uid) may not read. The containment tests (tests/sandbox, the
memorising attack) ask for ``bwrap`` explicitly and, under CI, fail if it cannot run.
"""

import os

os.environ.setdefault("SEVENROCKS_SANDBOX", "off")
