/* A run of small computations hashed in one call (hlodiff.graph.fingerprint._hash_computation, the path of a
 * called computation of fewer than INDEX_MIN instructions printed operand-first, with no side effect and dead code
 * dropped): its labels and anonymous hashes, its parameter numbers, its exact hashes and its computation hash.
 *
 * An unrolled step calls one small reduction per block (13,600 three-instruction regions a side of the 300K pair):
 * the Python steps around the C loops cost more than the loops, several microseconds a computation. Here each
 * computation is the same calls of anon_hashes and exact_hashes the Python path makes, with the same arguments, in
 * the same order (callees first: a caller's label holds its callees' hashes), and the same digest of the same parts.
 */
#include "accel.h"

static PyObject *s_insts, *s_operands_map, *s_root, *s_labels, *s_anon, *s_hashes, *s_param_ids, *s_params,
    *s_effects, *s_computation, *s_refill, *s_size, *s_instructions, *s_dropped, *s_class;

static int small_names(void) {
    if (s_insts != NULL) return 0;
    s_insts = PyUnicode_InternFromString("insts");
    s_operands_map = PyUnicode_InternFromString("operands");
    s_root = PyUnicode_InternFromString("root");
    s_labels = PyUnicode_InternFromString("labels");
    s_anon = PyUnicode_InternFromString("anon");
    s_hashes = PyUnicode_InternFromString("hashes");
    s_param_ids = PyUnicode_InternFromString("param_ids");
    s_params = PyUnicode_InternFromString("_params");
    s_effects = PyUnicode_InternFromString("_effects");
    s_computation = PyUnicode_InternFromString("computation");
    s_refill = PyUnicode_InternFromString("_refill");
    s_size = PyUnicode_InternFromString("_size");
    s_instructions = PyUnicode_InternFromString("instructions");
    s_dropped = PyUnicode_InternFromString("_dropped");
    s_class = PyUnicode_InternFromString("__class__");
    return s_computation == NULL || s_refill == NULL || s_size == NULL || s_instructions == NULL || s_dropped == NULL ||
           s_class == NULL ? -1 : 0;
}

/* Whether the result of a call is Python's True (consumed); -1 on error. */
static int true_result(PyObject *r) {
    if (r == NULL) return -1;
    int t = r == Py_True;
    Py_DECREF(r);
    return t;
}

/* {p: insts[p].parameter_number or 0 for p in params} */
static PyObject *param_numbers(PyObject *insts, PyObject *params) {
    PyObject *ids = PyDict_New();
    if (ids == NULL) return NULL;
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(params); k++) {
        PyObject *p = PyList_GET_ITEM(params, k);
        PyObject *inst = PyDict_GetItemWithError(insts, p);
        if (inst == NULL) {
            if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, p);
            goto fail;
        }
        PyObject *number = inst_attr(inst, s_parameter_number);
        if (number == NULL) goto fail;
        int truth = PyObject_IsTrue(number);
        PyObject *value = truth > 0 ? Py_NewRef(number) : truth == 0 ? PyLong_FromLong(0) : NULL;
        int rc = value ? PyDict_SetItem(ids, p, value) : -1;
        Py_XDECREF(value);
        Py_DECREF(number);
        if (rc < 0) goto fail;
    }
    return ids;
fail:
    Py_DECREF(ids);
    return NULL;
}

/* _digest(";".join([hashes[root], *sorted(f"{labels[p]}|#{param_ids[p]}" for p in params)])) */
static PyObject *computation_hash(PyObject *hashes, PyObject *root, PyObject *labels, PyObject *ids,
                                  PyObject *params) {
    Py_ssize_t n = PyList_GET_SIZE(params);
    PyObject *parts = PyList_New(n), *sep = NULL, *text = NULL, *result = NULL;
    if (parts == NULL) return NULL;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *p = PyList_GET_ITEM(params, k);
        PyObject *label = PyDict_GetItemWithError(labels, p), *id = label ? PyDict_GetItemWithError(ids, p) : NULL;
        if (id == NULL) {
            if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, p);
            goto done;
        }
        PyObject *item = PyUnicode_FromFormat("%U|#%S", label, id);
        if (item == NULL) goto done;
        PyList_SET_ITEM(parts, k, item);
    }
    if (PyList_Sort(parts) < 0) goto done;
    PyObject *top = PyDict_GetItemWithError(hashes, root);
    if (top == NULL) {
        if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, root);
        goto done;
    }
    if (PyList_Insert(parts, 0, top) < 0 || (sep = PyUnicode_FromString(";")) == NULL ||
        (text = PyUnicode_Join(sep, parts)) == NULL)
        goto done;
    Py_ssize_t len;
    const char *data = PyUnicode_AsUTF8AndSize(text, &len);
    if (data == NULL) goto done;
    char hex[128];
    blake2b_hex((const uint8_t *)data, (size_t)len, 12, hex);
    result = exact_str(hex); /* identical regions: one string (hashes.c) */
