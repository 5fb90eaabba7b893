"""The op table: importing the family files registers every op's one entry (see registry.OpDef)."""
from . import (  # noqa: F401  (registration side effects)
    control, conv, elementwise, extra_attention, extra_nn, fallback, indexing, layout, linalg, norm, quant, reduce,
    resample, rnn, scatter, sequence, source, tf_control, tf_math, tf_nn, tf_ops, tf_shape,
)
from . import (  # noqa: F401,E402  (the ONNX ops added after the first families)
    extra_elementwise, extra_indexing, extra_reduce, extra_sampling,
)
from . import extra_conv, extra_linattn, extra_random, extra_signal  # noqa: F401,E402  (round 4's ops B)
from . import extra_misc  # noqa: F401,E402  (BitCast, Det, MelWeightMatrix, TfIdfVectorizer, string ops)
from . import torch_grad, torch_index, torch_math, torch_nn  # noqa: F401,E402  (ops in PyTorch's forms)
from . import aten, aten_core, aten_grad, aten_layout, aten_rnn, aten_table  # noqa: F401,E402  (the aten op table)
from .arrays import Unsupported  # noqa: F401
from .registry import (  # noqa: F401
    ALL, CONTROL_FLOW, CUSTOM, DEVICES, ELEMENTWISE, LAYOUT, NOOP, REDUCTION, REGISTRY, SHAPE_CONSUMER, SOURCE,
    ZERO_SIZE, OpDef, Registry,
)
