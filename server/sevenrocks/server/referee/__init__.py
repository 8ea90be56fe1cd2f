"""The gRPC referee: bot streams, seat assignment, match driving, faults, the spectator feed."""

from .faults import FaultPolicy, TimeControl
from .server import PROTOCOL_VERSION, Referee, RefereeMatch

__all__ = ["FaultPolicy", "PROTOCOL_VERSION", "Referee", "RefereeMatch", "TimeControl"]
