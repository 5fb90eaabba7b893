"""TensorFlow's GraphDef, FunctionDef and SavedModel messages, built at first use from a field table.

No TensorFlow and no generated code: the field numbers below are those of TensorFlow's own .proto files
(tensorflow/core/framework/{graph,node_def,attr_value,tensor,tensor_shape,types,function,op_def,versions}.proto
tensorflow/core/protobuf/{saved_model,meta_graph,saved_object_graph,tensor_bundle}.proto), and the installed protobuf runtime makes the
classes from them. Fields xcviz never reads (debug info, full types, saver, object graph) are left out: the
binary parser skips unknown fields, and text files are parsed with unknown fields skipped."""
from __future__ import annotations

from functools import lru_cache

# DataType enum values (types.proto); the `_REF` variants are these + 100.
DTYPES = ("DT_INVALID DT_FLOAT DT_DOUBLE DT_INT32 DT_UINT8 DT_INT16 DT_INT8 DT_STRING DT_COMPLEX64 DT_INT64 "
          "DT_BOOL DT_QINT8 DT_QUINT8 DT_QINT32 DT_BFLOAT16 DT_QINT16 DT_QUINT16 DT_UINT16 DT_COMPLEX128 "
          "DT_HALF DT_RESOURCE DT_VARIANT DT_UINT32 DT_UINT64 DT_FLOAT8_E5M2 DT_FLOAT8_E4M3FN "
          "DT_FLOAT8_E4M3FNUZ DT_FLOAT8_E4M3B11FNUZ DT_FLOAT8_E5M2FNUZ DT_INT4 DT_UINT4 DT_INT2 DT_UINT2").split()

