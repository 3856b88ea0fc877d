"""The Foxglove layouts shipped for each vehicle: installed in the share directory, and every topic
and field they show is one the live view serves for that vehicle."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from ament_index_python.packages import get_package_share_directory

from acres_bridge.live_view.node import SCENE_TOPIC
from acres_bridge.live_view.topics import view_topics
from acres_bridge.msg_profiles import load_profiles
from acres_bridge.tools.msgdef import message_class

_TOPIC = re.compile(r"^(/[A-Za-z0-9_/]+?)\.([A-Za-z0-9_.]+)")


def _layout(vehicle: str) -> dict[str, Any]:
    path = Path(get_package_share_directory("acres_bridge")) / "layouts" / f"{vehicle}.json"
    layout: dict[str, Any] = json.loads(path.read_text())
    return layout


def _panels(layout: dict[str, Any]) -> list[str]:
    """The panel ids the layout's tree places."""
    node = layout["layout"]
    if isinstance(node, str):
        return [node]
    return [*_panels({"layout": node["first"]}), *_panels({"layout": node["second"]})]


def _shown(config: dict[str, Any]) -> list[str]:
    """Every 'topic' or 'topic.field.path' a panel's configuration names."""
    shown = [*config.get("topics", {})]
    image = config.get("imageMode", {})
    shown += [image[key] for key in ("imageTopic", "calibrationTopic") if key in image]
    shown += [path["value"].split(" ")[0] for path in config.get("paths", [])]
    shown += [config["topicPath"]] if "topicPath" in config else []
    return shown


@pytest.mark.parametrize("vehicle", ["polaris", "maxxum"])
def test_the_layout_shows_only_what_the_live_view_serves(vehicle: str) -> None:
    layout = _layout(vehicle)
    served = {topic.name: topic for topic in view_topics(load_profiles(), vehicle, "")}
    assert sorted(_panels(layout)) == sorted(layout["configById"])  # every panel placed, none missing
    shown = [item for config in layout["configById"].values() for item in _shown(config)]
    assert SCENE_TOPIC in shown
    assert any(item.startswith("/lidar/points") for item in shown)
    for item in shown:
        if item == SCENE_TOPIC:
            continue
        match = _TOPIC.match(item)
        topic, path = (match.group(1), match.group(2)) if match else (item, "")
        assert topic in served, f"{vehicle}: {topic} is not served"
        fields: Any = message_class(served[topic].type_name)
        for name in filter(None, path.split(".")):
            types = fields.get_fields_and_field_types()
            assert name in types, f"{vehicle}: {item}: no field {name!r}"
            kind = types[name]
            if "/" in kind:
                package, _, type_name = kind.partition("/")
                fields = message_class(f"{package}/msg/{type_name}")
    scene = layout["configById"]["3D!scene"]
    assert scene["followTf"] == "base_footprint"
