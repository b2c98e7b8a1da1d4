"""The scipy backend that fits a law's constants, per group."""
from agent.fitting.fit import LOSSES, FitOptions, FitResult, fit_law, predict, resolve_loss

__all__ = ["LOSSES", "FitOptions", "FitResult", "fit_law", "predict", "resolve_loss"]