# message -> fields (name, number, type, repeated); a type starting with "." is a message or enum of this file,
# "map:K:V" a map field. Nested names use dots as in the .proto files.
_R = True
MESSAGES: dict[str, list[tuple]] = {
    "TensorShapeProto": [("dim", 2, ".TensorShapeProto.Dim", _R), ("unknown_rank", 3, "bool", False)],
    "TensorShapeProto.Dim": [("size", 1, "int64", False), ("name", 2, "string", False)],
    "ResourceHandleProto": [("device", 1, "string", False), ("container", 2, "string", False),
                            ("name", 3, "string", False), ("hash_code", 4, "uint64", False),
                            ("maybe_type_name", 5, "string", False),
                            ("dtypes_and_shapes", 6, ".ResourceHandleProto.DtypeAndShape", _R)],
    "ResourceHandleProto.DtypeAndShape": [("dtype", 1, ".DataType", False), ("shape", 2, ".TensorShapeProto", False)],
    "VariantTensorDataProto": [("type_name", 1, "string", False), ("metadata", 2, "bytes", False),
                               ("tensors", 3, ".TensorProto", _R)],
    "TensorProto": [("dtype", 1, ".DataType", False), ("tensor_shape", 2, ".TensorShapeProto", False),
                    ("version_number", 3, "int32", False), ("tensor_content", 4, "bytes", False),
                    ("half_val", 13, "int32", _R), ("float_val", 5, "float", _R), ("double_val", 6, "double", _R),
                    ("int_val", 7, "int32", _R), ("string_val", 8, "bytes", _R), ("scomplex_val", 9, "float", _R),
                    ("int64_val", 10, "int64", _R), ("bool_val", 11, "bool", _R), ("dcomplex_val", 12, "double", _R),
                    ("resource_handle_val", 14, ".ResourceHandleProto", _R),
                    ("variant_val", 15, ".VariantTensorDataProto", _R), ("uint32_val", 16, "uint32", _R),
                    ("uint64_val", 17, "uint64", _R), ("float8_val", 18, "bytes", False)],
    "AttrValue": [("list", 1, ".AttrValue.ListValue", False), ("s", 2, "bytes", False), ("i", 3, "int64", False),
                  ("f", 4, "float", False), ("b", 5, "bool", False), ("type", 6, ".DataType", False),
                  ("shape", 7, ".TensorShapeProto", False), ("tensor", 8, ".TensorProto", False),
                  ("placeholder", 9, "string", False), ("func", 10, ".NameAttrList", False)],
    "AttrValue.ListValue": [("s", 2, "bytes", _R), ("i", 3, "int64", _R), ("f", 4, "float", _R),
                            ("b", 5, "bool", _R), ("type", 6, ".DataType", _R), ("shape", 7, ".TensorShapeProto", _R),
                            ("tensor", 8, ".TensorProto", _R), ("func", 9, ".NameAttrList", _R)],
    "NameAttrList": [("name", 1, "string", False), ("attr", 2, "map:string:.AttrValue", _R)],
    "NodeDef": [("name", 1, "string", False), ("op", 2, "string", False), ("input", 3, "string", _R),
                ("device", 4, "string", False), ("attr", 5, "map:string:.AttrValue", _R)],
    "VersionDef": [("producer", 1, "int32", False), ("min_consumer", 2, "int32", False),
                   ("bad_consumers", 3, "int32", _R)],
    "OpDef": [("name", 1, "string", False), ("input_arg", 2, ".OpDef.ArgDef", _R),
              ("output_arg", 3, ".OpDef.ArgDef", _R), ("control_output", 20, "string", _R),
              ("attr", 4, ".OpDef.AttrDef", _R), ("summary", 5, "string", False),
              ("description", 6, "string", False), ("is_commutative", 18, "bool", False),
              ("is_aggregate", 16, "bool", False), ("is_stateful", 17, "bool", False),
              ("allows_uninitialized_input", 19, "bool", False)],
    "OpDef.ArgDef": [("name", 1, "string", False), ("description", 2, "string", False),
                     ("type", 3, ".DataType", False), ("type_attr", 4, "string", False),
                     ("number_attr", 5, "string", False), ("type_list_attr", 6, "string", False),
                     ("handle_data", 7, ".ResourceHandleProto.DtypeAndShape", _R), ("is_ref", 16, "bool", False)],
    "OpDef.AttrDef": [("name", 1, "string", False), ("type", 2, "string", False),
                      ("default_value", 3, ".AttrValue", False), ("description", 4, "string", False),
                      ("has_minimum", 5, "bool", False), ("minimum", 6, "int64", False),
                      ("allowed_values", 7, ".AttrValue", False)],
    "FunctionDef": [("signature", 1, ".OpDef", False), ("attr", 5, "map:string:.AttrValue", _R),
                    ("arg_attr", 7, "map:uint32:.FunctionDef.ArgAttrs", _R),
                    ("resource_arg_unique_id", 8, "map:uint32:uint32", _R), ("node_def", 3, ".NodeDef", _R),
                    ("ret", 4, "map:string:string", _R), ("control_ret", 6, "map:string:string", _R)],
    "FunctionDef.ArgAttrs": [("attr", 1, "map:string:.AttrValue", _R)],
    "GradientDef": [("function_name", 1, "string", False), ("gradient_func", 2, "string", False)],
    "FunctionDefLibrary": [("function", 1, ".FunctionDef", _R), ("gradient", 2, ".GradientDef", _R)],
    "GraphDef": [("node", 1, ".NodeDef", _R), ("versions", 4, ".VersionDef", False),
                 ("version", 3, "int32", False), ("library", 2, ".FunctionDefLibrary", False)],
    "TensorInfo": [("name", 1, "string", False), ("dtype", 2, ".DataType", False),
                   ("tensor_shape", 3, ".TensorShapeProto", False)],
    "SignatureDef": [("inputs", 1, "map:string:.TensorInfo", _R), ("outputs", 2, "map:string:.TensorInfo", _R),
                     ("method_name", 3, "string", False)],
    "MetaGraphDef": [("meta_info_def", 1, ".MetaGraphDef.MetaInfoDef", False), ("graph_def", 2, ".GraphDef", False),
                     ("signature_def", 5, "map:string:.SignatureDef", _R),
                     ("object_graph_def", 7, ".SavedObjectGraph", False)],
    # saved_object_graph.proto: enough to name each variable's checkpoint key (its path of children)
    "SavedObjectGraph": [("nodes", 1, ".SavedObject", _R),
                         ("concrete_functions", 2, "map:string:.SavedConcreteFunction", _R)],
    "SavedConcreteFunction": [("bound_inputs", 2, "int32", _R)],  # the objects its captured inputs are
    "SavedObject": [("children", 1, ".SavedObject.ObjectReference", _R), ("variable", 7, ".SavedVariable", False)],
    "SavedObject.ObjectReference": [("node_id", 1, "int32", False), ("local_name", 2, "string", False)],
    "SavedVariable": [("dtype", 1, ".DataType", False), ("shape", 2, ".TensorShapeProto", False),
                      ("name", 6, "string", False)],
    # tensor_bundle.proto: one checkpoint entry (a variable's bytes in the data file)
    "BundleEntryProto": [("dtype", 1, ".DataType", False), ("shape", 2, ".TensorShapeProto", False),
                         ("shard_id", 3, "int32", False), ("offset", 4, "int64", False), ("size", 5, "int64", False)],
    "BundleHeaderProto": [("num_shards", 1, "int32", False)],
    "MetaGraphDef.MetaInfoDef": [("meta_graph_version", 1, "string", False), ("tags", 4, "string", _R),
                                 ("tensorflow_version", 5, "string", False)],
    "SavedModel": [("saved_model_schema_version", 1, "int64", False), ("meta_graphs", 2, ".MetaGraphDef", _R)],
}


