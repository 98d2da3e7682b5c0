/* hlodiff._accel: the optional compiled accelerator for the per-instruction hot loops of parsing, hashing and
 * matching. This file holds the module's table of functions and its set-up; each part is a file of its own here
 * (lines, operands, attributes, shapes and checks for the parser; hashes and blake2b for fingerprints; walks,
 * index and passes for canonical graphs, graphix for a computation's graph as integer arrays; matching for the
 * differ).
 *
 * Every function has a pure-Python twin that is the reference (hlodiff/hlo/parser.py, hlodiff/graph/,
 * hlodiff/diff/); hlodiff.accel picks this module when it was built and HLODIFF_PURE_PYTHON is not set. The
 * functions return exactly what the Python code computes (tests/test_accel.py checks both ways on the corpus), and
 * hand anything unusual back to the Python code instead of deciding it here.
 */
#include "accel.h"

PyObject *s_opcode, *s_shape, *s_literal, *s_attrs, *s_truncated, *s_metadata, *s_frontend, *s_control_predecessors,
    *s_name, *s_operands, *s_is_root, *s_parameter_number, *s_custom_call_has_side_effect, *s_true, *s_parameter,
    *s_tuple_shapes, *s_result_accuracy, *s_async_prefix, *s_gte, *s_tuple, *s_constant, *name_cache;

/* ---------------------------------------------------------------------------------------------------------
 * Module
 */

