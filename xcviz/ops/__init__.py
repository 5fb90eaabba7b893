"""The op registry: import the families so that every row is registered once."""
from . import control, elementwise, layout, linalg, nn  # noqa: F401  (registration side effects)
from .registry import (  # noqa: F401
    ALL, CONTROL_FLOW, CUSTOM, DEVICES, ELEMENTWISE, LAYOUT, NOOP, REDUCTION, REGISTRY, SHAPE_CONSUMER, SOURCE,
    ZERO_SIZE, OpDef, Registry,
)
