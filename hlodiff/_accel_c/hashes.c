/* Node labels and Merkle hashes (hlodiff.graph.fingerprint._hash_computation's two loops).
 */
#include "accel.h"

/* The label fingerprint._label makes, built here when the options are the defaults (names and metadata
   ignored) and no attribute needs Python (a call's target hashes, frontend attributes holding braces, elided
   operands); otherwise label_fn(inst) makes it. */
/* Labels of bare nodes (no literal, no attribute but metadata), by opcode then shape text; bounded, so that a
   long run of many modules cannot grow it without end. */
#define LABEL_CACHE_SIZE 16384 /* labels in all: a real module has a few hundred pairs */
static PyObject *label_cache;
static Py_ssize_t label_cache_size;

#define SHAPE_SLOTS 1024
static PyObject *shape_keys[SHAPE_SLOTS]; /* compared by address only, never dereferenced */
static PyObject *shape_vals[SHAPE_SLOTS]; /* strong references (kept till replaced: 1024 strings at most) */
static uint64_t shape_gens[SHAPE_SLOTS], shape_gen; /* a slot counts only in the loop that filled it */

/* A new loop: no slot filled before counts (an address may name another Shape, or shape_text differ). */
static void shape_cache_reset(void) { shape_gen++; }

/* A name character of fingerprint._NAME_TOKEN ([A-Za-z0-9_.-]). */
static int name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '-';
}

/* A call attribute's value as fingerprint._label writes it: _NAME_TOKEN.sub(lambda m: "#" +
   comp_hashes.get(m.group(1), m.group(1)), value), each name (with its optional '%') made '#' and the callee's
   hash, or the name itself when no computation has it. Ends the call in C: in an unrolled step every block's
   reduce calls its own region (13,600 calls to the Python label a side of the 300K pair). */
static int buf_put_callees(Buf *b, PyObject *value, PyObject *comp_hashes) {
    Py_ssize_t n;
    const char *v = PyUnicode_AsUTF8AndSize(value, &n);
    if (v == NULL) return -1;
    Py_ssize_t i = 0;
    while (i < n) {
        Py_ssize_t from = i + (v[i] == '%' && i + 1 < n && name_char(v[i + 1]));
        if (!name_char(v[from])) {
            if (buf_put(b, v + i, 1) < 0) return -1;
            i++;
            continue;
        }
        Py_ssize_t to = from;
        while (to < n && name_char(v[to])) to++;
        PyObject *name = PyUnicode_FromStringAndSize(v + from, to - from);
        if (name == NULL) return -1;
        PyObject *h = PyDict_GetItemWithError(comp_hashes, name); /* borrowed */
        int rc = h == NULL && PyErr_Occurred() ? -1 : buf_put(b, "#", 1);
        if (rc == 0) rc = h != NULL && PyUnicode_Check(h) ? buf_put_str(b, h) : buf_put(b, v + from, to - from);
        Py_DECREF(name);
        if (rc < 0) return -1;
        i = to;
    }
    return 0;
}

/* Labels with attributes or a literal recur as bare ones do: every unrolled block's broadcasts, reduces and dots
   (61K of the 217K labels a side of the 300K pair, a few dozen texts). A direct-mapped table of the last ASCII
   label made for each slot, by a hash of its bytes, gives a recurring text one string: no allocation, less
   memory as long as the comparison lasts, and equal labels found equal by identity where matching compares
   them. Bounded (LABEL_SLOTS strings of at most LABEL_SHARED_MAX bytes, for the life of the process: a
   constant's long literal is never kept); a miss makes the string as before. */
#define LABEL_SLOTS 8192
#define LABEL_SHARED_MAX 256
static PyObject **label_strs;

