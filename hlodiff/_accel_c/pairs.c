/* Matching over positions (hlodiff.diff.mapping.Matching's native mirror): the pairs of two computations that both
 * have a graph index (graphix.c), held as two arrays of partner positions beside the Matching's name-keyed dicts.
 *
 * Why: the matchers' walks ask, for every instruction and every operand, "is this name paired?" of dicts of 200K
 * entries keyed by name; each question is a probe of a table of hundreds of megabytes (a cache miss), and at 300K
 * instructions those probes were a third of the comparison's matching time. Here the question is an array read,
 * and an operand list is a run of positions of the index.
 *
 * The dicts stay the truth every Python reader sees: each pair made here is written to l2r and r2l at once,
 * in the order it is made (the dicts' order is the report's); a pair made in Python (Matching.add) is told to the
 * mirror (pairs_add). Matching.drop (after every matcher ran) forgets the mirror. A name the index does not hold
 * makes pairs_new decline (None) and pairs_add answer False: the caller then takes the name-keyed walks.
 */
#include "accel.h"

struct Pairs {
    PyObject *lcap, *rcap;       /* the two graph indexes */
    PyObject *l2r, *r2l;         /* the Matching's dicts */
    Py_ssize_t ln, rn;
    PyObject *lnames, *rnames;   /* borrowed from the indexes: position -> name */
    int32_t *lstart, *lidx, *rstart, *ridx;
    int32_t *lpart, *rpart;      /* partner position, -1 when unpaired */
    uint8_t *settled;            /* left positions whose operand positions are all decided (top_down) */
    int32_t *log;                /* the left positions in the order they were paired: l2r's order */
    PyObject **lop, **rop;       /* each position's opcode (owned), read on the first top-down pass */
    int no_opcodes;              /* a node without an instruction: compatible() asks the dicts, as before */
    Py_ssize_t nlog;
    PyObject *orders[2];         /* the last order list asked about on each side, its size and positions */
    Py_ssize_t order_n[2];
    int32_t *order_pos[2];
};

static const char *PAIRS = "hlodiff.pairs";

static void pairs_free(PyObject *capsule) {
    Pairs *p = PyCapsule_GetPointer(capsule, PAIRS);
    if (p == NULL) return;
    Py_XDECREF(p->lcap);
    Py_XDECREF(p->rcap);
    Py_XDECREF(p->l2r);
    Py_XDECREF(p->r2l);
    for (int s = 0; s < 2; s++) {
        Py_XDECREF(p->orders[s]);
        PyMem_Free(p->order_pos[s]);
    }
    PyMem_Free(p->lpart);
    PyMem_Free(p->rpart);
    PyMem_Free(p->settled);
    PyMem_Free(p->log);
    for (Py_ssize_t i = 0; p->lop != NULL && i < p->ln; i++) Py_XDECREF(p->lop[i]);
    for (Py_ssize_t i = 0; p->rop != NULL && i < p->rn; i++) Py_XDECREF(p->rop[i]);
    PyMem_Free(p->lop);
    PyMem_Free(p->rop);
    PyMem_Free(p);
}

static Pairs *pairs_of(PyObject *capsule) { return PyCapsule_GetPointer(capsule, PAIRS); }

/* Record a pair of positions (both free: checked by the caller; so at most min(ln, rn) of them, the log's size). */
static inline void mark(Pairs *p, int32_t a, int32_t b) {
    p->lpart[a] = b;
    p->rpart[b] = a;
    p->log[p->nlog++] = a;
}

/* Pair positions a and b when both are free: the arrays and the dicts. 1 paired, 0 not, -1 error. */
static int pair_ix(Pairs *p, int32_t a, int32_t b) {
    if (p->lpart[a] >= 0 || p->rpart[b] >= 0) return 0;
    PyObject *l = PyList_GET_ITEM(p->lnames, a), *r = PyList_GET_ITEM(p->rnames, b);
    if (PyDict_SetItem(p->l2r, l, r) < 0 || PyDict_SetItem(p->r2l, r, l) < 0) return -1;
    mark(p, a, b);
    return 1;
}

