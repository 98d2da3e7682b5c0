/* A run of plain computations read in one call (hlodiff.hlo.parser._Parser.parse's loop, for computations written
 * `name {`, their lines all parse_lines', closed by a bare `}`).
 *
 * An unrolled step prints one small reduction per block (13,600 three-instruction regions a side of the 300K pair of
 * issue 34): the Python steps around parse_lines (finding the head, matching it, building the Computation, finding
 * and checking the closing brace) cost more than reading the three lines. Here each computation is the one
 * Computation(name=..., is_entry=False, line=...) and the one parse_lines call the Python parser makes, with the same
 * arguments; anything else (a signature, ENTRY, a comment, attributes after the brace, a line parse_lines leaves to
 * Python, a typed operand to check) stops the run before that computation, undone, for the Python parser to read.
 */
#include "accel.h"

static PyObject *s_instructions_attr;

/* The name of a plain head `  %name {  ` at line p[0:len], as [*start, *end); 0 when the line is anything else. */
static int plain_head(const char *p, Py_ssize_t len, Py_ssize_t *start, Py_ssize_t *end) {
    Py_ssize_t pos = skip_ws(p, 0, len);
    if (pos < len && p[pos] == '%') pos++;
    *start = pos;
    while (pos < len && is_name(p[pos])) pos++;
    *end = pos;
    if (*end == *start) return 0;
    if (*end - *start >= 9 && memcmp(p + *start, "HloModule", 9) == 0) return 0; /* a header: Python's */
    if (*end - *start >= 5 && memcmp(p + *start, "ENTRY", 5) == 0) return 0;      /* the entry: Python's */
    pos = skip_ws(p, pos, len);
    if (pos >= len || p[pos] != '{') return 0;
    return skip_ws(p, pos + 1, len) == len;
}

/* The line at i is `}` alone (blanks around it), as the Python parser's _close_computation reads it with no
 * attributes. */
static int bare_close(PyObject *lines, Py_ssize_t i) {
    if (i >= PyList_GET_SIZE(lines)) return 0;
    PyObject *line = PyList_GET_ITEM(lines, i);
    if (!PyUnicode_Check(line) || !PyUnicode_IS_ASCII(line)) return 0;
    const char *p = (const char *)PyUnicode_1BYTE_DATA(line);
    Py_ssize_t len = PyUnicode_GET_LENGTH(line), pos = skip_ws(p, 0, len);
    return pos < len && p[pos] == '}' && skip_ws(p, pos + 1, len) == len;
}

/* plain_computations(lines, i, first_line, shapes, Instruction, declared, parse_shape_at, Shape, Computation,
 * computations) -> the index of the first line left to the Python parser. */
PyObject *plain_computations(PyObject *self, PyObject *args) {
    PyObject *lines, *shapes, *inst_type, *declared, *parse_array, *shape_type, *comp_type, *comps;
    Py_ssize_t i;
    long first_line;
    if (!PyArg_ParseTuple(args, "O!nlO!OO!OOOO!", &PyList_Type, &lines, &i, &first_line, &PyDict_Type, &shapes,
                          &inst_type, &PyList_Type, &declared, &parse_array, &shape_type, &comp_type, &PyList_Type,
                          &comps))
        return NULL;
    if (s_instructions_attr == NULL && (s_instructions_attr = PyUnicode_InternFromString("instructions")) == NULL)
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(lines);
    while (i < n) {
        PyObject *line = PyList_GET_ITEM(lines, i);
        if (!PyUnicode_Check(line) || !PyUnicode_IS_ASCII(line)) break;
        const char *p = (const char *)PyUnicode_1BYTE_DATA(line);
        Py_ssize_t len = PyUnicode_GET_LENGTH(line), start, end;
        if (skip_ws(p, 0, len) == len) { i++; continue; } /* blank: the Python parser skips it too */
        if (!plain_head(p, len, &start, &end)) break;
        Py_ssize_t declared_before = PyList_GET_SIZE(declared);
        PyObject *kwargs = Py_BuildValue("{s:s#,s:O,s:l}", "name", p + start, end - start, "is_entry", Py_False,
                                         "line", first_line + (long)i);
        PyObject *empty = kwargs ? PyTuple_New(0) : NULL;
        PyObject *comp = empty ? PyObject_Call(comp_type, empty, kwargs) : NULL;
        Py_XDECREF(empty);
        Py_XDECREF(kwargs);
        if (comp == NULL) return NULL;
        PyObject *insts = PyObject_GetAttr(comp, s_instructions_attr);
        PyObject *typed_refs = insts ? PyDict_New() : NULL, *names = typed_refs ? PyDict_New() : NULL;
        PyObject *call = names ? Py_BuildValue("(OnlOOOOOOOO)", lines, i + 1, first_line, typed_refs, shapes,
                                               inst_type, insts, declared, parse_array, shape_type, names) : NULL;
        PyObject *next = call ? parse_lines(self, call) : NULL;
        Py_XDECREF(call);
        Py_XDECREF(typed_refs);
        Py_XDECREF(names);
        Py_ssize_t j = next ? PyLong_AsSsize_t(next) : -1;
        Py_XDECREF(next);
        if (j < 0 && PyErr_Occurred()) {
            Py_XDECREF(insts);
            Py_DECREF(comp);
            return NULL;
        }
        int whole = PyList_GET_SIZE(insts) > 0 && PyList_GET_SIZE(declared) == declared_before && bare_close(lines, j);
        Py_DECREF(insts);
        if (!whole) { /* undone: the Python parser reads this computation from its head */
            Py_DECREF(comp);
            if (PyList_SetSlice(declared, declared_before, PyList_GET_SIZE(declared), NULL) < 0) return NULL;
            break;
        }
        int rc = PyList_Append(comps, comp);
        Py_DECREF(comp);
        if (rc < 0) return NULL;
        i = j + 1;
    }
    return PyLong_FromSsize_t(i);
}