static PyObject *shared_label(const char *s, size_t n) {
    if (n > LABEL_SHARED_MAX || (label_strs == NULL && (label_strs = PyMem_Calloc(LABEL_SLOTS, sizeof(PyObject *))) == NULL))
        return PyUnicode_DecodeUTF8(s, (Py_ssize_t)n, "strict");
    uint64_t h = 0xcbf29ce484222325ull ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = (h ^ w) * 0x100000001b3ull;
    }
    for (; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    size_t at = (size_t)h & (LABEL_SLOTS - 1);
    PyObject *o = label_strs[at]; /* compact ASCII: its data are its bytes */
    if (o != NULL && (size_t)PyUnicode_GET_LENGTH(o) == n && memcmp(PyUnicode_DATA(o), s, n) == 0) {
        Py_INCREF(o);
        return o;
    }
    PyObject *t = PyUnicode_DecodeUTF8(s, (Py_ssize_t)n, "strict");
    if (t != NULL && PyUnicode_IS_COMPACT_ASCII(t)) {
        Py_INCREF(t);
        Py_XSETREF(label_strs[at], t);
    }
    return t;
}

static PyObject *node_label(PyObject *inst, int plain, PyObject *label_fn, PyObject *shape_text,
                            PyObject *shape_texts, PyObject *call_keys, PyObject *comp_hashes) {
    if (!plain) return PyObject_CallOneArg(label_fn, inst);
    if (label_cache == NULL && (label_cache = PyDict_New()) == NULL) return NULL;
    PyObject *attrs = NULL, *trunc = NULL, *opcode = NULL, *shape = NULL, *literal = NULL, *st = NULL;
    PyObject *text = NULL;
    int python = 0;
    Buf b;
    buf_init(&b);
    attrs = inst_attr(inst, s_attrs);
    trunc = attrs ? inst_attr(inst, s_truncated) : NULL;
    if (trunc == NULL) goto done;
    if (!PyDict_Check(attrs) || PyObject_IsTrue(trunc) != 0) {
        python = 1;
        goto done;
    }
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(attrs, &pos, &key, &value)) {
        if (key == s_metadata && PyUnicode_Check(value)) continue; /* the common case: not a call key, nor frontend */
        int is_call = PySet_Contains(call_keys, key);
        if (is_call < 0) goto done;
        if ((is_call && comp_hashes == NULL) || !PyUnicode_Check(value) || !PyUnicode_Check(key)) {
            python = 1;
            goto done;
        }
        if (PyUnicode_Compare(key, s_frontend) == 0) {
            Py_ssize_t n;
            const char *v = PyUnicode_AsUTF8AndSize(value, &n);
            if (v == NULL) goto done;
            for (Py_ssize_t k = 0; k + 1 < n; k++)
                if (v[k] == '=' && (v[k + 1] == '{' || (v[k + 1] == '"' && k + 2 < n && v[k + 2] == '{'))) {
                    python = 1;
                    goto done;
                }
        }
    }
    opcode = inst_attr(inst, s_opcode);
    shape = opcode ? inst_attr(inst, s_shape) : NULL;
    literal = shape ? inst_attr(inst, s_literal) : NULL;
    if (literal == NULL) goto done;
    /* shape_texts: id(shape) -> text, filled by shape_text() (the parser shares Shape objects). The last text
       found for each slot of a small table by the Shape's address is reused: a few hundred shapes serve hundreds
       of thousands of nodes, and each lookup made an int and probed a dict. The table is emptied at the start of
       each loop (shape_cache_reset), while every Shape it names is alive (held by the loop's instructions). */
    size_t slot = ((uintptr_t)shape >> 4) & (SHAPE_SLOTS - 1);
    if (shape_keys[slot] == shape && shape_gens[slot] == shape_gen && shape_vals[slot] != NULL) {
        st = shape_vals[slot];
        Py_INCREF(st);
    } else {
        PyObject *id = PyLong_FromVoidPtr(shape);
        st = id ? PyDict_GetItemWithError(shape_texts, id) : NULL;
        Py_XINCREF(st);
        Py_XDECREF(id);
        if (st == NULL && !PyErr_Occurred()) st = PyObject_CallOneArg(shape_text, shape);
        if (st == NULL) goto done;
        Py_INCREF(st);
        Py_XSETREF(shape_vals[slot], st);
        shape_keys[slot] = shape;
        shape_gens[slot] = shape_gen;
    }
    int bare = literal == Py_None; /* no literal and (below) no attribute the label shows */
    pos = 0;
    while (bare && PyDict_Next(attrs, &pos, &key, &value))
        if (PyUnicode_Compare(key, s_metadata) != 0 && PyUnicode_Compare(key, s_control_predecessors) != 0) bare = 0;
    PyObject *by_shape = NULL;
    if (bare) { /* "opcode|shape": one shared string per pair (hundreds of thousands of nodes, a few hundred pairs) */
        by_shape = PyDict_GetItemWithError(label_cache, opcode);
        if (by_shape == NULL && PyErr_Occurred()) goto done;
        text = by_shape ? PyDict_GetItemWithError(by_shape, st) : NULL;
        if (text != NULL) {
            Py_INCREF(text);
            goto done;
        }
        if (PyErr_Occurred()) goto done;
    }
    if (buf_put_str(&b, opcode) < 0 || buf_put(&b, "|", 1) < 0 || buf_put_str(&b, st) < 0) goto done;
    if (literal != Py_None && (buf_put(&b, "|", 1) < 0 || buf_put_str(&b, literal) < 0)) goto done;
    pos = 0;
    while (PyDict_Next(attrs, &pos, &key, &value)) {
        if (PyUnicode_Compare(key, s_metadata) == 0 || PyUnicode_Compare(key, s_control_predecessors) == 0)
            continue;
        if (buf_put(&b, "|", 1) < 0 || buf_put_str(&b, key) < 0 || buf_put(&b, "=", 1) < 0) goto done;
        int is_call = comp_hashes != NULL ? PySet_Contains(call_keys, key) : 0;
        if (is_call < 0 || (is_call ? buf_put_callees(&b, value, comp_hashes) : buf_put_str(&b, value)) < 0)
            goto done;
    }
    text = shared_label(b.data, b.len);
    if (text != NULL && bare && label_cache_size < LABEL_CACHE_SIZE) {
        if (by_shape == NULL) {
            by_shape = PyDict_New();
            if (by_shape == NULL || PyDict_SetItem(label_cache, opcode, by_shape) < 0) {
                Py_XDECREF(by_shape);
                Py_CLEAR(text);
                goto done;
            }
            Py_DECREF(by_shape); /* held by label_cache */
        }
        if (PyDict_SetItem(by_shape, st, text) < 0)
            Py_CLEAR(text);
        else
            label_cache_size++;
    }
