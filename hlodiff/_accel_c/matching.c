/* Matching and classification (hlodiff.diff): l2r and r2l map paired names both ways (which matcher made a pair
 * is the Matching's record, kept in Python: mapping.Matching.made).
 */
#include "accel.h"

static int pair(PyObject *l2r, PyObject *r2l, PyObject *l, PyObject *r) {
    int a = PyDict_Contains(l2r, l), b = a == 0 ? PyDict_Contains(r2l, r) : a;
    if (a < 0 || b < 0) return -1;
    if (a || b) return 0;
    if (PyDict_SetItem(l2r, l, r) < 0 || PyDict_SetItem(r2l, r, l) < 0) return -1;
    return 1;
}

/* matchers._match_equal_subgraphs: pair left and right, then their free operands at equal positions, down. */
static int equal_subgraphs(PyObject *l2r, PyObject *r2l, PyObject *lops_of, PyObject *rops_of, PyObject *left,
                           PyObject *right, int force) {
    PyObject *stack = PyList_New(0);
    if (stack == NULL) return -1;
    PyObject *first = PyTuple_Pack(2, left, right);
    if (first == NULL || PyList_Append(stack, first) < 0) {
        Py_XDECREF(first);
        goto fail;
    }
    Py_DECREF(first);
    while (PyList_GET_SIZE(stack)) {
        PyObject *item = pop_last(stack);
        if (item == NULL) goto fail;
        PyObject *l = PyTuple_GET_ITEM(item, 0), *r = PyTuple_GET_ITEM(item, 1);
        int added = pair(l2r, r2l, l, r);
        if (added == 0 && force) {
            PyObject *partner = PyDict_GetItemWithError(l2r, l);
            if (partner == NULL && PyErr_Occurred()) added = -1;
            else if (partner != NULL) {
                int same = PyObject_RichCompareBool(partner, r, Py_EQ);
                added = same < 0 ? -1 : same;
            }
        }
        if (added <= 0) {
            Py_DECREF(item);
            if (added < 0) goto fail;
            continue;
        }
        force = 0;
        PyObject *lops = operands_of(lops_of, l), *rops = lops ? operands_of(rops_of, r) : NULL;
        if (rops == NULL) {
            Py_DECREF(item);
            goto fail;
        }
        Py_ssize_t n = OPS_SIZE(lops) < OPS_SIZE(rops) ? OPS_SIZE(lops) : OPS_SIZE(rops);
        for (Py_ssize_t k = 0; k < n; k++) {
            PyObject *lo = OPS_ITEM(lops, k), *ro = OPS_ITEM(rops, k);
            int a = PyDict_Contains(l2r, lo), b = a == 0 ? PyDict_Contains(r2l, ro) : a;
            if (a < 0 || b < 0) {
                Py_DECREF(item);
                goto fail;
            }
            if (a || b) continue;
            PyObject *next = PyTuple_Pack(2, lo, ro);
            if (next == NULL || PyList_Append(stack, next) < 0) {
                Py_XDECREF(next);
                Py_DECREF(item);
                goto fail;
            }
            Py_DECREF(next);
        }
        Py_DECREF(item);
    }
    Py_DECREF(stack);
    return 0;
fail:
    Py_DECREF(stack);
    return -1;
}

PyObject *match_equal(PyObject *self, PyObject *args) {
    PyObject *l2r, *r2l, *lops_of, *rops_of, *left, *right;
    int force;
    if (!PyArg_ParseTuple(args, "O!O!O!O!OOp", &PyDict_Type, &l2r, &PyDict_Type, &r2l, &PyDict_Type, &lops_of,
                          &PyDict_Type, &rops_of, &left, &right, &force))
        return NULL;
    if (equal_subgraphs(l2r, r2l, lops_of, rops_of, left, right, force) < 0) return NULL;
    Py_RETURN_NONE;
}

