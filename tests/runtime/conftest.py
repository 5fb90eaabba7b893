"""Fixtures of the runtime tests."""
import pytest


@pytest.fixture
def without_tensorflow(monkeypatch):
    """The native runtimes as where TensorFlow is not installed (where it is, a TF program runs on it)."""
    from xcviz.runtime import native

    real = native._available
    monkeypatch.setattr(native, "_available", lambda m: False if m == "tensorflow" else real(m))
