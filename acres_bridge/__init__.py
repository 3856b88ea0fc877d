"""acres_bridge: the ROS 2 bridge of the ACRES agricultural vehicle simulator."""

__all__ = ["__version__"]

__version__ = "0.1.0"