/* The positions of a left and a right name: 0, -1 when one is not a node of its index, -2 with an error. */
static int positions_of(Pairs *p, PyObject *l, PyObject *r, int32_t *a, int32_t *b) {
    Py_ssize_t x = gx_position_tabled(p->lcap, l), y = x >= 0 ? gx_position_tabled(p->rcap, r) : x;
    if (x == -2 || y == -2) return -2;
    if (x < 0 || y < 0) return -1;
    *a = (int32_t)x;
    *b = (int32_t)y;
    return 0;
}

/* For matching.c's content choice: pair two names through the mirror. 1 paired, 0 not, -1 error (a name of no
   node is an error here: the free lists it pairs come from the indexes' operand lists). */
int pairs_pair_names(Pairs *p, PyObject *l, PyObject *r) {
    int32_t a, b;
    int rc = positions_of(p, l, r, &a, &b);
    if (rc == -1) PyErr_SetObject(PyExc_KeyError, l);
    if (rc < 0) return -1;
    return pair_ix(p, a, b);
}

/* pairs_new(lix, rix, l2r, r2l) -> the mirror of the pairs already in the dicts, or None when a name of
   them is not a node of its index. */
PyObject *pairs_new(PyObject *self, PyObject *args) {
    PyObject *lcap, *rcap, *l2r, *r2l;
    if (!PyArg_ParseTuple(args, "OOO!O!", &lcap, &rcap, &PyDict_Type, &l2r, &PyDict_Type, &r2l))
        return NULL;
    Pairs *p = PyMem_Calloc(1, sizeof(Pairs));
    if (p == NULL) return PyErr_NoMemory();
    PyObject *capsule = PyCapsule_New(p, PAIRS, pairs_free);
    if (capsule == NULL) {
        PyMem_Free(p);
        return NULL;
    }
    int lo, ro;
    if (gx_view(lcap, &p->ln, &p->lnames, &p->lstart, &p->lidx, &lo) < 0 ||
        gx_view(rcap, &p->rn, &p->rnames, &p->rstart, &p->ridx, &ro) < 0)
        goto fail;
    Py_INCREF(lcap);
    Py_INCREF(rcap);
    Py_INCREF(l2r);
    Py_INCREF(r2l);
    p->lcap = lcap;
    p->rcap = rcap;
    p->l2r = l2r;
    p->r2l = r2l;
    p->lpart = PyMem_Malloc((p->ln ? p->ln : 1) * sizeof(int32_t));
    p->rpart = PyMem_Malloc((p->rn ? p->rn : 1) * sizeof(int32_t));
    p->settled = PyMem_Calloc(p->ln ? p->ln : 1, 1);
    p->log = PyMem_Malloc(((p->ln < p->rn ? p->ln : p->rn) + 1) * sizeof(int32_t));
    if (!p->lpart || !p->rpart || !p->settled || !p->log) {
        PyErr_NoMemory();
        goto fail;
    }
    memset(p->lpart, 0xff, (p->ln ? p->ln : 1) * sizeof(int32_t));
    memset(p->rpart, 0xff, (p->rn ? p->rn : 1) * sizeof(int32_t));
    Py_ssize_t pos = 0;
    PyObject *l, *r;
    while (PyDict_Next(l2r, &pos, &l, &r)) {
        int32_t a, b;
        int rc = positions_of(p, l, r, &a, &b);
        if (rc == -2) goto fail;
        if (rc == -1 || p->lpart[a] >= 0 || p->rpart[b] >= 0) {
            Py_DECREF(capsule);
            Py_RETURN_NONE;
        }
        mark(p, a, b);
    }
    return capsule;
fail:
    Py_DECREF(capsule);
    return NULL;
}

/* pairs_add(P, left, right) -> whether the mirror took the pair Matching.add just made (False: a name of no node,
   or a position already paired: the caller forgets the mirror). */
