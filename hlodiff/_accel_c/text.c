/* Small readers of ASCII HLO text shared by the line, operand, attribute and shape readers.
 */
#include "accel.h"

Py_ssize_t skip_ws(const char *p, Py_ssize_t pos, Py_ssize_t n) {
    while (pos < n && is_ws(p[pos])) pos++;
    return pos;
}

PyObject *ascii_str(const char *s, Py_ssize_t n) {
    PyObject *o = PyUnicode_New(n, 127);
    if (o == NULL) return NULL;
    memcpy(PyUnicode_DATA(o), s, (size_t)n);
    return o;
}

#define MAX_SHARED_NAMES 4096 /* opcodes and attribute keys are a few hundred; hostile text must not grow this */

PyObject *shared_str(const char *s, Py_ssize_t n) {
    PyObject *found = shared_find(s, n); /* names.c: without making a string first */
    if (found != NULL) {
        Py_INCREF(found);
        return found;
    }
    PyObject *o = ascii_str(s, n);
    if (o == NULL) return NULL;
    if (PyDict_GET_SIZE(name_cache) >= MAX_SHARED_NAMES) {
        PyObject *known = PyDict_GetItemWithError(name_cache, o);
        if (known == NULL) return PyErr_Occurred() ? (Py_DECREF(o), NULL) : o;
        Py_INCREF(known);
        Py_DECREF(o);
        return known;
    }
    PyObject *known = PyDict_SetDefault(name_cache, o, o);
    Py_XINCREF(known);
    Py_DECREF(o);
    if (known != NULL && shared_add(known) < 0) Py_CLEAR(known);
    return known;
}

/* The instruction names parse_lines has read so far in its call (name -> the same object), or NULL outside it.
   An operand naming one of them gets that very object: equal either way, but every later dict lookup of the
   operand (hashes, walks, matching: on every node's operands) then finds its key by identity instead of reading
   and comparing another string, and the text of the name is held once. */
PyObject *known_names = NULL;

PyObject *operand_name(const char *s, Py_ssize_t n) {
    PyObject *found = names_find(known_names, s, n); /* names.c: the names this call's lines defined */
    if (found != NULL) {
        Py_INCREF(found);
        return found;
    }
    PyObject *o = ascii_str(s, n);
    if (o == NULL || known_names == NULL) return o;
    PyObject *known = PyDict_GetItemWithError(known_names, o);
    if (known == NULL) return PyErr_Occurred() ? (Py_DECREF(o), NULL) : o;
    Py_INCREF(known);
    Py_DECREF(o);
    return known;
}

/* shape + " %" + name for ASCII texts (how an instruction is written as a typed operand). */
PyObject *typed_ref(PyObject *shape, PyObject *name) {
    if (!PyUnicode_IS_ASCII(shape) || !PyUnicode_IS_ASCII(name)) return PyUnicode_FromFormat("%U %%%U", shape, name);
    Py_ssize_t a = PyUnicode_GET_LENGTH(shape), b = PyUnicode_GET_LENGTH(name);
    PyObject *o = PyUnicode_New(a + 2 + b, 127);
    if (o == NULL) return NULL;
    char *d = (char *)PyUnicode_DATA(o);
    memcpy(d, PyUnicode_DATA(shape), (size_t)a);
    d[a] = ' ';
    d[a + 1] = '%';
    memcpy(d + a + 2, PyUnicode_DATA(name), (size_t)b);
    return o;
}

/* An array shape "f32[2,3]{1,0}" at pos (the parser's _ARRAY): its end, or -1. */
Py_ssize_t array_end(const char *p, Py_ssize_t pos, Py_ssize_t n, int *has_pct) {
    if (pos >= n || !is_lower(p[pos])) return -1;
    pos++;
    while (pos < n && (is_lower(p[pos]) || is_digit(p[pos]))) pos++;
    if (pos >= n || p[pos] != '[') return -1;
    pos++;
    while (pos < n && p[pos] != ']') {
        if (p[pos] == '%') *has_pct = 1;
        pos++;
    }
    if (pos >= n) return -1;
    pos++;
    if (pos < n && p[pos] == '{') {
        Py_ssize_t q = pos + 1;
        while (q < n && p[q] != '{' && p[q] != '}') {
            if (p[q] == '%') *has_pct = 1;
            q++;
        }
        /* A layout counts only when white space follows it (the expression backtracks otherwise, and then the
           '{' where white space must be fails the line). */
        if (q < n && p[q] == '}') return q + 1;
    }
    return pos;
}

/* A tuple shape "(f32[2]{0}, u32[])" at pos (p[pos] == '('), nesting at most max_depth parentheses: its end, or
   -1. Quotes and comments never reach here (plain_line). */
Py_ssize_t paren_end(const char *p, Py_ssize_t pos, Py_ssize_t n, int max_depth) {
    int depth = 0;
    for (; pos < n; pos++) {
        if (p[pos] == '(') {
            if (++depth > max_depth) return -1;
        } else if (p[pos] == ')') {
            if (--depth == 0) return pos + 1;
        }
    }
    return -1;
}

/* A quoted string at pos (p[pos] == '"'): the offset after its closing quote, or -1. */
Py_ssize_t string_end(const char *p, Py_ssize_t pos, Py_ssize_t n) {
    pos++;
    while (pos < n) {
        char c = p[pos];
        if (c == '\\') {
            if (pos + 1 >= n) return -1;
            pos += 2;
            continue;
        }
        if (c == '"') return pos + 1;
        pos++;
    }
    return -1;
}

int append_text(PyObject *list, const char *s, Py_ssize_t n) {
    PyObject *o = s ? ascii_str(s, n) : Py_NewRef(Py_None);
    if (o == NULL) return -1;
    int rc = PyList_Append(list, o);
    Py_DECREF(o);
    return rc;
}

/* " ".join(body.split()) for a body of ASCII without control characters. */
PyObject *joined_words(const char *p, Py_ssize_t pos, Py_ssize_t end) {
    Buf b;
    buf_init(&b);
    while (1) {
        pos = skip_ws(p, pos, end);
        if (pos >= end) break;
        Py_ssize_t start = pos;
        while (pos < end && !is_ws(p[pos])) pos++;
        if ((b.len && buf_put(&b, " ", 1) < 0) || buf_put(&b, p + start, (size_t)(pos - start)) < 0) {
            buf_free(&b);
            return NULL;
        }
    }
    PyObject *s = ascii_str(b.data, (Py_ssize_t)b.len);
    buf_free(&b);
    return s;
}
