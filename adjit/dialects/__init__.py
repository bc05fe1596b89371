"""Python op builders of the adjit dialect, generated from dialects/AdjitOps.td."""