done:
    buf_free(&b);
    Py_XDECREF(attrs);
    Py_XDECREF(trunc);
    Py_XDECREF(opcode);
    Py_XDECREF(shape);
    Py_XDECREF(literal);
    Py_XDECREF(st);
    if (python && !PyErr_Occurred()) return PyObject_CallOneArg(label_fn, inst);
    return text;
}


/* A node's entry in two per-node maps (borrowed), or -1 with KeyError (or the lookup's error) set. */

/* A hash's text, set in dict under name and, when slot is given, kept there (borrowed: the dict holds it). */
/* The string of the n hex digits at hex from one slot of a direct-mapped table (anon_str, exact_str): the slot's
   string when it holds these digits, else a new one that takes the slot. New reference, NULL on error. */
static inline PyObject *slot_str(PyObject **slot, const char *hex, Py_ssize_t n) {
    PyObject *o = *slot;
    if (o != NULL && memcmp(PyUnicode_DATA(o), hex, n) == 0) return Py_NewRef(o);
    PyObject *h = ascii_str(hex, n);
    if (h == NULL) return NULL;
    Py_XSETREF(*slot, Py_NewRef(h));
    return h;
}

/* Anonymous hashes (16 hex digits) recur: a graph of N identical layers or unrolled blocks has each one N times
   (6,800 times in the 300K-instruction pair). A direct-mapped table of the last string made for each slot gives a
   recurring hash the same object: one string instead of N (about 17 MB per side at 300K, as long as the
   comparison), no allocation, and equal keys found by identity where matching groups nodes by them. Bounded
   (ANON_SLOTS strings at most, for the life of the process); a miss makes the string as before. */
