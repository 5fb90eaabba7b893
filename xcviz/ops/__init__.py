"""The op table: importing the family files registers every op's one entry (see registry.OpDef)."""
from . import (  # noqa: F401  (registration side effects)
    control, conv, elementwise, attention, losses, fallback, indexing, layout, linalg, norm, quant, reduce,
    resample, rnn, scatter, sequence, source, tf_control, tf_math, tf_nn, tf_ops, tf_shape,
)
from . import (  # noqa: F401,E402  (registration side effects)
    activations, bitwise, pooling, sampling,
)
from . import conv_causal_deform, linear_attention, random, signal  # noqa: F401,E402
from . import strings  # noqa: F401,E402
from . import tf_array, tf_conv, tf_elementwise, tf_functional, tf_lists, tf_random, tf_strings  # noqa: F401,E402
from . import torch_grad, torch_index, torch_math, torch_nn  # noqa: F401,E402  (ops in PyTorch's forms)
from . import aten, aten_core, aten_grad, aten_layout, aten_rnn, aten_table  # noqa: F401,E402  (the aten op table)
from .arrays import Unsupported  # noqa: F401
from .registry import (  # noqa: F401
    ALL, BODY_CONTROL, CONTROL_FLOW, CUSTOM, DEVICES, ELEMENTWISE, EXPENSIVE, FUNCTIONAL, LAYOUT, MEAN, NOOP,
    PARAMETER_SOURCE, REDUCTION, REGISTRY, SHAPE_CONSUMER, SOURCE, STRIDED_WINDOW, TYPE_VALUE, VALUE_RULE, VOLATILE,
    ZERO_SIZE, OpDef, Registry,
)
from . import cost_facts  # noqa: E402

cost_facts.apply(REGISTRY)
