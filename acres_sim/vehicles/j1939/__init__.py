"""The Maxxum's CAN bus: the J1939 / ISO 11783 frames the tractor sends and the ones it accepts.

Every 0.1 s of simulation time (``acres_sim.vehicles.tractor.observation_due``) the tractor sends a group of
13 frames (``frames_from_observation``), all with 29-bit identifiers, 8 data bytes, little-endian
signals (ISO 11783-7 3.3.1) and the J1939 value ranges: a 1-byte signal is valid in 0 .. 250, a
2-byte one in 0 .. 64255, a 4-byte one in 0 .. 4211081215; all-ones means "not available" (in a
command: "don't care"), 0xFE.. an error. A 2-bit state is 00 off, 01 on, 10 error, 11 not
available. A value out of its range is sent as the nearest limit (ISO 11783-7 3.3.3); unused bits
are 1. Standard parameter groups carry what J1939 / ISO 11783-7 defines (engine speed EEC1,
wheel- and ground-based speed WBSD / GBSD, rear hitch, rear PTO, guidance); proprietary B groups
(PGN 0xFF00 .. 0xFFFF) carry the rest, like the spec's 0x18FF1580. docs/can.md has the table.

The tractor accepts four frames from a controller on the bus (``command_from_frame``):

- Guidance system command, PGN 0xAD00 (ISO 11783-7 B.26.1), to the tractor (0x80) or global: the
  curvature, applied while its status says "intended to steer". ISO 11783 counts a right turn
  positive; ROS and ``TractorCommand`` count left positive, so the sign flips.
- Hitch and PTO commands, PGN 0xFE42 (B.10): the rear hitch position (the lever) and the rear PTO
  engagement. The PTO speed and mode commands are not taken: the implement sets the PTO gearbox.
- Drive command, proprietary PGN 0xFF30: pedal, brake, hand throttle, differential locks. It
  restarts the safety brake's timer, as a bridge command does.
- Implement command, proprietary PGN 0xFF31: raise or lower, hitch mode, depth stop.

``decode`` reads any frame of these tables into its signals. The barrier frame that ends each
lockstep step is part of the transport (acres_bridge.wire.can, re-exported here).

The package: ``codec`` (identifiers, signals, groups), ``frames`` (the tables) and ``tractor_can``
(the tractor model's frames and commands).
"""

from acres_bridge.wire.can import BARRIER_ID, Barrier, barrier_frame, decode_barrier, is_barrier
from acres_sim.vehicles.j1939.codec import (
    BRAKES_ADDRESS,
    ENGINE_ADDRESS,
    GLOBAL_ADDRESS,
    TRACTOR_ADDRESS,
    DecodedFrame,
    FrameSpec,
    J1939Id,
    Signal,
    encode_frame,
    j1939_id,
    parse_id,
)
from acres_sim.vehicles.j1939.frames import COMMAND_FRAMES, GROUP_SIZE, STATUS_FRAMES, decode, frame_spec
from acres_sim.vehicles.j1939.tractor_can import command_from_frame, frames_from_observation

__all__ = [
    "BARRIER_ID",
    "BRAKES_ADDRESS",
    "COMMAND_FRAMES",
    "ENGINE_ADDRESS",
    "GLOBAL_ADDRESS",
    "GROUP_SIZE",
    "STATUS_FRAMES",
    "TRACTOR_ADDRESS",
    "Barrier",
    "DecodedFrame",
    "FrameSpec",
    "J1939Id",
    "Signal",
    "barrier_frame",
    "command_from_frame",
    "decode",
    "decode_barrier",
    "encode_frame",
    "frame_spec",
    "frames_from_observation",
    "is_barrier",
    "j1939_id",
    "parse_id",
]