@lru_cache(maxsize=None)
def message_classes() -> dict:
    """{message name: class} for the table above, made once in a private descriptor pool."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    F = descriptor_pb2.FieldDescriptorProto
    scalar = {"string": F.TYPE_STRING, "bytes": F.TYPE_BYTES, "bool": F.TYPE_BOOL, "int32": F.TYPE_INT32,
              "int64": F.TYPE_INT64, "uint32": F.TYPE_UINT32, "uint64": F.TYPE_UINT64, "float": F.TYPE_FLOAT,
              "double": F.TYPE_DOUBLE}
    fdp = descriptor_pb2.FileDescriptorProto(name="xcviz_tensorflow.proto", package="tensorflow", syntax="proto3")
    enum = fdp.enum_type.add(name="DataType")
    for i, name in enumerate(DTYPES):
        enum.value.add(name=name, number=i)
    for i, name in enumerate(DTYPES[1:], 1):
        enum.value.add(name=name + "_REF", number=100 + i)
    protos: dict[str, object] = {}

    def message(path: str):
        if path in protos:
            return protos[path]
        parent, _, leaf = path.rpartition(".")
        protos[path] = m = (message(parent).nested_type if parent else fdp.message_type).add(name=leaf)
        return m

    def set_type(f, t: str) -> None:
        if t in scalar:
            f.type = scalar[t]
        elif t == ".DataType":
            f.type, f.type_name = F.TYPE_ENUM, ".tensorflow.DataType"
        else:
            f.type, f.type_name = F.TYPE_MESSAGE, ".tensorflow" + t

    for path, fields in MESSAGES.items():
        m = message(path)
        for name, number, t, repeated in fields:
            f = m.field.add(name=name, number=number, label=F.LABEL_REPEATED if repeated else F.LABEL_OPTIONAL)
            if t.startswith("map:"):
                _, k, v = t.split(":")
                entry_name = "".join(p.capitalize() for p in name.split("_")) + "Entry"
                entry = m.nested_type.add(name=entry_name)
                entry.options.map_entry = True
                set_type(entry.field.add(name="key", number=1, label=F.LABEL_OPTIONAL), k)
                set_type(entry.field.add(name="value", number=2, label=F.LABEL_OPTIONAL), v)
                f.type, f.type_name = F.TYPE_MESSAGE, f".tensorflow.{path}.{entry_name}"
            else:
                set_type(f, t)
            if path == "AttrValue":  # its fields are one `oneof value`
                f.oneof_index = 0
        if path == "AttrValue":
            m.oneof_decl.add(name="value")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return {path: message_factory.GetMessageClass(pool.FindMessageTypeByName("tensorflow." + path))
            for path in MESSAGES}


def parse_binary(kind: str, data: bytes):
    """A message of type `kind` from its binary form (raises google.protobuf.message.DecodeError)."""
    msg = message_classes()[kind]()
    msg.ParseFromString(data)
    return msg


def parse_text(kind: str, text: str):
    """A message of type `kind` from protobuf text format; fields outside the table are skipped."""
    from google.protobuf import text_format

    return text_format.Parse(text, message_classes()[kind](), allow_unknown_field=True)
