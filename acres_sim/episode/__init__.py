"""The episode log: what the simulator records of a session beside what it serves (docs/episode_log.md).

The log itself (`log`: an observer of the server's steps that writes one MCAP file), its
messages (`messages`: the /sim/* channels, CDR; `step_channels`: the per-step ones packed as
bytes), what each agent's drive did in a step (`drive`) and the records experiments give it
(`records`: task status, vehicle shifts). It reads the world, its farm and weather and the
vehicles; nothing of the simulator imports it but the command line (test/test_layers.py).
"""