PyObject *pairs_add(PyObject *self, PyObject *args) {
    PyObject *capsule, *l, *r;
    if (!PyArg_ParseTuple(args, "OOO", &capsule, &l, &r)) return NULL;
    Pairs *p = pairs_of(capsule);
    if (p == NULL) return NULL;
    int32_t a, b;
    int rc = positions_of(p, l, r, &a, &b);
    if (rc == -2) return NULL;
    if (rc == -1 || p->lpart[a] >= 0 || p->rpart[b] >= 0) Py_RETURN_FALSE;
    mark(p, a, b);
    Py_RETURN_TRUE;
}

/* The positions of an order list of one side (0 left, 1 right), kept while the same list of the same size is asked
   about again (the matchers pass each computation's cached post-order list, never changed, once per pass). NULL
   with an error. */
static int32_t *order_of(Pairs *p, PyObject *order, int side) {
    Py_ssize_t n = PyList_GET_SIZE(order);
    if (p->orders[side] == order && p->order_n[side] == n && p->order_pos[side] != NULL) return p->order_pos[side];
    int32_t *pos = PyMem_Malloc((n ? n : 1) * sizeof(int32_t));
    if (pos == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    PyObject *cap = side ? p->rcap : p->lcap, *names = side ? p->rnames : p->lnames;
    Py_ssize_t size = side ? p->rn : p->ln;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *name = PyList_GET_ITEM(order, i);
        Py_ssize_t x = i < size && PyList_GET_ITEM(names, i) == name ? i : gx_position_tabled(cap, name);
        if (x < 0) {
            if (x == -1) PyErr_SetObject(PyExc_KeyError, name);
            PyMem_Free(pos);
            return NULL;
        }
        pos[i] = (int32_t)x;
    }
    Py_XDECREF(p->orders[side]);
    PyMem_Free(p->order_pos[side]);
    Py_INCREF(order);
    p->orders[side] = order;
    p->order_n[side] = n;
    p->order_pos[side] = pos;
    return pos;
}

/* pairs_unpaired(P, order, side) -> the names of order (side 0: left, 1: right) without a pair, in order. */
PyObject *pairs_unpaired(PyObject *self, PyObject *args) {
    PyObject *capsule, *order;
    int side;
    if (!PyArg_ParseTuple(args, "OO!i", &capsule, &PyList_Type, &order, &side)) return NULL;
    Pairs *p = pairs_of(capsule);
    if (p == NULL) return NULL;
    int32_t *pos = order_of(p, order, side != 0);
    if (pos == NULL) return NULL;
    const int32_t *part = side ? p->rpart : p->lpart;
    PyObject *out = PyList_New(0);
    if (out == NULL) return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(order); i++)
        if (part[pos[i]] < 0 && PyList_Append(out, PyList_GET_ITEM(order, i)) < 0) {
            Py_DECREF(out);
            return NULL;
        }
    return out;
}

/* matchers._match_equal_subgraphs over positions: pair a and b, then their free operands at equal positions,
   down (a stack of position pairs). force: a and b may be paired with each other already; descend anyway. */
