"""TensorFlow's XLA kernel registry (tf2xla): which TF ops XLA compiles, per device, with dtype constraints.

Read from TensorFlow 2.21 itself (tools/tf_suite.py: get_all_registered_kernels() after XLA registered its
compilation kernels, XLA_CPU_JIT from tensorflow-cpu, XLA_GPU_JIT from the tensorflow GPU wheel); the copy
in tf2xla_kernels.json is tests/data/tf_suite/tf2xla_kernels.json without the build notes.

No TF wheel links the TPU backend, so XLA_TPU_JIT is read from TF's source instead: a REGISTER_XLA_OP without a
.Device() list registers the op on every backend (tf2xla/xla_op_registry.h), and core/tpu/tpu_compilation_device.cc
registers XLA_TPU_JIT (types: kTpuAllTypes in core/tpu/tpu_defs.h; no complex128, no string). Every op TF 2.21
registers on both CPU and GPU is such a generic registration; the one device-specific one is REGISTER_XLA_CONV_OP,
whose GPU copy drops int32 (GetXlaConvTypesForGpu) while the others, TPU's included, keep it."""
from __future__ import annotations

import os
from functools import lru_cache

JIT_DEVICE = {"cpu": "XLA_CPU_JIT", "gpu": "XLA_GPU_JIT"}  # TF has no TPU JIT registry in these wheels

