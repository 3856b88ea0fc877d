"""Tests of acres_sim, the simulation core of the reference simulator."""
