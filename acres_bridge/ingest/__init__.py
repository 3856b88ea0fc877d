"""The ingest: the simulator connection, the in-process sample bus and the internal channels."""