done:
    Py_DECREF(parts);
    Py_XDECREF(sep);
    Py_XDECREF(text);
    return result;
}

/* Whether insts and operands are what index_computation makes of comp's instructions (so CanonicalComputation
   ._restore makes them again): one entry per instruction, each operand list the instruction's own tuple (no pass
   removed or rewrote one). 1 yes, 0 no, -1 error. */
static int as_built(PyObject *comp, PyObject *insts, PyObject *operands) {
    PyObject *list = PyObject_GetAttr(comp, s_instructions);
    if (list == NULL) return -1;
    int same = PyList_CheckExact(list) && PyList_GET_SIZE(list) == PyDict_GET_SIZE(insts) &&
               PyDict_GET_SIZE(operands) == PyDict_GET_SIZE(insts);
    for (Py_ssize_t k = 0; same == 1 && k < PyList_GET_SIZE(list); k++) {
        PyObject *inst = PyList_GET_ITEM(list, k);
        PyObject *name = inst_attr(inst, s_name), *ops = name ? inst_attr(inst, s_operands) : NULL;
        if (ops == NULL) {
            same = -1;
        } else {
            PyObject *mine = PyDict_GetItemWithError(operands, name);
            PyObject *kept = mine ? PyDict_GetItemWithError(insts, name) : NULL;
            same = kept == inst && mine == ops && PyTuple_CheckExact(ops) ? 1 : PyErr_Occurred() ? -1 : 0;
        }
        Py_XDECREF(name);
        Py_XDECREF(ops);
    }
    Py_DECREF(list);
    return same;
}

/* One computation: 1 hashed, 0 not for this path (nothing changed), -1 error. */
/* With refill (not None), the computation's maps are made here and dropped after its hash: the computation keeps
   refill, which makes them again when something reads them (CanonicalComputation._facts); and its insts and
   operands go too when as_built (unset slots, the computation made a _Dropped, whose __getattr__ makes them
   again), their size kept in _size, and its list of parameters (parameters() makes it again from insts). */