static int equal_ix(Pairs *p, int32_t a, int32_t b, int force) {
    Py_ssize_t cap = 64, top = 0;
    int32_t *stack = PyMem_Malloc(cap * 2 * sizeof(int32_t));
    if (stack == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    stack[0] = a;
    stack[1] = b;
    top = 1;
    while (top) {
        top--;
        int32_t l = stack[2 * top], r = stack[2 * top + 1];
        int added = pair_ix(p, l, r);
        if (added < 0) goto fail;
        if (added == 0 && !(force && p->lpart[l] == r)) continue;
        force = 0;
        int32_t la = p->lstart[l], le = p->lstart[l + 1], ra = p->rstart[r], re = p->rstart[r + 1];
        for (; la < le && ra < re; la++, ra++) {
            int32_t lo = p->lidx[la], ro = p->ridx[ra];
            if (p->lpart[lo] >= 0 || p->rpart[ro] >= 0) continue;
            if (top == cap) {
                int32_t *more = PyMem_Realloc(stack, cap * 4 * sizeof(int32_t));
                if (more == NULL) {
                    PyErr_NoMemory();
                    goto fail;
                }
                stack = more;
                cap *= 2;
            }
            stack[2 * top] = lo;
            stack[2 * top + 1] = ro;
            top++;
        }
    }
    PyMem_Free(stack);
    return 0;
fail:
    PyMem_Free(stack);
    return -1;
}

/* pairs_match_equal(P, left, right, force): match_equal through the mirror. */
PyObject *pairs_match_equal(PyObject *self, PyObject *args) {
    PyObject *capsule, *l, *r;
    int force;
    if (!PyArg_ParseTuple(args, "OOOp", &capsule, &l, &r, &force)) return NULL;
    Pairs *p = pairs_of(capsule);
    if (p == NULL) return NULL;
    int32_t a, b;
    int rc = positions_of(p, l, r, &a, &b);
    if (rc == -1) PyErr_SetObject(PyExc_KeyError, l);
    if (rc < 0 || equal_ix(p, a, b, force) < 0) return NULL;
    Py_RETURN_NONE;
}

/* pairs_exact_walk(P, order, lanon, rights_by, lefts_by, tied): exact_walk through the mirror. */
PyObject *pairs_exact_walk(PyObject *self, PyObject *args) {
    PyObject *capsule, *order, *lanon, *rights_by, *lefts_by, *tied;
    if (!PyArg_ParseTuple(args, "OO!O!O!O!O", &capsule, &PyList_Type, &order, &PyDict_Type, &lanon, &PyDict_Type,
                          &rights_by, &PyDict_Type, &lefts_by, &tied))
        return NULL;
    Pairs *p = pairs_of(capsule);
    if (p == NULL) return NULL;
    int32_t *pos = order_of(p, order, 0);
    if (pos == NULL) return NULL;
    Py_INCREF(order); /* the callback cannot free it under the walk */
    for (Py_ssize_t i = PyList_GET_SIZE(order) - 1; i >= 0; i--) {
        if (i >= PyList_GET_SIZE(order)) continue; /* the callback may not shrink order, but be safe */
        if (p->lpart[pos[i]] >= 0) continue;
        PyObject *name = PyList_GET_ITEM(order, i);
        PyObject *h = PyDict_GetItemWithError(lanon, name);
        if (h == NULL) {
            if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, name);
            goto fail;
        }
        PyObject *rights = PyDict_GetItemWithError(rights_by, h);
        if (rights == NULL) {
            if (PyErr_Occurred()) goto fail;
            continue;
        }
        PyObject *lefts = PyDict_GetItemWithError(lefts_by, h);
        if (lefts == NULL && PyErr_Occurred()) goto fail;
        PyObject *r, *l;
        Py_ssize_t nr = group_size(rights, &r), nl = group_size(lefts, &l);
        if (nr == 0) continue;
        if (nr == 1 && nl == 1) {
            Py_ssize_t b = gx_position_tabled(p->rcap, r);
            if (b < 0) {
                if (b == -1) PyErr_SetObject(PyExc_KeyError, r);
                goto fail;
            }
            if (p->rpart[b] < 0 && equal_ix(p, pos[i], (int32_t)b, 0) < 0) goto fail;
            continue;
        }
        Py_INCREF(h);
        PyObject *res = PyObject_CallFunctionObjArgs(tied, name, h, rights, NULL);
        Py_DECREF(h);
        if (res == NULL) goto fail;
        Py_DECREF(res);
        if ((pos = order_of(p, order, 0)) == NULL) goto fail; /* the callback may have asked about another list */
    }
    Py_DECREF(order);
    Py_RETURN_NONE;
fail:
    Py_DECREF(order);
    return NULL;
}

static int by_position(Pairs *p, int side, PyObject *map, PyObject **out);

