"""The simulator's world: the session's agents moving on the tile, with no I/O.

The world itself (`model`: agents, physics steps, sensor captures, resets), what it takes and
gives (`agents`), its agents' records and where their vehicles are put down (`spawn`: at the
start and on resets), the built-in route's follower (`route`), the weather and the farm's fields
(`weather`, `farm/`), and its samples as wire messages (`wire`, pure). It may import the
vehicles and the sensors, never the episode log or the server (test/test_layers.py).
"""
