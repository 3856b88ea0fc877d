"""The subsystem nodes of the bridge: each wires one subsystem's topics, nothing else."""
