/* Shared declarations of hlodiff._accel's sources (hlodiff/_accel_c/): the byte buffer, character classes,
 * interned attribute names and the functions one source calls in another. See module.c for what the accelerator
 * is and the rule every function follows.
 */
#ifndef HLODIFF_ACCEL_H
#define HLODIFF_ACCEL_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* A growable byte buffer (buffer.c). */
typedef struct {
    char *data;
    size_t len, cap;
    char stack[4096];
} Buf;

/* Tuple shapes longer than this are not cached by their text (hlodiff.hlo.shapes.CACHED_TUPLE_TEXT). */
#define CACHED_TUPLE_TEXT 256

/* Operand lists are lists or tuples. */
#define OPS_SIZE(o) (PyList_Check(o) ? PyList_GET_SIZE(o) : PyTuple_GET_SIZE(o))
#define OPS_ITEM(o, i) (PyList_Check(o) ? PyList_GET_ITEM(o, i) : PyTuple_GET_ITEM(o, i))

/* Character classes of the ASCII text the fast paths read. */
static inline int is_ws(char c) { return c == ' ' || c == '\t'; }
static inline int is_lower(char c) { return c >= 'a' && c <= 'z'; }
static inline int is_digit(char c) { return c >= '0' && c <= '9'; }
static inline int is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static inline int is_name(char c) { return is_alpha(c) || is_digit(c) || c == '_' || c == '.' || c == '-'; }
static inline int is_sp(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
static inline int is_re_space(char c) { return is_sp(c) || c == '\f' || c == '\v'; }

/* A dict read in the order of a list of its keys (most often its own order: a computation's maps are built in
   text order, and text order is operand-first): cursor_get takes the next entry when its key is the very name
   asked, so the walk reads the entries one after another instead of probing the table at random; any other name
   is looked up. Borrowed value, or NULL with KeyError (or the lookup's error) set. */
typedef struct {
    PyObject *dict;
    Py_ssize_t pos;
} Cursor;

static inline PyObject *cursor_get(Cursor *c, PyObject *name) {
    Py_ssize_t pos = c->pos;
    PyObject *key, *value;
    if (PyDict_Next(c->dict, &pos, &key, &value) && key == name) {
        c->pos = pos;
        return value;
    }
    value = PyDict_GetItemWithError(c->dict, name);
    if (value == NULL && !PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, name);
    return value;
}

/* Interned names, set up in module.c. */
extern PyObject *s_opcode, *s_shape, *s_literal, *s_attrs, *s_truncated, *s_metadata, *s_frontend,
    *s_control_predecessors, *s_name, *s_operands, *s_is_root, *s_parameter_number, *s_custom_call_has_side_effect,
    *s_true, *s_parameter, *s_tuple_shapes, *s_result_accuracy, *s_async_prefix, *s_gte, *s_tuple, *s_constant;

/* Opcode and attribute-key texts, shared (they recur on every line): text.c's shared_str. */
extern PyObject *name_cache;

/* blake2b.c */
void blake2b_hex(const uint8_t *data, size_t len, int outlen, char *hex);

/* buffer.c */
void buf_init(Buf *b);
void buf_free(Buf *b);
int buf_put(Buf *b, const char *s, size_t n);
int buf_put_str(Buf *b, PyObject *s);
int buf_put_operands(Buf *b, PyObject *ops, PyObject *table);

/* hashes.c */
PyObject *anon_hashes(PyObject *self, PyObject *args);
PyObject *exact_hashes(PyObject *self, PyObject *args);
PyObject *py_blake2b_hex(PyObject *self, PyObject *args);
PyObject *anon_hashes_ix(PyObject *self, PyObject *args);
PyObject *exact_hashes_ix(PyObject *self, PyObject *args);
PyObject *hash_small(PyObject *self, PyObject *args);
PyObject *exact_str(const char *hex);

/* text.c */
Py_ssize_t skip_ws(const char *p, Py_ssize_t pos, Py_ssize_t n);
PyObject *ascii_str(const char *s, Py_ssize_t n);
PyObject *shared_str(const char *s, Py_ssize_t n);
extern PyObject *known_names;
PyObject *operand_name(const char *s, Py_ssize_t n);
PyObject *typed_ref(PyObject *shape, PyObject *name);
Py_ssize_t array_end(const char *p, Py_ssize_t pos, Py_ssize_t n, int *has_pct);
Py_ssize_t paren_end(const char *p, Py_ssize_t pos, Py_ssize_t n, int max_depth);
Py_ssize_t string_end(const char *p, Py_ssize_t pos, Py_ssize_t n);
int append_text(PyObject *list, const char *s, Py_ssize_t n);
PyObject *joined_words(const char *p, Py_ssize_t pos, Py_ssize_t end);

/* attributes.c */
Py_ssize_t value_end(const char *p, Py_ssize_t pos, Py_ssize_t n);
PyObject *read_attributes(const char *p, Py_ssize_t pos, Py_ssize_t n);
PyObject *value_end_of(PyObject *self, PyObject *args);

/* operands.c */
PyObject *untyped_operands(const char *p, Py_ssize_t pos, Py_ssize_t end);
int typed_operands(const char *p, Py_ssize_t pos, Py_ssize_t end, PyObject *typed_refs, PyObject *names, PyObject *shapes);
int operand_items(const char *p, Py_ssize_t pos, Py_ssize_t end, PyObject *names, PyObject *shapes);
int declared_otherwise(PyObject *names, PyObject *shapes, PyObject *typed_refs);

/* names.c: strings found by their bytes */
PyObject *shared_find(const char *s, Py_ssize_t n);
int shared_add(PyObject *str);
void names_bind(PyObject *dict);
PyObject *names_find(PyObject *dict, const char *s, Py_ssize_t n);
int names_add(PyObject *dict, PyObject *str);
int names_set_shape(PyObject *dict, PyObject *str, PyObject *shape);
PyObject *names_shape(PyObject *dict, const char *s, Py_ssize_t n);
int typed_ref_of(PyObject *typed_refs, PyObject *name, PyObject **shape, PyObject **ref);

/* instances.c: Instruction objects through their slots */
#define INST_FIELDS 11
int register_instruction_type(PyObject *type);
PyObject *register_instruction(PyObject *self, PyObject *type);
PyObject *register_no_attributes(PyObject *self, PyObject *attrs);
PyObject *empty_attributes(void);
/* shared.c: one object for an equal line number or attributes text across the modules of a comparison. */
PyObject *share_values(PyObject *self, PyObject *arg);
PyObject *shared_line(long n);
PyObject *share_line(PyObject *self, PyObject *arg);
PyObject *share_attributes(PyObject *self, PyObject *args);
PyObject *register_shared_attributes(PyObject *self, PyObject *type);
PyObject *shared_attributes(const char *p, Py_ssize_t pos, Py_ssize_t n);
PyObject *inst_attr(PyObject *inst, PyObject *key);
PyObject *inst_new(PyObject *type, PyObject *const *args);

/* lines.c */
PyObject *parse_lines(PyObject *self, PyObject *args);
PyObject *plain_computations(PyObject *self, PyObject *args);

/* shapes.c */
PyObject *read_shape(const char *p, Py_ssize_t pos, Py_ssize_t n, PyObject *shapes, PyObject *parse_array, PyObject *shape_type, Py_ssize_t *end, int depth);
PyObject *signature(PyObject *self, PyObject *args);

/* checks.c */
PyObject *names_in_order(PyObject *self, PyObject *args);
PyObject *names_in_order_each(PyObject *self, PyObject *args);
PyObject *triage(PyObject *self, PyObject *args);
PyObject *triage_each(PyObject *self, PyObject *args);

/* walks.c */
PyObject *operands_of(PyObject *operands, PyObject *name);
PyObject *pop_last(PyObject *stack);
PyObject *live(PyObject *self, PyObject *args);
PyObject *postorder(PyObject *self, PyObject *args);
PyObject *number_params(PyObject *self, PyObject *args);
PyObject *defined_before_use(PyObject *self, PyObject *args);

/* graphix.c: a computation's graph as integer arrays */
PyObject *graph_index(PyObject *self, PyObject *args);
PyObject *index_ordered(PyObject *self, PyObject *capsule);
PyObject *index_live_count(PyObject *self, PyObject *args);
PyObject *index_postorder(PyObject *self, PyObject *args);
PyObject *index_number_params(PyObject *self, PyObject *args);
PyObject *index_users(PyObject *self, PyObject *capsule);
PyObject *index_users_of(PyObject *self, PyObject *args);
PyObject *index_compact(PyObject *self, PyObject *capsule);
PyObject *index_unsettled(PyObject *self, PyObject *args);
int gx_view(PyObject *capsule, Py_ssize_t *n, PyObject **names, int32_t **op_start, int32_t **op_idx, int *ordered);
Py_ssize_t gx_position(PyObject *capsule, PyObject *name);
Py_ssize_t gx_position_tabled(PyObject *capsule, PyObject *name);

/* index.c */
PyObject *index_computation(PyObject *self, PyObject *args);
PyObject *with_attribute(PyObject *self, PyObject *args);
PyObject *with_attribute_each(PyObject *self, PyObject *args);
PyObject *reachable_order(PyObject *self, PyObject *args);
PyObject *calls_each(PyObject *self, PyObject *args);
PyObject *unpaired(PyObject *self, PyObject *args);

/* passes.c */
PyObject *dead_names(PyObject *self, PyObject *args);
PyObject *count_attribute(PyObject *self, PyObject *args);
PyObject *reads_tuple(PyObject *self, PyObject *args);

/* matching.c */
PyObject *match_equal(PyObject *self, PyObject *args);
PyObject *group_by(PyObject *self, PyObject *args);
PyObject *exact_walk(PyObject *self, PyObject *args);
PyObject *top_down(PyObject *self, PyObject *args);
PyObject *unsettled_pairs(PyObject *self, PyObject *args);
PyObject *users_of(PyObject *self, PyObject *args);
PyObject *renamed_and_metadata(PyObject *self, PyObject *args);
int metadata_differs(PyObject *li, PyObject *ri);
typedef struct Pairs Pairs;
Py_ssize_t group_size(PyObject *group, PyObject **only);
int compatible(PyObject *linsts, PyObject *rinsts, PyObject *lanon, PyObject *ranon, PyObject *lo, PyObject *ro);
int content_choice(PyObject *free, PyObject *linsts, PyObject *rinsts, PyObject *lops_of, PyObject *rops_of,
                   PyObject *lanon, PyObject *ranon, PyObject *l2r, PyObject *r2l, Pairs *mirror);

/* pairs.c: matching over positions */
int pairs_pair_names(Pairs *p, PyObject *l, PyObject *r);
PyObject *pairs_new(PyObject *self, PyObject *args);
PyObject *pairs_add(PyObject *self, PyObject *args);
PyObject *pairs_unpaired(PyObject *self, PyObject *args);
PyObject *pairs_match_equal(PyObject *self, PyObject *args);
PyObject *pairs_exact_walk(PyObject *self, PyObject *args);
PyObject *pairs_top_down(PyObject *self, PyObject *args);
PyObject *pairs_unsettled(PyObject *self, PyObject *args);
PyObject *pairs_renamed_and_metadata(PyObject *self, PyObject *args);

#endif
