"""Hypothesis profiles for the fuzz suite.

``ci`` (the default) keeps the suite to about a minute on a 2-core machine, with a fixed
seed so that CI is repeatable; ``deep`` is for longer hunts:
``python -m pytest tests/fuzz --hypothesis-profile=deep`` (hundreds of examples a test,
a fresh seed each run; a failure prints the ``@reproduce_failure`` line to replay it).
"""

from hypothesis import HealthCheck, settings

# Model calls are slow on a shared CPU: timing is pytest-timeout's job, not a deadline's.
settings.register_profile(
    "ci",
    max_examples=25,
    deadline=None,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "deep",
    max_examples=600,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def pytest_configure(config):
    # A historic hook: pytest calls it when this conftest registers, after hypothesis's own
    # plugin read --hypothesis-profile, so an explicit profile still wins.
    settings.load_profile(config.getoption("hypothesis_profile", None) or "ci")
