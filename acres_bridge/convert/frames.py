"""Frame names of one vehicle, with the frame prefix applied as the spec's Frames table says."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FrameNames", "frame_names"]

# Frames that never get a prefix, per vehicle (the spec: utm, can and world; on the Polaris
# also imu_link and oxts_link).
_UNPREFIXED = {
    "polaris": frozenset({"utm", "can", "world", "imu_link", "oxts_link"}),
    "maxxum": frozenset({"utm", "can", "world"}),
}


@dataclass(frozen=True, kw_only=True)
class FrameNames:
    """The frame names a vehicle's messages carry."""

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
        return _prefixed(frame, self.prefix, self._vehicle_unprefixed)

    @property
    def _vehicle_unprefixed(self) -> frozenset[str]:
        return _UNPREFIXED["polaris"] if self.oxts == "oxts_link" else _UNPREFIXED["maxxum"]


def _prefixed(frame: str, prefix: str, unprefixed: frozenset[str]) -> str:
    return frame if not prefix or frame in unprefixed else f"{prefix}{frame}"


def frame_names(*, vehicle: str, frame_prefix: str = "", utm_frame: str = "utm") -> FrameNames:
    """Frame names for a vehicle ('polaris' or 'maxxum'), a prefix like 'polaris2/' and utm's name."""
    if vehicle not in _UNPREFIXED:
        raise ValueError(f"vehicle must be polaris or maxxum, found {vehicle!r}")
    if frame_prefix and not frame_prefix.endswith("/"):
        frame_prefix += "/"
    unprefixed = _UNPREFIXED[vehicle]

    def name(frame: str) -> str:
        return _prefixed(frame, frame_prefix, unprefixed)

    camera = "reolink_camera_optical" if vehicle == "polaris" else "camera_optical"
    return FrameNames(
        utm=utm_frame,
        base_footprint=name("base_footprint"),
        imu=name("imu_link"),
        oxts=name("oxts_link"),
        navsat=name("navsat_link"),
        gnss=name("gnss_link"),
        lidar=name("lidar"),
        camera_optical=name(camera),
        world="world",
        can="can",
        prefix=frame_prefix,
    )
