/* Strings found by their bytes (text.c's shared_str and operand_name).
 *
 * Looking a name of the text up in a dict needs a str object first: every operand, opcode and attribute key of
 * every line made a string, hashed it, found the shared one and freed the new one again. A table keyed by the
 * bytes finds the shared object without making one. Tables hold strong references; a miss takes the dict path
 * as before, so the result is the same object the dict would give.
 */
#include "accel.h"

typedef struct {
    uint64_t hash;
    PyObject *str;   /* strong reference, ASCII */
    PyObject *shape; /* strong reference or NULL: the names table's shape text of an array-shaped definition */
} Slot;

typedef struct {
    Slot *slots;
    size_t cap, used;
} Table;

static uint64_t bytes_hash(const char *s, Py_ssize_t n) {
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (Py_ssize_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 1099511628211ULL;
    return h ^ (h >> 29);
}

static Slot *table_slot(Table *t, const char *s, Py_ssize_t n) {
    if (t->cap == 0) return NULL;
    uint64_t h = bytes_hash(s, n);
    for (size_t i = h & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
        Slot *e = &t->slots[i];
        if (e->str == NULL) return NULL;
        if (e->hash == h && PyUnicode_GET_LENGTH(e->str) == n && memcmp(PyUnicode_DATA(e->str), s, (size_t)n) == 0)
            return e;
    }
}

static PyObject *table_find(Table *t, const char *s, Py_ssize_t n) {
    Slot *e = table_slot(t, s, n);
    return e ? e->str : NULL;
}

static void table_clear(Table *t) {
    for (size_t i = 0; i < t->cap; i++) {
        Py_XDECREF(t->slots[i].str);
        Py_XDECREF(t->slots[i].shape);
    }
    PyMem_Free(t->slots);
    t->slots = NULL;
    t->cap = t->used = 0;
}

static int table_put(Table *t, uint64_t h, PyObject *str, PyObject *shape) {
    for (size_t i = h & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
        if (t->slots[i].str == NULL) {
            t->slots[i].hash = h;
            t->slots[i].str = str;
            t->slots[i].shape = shape;
            t->used++;
            return 0;
        }
    }
}

/* Add an ASCII str (not there yet); 0, or -1 with MemoryError. */
static int table_add(Table *t, PyObject *str) {
    if (!PyUnicode_IS_ASCII(str)) return 0; /* never looked up by bytes: the readers take ASCII lines only */
    if (2 * (t->used + 1) > t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        Slot *old = t->slots, *slots = PyMem_Calloc(cap, sizeof(Slot));
        if (slots == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        size_t old_cap = t->cap;
        t->slots = slots;
        t->cap = cap;
        t->used = 0;
        for (size_t i = 0; i < old_cap; i++)
            if (old[i].str != NULL) table_put(t, old[i].hash, old[i].str, old[i].shape);
        PyMem_Free(old);
    }
    Py_INCREF(str);
    return table_put(t, bytes_hash((const char *)PyUnicode_DATA(str), PyUnicode_GET_LENGTH(str)), str, NULL);
}

/* name_cache's strings (opcodes, attribute keys): for the life of the process, as name_cache. */
static Table shared;

PyObject *shared_find(const char *s, Py_ssize_t n) { return table_find(&shared, s, n); }
int shared_add(PyObject *str) { return table_add(&shared, str); }

/* The names the known_names dict holds, while owner is that dict (held, so its address is not reused). */
static Table names;
static PyObject *owner;

void names_bind(PyObject *dict) {
    if (dict == owner) return;
    table_clear(&names);
    Py_XINCREF(dict);
    Py_XSETREF(owner, dict);
}

PyObject *names_find(PyObject *dict, const char *s, Py_ssize_t n) {
    return dict != NULL && dict == owner ? table_find(&names, s, n) : NULL;
}

int names_add(PyObject *dict, PyObject *str) { return dict != NULL && dict == owner ? table_add(&names, str) : 0; }

/* The shape text an array-shaped definition of str is written with as a typed operand ("f32[2]{0}" of
   "f32[2]{0} %a"), kept in str's slot (added when the name is not there yet): what the typed_refs dict held for
   each instruction a call reads, without a string and a dict insertion for each. The latest definition wins, as
   in the dict. 1 kept, 0 not (no table bound to dict, or a name that is not ASCII: the caller fills the dict),
   -1 error. */
int names_set_shape(PyObject *dict, PyObject *str, PyObject *shape) {
    if (dict == NULL || dict != owner || !PyUnicode_IS_ASCII(str)) return 0;
    Table *t = &names;
    if (2 * (t->used + 1) > t->cap) { /* room first (table_add's growth), then one probe finds or places it */
        if (table_add(t, str) < 0) return -1;
        Slot *e = table_slot(t, (const char *)PyUnicode_DATA(str), PyUnicode_GET_LENGTH(str));
        Py_INCREF(shape);
        Py_XSETREF(e->shape, shape);
        return 1;
    }
    const char *s = (const char *)PyUnicode_DATA(str);
    Py_ssize_t n = PyUnicode_GET_LENGTH(str);
    uint64_t h = bytes_hash(s, n);
    for (size_t i = h & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
        Slot *e = &t->slots[i];
        if (e->str == NULL) {
            Py_INCREF(str);
            table_put(t, h, str, NULL);
        } else if (!(e->hash == h && PyUnicode_GET_LENGTH(e->str) == n && memcmp(PyUnicode_DATA(e->str), s, (size_t)n) == 0)) {
            continue;
        }
        Py_INCREF(shape);
        Py_XSETREF(e->shape, shape);
        return 1;
    }
}

/* The kept shape text of the name s (borrowed), or NULL: not read by this call with an array shape. */
PyObject *names_shape(PyObject *dict, const char *s, Py_ssize_t n) {
    Slot *e = dict != NULL && dict == owner ? table_slot(&names, s, n) : NULL;
    return e ? e->shape : NULL;
}