#define ANON_SLOTS 65536
static PyObject **anon_strs;

static PyObject *anon_str(const char *hex) {
    if (anon_strs == NULL && (anon_strs = PyMem_Calloc(ANON_SLOTS, sizeof(PyObject *))) == NULL)
        return ascii_str(hex, 16);
    uint64_t a, b;
    memcpy(&a, hex, 8);
    memcpy(&b, hex + 8, 8);
    size_t at = (size_t)(((a ^ (b * 0x9E3779B97F4A7C15ull)) * 0xFF51AFD7ED558CCDull) >> 48) & (ANON_SLOTS - 1);
    return slot_str(&anon_strs[at], hex, 16);
}

/* Exact hashes (24 hex digits) recur in the same way where the graphs do not chain: every unrolled block's
   reduction region is the same three nodes, so 13,600 regions a side of the 300K pair made 40,800 node hashes and
   13,600 computation hashes of four texts in all (4 MB a side for as long as the comparison). The same bounded
   direct-mapped table, for them (EXACT_SLOTS strings at most, for the life of the process); a miss makes the
   string as before. */
#define EXACT_SLOTS 16384
static PyObject **exact_strs;

PyObject *exact_str(const char *hex) {
    if (exact_strs == NULL && (exact_strs = PyMem_Calloc(EXACT_SLOTS, sizeof(PyObject *))) == NULL)
        return ascii_str(hex, 24);
    uint64_t a, b, c;
    memcpy(&a, hex, 8);
    memcpy(&b, hex + 8, 8);
    memcpy(&c, hex + 16, 8);
    size_t at = (size_t)((((a ^ (b * 0x9E3779B97F4A7C15ull)) ^ (c * 0xC2B2AE3D27D4EB4Full)) * 0xFF51AFD7ED558CCDull) >>
                         48) & (EXACT_SLOTS - 1);
    return slot_str(&exact_strs[at], hex, 24);
}

static int hash_into_slot(PyObject *dict, PyObject *name, Buf *b, int size, PyObject **slot) {
    char hex[128];
    blake2b_hex((const uint8_t *)b->data, b->len, size, hex);
    PyObject *h = size == 8 ? anon_str(hex) : size == 12 ? exact_str(hex) : ascii_str(hex, 2 * size);
    if (h == NULL) return -1;
    int rc = PyDict_SetItem(dict, name, h);
    if (slot != NULL) *slot = h;
    Py_DECREF(h);
    return rc;
}

static int hash_into(PyObject *dict, PyObject *name, Buf *b, int size) {
    return hash_into_slot(dict, name, b, size, NULL);
}
static int node_entries(Cursor *first, Cursor *second, PyObject *name, PyObject **a, PyObject **b) {
    *a = cursor_get(first, name);
    *b = *a ? cursor_get(second, name) : NULL;
    return *b != NULL ? 0 : -1;
}

PyObject *anon_hashes(PyObject *self, PyObject *args) {
    PyObject *order, *insts, *operands, *label_fn, *shape_text, *shape_texts, *labels, *anon, *call_keys;
    PyObject *comp_hashes = NULL;
    int plain;
    if (!PyArg_ParseTuple(args, "O!O!O!pOOO!O!O!O!|O!", &PyList_Type, &order, &PyDict_Type, &insts, &PyDict_Type,
                          &operands, &plain, &label_fn, &shape_text, &PyDict_Type, &shape_texts, &PyDict_Type,
                          &labels, &PyDict_Type, &anon, &PyFrozenSet_Type, &call_keys, &PyDict_Type, &comp_hashes))
        return NULL;
    Buf b;
    buf_init(&b);
    shape_cache_reset();
    Cursor at_inst = {insts, 0}, at_ops = {operands, 0};
    Py_ssize_t n = PyList_GET_SIZE(order);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *name = PyList_GET_ITEM(order, i), *inst, *ops;
        if (node_entries(&at_inst, &at_ops, name, &inst, &ops) < 0) goto fail;
        PyObject *label = node_label(inst, plain, label_fn, shape_text, shape_texts, call_keys, comp_hashes);
        if (label == NULL) goto fail;
        int rc = PyDict_SetItem(labels, name, label);
        b.len = 0;
        if (rc == 0) rc = buf_put_str(&b, label);
        Py_DECREF(label);
        if (rc < 0 || buf_put_operands(&b, ops, anon) < 0 || hash_into(anon, name, &b, 8) < 0) goto fail;
    }
    buf_free(&b);
    Py_RETURN_NONE;
