"""The simulator's vehicles: what each agent is and how it moves, with no knowledge of the world's
scene, its sensors or the server.

The parameters of each vehicle (`params`), the kinematic model (`kinematics`), the INS
(`ins`), the Polaris's powertrain (`powertrain`) and drive-by-wire (`dbw/`), the Maxxum's
tractor (`tractor`, `tractor_types`, `hitch`, `implement`) and its J1939 frames (`j1939/`), and
what each vehicle spends (`energy`). These modules import each other, the simulator's clock and
errors, and nothing else of it; test/test_layers.py enforces that.
"""
