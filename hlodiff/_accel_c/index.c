/* Per-computation indexes (hlodiff.graph.canonical.build_computation, reachable_computations).
 */
#include "accel.h"

/* build_computation's maps: name -> instruction, name -> the instruction's operand tuple (itself, not a copy: a
   list per node was 100 bytes a node, 50 MB at 300K; passes replace an entry, never change one); the
   parameters (text order) and the instructions with a side effect (a tuple: opcode in effects, or
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
    /* a tuple: most computations have no side effect, and every empty tuple is the one () */
    PyObject *effect_names = PyList_AsTuple(marked);
    Py_DECREF(marked);
    if (effect_names == NULL) {
        Py_DECREF(insts);
        Py_DECREF(operands);
        Py_DECREF(params);
        return NULL;
    }
    return Py_BuildValue("(NNNNnn)", insts, operands, params, effect_names, with_metadata, gtes);
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

/* The one computation a caller's attributes name, when they hold one call key whose value is written as a bare
   name (to_apply=%region_0.12: an unrolled step's 13,600 reduces a side), as called_computations reads it
   (plain_name: an optional '%', then [A-Za-z0-9_.-]+, the '%' dropped); anything else (several keys, a list, spaces,
   non-ASCII, a malformed value) is left to called_computations. 1 with *out set, 0 (Python's turn), -1 error. */
static int plain_callee(PyObject *attrs, PyObject *keys, PyObject **out) {
    *out = NULL;
    Py_ssize_t pos = 0;
    PyObject *key, *value, *found = NULL;
    while (PyDict_Next(attrs, &pos, &key, &value)) {
        int is_call = PySet_Contains(keys, key);
        if (is_call < 0) return -1;
        if (is_call && found != NULL) return 0;
        if (is_call) found = value;
    }
    if (found == NULL || !PyUnicode_Check(found) || !PyUnicode_IS_ASCII(found)) return 0;
    Py_ssize_t n = PyUnicode_GET_LENGTH(found), start = n > 0 && PyUnicode_READ_CHAR(found, 0) == '%';
    const char *s = (const char *)PyUnicode_DATA(found);
    if (start >= n) return 0;
    for (Py_ssize_t i = start; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
              c == '-'))
            return 0;
    }
    *out = start ? PyUnicode_FromStringAndSize(s + start, n - start) : Py_NewRef(found);
    return *out != NULL ? 1 : -1;
}

/* The computations one calling instruction names, for both walks below (reachable_order, calls_each): its one bare
   name read here (plain_callee, *single set) or, for every other spelling, the Python reader's list (*listed set, a
   fast sequence; ``what`` is the error when the reader returns none). 0 with one of the two set (new references),
   -1 on error. callee_count and callee_at read whichever was set. */
static int callees_of(PyObject *inst, PyObject *keys, PyObject *reader, const char *what, PyObject **single,
                      PyObject **listed) {
    *single = *listed = NULL;
    PyObject *attrs = inst_attr(inst, s_attrs);
    int rc = attrs == NULL ? -1 : plain_callee(attrs, keys, single);
    if (rc == 0) {
        PyObject *got = PyObject_CallOneArg(reader, attrs);
        *listed = got ? PySequence_Fast(got, what) : NULL;
        Py_XDECREF(got);
        rc = *listed ? 0 : -1;
    } else if (rc == 1) {
        rc = 0;
    }
    Py_XDECREF(attrs);
    return rc;
}

static inline Py_ssize_t callee_count(PyObject *single, PyObject *listed) {
    return single ? 1 : listed ? PySequence_Fast_GET_SIZE(listed) : 0;
}

static inline PyObject *callee_at(PyObject *single, PyObject *listed, Py_ssize_t j) {
    return single ? single : PySequence_Fast_GET_ITEM(listed, j);
}

typedef struct {
    PyObject *comp; /* borrowed: held by the computations list */
    int done;
} Visit;

/* Pushes v on the walk's stack, doubling it when full: 0, or -1 with MemoryError set. */
static int push_visit(Visit **stack, Py_ssize_t *cap, Py_ssize_t *top, Visit v) {
    if (*top >= *cap) {
        Visit *grown = PyMem_Realloc(*stack, 2 * *cap * sizeof(Visit));
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        *stack = grown;
        *cap *= 2;
    }
    (*stack)[(*top)++] = v;
    return 0;
}

