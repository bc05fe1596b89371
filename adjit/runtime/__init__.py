"""The runtime: arrays and launches, over the C++ runtime in adjit._adjit."""