/* Names grouped by their hash, in order: hash -> the name when it alone has the hash (nearly every node of a big
   graph: 217K of them a side at 300K), else [names in order]. A one-element list per node was 2 x 217K list objects
   made and freed for the one question the walk asks of most groups: which single name is it? */
PyObject *group_by(PyObject *self, PyObject *args) {
    PyObject *order, *hashes;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &order, &PyDict_Type, &hashes)) return NULL;
    PyObject *groups = PyDict_New();
    if (groups == NULL) return NULL;
    Cursor at_hash = {hashes, 0}; /* hashes were filled in an order close to this one */
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(order); i++) {
        PyObject *name = PyList_GET_ITEM(order, i);
        PyObject *h = cursor_get(&at_hash, name);
        if (h == NULL) goto fail;
        PyObject *had = PyDict_SetDefault(groups, h, name);
        if (had == NULL) goto fail;
        if (had == name) continue; /* the first name of this hash */
        if (PyList_Check(had)) {
            if (PyList_Append(had, name) < 0) goto fail;
            continue;
        }
        PyObject *list = PyList_New(2); /* the second name: the group becomes a list */
        if (list == NULL) goto fail;
        Py_INCREF(had);
        Py_INCREF(name);
        PyList_SET_ITEM(list, 0, had);
        PyList_SET_ITEM(list, 1, name);
        int rc = PyDict_SetItem(groups, h, list);
        Py_DECREF(list);
        if (rc < 0) goto fail;
    }
    return groups;
fail:
    Py_DECREF(groups);
    return NULL;
}

/* A group of group_by: its size, and its only name when it has one (borrowed). */
Py_ssize_t group_size(PyObject *group, PyObject **only) {
    *only = NULL;
    if (group == NULL) return 0;
    if (PyList_Check(group)) {
        if (PyList_GET_SIZE(group) == 1) *only = PyList_GET_ITEM(group, 0);
        return PyList_GET_SIZE(group);
    }
    *only = group;
    return 1;
}

/* matchers.match_exact's walk, users first: a left name whose hash one right name alone shares (and no other
   left name) is paired with it and the subgraphs below are paired; a hash several share goes to tied(name). */
PyObject *exact_walk(PyObject *self, PyObject *args) {
    PyObject *order, *lanon, *rights_by, *lefts_by, *l2r, *r2l, *lops_of, *rops_of, *tied;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!O!O!O!O", &PyList_Type, &order, &PyDict_Type, &lanon, &PyDict_Type,
                          &rights_by, &PyDict_Type, &lefts_by, &PyDict_Type, &l2r, &PyDict_Type, &r2l, &PyDict_Type,
                          &lops_of, &PyDict_Type, &rops_of, &tied))
        return NULL;
    for (Py_ssize_t i = PyList_GET_SIZE(order) - 1; i >= 0; i--) {
        PyObject *name = PyList_GET_ITEM(order, i);
        int done = PyDict_Contains(l2r, name);
        if (done < 0) return NULL;
        if (done) continue;
        PyObject *h = PyDict_GetItemWithError(lanon, name);
        if (h == NULL) {
            if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, name);
            return NULL;
        }
        PyObject *rights = PyDict_GetItemWithError(rights_by, h);
        if (rights == NULL) {
            if (PyErr_Occurred()) return NULL;
            continue;
        }
        PyObject *lefts = PyDict_GetItemWithError(lefts_by, h);
        if (lefts == NULL && PyErr_Occurred()) return NULL;
        PyObject *r, *l;
        Py_ssize_t nr = group_size(rights, &r), nl = group_size(lefts, &l);
        if (nr == 0) continue;
        if (nr == 1 && nl == 1) {
            int taken = PyDict_Contains(r2l, r);
            if (taken < 0) return NULL;
            if (!taken) {
                Py_INCREF(r);
                int rc = equal_subgraphs(l2r, r2l, lops_of, rops_of, name, r, 0);
                Py_DECREF(r);
                if (rc < 0) return NULL;
            }
            continue;
        }
        PyObject *res = PyObject_CallFunctionObjArgs(tied, name, h, rights, NULL);
        if (res == NULL) return NULL;
        Py_DECREF(res);
    }
    Py_RETURN_NONE;
}

