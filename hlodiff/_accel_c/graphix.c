/* A computation's graph as integer arrays (hlodiff.graph.canonical.graph_index): each instruction is its
 * position in the operands map, each operand list a run of positions in one array. The walks and hash loops of
 * canonicalization read these arrays instead of probing name-keyed dicts and sets of 200K entries (each probe a
 * cache miss on a heap of hundreds of megabytes: what the time of a 300K-instruction comparison was spent on).
 *
 * Built once per canonical computation, after the passes that rewrite operand lists (dead code, tuple plumbing);
 * those passes drop it whenever they change a list. Names are found by the identity of their string object (an
 * operand is the very name object of its definition, as the parser shares them), then, for a name spelled by
 * another object, by value. An operand that names no instruction makes no index: the dict walks then raise
 * their KeyError as before.
 */
#include "accel.h"

typedef struct {
    Py_ssize_t n;
    PyObject *names;         /* list of the names, in the operands map's order (owns them) */
    int32_t *op_start;       /* n + 1 offsets into op_idx */
    int32_t *op_idx;         /* every operand list's positions, one after another */
    PyObject **slot_keys;    /* open addressing by the name object's address */
    int32_t *slot_vals;
    size_t mask;
    PyObject *by_value;      /* name -> position, made on the first lookup by a name object not in the table */
    int ordered;             /* every operand defined before its user */
    int32_t *u_start, *u_idx; /* each node's users, in text order, each once (index_users_of: made on first use) */
} GraphIx;

static const char *GX = "hlodiff.graph_index";

static void gx_free(PyObject *capsule) {
    GraphIx *g = PyCapsule_GetPointer(capsule, GX);
    if (g == NULL) return;
    Py_XDECREF(g->names);
    Py_XDECREF(g->by_value);
    PyMem_Free(g->op_start);
    PyMem_Free(g->op_idx);
    PyMem_Free(g->slot_keys);
    PyMem_Free(g->slot_vals);
    PyMem_Free(g->u_start);
    PyMem_Free(g->u_idx);
    PyMem_Free(g);
}

static inline size_t slot_of(const GraphIx *g, PyObject *key) {
    return (size_t)((((uintptr_t)key) >> 4) * 0x9E3779B97F4A7C15ull) & g->mask;
}

/* The table of positions by name object, made again after index_compact dropped it (what comes after
   canonicalization asks for many names again: users, matching by position). 0, or -1 with an error. */
static int gx_table(GraphIx *g) {
    if (g->slot_keys != NULL) return 0;
    size_t cap = 16;
    while (cap < (size_t)g->n * 2) cap <<= 1;
    g->mask = cap - 1;
    g->slot_keys = PyMem_Calloc(cap, sizeof(PyObject *));
    g->slot_vals = PyMem_Malloc(cap * sizeof(int32_t));
    if (g->slot_keys == NULL || g->slot_vals == NULL) {
        PyMem_Free(g->slot_keys);
        PyMem_Free(g->slot_vals);
        g->slot_keys = NULL;
        g->slot_vals = NULL;
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < g->n; i++) {
        PyObject *name = PyList_GET_ITEM(g->names, i);
        size_t s = slot_of(g, name);
        while (g->slot_keys[s] != NULL) s = (s + 1) & g->mask;
        g->slot_keys[s] = name;
        g->slot_vals[s] = (int32_t)i;
    }
    return 0;
}

/* The position of a name, or -1 (no error) when it names no instruction, or -2 with an error set. */
static int32_t gx_find(GraphIx *g, PyObject *name) {
    if (g->slot_keys == NULL) { /* compacted (index_compact): the few lookups left scan the names */
        for (Py_ssize_t i = 0; i < g->n; i++)
            if (PyList_GET_ITEM(g->names, i) == name) return (int32_t)i;
    }
    for (size_t s = slot_of(g, name); g->slot_keys != NULL; s = (s + 1) & g->mask) {
        PyObject *k = g->slot_keys[s];
        if (k == name) return g->slot_vals[s];
        if (k == NULL) break;
    }
    if (g->by_value == NULL) {
        if ((g->by_value = PyDict_New()) == NULL) return -2;
        for (Py_ssize_t i = 0; i < g->n; i++) {
            PyObject *pos = PyLong_FromSsize_t(i);
            int rc = pos ? PyDict_SetItem(g->by_value, PyList_GET_ITEM(g->names, i), pos) : -1;
            Py_XDECREF(pos);
            if (rc < 0) return -2;
        }
    }
    PyObject *pos = PyDict_GetItemWithError(g->by_value, name);
    if (pos == NULL) return PyErr_Occurred() ? -2 : -1;
    return (int32_t)PyLong_AsSsize_t(pos);
}

