/* Walks over a computation's operand lists (hlodiff.graph.canonical, fingerprint, passes.parameter_order):
 * operands maps each instruction name to the list of its operands' names.
 */
#include "accel.h"

PyObject *operands_of(PyObject *operands, PyObject *name) {
    PyObject *ops = PyDict_GetItemWithError(operands, name);
    if (ops == NULL && !PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, name);
    if (ops != NULL && !PyList_Check(ops) && !PyTuple_Check(ops)) {
        PyErr_SetString(PyExc_TypeError, "operand lists must be lists or tuples");
        return NULL;
    }
    return ops; /* borrowed */
}

/* The last item of a list used as a stack, removed from it (a new reference), or NULL with an error set. */
PyObject *pop_last(PyObject *stack) {
    Py_ssize_t top = PyList_GET_SIZE(stack) - 1;
    PyObject *item = PyList_GET_ITEM(stack, top);
    Py_INCREF(item);
    if (PyList_SetSlice(stack, top, top + 1, NULL) < 0) {
        Py_DECREF(item);
        return NULL;
    }
    return item;
}

/* live_nodes: the roots and everything they depend on, as a set. */
PyObject *live(PyObject *self, PyObject *args) {
    PyObject *roots, *operands;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &roots, &PyDict_Type, &operands)) return NULL;
    PyObject *seen = PySet_New(roots);
    PyObject *stack = seen ? PyList_GetSlice(roots, 0, PyList_GET_SIZE(roots)) : NULL;
    if (stack == NULL) goto fail;
    while (PyList_GET_SIZE(stack)) {
        PyObject *name = pop_last(stack);
        if (name == NULL) goto fail;
        PyObject *ops = operands_of(operands, name);
        Py_DECREF(name); /* still held by the operands dict's keys */
        if (ops == NULL) goto fail;
        for (Py_ssize_t k = 0; k < OPS_SIZE(ops); k++) {
            PyObject *op = OPS_ITEM(ops, k);
            int has = PySet_Contains(seen, op);
            if (has < 0) goto fail;
            if (!has && (PySet_Add(seen, op) < 0 || PyList_Append(stack, op) < 0)) goto fail;
        }
    }
    Py_DECREF(stack);
    return seen;
fail:
    Py_XDECREF(stack);
    Py_XDECREF(seen);
    return NULL;
}

/* _walk_postorder's walk: the post-order from root (operands in order) and the set of nodes reached. */
PyObject *postorder(PyObject *self, PyObject *args) {
    PyObject *root, *operands;
    if (!PyArg_ParseTuple(args, "OO!", &root, &PyDict_Type, &operands)) return NULL;
    Py_ssize_t cap = 64, depth = 0;
    PyObject **names = PyMem_Malloc(cap * sizeof(PyObject *));
    Py_ssize_t *next = PyMem_Malloc(cap * sizeof(Py_ssize_t));
    PyObject *order = PyList_New(0), *seen = PySet_New(NULL);
    if (!names || !next || !order || !seen || PySet_Add(seen, root) < 0) goto fail;
    names[0] = root; /* borrowed: every name is a key of operands, which outlives the walk */
    next[0] = 0;
    depth = 1;
    while (depth) {
        PyObject *name = names[depth - 1];
        PyObject *ops = operands_of(operands, name);
        if (ops == NULL) goto fail;
        int pushed = 0;
        while (next[depth - 1] < OPS_SIZE(ops)) {
            PyObject *op = OPS_ITEM(ops, next[depth - 1]++);
            int has = PySet_Contains(seen, op);
            if (has < 0) goto fail;
            if (!has) {
                if (PySet_Add(seen, op) < 0) goto fail;
                if (depth == cap) {
                    cap *= 2;
                    PyObject **n2 = PyMem_Realloc(names, cap * sizeof(PyObject *));
                    if (n2 == NULL) goto fail;
                    names = n2;
                    Py_ssize_t *x2 = PyMem_Realloc(next, cap * sizeof(Py_ssize_t));
                    if (x2 == NULL) goto fail;
                    next = x2;
                }
                names[depth] = op;
                next[depth] = 0;
                depth++;
                pushed = 1;
                break;
            }
        }
        if (!pushed) {
            if (PyList_Append(order, name) < 0) goto fail;
            depth--;
        }
    }
    PyMem_Free(names);
    PyMem_Free(next);
    return Py_BuildValue("(NN)", order, seen);
fail:
    if (!PyErr_Occurred()) PyErr_NoMemory();
    PyMem_Free(names);
    PyMem_Free(next);
    Py_XDECREF(order);
    Py_XDECREF(seen);
    return NULL;
}

/* canonical_ids' walk: pop names from stack; the first time a name is reached, number it when it is a
   parameter, then push its operands not reached yet (last first). Fills ids; seen is updated. */
PyObject *number_params(PyObject *self, PyObject *args) {
    PyObject *stack, *seen, *params, *operands, *ids;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!", &PyList_Type, &stack, &PySet_Type, &seen, &PySet_Type, &params,
                          &PyDict_Type, &operands, &PyDict_Type, &ids))
        return NULL;
    while (PyList_GET_SIZE(stack)) {
        PyObject *name = pop_last(stack);
        if (name == NULL) return NULL;
        int has = PySet_Contains(seen, name);
        if (has < 0) goto fail;
        if (has) {
            Py_DECREF(name);
            continue;
        }
        if (PySet_Add(seen, name) < 0) goto fail;
        int is_param = PySet_Contains(params, name);
        if (is_param < 0) goto fail;
        if (is_param) {
            PyObject *number = PyLong_FromSsize_t(PyDict_GET_SIZE(ids));
            int rc = number ? PyDict_SetItem(ids, name, number) : -1;
            Py_XDECREF(number);
            if (rc < 0) goto fail;
        }
        PyObject *ops = operands_of(operands, name);
        if (ops == NULL) goto fail;
        for (Py_ssize_t k = OPS_SIZE(ops) - 1; k >= 0; k--) {
            PyObject *op = OPS_ITEM(ops, k);
            int reached = PySet_Contains(seen, op);
            if (reached < 0) goto fail;
            if (!reached && PyList_Append(stack, op) < 0) goto fail;
        }
        Py_DECREF(name);
        continue;
    fail:
        Py_DECREF(name);
        return NULL;
    }
    Py_RETURN_NONE;
}

/* Whether every operand list names only instructions defined before it (the order XLA and the tracers print). */
PyObject *defined_before_use(PyObject *self, PyObject *args) {
    PyObject *operands;
    if (!PyArg_ParseTuple(args, "O!", &PyDict_Type, &operands)) return NULL;
    PyObject *placed = PySet_New(NULL);
    if (placed == NULL) return NULL;
    Py_ssize_t pos = 0;
    PyObject *name, *ops;
    int result = 1;
    while (result == 1 && PyDict_Next(operands, &pos, &name, &ops)) {
        if (!PyList_Check(ops) && !PyTuple_Check(ops)) {
            PyErr_SetString(PyExc_TypeError, "operand lists must be lists or tuples");
            result = -1;
            break;
        }
        for (Py_ssize_t k = 0; k < OPS_SIZE(ops); k++) {
            int has = PySet_Contains(placed, OPS_ITEM(ops, k));
            if (has <= 0) {
                result = has;
                break;
            }
        }
        if (result == 1 && PySet_Add(placed, name) < 0) result = -1;
    }
    Py_DECREF(placed);
    if (result < 0) return NULL;
    return PyBool_FromLong(result);
}
