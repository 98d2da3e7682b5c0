/* The normalization passes' walks over every instruction (dead_code, metadata, tuple_plumbing).
 */
#include "accel.h"

/* dead_code.run's candidates: the names (in order) neither in live nor parameters. */
PyObject *dead_names(PyObject *self, PyObject *args) {
    PyObject *insts, *live;
    if (!PyArg_ParseTuple(args, "O!O!", &PyDict_Type, &insts, &PySet_Type, &live)) return NULL;
    PyObject *out = PyList_New(0);
    if (out == NULL) return NULL;
    Py_ssize_t pos = 0;
    PyObject *name, *inst;
    while (PyDict_Next(insts, &pos, &name, &inst)) {
        int alive = PySet_Contains(live, name);
        if (alive < 0) goto fail;
        if (alive) continue;
        PyObject *opcode = inst_attr(inst, s_opcode);
        if (opcode == NULL) goto fail;
        int param = PyUnicode_Check(opcode) && PyUnicode_Compare(opcode, s_parameter) == 0;
        Py_DECREF(opcode);
        if (!param && PyList_Append(out, name) < 0) goto fail;
    }
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

/* How many of the instructions (any iterable) carry the attribute key. */
PyObject *count_attribute(PyObject *self, PyObject *args) {
    PyObject *instructions, *key;
    if (!PyArg_ParseTuple(args, "OU", &instructions, &key)) return NULL;
    PyObject *it = PyObject_GetIter(instructions);
    if (it == NULL) return NULL;
    Py_ssize_t count = 0;
    PyObject *inst;
    while ((inst = PyIter_Next(it)) != NULL) {
        PyObject *attrs = inst_attr(inst, s_attrs);
        Py_DECREF(inst);
        if (attrs == NULL) break;
        int has = PyDict_Check(attrs) ? PyDict_Contains(attrs, key) : PySequence_Contains(attrs, key);
        Py_DECREF(attrs);
        if (has < 0) break;
        count += has;
    }
    Py_DECREF(it);
    if (PyErr_Occurred()) return NULL;
    return PyLong_FromSsize_t(count);
}

/* tuple_plumbing's question: does some get-tuple-element read a tuple instruction directly? */
PyObject *reads_tuple(PyObject *self, PyObject *args) {
    PyObject *insts, *operands;
    if (!PyArg_ParseTuple(args, "O!O!", &PyDict_Type, &insts, &PyDict_Type, &operands)) return NULL;
    Py_ssize_t pos = 0;
    PyObject *name, *inst;
    while (PyDict_Next(insts, &pos, &name, &inst)) {
        PyObject *opcode = inst_attr(inst, s_opcode);
        if (opcode == NULL) return NULL;
        int gte = PyUnicode_Check(opcode) && PyUnicode_Compare(opcode, s_gte) == 0;
        Py_DECREF(opcode);
        if (!gte) continue;
        PyObject *ops = operands_of(operands, name);
        if (ops == NULL) return NULL;
        if (OPS_SIZE(ops) != 1) continue;
        PyObject *source = PyDict_GetItemWithError(insts, OPS_ITEM(ops, 0));
        if (source == NULL) {
            if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, OPS_ITEM(ops, 0));
            return NULL;
        }
        PyObject *sop = inst_attr(source, s_opcode);
        if (sop == NULL) return NULL;
        int tuple = PyUnicode_Check(sop) && PyUnicode_Compare(sop, s_tuple) == 0;
        Py_DECREF(sop);
        if (tuple) Py_RETURN_TRUE;
    }
    Py_RETURN_FALSE;
}