static GraphIx *gx_of(PyObject *capsule) { return PyCapsule_GetPointer(capsule, GX); }

/* graph_index(operands) -> the index, or None when an operand names no instruction. */
PyObject *graph_index(PyObject *self, PyObject *args) {
    PyObject *operands;
    if (!PyArg_ParseTuple(args, "O!", &PyDict_Type, &operands)) return NULL;
    Py_ssize_t n = PyDict_GET_SIZE(operands);
    if (n >= INT32_MAX / 2) Py_RETURN_NONE;
    GraphIx *g = PyMem_Calloc(1, sizeof(GraphIx));
    if (g == NULL) return PyErr_NoMemory();
    g->n = n;
    size_t cap = 16;
    while (cap < (size_t)n * 2) cap <<= 1;
    g->mask = cap - 1;
    g->slot_keys = PyMem_Calloc(cap, sizeof(PyObject *));
    g->slot_vals = PyMem_Malloc(cap * sizeof(int32_t));
    g->op_start = PyMem_Malloc((n + 1) * sizeof(int32_t));
    g->names = PyList_New(n);
    PyObject *capsule = NULL;
    if (!g->slot_keys || !g->slot_vals || !g->op_start || !g->names) goto fail;
    capsule = PyCapsule_New(g, GX, gx_free);
    if (capsule == NULL) goto fail;
    /* the names, and the size of all operand lists */
    Py_ssize_t pos = 0, i = 0, total = 0;
    PyObject *name, *ops;
    while (PyDict_Next(operands, &pos, &name, &ops)) {
        if (!PyList_Check(ops) && !PyTuple_Check(ops)) {
            PyErr_SetString(PyExc_TypeError, "operand lists must be lists or tuples");
            goto fail_capsule;
        }
        Py_INCREF(name);
        PyList_SET_ITEM(g->names, i, name);
        size_t s = slot_of(g, name);
        while (g->slot_keys[s] != NULL) s = (s + 1) & g->mask;
        g->slot_keys[s] = name;
        g->slot_vals[s] = (int32_t)i;
        total += OPS_SIZE(ops);
        i++;
    }
    if (total >= INT32_MAX) {
        Py_DECREF(capsule);
        Py_RETURN_NONE;
    }
    g->op_idx = PyMem_Malloc((total ? total : 1) * sizeof(int32_t));
    if (g->op_idx == NULL) {
        PyErr_NoMemory();
        goto fail_capsule;
    }
    pos = 0, i = 0;
    int32_t at = 0;
    int ordered = 1;
    while (PyDict_Next(operands, &pos, &name, &ops)) {
        g->op_start[i] = at;
        for (Py_ssize_t k = 0; k < OPS_SIZE(ops); k++) {
            int32_t j = gx_find(g, OPS_ITEM(ops, k));
            if (j == -2) goto fail_capsule;
            if (j == -1) {
                Py_DECREF(capsule);
                Py_RETURN_NONE;
            }
            if (j >= i) ordered = 0;
            g->op_idx[at++] = j;
        }
        i++;
    }
    g->op_start[n] = at;
    g->ordered = ordered;
    return capsule;
fail:
    if (!PyErr_Occurred()) PyErr_NoMemory();
    if (capsule == NULL) {
        Py_XDECREF(g->names);
        PyMem_Free(g->slot_keys);
        PyMem_Free(g->slot_vals);
        PyMem_Free(g->op_start);
        PyMem_Free(g);
        return NULL;
    }
fail_capsule:
    Py_DECREF(capsule);
    return NULL;
}

/* index_ordered(ix) -> whether every operand list names only instructions defined before it. */
PyObject *index_ordered(PyObject *self, PyObject *capsule) {
    GraphIx *g = gx_of(capsule);
    if (g == NULL) return NULL;
    return PyBool_FromLong(g->ordered);
}

