"""Simulation side of the project: the host bus functional model (CPU + memory), packet codecs,
channel models, the cocotb runner and the driver-level Python API used by tests and benchmarks."""
