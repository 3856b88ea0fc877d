"""The simulator's perception: the static scene and its ground, and the sensors that cast rays into it.

The scene (`scene`: buildings, crop, the ground of `terrain`), the ray casting (the numpy
reference `_raycast` and the compiled kernels `cast_kernels`, `terrain_kernels`, `minmax_kernels`,
`lidar_kernels`, `shade_kernels` behind `compiled_cast`), the sensor models (`sensor_model`: the
interface; `lidar`, `camera`) and each vehicle's rig of them (`rig`). It may import the vehicles
(a sensor is mounted on one) and the simulator's clock and errors, never the world, its episode or
the server; test/test_layers.py enforces that.
"""
