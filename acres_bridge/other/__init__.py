"""The package's nodes besides the bridge (spec: Topics of the Other Nodes).

Each node lives in the module of its executable's name; the logic they share with nothing ROS is
in pure modules, testable without a node:

| executable (module) | node class | pure logic |
| --- | --- | --- |
| ``dbw_demo_driver`` | ``DbwDemoDriver`` | ``pursuit``, ``paths`` |
| ``odom_path`` | ``OdomPath`` | ``paths`` |
| ``lab_stubs`` | ``LabStubs`` | |
| ``polaris_description`` | ``PolarisDescription`` | ``description`` |

Every node class also loads into the component container (entry-point group
``acres_bridge.components``, ``acres_bridge::DbwDemoDriver`` etc.). Names, types, QoS and frames
come from msg_profiles: table ``other_nodes``, and ``polaris`` for the vehicle's topics.
"""
