/* Instruction lines (hlodiff.hlo.parser._Parser._parse_body with _fast_instruction).
 *
 * parse_lines reads instruction lines from lines[i] on and appends an Instruction per line to the computation's
 * list, as the parser's fast path would. It takes only the lines it can read with no doubt: ASCII without control
 * characters or line comments, one statement per line, shapes the parser's cache knows (or the shape reader reads),
 * operands untyped or typed as their definitions would be written, attribute values of the kinds the fast path's
 * expressions know. At any other line (and at the '}' that closes the computation) it returns that line's index,
 * and the Python parser takes the line (with its checks and error messages), then hands back.
 */
#include "accel.h"

/* Is the line (its block comments blanked) one the fast path may read: no control characters, no "//" comment
   outside a string. */
static int plain_line(const char *p, Py_ssize_t n) {
    int in_string = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        char c = p[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f) return 0;
        if (in_string) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_string = 0;
        } else if (c == '"') {
            in_string = 1;
        } else if (c == '/' && i + 1 < n && p[i + 1] == '/') {
            return 0;
        }
    }
    return 1;
}

/* One instruction line; NULL with no error set: the Python parser takes this line. */
static PyObject *read_instruction(const char *p, Py_ssize_t n, long line_number, PyObject *typed_refs,
                                  PyObject *shapes, PyObject *inst_type, PyObject *declared, PyObject *parse_array,
                                  PyObject *shape_type) {
    Py_ssize_t pos = skip_ws(p, 0, n), col = pos;
    int root = 0;
    if (n - pos > 4 && memcmp(p + pos, "ROOT", 4) == 0 && is_ws(p[pos + 4])) {
        Py_ssize_t q = skip_ws(p, pos + 4, n);
        if (q >= n || !(p[q] == '%' || is_name(p[q]))) return NULL;
        root = 1;
        pos = q;
    }
    int pct = pos < n && p[pos] == '%';
    pos += pct;
    Py_ssize_t name_start = pos;
    while (pos < n && is_name(p[pos])) pos++;
    if (pos == name_start) return NULL;
    Py_ssize_t name_end = pos;
    if (!root) col = name_start - pct;
    pos = skip_ws(p, pos, n);
    if (pos >= n || p[pos] != '=') return NULL;
    pos = skip_ws(p, pos + 1, n);
    Py_ssize_t shape_start = pos;
    int has_pct = 0, tuple_shape = pos < n && p[pos] == '(';
    Py_ssize_t shape_end;
    PyObject *tuple = NULL; /* a tuple result shape read here (not found by its text) */
    if (tuple_shape) { /* the parser's second form: a shape read by the shape parser, then the opcode */
        shape_end = paren_end(p, pos, n, 64);
        PyObject *text = shape_end < 0 ? NULL : ascii_str(p + pos, shape_end - pos);
        PyObject *known = text ? PyDict_GetItemWithError(shapes, text) : NULL;
        Py_XDECREF(text);
        if (known == NULL) {
            if (PyErr_Occurred()) return NULL;
            tuple = read_shape(p, pos, n, shapes, parse_array, shape_type, &shape_end, 0);
            if (tuple == NULL) return NULL;
        }
    } else {
        shape_end = array_end(p, pos, n, &has_pct);
        if (shape_end < 0 || shape_end >= n || !is_ws(p[shape_end])) return NULL;
    }
    pos = skip_ws(p, shape_end, n);
    Py_ssize_t op_start = pos;
    if (pos >= n || !is_alpha(p[pos])) {
        Py_XDECREF(tuple);
        return NULL;
    }
    pos++;
    while (pos < n && (is_alpha(p[pos]) || is_digit(p[pos]) || p[pos] == '_' || p[pos] == '-')) pos++;
    Py_ssize_t op_end = pos;
    if (tuple_shape) pos = skip_ws(p, pos, n);
    if (pos >= n || p[pos] != '(') {
        Py_XDECREF(tuple);
        return NULL;
    }
    Py_ssize_t body = ++pos;
    int depth = 0;
    while (pos < n) { /* operands nest at most two levels of parentheses, as the fast expression allows */
        if (p[pos] == '(') {
            if (++depth > 2) break;
        } else if (p[pos] == ')') {
            if (depth == 0) break;
            depth--;
        }
        pos++;
    }
    if (pos >= n || p[pos] != ')') {
        Py_XDECREF(tuple);
        return NULL;
    }
    Py_ssize_t body_end = pos, end = pos + 1;

    PyObject *name = NULL, *shape_text = NULL, *opcode = NULL, *operands = NULL, *attrs = NULL, *literal = NULL;
    PyObject *param = NULL, *ref = NULL, *result = NULL, *declared_shapes = NULL;
    int shape_kept = 0;
    shape_text = ascii_str(p + shape_start, shape_end - shape_start);
    if (shape_text == NULL) goto done;
    PyObject *shape = tuple;
    if (tuple != NULL && shape_end - shape_start > CACHED_TUPLE_TEXT) {
        shape = tuple; /* a long tuple (a root of many outputs) is not cached, as the parser does not cache it */
    } else if (tuple != NULL) { /* found by its text from now on, as the parser does */
        shape = PyDict_SetDefault(shapes, shape_text, tuple);
        if (shape == NULL) goto done;
    } else {
        shape = PyDict_GetItemWithError(shapes, shape_text); /* borrowed */
    }
    if (shape == NULL) goto done; /* a shape not seen yet: the parser reads it (and caches it) */
    name = ascii_str(p + name_start, name_end - name_start);
    opcode = name ? shared_str(p + op_start, op_end - op_start) : NULL;
    if (opcode == NULL) goto done;
    if (!tuple_shape) { /* how this instruction is written as a typed operand (array shapes only, as the parser):
                           its shape text in names.c's table while the call lasts (typed_ref_of), else in the dict */
        shape_kept = names_set_shape(known_names, name, shape_text);
        if (shape_kept < 0) goto done;
        if (!shape_kept) {
            ref = typed_ref(shape_text, name);
            if (ref == NULL || PyDict_SetItem(typed_refs, name, ref) < 0) goto done;
        }
    }

    Py_ssize_t op_len = op_end - op_start;
    if (op_len == 8 && memcmp(p + op_start, "constant", 8) == 0) {
        literal = joined_words(p, body, body_end);
        if (literal == NULL) goto done;
    } else if (op_len == 9 && memcmp(p + op_start, "parameter", 9) == 0) {
        Py_ssize_t a = skip_ws(p, body, body_end), b = body_end;
        while (b > a && is_ws(p[b - 1])) b--;
        if (b == a || b - a > 18) goto done;
        long long number = 0;
        for (Py_ssize_t k = a; k < b; k++) {
            if (!is_digit(p[k])) goto done;
            number = number * 10 + (p[k] - '0');
        }
        param = PyLong_FromLongLong(number);
        if (param == NULL) goto done;
    } else {
        int typed = 0, blank = 1;
        for (Py_ssize_t k = body; k < body_end; k++) {
            if (p[k] == '[' || p[k] == '(') typed = 1;
            if (!is_ws(p[k])) blank = 0;
        }
        if (blank)
            operands = PyTuple_New(0);
        else if (!typed)
            operands = untyped_operands(p, body, body_end);
        else {
            PyObject *names = PyList_New(0), *shapes = PyList_New(0);
            int st = names && shapes ? typed_operands(p, body, body_end, typed_refs, names, shapes) : -1;
            if (st == 0) {
                st = operand_items(p, body, body_end, names, shapes);
                if (st == 1) {
                    int other = declared_otherwise(names, shapes, typed_refs);
                    st = other < 0 ? -1 : (other ? 2 : 1);
                }
            }
            if (st > 0) operands = PyList_AsTuple(names);
            if (st == 2 && operands != NULL) declared_shapes = PyList_AsTuple(shapes);
            Py_XDECREF(names);
            Py_XDECREF(shapes);
            if (st == 2 && declared_shapes == NULL) goto done;
        }
        if (operands == NULL) goto done;
    }
    attrs = end < n ? shared_attributes(p, end, n) : empty_attributes();
    if (attrs == NULL) goto done;
    if (operands == NULL) {
        operands = PyTuple_New(0);
        if (operands == NULL) goto done;
    }
    PyObject *line_no = shared_line(line_number), *col_no = PyLong_FromSsize_t(col + 1);
    if (line_no && col_no) {
        PyObject *args[11] = {name, shape, opcode, operands, attrs, root ? Py_True : Py_False,
                              literal ? literal : Py_None, param ? param : Py_None, NULL, line_no, col_no};
        args[8] = PyLong_FromLong(0);
        if (args[8] != NULL) {
            result = inst_new(inst_type, args);
            Py_DECREF(args[8]);
            /* operands of later lines share this name's object (text.c's operand_name, through names.c's
               table; the dict gets it when the call ends, see names_into_dict); only once the line is read here:
               a line left to the parser gets its own instruction */
            if (result != NULL && known_names != NULL && !shape_kept && names_add(known_names, name) < 0)
                Py_CLEAR(result); /* (a kept shape put the name in the table already) */
            if (result != NULL && declared_shapes != NULL) { /* checked against the definitions at the '}' */
                PyObject *entry = PyTuple_Pack(2, result, declared_shapes);
                if (entry == NULL || PyList_Append(declared, entry) < 0) Py_CLEAR(result);
                Py_XDECREF(entry);
            }
        }
    }
    Py_XDECREF(line_no);
    Py_XDECREF(col_no);
done:
    if (result == NULL && shape_kept > 0 && !PyErr_Occurred()) { /* the line is left to the parser: the dict gets
                                                                    its entry, as before the table kept it */
        ref = typed_ref(shape_text, name);
        if (ref != NULL) PyDict_SetItem(typed_refs, name, ref);
    }
    Py_XDECREF(shape_text);
    Py_XDECREF(name);
    Py_XDECREF(opcode);
    Py_XDECREF(operands);
    Py_XDECREF(attrs);
    Py_XDECREF(literal);
    Py_XDECREF(param);
    Py_XDECREF(ref);
    Py_XDECREF(declared_shapes);
    Py_XDECREF(tuple);
    return result;
}

