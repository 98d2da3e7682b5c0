"""One typed parser per attribute key, and the strict check that runs them all."""

from __future__ import annotations

from typing import Any, Callable

from hlodiff.errors import HloParseError
from hlodiff.hlo.attributes.aliasing import (parse_buffer_donor, parse_computation_layout, parse_input_output_alias,
                                             parse_output_operand_aliasing, parse_shape_list)
from hlodiff.hlo.attributes.calls import CALL_KEYS
from hlodiff.hlo.attributes.collectives import parse_replica_groups, parse_source_target_pairs
from hlodiff.hlo.attributes.config import parse_backend_config, parse_frontend_attributes
from hlodiff.hlo.attributes.metadata import parse_metadata
from hlodiff.hlo.attributes.scalars import (parse_bool, parse_bool_list, parse_direction, parse_enum, parse_int,
                                            parse_int_list, parse_name_list, parse_string, plain_name)
from hlodiff.hlo.attributes.sharding import parse_sharding
from hlodiff.hlo.attributes.windows import parse_dim_labels, parse_padding_config, parse_slice, parse_window


def _computation_refs(raw: str) -> tuple[str, ...]:
    text = raw.strip()
    return parse_name_list(text) if text.startswith("{") else (plain_name(text, "computation name"),)


_INT_LIST_KEYS = (
    "dimensions", "lhs_contracting_dims", "rhs_contracting_dims", "lhs_batch_dims", "rhs_batch_dims",
    "lhs_ragged_dims", "rhs_group_dims", "dynamic_slice_sizes", "slice_sizes", "offset_dims",
    "collapsed_slice_dims", "start_index_map", "operand_batching_dims", "start_indices_batching_dims",
    "update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims", "input_batching_dims",
    "scatter_indices_batching_dims", "fft_length",
)
_INT_KEYS = ("index", "channel_id", "iota_dimension", "index_vector_dim", "feature_group_count",
             "batch_group_count", "exponent_bits", "mantissa_bits", "cross_program_prefetch_index", "k",
             "replica_count", "num_partitions")
_BOOL_KEYS = ("is_stable", "indices_are_sorted", "unique_indices", "use_global_device_ids", "constrain_layout",
              "largest", "is_host_transfer", "is_scheduled", "alias_passthrough_params")
_STRING_KEYS = ("custom_call_target", "infeed_config", "outfeed_config", "execution_thread",
                "async_execution_thread")
_ENUM_KEYS = ("kind", "type", "fft_type", "api_version", "custom_call_schedule", "distribution", "padding_type",
              "algorithm", "rng_algorithm")

ATTRIBUTE_PARSERS: dict[str, Callable[[str], Any]] = {
    "metadata": parse_metadata,
    "sharding": parse_sharding,
    "replica_groups": parse_replica_groups,
    "source_target_pairs": parse_source_target_pairs,
    "slice": parse_slice,
    "window": parse_window,
    "padding": parse_padding_config,
    "dim_labels": parse_dim_labels,
    "backend_config": parse_backend_config,
    "frontend_attributes": parse_frontend_attributes,
    "direction": parse_direction,
    "operand_precision": parse_name_list,
    "control-predecessors": parse_name_list,
    "output_to_operand_aliasing": parse_output_operand_aliasing,
    "operand_layout_constraints": parse_shape_list,
    "input_output_alias": parse_input_output_alias,
    "buffer_donor": parse_buffer_donor,
    "entry_computation_layout": parse_computation_layout,
    "allow_spmd_sharding_propagation_to_parameters": parse_bool_list,
    "allow_spmd_sharding_propagation_to_output": parse_bool_list,
    **{key: _computation_refs for key in CALL_KEYS},
    **{key: parse_int_list for key in _INT_LIST_KEYS},
    **{key: parse_int for key in _INT_KEYS},
    **{key: parse_bool for key in _BOOL_KEYS},
    **{key: parse_string for key in _STRING_KEYS},
    **{key: parse_enum for key in _ENUM_KEYS},
}
"""Typed parser per attribute key (instruction and module header keys). Keys not listed stay plain text."""


def parse_attribute(key: str, raw: str) -> Any:
    """The typed value of ``key=raw`` when hlodiff knows the key, else ``raw`` unchanged."""
    parser = ATTRIBUTE_PARSERS.get(key)
    return raw if parser is None else parser(raw)


def validate_attributes(attrs: dict[str, str]) -> None:
    """Run the typed parser of every known key (instruction or module header attributes); unknown keys pass.

    Raises :class:`HloParseError` ``"attribute <key>: bad <what>: <reason>"`` for the first value that fails, so
    a strict parse proves every attribute form in a dump is understood.
    """
    for key, raw in attrs.items():
        parser = ATTRIBUTE_PARSERS.get(key)
        if parser is None:
            continue
        try:
            parser(raw)
        except HloParseError as e:
            raise HloParseError(f"attribute {key}: {e.message}") from None
