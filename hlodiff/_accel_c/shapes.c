/* Shapes and computation signatures (hlodiff.hlo.shapes.parse_shape_at, parser._signature).
 */
#include "accel.h"

/* White space and block comments from pos (shapes._skip_space_and_comments): the offset after them, or -1 for a
   comment that never closes. */
static Py_ssize_t skip_space_and_comments(const char *p, Py_ssize_t pos, Py_ssize_t n) {
    while (pos < n) {
        if (is_sp(p[pos])) {
            pos++;
        } else if (pos + 1 < n && p[pos] == '/' && p[pos + 1] == '*') {
            Py_ssize_t close = pos + 2;
            while (close + 1 < n && !(p[close] == '*' && p[close + 1] == '/')) close++;
            if (close + 1 >= n) return -1;
            pos = close + 2;
        } else {
            break;
        }
    }
    return pos;
}

/* One shape at pos as shapes.parse_shape_at reads it (white space first; tuples with comments between
   elements; arrays found in the shape cache, or read once by parse_array(text, 0), which caches them); NULL with no
   error set for anything else (a buffer shape, a syntax error): the Python reader takes it and says what is wrong. */
PyObject *read_shape(const char *p, Py_ssize_t pos, Py_ssize_t n, PyObject *shapes, PyObject *parse_array,
                            PyObject *shape_type, Py_ssize_t *end, int depth) {
    while (pos < n && is_sp(p[pos])) pos++;
    if (pos >= n) return NULL;
    if (p[pos] == '(') {
        if (depth > 64) return NULL;
        PyObject *elements = PyList_New(0);
        if (elements == NULL) return NULL;
        pos++;
        while (1) {
            pos = skip_space_and_comments(p, pos, n);
            if (pos < 0) goto not_here;
            if (pos < n && p[pos] == ')') {
                pos++;
                break;
            }
            if (PyList_GET_SIZE(elements)) {
                if (pos >= n || p[pos] != ',') goto not_here;
                pos = skip_space_and_comments(p, pos + 1, n);
                if (pos < 0) goto not_here;
            }
            Py_ssize_t e;
            PyObject *element = read_shape(p, pos, n, shapes, parse_array, shape_type, &e, depth + 1);
            if (element == NULL) goto not_here;
            int rc = PyList_Append(elements, element);
            Py_DECREF(element);
            if (rc < 0) goto not_here;
            pos = e;
        }
        PyObject *items = PyList_AsTuple(elements);
        Py_DECREF(elements);
        if (items == NULL) return NULL;
        PyObject *kind = PyUnicode_FromString("tuple");
        PyObject *pargs = kind ? PyTuple_Pack(1, kind) : NULL;
        PyObject *kwargs = pargs ? PyDict_New() : NULL;
        PyObject *shape = NULL;
        if (kwargs != NULL && PyDict_SetItem(kwargs, s_tuple_shapes, items) == 0)
            shape = PyObject_Call(shape_type, pargs, kwargs);
        Py_XDECREF(kind);
        Py_XDECREF(pargs);
        Py_XDECREF(kwargs);
        Py_DECREF(items);
        *end = pos;
        return shape;
    not_here:
        Py_DECREF(elements);
        return NULL;
    }
    int has_pct = 0;
    Py_ssize_t e = array_end(p, pos, n, &has_pct);
    if (e < 0) return NULL;
    PyObject *key = ascii_str(p + pos, e - pos);
    if (key == NULL) return NULL;
    PyObject *shape = PyDict_GetItemWithError(shapes, key);
    Py_XINCREF(shape);
    if (shape == NULL && !PyErr_Occurred()) {
        PyObject *read = PyObject_CallFunction(parse_array, "On", key, (Py_ssize_t)0);
        if (read == NULL) { /* not an element type XLA knows, or another syntax error: the parser says so */
            PyErr_Clear();
        } else {
            if (PyTuple_Check(read) && PyTuple_GET_SIZE(read) == 2 &&
                PyLong_AsSsize_t(PyTuple_GET_ITEM(read, 1)) == e - pos) {
                shape = PyTuple_GET_ITEM(read, 0);
                Py_INCREF(shape);
            }
            if (PyErr_Occurred()) PyErr_Clear();
            Py_DECREF(read);
        }
    }
    Py_DECREF(key);
    *end = e;
    return shape;
}

/* parser._signature for "(x: f32[], y: f32[]) -> f32[]" at pos (p[pos] == '('), when every shape is an array
   shape already cached: ((params, result), end); None: the parser reads it (and says what is wrong). */
PyObject *signature(PyObject *self, PyObject *args) {
    PyObject *text, *shapes, *parse_array, *shape_type;
    Py_ssize_t pos;
    if (!PyArg_ParseTuple(args, "UnO!OO", &text, &pos, &PyDict_Type, &shapes, &parse_array, &shape_type)) return NULL;
    if (!PyUnicode_IS_ASCII(text)) Py_RETURN_NONE;
    const char *p = (const char *)PyUnicode_1BYTE_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    PyObject *params = PyList_New(0);
    if (params == NULL) return NULL;
    pos++;
    while (1) {
        while (pos < n && is_sp(p[pos])) pos++;
        if (pos < n && p[pos] == ')') {
            pos++;
            break;
        }
        if (PyList_GET_SIZE(params)) {
            if (pos >= n || p[pos] != ',') goto defer;
            pos++;
            while (pos < n && is_sp(p[pos])) pos++;
        }
        if (pos < n && p[pos] == '%') pos++;
        Py_ssize_t start = pos;
        while (pos < n && is_name(p[pos])) pos++;
        if (pos == start) goto defer;
        Py_ssize_t name_end = pos;
        while (pos < n && is_re_space(p[pos])) pos++;
        if (pos >= n || p[pos] != ':') goto defer;
        pos++;
        while (pos < n && is_re_space(p[pos])) pos++;
        Py_ssize_t end;
        PyObject *shape = read_shape(p, pos, n, shapes, parse_array, shape_type, &end, 0);
        if (shape == NULL) {
            if (PyErr_Occurred()) goto fail;
            goto defer;
        }
        PyObject *name = ascii_str(p + start, name_end - start);
        PyObject *item = name ? PyTuple_Pack(2, name, shape) : NULL;
        Py_XDECREF(name);
        Py_DECREF(shape);
        if (item == NULL || PyList_Append(params, item) < 0) {
            Py_XDECREF(item);
            goto fail;
        }
        Py_DECREF(item);
        pos = end;
    }
    while (pos < n && is_sp(p[pos])) pos++;
    if (pos + 1 >= n || p[pos] != '-' || p[pos + 1] != '>') goto defer;
    pos += 2;
    Py_ssize_t end;
    PyObject *result = read_shape(p, pos, n, shapes, parse_array, shape_type, &end, 0);
    if (result == NULL) {
        if (PyErr_Occurred()) goto fail;
        goto defer;
    }
    PyObject *tuple = PyList_AsTuple(params);
    Py_DECREF(params);
    if (tuple == NULL) {
        Py_DECREF(result);
        return NULL;
    }
    return Py_BuildValue("((NN)n)", tuple, result, end);
defer:
    Py_DECREF(params);
    Py_RETURN_NONE;
fail:
    Py_DECREF(params);
    return NULL;
}