fail:
    buf_free(&b);
    return NULL;
}

PyObject *exact_hashes(PyObject *self, PyObject *args) {
    PyObject *order, *labels, *operands, *param_ids, *hashes;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!", &PyList_Type, &order, &PyDict_Type, &labels, &PyDict_Type,
                          &operands, &PyDict_Type, &param_ids, &PyDict_Type, &hashes))
        return NULL;
    Buf b;
    buf_init(&b);
    Cursor at_label = {labels, 0}, at_ops = {operands, 0}; /* labels were filled in this order */
    Py_ssize_t n = PyList_GET_SIZE(order);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *name = PyList_GET_ITEM(order, i), *label, *ops;
        if (node_entries(&at_label, &at_ops, name, &label, &ops) < 0) goto fail;
        b.len = 0;
        if (buf_put_str(&b, label) < 0) goto fail;
        PyObject *pid = PyDict_GetItemWithError(param_ids, name);
        if (pid != NULL) {
            PyObject *text = PyObject_Str(pid);
            int rc = text ? buf_put(&b, "|#", 2) : -1;
            if (rc == 0) rc = buf_put_str(&b, text);
            Py_XDECREF(text);
            if (rc < 0) goto fail;
        } else if (PyErr_Occurred()) {
            goto fail;
        }
        if (buf_put_operands(&b, ops, hashes) < 0 || hash_into(hashes, name, &b, 12) < 0) goto fail;
    }
    buf_free(&b);
    Py_RETURN_NONE;
fail:
    buf_free(&b);
    return NULL;
}

PyObject *py_blake2b_hex(PyObject *self, PyObject *args) {
    const char *data;
    Py_ssize_t len;
    int size;
    if (!PyArg_ParseTuple(args, "y#i", &data, &len, &size)) return NULL;
    if (size < 1 || size > 64) {
        PyErr_SetString(PyExc_ValueError, "digest size must be 1..64");
        return NULL;
    }
    char hex[128];
    blake2b_hex((const uint8_t *)data, (size_t)len, size, hex);
    return ascii_str(hex, 2 * size);
}

/* "(" + ",".join(texts[j] for j in the node's operand positions) + ")" when it has operands. */
static int put_operand_texts(Buf *b, PyObject **texts, const int32_t *op_idx, int32_t from, int32_t to) {
    if (from == to) return 0;
    if (buf_put(b, "(", 1) < 0) return -1;
    for (int32_t e = from; e < to; e++)
        if ((e > from && buf_put(b, ",", 1) < 0) || buf_put_str(b, texts[op_idx[e]]) < 0) return -1;
    return buf_put(b, ")", 1);
}


/* Whether the keys of dict are the names list, in its order (by identity). */
static int keys_are(PyObject *dict, PyObject *names, Py_ssize_t n) {
    if (PyDict_GET_SIZE(dict) != n) return 0;
    Py_ssize_t pos = 0, i = 0;
    PyObject *key, *value;
    while (PyDict_Next(dict, &pos, &key, &value))
        if (i >= n || PyList_GET_ITEM(names, i++) != key) return 0;
    return i == n;
}