/* matchers.match_top_down's walk: for each paired left name (users first) not yet settled, the operand pairs at
   equal positions where neither side is paired; none: settled; one (or lists of other lengths): paired here when
   compatible; several that may have traded places: handle(lname, rname, free) decides by content. */
/* matchers._compatible: the same opcode, a parameter against a constant, or the same anonymous hash. 1, 0, or -1
   with an error (KeyError for a name not in the maps, as the Python code raises). */
int compatible(PyObject *linsts, PyObject *rinsts, PyObject *lanon, PyObject *ranon, PyObject *lo, PyObject *ro) {
    PyObject *li = PyDict_GetItemWithError(linsts, lo), *ri = li ? PyDict_GetItemWithError(rinsts, ro) : NULL;
    if (ri == NULL) {
        if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, li ? ro : lo);
        return -1;
    }
    PyObject *lop = inst_attr(li, s_opcode), *rop = lop ? inst_attr(ri, s_opcode) : NULL;
    int ok = -1;
    if (rop != NULL) {
        ok = PyObject_RichCompareBool(lop, rop, Py_EQ);
        if (ok == 0 && PyUnicode_Check(lop) && PyUnicode_Check(rop)) {
            int lp = PyUnicode_Compare(lop, s_parameter) == 0, rp = PyUnicode_Compare(rop, s_parameter) == 0;
            int lc = PyUnicode_Compare(lop, s_constant) == 0, rc = PyUnicode_Compare(rop, s_constant) == 0;
            ok = (lp && rc) || (lc && rp);
        }
    }
    Py_XDECREF(lop);
    Py_XDECREF(rop);
    if (ok != 0) return ok;
    PyObject *a = PyDict_GetItemWithError(lanon, lo), *b = a ? PyDict_GetItemWithError(ranon, ro) : NULL;
    if (b == NULL) {
        if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, a ? ro : lo);
        return -1;
    }
    return PyObject_RichCompareBool(a, b, Py_EQ);
}

/* matchers._pair_free_operands where no choice is to be made (one free pair, or operand lists of other lengths):
   each pair in order, when both are still free and compatible. */
static int pair_in_place(PyObject *free, PyObject *l2r, PyObject *r2l, PyObject *linsts, PyObject *rinsts, PyObject *lanon, PyObject *ranon) {
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(free); k++) {
        PyObject *t = PyList_GET_ITEM(free, k), *lo = PyTuple_GET_ITEM(t, 0), *ro = PyTuple_GET_ITEM(t, 1);
        int a = PyDict_Contains(l2r, lo), b = a == 0 ? PyDict_Contains(r2l, ro) : a;
        if (a < 0 || b < 0) return -1;
        if (a || b) continue;
        int ok = compatible(linsts, rinsts, lanon, ranon, lo, ro);
        if (ok < 0 || (ok && pair(l2r, r2l, lo, ro) < 0)) return -1;
    }
    return 0;
}

/* similarity.through_moves: the instruction whose value name carries, past bitcast/copy chains (borrowed
   reference; NULL with an error). */
static PyObject *through_moves(PyObject *insts, PyObject *ops_of, PyObject *name) {
    for (int step = 0; step < 64; step++) {
        PyObject *inst = PyDict_GetItemWithError(insts, name);
        if (inst == NULL) {
            if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, name);
            return NULL;
        }
        PyObject *ops = operands_of(ops_of, name);
        if (ops == NULL) return NULL;
        PyObject *opcode = inst_attr(inst, s_opcode);
        if (opcode == NULL) return NULL;
        int move = PyUnicode_Check(opcode) &&
                   (PyUnicode_CompareWithASCIIString(opcode, "bitcast") == 0 ||
                    PyUnicode_CompareWithASCIIString(opcode, "copy") == 0);
        Py_DECREF(opcode);
        if (!move || OPS_SIZE(ops) != 1) return name;
        name = OPS_ITEM(ops, 0);
    }
    return name;
}

