"""Typed views of HLO attribute values, parsed on demand from the raw text the module parser keeps.

The parser stores every ``key=value`` as the exact value text (see :mod:`hlodiff.hlo.model`), because most values
are only ever compared as text. The normalizer, differ and reports need a few of them as data: which computations
an instruction calls, where it came from (``metadata``), how it is laid out over devices (``sharding``,
``replica_groups``), and the numbers in ``slice``/``window``/``dimensions``. Each parser here turns one value form
into frozen data, and each raises :class:`~hlodiff.errors.HloParseError` (message ``"bad <what>: <reason>"``, no
location; the caller knows the file and line) on malformed input, never anything else.

Device assignments are always expanded: an iota form such as ``[4,2]<=[2,4]T(1,0)`` becomes the explicit device ids,
so two spellings of the same assignment compare equal. Provenance (sharding metadata, raw text) never takes part in
equality.

The grammar follows XLA's own parser (``xla/hlo/parser/hlo_parser.cc``); see the reference notes in
``/work/shared/reference/hlo-text-format.md``.

One module per attribute family: :mod:`.scalars` (strings, integers, names, lists), :mod:`.calls`,
:mod:`.metadata`, :mod:`.sharding` (device assignments), :mod:`.collectives`, :mod:`.windows` (slices, windows,
padding, convolution labels), :mod:`.config` (backend and frontend attributes), :mod:`.aliasing` (the module
header), and :mod:`.dispatch` (one parser per key); :mod:`.cursor` is the token reader the nested forms share.
"""

from hlodiff.hlo.attributes.scalars import (MAX_DEVICES, parse_bool, parse_bool_list, parse_direction, parse_enum,
                                            parse_int, parse_int_list, parse_name_list, parse_string, unescape)
from hlodiff.hlo.attributes.calls import CALL_KEYS, called_computations
from hlodiff.hlo.attributes.metadata import Metadata, parse_metadata
from hlodiff.hlo.attributes.sharding import Sharding, iota_devices, parse_sharding
from hlodiff.hlo.attributes.collectives import parse_replica_groups, parse_source_target_pairs
from hlodiff.hlo.attributes.windows import (DimLabels, Window, WindowDim, parse_dim_labels, parse_padding_config,
                                            parse_slice, parse_window)
from hlodiff.hlo.attributes.config import BackendConfig, parse_backend_config, parse_frontend_attributes
from hlodiff.hlo.attributes.aliasing import (Alias, BufferDonor, ComputationLayout, OperandAlias, parse_buffer_donor,
                                             parse_computation_layout, parse_input_output_alias,
                                             parse_output_operand_aliasing, parse_shape_list, split_top_level)
from hlodiff.hlo.attributes.dispatch import ATTRIBUTE_PARSERS, parse_attribute, validate_attributes

__all__ = [
    "MAX_DEVICES", "parse_bool", "parse_bool_list", "parse_direction", "parse_enum", "parse_int", "parse_int_list",
    "parse_name_list", "parse_string", "unescape", "CALL_KEYS", "called_computations", "Metadata", "parse_metadata",
    "Sharding", "iota_devices", "parse_sharding", "parse_replica_groups", "parse_source_target_pairs", "DimLabels",
    "Window", "WindowDim", "parse_dim_labels", "parse_padding_config", "parse_slice", "parse_window", "BackendConfig",
    "parse_backend_config", "parse_frontend_attributes", "Alias", "BufferDonor", "ComputationLayout", "OperandAlias",
    "parse_buffer_donor", "parse_computation_layout", "parse_input_output_alias", "parse_output_operand_aliasing",
    "parse_shape_list", "split_top_level", "ATTRIBUTE_PARSERS", "parse_attribute", "validate_attributes",
]