/* The line with its block comments replaced by as many spaces (parser._blank_comments' first step: every
   slash-star ... star-slash, inside strings too, so columns stay); into b. */
static int blank_block_comments(const char *p, Py_ssize_t n, Buf *b) {
    b->len = 0;
    if (buf_put(b, p, (size_t)n) < 0) return -1;
    char *d = b->data;
    Py_ssize_t k = 0;
    while (k + 1 < n) {
        if (d[k] == '/' && d[k + 1] == '*') {
            Py_ssize_t close = k + 2;
            while (close + 1 < n && !(d[close] == '*' && d[close + 1] == '/')) close++;
            if (close + 1 >= n) break; /* not closed on this line: left as it is */
            memset(d + k, ' ', (size_t)(close + 2 - k));
            k = close + 2;
        } else {
            k++;
        }
    }
    return 0;
}

/* The names of the instructions out[start:] (this call's) into the names dict, as name -> name in order, and the
   typed references of the array-shaped ones into typed_refs (names.c kept their shape texts): what the parser and
   the next call read. Not needed when the call stopped at the computation's closing brace, where the
   parser drops the dict: that is nearly every call, and it spares each instruction an insertion into a dict as
   large as its computation (217K names in a 300K-instruction module's entry), the table being enough meanwhile. */
