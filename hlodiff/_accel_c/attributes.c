/* Attribute lists and values (the parser's _ATTR expression, and scan.value_end).
 */
#include "accel.h"

/* One attribute value (the parser's _VALUE: a string, braces nested up to four deep, an iota list, a bare word
   with an optional parenthesized tail): its end, or -1. */
Py_ssize_t value_end(const char *p, Py_ssize_t pos, Py_ssize_t n) {
    if (pos >= n) return -1;
    char c = p[pos];
    if (c == '"') return string_end(p, pos, n);
    if (c == '{') {
        int depth = 0;
        while (pos < n) {
            c = p[pos];
            if (c == '{') {
                if (++depth > 4) return -1;
            } else if (c == '}') {
                if (--depth == 0) return pos + 1;
            } else if (c == '"') {
                pos = string_end(p, pos, n);
                if (pos < 0) return -1;
                continue;
            }
            pos++;
        }
        return -1;
    }
    if (c == '[') { /* iota replica groups: [4,2]<=[8] or [2,4]<=[4,2]T(1,0) */
        Py_ssize_t q = pos + 1;
        while (q < n && p[q] != ']') q++;
        if (q + 3 < n && p[q + 1] == '<' && p[q + 2] == '=' && p[q + 3] == '[') {
            q += 4;
            while (q < n && p[q] != ']') q++;
            if (q < n) {
                q++;
                if (q + 1 < n && p[q] == 'T' && p[q + 1] == '(') {
                    Py_ssize_t r = q + 2;
                    while (r < n && p[r] != '(' && p[r] != ')') r++;
                    if (r < n && p[r] == ')') q = r + 1;
                }
                return q;
            }
        }
    }
    Py_ssize_t start = pos;
    while (pos < n) {
        c = p[pos];
        if (c == ',' || is_ws(c) || c == '{' || c == '}' || c == '"' || c == '(' || c == ')') break;
        pos++;
    }
    if (pos == start) return -1;
    if (pos < n && p[pos] == '(') {
        Py_ssize_t r = pos + 1;
        while (r < n && p[r] != '(' && p[r] != ')') r++;
        if (r < n && p[r] == ')') pos = r + 1;
    }
    return pos;
}

/* ", key=value" pairs from pos to the end of the line into a new dict; NULL with no error set: not for here. */
PyObject *read_attributes(const char *p, Py_ssize_t pos, Py_ssize_t n) {
    PyObject *attrs = PyDict_New();
    if (attrs == NULL) return NULL;
    while (1) {
        pos = skip_ws(p, pos, n);
        if (pos >= n && PyDict_GET_SIZE(attrs) == 0) { /* blanks after the operands: no attribute */
            Py_DECREF(attrs);
            return empty_attributes();
        }
        if (pos >= n) return attrs;
        if (p[pos] != ',') goto defer;
        pos = skip_ws(p, pos + 1, n);
        Py_ssize_t key_start = pos;
        while (pos < n && is_name(p[pos])) pos++;
        if (pos == key_start) goto defer;
        Py_ssize_t key_end = pos;
        pos = skip_ws(p, pos, n);
        if (pos >= n || p[pos] != '=') goto defer;
        pos = skip_ws(p, pos + 1, n);
        Py_ssize_t end = value_end(p, pos, n);
        if (end < 0) goto defer;
        PyObject *key = shared_str(p + key_start, key_end - key_start);
        if (key == NULL) goto fail;
        int dup = PyDict_Contains(attrs, key);
        PyObject *value = dup == 0 ? ascii_str(p + pos, end - pos) : NULL;
        int rc = value ? PyDict_SetItem(attrs, key, value) : -1;
        Py_DECREF(key);
        Py_XDECREF(value);
        if (dup == 1) goto defer; /* the general path reports it with a position */
        if (rc < 0) goto fail;
        pos = end;
    }
defer:
    Py_DECREF(attrs);
    return NULL;
fail:
    Py_DECREF(attrs);
    return NULL;
}

/* scan.value_end for ASCII text: the next comma outside brackets and strings from pos, or the end; -1 when
   unbalanced; None for other text (the Python scanner reads it). */
PyObject *value_end_of(PyObject *self, PyObject *args) {
    PyObject *text;
    Py_ssize_t pos;
    if (!PyArg_ParseTuple(args, "Un", &text, &pos)) return NULL;
    if (!PyUnicode_IS_ASCII(text)) Py_RETURN_NONE;
    const char *p = (const char *)PyUnicode_1BYTE_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    long depth = 0;
    for (; pos < n; pos++) {
        char c = p[pos];
        if (c == '"') {
            pos = string_end(p, pos, n);
            if (pos < 0) return PyLong_FromLong(-1);
            pos--; /* on the closing quote: the loop steps past it */
        } else if (c == '(' || c == '[' || c == '{') {
            depth++;
        } else if (c == ')' || c == ']' || c == '}') {
            if (--depth < 0) return PyLong_FromLong(-1);
        } else if (c == ',' && depth == 0) {
            return PyLong_FromSsize_t(pos);
        }
    }
    return PyLong_FromSsize_t(depth == 0 ? n : -1);
}
