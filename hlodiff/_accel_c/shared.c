/* One object for a value the modules of a comparison hold equal: line numbers, and attributes written alike.
 *
 * Why (issue 34, memory): two graphs compared are mostly the same program, so the right module's 258K line numbers
 * (at 300K instructions, 8 MB of ints) equal the left's, and the instructions whose attributes are written alike,
 * on either side (`dimensions={0}` on 40,800 broadcasts a side), can share one read-only attrs
 * (hlodiff.hlo.model.SharedAttributes, 180 bytes an instruction). While sharing is on
 * (hlodiff.hlo.sharing.shared_values, around the two parses), lines.c gives each new instruction the object an
 * earlier line made for an equal value; when it goes off, the tables go and the modules keep only their objects.
 * Equal values, so every result is the same, and a shared attrs is read once, not parsed again for each line.
 * Names and operand tuples are not shared: a probe of a 258K-entry table for each of them cost more CPU than the
 * parse saved (0.15-0.2 s for the 300K pair, for 28 MB).
 */
#include "accel.h"

static int depth;                 /* share_values(True) calls not yet closed */
static PyObject *attrs_by_text;   /* the text after an instruction's operands -> its shared attrs */
static PyObject *attrs_type;      /* hlodiff.hlo.model.SharedAttributes, once registered */
static PyObject **lines;          /* line number -> its int (owned), NULL when not made yet */
static Py_ssize_t lines_cap;

static void clear(void) {
    Py_CLEAR(attrs_by_text);
    for (Py_ssize_t i = 0; i < lines_cap; i++) Py_XDECREF(lines[i]);
    PyMem_Free(lines);
    lines = NULL;
    lines_cap = 0;
}

/* share_values(on) -> None: nested calls count; the tables are dropped when the outermost closes. */
PyObject *share_values(PyObject *self, PyObject *arg) {
    int on = PyObject_IsTrue(arg);
    if (on < 0) return NULL;
    if (on) {
        if (depth++ == 0 && (attrs_by_text = PyDict_New()) == NULL) {
            depth = 0;
            return NULL;
        }
    } else if (depth > 0 && --depth == 0) {
        clear();
    }
    Py_RETURN_NONE;
}

/* The int for a line number: the shared one while sharing is on, else a new one. New reference. */
PyObject *shared_line(long n) {
    if (attrs_by_text == NULL || n < 0 || n > (1L << 28)) return PyLong_FromLong(n);
    if (n >= lines_cap) {
        Py_ssize_t cap = lines_cap ? lines_cap : 4096;
        while (cap <= n) cap *= 2;
        PyObject **grown = PyMem_Realloc(lines, cap * sizeof(PyObject *));
        if (grown == NULL) return PyErr_NoMemory();
        memset(grown + lines_cap, 0, (cap - lines_cap) * sizeof(PyObject *));
        lines = grown;
        lines_cap = cap;
    }
    if (lines[n] == NULL && (lines[n] = PyLong_FromLong(n)) == NULL) return NULL;
    Py_INCREF(lines[n]);
    return lines[n];
}

/* share_line(n) -> shared_line(n): for the lines the Python parser reads (hlodiff.hlo.sharing.share_line), so that
   both parsers fill one table. */
PyObject *share_line(PyObject *self, PyObject *arg) {
    long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred()) return NULL;
    return shared_line(n);
}

/* register_shared_attributes(type) -> None: the dict subclass the attrs shared while sharing is on are made of. */
PyObject *register_shared_attributes(PyObject *self, PyObject *type) {
    if (!PyType_Check(type) || !PyType_IsSubtype((PyTypeObject *)type, &PyDict_Type)) {
        PyErr_SetString(PyExc_TypeError, "register_shared_attributes needs a dict subclass");
        return NULL;
    }
    Py_INCREF(type);
    Py_XSETREF(attrs_type, type);
    Py_RETURN_NONE;
}

/* The attrs of an instruction whose attributes are p[pos:n] (attributes.c's read_attributes), one dict for equal
   texts while sharing is on: NULL when that text is left to the parser (read_attributes' NULL, error or not). */
PyObject *shared_attributes(const char *p, Py_ssize_t pos, Py_ssize_t n) {
    if (attrs_by_text == NULL || attrs_type == NULL) return read_attributes(p, pos, n);
    PyObject *text = ascii_str(p + pos, n - pos);
    if (text == NULL) return NULL;
    PyObject *kept = PyDict_GetItemWithError(attrs_by_text, text); /* borrowed */
    if (kept != NULL || PyErr_Occurred()) {
        Py_DECREF(text);
        Py_XINCREF(kept);
        return kept;
    }
    PyObject *read = read_attributes(p, pos, n), *shared = NULL;
    if (read != NULL && PyDict_GET_SIZE(read) == 0) { /* blanks: the one empty attrs */
        Py_DECREF(text);
        return read;
    }
    if (read != NULL) shared = PyObject_CallOneArg(attrs_type, read);
    Py_XDECREF(read);
    if (shared != NULL && PyDict_SetItem(attrs_by_text, text, shared) < 0) Py_CLEAR(shared);
    Py_DECREF(text);
    return shared;
}

/* share_attributes(text, attrs) -> the attrs shared by the instructions whose text after the operands is text (attrs,
   made a SharedAttributes, for the first of them); attrs when sharing is off: hlodiff.hlo.sharing.share_attributes
   for the lines the Python parser reads, in the table lines.c fills. */
PyObject *share_attributes(PyObject *self, PyObject *args) {
    PyObject *text, *attrs;
    if (!PyArg_ParseTuple(args, "UO!", &text, &PyDict_Type, &attrs)) return NULL;
    if (attrs_by_text == NULL || attrs_type == NULL) return Py_NewRef(attrs);
    PyObject *kept = PyDict_GetItemWithError(attrs_by_text, text); /* borrowed */
    if (kept != NULL || PyErr_Occurred()) return Py_XNewRef(kept);
    PyObject *shared = PyObject_CallOneArg(attrs_type, attrs);
    if (shared != NULL && PyDict_SetItem(attrs_by_text, text, shared) < 0) Py_CLEAR(shared);
    return shared;
}
