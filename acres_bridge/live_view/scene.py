"""The session's static scene as a Foxglove SceneUpdate: ground, buildings, crop rows and the route.

Pure: from the scene a HELLO describes (acres_bridge.wire.SceneLayout), the built-in route and the
georeference, one ``foxglove.messages.SceneUpdate`` in the ``utm`` frame (the frame of /tf's
poses), each entity placed at the world origin's UTM position so its points stay in world metres.
Crop rows and the route follow the ground's heights (bilinear on the HELLO's grid).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

import numpy as np
from foxglove.messages import (
    Color,
    CubePrimitive,
    LinePrimitive,
    LinePrimitiveLineType,
    Point3,
    Pose,
    Quaternion,
    SceneEntity,
    SceneUpdate,
    TriangleListPrimitive,
    Vector3,
)
from numpy.typing import NDArray

from acres_bridge.geo.georef import Georeference
from acres_bridge.geo.route import Route
from acres_bridge.wire.messages import SceneCropField, SceneGround, SceneLayout

__all__ = ["ROUTE_LIFT_M", "ground_heights", "scene_update"]

FloatArray = NDArray[np.float64]
ROUTE_LIFT_M: Final = 0.05  # the route is drawn this far above the ground, so it is not hidden in it
_GROUND_COLOR: Final = Color(r=0.42, g=0.48, b=0.30, a=1.0)
_ROUTE_COLOR: Final = Color(r=1.0, g=0.55, b=0.0, a=1.0)
_ROUTE_WIDTH_M: Final = 0.3
_CROP_STEP_M: Final = 4.0  # a crop row is drawn as segments this long, each following the ground


def ground_heights(ground: SceneGround | None, x: FloatArray, y: FloatArray) -> FloatArray:
    """The ground's height at world (x, y), bilinear between the grid's points (the edge's height
    beyond it); 0 without a ground."""
    if ground is None:
        return np.zeros(np.shape(x))
    grid = np.asarray(ground.heights, dtype=np.float64).reshape(ground.ny, ground.nx)
    u = np.clip((np.asarray(x, dtype=np.float64) - ground.x0) / ground.spacing_m, 0.0, ground.nx - 1)
    v = np.clip((np.asarray(y, dtype=np.float64) - ground.y0) / ground.spacing_m, 0.0, ground.ny - 1)
    i = np.minimum(u.astype(np.intp), ground.nx - 2)
    j = np.minimum(v.astype(np.intp), ground.ny - 2)
    fu, fv = u - i, v - j
    low = grid[j, i] * (1 - fu) + grid[j, i + 1] * fu
    high = grid[j + 1, i] * (1 - fu) + grid[j + 1, i + 1] * fu
    result: FloatArray = low * (1 - fv) + high * fv
    return result


def _color(rgb: Sequence[int], alpha: float = 1.0) -> Color:
    return Color(r=rgb[0] / 255.0, g=rgb[1] / 255.0, b=rgb[2] / 255.0, a=alpha)


def _points(x: FloatArray, y: FloatArray, z: FloatArray) -> list[Point3]:
    return [Point3(x=px, y=py, z=pz) for px, py, pz in zip(x.tolist(), y.tolist(), z.tolist(), strict=True)]


Origin = tuple[float, float, float]  # the world origin in the frame of the scene


def _pose(origin: Origin, x: float = 0.0, y: float = 0.0, z: float = 0.0, yaw: float = 0.0) -> Pose:
    """The pose of a world position (and yaw) in the frame whose point `origin` is the world origin."""
    half = 0.5 * yaw
    return Pose(
        position=Vector3(x=origin[0] + x, y=origin[1] + y, z=origin[2] + z),
        orientation=Quaternion(x=0.0, y=0.0, z=math.sin(half), w=math.cos(half)),
    )


def _ground_mesh(ground: SceneGround, origin: Origin) -> TriangleListPrimitive:
    """The grid as two triangles per cell, indexed."""
    xs = ground.x0 + ground.spacing_m * np.arange(ground.nx, dtype=np.float64)
    ys = ground.y0 + ground.spacing_m * np.arange(ground.ny, dtype=np.float64)
    gx, gy = np.meshgrid(xs, ys)
    heights = np.asarray(ground.heights, dtype=np.float64)
    corner = (np.arange(ground.ny - 1)[:, None] * ground.nx + np.arange(ground.nx - 1)[None, :]).ravel()
    a, b, c, d = corner, corner + 1, corner + ground.nx, corner + ground.nx + 1
    indices = np.stack([a, b, d, a, d, c], axis=1).ravel()
    return TriangleListPrimitive(
        pose=_pose(origin),
        points=_points(gx.ravel(), gy.ravel(), heights),
        color=_GROUND_COLOR,
        indices=indices.tolist(),
    )


def _crop_lines(field: SceneCropField, ground: SceneGround | None, origin: Origin) -> LinePrimitive:
    """Each row of a field as segments along it, at the crop's height above the ground."""
    pieces = max(1, math.ceil(field.length_m / _CROP_STEP_M))
    along = np.linspace(0.0, field.length_m, pieces + 1)
    across = field.row_spacing_m * np.arange(field.rows, dtype=np.float64)
    c, s = math.cos(field.yaw), math.sin(field.yaw)
    x = field.x + c * along[None, :] - s * across[:, None]  # (rows, pieces + 1)
    y = field.y + s * along[None, :] + c * across[:, None]
    z = ground_heights(ground, x, y) + field.height_m
    starts = np.arange(pieces)[None, :] + (pieces + 1) * np.arange(field.rows)[:, None]
    indices = np.stack([starts, starts + 1], axis=-1).ravel()
    return LinePrimitive(
        type=LinePrimitiveLineType.LineList,
        pose=_pose(origin),
        thickness=field.row_width_m,
        points=_points(x.ravel(), y.ravel(), z.ravel()),
        color=_color(field.color),
        indices=indices.tolist(),
    )