/* reachable_order(computations, entry, call_keys, called_computations) -> canonical.reachable_computations's list:
   the computations the entry calls, directly or not, callees before callers, the entry last, by the same
   depth-first walk (a stack of (computation, done) pairs, a state per name). Each visited computation's calling
   instructions are found when it is visited (not every computation's first), and a caller naming one computation
   by a bare name is read here; called_computations reads every other. */
PyObject *reachable_order(PyObject *self, PyObject *args) {
    PyObject *comps, *entry, *keys, *called;
    if (!PyArg_ParseTuple(args, "O!OO!O", &PyList_Type, &comps, &entry, &PyFrozenSet_Type, &keys, &called))
        return NULL;
    static PyObject *s_instructions, *s_comp_name;
    if (s_instructions == NULL && (s_instructions = PyUnicode_InternFromString("instructions")) == NULL) return NULL;
    if (s_comp_name == NULL && (s_comp_name = PyUnicode_InternFromString("name")) == NULL) return NULL;
    PyObject *by_name = PyDict_New(), *state = PyDict_New(), *order = PyList_New(0);
    PyObject *one = PyLong_FromLong(1), *two = PyLong_FromLong(2);
    Py_ssize_t cap = 64, top = 0;
    Visit *stack = PyMem_Malloc(cap * sizeof(Visit));
    if (!by_name || !state || !order || !one || !two || !stack) goto fail;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(comps); i++) {
        PyObject *comp = PyList_GET_ITEM(comps, i);
        PyObject *name = PyObject_GetAttr(comp, s_comp_name);
        int rc = name ? PyDict_SetItem(by_name, name, comp) : -1;
        Py_XDECREF(name);
        if (rc < 0) goto fail;
    }
    stack[top++] = (Visit){entry, 0};
    while (top > 0) {
        Visit v = stack[--top];
        PyObject *name = PyObject_GetAttr(v.comp, s_comp_name);
        if (name == NULL) goto fail;
        PyObject *st = PyDict_GetItemWithError(state, name);
        int rc = st == NULL && PyErr_Occurred() ? -1 : 0;
        if (rc == 0 && v.done) {
            if (st != two && (PyDict_SetItem(state, name, two) < 0 || PyList_Append(order, v.comp) < 0)) rc = -1;
            Py_DECREF(name);
            if (rc < 0) goto fail;
            continue;
        }
        if (rc == 0 && st != NULL) { /* 1 or 2: visited */
            Py_DECREF(name);
            continue;
        }
        if (rc == 0) rc = PyDict_SetItem(state, name, one);
        Py_DECREF(name);
        if (rc < 0 || push_visit(&stack, &cap, &top, (Visit){v.comp, 1}) < 0) goto fail;
        PyObject *insts = PyObject_GetAttr(v.comp, s_instructions);
        PyObject *callers = insts ? with_attribute_of(insts, keys) : NULL;
        Py_XDECREF(insts);
        if (callers == NULL) goto fail;
        for (Py_ssize_t k = 0; rc == 0 && k < PyList_GET_SIZE(callers); k++) {
            PyObject *single, *names;
            rc = callees_of(PyList_GET_ITEM(callers, k), keys, called, "called_computations must return a sequence",
                            &single, &names);
            Py_ssize_t count = rc == 0 ? callee_count(single, names) : 0;
            for (Py_ssize_t j = 0; rc == 0 && j < count; j++) {
                PyObject *callee = callee_at(single, names, j);
                PyObject *target = PyDict_GetItemWithError(by_name, callee);
                if (target == NULL) {
                    if (PyErr_Occurred()) rc = -1;
                    continue;
                }
                int seen = PyDict_Contains(state, callee);
                if (seen < 0) rc = -1;
                if (seen) continue;
                if (push_visit(&stack, &cap, &top, (Visit){target, 0}) < 0) rc = -1;
            }
            Py_XDECREF(single);
            Py_XDECREF(names);
        }
        Py_DECREF(callers);
        if (rc < 0) goto fail;
    }
    PyMem_Free(stack);
    Py_DECREF(by_name);
    Py_DECREF(state);
    Py_DECREF(one);
    Py_DECREF(two);
    return order;
fail:
    if (stack == NULL && !PyErr_Occurred()) PyErr_NoMemory();
    PyMem_Free(stack);
    Py_XDECREF(by_name);
    Py_XDECREF(state);
    Py_XDECREF(order);
    Py_XDECREF(one);
    Py_XDECREF(two);
    return NULL;
}

