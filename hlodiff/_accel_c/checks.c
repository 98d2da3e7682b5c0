/* The parser's checks that walk every instruction: names and roots (parser._check_computation) and which
 * instructions a parse-time rule must look at (checks.check_module).
 */
#include "accel.h"

/* parser._check_computation's loop: names defined once, one ROOT, parameter numbers distinct and not negative.
   Returns whether some operand is used before its definition, or None when a rule is broken (the parser's loop
   then finds it and says where). */
static PyObject *names_in_order_of(PyObject *insts);

PyObject *names_in_order(PyObject *self, PyObject *args) {
    PyObject *insts;
    if (!PyArg_ParseTuple(args, "O!", &PyList_Type, &insts)) return NULL;
    return names_in_order_of(insts);
}

/* names_in_order_each(computations) -> the positions of the computations whose names_in_order is not False (an
   operand used before its definition, or a rule broken), in order: the others need no Python step (an unrolled
   step has a small computation per block, 13,613 a side of the 300K pair, each a call and a lookup). */
PyObject *names_in_order_each(PyObject *self, PyObject *args) {
    PyObject *comps;
    if (!PyArg_ParseTuple(args, "O!", &PyList_Type, &comps)) return NULL;
    static PyObject *s_instructions;
    if (s_instructions == NULL && (s_instructions = PyUnicode_InternFromString("instructions")) == NULL) return NULL;
    PyObject *todo = PyList_New(0);
    if (todo == NULL) return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(comps); i++) {
        PyObject *insts = PyObject_GetAttr(PyList_GET_ITEM(comps, i), s_instructions);
        PyObject *r = insts == NULL ? NULL : PyList_Check(insts) ? names_in_order_of(insts) : Py_NewRef(Py_None);
        Py_XDECREF(insts);
        if (r == NULL) goto fail;
        int clean = r == Py_False;
        Py_DECREF(r);
        if (clean) continue;
        PyObject *at = PyLong_FromSsize_t(i);
        int rc = at ? PyList_Append(todo, at) : -1;
        Py_XDECREF(at);
        if (rc < 0) goto fail;
    }
    return todo;
fail:
    Py_DECREF(todo);
    return NULL;
}

static PyObject *names_in_order_of(PyObject *insts) {
    PyObject *defined = PySet_New(NULL), *params = PySet_New(NULL);
    int forward = 0, roots = 0, broken = 0, failed = 0;
    if (!defined || !params) failed = 1;
    for (Py_ssize_t i = 0; !failed && !broken && i < PyList_GET_SIZE(insts); i++) {
        PyObject *inst = PyList_GET_ITEM(insts, i);
        PyObject *name = inst_attr(inst, s_name);
        PyObject *ops = name ? inst_attr(inst, s_operands) : NULL;
        PyObject *root = ops ? inst_attr(inst, s_is_root) : NULL;
        PyObject *number = root ? inst_attr(inst, s_parameter_number) : NULL;
        if (number == NULL) failed = 1;
        int has = failed ? -1 : PySet_Contains(defined, name);
        if (has < 0) failed = 1;
        else if (has) broken = 1;
        if (!failed && !broken && !forward) {
            if (!PyTuple_Check(ops) && !PyList_Check(ops)) broken = 1;
            for (Py_ssize_t k = 0; !broken && k < OPS_SIZE(ops); k++) {
                int in = PySet_Contains(defined, OPS_ITEM(ops, k));
                if (in < 0) failed = 1;
                if (in <= 0) forward = 1;
                if (in <= 0) break;
            }
        }
        if (!failed && !broken && PySet_Add(defined, name) < 0) failed = 1;
        if (!failed && !broken && root == Py_True && ++roots > 1) broken = 1;
        if (!failed && !broken && number != Py_None) {
            long long v = PyLong_Check(number) ? PyLong_AsLongLong(number) : -1;
            if (v == -1 && PyErr_Occurred()) PyErr_Clear();
            int dup = v < 0 ? 1 : PySet_Contains(params, number);
            if (dup < 0) failed = 1;
            else if (dup) broken = 1;
            else if (PySet_Add(params, number) < 0) failed = 1;
        }
        Py_XDECREF(name);
        Py_XDECREF(ops);
        Py_XDECREF(root);
        Py_XDECREF(number);
    }
    Py_XDECREF(defined);
    Py_XDECREF(params);
    if (failed) return NULL;
    if (broken) Py_RETURN_NONE;
    return PyBool_FromLong(forward);
}

/* checks.check_module's triage of one computation: the instructions a rule must look at (their opcode has a
   rule, or they carry control-predecessors or result_accuracy), in order; the opcodes that are not plain XLA
   ones (unknown, or async-) go into odd. */
static PyObject *triage_of(PyObject *instructions, PyObject *ruled, PyObject *known, PyObject *odd);

