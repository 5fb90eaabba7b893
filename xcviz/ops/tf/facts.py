"""TensorFlow's facts about its ops, keyed by TF op type: what TF's own lists say about ops a GraphDef may hold,
including ops outside xcviz's table (StackV2, Svd, ...): a TF graph is read and clustered by TF's rules whether or
not xcviz can run the op. Read by clustering.tf_filter (TF's OperationFilter) and loaders.tensorflow.graphdef (the
output dtypes of a NodeDef read without TF's op registry)."""
from __future__ import annotations

# ---- compilability_check_util.cc: the OperationFilter's op lists -------------------------------------------
# IsStatefulRandomOp
STATEFUL_RANDOM = frozenset({"RandomUniform", "RandomShuffle", "RandomUniformInt", "RandomStandardNormal",
                             "TruncatedNormal", "Multinomial"})
ASSERTS = frozenset({"Assert", "CheckNumerics"})
# XlaResourceOpInfo kinds kStack and kTensorArray (tf2xla/resource_operation_table.cc)
STACK_OPS = frozenset({"StackV2", "StackPushV2", "StackPopV2", "StackCloseV2"})
TENSOR_ARRAY_OPS = frozenset({"TensorArrayV3", "TensorArrayConcatV3", "TensorArrayGatherV3", "TensorArrayScatterV3",
                              "TensorArrayGradV3", "TensorArrayCloseV3", "TensorArrayReadV3", "TensorArraySizeV3",
                              "TensorArraySplitV3", "TensorArrayWriteV3", "TensorArrayGradWithShape"})
# ops whose inputs or outputs are DT_VARIANT (OpProducesOrConsumesVariant reads the node's types; a GraphDef
# read without TF's op registry knows them by name, or by a `variant` type attribute)
VARIANT_OPS = frozenset({"EmptyTensorList", "OptionalFromValue", "OptionalNone", "OptionalGetValue",
                         "OptionalHasValue", "TensorMapEmpty", "TensorMapInsert", "TensorMapLookup",
                         "TensorMapErase", "TensorMapSize", "TensorMapHasKey", "TensorMapStackKeys"})
INACCURATE_OPS = frozenset({"SelfAdjointEigV2", "Svd"})  # OpIsInaccurate (b/127344411)
SLOW_OPS = frozenset({"SelfAdjointEigV2", "Svd", "Qr", "MatrixInverse", "MatrixSolve", "ResizeBilinearGrad"})
COLLECTIVES = frozenset({"CollectiveReduceV2"})

# ---- a NodeDef's output dtype, where its `T`/`dtype` attribute does not give it (TF's op registry would) ----
# ops whose first output is bool
BOOL_OUT = frozenset({"Less", "LessEqual", "Greater", "GreaterEqual", "Equal", "NotEqual", "LogicalAnd", "LogicalOr",
                      "LogicalNot", "IsFinite", "IsNan", "IsInf", "LoopCond", "All", "Any", "VarIsInitializedOp"})
# the attribute holding the first output's dtype (Rank: none; FIXED_OUT gives it)
OUT_DTYPE_ATTR = {"Shape": "out_type", "Size": "out_type", "Rank": None, "Cast": "DstT", "ArgMax": "output_type",
                  "ArgMin": "output_type", "Range": "Tidx", "StringToNumber": "out_type", "Bitcast": "type",
                  "StatelessRandomUniformV2": "dtype", "StatelessRandomNormalV2": "dtype"}
# ops whose first output has one dtype
FIXED_OUT = {"StringLength": "int32", "AsString": "string", "StringJoin": "string", "Substr": "string",
             "Rank": "int32", "VarHandleOp": "resource", "StatelessRandomGetKeyCounter": "uint64"}