/* Positions of a list of names, or -1 with an error (KeyError when one names no instruction). */
static int32_t *positions(GraphIx *g, PyObject *list) {
    Py_ssize_t m = PyList_GET_SIZE(list);
    int32_t *out = PyMem_Malloc((m ? m : 1) * sizeof(int32_t));
    if (out == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t k = 0; k < m; k++) {
        int32_t j = gx_find(g, PyList_GET_ITEM(list, k));
        if (j < 0) {
            if (j == -1) PyErr_SetObject(PyExc_KeyError, PyList_GET_ITEM(list, k));
            PyMem_Free(out);
            return NULL;
        }
        out[k] = j;
    }
    return out;
}

/* index_live_count(ix, roots) -> how many nodes the roots and what they depend on are (live_nodes' size). */
PyObject *index_live_count(PyObject *self, PyObject *args) {
    PyObject *capsule, *roots;
    if (!PyArg_ParseTuple(args, "OO!", &capsule, &PyList_Type, &roots)) return NULL;
    GraphIx *g = gx_of(capsule);
    if (g == NULL) return NULL;
    int32_t *stack = positions(g, roots);
    if (stack == NULL) return NULL;
    uint8_t *seen = PyMem_Calloc(g->n ? g->n : 1, 1);
    int32_t *more = PyMem_Malloc((g->n + PyList_GET_SIZE(roots) + 1) * sizeof(int32_t));
    if (seen == NULL || more == NULL) {
        PyMem_Free(stack);
        PyMem_Free(seen);
        PyMem_Free(more);
        return PyErr_NoMemory();
    }
    Py_ssize_t top = 0, count = 0;
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(roots); k++)
        if (!seen[stack[k]]) {
            seen[stack[k]] = 1;
            more[top++] = stack[k];
            count++;
        }
    while (top) {
        int32_t v = more[--top];
        for (int32_t e = g->op_start[v]; e < g->op_start[v + 1]; e++) {
            int32_t o = g->op_idx[e];
            if (!seen[o]) {
                seen[o] = 1;
                more[top++] = o;
                count++;
            }
        }
    }
    PyMem_Free(stack);
    PyMem_Free(seen);
    PyMem_Free(more);
    return PyLong_FromSsize_t(count);
}

/* index_postorder(ix, root) -> the depth-first post-order from root, operands in order (postorder's list; the
   nodes it reached are the list's). */
PyObject *index_postorder(PyObject *self, PyObject *args) {
    PyObject *capsule, *root;
    if (!PyArg_ParseTuple(args, "OO", &capsule, &root)) return NULL;
    GraphIx *g = gx_of(capsule);
    if (g == NULL) return NULL;
    int32_t r = gx_find(g, root);
    if (r < 0) {
        if (r == -1) PyErr_SetObject(PyExc_KeyError, root);
        return NULL;
    }
    uint8_t *seen = PyMem_Calloc(g->n, 1);
    int32_t *node = PyMem_Malloc(g->n * sizeof(int32_t)), *next = PyMem_Malloc(g->n * sizeof(int32_t));
    PyObject *order = PyList_New(0);
    if (!seen || !node || !next || !order) goto fail;
    Py_ssize_t depth = 1;
    node[0] = r;
    next[0] = g->op_start[r];
    seen[r] = 1;
    while (depth) {
        int32_t v = node[depth - 1];
        int pushed = 0;
        while (next[depth - 1] < g->op_start[v + 1]) {
            int32_t o = g->op_idx[next[depth - 1]++];
            if (!seen[o]) {
                seen[o] = 1;
                node[depth] = o;
                next[depth] = g->op_start[o];
                depth++;
                pushed = 1;
                break;
            }
        }
        if (!pushed) {
            if (PyList_Append(order, PyList_GET_ITEM(g->names, v)) < 0) goto fail;
            depth--;
        }
    }
    PyMem_Free(seen);
    PyMem_Free(node);
    PyMem_Free(next);
    return order;
fail:
    if (!PyErr_Occurred()) PyErr_NoMemory();
    PyMem_Free(seen);
    PyMem_Free(node);
    PyMem_Free(next);
    Py_XDECREF(order);
    return NULL;
}

