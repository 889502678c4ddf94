"""Helpers shared by the Variants lab's AppTests."""


def _section(at, name):
    at.segmented_control(key="variants-section").set_value(name).run()
    assert not at.exception, name
    return at


def _texts(at) -> str:
    return " ".join(e.value for kind in ("info", "warning", "error") for e in at.get(kind))