/* Each position's opcode, read once from the instructions of both sides: 0, or -1 with an error. A node without
   an instruction (no such computation is made, but the dict walks only raise their KeyError for a pair they
   compare) sets no_opcodes: compatible() then asks the dicts pair by pair, as before. */
static int opcodes(Pairs *p, PyObject *linsts, PyObject *rinsts) {
    PyObject **got[2] = {NULL, NULL};
    for (int side = 0; side < 2; side++) {
        Py_ssize_t n = side ? p->rn : p->ln;
        PyObject **ops = PyMem_Calloc(n ? n : 1, sizeof(PyObject *));
        if (ops == NULL) {
            PyErr_NoMemory();
            goto fail;
        }
        got[side] = ops;
        int rc = by_position(p, side, side ? rinsts : linsts, ops); /* borrowed instructions until replaced */
        for (Py_ssize_t i = 0; rc == 1 && i < n; i++)
            if (ops[i] == NULL) rc = 0;
        if (rc < 0) goto fail_borrowed;
        if (rc == 0) {
            p->no_opcodes = 1;
            PyMem_Free(got[0]);
            PyMem_Free(got[1]);
            return 0;
        }
    }
    for (int side = 0; side < 2; side++) {
        Py_ssize_t n = side ? p->rn : p->ln;
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *op = inst_attr(got[side][i], s_opcode);
            if (op == NULL) { /* the opcodes read so far are owned, the rest borrowed */
                for (int s = 0; s <= side; s++)
                    for (Py_ssize_t k = 0; k < (s < side ? p->ln : i); k++) Py_DECREF(got[s][k]);
                goto fail_borrowed;
            }
            got[side][i] = op;
        }
    }
    p->lop = got[0];
    p->rop = got[1];
    return 0;
fail_borrowed:
fail:
    PyMem_Free(got[0]);
    PyMem_Free(got[1]);
    return -1;
}

/* matchers._compatible by position: the same opcode, a parameter against a constant, or the same anonymous hash
   (looked up only when the opcodes differ). 1, 0, -1 with an error. */
static int compatible_ix(Pairs *p, int32_t lo, int32_t ro, PyObject *lanon, PyObject *ranon) {
    PyObject *a = p->lop[lo], *b = p->rop[ro];
    if (a == b) return 1;
    int ok = PyObject_RichCompareBool(a, b, Py_EQ);
    if (ok != 0) return ok;
    if (PyUnicode_Check(a) && PyUnicode_Check(b)) {
        int lp = PyUnicode_Compare(a, s_parameter) == 0, rp = PyUnicode_Compare(b, s_parameter) == 0;
        int lc = PyUnicode_Compare(a, s_constant) == 0, rc = PyUnicode_Compare(b, s_constant) == 0;
        if ((lp && rc) || (lc && rp)) return 1;
    }
    PyObject *l = PyList_GET_ITEM(p->lnames, lo), *r = PyList_GET_ITEM(p->rnames, ro);
    PyObject *x = PyDict_GetItemWithError(lanon, l), *y = x ? PyDict_GetItemWithError(ranon, r) : NULL;
    if (y == NULL) {
        if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, x ? r : l);
        return -1;
    }
    return PyObject_RichCompareBool(x, y, Py_EQ);
}

/* pairs_top_down(P, order, root, handle, linsts, rinsts, lanon, ranon, lops_of, rops_of): top_down through
   the mirror: for each paired left position (users first) not settled, the operand positions free on both sides
   (over the shorter list); none: settled; one, or lists of other lengths: each paired here when still free and
   compatible; several: by content (matching.c), or handle(lname, rname, free) where the Python code decides. */