/* The two sides' maps the content score reads. */
typedef struct {
    PyObject *linsts, *rinsts, *lops_of, *rops_of, *lanon, *ranon, *l2r;
} Sides;

/* similarity.score for two candidates; -2: a fusion pair (its bodies are compared in Python: the caller hands the
   whole choice back); -1: error. */
static long content_score(Sides *sd, PyObject *lname, PyObject *rname) {
    PyObject *lv = through_moves(sd->linsts, sd->lops_of, lname);
    PyObject *rv = lv ? through_moves(sd->rinsts, sd->rops_of, rname) : NULL;
    if (rv == NULL) return -1;
    PyObject *a = PyDict_GetItemWithError(sd->lanon, lv), *b = a ? PyDict_GetItemWithError(sd->ranon, rv) : NULL;
    if (b == NULL) {
        if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, a ? rv : lv);
        return -1;
    }
    int same = PyObject_RichCompareBool(a, b, Py_EQ);
    if (same < 0) return -1;
    if (same) return 100;
    PyObject *li = PyDict_GetItemWithError(sd->linsts, lv), *ri = li ? PyDict_GetItemWithError(sd->rinsts, rv) : NULL;
    if (ri == NULL) {
        if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, li ? rv : lv);
        return -1;
    }
    long points = 0;
    PyObject *lop = inst_attr(li, s_opcode), *rop = lop ? inst_attr(ri, s_opcode) : NULL;
    int eq = rop ? PyObject_RichCompareBool(lop, rop, Py_EQ) : -1;
    int fusion = eq > 0 && PyUnicode_Check(lop) && PyUnicode_CompareWithASCIIString(lop, "fusion") == 0;
    Py_XDECREF(lop);
    Py_XDECREF(rop);
    if (eq < 0) return -1;
    if (fusion) return -2;
    if (eq) points += 4;
    PyObject *ls = inst_attr(li, s_shape), *rs = ls ? inst_attr(ri, s_shape) : NULL;
    int shape_eq = rs ? PyObject_RichCompareBool(ls, rs, Py_EQ) : -1;
    if (shape_eq == 0) { /* equal without their layouts, as Shape.without_layout compares them */
        PyObject *lw = PyObject_CallMethod(ls, "without_layout", NULL);
        PyObject *rw = lw ? PyObject_CallMethod(rs, "without_layout", NULL) : NULL;
        shape_eq = rw ? PyObject_RichCompareBool(lw, rw, Py_EQ) : -1;
        Py_XDECREF(lw);
        Py_XDECREF(rw);
    }
    Py_XDECREF(ls);
    Py_XDECREF(rs);
    if (shape_eq < 0) return -1;
    if (shape_eq) points += 2;
    PyObject *lops = operands_of(sd->lops_of, lv), *rops = lops ? operands_of(sd->rops_of, rv) : NULL;
    if (rops == NULL) return -1;
    Py_ssize_t nr = OPS_SIZE(rops);
    PyObject *rmoved[64];
    PyObject *rset = NULL; /* long operand lists: a set, as the Python code's */
    if (nr > 64) {
        rset = PySet_New(NULL);
        if (rset == NULL) return -1;
    }
    for (Py_ssize_t k = 0; k < nr; k++) {
        PyObject *t = through_moves(sd->rinsts, sd->rops_of, OPS_ITEM(rops, k));
        if (t == NULL || (rset != NULL && PySet_Add(rset, t) < 0)) {
            Py_XDECREF(rset);
            return -1;
        }
        if (rset == NULL) rmoved[k] = t;
    }
    for (Py_ssize_t k = 0; k < OPS_SIZE(lops); k++) {
        PyObject *t = through_moves(sd->linsts, sd->lops_of, OPS_ITEM(lops, k));
        if (t == NULL) goto fail;
        PyObject *partner = PyDict_GetItemWithError(sd->l2r, t);
        if (partner == NULL) {
            if (PyErr_Occurred()) goto fail;
            continue;
        }
        PyObject *pt = through_moves(sd->rinsts, sd->rops_of, partner);
        if (pt == NULL) goto fail;
        int in = 0;
        if (rset != NULL) {
            in = PySet_Contains(rset, pt);
        } else {
            for (Py_ssize_t q = 0; q < nr && !in; q++) in = PyObject_RichCompareBool(rmoved[q], pt, Py_EQ);
        }
        if (in < 0) goto fail;
        if (in) points += 8;
    }
    Py_XDECREF(rset);
    return points;