static PyMethodDef methods[] = {
    {"blake2b_hex", py_blake2b_hex, METH_VARARGS,
     "blake2b_hex(data, size) -> hashlib.blake2b(data, digest_size=size).hexdigest()"},
    {"anon_hashes", anon_hashes, METH_VARARGS,
     "anon_hashes(order, insts, operands, plain, label_fn, shape_text, shape_texts, labels, anon, call_keys[, "
     "comp_hashes]): fill labels and anonymous hashes in order, as fingerprint._hash_computation's first loop does "
     "(a call attribute's callees read from comp_hashes when given, else the node goes to label_fn)"},
    {"exact_hashes", exact_hashes, METH_VARARGS,
     "exact_hashes(order, labels, operands, param_ids, hashes): fill exact hashes in order, as "
     "fingerprint._hash_computation's second loop does"},
    {"parse_lines", parse_lines, METH_VARARGS,
     "parse_lines(lines, i, first_line, typed_refs, shapes, Instruction, out, declared, parse_shape_at, Shape[, names]) -> "
     "the index of the first "
     "line it left to the Python parser; instructions read are appended to out, typed operands to check to declared"},
    {"plain_computations", plain_computations, METH_VARARGS,
     "plain_computations(lines, i, first_line, shapes, Instruction, declared, parse_shape_at, Shape, Computation, "
     "computations) -> the index of the first line left to the Python parser; each computation written 'name {', "
     "its lines all parse_lines', closed by '}' is appended to computations"},
    {"live", live, METH_VARARGS, "live(roots, operands) -> the set of roots and all they depend on"},
    {"postorder", postorder, METH_VARARGS,
     "postorder(root, operands) -> (post-order list from root, operands in order; set of nodes reached)"},
    {"number_params", number_params, METH_VARARGS,
     "number_params(stack, seen, params, operands, ids): canonical_ids' depth-first numbering of parameters"},
    {"defined_before_use", defined_before_use, METH_VARARGS,
     "defined_before_use(operands) -> whether each operand list names only earlier instructions"},
    {"match_equal", match_equal, METH_VARARGS,
     "match_equal(l2r, r2l, left_operands, right_operands, left, right, force): "
     "matchers._match_equal_subgraphs"},
    {"group_by", group_by, METH_VARARGS,
     "group_by(order, hashes) -> hash -> the name when one has it, else [names in order]"},
    {"exact_walk", exact_walk, METH_VARARGS,
     "exact_walk(order, left_hashes, rights_by_hash, lefts_by_hash, l2r, r2l, left_operands, right_operands, "
     "tied): match_exact's walk; hashes shared by several go to tied(name, hash, rights)"},
    {"top_down", top_down, METH_VARARGS,
     "top_down(order, l2r, r2l, settled, left_operands, right_operands, left_root, handle, left_insts, "
     "right_insts, left_anon, right_anon): match_top_down's walk"},
    {"unsettled_pairs", unsettled_pairs, METH_VARARGS,
     "unsettled_pairs(l2r, left_labels, right_labels, left_operands, right_operands) -> pairs classify must look at"},
    {"users_of", users_of, METH_VARARGS, "users_of(operands) -> each name's users, in order, each once"},
    {"names_in_order_each", names_in_order_each, METH_VARARGS,
     "names_in_order_each(computations) -> positions of those whose names_in_order is not False"},
    {"names_in_order", names_in_order, METH_VARARGS,
     "names_in_order(instructions) -> whether an operand is used before its definition; None: a rule is broken"},
    {"index_computation", index_computation, METH_VARARGS,
     "index_computation(instructions, side_effect_opcodes) -> (insts, operands, parameters, side_effects, "
     "with_metadata, get_tuple_elements)"},
    {"calls_each", calls_each, METH_VARARGS,
     "calls_each(computations, call_keys, callees) -> the calls map of name_checks._check_computations, or None when "
     "a rule is broken"},
    {"reachable_order", reachable_order, METH_VARARGS,
     "reachable_order(computations, entry, call_keys, called_computations) -> reachable_computations's list"},
    {"with_attribute_each", with_attribute_each, METH_VARARGS,
     "with_attribute_each(computations, keys) -> [(computation, with_attribute(its instructions, keys))] where any"},
    {"with_attribute", with_attribute, METH_VARARGS,
     "with_attribute(instructions, keys) -> the instructions whose attributes hold one of keys"},
    {"renamed_and_metadata", renamed_and_metadata, METH_VARARGS,
     "renamed_and_metadata(l2r, left_insts, right_insts, count_metadata) -> (renamed, metadata differences)"},
    {"signature", signature, METH_VARARGS,
     "signature(text, pos, shapes, parse_shape_at, Shape) -> ((params, result), end) for a computation header, "
     "or None"},
    {"value_end", value_end_of, METH_VARARGS, "value_end(text, pos) -> scan.value_end for ASCII text, or None"},
    {"triage_each", triage_each, METH_VARARGS,
     "triage_each(computations, ruled, known, odd) -> [triage of each computation, or None when empty or implicit]"},
    {"triage", triage, METH_VARARGS,
     "triage(instructions, rules, known_opcodes, odd) -> the instructions a parse-time rule must look at"},
    {"dead_names", dead_names, METH_VARARGS, "dead_names(insts, live) -> names not live and not parameters"},
    {"count_attribute", count_attribute, METH_VARARGS, "count_attribute(instructions, key) -> how many carry key"},
    {"unpaired", unpaired, METH_VARARGS, "unpaired(order, paired) -> [name for name in order if name not in paired]"},
    {"register_instruction", register_instruction, METH_O,
     "register_instruction(Instruction) -> whether its slots are read and filled directly from now on"},
    {"register_no_attributes", register_no_attributes, METH_O,
     "register_no_attributes(empty) -> None: the attrs every instruction read without attributes shares"},
    {"register_shared_attributes", register_shared_attributes, METH_O,
     "register_shared_attributes(type) -> None: the dict subclass of the attrs shared while sharing is on"},
    {"share_line", share_line, METH_O, "share_line(n) -> the int of line n read while sharing is on, else a new one"},
    {"share_attributes", share_attributes, METH_VARARGS,
     "share_attributes(text, attrs) -> the attrs of instructions written with text after their operands, shared"},
    {"share_values", share_values, METH_O,
     "share_values(on) -> None: while on (nested calls count), equal line numbers and attributes texts of the "
     "instructions read are one object each"},
    {"reads_tuple", reads_tuple, METH_VARARGS,
     "reads_tuple(insts, operands) -> whether a get-tuple-element reads a tuple instruction directly"},
    {"graph_index", graph_index, METH_VARARGS,
     "graph_index(operands) -> a computation's graph as integer arrays (a capsule), or None when an operand names "
     "no instruction"},
    {"index_ordered", index_ordered, METH_O, "index_ordered(ix) -> whether every operand is defined before its user"},
    {"index_live_count", index_live_count, METH_VARARGS,
     "index_live_count(ix, roots) -> len(live(roots, operands)) over the index"},
    {"index_postorder", index_postorder, METH_VARARGS,
     "index_postorder(ix, root) -> postorder(root, operands)'s list, over the index"},
    {"index_number_params", index_number_params, METH_VARARGS,
     "index_number_params(ix, stack, root, params, ids): number_params with seen = {root}, over the index"},
    {"index_compact", index_compact, METH_O,
     "index_compact(ix): drop the index's table of names (lookups by name then scan); the same answers"},
    {"index_users", index_users, METH_O, "index_users(ix) -> users_of(operands) over the index"},
    {"pairs_new", pairs_new, METH_VARARGS,
     "pairs_new(lix, rix, l2r, r2l) -> a Matching's pairs as positions (kept in step with the dicts), or None"},
    {"pairs_add", pairs_add, METH_VARARGS, "pairs_add(P, left, right) -> whether the mirror took Matching.add's pair"},
    {"pairs_unpaired", pairs_unpaired, METH_VARARGS, "pairs_unpaired(P, order, side) -> unpaired over positions"},
    {"pairs_match_equal", pairs_match_equal, METH_VARARGS,
     "pairs_match_equal(P, left, right, force) -> match_equal over positions"},
    {"pairs_exact_walk", pairs_exact_walk, METH_VARARGS,
     "pairs_exact_walk(P, order, lanon, rights_by, lefts_by, tied) -> exact_walk over positions"},
    {"pairs_top_down", pairs_top_down, METH_VARARGS,
     "pairs_top_down(P, order, root, handle, linsts, rinsts, lanon, ranon, lops, rops) -> top_down over positions"},
    {"pairs_unsettled", pairs_unsettled, METH_VARARGS,
     "pairs_unsettled(P, llabels, rlabels, linsts, rinsts) -> index_unsettled's answer from the mirror, or None"},
    {"pairs_renamed_and_metadata", pairs_renamed_and_metadata, METH_VARARGS,
     "pairs_renamed_and_metadata(P, linsts, rinsts, count_metadata) -> renamed_and_metadata from the mirror, or None"},
    {"index_users_of", index_users_of, METH_VARARGS, "index_users_of(ix, name) -> index_users(ix)[name], a new list"},
    {"index_unsettled", index_unsettled, METH_VARARGS,
     "index_unsettled(l2r, lix, rix, llabels, rlabels, linsts, rinsts) -> (unsettled_pairs, left and right "
     "unpaired (name, inst) entries) over the two indexes, or None"},
    {"anon_hashes_ix", anon_hashes_ix, METH_VARARGS,
     "anon_hashes_ix(ix, insts, plain, label_fn, shape_text, shape_texts, labels, anon, call_keys[, comp_hashes]): "
     "anon_hashes over an operand-first index"},
    {"hash_small", hash_small, METH_VARARGS,
     "hash_small(ccs, start, entry, index_min, plain, label_fn, shape_text, shape_texts, call_keys, comp_hashes[, "
     "refill]) -> (stop, instructions): a run of small called computations hashed as _hash_computation would (with "
     "refill, keeping only their hashes and refill)"},
    {"exact_hashes_ix", exact_hashes_ix, METH_VARARGS,
     "exact_hashes_ix(ix, labels, param_ids, hashes, root): exact_hashes over an operand-first index, keeping "
     "the root's hash and those of the nodes it does not reach"},
    {NULL, NULL, 0, NULL},
};

