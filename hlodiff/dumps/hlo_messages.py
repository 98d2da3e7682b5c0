"""The subset of XLA's HLO protobuf messages hlodiff reads, declared for the ``protobuf`` runtime.

Why a subset declared here: XLA's ``.proto`` files are not shipped with torch_xla or jaxlib, and generated
``*_pb2`` modules would pin a protobuf version. A ``FileDescriptorProto`` built in Python gives real message classes
(the runtime does all wire decoding); fields we do not declare are kept as unknown fields and ignored. The field
numbers are XLA's (``xla/service/hlo.proto``, ``xla/xla_data.proto``); the package is ``hlodiff.xla`` so these
declarations never clash with a real ``xla`` package registered in the same process (torch_xla, jaxlib).

What we need: instructions (name, opcode, id, operand ids, metadata with ``stack_frame_id``), computations,
the module header (name, entry, ``input_output_alias``, ``buffer_donor``), the module's ``stack_frame_index``, and the
three containers XLA writes (``HloModuleProto``, ``HloProto``, ``HloSnapshot``).
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_PACKAGE = "hlodiff.xla"
_F = descriptor_pb2.FieldDescriptorProto

_STRING, _INT64, _INT32, _BOOL, _MESSAGE = _F.TYPE_STRING, _F.TYPE_INT64, _F.TYPE_INT32, _F.TYPE_BOOL, _F.TYPE_MESSAGE
_UINT32, _UINT64, _FLOAT, _DOUBLE, _BYTES = _F.TYPE_UINT32, _F.TYPE_UINT64, _F.TYPE_FLOAT, _F.TYPE_DOUBLE, _F.TYPE_BYTES
_ONE, _MANY = _F.LABEL_OPTIONAL, _F.LABEL_REPEATED

# message name -> [(field name, number, type, label, message type name or None)]
_MESSAGES: dict[str, list[tuple]] = {
    "OpMetadata": [
        ("op_type", 1, _STRING, _ONE, None), ("op_name", 2, _STRING, _ONE, None),
        ("source_file", 3, _STRING, _ONE, None), ("source_line", 4, _INT32, _ONE, None),
        ("stack_frame_id", 15, _INT32, _ONE, None),
    ],
    "HloInstructionProto": [
        ("name", 1, _STRING, _ONE, None), ("opcode", 2, _STRING, _ONE, None),
        ("metadata", 7, _MESSAGE, _ONE, "OpMetadata"), ("parameter_number", 9, _INT64, _ONE, None),
        ("id", 35, _INT64, _ONE, None), ("operand_ids", 36, _INT64, _MANY, None),
        ("called_computation_ids", 38, _INT64, _MANY, None),
        ("literal", 8, _MESSAGE, _ONE, "LiteralProto"),
    ],
    # A constant's values (xla_data.proto): the text prints a large one as {...}; the proto keeps them all.
    "LiteralProto": [
        ("preds", 2, _BOOL, _MANY, None), ("u8s", 3, _BYTES, _ONE, None), ("s32s", 4, _INT32, _MANY, None),
        ("s64s", 5, _INT64, _MANY, None), ("u32s", 6, _UINT32, _MANY, None), ("u64s", 7, _UINT64, _MANY, None),
        ("f32s", 8, _FLOAT, _MANY, None), ("f64s", 9, _DOUBLE, _MANY, None),
        ("tuple_literals", 10, _MESSAGE, _MANY, "LiteralProto"), ("f16s", 11, _BYTES, _ONE, None),
        ("c64s", 12, _FLOAT, _MANY, None), ("bf16s", 13, _BYTES, _ONE, None), ("s8s", 15, _BYTES, _ONE, None),
        ("u16s", 16, _BYTES, _ONE, None), ("s16s", 17, _BYTES, _ONE, None), ("c128s", 18, _DOUBLE, _MANY, None),
    ],
    "HloComputationProto": [
        ("name", 1, _STRING, _ONE, None), ("instructions", 2, _MESSAGE, _MANY, "HloInstructionProto"),
        ("id", 5, _INT64, _ONE, None), ("root_id", 6, _INT64, _ONE, None),
    ],
    "AliasEntryProto": [
        ("output_shape_index", 1, _INT64, _MANY, None), ("parameter_number", 2, _INT64, _ONE, None),
        ("parameter_shape_index", 3, _INT64, _MANY, None), ("kind", 4, _INT32, _ONE, None),
    ],
    "HloInputOutputAliasProto": [("entries", 1, _MESSAGE, _MANY, "AliasEntryProto")],
    "BufferDonorEntryProto": [
        ("parameter_number", 1, _INT64, _ONE, None), ("parameter_shape_index", 2, _INT64, _MANY, None),
    ],
    "HloBufferDonorProto": [("entries", 1, _MESSAGE, _MANY, "BufferDonorEntryProto")],
    "FileLocation": [
        ("file_name_id", 1, _INT32, _ONE, None), ("function_name_id", 2, _INT32, _ONE, None),
        ("line", 3, _INT32, _ONE, None), ("column", 4, _INT32, _ONE, None),
    ],
    "StackFrame": [("file_location_id", 1, _INT32, _ONE, None), ("parent_frame_id", 2, _INT32, _ONE, None)],
    "StackFrameIndexProto": [
        ("file_names", 1, _STRING, _MANY, None), ("function_names", 2, _STRING, _MANY, None),
        ("file_locations", 3, _MESSAGE, _MANY, "FileLocation"), ("stack_frames", 4, _MESSAGE, _MANY, "StackFrame"),
    ],
    "HloModuleProto": [
        ("name", 1, _STRING, _ONE, None), ("entry_computation_name", 2, _STRING, _ONE, None),
        ("computations", 3, _MESSAGE, _MANY, "HloComputationProto"), ("id", 5, _INT64, _ONE, None),
        ("entry_computation_id", 6, _INT64, _ONE, None),
        ("input_output_alias", 8, _MESSAGE, _ONE, "HloInputOutputAliasProto"),
        ("stack_frame_index", 17, _MESSAGE, _ONE, "StackFrameIndexProto"),
        ("buffer_donor", 18, _MESSAGE, _ONE, "HloBufferDonorProto"),
    ],
    "HloProto": [("hlo_module", 1, _MESSAGE, _ONE, "HloModuleProto")],
    "HloSnapshot": [("hlo", 1, _MESSAGE, _ONE, "HloProto"), ("execution_platform", 4, _STRING, _ONE, None)],
}


def _build() -> dict[str, type]:
    file = descriptor_pb2.FileDescriptorProto(name="hlodiff/xla_hlo_subset.proto", package=_PACKAGE,
                                              syntax="proto3")
    for name, fields in _MESSAGES.items():
        message = file.message_type.add(name=name)
        for field_name, number, type_, label, type_name in fields:
            field = message.field.add(name=field_name, number=number, type=type_, label=label)
            if type_name:
                field.type_name = f".{_PACKAGE}.{type_name}"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return {name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.{name}"))
            for name in _MESSAGES}


_CLASSES = _build()
HloModuleProto = _CLASSES["HloModuleProto"]
HloProto = _CLASSES["HloProto"]
HloSnapshot = _CLASSES["HloSnapshot"]
StackFrameIndexProto = _CLASSES["StackFrameIndexProto"]