/* Whether an instruction's rule is known to pass without being asked: checks._broadcast returns at once for a
   broadcast with dimensions={...} (every broadcast JAX prints: 40,800 a side of the 300K pair, each a Python
   call). Errors are left to the rule (0). */
static int rule_passes(PyObject *opcode, PyObject *attrs) {
    static PyObject *s_broadcast, *s_dimensions;
    if (s_broadcast == NULL && (s_broadcast = PyUnicode_InternFromString("broadcast")) == NULL) return 0;
    if (s_dimensions == NULL && (s_dimensions = PyUnicode_InternFromString("dimensions")) == NULL) return 0;
    if (!PyUnicode_Check(opcode) || !PyDict_Check(attrs) || PyUnicode_Compare(opcode, s_broadcast) != 0) return 0;
    int has = PyDict_Contains(attrs, s_dimensions);
    if (has < 0) PyErr_Clear();
    return has > 0;
}

PyObject *triage(PyObject *self, PyObject *args) {
    PyObject *instructions, *ruled, *known, *odd;
    if (!PyArg_ParseTuple(args, "O!O!O!O!", &PyList_Type, &instructions, &PyDict_Type, &ruled, &PyFrozenSet_Type,
                          &known, &PySet_Type, &odd))
        return NULL;
    return triage_of(instructions, ruled, known, odd);
}

/* triage_each(computations, ruled, known, odd) -> for each computation, triage's list of its instructions, or None
   when that list is empty or the computation is implicit (check_module skips those): one call for a module, not
   one per computation (an unrolled step's 13,600 small ones a side, most with nothing a rule looks at). */
PyObject *triage_each(PyObject *self, PyObject *args) {
    PyObject *comps, *ruled, *known, *odd;
    if (!PyArg_ParseTuple(args, "O!O!O!O!", &PyList_Type, &comps, &PyDict_Type, &ruled, &PyFrozenSet_Type, &known,
                          &PySet_Type, &odd))
        return NULL;
    static PyObject *s_instructions, *s_implicit;
    if (s_instructions == NULL && (s_instructions = PyUnicode_InternFromString("instructions")) == NULL) return NULL;
    if (s_implicit == NULL && (s_implicit = PyUnicode_InternFromString("implicit")) == NULL) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(comps);
    PyObject *out = PyList_New(n);
    if (out == NULL) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *comp = PyList_GET_ITEM(comps, i);
        PyObject *implicit = PyObject_GetAttr(comp, s_implicit);
        int skip = implicit ? PyObject_IsTrue(implicit) : -1;
        Py_XDECREF(implicit);
        PyObject *todo = NULL;
        if (skip == 0) {
            PyObject *insts = PyObject_GetAttr(comp, s_instructions);
            if (insts != NULL && !PyList_Check(insts)) {
                PyErr_SetString(PyExc_TypeError, "instructions must be a list");
                Py_CLEAR(insts);
            }
            todo = insts ? triage_of(insts, ruled, known, odd) : NULL;
            Py_XDECREF(insts);
            if (todo != NULL && PyList_GET_SIZE(todo) == 0) Py_SETREF(todo, Py_NewRef(Py_None));
        } else if (skip > 0) {
            todo = Py_NewRef(Py_None);
        }
        if (todo == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, todo);
    }
    return out;
}

static PyObject *triage_of(PyObject *instructions, PyObject *ruled, PyObject *known, PyObject *odd) {
    PyObject *todo = PyList_New(0);
    if (todo == NULL) return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(instructions); i++) {
        PyObject *inst = PyList_GET_ITEM(instructions, i);
        PyObject *opcode = inst_attr(inst, s_opcode);
        PyObject *attrs = opcode ? inst_attr(inst, s_attrs) : NULL;
        int rc = attrs ? 0 : -1, need = 0;
        if (rc == 0) {
            int has_rule = PyDict_Contains(ruled, opcode);
            if (has_rule < 0) rc = -1;
            else if (has_rule) need = !rule_passes(opcode, attrs);
            else {
                int plain = PySet_Contains(known, opcode);
                if (plain < 0) rc = -1;
                else if (!plain || (PyUnicode_Check(opcode) && PyUnicode_Tailmatch(opcode, s_async_prefix, 0, 6, -1) == 1)) {
                    if (PySet_Add(odd, opcode) < 0) rc = -1;
                }
            }
        }
        if (rc == 0 && !need && PyDict_Check(attrs) && PyDict_GET_SIZE(attrs)) {
            int a = PyDict_Contains(attrs, s_control_predecessors);
            int b = a == 0 ? PyDict_Contains(attrs, s_result_accuracy) : a;
            if (a < 0 || b < 0) rc = -1;
            else need = a || b;
        }
        if (rc == 0 && need) rc = PyList_Append(todo, inst);
        Py_XDECREF(opcode);
        Py_XDECREF(attrs);
        if (rc < 0) {
            Py_DECREF(todo);
            return NULL;
        }
    }
    return todo;
}