def _route_line(route: Route, ground: SceneGround | None, origin: Origin) -> LinePrimitive:
    x = np.append(route.xy[:, 0], route.xy[0, 0])  # closed: back to the first point
    y = np.append(route.xy[:, 1], route.xy[0, 1])
    z = ground_heights(ground, x, y) + ROUTE_LIFT_M
    return LinePrimitive(
        type=LinePrimitiveLineType.LineStrip,
        pose=_pose(origin),
        thickness=_ROUTE_WIDTH_M,
        points=_points(x, y, z),
        color=_ROUTE_COLOR,
    )


def scene_update(layout: SceneLayout | None, route: Route, georef: Georeference, frame: str) -> SceneUpdate:
    """The entities of the scene (ground, buildings, crop, route) in `frame`, the frame of UTM
    positions, each entity's origin the world origin."""
    origin = georef.world_to_utm(0.0, 0.0, 0.0)
    ground = layout.ground if layout is not None else None

    entities = [SceneEntity(frame_id=frame, id="route", lines=[_route_line(route, ground, origin)])]
    if layout is not None:
        if ground is not None:
            entities.append(
                SceneEntity(frame_id=frame, id="ground", triangles=[_ground_mesh(ground, origin)])
            )
        cubes = [
            CubePrimitive(
                pose=_pose(origin, b.x, b.y, b.z, b.yaw),
                size=Vector3(x=b.lx, y=b.ly, z=b.lz),
                color=_color(b.color),
            )
            for b in layout.boxes
        ]
        if cubes:
            entities.append(SceneEntity(frame_id=frame, id="buildings", cubes=cubes))
        if layout.crop_fields:
            crop = [_crop_lines(f, ground, origin) for f in layout.crop_fields]
            entities.append(SceneEntity(frame_id=frame, id="crop", lines=crop))
    return SceneUpdate(entities=entities)