fail:
    Py_XDECREF(rset);
    return -1;
}

typedef struct {
    long score, near, first; /* -abs(i - j), -i */
    PyObject *lo, *ro;
} Candidate;

static int by_candidate_desc(const void *x, const void *y) {
    const Candidate *a = x, *b = y;
    if (a->score != b->score) return a->score > b->score ? -1 : 1;
    if (a->near != b->near) return a->near > b->near ? -1 : 1;
    if (a->first != b->first) return a->first > b->first ? -1 : 1;
    int c = PyUnicode_Compare(a->lo, b->lo);
    if (c == 0) c = PyUnicode_Compare(a->ro, b->ro);
    return -c;
}

#define MAX_SCORED 16 /* similarity._MAX_SCORED */

/* _pair_free_operands with similarity.assign_by_content for 2..MAX_SCORED free pairs: candidates sorted best
   first by (score, -|i - j|, -i, left, right), greedy, then each pair when still free and compatible.
   1: done; 0: not here (a fusion pair, a longer list, or names that are not str): the Python code decides;
   -1: error. */
static int assign_by_content(PyObject *free, Sides *sd, PyObject *r2l, Pairs *mirror) {
    Py_ssize_t n = PyList_GET_SIZE(free);
    if (n < 2 || n > MAX_SCORED) return 0;
    Candidate cand[MAX_SCORED * MAX_SCORED];
    Py_ssize_t c = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *lo = PyTuple_GET_ITEM(PyList_GET_ITEM(free, i), 0);
        if (!PyUnicode_Check(lo)) return 0;
        for (Py_ssize_t j = 0; j < n; j++) {
            PyObject *ro = PyTuple_GET_ITEM(PyList_GET_ITEM(free, j), 1);
            if (!PyUnicode_Check(ro)) return 0;
            long score = content_score(sd, lo, ro);
            if (score == -2) return 0;
            if (score < 0) return -1;
            cand[c++] = (Candidate){score, -(i > j ? i - j : j - i), -i, lo, ro};
        }
    }
    qsort(cand, (size_t)c, sizeof(Candidate), by_candidate_desc);
    PyObject *used_l[MAX_SCORED], *used_r[MAX_SCORED], *pairs[MAX_SCORED][2];
    Py_ssize_t used = 0;
    for (Py_ssize_t k = 0; k < c && used < n; k++) {
        int taken = 0;
        for (Py_ssize_t q = 0; q < used && !taken; q++)
            taken = PyUnicode_Compare(used_l[q], cand[k].lo) == 0 || PyUnicode_Compare(used_r[q], cand[k].ro) == 0;
        if (taken) continue;
        used_l[used] = pairs[used][0] = cand[k].lo;
        used_r[used] = pairs[used][1] = cand[k].ro;
        used++;
    }
    for (Py_ssize_t k = 0; k < used; k++) {
        PyObject *lo = pairs[k][0], *ro = pairs[k][1];
        int a = PyDict_Contains(sd->l2r, lo), b = a == 0 ? PyDict_Contains(r2l, ro) : a;
        if (a < 0 || b < 0) return -1;
        if (a || b) continue;
        int ok = compatible(sd->linsts, sd->rinsts, sd->lanon, sd->ranon, lo, ro);
        if (ok < 0) return -1;
        if (ok && (mirror ? pairs_pair_names(mirror, lo, ro) : pair(sd->l2r, r2l, lo, ro)) < 0)
            return -1;
    }
    return 1;
}