/* index_number_params(ix, stack, root, params, ids): number_params over the index, with seen = {root}. */
PyObject *index_number_params(PyObject *self, PyObject *args) {
    PyObject *capsule, *stack_list, *root, *params, *ids;
    if (!PyArg_ParseTuple(args, "OO!OO!O!", &capsule, &PyList_Type, &stack_list, &root, &PySet_Type, &params,
                          &PyDict_Type, &ids))
        return NULL;
    GraphIx *g = gx_of(capsule);
    if (g == NULL) return NULL;
    int32_t r = gx_find(g, root);
    if (r < 0) {
        if (r == -1) PyErr_SetObject(PyExc_KeyError, root);
        return NULL;
    }
    Py_ssize_t m = PyList_GET_SIZE(stack_list);
    int32_t *first = positions(g, stack_list);
    if (first == NULL) return NULL;
    uint8_t *seen = PyMem_Calloc(g->n, 1), *is_param = PyMem_Calloc(g->n, 1);
    /* each node is pushed at most once per user edge: operands total plus the first stack */
    int32_t *stack = PyMem_Malloc((g->op_start[g->n] + m + 1) * sizeof(int32_t));
    if (!seen || !is_param || !stack) {
        PyErr_NoMemory();
        goto fail;
    }
    Py_ssize_t pos = 0;
    Py_hash_t hash;
    PyObject *p;
    while (_PySet_NextEntry(params, &pos, &p, &hash)) {
        int32_t j = gx_find(g, p);
        if (j == -2) goto fail;
        if (j >= 0) is_param[j] = 1;
    }
    seen[r] = 1;
    Py_ssize_t top = m;
    memcpy(stack, first, m * sizeof(int32_t));
    while (top) {
        int32_t v = stack[--top];
        if (seen[v]) continue;
        seen[v] = 1;
        if (is_param[v]) {
            PyObject *number = PyLong_FromSsize_t(PyDict_GET_SIZE(ids));
            int rc = number ? PyDict_SetItem(ids, PyList_GET_ITEM(g->names, v), number) : -1;
            Py_XDECREF(number);
            if (rc < 0) goto fail;
        }
        for (int32_t e = g->op_start[v + 1] - 1; e >= g->op_start[v]; e--)
            if (!seen[g->op_idx[e]]) stack[top++] = g->op_idx[e];
    }
    PyMem_Free(first);
    PyMem_Free(seen);
    PyMem_Free(is_param);
    PyMem_Free(stack);
    Py_RETURN_NONE;
fail:
    PyMem_Free(first);
    PyMem_Free(seen);
    PyMem_Free(is_param);
    PyMem_Free(stack);
    return NULL;
}

/* For hashes.c: the index behind a capsule, its size, names, operands and per-node texts. */
int gx_view(PyObject *capsule, Py_ssize_t *n, PyObject **names, int32_t **op_start, int32_t **op_idx, int *ordered) {
    GraphIx *g = gx_of(capsule);
    if (g == NULL) return -1;
    *n = g->n;
    *names = g->names;
    *op_start = g->op_start;
    *op_idx = g->op_idx;
    *ordered = g->ordered;
    return 0;
}


/* The position of a name in the index, -1 when it names no instruction, -2 with an error set. */
Py_ssize_t gx_position(PyObject *capsule, PyObject *name) {
    GraphIx *g = gx_of(capsule);
    if (g == NULL) return -2;
    return gx_find(g, name);
}

/* The same, its table of names made again first when index_compact dropped it (the matchers look up many). */
Py_ssize_t gx_position_tabled(PyObject *capsule, PyObject *name) {
    GraphIx *g = gx_of(capsule);
    if (g == NULL || gx_table(g) < 0) return -2;
    return gx_find(g, name);
}

