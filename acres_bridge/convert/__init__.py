"""Pure conversions from simulator samples to ROS messages: no node, no I/O."""
