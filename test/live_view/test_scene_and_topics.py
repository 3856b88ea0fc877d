"""The live view's pure parts: the topics it serves and the scene it draws."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from foxglove.messages import SceneUpdate
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from acres_bridge.geo.georef import ACRE_GEOREFERENCE
from acres_bridge.geo.route import acre_loop
from acres_bridge.live_view.scene import ROUTE_LIFT_M, ground_heights, scene_update
from acres_bridge.live_view.topics import view_topics
from acres_bridge.msg_profiles import load_profiles
from acres_bridge.wire.messages import SceneBox, SceneCropField, SceneGround, SceneLayout

GROUND = SceneGround(
    x0=-10.0, y0=-20.0, spacing_m=10.0, nx=3, ny=4, heights=tuple(float(i) for i in range(12))
)
LAYOUT = SceneLayout(
    name="test",
    ground=GROUND,
    boxes=(SceneBox(x=1.0, y=2.0, z=3.0, lx=4.0, ly=5.0, lz=6.0, yaw=math.pi / 2, color=(255, 0, 51)),),
    crop_fields=(
        SceneCropField(
            x=0.0, y=0.0, yaw=0.0, length_m=10.0, rows=3, row_spacing_m=1.0, row_width_m=0.5,
            height_m=0.9, color=(0, 255, 0),
        ),
    ),
)  # fmt: skip


def test_ground_heights_are_the_grid_s_at_its_points_and_bilinear_between() -> None:
    xs = GROUND.x0 + GROUND.spacing_m * np.arange(GROUND.nx)
    ys = GROUND.y0 + GROUND.spacing_m * np.arange(GROUND.ny)
    gx, gy = np.meshgrid(xs, ys)
    assert ground_heights(GROUND, gx.ravel(), gy.ravel()).tolist() == list(GROUND.heights)
    # Halfway between the four corners of the first cell (heights 0, 1, 3, 4): their mean.
    assert ground_heights(GROUND, np.array([-5.0]), np.array([-15.0]))[0] == pytest.approx(2.0)
    # Beyond the grid: the edge's height; no ground: 0.
    assert ground_heights(GROUND, np.array([1e3]), np.array([-1e3]))[0] == 2.0
    assert ground_heights(None, np.array([1.0, 2.0]), np.array([0.0, 0.0])).tolist() == [0.0, 0.0]


def decode(update: SceneUpdate) -> Any:
    """The update as a viewer reads it: its protobuf bytes decoded with the schema it is sent with."""
    schema = SceneUpdate.get_schema()
    files = descriptor_pb2.FileDescriptorSet.FromString(schema.data)
    pool = descriptor_pool.DescriptorPool()
    for file in files.file:
        pool.Add(file)
    message_class = message_factory.GetMessageClass(pool.FindMessageTypeByName(schema.name))
    return message_class.FromString(update.encode())


def _entities(update: SceneUpdate) -> dict[str, Any]:
    return {entity.id: entity for entity in decode(update).entities}


def test_the_scene_has_the_ground_buildings_crop_and_route_placed_at_the_world_origin_s_utm() -> None:
    entities = _entities(scene_update(LAYOUT, acre_loop(), ACRE_GEOREFERENCE, "utm"))
    assert sorted(entities) == ["buildings", "crop", "ground", "route"]
    assert {entity.frame_id for entity in entities.values()} == {"utm"}
    east, north, up = ACRE_GEOREFERENCE.world_to_utm(0.0, 0.0, 0.0)

    (cube,) = entities["buildings"].cubes
    assert (cube.pose.position.x, cube.pose.position.y, cube.pose.position.z) == (
        east + 1.0,
        north + 2.0,
        up + 3.0,
    )
    assert (cube.size.x, cube.size.y, cube.size.z) == (4.0, 5.0, 6.0)
    assert cube.pose.orientation.z == pytest.approx(math.sin(math.pi / 4))
    assert (cube.color.r, cube.color.g, cube.color.b) == (1.0, 0.0, 0.2)

    (mesh,) = entities["ground"].triangles
    assert len(mesh.points) == 12
    assert len(mesh.indices) == 6 * (GROUND.nx - 1) * (GROUND.ny - 1)
    assert (mesh.pose.position.x, mesh.pose.position.y) == (east, north)

    (rows,) = entities["crop"].lines
    assert rows.thickness == 0.5
    assert len(rows.points) == 3 * 4  # 3 rows of 10 m, each in 3 pieces of at most 4 m
    assert {round(p.y, 9) for p in rows.points} == {0.0, 1.0, 2.0}  # row 0 at y, the next to its left
    # Each point at the crop's height above the ground there.
    x = np.array([p.x for p in rows.points])
    y = np.array([p.y for p in rows.points])
    assert [p.z for p in rows.points] == pytest.approx(ground_heights(GROUND, x, y) + 0.9)

    (route,) = entities["route"].lines
    loop = acre_loop()
    assert len(route.points) == len(loop.xy) + 1  # closed
    assert (route.points[0].x, route.points[0].y) == (route.points[-1].x, route.points[-1].y)
    assert route.points[0].z == pytest.approx(
        ground_heights(GROUND, loop.xy[:1, 0], loop.xy[:1, 1])[0] + ROUTE_LIFT_M
    )


def test_without_a_scene_the_route_alone_is_drawn_on_flat_ground() -> None:
    entities = _entities(scene_update(None, acre_loop(), ACRE_GEOREFERENCE, "utm"))
    assert list(entities) == ["route"]
    assert {p.z for p in entities["route"].lines[0].points} == {ROUTE_LIFT_M}


def test_the_scene_encodes_the_same_bytes_every_time() -> None:
    first = scene_update(LAYOUT, acre_loop(), ACRE_GEOREFERENCE, "utm").encode()
    assert scene_update(LAYOUT, acre_loop(), ACRE_GEOREFERENCE, "utm").encode() == first


@pytest.mark.parametrize(("vehicle", "namespace"), [("polaris", ""), ("maxxum", "/tractor")])
def test_the_view_serves_every_wire_topic_of_the_vehicle_and_the_session_once(
    vehicle: str, namespace: str
) -> None:
    profiles = load_profiles()
    topics = {topic.name: topic for topic in view_topics(profiles, vehicle, namespace)}
    wire = [spec for spec in (*profiles.table(vehicle), *profiles.table("session")) if spec.qos is not None]
    assert len(topics) == len({spec.name for spec in wire})
    assert "/sim/episode" in topics
    assert topics["/sim/episode"].latched
    assert topics["/tf_static"].latched
    assert not topics["/tf"].latched
    assert topics["/clock"].stamped
    assert not topics["/tf"].stamped
    if vehicle == "polaris":
        assert topics["/vehicle/odom"].stamped
        assert topics["/vehicle/ulc/cmd"].command
        assert not topics["/vehicle/odom"].command
    else:
        assert "/tractor/odom" in topics
        assert topics["/tractor/cmd_vel"].command
        assert "/tractor/tf" not in topics  # /tf stays absolute