static int names_into_dict(PyObject *names, PyObject *typed_refs, PyObject *out, Py_ssize_t start) {
    for (Py_ssize_t k = start; k < PyList_GET_SIZE(out); k++) {
        PyObject *name = inst_attr(PyList_GET_ITEM(out, k), s_name);
        int rc = name ? PyDict_SetItem(names, name, name) : -1;
        PyObject *shape = rc == 0 && PyUnicode_IS_ASCII(name) ?
            names_shape(names, (const char *)PyUnicode_DATA(name), PyUnicode_GET_LENGTH(name)) : NULL;
        if (shape != NULL) { /* and its typed reference into typed_refs, kept in the table meanwhile */
            PyObject *ref = typed_ref(shape, name);
            rc = ref ? PyDict_SetItem(typed_refs, name, ref) : -1;
            Py_XDECREF(ref);
        }
        Py_XDECREF(name);
        if (rc < 0) return -1;
    }
    return 0;
}

/* The line at i starts (after blanks) with the computation's closing brace. */
static int at_close(PyObject *lines, Py_ssize_t i) {
    if (i >= PyList_GET_SIZE(lines)) return 0;
    PyObject *line = PyList_GET_ITEM(lines, i);
    if (!PyUnicode_Check(line) || !PyUnicode_IS_ASCII(line)) return 0;
    const char *p = (const char *)PyUnicode_1BYTE_DATA(line);
    Py_ssize_t len = PyUnicode_GET_LENGTH(line), pos = skip_ws(p, 0, len);
    return pos < len && p[pos] == '}';
}

