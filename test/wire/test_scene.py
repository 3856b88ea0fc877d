"""The scene a HELLO may carry: it round-trips, it is optional, and every bad value is refused
with the field named (a viewer draws it as it comes, so nothing unbounded gets in)."""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from typing import Any

import pytest
from samples import agent, hello

from acres_bridge.wire.errors import ProtocolError
from acres_bridge.wire.json_codecs import decode_hello, encode_json
from acres_bridge.wire.messages import (
    MAX_SCENE_BOXES,
    MAX_SCENE_GROUND_POINTS,
    SceneBox,
    SceneCropField,
    SceneGround,
    SceneLayout,
)

SCENE = SceneLayout(
    name="V03ACRE",
    ground=SceneGround(x0=-8.0, y0=-8.0, spacing_m=8.0, nx=3, ny=2, heights=(0.0, 0.5, 1.0, 1.5, 2.0, 2.25)),
    boxes=(SceneBox(x=62.0, y=42.0, z=4.7, lx=36.0, ly=18.0, lz=8.1, yaw=0.0, color=(170, 170, 175)),),
    crop_fields=(
        SceneCropField(
            x=-25.0, y=-60.0, yaw=1.5707963267948966, length_m=120.0, rows=100,
            row_spacing_m=0.76, row_width_m=0.35, height_m=0.9, color=(60, 130, 40),
        ),
    ),
)  # fmt: skip


def payload(scene: Any) -> bytes:
    data = json.loads(encode_json(hello(agent(0))))
    data["scene"] = scene
    return json.dumps(data).encode()


def test_a_hello_s_scene_round_trips() -> None:
    message = hello(agent(0), scene=SCENE)
    assert decode_hello(encode_json(message)) == message


def test_a_hello_without_a_scene_has_none() -> None:
    data = json.loads(encode_json(hello(agent(0))))
    del data["scene"]
    assert decode_hello(json.dumps(data).encode()).scene is None
    assert decode_hello(payload(None)).scene is None


def _scene(**changes: Any) -> dict[str, Any]:
    return {**asdict(SCENE), **changes}


def _box(**changes: Any) -> dict[str, Any]:
    return {**asdict(SCENE.boxes[0]), **changes}


def _crop(**changes: Any) -> dict[str, Any]:
    return {**asdict(SCENE.crop_fields[0]), **changes}


def _ground(**changes: Any) -> dict[str, Any]:
    assert SCENE.ground is not None
    return {**asdict(SCENE.ground), **changes}


BAD = [
    (_scene(boxes=[_box(x=float("nan"))]), "box 0: field 'x' must be finite"),
    (_scene(boxes=[_box(x=1e9)]), r"box 0: field 'x' must be in -1000.0 .. 1000.0"),
    (_scene(boxes=[_box(lz=0.0)]), "box 0: field 'lz' must be a size"),
    (_scene(boxes=[_box(color=[0, 0, 256])]), "box 0: field 'color' must be 3 integers 0..255"),
    (_scene(boxes=[_box(color=[0, 0])]), "box 0: field 'color'"),
    (_scene(boxes=[_box()] * (MAX_SCENE_BOXES + 1)), f"at most {MAX_SCENE_BOXES} are taken"),
    (_scene(boxes=[7]), "boxes 0: must be an object"),
    (_scene(boxes={}), "field 'boxes' must be list"),
    (_scene(crop_fields=[_crop(rows=0)]), "crop field 0: field 'rows' must be in 1"),
    (_scene(crop_fields=[_crop(rows=1.5)]), "field 'rows' must be int"),
    (_scene(ground=_ground(heights=[0.0] * 5)), "must have nx \\* ny = 6 values, found 5"),
    (_scene(ground=_ground(nx=1)), "nx and ny must be >= 2"),
    (_scene(ground=_ground(nx=100, ny=100, heights=[0.0] * 10_000)), f"<= {MAX_SCENE_GROUND_POINTS}"),
    (_scene(ground=_ground(spacing_m=900.0)), "the grid must lie within"),
    (_scene(ground=_ground(heights=[0.0] * 5 + [1e6])), "field 'heights' must be within"),
    (_scene(name=3), "field 'name' must be str"),
    ("acre", "field 'scene' must be dict"),
]  # fmt: skip


@pytest.mark.parametrize(("scene", "message"), BAD)
def test_a_bad_scene_is_refused_naming_the_field(scene: Any, message: str) -> None:
    with pytest.raises(ProtocolError, match=f"HELLO.*{message}"):
        decode_hello(payload(scene))


def test_the_simulator_s_scene_fits_a_hello() -> None:
    acres_sim = pytest.importorskip("acres_sim.world.wire")
    from acres_sim.sensors.tile import acre_scene, flat_scene  # noqa: PLC0415

    for scene in (acre_scene(), flat_scene()):
        layout = acres_sim.scene_layout(scene, "V03ACRE")
        message = hello(agent(0), scene=layout)
        assert decode_hello(encode_json(message)) == message
    assert replace(SCENE, boxes=()).boxes == ()