static int hash_one(PyObject *cc, PyObject *entry, Py_ssize_t index_min, int plain, PyObject *label_fn,
                    PyObject *shape_text, PyObject *shape_texts, PyObject *call_keys, PyObject *comp_hashes,
                    PyObject *refill, Py_ssize_t *size) {
    if (cc == entry) return 0;
    int done = -1;
    PyObject *insts = NULL, *operands = NULL, *root = NULL, *labels = NULL, *anon = NULL, *hashes = NULL;
    PyObject *params = NULL, *effects = NULL, *order = NULL, *ids = NULL, *comp = NULL, *name = NULL, *h = NULL;
    if ((operands = PyObject_GetAttr(cc, s_operands_map)) == NULL || (insts = PyObject_GetAttr(cc, s_insts)) == NULL ||
        (params = PyObject_GetAttr(cc, s_params)) == NULL || (effects = PyObject_GetAttr(cc, s_effects)) == NULL)
        goto out;
    done = 0;
    if (!PyDict_CheckExact(operands) || !PyDict_CheckExact(insts) || PyDict_GET_SIZE(operands) >= index_min ||
        !PyList_CheckExact(params) || !PyTuple_CheckExact(effects) || PyTuple_GET_SIZE(effects) != 0)
        goto out; /* big (an index), side effects, or maps not made by index_computation: the Python path */
    PyObject *args = PyTuple_Pack(1, operands);
    done = args ? true_result(defined_before_use(NULL, args)) : -1;
    Py_XDECREF(args);
    if (done != 1) goto out; /* not printed operand-first: the Python path sorts it */
    done = -1;
    int kept = refill == Py_None;
    if ((root = PyObject_GetAttr(cc, s_root)) == NULL ||
        (labels = kept ? PyObject_GetAttr(cc, s_labels) : PyDict_New()) == NULL ||
        (anon = kept ? PyObject_GetAttr(cc, s_anon) : PyDict_New()) == NULL ||
        (hashes = kept ? PyObject_GetAttr(cc, s_hashes) : PyDict_New()) == NULL ||
        (order = PyDict_Keys(operands)) == NULL)
        goto out;
    args = Py_BuildValue("(OOOOOOOOOOO)", order, insts, operands, plain ? Py_True : Py_False, label_fn, shape_text,
                         shape_texts, labels, anon, call_keys, comp_hashes);
    PyObject *r = args ? anon_hashes(NULL, args) : NULL;
    Py_XDECREF(args);
    if (r == NULL) goto out;
    Py_DECREF(r);
    if ((ids = param_numbers(insts, params)) == NULL || (kept && PyObject_SetAttr(cc, s_param_ids, ids) < 0))
        goto out;
    args = PyTuple_Pack(5, order, labels, operands, ids, hashes);
    r = args ? exact_hashes(NULL, args) : NULL;
    Py_XDECREF(args);
    if (r == NULL) goto out;
    Py_DECREF(r);
    if ((h = computation_hash(hashes, root, labels, ids, params)) == NULL ||
        (comp = PyObject_GetAttr(cc, s_computation)) == NULL || (name = PyObject_GetAttr(comp, s_name)) == NULL ||
        PyDict_SetItem(comp_hashes, name, h) < 0 || (!kept && PyObject_SetAttr(cc, s_refill, refill) < 0))
        goto out;
    if (!kept) {
        int drop = as_built(comp, insts, operands);
        if (drop < 0) goto out;
        if (drop) {
            PyObject *n = PyLong_FromSsize_t(PyDict_GET_SIZE(insts));
            int rc = n ? PyObject_SetAttr(cc, s_size, n) : -1;
            Py_XDECREF(n);
            PyObject *cls = rc < 0 ? NULL : PyObject_GetAttr(cc, s_dropped);
            rc = cls ? PyObject_SetAttr(cc, s_class, cls) : -1; /* first, so a read of the unset slots finds them */
            Py_XDECREF(cls);
            if (rc < 0 || PyObject_DelAttr(cc, s_insts) < 0 || PyObject_DelAttr(cc, s_operands_map) < 0 ||
                PyObject_SetAttr(cc, s_params, Py_None) < 0) /* parameters() finds them again in insts */
                goto out;
        }
    }
    *size += PyDict_GET_SIZE(insts);
    done = 1;
out:
    Py_XDECREF(insts);
    Py_XDECREF(operands);
    Py_XDECREF(root);
    Py_XDECREF(labels);
    Py_XDECREF(anon);
    Py_XDECREF(hashes);
    Py_XDECREF(params);
    Py_XDECREF(effects);
    Py_XDECREF(order);
    Py_XDECREF(ids);
    Py_XDECREF(comp);
    Py_XDECREF(name);
    Py_XDECREF(h);
    return done;
}

/* hash_small(ccs, start, entry, index_min, plain, label_fn, shape_text, shape_texts, call_keys, comp_hashes[,
   refill]) -> (stop, instructions): hashes ccs[start:stop], each as _hash_computation would, and stops at the first
   it does not take (the entry, a computation of index_min instructions or more, one with a side effect or not
   printed operand-first), which the caller hashes in Python before calling again. With refill, each keeps its
   computation hash only (and refill, to make its maps again). */
PyObject *hash_small(PyObject *self, PyObject *args) {
    PyObject *ccs, *entry, *label_fn, *shape_text, *shape_texts, *call_keys, *comp_hashes, *refill = Py_None;
    Py_ssize_t start, index_min;
    int plain;
    if (!PyArg_ParseTuple(args, "O!nOnpOOO!O!O!|O", &PyList_Type, &ccs, &start, &entry, &index_min, &plain,
                          &label_fn, &shape_text, &PyDict_Type, &shape_texts, &PyFrozenSet_Type, &call_keys,
                          &PyDict_Type, &comp_hashes, &refill))
        return NULL;
    if (small_names() < 0) return NULL;
    Py_ssize_t i = start < 0 ? 0 : start, size = 0;
    for (; i < PyList_GET_SIZE(ccs); i++) {
        int rc = hash_one(PyList_GET_ITEM(ccs, i), entry, index_min, plain, label_fn, shape_text, shape_texts,
                          call_keys, comp_hashes, refill, &size);
        if (rc < 0) return NULL;
        if (rc == 0) break;
    }
    return Py_BuildValue("(nn)", i, size);
}
