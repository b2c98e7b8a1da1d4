"""Errors that carry a message meant for the user (one line, names the problem)."""


class SldError(Exception):
    """Base of every user-facing error; faces (CLI, API) print ``str(err)``."""


class LawError(SldError, ValueError):
    """A law was rejected; the message names the reason."""


class DataError(SldError, ValueError):
    """The data cannot be used as given; the message names the problem."""


class FitError(SldError):
    """Constants could not be fitted (non-finite predictions, no convergence)."""