/* assign_by_content for pairs.c: the pairs written through its mirror (and so to the dicts). */
int content_choice(PyObject *free, PyObject *linsts, PyObject *rinsts, PyObject *lops_of, PyObject *rops_of,
                   PyObject *lanon, PyObject *ranon, PyObject *l2r, PyObject *r2l, Pairs *mirror) {
    Sides sd = {linsts, rinsts, lops_of, rops_of, lanon, ranon, l2r};
    return assign_by_content(free, &sd, r2l, mirror);
}

PyObject *top_down(PyObject *self, PyObject *args) {
    PyObject *order, *l2r, *r2l, *settled, *lops_of, *rops_of, *root, *handle, *linsts, *rinsts, *lanon, *ranon;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!O!OOO!O!O!O!", &PyList_Type, &order, &PyDict_Type, &l2r, &PyDict_Type,
                          &r2l, &PySet_Type, &settled, &PyDict_Type, &lops_of, &PyDict_Type, &rops_of, &root, &handle,
                          &PyDict_Type, &linsts, &PyDict_Type, &rinsts, &PyDict_Type, &lanon, &PyDict_Type, &ranon))
        return NULL;
    for (Py_ssize_t i = PyList_GET_SIZE(order) - 1; i >= 0; i--) {
        if (i >= PyList_GET_SIZE(order)) continue; /* the handler may not shrink order, but be safe */
        PyObject *l = PyList_GET_ITEM(order, i);
        PyObject *r = PyDict_GetItemWithError(l2r, l);
        if (r == NULL) {
            if (PyErr_Occurred()) return NULL;
            continue;
        }
        int done = PySet_Contains(settled, l);
        if (done < 0) return NULL;
        if (done) continue;
        Py_INCREF(l);
        Py_INCREF(r);
        PyObject *lops = operands_of(lops_of, l), *rops = lops ? operands_of(rops_of, r) : NULL;
        PyObject *free = NULL;
        int rc = rops ? 0 : -1;
        if (rc == 0 && OPS_SIZE(lops) != OPS_SIZE(rops)) {
            int is_root = PyObject_RichCompareBool(l, root, Py_EQ);
            if (is_root < 0) rc = -1;
            else if (is_root) rc = 1; /* outputs were added or removed: positions mean nothing */
        }
        if (rc == 0) free = PyList_New(0);
        if (rc == 0 && free == NULL) rc = -1;
        if (rc == 0) {
            Py_ssize_t n = OPS_SIZE(lops) < OPS_SIZE(rops) ? OPS_SIZE(lops) : OPS_SIZE(rops);
            for (Py_ssize_t k = 0; rc == 0 && k < n; k++) {
                PyObject *lo = OPS_ITEM(lops, k), *ro = OPS_ITEM(rops, k);
                int a = PyDict_Contains(l2r, lo), b = a == 0 ? PyDict_Contains(r2l, ro) : a;
                if (a < 0 || b < 0) rc = -1;
                else if (!a && !b) {
                    PyObject *t = PyTuple_Pack(2, lo, ro);
                    if (t == NULL || PyList_Append(free, t) < 0) rc = -1;
                    Py_XDECREF(t);
                }
            }
            if (rc == 0) {
                if (PyList_GET_SIZE(free) == 0) {
                    if (PySet_Add(settled, l) < 0) rc = -1;
                } else if (PyList_GET_SIZE(free) == 1 || OPS_SIZE(lops) != OPS_SIZE(rops)) {
                    rc = pair_in_place(free, l2r, r2l, linsts, rinsts, lanon, ranon);
                } else {
                    Sides sd = {linsts, rinsts, lops_of, rops_of, lanon, ranon, l2r};
                    rc = assign_by_content(free, &sd, r2l, NULL);
                    if (rc == 0) { /* a choice the Python code makes (fusions, long lists) */
                        PyObject *res = PyObject_CallFunctionObjArgs(handle, l, r, free, NULL);
                        if (res == NULL) rc = -1;
                        Py_XDECREF(res);
                    } else {
                        rc = rc < 0 ? -1 : 0;
                    }
                }
            }
        }
        Py_XDECREF(free);
        Py_DECREF(l);
        Py_DECREF(r);
        if (rc < 0) return NULL;
    }
    Py_RETURN_NONE;
}

