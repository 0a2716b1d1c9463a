"""The sans-IO protocol core: decoded JSON values and a clock in, decisions and results out."""
