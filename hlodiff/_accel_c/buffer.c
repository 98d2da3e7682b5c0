/* A growable byte buffer: the text a node hash is taken of, a line with its comments blanked.
 */
#include "accel.h"

void buf_init(Buf *b) {
    b->data = b->stack;
    b->len = 0;
    b->cap = sizeof b->stack;
}

void buf_free(Buf *b) {
    if (b->data != b->stack) PyMem_Free(b->data);
}

int buf_put(Buf *b, const char *s, size_t n) {
    if (b->len + n > b->cap) {
        size_t cap = b->cap * 2;
        while (cap < b->len + n) cap *= 2;
        char *data = PyMem_Malloc(cap);
        if (data == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        memcpy(data, b->data, b->len);
        buf_free(b);
        b->data = data;
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    return 0;
}

int buf_put_str(Buf *b, PyObject *s) {
    if (!PyUnicode_Check(s)) {
        PyErr_SetString(PyExc_TypeError, "expected str");
        return -1;
    }
    Py_ssize_t n;
    const char *u = PyUnicode_AsUTF8AndSize(s, &n);
    if (u == NULL) return -1;
    return buf_put(b, u, (size_t)n);
}

/* "(" + ",".join(table[op] for op in ops) + ")" when ops is not empty. */
int buf_put_operands(Buf *b, PyObject *ops, PyObject *table) {
    PyObject *seq = PySequence_Fast(ops, "operands must be a sequence");
    if (seq == NULL) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    int rc = 0;
    if (n > 0) {
        PyObject **items = PySequence_Fast_ITEMS(seq);
        rc = buf_put(b, "(", 1);
        for (Py_ssize_t i = 0; rc == 0 && i < n; i++) {
            PyObject *h = PyDict_GetItemWithError(table, items[i]);
            if (h == NULL) {
                if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, items[i]);
                rc = -1;
                break;
            }
            if (i && buf_put(b, ",", 1) < 0) rc = -1;
            if (rc == 0) rc = buf_put_str(b, h);
        }
        if (rc == 0) rc = buf_put(b, ")", 1);
    }
    Py_DECREF(seq);
    return rc;
}
