"""Geometry both sides share: rotations, the tile's georeference, the built-in route and pure pursuit.

Pure (numpy and pyproj only): the simulator imports it as it imports the wire, and the nodes a
user runs beside the real vehicle use it without the simulator.
"""