# The ops registered for both XLA_CPU_JIT and XLA_GPU_JIT (all of TF 2.21's 489; a test checks this list
# against the JSON): importing the op table reads this, not the 200 KB JSON, which only clustering needs.
_CPU_AND_GPU = frozenset((
    "Abs Acos Acosh Add AddN AddV2 AdjustContrastv2 AdjustHue AdjustSaturation All Angle Any ApproxTopK "
    "ApproximateEqual ArgMax ArgMin Asin Asinh Assert AssignAddVariableOp AssignSubVariableOp AssignVariableOp "
    "AssignVariableXlaConcatND Atan Atan2 Atanh AvgPool AvgPool3D AvgPool3DGrad AvgPoolGrad BatchMatMul "
    "BatchMatMulV2 BatchMatMulV3 BatchToSpace BatchToSpaceND BesselI0e BesselI1e Betainc BiasAdd BiasAddGrad "
    "BiasAddV1 Bincount Bitcast BitwiseAnd BitwiseOr BitwiseXor BroadcastArgs BroadcastGradientArgs BroadcastTo "
    "Bucketize Case Cast Ceil CheckNumerics Cholesky ClipByValue CollectiveAssignGroupV2 CollectiveReduceV2 Complex "
    "ComplexAbs Concat ConcatOffset ConcatV2 Conj ConjugateTranspose Const ControlTrigger Conv Conv2D "
    "Conv2DBackpropFilter Conv2DBackpropInput Conv3D Conv3DBackpropFilterV2 Conv3DBackpropInputV2 Cos Cosh Cross "
    "Cumprod Cumsum CumulativeLogsumexp DataFormatDimMap DataFormatVecPermute DenseBincount DepthToSpace "
    "DepthwiseConv2dNative DepthwiseConv2dNativeBackpropFilter DepthwiseConv2dNativeBackpropInput Dequantize "
    "DeviceIndex Diag DiagPart Digamma Div DivNoNan DynamicPartition DynamicStitch Einsum Elu EluGrad Empty "
    "EmptyTensorList EnsureShape Equal Erf Erfc Erfinv Exp ExpandDims Expm1 ExtractImagePatches FFT FFT2D FFT3D "
    "FakeParam FakeQuantWithMinMaxArgs FakeQuantWithMinMaxArgsGradient FakeQuantWithMinMaxVars "
    "FakeQuantWithMinMaxVarsGradient FakeQuantWithMinMaxVarsPerChannel FakeQuantWithMinMaxVarsPerChannelGradient "
    "Fill Floor FloorDiv FloorMod FusedBatchNorm FusedBatchNormGrad FusedBatchNormGradV2 FusedBatchNormGradV3 "
    "FusedBatchNormV2 FusedBatchNormV3 Gather GatherNd GatherV2 Greater GreaterEqual HSVToRGB IFFT IFFT2D IFFT3D "
    "IRFFT IRFFT2D IRFFT3D Identity IdentityN If Igamma IgammaGradA Igammac Imag InTopKV2 Inv Invert "
    "InvertPermutation IsFinite IsInf IsNan L2Loss LRN LRNGrad LeakyRelu LeakyReluGrad LeftShift Less LessEqual "
    "Lgamma LinSpace ListDiff Log Log1p LogSoftmax LogicalAnd LogicalNot LogicalOr LowerBound MatMul MatrixBandPart "
    "MatrixDiag MatrixDiagPart MatrixDiagPartV2 MatrixDiagPartV3 MatrixDiagV2 MatrixDiagV3 MatrixInverse "
    "MatrixSetDiag MatrixSetDiagV2 MatrixSetDiagV3 MatrixSolve MatrixTriangularSolve Max MaxPool MaxPool3D "
    "MaxPool3DGrad MaxPool3DGradGrad MaxPoolGrad MaxPoolGradGrad MaxPoolGradGradV2 MaxPoolGradV2 MaxPoolV2 Maximum "
    "Mean Min Minimum MirrorPad MirrorPadGrad Mod Mul MulNoNan Multinomial Ndtri Neg NextAfter NoOp "
    "NonMaxSuppressionV3 NonMaxSuppressionV4 NotEqual OneHot OnesLike Pack Pad PadV2 ParallelDynamicStitch "
    "ParameterizedTruncatedNormal PartitionedCall PlaceholderWithDefault Polygamma PopulationCount Pow "
    "PreventGradient Prod Qr QuantizeAndDequantizeV2 QuantizeAndDequantizeV3 QuantizeAndDequantizeV4 RFFT RFFT2D "
    "RFFT3D RGBToHSV RandomGammaGrad RandomShuffle RandomStandardNormal RandomUniform RandomUniformInt Range Rank "
    "ReadVariableOp ReadVariableXlaSplitND Real RealDiv Reciprocal ReciprocalGrad Relu Relu6 Relu6Grad ReluGrad "
    "Reshape ResizeBilinear ResizeBilinearGrad ResizeNearestNeighbor ResourceApplyAdaMax ResourceApplyAdadelta "
    "ResourceApplyAdagrad ResourceApplyAdagradDA ResourceApplyAdagradV2 ResourceApplyAdam ResourceApplyAddSign "
    "ResourceApplyCenteredRMSProp ResourceApplyFtrl ResourceApplyFtrlV2 ResourceApplyGradientDescent "
    "ResourceApplyKerasMomentum ResourceApplyMomentum ResourceApplyPowerSign ResourceApplyProximalAdagrad "
    "ResourceApplyProximalGradientDescent ResourceApplyRMSProp ResourceGather ResourceScatterAdd ResourceScatterDiv "
    "ResourceScatterMax ResourceScatterMin ResourceScatterMul ResourceScatterNdAdd ResourceScatterNdSub "
    "ResourceScatterNdUpdate ResourceScatterSub ResourceScatterUpdate ResourceStridedSliceAssign Reverse "
    "ReverseSequence ReverseV2 RightShift Rint RngReadAndSkip RngSkip Roll Round Rsqrt RsqrtGrad ScatterNd "
    "SegmentMaxV2 SegmentMinV2 SegmentProdV2 SegmentSumV2 Select SelectV2 SelfAdjointEigV2 Selu SeluGrad Shape "
    "ShapeN Sigmoid SigmoidGrad Sign Sin Sinh Size Slice Snapshot Softmax SoftmaxCrossEntropyWithLogits Softplus "
    "SoftplusGrad Softsign SoftsignGrad SpaceToBatch SpaceToBatchND SpaceToDepth SparseMatMul "
    "SparseSoftmaxCrossEntropyWithLogits SparseToDense Split SplitV Sqrt SqrtGrad Square SquaredDifference Squeeze "
    "StackCloseV2 StackPopV2 StackPushV2 StackV2 StatefulPartitionedCall StatefulStandardNormalV2 "
    "StatefulTruncatedNormal StatefulUniform StatefulUniformFullInt StatefulUniformInt StatelessCase StatelessIf "
    "StatelessMultinomial StatelessParameterizedTruncatedNormal StatelessRandomGetAlg StatelessRandomGetKeyCounter "
    "StatelessRandomGetKeyCounterAlg StatelessRandomNormal StatelessRandomNormalV2 StatelessRandomUniform "
    "StatelessRandomUniformFullInt StatelessRandomUniformFullIntV2 StatelessRandomUniformInt "
    "StatelessRandomUniformIntV2 StatelessRandomUniformV2 StatelessTruncatedNormal StatelessTruncatedNormalV2 "
    "StatelessWhile StochasticCastToInt StopGradient StridedSlice StridedSliceGrad Sub Sum Svd SymbolicGradient Tan "
    "Tanh TanhGrad TensorArrayCloseV3 TensorArrayConcatV3 TensorArrayGatherV3 TensorArrayGradV3 TensorArrayReadV3 "
    "TensorArrayScatterV3 TensorArraySizeV3 TensorArraySplitV3 TensorArrayV3 TensorArrayWriteV3 TensorListConcatV2 "
    "TensorListElementShape TensorListFromTensor TensorListGather TensorListGetItem TensorListLength "
    "TensorListPopBack TensorListPushBack TensorListReserve TensorListSetItem TensorListSplit TensorListStack "
    "TensorScatterAdd TensorScatterMax TensorScatterMin TensorScatterSub TensorScatterUpdate "
    "TensorStridedSliceUpdate Tile ToBool TopKV2 Transpose TridiagonalMatMul TridiagonalSolve TruncateDiv "
    "TruncateMod TruncatedNormal UniformDequantize UniformQuantize UniformQuantizedAdd UniformQuantizedClipByValue "
    "UniformQuantizedConvolution UniformQuantizedDot UniformRequantize Unique UniqueV2 Unpack UnsortedSegmentMax "
    "UnsortedSegmentMin UnsortedSegmentProd UnsortedSegmentSum UpperBound VarIsInitializedOp VariableShape Where "
    "While Xdivy XlaAllReduce XlaBroadcastHelper XlaCallModule XlaConcatND XlaConv XlaConvV2 XlaCustomCall "
    "XlaCustomCallV2 XlaDequantize XlaDot XlaDotV2 XlaDynamicSlice XlaDynamicUpdateSlice XlaEinsum XlaGather XlaIf "
    "XlaKeyValueSort XlaOptimizationBarrier XlaPad XlaRecv XlaReduce XlaReducePrecision XlaReduceScatter "
    "XlaReduceWindow XlaRemoveDynamicDimensionSize XlaReplicaId XlaRngBitGenerator XlaScatter XlaSelectAndScatter "
    "XlaSelfAdjointEig XlaSend XlaSetBound XlaSetDynamicDimensionSize XlaSharding XlaSort XlaSplitND "
    "XlaSpmdFullToShardShape XlaSpmdShardToFullShape XlaSvd XlaVariadicReduce XlaVariadicReduceV2 XlaVariadicSort "
    "XlaWhile Xlog1py Xlogy ZerosLike Zeta _Arg _ArrayToList _EagerConst _FusedBatchNormEx _FusedConv2D "
    "_ListToArray _Retval _UnaryOpsComposition _XlaAotOnlyVarHandleOp "
).split())


