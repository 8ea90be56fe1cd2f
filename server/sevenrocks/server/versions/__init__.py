"""Versions: what "the bot that played" means, as files on disk that cannot change.

:mod:`.snapshots` is the content-addressed store (a folder named by the digest of its
files, written once, read-only after); :mod:`.pinning` copies the files a launched
entrant's command runs into it and rewrites the command to name the copy. A room of
its own because four parts lean on it and none owns it: the one-sitting event pins
its entrants, the league keeps one snapshot per ``name@N``, the cluster ships
snapshots to workers, and submissions store each accepted upload as one.
"""
