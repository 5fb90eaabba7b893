"""The op table: importing the family files registers every op's one entry (see registry.OpDef)."""
from . import (  # noqa: F401  (registration side effects)
    control, conv, elementwise, attention, losses, fallback, indexing, layout, linalg, norm, quant, reduce,
    resample, rnn, scatter, sequence, source,
)
from .tf import control as tf_control, math as tf_math, nn as tf_nn, ops as tf_ops, shape as tf_shape  # noqa: F401,E402
from . import (  # noqa: F401,E402  (registration side effects)
    activations, bitwise, pooling, sampling,
)
from . import conv_causal_deform, linear_attention, random, signal  # noqa: F401,E402
from . import strings  # noqa: F401,E402
from .tf import (  # noqa: F401,E402  (TF's ops under their TF names)
    array as tf_array, conv as tf_conv, elementwise as tf_elementwise, functional as tf_functional, lists as tf_lists,
    random as tf_random, strings as tf_strings, tensor_arrays as tf_tensor_arrays,
)
from .pytorch import grad as torch_grad, index as torch_index, math as torch_math, nn as torch_nn  # noqa: F401,E402
from . import aten  # noqa: F401,E402  (the aten op table: its frame, then its rows)
from .aten import core as aten_core, grad as aten_grad, layout as aten_layout, rnn as aten_rnn, table as aten_table  # noqa: F401,E402,E501
from .arrays import Unsupported  # noqa: F401
from .registry import (  # noqa: F401
    ALL, BODY_CONTROL, CONTROL_FLOW, CUSTOM, DEVICES, ELEMENTWISE, EXPENSIVE, FRAMES, FUNCTIONAL, LAYOUT, LISTS, MEAN, NOOP,
    PARAMETER_SOURCE, REDUCTION, REGISTRY, SHAPE_CONSUMER, SOURCE, STRIDED_WINDOW, TYPE_VALUE, VALUE_RULE, VOLATILE,
    ZERO_SIZE, OpDef, Registry,
)
from . import cost_facts  # noqa: E402

cost_facts.apply(REGISTRY)