/* An empty per-node map about to get an entry for each of names, in that order: made a copy of template (whose
   keys are those names in that order, checked) so that each entry replaces a value in place. The same map in the
   end, without growing a table of 200K entries by rehashing it again and again nor probing for a free slot per
   node (each a cache miss). Every value of template is replaced by the caller's loop (one per name, each name
   once); until then the map holds template's. 1 copied, 0 left as it is, -1 error. */
static int presized_like(PyObject *map, PyObject *template, PyObject *names, Py_ssize_t n) {
    if (PyDict_GET_SIZE(map) != 0 || n < 1024 || !keys_are(template, names, n)) return 0;
    return PyDict_Update(map, template) < 0 ? -1 : 1;
}

/* anon_hashes over a graph index whose order is operand-first (index_ordered): the same labels and hashes, in
   the same order, with each operand's hash read from an array by position instead of the anon dict. */
PyObject *anon_hashes_ix(PyObject *self, PyObject *args) {
    PyObject *capsule, *insts, *label_fn, *shape_text, *shape_texts, *labels, *anon, *call_keys, *names;
    PyObject *comp_hashes = NULL;
    int plain, ordered;
    if (!PyArg_ParseTuple(args, "OO!pOOO!O!O!O!|O!", &capsule, &PyDict_Type, &insts, &plain, &label_fn,
                          &shape_text, &PyDict_Type, &shape_texts, &PyDict_Type, &labels, &PyDict_Type, &anon,
                          &PyFrozenSet_Type, &call_keys, &PyDict_Type, &comp_hashes))
        return NULL;
    Py_ssize_t n;
    int32_t *op_start, *op_idx;
    if (gx_view(capsule, &n, &names, &op_start, &op_idx, &ordered) < 0) return NULL;
    if (!ordered) {
        PyErr_SetString(PyExc_ValueError, "the index is not in operand-first order");
        return NULL;
    }
    PyObject **texts = PyMem_Malloc((n ? n : 1) * sizeof(PyObject *));
    if (texts == NULL) return PyErr_NoMemory();
    Buf b;
    buf_init(&b);
    int presized = 0; /* labels and anon made copies of insts (its values replaced below, each) */
    if (PyDict_GET_SIZE(labels) == 0 && PyDict_GET_SIZE(anon) == 0) {
        if ((presized = presized_like(labels, insts, names, n)) < 0 ||
            (presized && PyDict_Update(anon, insts) < 0))
            goto fail;
    }
    shape_cache_reset();
    Cursor at_inst = {insts, 0};
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *name = PyList_GET_ITEM(names, i);
        PyObject *inst = cursor_get(&at_inst, name);
        if (inst == NULL) goto fail;
        PyObject *label = node_label(inst, plain, label_fn, shape_text, shape_texts, call_keys, comp_hashes);
        if (label == NULL) goto fail;
        int rc = PyDict_SetItem(labels, name, label);
        b.len = 0;
        if (rc == 0) rc = buf_put_str(&b, label);
        Py_DECREF(label);
        if (rc < 0 || put_operand_texts(&b, texts, op_idx, op_start[i], op_start[i + 1]) < 0 ||
            hash_into_slot(anon, name, &b, 8, &texts[i]) < 0)
            goto fail;
    }
    buf_free(&b);
    PyMem_Free(texts);
    Py_RETURN_NONE;
fail:
    if (presized) { /* no instruction is left in a map of labels or hashes */
        PyDict_Clear(labels);
        PyDict_Clear(anon);
    }
    buf_free(&b);
    PyMem_Free(texts);
    return NULL;
}

/* exact_hashes over an operand-first graph index: the canonical parameter numbers looked up once each, the
   operands' hashes read by position from one array of hex digits (no string per node). Only the root's hash and
   those of the nodes the root does not reach go into hashes: nothing reads the others (the root's hash holds
   them), and at 300K instructions a string and a map entry per node cost 25 MB a graph (issue 34). */