/* classify._classify's filter: the pairs (in l2r's order) whose labels differ or whose operands are not paired
   with each other position by position (over the shorter list, as zip does, when lengths differ). */
PyObject *unsettled_pairs(PyObject *self, PyObject *args) {
    PyObject *l2r, *llabels, *rlabels, *lops_of, *rops_of;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!", &PyDict_Type, &l2r, &PyDict_Type, &llabels, &PyDict_Type, &rlabels,
                          &PyDict_Type, &lops_of, &PyDict_Type, &rops_of))
        return NULL;
    PyObject *out = PyList_New(0);
    if (out == NULL) return NULL;
    Py_ssize_t pos = 0;
    PyObject *l, *r;
    while (PyDict_Next(l2r, &pos, &l, &r)) {
        PyObject *a = PyDict_GetItemWithError(llabels, l), *b = a ? PyDict_GetItemWithError(rlabels, r) : NULL;
        if (b == NULL) {
            if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, a ? r : l);
            goto fail;
        }
        int same = PyObject_RichCompareBool(a, b, Py_EQ);
        if (same < 0) goto fail;
        if (same) {
            PyObject *lops = operands_of(lops_of, l), *rops = lops ? operands_of(rops_of, r) : NULL;
            if (rops == NULL) goto fail;
            Py_ssize_t n = OPS_SIZE(lops) < OPS_SIZE(rops) ? OPS_SIZE(lops) : OPS_SIZE(rops);
            for (Py_ssize_t k = 0; same && k < n; k++) {
                PyObject *partner = PyDict_GetItemWithError(l2r, OPS_ITEM(lops, k));
                if (partner == NULL) {
                    if (PyErr_Occurred()) goto fail;
                    same = 0;
                    break;
                }
                same = PyObject_RichCompareBool(partner, OPS_ITEM(rops, k), Py_EQ);
                if (same < 0) goto fail;
            }
            if (same) continue;
        }
        PyObject *t = PyTuple_Pack(2, l, r);
        if (t == NULL || PyList_Append(out, t) < 0) {
            Py_XDECREF(t);
            goto fail;
        }
        Py_DECREF(t);
    }
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

