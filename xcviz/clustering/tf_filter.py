"""TensorFlow's RecursiveCompilabilityChecker with the OperationFilter auto-clustering uses on CPU and GPU.

tensorflow/compiler/jit/compilability_check_util.{h,cc}: the regular CPU and GPU devices register with every
`cluster_*` flag of XlaOpRegistry::DeviceRegistration false (xla_op_registry.cc, GetCompilationDevice), so
CreateOperationFilter leaves every `allow_*` flag below false; MarkForCompilationPass then sets
require_always_compilable and clears allow_string_consts, allow_collective_reduce_v2 and allow_unique_op.
Each flag is one check of IsCompilableNode, in TF's order, with TF's words as the reason; a functional op
(While, If, Case, a call) is compilable only when every node of its bodies is, and a node inside a body
(stack depth > 1) with a resource input is refused ("resource variable op in called function")."""
from __future__ import annotations

from dataclasses import dataclass

from ..ops.tf.facts import (ASSERTS, COLLECTIVES, INACCURATE_OPS, SLOW_OPS, STACK_OPS, STATEFUL_RANDOM,
                            TENSOR_ARRAY_OPS, VARIANT_OPS)


@dataclass(frozen=True)
class OperationFilter:
    """RecursiveCompilabilityChecker::OperationFilter; the defaults are auto-clustering's on CPU and GPU."""

    allow_resource_ops_in_called_functions: bool = False
    allow_stack_ops: bool = False
    allow_tensor_array_ops: bool = False
    allow_stateful_rng_ops: bool = False
    allow_control_trigger: bool = False
    allow_eliding_assert_and_checknumerics_ops: bool = False
    allow_ops_producing_or_consuming_variant: bool = False
    allow_slow_ops: bool = False
    allow_inaccurate_ops: bool = False
    require_always_compilable: bool = True
    allow_string_consts: bool = False
    allow_collective_reduce_v2: bool = False
    allow_unique_op: bool = False


AUTO_CLUSTERING = OperationFilter()


def is_variant(op: str, attrs: dict) -> bool:
    return op.startswith("TensorList") or op in VARIANT_OPS or any(
        (isinstance(v, str) and v == "variant") or (isinstance(v, list) and "variant" in v) for v in attrs.values())


def filter_refusal(op: str, attrs: dict, in_body: bool, f: OperationFilter = AUTO_CLUSTERING) -> str | None:
    """The OperationFilter check that refuses a node of `op` (TF's reason), None when every one passes.
    `in_body`: the node is inside a called function, where a resource input is refused."""
    if op in ("_Retval", "_Arg") and in_body:
        return None
    if attrs.get("_scoped_allocator") is not None or attrs.get("_forward_from") is not None:
        return "_scoped_allocator or _forward_from attribute"
    if op == "Const" and not f.allow_string_consts and attrs.get("dtype") == "string":
        return "unsupported op: Const op with type DT_STRING is not supported by XLA."
    if op == "SymbolicGradient":
        return "unsupported op: SymbolicGradient should be handled by IsCompilableCall()."
    checks = (
        (not f.allow_stateful_rng_ops and op in STATEFUL_RANDOM, "stateful random op"),
        (not f.allow_control_trigger and op == "ControlTrigger", "not allowed control trigger"),
        (not f.allow_eliding_assert_and_checknumerics_ops and op in ASSERTS, "Assert or CheckNumerics"),
        (not f.allow_collective_reduce_v2 and op in COLLECTIVES, "Collective op"),
        (not f.allow_unique_op and op == "Unique", "Unique op"),
        (not f.allow_ops_producing_or_consuming_variant and is_variant(op, attrs), "DT_VARIANT producer/consumer"),
        (not f.allow_stack_ops and op in STACK_OPS, "Stack op"),
        (not f.allow_tensor_array_ops and op in TENSOR_ARRAY_OPS, "TensorArray op"),
        (not f.allow_inaccurate_ops and op in INACCURATE_OPS, "operation with numerical accuracy issues"),
        (not f.allow_slow_ops and op in SLOW_OPS, "slow operation"),
    )
    return next((why for bad, why in checks if bad), None)


def body_refusal(attrs: dict, f: OperationFilter = AUTO_CLUSTERING) -> tuple[str, str] | None:
    """(op in a body, TF's reason) when a functional op's bodies hold a node the filter refuses: the ops the
    loader found in them (`_body_ops`), and those with a resource input (`_body_resource_ops`)."""
    if not f.allow_resource_ops_in_called_functions:
        for inner in attrs.get("_body_resource_ops") or ():
            return inner, "resource variable op in called function"
    for inner in attrs.get("_body_ops") or ():
        why = filter_refusal(inner, {}, True, f)
        if why is not None:
            return inner, why
    return None