PyObject *parse_lines(PyObject *self, PyObject *args) {
    PyObject *lines, *typed_refs, *shapes, *inst_type, *out, *declared, *parse_array, *shape_type, *names = NULL;
    Py_ssize_t i;
    long first_line;
    if (!PyArg_ParseTuple(args, "O!nlO!O!OO!O!OO|O!", &PyList_Type, &lines, &i, &first_line, &PyDict_Type,
                          &typed_refs, &PyDict_Type, &shapes, &inst_type, &PyList_Type, &out, &PyList_Type, &declared,
                          &parse_array, &shape_type, &PyDict_Type, &names))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(lines);
    Buf blanked;
    buf_init(&blanked);
    PyObject *outer = known_names; /* the computation's names so far, for operands to share (text.c) */
    known_names = names;
    Py_XINCREF(known_names);
    if (names != NULL) names_bind(names); /* names.c mirrors the names this call reads */
    Py_ssize_t start = PyList_GET_SIZE(out);
    for (; i < n; i++) {
        PyObject *line = PyList_GET_ITEM(lines, i);
        if (!PyUnicode_Check(line) || !PyUnicode_IS_ASCII(line)) break;
        const char *p = (const char *)PyUnicode_1BYTE_DATA(line);
        Py_ssize_t len = PyUnicode_GET_LENGTH(line), pos = skip_ws(p, 0, len);
        if (pos == len) continue; /* blank */
        if (p[pos] == '/' || p[pos] == '}') break; /* a comment line, or the computation's end: the parser's */
        if (memchr(p, '/', (size_t)len) != NULL) {
            if (blank_block_comments(p, len, &blanked) < 0) goto fail;
            p = blanked.data;
        }
        if (!plain_line(p, len)) break;
        Py_ssize_t last = len;
        while (last > 0 && is_ws(p[last - 1])) last--;
        if (last == 0 || p[last - 1] == ',' || p[last - 1] == '=' || p[last - 1] == '{') break; /* continues */
        PyObject *inst = read_instruction(p, len, first_line + (long)i, typed_refs, shapes, inst_type, declared,
                                          parse_array, shape_type);
        if (inst == NULL) {
            if (PyErr_Occurred()) goto fail;
            break;
        }
        int rc = PyList_Append(out, inst);
        Py_DECREF(inst);
        if (rc < 0) goto fail;
    }
    buf_free(&blanked);
    int rc = names != NULL && !at_close(lines, i) ? names_into_dict(names, typed_refs, out, start) : 0;
    names_bind(NULL); /* the table lives for this call only: nothing is held once the module is read */
    Py_XDECREF(known_names);
    known_names = outer;
    return rc < 0 ? NULL : PyLong_FromSsize_t(i);
fail:
    buf_free(&blanked);
    names_bind(NULL);
    Py_XDECREF(known_names);
    known_names = outer;
    return NULL;
}