/* CanonicalComputation.users: each name -> the names that use it, in operands' order, each user once. */
PyObject *users_of(PyObject *self, PyObject *args) {
    PyObject *operands;
    if (!PyArg_ParseTuple(args, "O!", &PyDict_Type, &operands)) return NULL;
    PyObject *users = PyDict_New();
    if (users == NULL) return NULL;
    Py_ssize_t pos = 0;
    PyObject *name, *ops;
    while (PyDict_Next(operands, &pos, &name, &ops)) {
        PyObject *list = PyList_New(0);
        int rc = list ? PyDict_SetItem(users, name, list) : -1;
        Py_XDECREF(list);
        if (rc < 0) goto fail;
    }
    pos = 0;
    while (PyDict_Next(operands, &pos, &name, &ops)) {
        if (!PyList_Check(ops) && !PyTuple_Check(ops)) {
            PyErr_SetString(PyExc_TypeError, "operand lists must be lists or tuples");
            goto fail;
        }
        Py_ssize_t n = OPS_SIZE(ops);
        PyObject *met = n > 8 ? PySet_New(NULL) : NULL; /* long lists (a root tuple): a set finds repeats */
        if (n > 8 && met == NULL) goto fail;
        for (Py_ssize_t k = 0; k < n; k++) {
            PyObject *op = OPS_ITEM(ops, k);
            int repeat = 0; /* dict.fromkeys(ops): an operand used twice makes one entry */
            if (met != NULL) {
                repeat = PySet_Contains(met, op);
                if (repeat == 0 && PySet_Add(met, op) < 0) repeat = -1;
            } else {
                for (Py_ssize_t j = 0; j < k && !repeat; j++) repeat = PyObject_RichCompareBool(OPS_ITEM(ops, j), op, Py_EQ);
            }
            if (repeat < 0) {
                Py_XDECREF(met);
                goto fail;
            }
            if (repeat) continue;
            PyObject *list = PyDict_GetItemWithError(users, op);
            if (list == NULL) {
                if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, op);
                Py_XDECREF(met);
                goto fail;
            }
            if (PyList_Append(list, name) < 0) {
                Py_XDECREF(met);
                goto fail;
            }
        }
        Py_XDECREF(met);
    }
    return users;
fail:
    Py_DECREF(users);
    return NULL;
}

/* compare._renamed_and_metadata: how many pairs differ in name, and (when asked) in their metadata attribute. */
/* Whether two paired instructions' metadata attributes differ (1), agree (0), or an error is set (-1): one
 * answer for the name-keyed walk below and for the pairs mirror's (pairs.c), which must count alike. */
int metadata_differs(PyObject *li, PyObject *ri) {
    PyObject *la = inst_attr(li, s_attrs), *ra = la ? inst_attr(ri, s_attrs) : NULL;
    int differ = -1;
    if (ra != NULL && PyDict_Check(la) && PyDict_Check(ra)) {
        PyObject *lm = PyDict_GetItemWithError(la, s_metadata);
        PyObject *rm = (lm || !PyErr_Occurred()) ? PyDict_GetItemWithError(ra, s_metadata) : NULL;
        if (!PyErr_Occurred()) {
            if (lm == NULL || rm == NULL) differ = lm != rm;
            else {
                int eq = PyObject_RichCompareBool(lm, rm, Py_EQ);
                differ = eq < 0 ? -1 : !eq;
            }
        }
    } else if (ra != NULL) {
        PyErr_SetString(PyExc_TypeError, "attrs must be dicts");
    }
    Py_XDECREF(la);
    Py_XDECREF(ra);
    return differ;
}

PyObject *renamed_and_metadata(PyObject *self, PyObject *args) {
    PyObject *l2r, *linsts, *rinsts;
    int count_metadata;
    if (!PyArg_ParseTuple(args, "O!O!O!p", &PyDict_Type, &l2r, &PyDict_Type, &linsts, &PyDict_Type, &rinsts,
                          &count_metadata))
        return NULL;
    Py_ssize_t pos = 0, renamed = 0, meta = 0;
    PyObject *a, *b;
    while (PyDict_Next(l2r, &pos, &a, &b)) {
        int same = PyObject_RichCompareBool(a, b, Py_EQ);
        if (same < 0) return NULL;
        renamed += !same;
        if (!count_metadata) continue;
        PyObject *li = PyDict_GetItemWithError(linsts, a), *ri = li ? PyDict_GetItemWithError(rinsts, b) : NULL;
        if (ri == NULL) {
            if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, li ? b : a);
            return NULL;
        }
        int differ = metadata_differs(li, ri);
        if (differ < 0) return NULL;
        meta += differ;
    }
    return Py_BuildValue("(nn)", renamed, meta);
}
