"""The gRPC referee: bot streams, seat assignment, match driving, faults, the spectator feed.

``from sevenrocks.server.referee import Referee`` is the entry point; the modules are
:mod:`.server` (the gRPC service), :mod:`.seats` (tokens, streams, who sits where),
:mod:`.match` (one match through the engine), :mod:`.session` (one bot stream),
:mod:`.faults`, :mod:`.wire`, :mod:`.feed` (spectators) and :mod:`.launch` (bot processes,
contained by :mod:`.sandbox` with :mod:`.jail`, :mod:`.cgroups` and :mod:`.botlog`).
"""

from .faults import FaultPolicy, TimeControl
from .match import RefereeMatch, RefereeStopped
from .server import PROTOCOL_VERSION, Referee

__all__ = ["FaultPolicy", "PROTOCOL_VERSION", "Referee", "RefereeMatch", "RefereeStopped", "TimeControl"]
