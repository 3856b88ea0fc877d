"""acres_bridge: an ament_python package, installable with colcon or with pip."""

from glob import glob

from setuptools import find_packages, setup

PACKAGE = "acres_bridge"


def data_files() -> list[tuple[str, list[str]]]:
    """Files that ROS tools find through the share directory of the package."""
    files = [
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        # `ros2 component types` lists what this index names: plugin;module:class (a Python target,
        # where rclcpp writes a library path; only acres_bridge's component_container loads these).
        ("share/ament_index/resource_index/rclcpp_components", [f"resource/rclcpp_components/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
    ]
    for folder, pattern in (
        ("launch", "*.launch.py"),
        ("params", "*.yaml"),
        ("msg_profiles", "*.yaml"),
        ("layouts", "*.json"),  # the live view's Foxglove layouts (docs/foxglove.md)
    ):
        found = sorted(glob(f"{folder}/{pattern}"))
        if found:
            files.append((f"share/{PACKAGE}/{folder}", found))
    return files


setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test", "test.*", "bench", "bench.*", "tools"]),
    data_files=data_files(),
    package_data={PACKAGE: ["container/fastdds_bridge.xml"]},
    install_requires=["setuptools"],
    # Learning over acres_bridge.gym (RLlib, Stable-Baselines3): optional, pinned in constraints.txt.
    extras_require={"rl": ["ray[rllib]", "torch", "stable-baselines3"]},
    zip_safe=False,
    maintainer="ACRES simulator team",
    maintainer_email="acres@purdue.edu",
    description="ROS 2 bridge of the ACRES agricultural vehicle simulator",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [
            "acres_topics = acres_bridge.topics_cli:main",
            "acres_demo = acres_bridge.demo:main",
            "component_container = acres_bridge.container.main:main",
            "sim_bridge = acres_bridge.sim_bridge:main",
            "acres_sim = acres_sim.cli:main",
            "dbw_demo_driver = acres_bridge.other.dbw_demo_driver:main",
            "odom_path = acres_bridge.other.odom_path:main",
            "lab_stubs = acres_bridge.other.lab_stubs:main",
            "polaris_description = acres_bridge.other.polaris_description:main",
            "acres_record = acres_bridge.tools.record:main",
            "check_topic_parity = acres_bridge.tools.check_topic_parity:main",
            "check_msg_defs = acres_bridge.tools.check_msg_defs:main",
            "acres_scenario = acres_bridge.scenario.cli:main",
            "policy_driver = acres_bridge.other.policy_driver:main",
            "acres_report = acres_bridge.report.cli:main",
        ],
        # The test kit's fixture (acres_bridge.testing): off unless a test asks for acres_sim.
        "pytest11": ["acres_sim = acres_bridge.testing.pytest_plugin"],
        # Node classes that the component container loads by name.
        "acres_bridge.components": [
            "acres_bridge::Heartbeat = acres_bridge.container.heartbeat:Heartbeat",
            "acres_bridge::Ingest = acres_bridge.ingest.node:IngestNode",
            "acres_bridge::ClockTf = acres_bridge.nodes.clock_tf:ClockTf",
            "acres_bridge::Ins = acres_bridge.nodes.ins:Ins",
            "acres_bridge::EpisodeClock = acres_bridge.nodes.episode:EpisodeClock",
            "acres_bridge::DbwDemoDriver = acres_bridge.other.dbw_demo_driver:DbwDemoDriver",
            "acres_bridge::OdomPath = acres_bridge.other.odom_path:OdomPath",
            "acres_bridge::LabStubs = acres_bridge.other.lab_stubs:LabStubs",
            "acres_bridge::PolarisDescription = acres_bridge.other.polaris_description:PolarisDescription",
            "acres_bridge::Dbw = acres_bridge.nodes.dbw:Dbw",
            "acres_bridge::PoseReset = acres_bridge.nodes.reset:PoseReset",
            "acres_bridge::Perception = acres_bridge.nodes.perception:Perception",
            "acres_bridge::Maxxum = acres_bridge.nodes.maxxum:Maxxum",
            "acres_bridge::Can = acres_bridge.nodes.can:Can",
            "acres_bridge::LiveView = acres_bridge.live_view.node:LiveView",
        ],
    },
)
