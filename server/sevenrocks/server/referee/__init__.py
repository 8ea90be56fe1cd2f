"""The gRPC referee: bot streams, seat assignment, match driving, faults, the spectator feed.

``from sevenrocks.server.referee import Referee`` is the entry point; the modules are
:mod:`.server` (the gRPC service), :mod:`.seats` (tokens, streams, who sits where),
:mod:`.match` (one match through the engine), :mod:`.session` (one bot stream),
:mod:`.faults`, :mod:`.wire` and :mod:`.feed` (spectators). Bot processes and their
containment live one folder down, in :mod:`sevenrocks.server.sandbox`.
"""

from .faults import FaultPolicy, TimeControl
from .match import RefereeMatch, RefereeStopped
from .server import PROTOCOL_VERSION, Referee

__all__ = ["FaultPolicy", "PROTOCOL_VERSION", "Referee", "RefereeMatch", "RefereeStopped", "TimeControl"]