#ifndef HLODIFF_ACCEL_SOURCE_DIGEST
#define HLODIFF_ACCEL_SOURCE_DIGEST ""
#endif

static struct PyModuleDef moduledef = {PyModuleDef_HEAD_INIT, "hlodiff._accel", NULL, -1, methods};

PyMODINIT_FUNC PyInit__accel(void) {
    s_opcode = PyUnicode_InternFromString("opcode");
    s_shape = PyUnicode_InternFromString("shape");
    s_literal = PyUnicode_InternFromString("literal");
    s_attrs = PyUnicode_InternFromString("attrs");
    s_truncated = PyUnicode_InternFromString("truncated_operands");
    s_metadata = PyUnicode_InternFromString("metadata");
    name_cache = PyDict_New();
    s_tuple_shapes = PyUnicode_InternFromString("tuple_shapes");
    s_gte = PyUnicode_InternFromString("get-tuple-element");
    s_tuple = PyUnicode_InternFromString("tuple");
    s_result_accuracy = PyUnicode_InternFromString("result_accuracy");
    s_async_prefix = PyUnicode_InternFromString("async-");
    s_custom_call_has_side_effect = PyUnicode_InternFromString("custom_call_has_side_effect");
    s_true = PyUnicode_InternFromString("true");
    s_parameter = PyUnicode_InternFromString("parameter");
    s_constant = PyUnicode_InternFromString("constant");
    s_name = PyUnicode_InternFromString("name");
    s_operands = PyUnicode_InternFromString("operands");
    s_is_root = PyUnicode_InternFromString("is_root");
    s_parameter_number = PyUnicode_InternFromString("parameter_number");
    s_frontend = PyUnicode_InternFromString("frontend_attributes");
    s_control_predecessors = PyUnicode_InternFromString("control-predecessors");
    if (!s_opcode || !s_shape || !s_literal || !s_attrs || !s_truncated || !s_metadata || !name_cache) return NULL;
    PyObject *m = PyModule_Create(&moduledef);
    /* The digest of the C sources this module was built from (setup.py): hlodiff.accel compares it with the
       sources beside the package and runs the Python code when they differ (a tree updated, not rebuilt). */
    if (m && PyModule_AddStringConstant(m, "SOURCE_DIGEST", HLODIFF_ACCEL_SOURCE_DIGEST) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