PyObject *pairs_top_down(PyObject *self, PyObject *args) {
    PyObject *capsule, *order, *root, *handle, *linsts, *rinsts, *lanon, *ranon, *lops_of, *rops_of;
    if (!PyArg_ParseTuple(args, "OO!OOO!O!O!O!O!O!", &capsule, &PyList_Type, &order, &root, &handle,
                          &PyDict_Type, &linsts, &PyDict_Type, &rinsts, &PyDict_Type, &lanon, &PyDict_Type, &ranon,
                          &PyDict_Type, &lops_of, &PyDict_Type, &rops_of))
        return NULL;
    Pairs *p = pairs_of(capsule);
    if (p == NULL) return NULL;
    int32_t *pos = order_of(p, order, 0);
    if (pos == NULL) return NULL;
    Py_ssize_t root_pos = gx_position_tabled(p->lcap, root);
    if (root_pos == -2) return NULL;
    Py_INCREF(order);
    for (Py_ssize_t i = PyList_GET_SIZE(order) - 1; i >= 0; i--) {
        if (i >= PyList_GET_SIZE(order)) continue; /* the handler may not shrink order, but be safe */
        int32_t a = pos[i], b = p->lpart[a];
        if (b < 0 || p->settled[a]) continue;
        int32_t la = p->lstart[a], le = p->lstart[a + 1], ra = p->rstart[b], re = p->rstart[b + 1];
        int same_len = le - la == re - ra;
        if (!same_len && a == root_pos) continue; /* outputs were added or removed: positions mean nothing */
        Py_ssize_t nfree = 0;
        for (; la < le && ra < re; la++, ra++)
            nfree += p->lpart[p->lidx[la]] < 0 && p->rpart[p->ridx[ra]] < 0;
        if (nfree == 0) {
            p->settled[a] = 1;
            continue;
        }
        if (nfree == 1 || !same_len) {
            /* in order, each when free now (free now is free when the list was read: pairs are never undone) */
            for (la = p->lstart[a], ra = p->rstart[b]; la < le && ra < re; la++, ra++) {
                int32_t lo = p->lidx[la], ro = p->ridx[ra];
                if (p->lpart[lo] >= 0 || p->rpart[ro] >= 0) continue;
                if (p->lop == NULL && !p->no_opcodes && opcodes(p, linsts, rinsts) < 0) goto fail;
                int ok = p->no_opcodes ? compatible(linsts, rinsts, lanon, ranon, PyList_GET_ITEM(p->lnames, lo),
                                                    PyList_GET_ITEM(p->rnames, ro))
                                       : compatible_ix(p, lo, ro, lanon, ranon);
                if (ok < 0 || (ok && pair_ix(p, lo, ro) < 0)) goto fail;
            }
            continue;
        }
        /* several that may have traded places: the free pairs as names, for the content choice */
        PyObject *free = PyList_New(0);
        if (free == NULL) goto fail;
        for (la = p->lstart[a], ra = p->rstart[b]; la < le && ra < re; la++, ra++) {
            int32_t lo = p->lidx[la], ro = p->ridx[ra];
            if (p->lpart[lo] >= 0 || p->rpart[ro] >= 0) continue;
            PyObject *t = PyTuple_Pack(2, PyList_GET_ITEM(p->lnames, lo), PyList_GET_ITEM(p->rnames, ro));
            if (t == NULL || PyList_Append(free, t) < 0) {
                Py_XDECREF(t);
                Py_DECREF(free);
                goto fail;
            }
            Py_DECREF(t);
        }
        int rc = content_choice(free, linsts, rinsts, lops_of, rops_of, lanon, ranon, p->l2r, p->r2l, p);
        if (rc == 0) { /* a choice the Python code makes (fusions, long lists) */
            PyObject *l = PyList_GET_ITEM(p->lnames, a), *r = PyList_GET_ITEM(p->rnames, b);
            Py_INCREF(l);
            Py_INCREF(r);
            PyObject *res = PyObject_CallFunctionObjArgs(handle, l, r, free, NULL);
            Py_DECREF(l);
            Py_DECREF(r);
            rc = res == NULL ? -1 : 0;
            Py_XDECREF(res);
            if (rc == 0 && (pos = order_of(p, order, 0)) == NULL) rc = -1;
        }
        Py_DECREF(free);
        if (rc < 0) goto fail;
    }
    Py_DECREF(order);
    Py_RETURN_NONE;
fail:
    Py_DECREF(order);
    return NULL;
}

