"""Frame names of one vehicle, with the frame prefix applied as the spec's Frames table says."""

from __future__ import annotations

from dataclasses import dataclass

from acres_bridge.wire.vocabulary import Vehicle

__all__ = ["FrameNames", "frame_names"]

# Frames that never get a prefix, per vehicle (the spec: utm, can and world; on the Polaris
# also imu_link and oxts_link).
_UNPREFIXED = {
    Vehicle.POLARIS: frozenset({"utm", "can", "world", "imu_link", "oxts_link"}),
    Vehicle.MAXXUM: frozenset({"utm", "can", "world"}),
}
_CAMERA_OPTICAL = {Vehicle.POLARIS: "reolink_camera_optical", Vehicle.MAXXUM: "camera_optical"}


@dataclass(frozen=True, kw_only=True)
class FrameNames:
    """The frame names a vehicle's messages carry."""

    vehicle: Vehicle
    utm: str
    base_footprint: str
    imu: str
    oxts: str
    navsat: str
    gnss: str
    lidar: str
    camera_optical: str
    world: str
    can: str
    prefix: str = ""

    def apply(self, frame: str) -> str:
        """Any other frame of this vehicle (for example a sensor of the rig) with the prefix."""
        return _prefixed(frame, self.prefix, _UNPREFIXED[self.vehicle])


def _prefixed(frame: str, prefix: str, unprefixed: frozenset[str]) -> str:
    return frame if not prefix or frame in unprefixed else f"{prefix}{frame}"


def frame_names(*, vehicle: str, frame_prefix: str = "", utm_frame: str = "utm") -> FrameNames:
    """Frame names for a vehicle ('polaris' or 'maxxum'), a prefix like 'polaris2/' and utm's name."""
    if vehicle not in tuple(Vehicle):
        raise ValueError(f"vehicle must be polaris or maxxum, found {vehicle!r}")
    kind = Vehicle(vehicle)
    if frame_prefix and not frame_prefix.endswith("/"):
        frame_prefix += "/"
    unprefixed = _UNPREFIXED[kind]

    def name(frame: str) -> str:
        return _prefixed(frame, frame_prefix, unprefixed)

    return FrameNames(
        vehicle=kind,
        utm=utm_frame,
        base_footprint=name("base_footprint"),
        imu=name("imu_link"),
        oxts=name("oxts_link"),
        navsat=name("navsat_link"),
        gnss=name("gnss_link"),
        lidar=name("lidar"),
        camera_optical=name(_CAMERA_OPTICAL[kind]),
        world="world",
        can="can",
        prefix=frame_prefix,
    )
