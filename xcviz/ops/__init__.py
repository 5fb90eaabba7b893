"""The op table: each family file declares its ops in its OPS (one entry per op, every fact on it: see
registry.OpDef); build_registry puts them in one table, in the order of FAMILIES, and freezes it."""
from . import (
    activations, attention, bitwise, causal_conv, control, conv, deform_conv, elementwise, fallback, indexing, layout,
    linalg, linear_attention, losses, norm, pooling, quant, random, reduce, resample, rnn, sampling, scatter,
    sequence, signal, source, strings,
)
from . import aten
from .aten import rnn as aten_rnn
from .pytorch import grad as torch_grad, index as torch_index, math as torch_math, nn as torch_nn
from .tf import (
    array as tf_array, control as tf_control, conv as tf_conv, elementwise as tf_elementwise,
    functional as tf_functional, lists as tf_lists, math as tf_math, nn as tf_nn, ops as tf_ops, random as tf_random,
    shape as tf_shape, strings as tf_strings, tensor_arrays as tf_tensor_arrays,
)
from .arrays import Unsupported  # noqa: F401
from .registry import (  # noqa: F401
    ALL, BODY_CONTROL, CONTROL_FLOW, CUSTOM, DEVICES, ELEMENTWISE, EXPENSIVE, FRAMES, FUNCTIONAL, LAYOUT, LISTS, MEAN, NOOP,
    PARAMETER_SOURCE, REDUCTION, SHAPE_CONSUMER, SOURCE, STRIDED_WINDOW, TYPE_VALUE, VALUE_RULE, VARIABLE, VOLATILE,
    ZERO_SIZE, Group, OpDef, Registry,
)

# the family files, in the order their entries go in the table (the order decides nothing but the table's
# insertion order: a name belongs to one entry; `Registry.add` refuses a second)
FAMILIES = (
    control, conv, elementwise, attention, losses, fallback, indexing, layout, linalg, norm, quant, reduce, resample,
    rnn, scatter, sequence, source,
    tf_control, tf_math, tf_nn, tf_ops, tf_shape,
    activations, bitwise, pooling, sampling, causal_conv, deform_conv, linear_attention, random, signal, strings,
    tf_array, tf_conv, tf_elementwise, tf_functional, tf_lists, tf_random, tf_strings, tf_tensor_arrays,
    torch_grad, torch_index, torch_math, torch_nn,
    aten, aten_rnn,
)


def build_registry(families=FAMILIES) -> Registry:
    """The op table, built once: every family's entries, in order, then frozen (nothing changes it afterwards)."""
    table = Registry()
    for family in families:
        for entry in family.OPS:
            table.add(entry)
    table.freeze()
    return table


REGISTRY = build_registry()
