"""Suite-wide settings.

Launched bots run uncontained (``SEVENROCKS_SANDBOX=off``) unless a test names its
sandbox: most tests keep their bots in pytest's private temporary folders, which a
sandboxed bot (another uid) may not read. The containment tests (tests/sandbox, the
memorising attack) ask for ``bwrap`` explicitly and, under CI, fail if it cannot run.

The signals the tests send (Ctrl-C to a tournament, a bot stopping itself) act as they
do for a user at a terminal even when the suite itself was started where they are
ignored: a script's background job (``cmd &``) ignores SIGINT and ``nohup`` ignores
SIGHUP, and every process the suite starts would inherit that.
"""

import os
import signal

os.environ.setdefault("SEVENROCKS_SANDBOX", "off")

if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)  # children start with the default action
if signal.getsignal(signal.SIGHUP) == signal.SIG_IGN:
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