/* The values of a map keyed by one side's names, by position (borrowed: the map outlives the call); found by
   identity when the map is in the index's order (the common case), else by the index's table. 1, 0 when a key is
   not a node of the index (the caller declines), -1 with an error. */
static int by_position(Pairs *p, int side, PyObject *map, PyObject **out) {
    PyObject *cap = side ? p->rcap : p->lcap, *names = side ? p->rnames : p->lnames;
    Py_ssize_t n = side ? p->rn : p->ln, pos = 0, i = 0;
    PyObject *key, *value;
    while (PyDict_Next(map, &pos, &key, &value)) {
        Py_ssize_t x = i < n && PyList_GET_ITEM(names, i) == key ? i : gx_position_tabled(cap, key);
        i++;
        if (x == -2) return -1;
        if (x < 0) return 0;
        out[x] = value;
    }
    return 1;
}

/* The (name, instruction) entries of insts whose position has no pair, in insts' order. NULL with an error. */
static PyObject *unpaired_entries(Pairs *p, int side, PyObject *insts) {
    PyObject *cap = side ? p->rcap : p->lcap, *names = side ? p->rnames : p->lnames;
    const int32_t *part = side ? p->rpart : p->lpart;
    Py_ssize_t n = side ? p->rn : p->ln, pos = 0, i = 0;
    PyObject *out = PyList_New(0), *name, *inst;
    if (out == NULL) return NULL;
    while (PyDict_Next(insts, &pos, &name, &inst)) {
        Py_ssize_t x = i < n && PyList_GET_ITEM(names, i) == name ? i : gx_position_tabled(cap, name);
        i++;
        if (x == -2) goto fail;
        if (x >= 0 && part[x] >= 0) continue; /* by_position checked every name is a node */
        PyObject *e = PyTuple_Pack(2, name, inst);
        if (e == NULL || PyList_Append(out, e) < 0) {
            Py_XDECREF(e);
            goto fail;
        }
        Py_DECREF(e);
    }
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

/* pairs_unsettled(P, llabels, rlabels, linsts, rinsts) -> index_unsettled's answer from the mirror: (the pairs in
   l2r's order whose labels differ or whose operands are not paired with each other position by position, over the
   shorter list; the left (name, instruction) entries without a pair; the right ones), or None when a key of a map
   is not a node of its index or a node has no label (the caller takes the name-keyed walks). */
PyObject *pairs_unsettled(PyObject *self, PyObject *args) {
    PyObject *capsule, *llabels, *rlabels, *linsts, *rinsts;
    if (!PyArg_ParseTuple(args, "OO!O!O!O!", &capsule, &PyDict_Type, &llabels, &PyDict_Type, &rlabels, &PyDict_Type,
                          &linsts, &PyDict_Type, &rinsts))
        return NULL;
    Pairs *p = pairs_of(capsule);
    if (p == NULL) return NULL;
    PyObject **llab = PyMem_Calloc(p->ln ? p->ln : 1, sizeof(PyObject *));
    PyObject **rlab = PyMem_Calloc(p->rn ? p->rn : 1, sizeof(PyObject *));
    PyObject **scratch = PyMem_Calloc((p->ln > p->rn ? p->ln : p->rn) + 1, sizeof(PyObject *));
    PyObject *pairs = NULL, *lonly = NULL, *ronly = NULL, *out = NULL;
    if (!llab || !rlab || !scratch) {
        PyErr_NoMemory();
        goto done;
    }
    int rc = by_position(p, 0, llabels, llab);
    if (rc == 1) rc = by_position(p, 1, rlabels, rlab);
    if (rc == 1) rc = by_position(p, 0, linsts, scratch); /* every instruction a node: else decline */
    if (rc == 1) rc = by_position(p, 1, rinsts, scratch);
    if (rc < 0) goto done;
    for (Py_ssize_t k = 0; rc == 1 && k < p->nlog; k++)
        if (llab[p->log[k]] == NULL || rlab[p->lpart[p->log[k]]] == NULL) rc = 0;
    if (rc == 0) {
        out = Py_None;
        Py_INCREF(out);
        goto done;
    }
    if ((pairs = PyList_New(0)) == NULL) goto done;
    for (Py_ssize_t k = 0; k < p->nlog; k++) {
        int32_t a = p->log[k], b = p->lpart[a];
        int same = PyObject_RichCompareBool(llab[a], rlab[b], Py_EQ);
        if (same < 0) goto done;
        if (same) {
            int32_t la = p->lstart[a], le = p->lstart[a + 1], ra = p->rstart[b], re = p->rstart[b + 1];
            for (; la < le && ra < re; la++, ra++)
                if (p->lpart[p->lidx[la]] != p->ridx[ra]) {
                    same = 0;
                    break;
                }
            if (same) continue;
        }
        PyObject *t = PyTuple_Pack(2, PyList_GET_ITEM(p->lnames, a), PyList_GET_ITEM(p->rnames, b));
        if (t == NULL || PyList_Append(pairs, t) < 0) {
            Py_XDECREF(t);
            goto done;
        }
        Py_DECREF(t);
    }
    if ((lonly = unpaired_entries(p, 0, linsts)) == NULL || (ronly = unpaired_entries(p, 1, rinsts)) == NULL) goto done;
    out = PyTuple_Pack(3, pairs, lonly, ronly);
done:
    Py_XDECREF(pairs);
    Py_XDECREF(lonly);
    Py_XDECREF(ronly);
    PyMem_Free(llab);
    PyMem_Free(rlab);
    PyMem_Free(scratch);
    return out;
}

/* pairs_renamed_and_metadata(P, linsts, rinsts, count_metadata) -> renamed_and_metadata's counts from the mirror
   (how many pairs differ in name, and in their metadata attribute when asked), each instruction found by position;
   None when a name of insts is not a node of its index. */
PyObject *pairs_renamed_and_metadata(PyObject *self, PyObject *args) {
    PyObject *capsule, *linsts, *rinsts;
    int count_metadata;
    if (!PyArg_ParseTuple(args, "OO!O!p", &capsule, &PyDict_Type, &linsts, &PyDict_Type, &rinsts, &count_metadata))
        return NULL;
    Pairs *p = pairs_of(capsule);
    if (p == NULL) return NULL;
    PyObject **li = PyMem_Calloc(p->ln ? p->ln : 1, sizeof(PyObject *));
    PyObject **ri = PyMem_Calloc(p->rn ? p->rn : 1, sizeof(PyObject *));
    PyObject *out = NULL;
    Py_ssize_t renamed = 0, meta = 0;
    if (!li || !ri) {
        PyErr_NoMemory();
        goto done;
    }
    int rc = by_position(p, 0, linsts, li);
    if (rc == 1) rc = by_position(p, 1, rinsts, ri);
    if (rc < 0) goto done;
    for (Py_ssize_t k = 0; rc == 1 && k < p->nlog; k++) /* a KeyError where the dict walk raises one: decline */
        if (li[p->log[k]] == NULL || ri[p->lpart[p->log[k]]] == NULL) rc = 0;
    if (rc == 0) {
        out = Py_None;
        Py_INCREF(out);
        goto done;
    }
    for (Py_ssize_t k = 0; k < p->nlog; k++) {
        int32_t a = p->log[k], b = p->lpart[a];
        int same = PyObject_RichCompareBool(PyList_GET_ITEM(p->lnames, a), PyList_GET_ITEM(p->rnames, b), Py_EQ);
        if (same < 0) goto done;
        renamed += !same;
        if (!count_metadata) continue;
        int differ = metadata_differs(li[a], ri[b]);
        if (differ < 0) goto done;
        meta += differ;
    }
    out = Py_BuildValue("(nn)", renamed, meta);
done:
    PyMem_Free(li);
    PyMem_Free(ri);
    return out;
}
