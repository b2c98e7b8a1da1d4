"""The search's defaults, set here once: the CLI, the service and ``LawSearch`` all read them.

A run posted to the API, ``sld discover`` and ``LawSearch.fit`` on the same
data and seed run the same search (see ``agent.plan``).  The service's
``SLD_DEFAULT_*`` settings default to these values.
"""

DEFAULT_BUDGET = 2000          # candidates: rarely the binding limit; the work budget is
DEFAULT_WORK = 400_000.0       # model evaluations: ~50 s on 2 cores for the SLDBench tasks, reproducible from the seed
DEFAULT_TIME_LIMIT = 600.0     # seconds, a safety net only: a run stopped by time is not reproducible
DEFAULT_CAP = 6                # constants per group a law may have, per target (``default_cap``)
AXIS_MIN_SPAN = 10.0           # the default axis: the inputs that are positive and span at least a decade
MIN_TRAIN_ROWS = 4             # fewer training rows cannot rank laws on held-out rows


def default_cap(n_targets: int) -> int:
    """The constant cap when none is given: ``DEFAULT_CAP`` for each target.  A second target measured
    on the same runs (an accuracy beside the loss) must not halve the first one's law: with one cap of
    6 for two targets, the loss could not even have Chinchilla's five constants."""
    return DEFAULT_CAP * max(int(n_targets), 1)