#define EXACT_HEX 24 /* 12-byte digests */
PyObject *exact_hashes_ix(PyObject *self, PyObject *args) {
    PyObject *capsule, *labels, *param_ids, *hashes, *root, *names;
    if (!PyArg_ParseTuple(args, "OO!O!O!O!", &capsule, &PyDict_Type, &labels, &PyDict_Type, &param_ids, &PyDict_Type,
                          &hashes, &PyUnicode_Type, &root))
        return NULL;
    Py_ssize_t n;
    int32_t *op_start, *op_idx;
    int ordered;
    if (gx_view(capsule, &n, &names, &op_start, &op_idx, &ordered) < 0) return NULL;
    if (!ordered) {
        PyErr_SetString(PyExc_ValueError, "the index is not in operand-first order");
        return NULL;
    }
    Py_ssize_t root_at = gx_position(capsule, root);
    if (root_at == -2) return NULL;
    if (root_at < 0) {
        PyErr_SetObject(PyExc_KeyError, root);
        return NULL;
    }
    char *hex = PyMem_Malloc((n ? n : 1) * EXACT_HEX);
    char *reached = PyMem_Calloc(n ? n : 1, 1);
    PyObject **pids = PyMem_Calloc(n ? n : 1, sizeof(PyObject *)); /* borrowed from param_ids */
    if (hex == NULL || reached == NULL || pids == NULL) {
        PyMem_Free(hex);
        PyMem_Free(reached);
        PyMem_Free(pids);
        return PyErr_NoMemory();
    }
    Buf b;
    buf_init(&b);
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(param_ids, &pos, &key, &value)) {
        Py_ssize_t at = gx_position(capsule, key);
        if (at == -2) goto fail;
        if (at >= 0) pids[at] = value;
    }
    Cursor at_label = {labels, 0}; /* labels were filled in this order */
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *name = PyList_GET_ITEM(names, i);
        PyObject *label = cursor_get(&at_label, name);
        if (label == NULL) goto fail;
        b.len = 0;
        if (buf_put_str(&b, label) < 0) goto fail;
        if (pids[i] != NULL) {
            PyObject *text = PyObject_Str(pids[i]);
            int rc = text ? buf_put(&b, "|#", 2) : -1;
            if (rc == 0) rc = buf_put_str(&b, text);
            Py_XDECREF(text);
            if (rc < 0) goto fail;
        }
        int32_t from = op_start[i], to = op_start[i + 1];
        if (from < to) { /* "(" + ",".join(operands' hashes) + ")" */
            if (buf_put(&b, "(", 1) < 0) goto fail;
            for (int32_t e = from; e < to; e++)
                if ((e > from && buf_put(&b, ",", 1) < 0) || buf_put(&b, hex + (size_t)op_idx[e] * EXACT_HEX,
                                                                        EXACT_HEX) < 0)
                    goto fail;
            if (buf_put(&b, ")", 1) < 0) goto fail;
        }
        char digest[128];
        blake2b_hex((const uint8_t *)b.data, b.len, EXACT_HEX / 2, digest);
        memcpy(hex + (size_t)i * EXACT_HEX, digest, EXACT_HEX);
    }
    reached[root_at] = 1; /* operands come before their users: one pass from the root down */
    for (Py_ssize_t i = root_at; i >= 0; i--)
        if (reached[i])
            for (int32_t e = op_start[i]; e < op_start[i + 1]; e++) reached[op_idx[e]] = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (reached[i] && i != root_at) continue;
        PyObject *h = ascii_str(hex + (size_t)i * EXACT_HEX, EXACT_HEX);
        int rc = h ? PyDict_SetItem(hashes, PyList_GET_ITEM(names, i), h) : -1;
        Py_XDECREF(h);
        if (rc < 0) goto fail;
    }
    buf_free(&b);
    PyMem_Free(hex);
    PyMem_Free(reached);
    PyMem_Free(pids);
    Py_RETURN_NONE;
fail:
    PyDict_Clear(hashes);
    buf_free(&b);
    PyMem_Free(hex);
    PyMem_Free(reached);
    PyMem_Free(pids);
    return NULL;
}