@lru_cache(maxsize=1)
def registry() -> dict:
    import json

    with open(os.path.join(os.path.dirname(__file__), "tf2xla_kernels.json"), encoding="utf-8") as f:
        return json.load(f)


def xla_devices(op: str) -> frozenset[str]:
    """xcviz device kinds on which TF registers an XLA kernel for `op` (TF graphs: CPU and GPU, as read from TF)."""
    if op in _CPU_AND_GPU:
        return frozenset(JIT_DEVICE)
    devs = registry()["ops"].get(op, ())
    return frozenset(k for k, jit in JIT_DEVICE.items() if jit in devs)


def has_kernel(op: str) -> bool:
    """Whether TF 2.21 registers an XLA kernel for TF op `op` (on CPU and GPU, so on every backend)."""
    return op in _CPU_AND_GPU


def type_refusal(op: str, device: str, attrs: dict) -> str | None:
    """Why the kernel's dtype constraints refuse the node's type attributes (None: they allow them)."""
    cons = registry()["type_constraints"].get(op, {}).get(JIT_DEVICE.get(device, ""), {})
    for attr, allowed in sorted(cons.items()):
        value = attrs.get(attr)
        for dt in value if isinstance(value, list) else [value]:
            if isinstance(dt, str) and dt not in allowed:
                return f"{attr}={dt} is not among the XLA kernel's types ({', '.join(allowed)})"
    return None


# The ops whose XLA_GPU_JIT kernel drops int32 from the types its XLA_CPU_JIT kernel takes (REGISTER_XLA_CONV_OP);
# a test checks this against the JSON, so the op table's import needs no JSON for its fixed-dtype entries.
NO_INT32_ON_GPU = frozenset({"Conv", "Conv2D", "Conv2DBackpropInput", "ExtractImagePatches"})


def kernel_devices(op: str, device: str, dtype: str | None = None) -> tuple[bool, str]:
    """(whether XLA has a kernel for TF op `op` on `device`, for type T=`dtype` when given (int32 only); the
    reason if not)."""
    if device == "tpu":
        if op not in _CPU_AND_GPU:
            return False, f"no XLA kernel for {op} (not a generic tf2xla registration, so none for XLA_TPU_JIT)"
    elif device not in xla_devices(op):
        return False, f"no XLA kernel for {op} on {JIT_DEVICE.get(device, device)} (tf2xla)"
    if dtype is not None:
        if dtype != "int32":
            raise ValueError(f"fixed dtype {dtype} of {op}: only int32 is tabled (NO_INT32_ON_GPU)")
        if device == "gpu" and op in NO_INT32_ON_GPU:
            return False, f"XLA's {op} kernel on XLA_GPU_JIT has no int32 type (GetXlaConvTypesForGpu)"
    return True, ""