/* calls_each(computations, call_keys, callees) -> name_checks._check_computations's map of calls (the name of
   each computation that calls others -> [(callee, calling instruction), ...], in module and text order), or None
   when a rule is broken (a computation defined twice, a second ENTRY, a call of a computation not defined): the
   Python loop then finds the first and says where. A caller naming one computation by a bare name is read here;
   callees(attrs) (the regular expression) reads every other spelling. */
PyObject *calls_each(PyObject *self, PyObject *args) {
    PyObject *comps, *keys, *callees_fn;
    if (!PyArg_ParseTuple(args, "O!O!O", &PyList_Type, &comps, &PyFrozenSet_Type, &keys, &callees_fn)) return NULL;
    static PyObject *s_instructions, *s_comp_name, *s_is_entry;
    if (s_instructions == NULL && (s_instructions = PyUnicode_InternFromString("instructions")) == NULL) return NULL;
    if (s_comp_name == NULL && (s_comp_name = PyUnicode_InternFromString("name")) == NULL) return NULL;
    if (s_is_entry == NULL && (s_is_entry = PyUnicode_InternFromString("is_entry")) == NULL) return NULL;
    PyObject *names = PySet_New(NULL), *calls = PyDict_New();
    if (names == NULL || calls == NULL) goto fail;
    int entries = 0, broken = 0;
    for (Py_ssize_t i = 0; !broken && i < PyList_GET_SIZE(comps); i++) {
        PyObject *comp = PyList_GET_ITEM(comps, i);
        PyObject *name = PyObject_GetAttr(comp, s_comp_name);
        int seen = name ? PySet_Contains(names, name) : -1;
        if (seen == 0) seen = PySet_Add(names, name);
        Py_XDECREF(name);
        if (seen < 0) goto fail;
        if (seen) broken = 1;
        PyObject *is_entry = PyObject_GetAttr(comp, s_is_entry);
        int entry = is_entry ? PyObject_IsTrue(is_entry) : -1;
        Py_XDECREF(is_entry);
        if (entry < 0) goto fail;
        if (entry && ++entries > 1) broken = 1;
    }
    for (Py_ssize_t i = 0; !broken && i < PyList_GET_SIZE(comps); i++) {
        PyObject *comp = PyList_GET_ITEM(comps, i);
        PyObject *insts = PyObject_GetAttr(comp, s_instructions);
        PyObject *callers = insts ? with_attribute_of(insts, keys) : NULL;
        Py_XDECREF(insts);
        if (callers == NULL) goto fail;
        PyObject *mine = NULL; /* this computation's list in calls (borrowed) */
        int rc = 0;
        for (Py_ssize_t k = 0; rc == 0 && !broken && k < PyList_GET_SIZE(callers); k++) {
            PyObject *inst = PyList_GET_ITEM(callers, k);
            PyObject *single, *found;
            rc = callees_of(inst, keys, callees_fn, "callees must return a sequence", &single, &found);
            Py_ssize_t count = rc == 0 ? callee_count(single, found) : 0;
            for (Py_ssize_t j = 0; rc == 0 && !broken && j < count; j++) {
                PyObject *callee = callee_at(single, found, j);
                int known = PySet_Contains(names, callee);
                if (known < 0) rc = -1;
                if (known <= 0) {
                    broken = known == 0;
                    continue;
                }
                if (mine == NULL) {
                    PyObject *name = PyObject_GetAttr(comp, s_comp_name);
                    mine = name ? PyDict_GetItemWithError(calls, name) : NULL; /* a name is unique by now */
                    if (mine == NULL && name != NULL && !PyErr_Occurred()) {
                        mine = PyList_New(0);
                        if (mine != NULL && PyDict_SetItem(calls, name, mine) < 0) Py_CLEAR(mine);
                        Py_XDECREF(mine); /* held by calls */
                    }
                    Py_XDECREF(name);
                    if (mine == NULL) {
                        rc = -1;
                        continue;
                    }
                }
                PyObject *pair = PyTuple_Pack(2, callee, inst);
                if (pair == NULL || PyList_Append(mine, pair) < 0) rc = -1;
                Py_XDECREF(pair);
            }
            Py_XDECREF(single);
            Py_XDECREF(found);
        }
        Py_DECREF(callers);
        if (rc < 0) goto fail;
    }
    Py_DECREF(names);
    if (broken) {
        Py_DECREF(calls);
        Py_RETURN_NONE;
    }
    return calls;
fail:
    Py_XDECREF(names);
    Py_XDECREF(calls);
    return NULL;
}
