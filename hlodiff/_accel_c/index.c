/* Per-computation indexes (hlodiff.graph.canonical.build_computation, reachable_computations).
 */
#include "accel.h"

/* build_computation's maps: name -> instruction, name -> the instruction's operand tuple (itself, not a copy: a
   list per node was 100 bytes a node, 50 MB at 300K; passes replace an entry, never change one); the
   parameters (text order) and the instructions with a side effect (opcode in effects, or
   custom_call_has_side_effect="true"); and, read in the same walk, how many instructions carry a metadata
   attribute and how many are get-tuple-element (-1 when an attrs is not a dict): what the metadata and
   tuple-plumbing passes would otherwise each learn by walking every instruction again (two walks of 217K
   objects a side of the 300K pair, 40 ms, to count what JAX text rarely has). */
PyObject *index_computation(PyObject *self, PyObject *args) {
    PyObject *instructions, *effects;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &instructions, &PyFrozenSet_Type, &effects)) return NULL;
    PyObject *insts = PyDict_New(), *operands = PyDict_New(), *params = PyList_New(0), *marked = PyList_New(0);
    Py_ssize_t with_metadata = 0, gtes = 0;
    if (!insts || !operands || !params || !marked) goto fail;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(instructions); i++) {
        PyObject *inst = PyList_GET_ITEM(instructions, i);
        PyObject *name = inst_attr(inst, s_name);
        PyObject *ops = name ? inst_attr(inst, s_operands) : NULL;
        PyObject *opcode = ops ? inst_attr(inst, s_opcode) : NULL;
        PyObject *attrs = opcode ? inst_attr(inst, s_attrs) : NULL;
        PyObject *list = attrs ? PySequence_Tuple(ops) : NULL; /* ops itself when it is a tuple */
        int rc = list ? 0 : -1;
        if (rc == 0) rc = PyDict_SetItem(insts, name, inst);
        if (rc == 0) rc = PyDict_SetItem(operands, name, list);
        if (rc == 0) {
            int is_param = PyUnicode_Check(opcode) && PyUnicode_Compare(opcode, s_parameter) == 0;
            if (is_param) rc = PyList_Append(params, name);
            if (PyUnicode_Check(opcode) && PyUnicode_Compare(opcode, s_gte) == 0) gtes++;
            if (!PyDict_Check(attrs)) with_metadata = -1;
            else if (with_metadata >= 0 && PyDict_GET_SIZE(attrs)) {
                int has = PyDict_Contains(attrs, s_metadata);
                if (has < 0) rc = -1;
                with_metadata += has > 0;
            }
            /* opcodes are plain str: a lookup cannot fail here */
            int effect = PySet_Contains(effects, opcode);
            if (effect < 0) rc = -1;
            if (rc == 0 && !effect && PyDict_Check(attrs) && PyDict_GET_SIZE(attrs)) {
                PyObject *v = PyDict_GetItemWithError(attrs, s_custom_call_has_side_effect);
                if (v == NULL && PyErr_Occurred()) rc = -1;
                else if (v != NULL) {
                    int t = PyObject_RichCompareBool(v, s_true, Py_EQ);
                    if (t < 0) rc = -1;
                    effect = t > 0;
                }
            }
            if (rc == 0 && effect) rc = PyList_Append(marked, name);
        }
        Py_XDECREF(name);
        Py_XDECREF(ops);
        Py_XDECREF(opcode);
        Py_XDECREF(attrs);
        Py_XDECREF(list);
        if (rc < 0) goto fail;
    }
    return Py_BuildValue("(NNNNnn)", insts, operands, params, marked, with_metadata, gtes);
fail:
    Py_XDECREF(insts);
    Py_XDECREF(operands);
    Py_XDECREF(params);
    Py_XDECREF(marked);
    return NULL;
}

/* The instructions (in order) whose attributes hold one of keys (the calls: to_apply, body, ...). */
static PyObject *with_attribute_of(PyObject *instructions, PyObject *keys);

PyObject *with_attribute(PyObject *self, PyObject *args) {
    PyObject *instructions, *keys;
    if (!PyArg_ParseTuple(args, "OO!", &instructions, &PyFrozenSet_Type, &keys)) return NULL;
    return with_attribute_of(instructions, keys);
}

/* with_attribute_each(computations, keys) -> [(computation, with_attribute(its instructions, keys)), ...] for the
   computations that have such instructions, in order: one call for a module, not one per computation (an unrolled
   step has a small one per block, most calling nothing). */
PyObject *with_attribute_each(PyObject *self, PyObject *args) {
    PyObject *comps, *keys;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &comps, &PyFrozenSet_Type, &keys)) return NULL;
    static PyObject *s_instructions;
    if (s_instructions == NULL && (s_instructions = PyUnicode_InternFromString("instructions")) == NULL) return NULL;
    PyObject *out = PyList_New(0);
    if (out == NULL) return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(comps); i++) {
        PyObject *comp = PyList_GET_ITEM(comps, i);
        PyObject *insts = PyObject_GetAttr(comp, s_instructions);
        PyObject *found = insts ? with_attribute_of(insts, keys) : NULL;
        Py_XDECREF(insts);
        if (found == NULL) goto fail;
        PyObject *pair = PyList_GET_SIZE(found) ? PyTuple_Pack(2, comp, found) : NULL;
        int rc = PyList_GET_SIZE(found) == 0 ? 0 : pair ? PyList_Append(out, pair) : -1;
        Py_XDECREF(pair);
        Py_DECREF(found);
        if (rc < 0) goto fail;
    }
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

static PyObject *with_attribute_of(PyObject *instructions, PyObject *keys) {
    PyObject *seq = PySequence_Fast(instructions, "instructions must be a sequence");
    if (seq == NULL) return NULL;
    PyObject *out = PyList_New(0);
    if (out == NULL) goto fail;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
        PyObject *inst = PySequence_Fast_GET_ITEM(seq, i);
        PyObject *attrs = inst_attr(inst, s_attrs);
        if (attrs == NULL) goto fail;
        int hit = 0;
        if (PyDict_Check(attrs) && PyDict_GET_SIZE(attrs)) {
            Py_ssize_t pos = 0;
            PyObject *key, *value;
            while (!hit && PyDict_Next(attrs, &pos, &key, &value)) {
                hit = PySet_Contains(keys, key);
                if (hit < 0) break;
            }
        }
        Py_DECREF(attrs);
        if (hit < 0 || (hit && PyList_Append(out, inst) < 0)) goto fail;
    }
    Py_DECREF(seq);
    return out;
fail:
    Py_DECREF(seq);
    Py_XDECREF(out);
    return NULL;
}

/* [name for name in order if name not in paired]: the names a matcher has still to look at (most are paired by
   then: the 300K pair leaves a few hundred of 217K). */
PyObject *unpaired(PyObject *self, PyObject *args) {
    PyObject *order, *paired;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &order, &PyDict_Type, &paired)) return NULL;
    PyObject *out = PyList_New(0);
    if (out == NULL) return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(order); i++) {
        PyObject *name = PyList_GET_ITEM(order, i);
        int has = PyDict_Contains(paired, name);
        if (has < 0 || (!has && PyList_Append(out, name) < 0)) {
            Py_DECREF(out);
            return NULL;
        }
    }
    return out;
}
