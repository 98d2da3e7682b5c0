/* Operand lists: untyped, typed as their definitions are written, or mixed (the parser's _fill_operands).
 */
#include "accel.h"

/* Untyped operands "%a, %b" (the parser's _UNTYPED_OPERANDS): a tuple of names; NULL with no error: not here. */
PyObject *untyped_operands(const char *p, Py_ssize_t pos, Py_ssize_t end) {
    PyObject *names = PyList_New(0);
    if (names == NULL) return NULL;
    while (1) {
        pos = skip_ws(p, pos, end);
        if (pos < end && p[pos] == '%') pos++;
        Py_ssize_t start = pos;
        while (pos < end && is_name(p[pos])) pos++;
        if (pos == start) goto defer;
        PyObject *name = operand_name(p + start, pos - start);
        if (name == NULL || PyList_Append(names, name) < 0) {
            Py_XDECREF(name);
            Py_DECREF(names);
            return NULL;
        }
        Py_DECREF(name);
        pos = skip_ws(p, pos, end);
        if (pos >= end) break;
        if (p[pos] != ',') goto defer;
        pos++;
    }
    PyObject *tuple = PyList_AsTuple(names);
    Py_DECREF(names);
    return tuple;
defer:
    Py_DECREF(names);
    return NULL;
}

/* How the definition of name is written as a typed operand ("f32[2]{0} %a"): its shape text (*shape, borrowed)
   when parse_lines read it in this call (names.c keeps it), else the typed_refs entry (*ref, borrowed). 1 found,
   0 not, -1 error. */
int typed_ref_of(PyObject *typed_refs, PyObject *name, PyObject **shape, PyObject **ref) {
    *shape = *ref = NULL;
    if (PyUnicode_Check(name) && PyUnicode_IS_ASCII(name)) {
        *shape = names_shape(known_names, (const char *)PyUnicode_DATA(name), PyUnicode_GET_LENGTH(name));
        if (*shape != NULL) return 1;
    }
    *ref = PyDict_GetItemWithError(typed_refs, name);
    if (*ref != NULL) return 1;
    return PyErr_Occurred() ? -1 : 0;
}

/* Typed operands "f32[2]{0} %a, f32[2]{0} %b" (the parser's _TYPED_OPERANDS): names and shape texts into the
   lists. 1: written exactly as their definitions would be (typed_refs), the way torch_xla writes every operand;
   2: read, but written otherwise (another spacing or shape, a forward reference): checked after the computation;
   0: not this grammar; -1: error. */
int typed_operands(const char *p, Py_ssize_t pos, Py_ssize_t end, PyObject *typed_refs, PyObject *names,
                          PyObject *shapes) {
    Py_ssize_t body = pos;
    Buf written;
    buf_init(&written);
    int exact = 1, rc = 1;
    while (1) {
        pos = skip_ws(p, pos, end);
        int has_pct = 0;
        Py_ssize_t shape_start = pos, shape_end = array_end(p, pos, end, &has_pct);
        if (shape_end < 0 || has_pct || shape_end >= end || !is_ws(p[shape_end])) goto mismatch;
        pos = skip_ws(p, shape_end, end);
        if (pos >= end || p[pos] != '%') goto mismatch;
        Py_ssize_t start = ++pos;
        while (pos < end && is_name(p[pos])) pos++;
        if (pos == start) goto mismatch;
        PyObject *name = operand_name(p + start, pos - start);
        if (name == NULL || PyList_Append(names, name) < 0 ||
            append_text(shapes, p + shape_start, shape_end - shape_start) < 0) {
            Py_XDECREF(name);
            goto fail;
        }
        if (exact) {
            PyObject *def_shape, *ref;
            int has = typed_ref_of(typed_refs, name, &def_shape, &ref);
            if (has < 0) {
                Py_DECREF(name);
                goto fail;
            }
            if (!has) exact = 0;
            else if ((PyList_GET_SIZE(names) > 1 && buf_put(&written, ", ", 2) < 0) ||
                     (def_shape ? buf_put_str(&written, def_shape) < 0 || buf_put(&written, " %", 2) < 0 ||
                                      buf_put_str(&written, name) < 0
                                : buf_put_str(&written, ref) < 0)) {
                Py_DECREF(name);
                goto fail;
            }
        }
        Py_DECREF(name);
        pos = skip_ws(p, pos, end);
        if (pos >= end) break;
        if (p[pos] != ',') goto mismatch;
        pos++;
    }
    if (!exact || (Py_ssize_t)written.len != end - body || memcmp(written.data, p + body, written.len) != 0) rc = 2;
    buf_free(&written);
    return rc;
mismatch:
    buf_free(&written);
    return PyList_SetSlice(names, 0, PyList_GET_SIZE(names), NULL) < 0 ||
           PyList_SetSlice(shapes, 0, PyList_GET_SIZE(shapes), NULL) < 0 ? -1 : 0;
fail:
    buf_free(&written);
    return -1;
}

/* Operands some typed and some not, or typed with a tuple shape ("(u64[2]{0}, u32[2]{0}) %rng.3"): the parser's
   _OPERAND_ITEM items, one after the other to the end. 1: read (names, and shape texts or None); 0: not this
   grammar; -1: error. */
int operand_items(const char *p, Py_ssize_t pos, Py_ssize_t end, PyObject *names, PyObject *shapes) {
    while (1) {
        pos = skip_ws(p, pos, end);
        Py_ssize_t shape_start = pos, shape_end = -1;
        int has_pct = 0;
        if (pos < end && p[pos] == '(')
            shape_end = paren_end(p, pos, end, 2);
        else
            shape_end = array_end(p, pos, end, &has_pct);
        if (shape_end >= 0) {
            if (has_pct || shape_end >= end || !is_ws(p[shape_end])) return 0;
            pos = skip_ws(p, shape_end, end);
        } else if (pos < end && p[pos] == '(') {
            return 0;
        }
        if (pos < end && p[pos] == '%') pos++;
        Py_ssize_t start = pos;
        while (pos < end && is_name(p[pos])) pos++;
        if (pos == start) return 0;
        PyObject *name = operand_name(p + start, pos - start);
        int rc = name ? PyList_Append(names, name) : -1;
        Py_XDECREF(name);
        if (rc < 0 ||
            append_text(shapes, shape_end >= 0 ? p + shape_start : NULL, shape_end - shape_start) < 0)
            return -1;
        pos = skip_ws(p, pos, end);
        if (pos >= end) return 1;
        if (p[pos] != ',') return 0;
        pos++;
        if (pos == end) return 1; /* a last ',' ends the list (the expression's '(?:,|$)') */
    }
}

/* Whether some typed item is written otherwise than its definition would be (typed_refs): then it is checked. */
int declared_otherwise(PyObject *names, PyObject *shapes, PyObject *typed_refs) {
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(names); k++) {
        PyObject *shape = PyList_GET_ITEM(shapes, k), *name = PyList_GET_ITEM(names, k);
        if (shape == Py_None) continue;
        PyObject *def_shape, *ref;
        int has = typed_ref_of(typed_refs, name, &def_shape, &ref);
        if (has <= 0) return has < 0 ? -1 : 1;
        int eq;
        if (def_shape != NULL) { /* "S %name" == "T %name" exactly when S == T */
            eq = PyObject_RichCompareBool(def_shape, shape, Py_EQ);
        } else {
            PyObject *want = typed_ref(shape, name);
            if (want == NULL) return -1;
            eq = PyObject_RichCompareBool(ref, want, Py_EQ);
            Py_DECREF(want);
        }
        if (eq <= 0) return eq < 0 ? -1 : 1;
    }
    return 0;
}