/* index_users(ix) -> users_of(operands) over the index: each name's users in text order, each once. */
PyObject *index_users(PyObject *self, PyObject *capsule) {
    GraphIx *g = gx_of(capsule);
    if (g == NULL) return NULL;
    Py_ssize_t n = g->n;
    PyObject **lists = PyMem_Calloc(n ? n : 1, sizeof(PyObject *));
    int32_t *last = PyMem_Malloc((n ? n : 1) * sizeof(int32_t)); /* the last user appended to each list */
    PyObject *users = NULL;
    if (lists == NULL || last == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        last[i] = -1;
        if ((lists[i] = PyList_New(0)) == NULL) goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        for (int32_t e = g->op_start[i]; e < g->op_start[i + 1]; e++) {
            int32_t o = g->op_idx[e];
            if (last[o] == i) continue; /* dict.fromkeys(ops): an operand used twice makes one entry */
            last[o] = (int32_t)i;
            if (PyList_Append(lists[o], PyList_GET_ITEM(g->names, i)) < 0) goto done;
        }
    users = PyDict_New(); /* not _PyDict_NewPresized: in 3.11 it makes a map of general keys, 1.5x the size */
    for (Py_ssize_t i = 0; users != NULL && i < n; i++)
        if (PyDict_SetItem(users, PyList_GET_ITEM(g->names, i), lists[i]) < 0) Py_CLEAR(users);
done:
    if (lists != NULL)
        for (Py_ssize_t i = 0; i < n; i++) Py_XDECREF(lists[i]);
    PyMem_Free(lists);
    PyMem_Free(last);
    return users;
}

/* The users of every node as runs of positions (index_users' lists, as arrays). 0, or -1 with an error. */
static int gx_users(GraphIx *g) {
    if (g->u_start != NULL) return 0;
    Py_ssize_t n = g->n, total = g->op_start[n];
    int32_t *start = PyMem_Calloc(n + 2, sizeof(int32_t)), *idx = PyMem_Malloc((total ? total : 1) * sizeof(int32_t));
    int32_t *last = PyMem_Malloc((n ? n : 1) * sizeof(int32_t));
    if (start == NULL || idx == NULL || last == NULL) {
        PyMem_Free(start);
        PyMem_Free(idx);
        PyMem_Free(last);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) last[i] = -1;
    for (Py_ssize_t i = 0; i < n; i++) /* counts, each user once per operand (dict.fromkeys(ops)) */
        for (int32_t e = g->op_start[i]; e < g->op_start[i + 1]; e++) {
            int32_t o = g->op_idx[e];
            if (last[o] == i) continue;
            last[o] = (int32_t)i;
            start[o + 2]++;
        }
    for (Py_ssize_t i = 0; i < n; i++) start[i + 2] += start[i + 1];
    for (Py_ssize_t i = 0; i < n; i++) last[i] = -1;
    for (Py_ssize_t i = 0; i < n; i++) /* start[o + 1] is where o's next user goes */
        for (int32_t e = g->op_start[i]; e < g->op_start[i + 1]; e++) {
            int32_t o = g->op_idx[e];
            if (last[o] == i) continue;
            last[o] = (int32_t)i;
            idx[start[o + 1]++] = (int32_t)i;
        }
    PyMem_Free(last);
    g->u_start = start;
    g->u_idx = idx;
    return 0;
}

/* index_users_of(ix, name) -> index_users(ix)[name], a new list: the users of one name without a map of every
   node's list (a 300K-instruction comparison asks for a few hundred). KeyError for a name of no instruction. */
PyObject *index_users_of(PyObject *self, PyObject *args) {
    PyObject *capsule, *name;
    if (!PyArg_ParseTuple(args, "OO", &capsule, &name)) return NULL;
    GraphIx *g = gx_of(capsule);
    if (g == NULL || gx_table(g) < 0 || gx_users(g) < 0) return NULL;
    int32_t p = gx_find(g, name);
    if (p < 0) {
        if (p == -1) PyErr_SetObject(PyExc_KeyError, name);
        return NULL;
    }
    PyObject *out = PyList_New(g->u_start[p + 1] - g->u_start[p]);
    if (out == NULL) return NULL;
    for (int32_t e = g->u_start[p]; e < g->u_start[p + 1]; e++) {
        PyObject *u = PyList_GET_ITEM(g->names, g->u_idx[e]);
        Py_INCREF(u);
        PyList_SET_ITEM(out, e - g->u_start[p], u);
    }
    return out;
}

/* index_compact(ix): drop the table that finds a position by name (two thirds of the index's memory) once the
   walks that look many names up are done; the index answers the same, a name looked up by a scan. */
PyObject *index_compact(PyObject *self, PyObject *capsule) {
    GraphIx *g = gx_of(capsule);
    if (g == NULL) return NULL;
    PyMem_Free(g->slot_keys);
    PyMem_Free(g->slot_vals);
    g->slot_keys = NULL;
    g->slot_vals = NULL;
    Py_RETURN_NONE;
}

/* Positions by the address of their name object, for one call (the index's own table is dropped by index_compact
   before matching): two flat arrays, no string touched. */
typedef struct {
    PyObject **keys;
    int32_t *vals;
    size_t mask;
} AddrTable;

static int addr_table(AddrTable *t, const GraphIx *g) {
    size_t cap = 16;
    while (cap < (size_t)g->n * 2) cap <<= 1;
    t->mask = cap - 1;
    t->keys = PyMem_Calloc(cap, sizeof(PyObject *));
    t->vals = PyMem_Malloc(cap * sizeof(int32_t));
    if (t->keys == NULL || t->vals == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < g->n; i++) {
        PyObject *name = PyList_GET_ITEM(g->names, i);
        size_t s = (size_t)((((uintptr_t)name) >> 4) * 0x9E3779B97F4A7C15ull) & t->mask;
        while (t->keys[s] != NULL) s = (s + 1) & t->mask;
        t->keys[s] = name;
        t->vals[s] = (int32_t)i;
    }
    return 0;
}

static inline int32_t addr_find(const AddrTable *t, PyObject *name) {
    for (size_t s = (size_t)((((uintptr_t)name) >> 4) * 0x9E3779B97F4A7C15ull) & t->mask;; s = (s + 1) & t->mask) {
        PyObject *k = t->keys[s];
        if (k == name) return t->vals[s];
        if (k == NULL) return -1;
    }
}

/* The (name, instruction) entries of insts whose position has no pair (paired[pos] < 0), in insts' order; an
   entry is found by position when insts is in the index's order (the common case: no table probed), else by the
   table. 1 with *out set, 0 when a name is not an object of the index, -1 with an error. */
static int unpaired_entries(PyObject *insts, const GraphIx *g, const AddrTable *t, const int32_t *paired,
                            PyObject **out) {
    if ((*out = PyList_New(0)) == NULL) return -1;
    Py_ssize_t pos = 0, i = 0;
    PyObject *name, *inst;
    while (PyDict_Next(insts, &pos, &name, &inst)) {
        int32_t p = i < g->n && PyList_GET_ITEM(g->names, i) == name ? (int32_t)i : addr_find(t, name);
        i++;
        if (p < 0) {
            Py_CLEAR(*out);
            return 0;
        }
        if (paired[p] >= 0) continue;
        PyObject *e = PyTuple_Pack(2, name, inst);
        if (e == NULL || PyList_Append(*out, e) < 0) {
            Py_XDECREF(e);
            Py_CLEAR(*out);
            return -1;
        }
        Py_DECREF(e);
    }
    return 1;
}

/* index_unsettled(l2r, lix, rix, llabels, rlabels, linsts, rinsts) -> (unsettled_pairs(l2r, llabels, rlabels,
   lops, rops), the left (name, inst) entries without a pair, the right ones), over the two indexes: each pair and
   each label found by position, an operand's partner read from an array of positions instead of a probe of l2r,
   the unpaired instructions by a flag per position instead of a probe of l2r or r2l per name; or None (the caller
   takes the name-keyed walks) when a name of l2r, a labels map or insts is not the very object of the index's. */
PyObject *index_unsettled(PyObject *self, PyObject *args) {
    PyObject *l2r, *lcap, *rcap, *llabels, *rlabels, *linsts, *rinsts;
    if (!PyArg_ParseTuple(args, "O!OOO!O!O!O!", &PyDict_Type, &l2r, &lcap, &rcap, &PyDict_Type, &llabels,
                          &PyDict_Type, &rlabels, &PyDict_Type, &linsts, &PyDict_Type, &rinsts))
        return NULL;
    GraphIx *lg = gx_of(lcap), *rg = lg ? gx_of(rcap) : NULL;
    if (rg == NULL) return NULL;
    Py_ssize_t npairs = PyDict_GET_SIZE(l2r), ln = lg->n, rn = rg->n;
    AddrTable lt = {0}, rt = {0};
    int32_t *partner = PyMem_Malloc((ln ? ln : 1) * sizeof(int32_t));
    int32_t *rpartner = PyMem_Malloc((rn ? rn : 1) * sizeof(int32_t));
    PyObject *pairs = NULL, *lonly = NULL, *ronly = NULL;
    int32_t *pl = PyMem_Malloc((npairs ? npairs : 1) * sizeof(int32_t));
    int32_t *pr = PyMem_Malloc((npairs ? npairs : 1) * sizeof(int32_t));
    PyObject **llab = PyMem_Calloc(ln ? ln : 1, sizeof(PyObject *));
    PyObject **rlab = PyMem_Calloc(rn ? rn : 1, sizeof(PyObject *));
    PyObject *out = NULL, *l, *r;
    int fallback = 0;
    if (!partner || !rpartner || !pl || !pr || !llab || !rlab) {
        PyErr_NoMemory();
        goto done;
    }
    if (addr_table(&lt, lg) < 0 || addr_table(&rt, rg) < 0) goto done;
    for (Py_ssize_t i = 0; i < ln; i++) partner[i] = -1;
    for (Py_ssize_t i = 0; i < rn; i++) rpartner[i] = -1;
    /* the labels by position (borrowed: the maps outlive this call) */
    Py_ssize_t pos = 0;
    while (!fallback && PyDict_Next(llabels, &pos, &l, &r)) {
        int32_t p = addr_find(&lt, l);
        if (p < 0) fallback = 1;
        else llab[p] = r;
    }
    pos = 0;
    while (!fallback && PyDict_Next(rlabels, &pos, &l, &r)) {
        int32_t p = addr_find(&rt, l);
        if (p < 0) fallback = 1;
        else rlab[p] = r;
    }
    /* the pairs as positions, in l2r's order */
    pos = 0;
    Py_ssize_t k = 0;
    while (!fallback && PyDict_Next(l2r, &pos, &l, &r)) {
        int32_t a = addr_find(&lt, l), b = addr_find(&rt, r);
        if (a < 0 || b < 0 || llab[a] == NULL || rlab[b] == NULL) fallback = 1;
        else {
            pl[k] = a;
            pr[k] = b;
            partner[a] = b;
            rpartner[b] = a;
            k++;
        }
    }
    if (!fallback) {
        int rc = unpaired_entries(linsts, lg, &lt, partner, &lonly);
        if (rc == 1) rc = unpaired_entries(rinsts, rg, &rt, rpartner, &ronly);
        if (rc < 0) goto done;
        fallback = rc == 0;
    }
    if (fallback) {
        out = Py_None;
        Py_INCREF(out);
        goto done;
    }
    if ((pairs = PyList_New(0)) == NULL) goto done;
    for (Py_ssize_t j = 0; j < k; j++) {
        int32_t a = pl[j], b = pr[j];
        int same = PyObject_RichCompareBool(llab[a], rlab[b], Py_EQ);
        if (same < 0) goto done;
        if (same) { /* operands paired with each other position by position, over the shorter list (zip) */
            int32_t la = lg->op_start[a], le = lg->op_start[a + 1], ra = rg->op_start[b], re = rg->op_start[b + 1];
            for (; la < le && ra < re; la++, ra++)
                if (partner[lg->op_idx[la]] != rg->op_idx[ra]) {
                    same = 0;
                    break;
                }
            if (same) continue;
        }
        PyObject *t = PyTuple_Pack(2, PyList_GET_ITEM(lg->names, a), PyList_GET_ITEM(rg->names, b));
        if (t == NULL || PyList_Append(pairs, t) < 0) {
            Py_XDECREF(t);
            goto done;
        }
        Py_DECREF(t);
    }
    out = PyTuple_Pack(3, pairs, lonly, ronly);
done:
    Py_XDECREF(pairs);
    Py_XDECREF(lonly);
    Py_XDECREF(ronly);
    PyMem_Free(rpartner);
    PyMem_Free(lt.keys);
    PyMem_Free(lt.vals);
    PyMem_Free(rt.keys);
    PyMem_Free(rt.vals);
    PyMem_Free(partner);
    PyMem_Free(pl);
    PyMem_Free(pr);
    PyMem_Free(llab);
    PyMem_Free(rlab);
    return out;
}
