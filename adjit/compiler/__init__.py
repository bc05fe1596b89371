"""The compiler: Python AST -> adjit dialect -> stages -> native code or PTX."""
