/* hlodiff._accel: the optional compiled accelerator for the per-instruction hot loops.
 *
 * Everything here has a pure-Python twin that is the reference (hlodiff/graph/fingerprint.py,
 * hlodiff/hlo/parser.py); hlodiff.accel picks this module when it was built and HLODIFF_PURE_PYTHON is not set.
 * The functions return exactly what the Python code computes (tests/test_accel.py checks both ways on the
 * corpus), and hand anything unusual back to the Python code instead of deciding it here.
 *
 * BLAKE2b is written from RFC 7693 (unkeyed, digest of 1-64 bytes), so that node hashes match hashlib's
 * blake2b(..., digest_size=N).hexdigest() byte for byte: they are stored in users' snapshot files.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------------------------
 * BLAKE2b (RFC 7693)
 */

static const uint64_t B2B_IV[8] = {
    0x6A09E667F3BCC908ULL, 0xBB67AE8584CAA73BULL, 0x3C6EF372FE94F82BULL, 0xA54FF53A5F1D36F1ULL,
    0x510E527FADE682D1ULL, 0x9B05688C2B3E6C1FULL, 0x1F83D9ABFB41BD6BULL, 0x5BE0CD19137E2179ULL,
};

static const uint8_t B2B_SIGMA[12][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
    {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4},
    {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
    {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13},
    {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
    {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11},
    {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
    {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5},
    {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
};

static inline uint64_t rotr64(uint64_t x, unsigned n) { return (x >> n) | (x << (64 - n)); }

static inline uint64_t load64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

#define B2B_G(a, b, c, d, x, y)         \
    do {                                \
        v[a] = v[a] + v[b] + (x);       \
        v[d] = rotr64(v[d] ^ v[a], 32); \
        v[c] = v[c] + v[d];             \
        v[b] = rotr64(v[b] ^ v[c], 24); \
        v[a] = v[a] + v[b] + (y);       \
        v[d] = rotr64(v[d] ^ v[a], 16); \
        v[c] = v[c] + v[d];             \
        v[b] = rotr64(v[b] ^ v[c], 63); \
    } while (0)

static void b2b_compress(uint64_t h[8], const uint8_t block[128], uint64_t t, int last) {
    uint64_t v[16], m[16];
    for (int i = 0; i < 8; i++) {
        v[i] = h[i];
        v[i + 8] = B2B_IV[i];
    }
    v[12] ^= t; /* messages here are far below 2^64 bytes: the high counter word stays 0 */
    if (last) v[14] = ~v[14];
    for (int i = 0; i < 16; i++) m[i] = load64(block + 8 * i);
    for (int r = 0; r < 12; r++) {
        const uint8_t *s = B2B_SIGMA[r];
        B2B_G(0, 4, 8, 12, m[s[0]], m[s[1]]);
        B2B_G(1, 5, 9, 13, m[s[2]], m[s[3]]);
        B2B_G(2, 6, 10, 14, m[s[4]], m[s[5]]);
        B2B_G(3, 7, 11, 15, m[s[6]], m[s[7]]);
        B2B_G(0, 5, 10, 15, m[s[8]], m[s[9]]);
        B2B_G(1, 6, 11, 12, m[s[10]], m[s[11]]);
        B2B_G(2, 7, 8, 13, m[s[12]], m[s[13]]);
        B2B_G(3, 4, 9, 14, m[s[14]], m[s[15]]);
    }
    for (int i = 0; i < 8; i++) h[i] ^= v[i] ^ v[i + 8];
}

/* The hex digest (2 * outlen characters) of data, as hashlib.blake2b(data, digest_size=outlen).hexdigest(). */
static void blake2b_hex(const uint8_t *data, size_t len, int outlen, char *hex) {
    uint64_t h[8];
    uint8_t block[128];
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 8; i++) h[i] = B2B_IV[i];
    h[0] ^= 0x01010000ULL ^ (uint64_t)outlen;
    uint64_t t = 0;
    while (len > 128) {
        t += 128;
        b2b_compress(h, data, t, 0);
        data += 128;
        len -= 128;
    }
    memset(block, 0, sizeof block);
    memcpy(block, data, len);
    t += len;
    b2b_compress(h, block, t, 1);
    for (int i = 0; i < outlen; i++) {
        uint8_t byte = (uint8_t)(h[i / 8] >> (8 * (i % 8)));
        hex[2 * i] = digits[byte >> 4];
        hex[2 * i + 1] = digits[byte & 15];
    }
}

static PyObject *hex_str(const char *hex, Py_ssize_t n) {
    PyObject *s = PyUnicode_New(n, 127);
    if (s == NULL) return NULL;
    memcpy(PyUnicode_DATA(s), hex, (size_t)n);
    return s;
}

/* ---------------------------------------------------------------------------------------------------------
 * A growable byte buffer for the text that is hashed.
 */

typedef struct {
    char *data;
    size_t len, cap;
    char stack[4096];
} Buf;

static void buf_init(Buf *b) {
    b->data = b->stack;
    b->len = 0;
    b->cap = sizeof b->stack;
}

static void buf_free(Buf *b) {
    if (b->data != b->stack) PyMem_Free(b->data);
}

static int buf_put(Buf *b, const char *s, size_t n) {
    if (b->len + n > b->cap) {
        size_t cap = b->cap * 2;
        while (cap < b->len + n) cap *= 2;
        char *data = PyMem_Malloc(cap);
        if (data == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        memcpy(data, b->data, b->len);
        buf_free(b);
        b->data = data;
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    return 0;
}

static int buf_put_str(Buf *b, PyObject *s) {
    if (!PyUnicode_Check(s)) {
        PyErr_SetString(PyExc_TypeError, "expected str");
        return -1;
    }
    Py_ssize_t n;
    const char *u = PyUnicode_AsUTF8AndSize(s, &n);
    if (u == NULL) return -1;
    return buf_put(b, u, (size_t)n);
}

/* "(" + ",".join(table[op] for op in ops) + ")" when ops is not empty. */
static int buf_put_operands(Buf *b, PyObject *ops, PyObject *table) {
    PyObject *seq = PySequence_Fast(ops, "operands must be a sequence");
    if (seq == NULL) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    int rc = 0;
    if (n > 0) {
        PyObject **items = PySequence_Fast_ITEMS(seq);
        rc = buf_put(b, "(", 1);
        for (Py_ssize_t i = 0; rc == 0 && i < n; i++) {
            PyObject *h = PyDict_GetItemWithError(table, items[i]);
            if (h == NULL) {
                if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, items[i]);
                rc = -1;
                break;
            }
            if (i && buf_put(b, ",", 1) < 0) rc = -1;
            if (rc == 0) rc = buf_put_str(b, h);
        }
        if (rc == 0) rc = buf_put(b, ")", 1);
    }
    Py_DECREF(seq);
    return rc;
}

/* ---------------------------------------------------------------------------------------------------------
 * Node hashes (hlodiff.graph.fingerprint._hash_computation)
 */

static PyObject *s_opcode, *s_shape, *s_literal, *s_attrs, *s_truncated, *s_metadata;

/* The label fingerprint._label makes, built here when the options are the defaults (names and metadata
   ignored) and no attribute needs Python (a call's target hashes, frontend attributes holding braces, elided
   operands); otherwise label_fn(inst) makes it. */
static PyObject *s_frontend, *s_control_predecessors;

static PyObject *node_label(PyObject *inst, int plain, PyObject *label_fn, PyObject *shape_text,
                            PyObject *shape_texts, PyObject *call_keys) {
    if (!plain) return PyObject_CallOneArg(label_fn, inst);
    PyObject *attrs = NULL, *trunc = NULL, *opcode = NULL, *shape = NULL, *literal = NULL, *st = NULL;
    PyObject *text = NULL;
    int python = 0;
    Buf b;
    buf_init(&b);
    attrs = PyObject_GetAttr(inst, s_attrs);
    trunc = attrs ? PyObject_GetAttr(inst, s_truncated) : NULL;
    if (trunc == NULL) goto done;
    if (!PyDict_Check(attrs) || PyObject_IsTrue(trunc) != 0) {
        python = 1;
        goto done;
    }
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(attrs, &pos, &key, &value)) {
        int is_call = PySet_Contains(call_keys, key);
        if (is_call < 0) goto done;
        if (is_call || !PyUnicode_Check(value) || !PyUnicode_Check(key)) {
            python = 1;
            goto done;
        }
        if (PyUnicode_Compare(key, s_frontend) == 0) {
            Py_ssize_t n;
            const char *v = PyUnicode_AsUTF8AndSize(value, &n);
            if (v == NULL) goto done;
            for (Py_ssize_t k = 0; k + 1 < n; k++)
                if (v[k] == '=' && (v[k + 1] == '{' || (v[k + 1] == '"' && k + 2 < n && v[k + 2] == '{'))) {
                    python = 1;
                    goto done;
                }
        }
    }
    opcode = PyObject_GetAttr(inst, s_opcode);
    shape = opcode ? PyObject_GetAttr(inst, s_shape) : NULL;
    literal = shape ? PyObject_GetAttr(inst, s_literal) : NULL;
    if (literal == NULL) goto done;
    /* shape_texts: id(shape) -> text, filled by shape_text() (the parser shares Shape objects) */
    PyObject *id = PyLong_FromVoidPtr(shape);
    st = id ? PyDict_GetItemWithError(shape_texts, id) : NULL;
    Py_XINCREF(st);
    Py_XDECREF(id);
    if (st == NULL && !PyErr_Occurred()) st = PyObject_CallOneArg(shape_text, shape);
    if (st == NULL || buf_put_str(&b, opcode) < 0 || buf_put(&b, "|", 1) < 0 || buf_put_str(&b, st) < 0) goto done;
    if (literal != Py_None && (buf_put(&b, "|", 1) < 0 || buf_put_str(&b, literal) < 0)) goto done;
    pos = 0;
    while (PyDict_Next(attrs, &pos, &key, &value)) {
        if (PyUnicode_Compare(key, s_metadata) == 0 || PyUnicode_Compare(key, s_control_predecessors) == 0)
            continue;
        if (buf_put(&b, "|", 1) < 0 || buf_put_str(&b, key) < 0 || buf_put(&b, "=", 1) < 0 ||
            buf_put_str(&b, value) < 0)
            goto done;
    }
    text = PyUnicode_DecodeUTF8(b.data, (Py_ssize_t)b.len, "strict");
done:
    buf_free(&b);
    Py_XDECREF(attrs);
    Py_XDECREF(trunc);
    Py_XDECREF(opcode);
    Py_XDECREF(shape);
    Py_XDECREF(literal);
    Py_XDECREF(st);
    if (python && !PyErr_Occurred()) return PyObject_CallOneArg(label_fn, inst);
    return text;
}

static int hash_into(PyObject *dict, PyObject *name, Buf *b, int size) {
    char hex[128];
    blake2b_hex((const uint8_t *)b->data, b->len, size, hex);
    PyObject *h = hex_str(hex, 2 * size);
    if (h == NULL) return -1;
    int rc = PyDict_SetItem(dict, name, h);
    Py_DECREF(h);
    return rc;
}

static PyObject *anon_hashes(PyObject *self, PyObject *args) {
    PyObject *order, *insts, *operands, *label_fn, *shape_text, *shape_texts, *labels, *anon, *call_keys;
    int plain;
    if (!PyArg_ParseTuple(args, "O!O!O!pOOO!O!O!O!", &PyList_Type, &order, &PyDict_Type, &insts, &PyDict_Type,
                          &operands, &plain, &label_fn, &shape_text, &PyDict_Type, &shape_texts, &PyDict_Type,
                          &labels, &PyDict_Type, &anon, &PyFrozenSet_Type, &call_keys))
        return NULL;
    Buf b;
    buf_init(&b);
    Py_ssize_t n = PyList_GET_SIZE(order);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *name = PyList_GET_ITEM(order, i);
        PyObject *inst = PyDict_GetItemWithError(insts, name);
        PyObject *ops = inst ? PyDict_GetItemWithError(operands, name) : NULL;
        if (ops == NULL) {
            if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, name);
            goto fail;
        }
        PyObject *label = node_label(inst, plain, label_fn, shape_text, shape_texts, call_keys);
        if (label == NULL) goto fail;
        int rc = PyDict_SetItem(labels, name, label);
        b.len = 0;
        if (rc == 0) rc = buf_put_str(&b, label);
        Py_DECREF(label);
        if (rc < 0 || buf_put_operands(&b, ops, anon) < 0 || hash_into(anon, name, &b, 8) < 0) goto fail;
    }
    buf_free(&b);
    Py_RETURN_NONE;
fail:
    buf_free(&b);
    return NULL;
}

static PyObject *exact_hashes(PyObject *self, PyObject *args) {
    PyObject *order, *labels, *operands, *param_ids, *hashes;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!", &PyList_Type, &order, &PyDict_Type, &labels, &PyDict_Type,
                          &operands, &PyDict_Type, &param_ids, &PyDict_Type, &hashes))
        return NULL;
    Buf b;
    buf_init(&b);
    Py_ssize_t n = PyList_GET_SIZE(order);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *name = PyList_GET_ITEM(order, i);
        PyObject *label = PyDict_GetItemWithError(labels, name);
        PyObject *ops = label ? PyDict_GetItemWithError(operands, name) : NULL;
        if (ops == NULL) {
            if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, name);
            goto fail;
        }
        b.len = 0;
        if (buf_put_str(&b, label) < 0) goto fail;
        PyObject *pid = PyDict_GetItemWithError(param_ids, name);
        if (pid != NULL) {
            PyObject *text = PyObject_Str(pid);
            int rc = text ? buf_put(&b, "|#", 2) : -1;
            if (rc == 0) rc = buf_put_str(&b, text);
            Py_XDECREF(text);
            if (rc < 0) goto fail;
        } else if (PyErr_Occurred()) {
            goto fail;
        }
        if (buf_put_operands(&b, ops, hashes) < 0 || hash_into(hashes, name, &b, 12) < 0) goto fail;
    }
    buf_free(&b);
    Py_RETURN_NONE;
fail:
    buf_free(&b);
    return NULL;
}

static PyObject *py_blake2b_hex(PyObject *self, PyObject *args) {
    const char *data;
    Py_ssize_t len;
    int size;
    if (!PyArg_ParseTuple(args, "y#i", &data, &len, &size)) return NULL;
    if (size < 1 || size > 64) {
        PyErr_SetString(PyExc_ValueError, "digest size must be 1..64");
        return NULL;
    }
    char hex[128];
    blake2b_hex((const uint8_t *)data, (size_t)len, size, hex);
    return hex_str(hex, 2 * size);
}


/* ---------------------------------------------------------------------------------------------------------
 * Instruction lines (hlodiff.hlo.parser._Parser._parse_body with _fast_instruction)
 *
 * parse_lines reads instruction lines from lines[i] on and appends an Instruction per line to the computation's
 * list, as the parser's fast path would. It takes only the lines it can read with no doubt: ASCII without control
 * characters or comments, one statement per line, an array shape already in the parser's shape cache, operands
 * untyped or typed exactly as their definitions would be written, attribute values of the kinds the fast path's
 * expressions know. At any other line (and at the '}' that closes the computation) it returns that line's index,
 * and the Python parser takes the line (with its checks and error messages), then hands back.
 */

static PyObject *name_cache; /* opcode and attribute-key texts, shared (they recur on every line) */

static inline int is_ws(char c) { return c == ' ' || c == '\t'; }
static inline int is_lower(char c) { return c >= 'a' && c <= 'z'; }
static inline int is_digit(char c) { return c >= '0' && c <= '9'; }
static inline int is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static inline int is_name(char c) { return is_alpha(c) || is_digit(c) || c == '_' || c == '.' || c == '-'; }

static Py_ssize_t skip_ws(const char *p, Py_ssize_t pos, Py_ssize_t n) {
    while (pos < n && is_ws(p[pos])) pos++;
    return pos;
}

static PyObject *ascii_str(const char *s, Py_ssize_t n) {
    PyObject *o = PyUnicode_New(n, 127);
    if (o == NULL) return NULL;
    memcpy(PyUnicode_DATA(o), s, (size_t)n);
    return o;
}

static PyObject *shared_str(const char *s, Py_ssize_t n) {
    PyObject *o = ascii_str(s, n);
    if (o == NULL) return NULL;
    PyObject *known = PyDict_SetDefault(name_cache, o, o);
    Py_XINCREF(known);
    Py_DECREF(o);
    return known;
}

/* shape + " %" + name for ASCII texts (how an instruction is written as a typed operand). */
static PyObject *typed_ref(PyObject *shape, PyObject *name) {
    if (!PyUnicode_IS_ASCII(shape) || !PyUnicode_IS_ASCII(name)) return PyUnicode_FromFormat("%U %%%U", shape, name);
    Py_ssize_t a = PyUnicode_GET_LENGTH(shape), b = PyUnicode_GET_LENGTH(name);
    PyObject *o = PyUnicode_New(a + 2 + b, 127);
    if (o == NULL) return NULL;
    char *d = (char *)PyUnicode_DATA(o);
    memcpy(d, PyUnicode_DATA(shape), (size_t)a);
    d[a] = ' ';
    d[a + 1] = '%';
    memcpy(d + a + 2, PyUnicode_DATA(name), (size_t)b);
    return o;
}

/* An array shape "f32[2,3]{1,0}" at pos (the parser's _ARRAY): its end, or -1. */
static Py_ssize_t array_end(const char *p, Py_ssize_t pos, Py_ssize_t n, int *has_pct) {
    if (pos >= n || !is_lower(p[pos])) return -1;
    pos++;
    while (pos < n && (is_lower(p[pos]) || is_digit(p[pos]))) pos++;
    if (pos >= n || p[pos] != '[') return -1;
    pos++;
    while (pos < n && p[pos] != ']') {
        if (p[pos] == '%') *has_pct = 1;
        pos++;
    }
    if (pos >= n) return -1;
    pos++;
    if (pos < n && p[pos] == '{') {
        Py_ssize_t q = pos + 1;
        while (q < n && p[q] != '{' && p[q] != '}') {
            if (p[q] == '%') *has_pct = 1;
            q++;
        }
        /* A layout counts only when white space follows it (the expression backtracks otherwise, and then the
           '{' where white space must be fails the line). */
        if (q < n && p[q] == '}') return q + 1;
    }
    return pos;
}

/* A quoted string at pos (p[pos] == '"'): the offset after its closing quote, or -1. */
static Py_ssize_t string_end(const char *p, Py_ssize_t pos, Py_ssize_t n) {
    pos++;
    while (pos < n) {
        char c = p[pos];
        if (c == '\\') {
            if (pos + 1 >= n) return -1;
            pos += 2;
            continue;
        }
        if (c == '"') return pos + 1;
        pos++;
    }
    return -1;
}

/* One attribute value (the parser's _VALUE: a string, braces nested up to four deep, an iota list, a bare word
   with an optional parenthesized tail): its end, or -1. */
static Py_ssize_t value_end(const char *p, Py_ssize_t pos, Py_ssize_t n) {
    if (pos >= n) return -1;
    char c = p[pos];
    if (c == '"') return string_end(p, pos, n);
    if (c == '{') {
        int depth = 0;
        while (pos < n) {
            c = p[pos];
            if (c == '{') {
                if (++depth > 4) return -1;
            } else if (c == '}') {
                if (--depth == 0) return pos + 1;
            } else if (c == '"') {
                pos = string_end(p, pos, n);
                if (pos < 0) return -1;
                continue;
            }
            pos++;
        }
        return -1;
    }
    if (c == '[') { /* iota replica groups: [4,2]<=[8] or [2,4]<=[4,2]T(1,0) */
        Py_ssize_t q = pos + 1;
        while (q < n && p[q] != ']') q++;
        if (q + 3 < n && p[q + 1] == '<' && p[q + 2] == '=' && p[q + 3] == '[') {
            q += 4;
            while (q < n && p[q] != ']') q++;
            if (q < n) {
                q++;
                if (q + 1 < n && p[q] == 'T' && p[q + 1] == '(') {
                    Py_ssize_t r = q + 2;
                    while (r < n && p[r] != '(' && p[r] != ')') r++;
                    if (r < n && p[r] == ')') q = r + 1;
                }
                return q;
            }
        }
    }
    Py_ssize_t start = pos;
    while (pos < n) {
        c = p[pos];
        if (c == ',' || is_ws(c) || c == '{' || c == '}' || c == '"' || c == '(' || c == ')') break;
        pos++;
    }
    if (pos == start) return -1;
    if (pos < n && p[pos] == '(') {
        Py_ssize_t r = pos + 1;
        while (r < n && p[r] != '(' && p[r] != ')') r++;
        if (r < n && p[r] == ')') pos = r + 1;
    }
    return pos;
}

/* ", key=value" pairs from pos to the end of the line into a new dict; NULL with no error set: not for here. */
static PyObject *read_attributes(const char *p, Py_ssize_t pos, Py_ssize_t n) {
    PyObject *attrs = PyDict_New();
    if (attrs == NULL) return NULL;
    while (1) {
        pos = skip_ws(p, pos, n);
        if (pos >= n) return attrs;
        if (p[pos] != ',') goto defer;
        pos = skip_ws(p, pos + 1, n);
        Py_ssize_t key_start = pos;
        while (pos < n && is_name(p[pos])) pos++;
        if (pos == key_start) goto defer;
        Py_ssize_t key_end = pos;
        pos = skip_ws(p, pos, n);
        if (pos >= n || p[pos] != '=') goto defer;
        pos = skip_ws(p, pos + 1, n);
        Py_ssize_t end = value_end(p, pos, n);
        if (end < 0) goto defer;
        PyObject *key = shared_str(p + key_start, key_end - key_start);
        if (key == NULL) goto fail;
        int dup = PyDict_Contains(attrs, key);
        PyObject *value = dup == 0 ? ascii_str(p + pos, end - pos) : NULL;
        int rc = value ? PyDict_SetItem(attrs, key, value) : -1;
        Py_DECREF(key);
        Py_XDECREF(value);
        if (dup == 1) goto defer; /* the general path reports it with a position */
        if (rc < 0) goto fail;
        pos = end;
    }
defer:
    Py_DECREF(attrs);
    return NULL;
fail:
    Py_DECREF(attrs);
    return NULL;
}

/* Untyped operands "%a, %b" (the parser's _UNTYPED_OPERANDS): a tuple of names; NULL with no error: not here. */
static PyObject *untyped_operands(const char *p, Py_ssize_t pos, Py_ssize_t end) {
    PyObject *names = PyList_New(0);
    if (names == NULL) return NULL;
    while (1) {
        pos = skip_ws(p, pos, end);
        if (pos < end && p[pos] == '%') pos++;
        Py_ssize_t start = pos;
        while (pos < end && is_name(p[pos])) pos++;
        if (pos == start) goto defer;
        PyObject *name = ascii_str(p + start, pos - start);
        if (name == NULL || PyList_Append(names, name) < 0) {
            Py_XDECREF(name);
            Py_DECREF(names);
            return NULL;
        }
        Py_DECREF(name);
        pos = skip_ws(p, pos, end);
        if (pos >= end) break;
        if (p[pos] != ',') goto defer;
        pos++;
    }
    PyObject *tuple = PyList_AsTuple(names);
    Py_DECREF(names);
    return tuple;
defer:
    Py_DECREF(names);
    return NULL;
}

/* A tuple shape "(f32[2]{0}, u32[])" at pos (p[pos] == '('), nesting at most max_depth parentheses: its end, or
   -1. Quotes and comments never reach here (plain_line). */
static Py_ssize_t paren_end(const char *p, Py_ssize_t pos, Py_ssize_t n, int max_depth) {
    int depth = 0;
    for (; pos < n; pos++) {
        if (p[pos] == '(') {
            if (++depth > max_depth) return -1;
        } else if (p[pos] == ')') {
            if (--depth == 0) return pos + 1;
        }
    }
    return -1;
}

static int append_text(PyObject *list, const char *s, Py_ssize_t n) {
    PyObject *o = s ? ascii_str(s, n) : Py_NewRef(Py_None);
    if (o == NULL) return -1;
    int rc = PyList_Append(list, o);
    Py_DECREF(o);
    return rc;
}

/* Typed operands "f32[2]{0} %a, f32[2]{0} %b" (the parser's _TYPED_OPERANDS): names and shape texts into the
   lists. 1: written exactly as their definitions would be (typed_refs), the way torch_xla writes every operand;
   2: read, but written otherwise (another spacing or shape, a forward reference): checked after the computation;
   0: not this grammar; -1: error. */
static int typed_operands(const char *p, Py_ssize_t pos, Py_ssize_t end, PyObject *typed_refs, PyObject *names,
                          PyObject *shapes) {
    Py_ssize_t body = pos;
    Buf written;
    buf_init(&written);
    int exact = 1, rc = 1;
    while (1) {
        pos = skip_ws(p, pos, end);
        int has_pct = 0;
        Py_ssize_t shape_start = pos, shape_end = array_end(p, pos, end, &has_pct);
        if (shape_end < 0 || has_pct || shape_end >= end || !is_ws(p[shape_end])) goto mismatch;
        pos = skip_ws(p, shape_end, end);
        if (pos >= end || p[pos] != '%') goto mismatch;
        Py_ssize_t start = ++pos;
        while (pos < end && is_name(p[pos])) pos++;
        if (pos == start) goto mismatch;
        PyObject *name = ascii_str(p + start, pos - start);
        if (name == NULL || PyList_Append(names, name) < 0 ||
            append_text(shapes, p + shape_start, shape_end - shape_start) < 0) {
            Py_XDECREF(name);
            goto fail;
        }
        if (exact) {
            PyObject *ref = PyDict_GetItemWithError(typed_refs, name);
            if (ref == NULL && PyErr_Occurred()) {
                Py_DECREF(name);
                goto fail;
            }
            if (ref == NULL) exact = 0;
            else if ((PyList_GET_SIZE(names) > 1 && buf_put(&written, ", ", 2) < 0) || buf_put_str(&written, ref) < 0) {
                Py_DECREF(name);
                goto fail;
            }
        }
        Py_DECREF(name);
        pos = skip_ws(p, pos, end);
        if (pos >= end) break;
        if (p[pos] != ',') goto mismatch;
        pos++;
    }
    if (!exact || (Py_ssize_t)written.len != end - body || memcmp(written.data, p + body, written.len) != 0) rc = 2;
    buf_free(&written);
    return rc;
mismatch:
    buf_free(&written);
    return PyList_SetSlice(names, 0, PyList_GET_SIZE(names), NULL) < 0 ||
           PyList_SetSlice(shapes, 0, PyList_GET_SIZE(shapes), NULL) < 0 ? -1 : 0;
fail:
    buf_free(&written);
    return -1;
}

/* Operands some typed and some not, or typed with a tuple shape ("(u64[2]{0}, u32[2]{0}) %rng.3"): the parser's
   _OPERAND_ITEM items, one after the other to the end. 1: read (names, and shape texts or None); 0: not this
   grammar; -1: error. */
static int operand_items(const char *p, Py_ssize_t pos, Py_ssize_t end, PyObject *names, PyObject *shapes) {
    while (1) {
        pos = skip_ws(p, pos, end);
        Py_ssize_t shape_start = pos, shape_end = -1;
        int has_pct = 0;
        if (pos < end && p[pos] == '(')
            shape_end = paren_end(p, pos, end, 2);
        else
            shape_end = array_end(p, pos, end, &has_pct);
        if (shape_end >= 0) {
            if (has_pct || shape_end >= end || !is_ws(p[shape_end])) return 0;
            pos = skip_ws(p, shape_end, end);
        } else if (pos < end && p[pos] == '(') {
            return 0;
        }
        if (pos < end && p[pos] == '%') pos++;
        Py_ssize_t start = pos;
        while (pos < end && is_name(p[pos])) pos++;
        if (pos == start) return 0;
        if (append_text(names, p + start, pos - start) < 0 ||
            append_text(shapes, shape_end >= 0 ? p + shape_start : NULL, shape_end - shape_start) < 0)
            return -1;
        pos = skip_ws(p, pos, end);
        if (pos >= end) return 1;
        if (p[pos] != ',') return 0;
        pos++;
        if (pos == end) return 1; /* a last ',' ends the list (the expression's '(?:,|$)') */
    }
}

/* Whether some typed item is written otherwise than its definition would be (typed_refs): then it is checked. */
static int declared_otherwise(PyObject *names, PyObject *shapes, PyObject *typed_refs) {
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(names); k++) {
        PyObject *shape = PyList_GET_ITEM(shapes, k), *name = PyList_GET_ITEM(names, k);
        if (shape == Py_None) continue;
        PyObject *ref = PyDict_GetItemWithError(typed_refs, name);
        if (ref == NULL) {
            if (PyErr_Occurred()) return -1;
            return 1;
        }
        PyObject *want = typed_ref(shape, name);
        if (want == NULL) return -1;
        int eq = PyObject_RichCompareBool(ref, want, Py_EQ);
        Py_DECREF(want);
        if (eq <= 0) return eq < 0 ? -1 : 1;
    }
    return 0;
}

/* " ".join(body.split()) for a body of ASCII without control characters. */
static PyObject *joined_words(const char *p, Py_ssize_t pos, Py_ssize_t end) {
    Buf b;
    buf_init(&b);
    while (1) {
        pos = skip_ws(p, pos, end);
        if (pos >= end) break;
        Py_ssize_t start = pos;
        while (pos < end && !is_ws(p[pos])) pos++;
        if ((b.len && buf_put(&b, " ", 1) < 0) || buf_put(&b, p + start, (size_t)(pos - start)) < 0) {
            buf_free(&b);
            return NULL;
        }
    }
    PyObject *s = ascii_str(b.data, (Py_ssize_t)b.len);
    buf_free(&b);
    return s;
}

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

static PyObject *read_shape(const char *p, Py_ssize_t pos, Py_ssize_t n, PyObject *shapes, PyObject *parse_array,
                            PyObject *shape_type, Py_ssize_t *end, int depth);

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
    shape_text = ascii_str(p + shape_start, shape_end - shape_start);
    if (shape_text == NULL) goto done;
    PyObject *shape = tuple;
    if (tuple != NULL) { /* found by its text from now on, as the parser does */
        shape = PyDict_SetDefault(shapes, shape_text, tuple);
        if (shape == NULL) goto done;
    } else {
        shape = PyDict_GetItemWithError(shapes, shape_text); /* borrowed */
    }
    if (shape == NULL) goto done; /* a shape not seen yet: the parser reads it (and caches it) */
    name = ascii_str(p + name_start, name_end - name_start);
    opcode = name ? shared_str(p + op_start, op_end - op_start) : NULL;
    if (opcode == NULL) goto done;
    if (!tuple_shape) { /* how this instruction is written as a typed operand (array shapes only, as the parser) */
        ref = typed_ref(shape_text, name);
        if (ref == NULL || PyDict_SetItem(typed_refs, name, ref) < 0) goto done;
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
    attrs = end < n ? read_attributes(p, end, n) : PyDict_New();
    if (attrs == NULL) goto done;
    if (operands == NULL) {
        operands = PyTuple_New(0);
        if (operands == NULL) goto done;
    }
    PyObject *line_no = PyLong_FromLong(line_number), *col_no = PyLong_FromSsize_t(col + 1);
    if (line_no && col_no) {
        PyObject *args[11] = {name, shape, opcode, operands, attrs, root ? Py_True : Py_False,
                              literal ? literal : Py_None, param ? param : Py_None, NULL, line_no, col_no};
        args[8] = PyLong_FromLong(0);
        if (args[8] != NULL) {
            result = PyObject_Vectorcall(inst_type, args, 11, NULL);
            Py_DECREF(args[8]);
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

static PyObject *parse_lines(PyObject *self, PyObject *args) {
    PyObject *lines, *typed_refs, *shapes, *inst_type, *out, *declared, *parse_array, *shape_type;
    Py_ssize_t i;
    long first_line;
    if (!PyArg_ParseTuple(args, "O!nlO!O!OO!O!OO", &PyList_Type, &lines, &i, &first_line, &PyDict_Type,
                          &typed_refs, &PyDict_Type, &shapes, &inst_type, &PyList_Type, &out, &PyList_Type, &declared,
                          &parse_array, &shape_type))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(lines);
    Buf blanked;
    buf_init(&blanked);
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
    return PyLong_FromSsize_t(i);
fail:
    buf_free(&blanked);
    return NULL;
}

/* ---------------------------------------------------------------------------------------------------------
 * Walks over a computation's operand lists (hlodiff.graph.canonical / fingerprint / passes.parameter_order):
 * operands maps each instruction name to the list of its operands' names.
 */

static PyObject *operands_of(PyObject *operands, PyObject *name) {
    PyObject *ops = PyDict_GetItemWithError(operands, name);
    if (ops == NULL && !PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, name);
    if (ops != NULL && !PyList_Check(ops) && !PyTuple_Check(ops)) {
        PyErr_SetString(PyExc_TypeError, "operand lists must be lists or tuples");
        return NULL;
    }
    return ops; /* borrowed */
}

#define OPS_SIZE(o) (PyList_Check(o) ? PyList_GET_SIZE(o) : PyTuple_GET_SIZE(o))
#define OPS_ITEM(o, i) (PyList_Check(o) ? PyList_GET_ITEM(o, i) : PyTuple_GET_ITEM(o, i))

/* live_nodes: the roots and everything they depend on, as a set. */
static PyObject *live(PyObject *self, PyObject *args) {
    PyObject *roots, *operands;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &roots, &PyDict_Type, &operands)) return NULL;
    PyObject *seen = PySet_New(roots);
    PyObject *stack = seen ? PyList_GetSlice(roots, 0, PyList_GET_SIZE(roots)) : NULL;
    if (stack == NULL) goto fail;
    while (PyList_GET_SIZE(stack)) {
        Py_ssize_t top = PyList_GET_SIZE(stack) - 1;
        PyObject *name = PyList_GET_ITEM(stack, top);
        Py_INCREF(name);
        if (PyList_SetSlice(stack, top, top + 1, NULL) < 0) {
            Py_DECREF(name);
            goto fail;
        }
        PyObject *ops = operands_of(operands, name);
        Py_DECREF(name); /* still held by the operands dict's keys */
        if (ops == NULL) goto fail;
        for (Py_ssize_t k = 0; k < OPS_SIZE(ops); k++) {
            PyObject *op = OPS_ITEM(ops, k);
            int has = PySet_Contains(seen, op);
            if (has < 0) goto fail;
            if (!has && (PySet_Add(seen, op) < 0 || PyList_Append(stack, op) < 0)) goto fail;
        }
    }
    Py_DECREF(stack);
    return seen;
fail:
    Py_XDECREF(stack);
    Py_XDECREF(seen);
    return NULL;
}

/* _walk_postorder's walk: the post-order from root (operands in order) and the set of nodes reached. */
static PyObject *postorder(PyObject *self, PyObject *args) {
    PyObject *root, *operands;
    if (!PyArg_ParseTuple(args, "OO!", &root, &PyDict_Type, &operands)) return NULL;
    Py_ssize_t cap = 64, depth = 0;
    PyObject **names = PyMem_Malloc(cap * sizeof(PyObject *));
    Py_ssize_t *next = PyMem_Malloc(cap * sizeof(Py_ssize_t));
    PyObject *order = PyList_New(0), *seen = PySet_New(NULL);
    if (!names || !next || !order || !seen || PySet_Add(seen, root) < 0) goto fail;
    names[0] = root; /* borrowed: every name is a key of operands, which outlives the walk */
    next[0] = 0;
    depth = 1;
    while (depth) {
        PyObject *name = names[depth - 1];
        PyObject *ops = operands_of(operands, name);
        if (ops == NULL) goto fail;
        int pushed = 0;
        while (next[depth - 1] < OPS_SIZE(ops)) {
            PyObject *op = OPS_ITEM(ops, next[depth - 1]++);
            int has = PySet_Contains(seen, op);
            if (has < 0) goto fail;
            if (!has) {
                if (PySet_Add(seen, op) < 0) goto fail;
                if (depth == cap) {
                    cap *= 2;
                    PyObject **n2 = PyMem_Realloc(names, cap * sizeof(PyObject *));
                    if (n2 == NULL) goto fail;
                    names = n2;
                    Py_ssize_t *x2 = PyMem_Realloc(next, cap * sizeof(Py_ssize_t));
                    if (x2 == NULL) goto fail;
                    next = x2;
                }
                names[depth] = op;
                next[depth] = 0;
                depth++;
                pushed = 1;
                break;
            }
        }
        if (!pushed) {
            if (PyList_Append(order, name) < 0) goto fail;
            depth--;
        }
    }
    PyMem_Free(names);
    PyMem_Free(next);
    return Py_BuildValue("(NN)", order, seen);
fail:
    if (!PyErr_Occurred()) PyErr_NoMemory();
    PyMem_Free(names);
    PyMem_Free(next);
    Py_XDECREF(order);
    Py_XDECREF(seen);
    return NULL;
}

/* canonical_ids' walk: pop names from stack; the first time a name is reached, number it when it is a
   parameter, then push its operands not reached yet (last first). Fills ids; seen is updated. */
static PyObject *number_params(PyObject *self, PyObject *args) {
    PyObject *stack, *seen, *params, *operands, *ids;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!", &PyList_Type, &stack, &PySet_Type, &seen, &PySet_Type, &params,
                          &PyDict_Type, &operands, &PyDict_Type, &ids))
        return NULL;
    while (PyList_GET_SIZE(stack)) {
        Py_ssize_t top = PyList_GET_SIZE(stack) - 1;
        PyObject *name = PyList_GET_ITEM(stack, top);
        Py_INCREF(name);
        if (PyList_SetSlice(stack, top, top + 1, NULL) < 0) goto fail;
        int has = PySet_Contains(seen, name);
        if (has < 0) goto fail;
        if (has) {
            Py_DECREF(name);
            continue;
        }
        if (PySet_Add(seen, name) < 0) goto fail;
        int is_param = PySet_Contains(params, name);
        if (is_param < 0) goto fail;
        if (is_param) {
            PyObject *number = PyLong_FromSsize_t(PyDict_GET_SIZE(ids));
            int rc = number ? PyDict_SetItem(ids, name, number) : -1;
            Py_XDECREF(number);
            if (rc < 0) goto fail;
        }
        PyObject *ops = operands_of(operands, name);
        if (ops == NULL) goto fail;
        for (Py_ssize_t k = OPS_SIZE(ops) - 1; k >= 0; k--) {
            PyObject *op = OPS_ITEM(ops, k);
            int reached = PySet_Contains(seen, op);
            if (reached < 0) goto fail;
            if (!reached && PyList_Append(stack, op) < 0) goto fail;
        }
        Py_DECREF(name);
        continue;
    fail:
        Py_DECREF(name);
        return NULL;
    }
    Py_RETURN_NONE;
}

/* Whether every operand list names only instructions defined before it (the order XLA and the tracers print). */
static PyObject *defined_before_use(PyObject *self, PyObject *args) {
    PyObject *operands;
    if (!PyArg_ParseTuple(args, "O!", &PyDict_Type, &operands)) return NULL;
    PyObject *placed = PySet_New(NULL);
    if (placed == NULL) return NULL;
    Py_ssize_t pos = 0;
    PyObject *name, *ops;
    int result = 1;
    while (result == 1 && PyDict_Next(operands, &pos, &name, &ops)) {
        if (!PyList_Check(ops) && !PyTuple_Check(ops)) {
            PyErr_SetString(PyExc_TypeError, "operand lists must be lists or tuples");
            result = -1;
            break;
        }
        for (Py_ssize_t k = 0; k < OPS_SIZE(ops); k++) {
            int has = PySet_Contains(placed, OPS_ITEM(ops, k));
            if (has <= 0) {
                result = has;
                break;
            }
        }
        if (result == 1 && PySet_Add(placed, name) < 0) result = -1;
    }
    Py_DECREF(placed);
    if (result < 0) return NULL;
    return PyBool_FromLong(result);
}

/* ---------------------------------------------------------------------------------------------------------
 * Matching and classification (hlodiff.diff): l2r and r2l map paired names both ways; how names the matcher.
 */

static int pair(PyObject *l2r, PyObject *r2l, PyObject *how, PyObject *kind, PyObject *l, PyObject *r) {
    int a = PyDict_Contains(l2r, l), b = a == 0 ? PyDict_Contains(r2l, r) : a;
    if (a < 0 || b < 0) return -1;
    if (a || b) return 0;
    if (PyDict_SetItem(l2r, l, r) < 0 || PyDict_SetItem(r2l, r, l) < 0 || PyDict_SetItem(how, l, kind) < 0)
        return -1;
    return 1;
}

/* matchers._match_equal_subgraphs: pair left and right, then their free operands at equal positions, down. */
static int equal_subgraphs(PyObject *l2r, PyObject *r2l, PyObject *how, PyObject *lops_of, PyObject *rops_of,
                           PyObject *left, PyObject *right, int force, PyObject *kind) {
    PyObject *stack = PyList_New(0);
    if (stack == NULL) return -1;
    PyObject *first = PyTuple_Pack(2, left, right);
    if (first == NULL || PyList_Append(stack, first) < 0) {
        Py_XDECREF(first);
        goto fail;
    }
    Py_DECREF(first);
    while (PyList_GET_SIZE(stack)) {
        Py_ssize_t top = PyList_GET_SIZE(stack) - 1;
        PyObject *item = PyList_GET_ITEM(stack, top);
        Py_INCREF(item);
        if (PyList_SetSlice(stack, top, top + 1, NULL) < 0) {
            Py_DECREF(item);
            goto fail;
        }
        PyObject *l = PyTuple_GET_ITEM(item, 0), *r = PyTuple_GET_ITEM(item, 1);
        int added = pair(l2r, r2l, how, kind, l, r);
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

static PyObject *match_equal(PyObject *self, PyObject *args) {
    PyObject *l2r, *r2l, *how, *lops_of, *rops_of, *left, *right, *kind;
    int force;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!OOpO", &PyDict_Type, &l2r, &PyDict_Type, &r2l, &PyDict_Type, &how,
                          &PyDict_Type, &lops_of, &PyDict_Type, &rops_of, &left, &right, &force, &kind))
        return NULL;
    if (equal_subgraphs(l2r, r2l, how, lops_of, rops_of, left, right, force, kind) < 0) return NULL;
    Py_RETURN_NONE;
}

/* Names grouped by their hash, in order: hash -> [names]. */
static PyObject *group_by(PyObject *self, PyObject *args) {
    PyObject *order, *hashes;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &order, &PyDict_Type, &hashes)) return NULL;
    PyObject *groups = PyDict_New();
    if (groups == NULL) return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(order); i++) {
        PyObject *name = PyList_GET_ITEM(order, i);
        PyObject *h = PyDict_GetItemWithError(hashes, name);
        if (h == NULL) {
            if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, name);
            goto fail;
        }
        PyObject *list = PyDict_GetItemWithError(groups, h);
        if (list == NULL) {
            if (PyErr_Occurred()) goto fail;
            list = PyList_New(0);
            int rc = list ? PyDict_SetItem(groups, h, list) : -1;
            Py_XDECREF(list); /* held by groups */
            if (rc < 0) goto fail;
        }
        if (PyList_Append(list, name) < 0) goto fail;
    }
    return groups;
fail:
    Py_DECREF(groups);
    return NULL;
}

/* matchers.match_exact's walk, users first: a left name whose hash one right name alone shares (and no other
   left name) is paired with it and the subgraphs below are paired; a hash several share goes to tied(name). */
static PyObject *exact_walk(PyObject *self, PyObject *args) {
    PyObject *order, *lanon, *rights_by, *lefts_by, *l2r, *r2l, *how, *lops_of, *rops_of, *kind, *tied;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!O!O!O!O!OO", &PyList_Type, &order, &PyDict_Type, &lanon, &PyDict_Type,
                          &rights_by, &PyDict_Type, &lefts_by, &PyDict_Type, &l2r, &PyDict_Type, &r2l, &PyDict_Type,
                          &how, &PyDict_Type, &lops_of, &PyDict_Type, &rops_of, &kind, &tied))
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
        if (!PyList_Check(rights) || PyList_GET_SIZE(rights) == 0) continue;
        if (PyList_GET_SIZE(rights) == 1 && lefts != NULL && PyList_Check(lefts) && PyList_GET_SIZE(lefts) == 1) {
            PyObject *r = PyList_GET_ITEM(rights, 0);
            int taken = PyDict_Contains(r2l, r);
            if (taken < 0) return NULL;
            if (!taken) {
                Py_INCREF(r);
                int rc = equal_subgraphs(l2r, r2l, how, lops_of, rops_of, name, r, 0, kind);
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
   equal positions where neither side is paired; none: settled; some: handle(lname, rname, free) decides. */
static PyObject *top_down(PyObject *self, PyObject *args) {
    PyObject *order, *l2r, *r2l, *settled, *lops_of, *rops_of, *root, *handle;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!O!OO", &PyList_Type, &order, &PyDict_Type, &l2r, &PyDict_Type, &r2l,
                          &PySet_Type, &settled, &PyDict_Type, &lops_of, &PyDict_Type, &rops_of, &root, &handle))
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
                } else {
                    PyObject *res = PyObject_CallFunctionObjArgs(handle, l, r, free, NULL);
                    if (res == NULL) rc = -1;
                    Py_XDECREF(res);
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
static PyObject *unsettled_pairs(PyObject *self, PyObject *args) {
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
static PyObject *users_of(PyObject *self, PyObject *args) {
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

/* parser._check_computation's loop: names defined once, one ROOT, parameter numbers distinct and not negative.
   Returns whether some operand is used before its definition, or None when a rule is broken (the parser's loop
   then finds it and says where). */
static PyObject *s_name, *s_operands, *s_is_root, *s_parameter_number;

static PyObject *names_in_order(PyObject *self, PyObject *args) {
    PyObject *insts;
    if (!PyArg_ParseTuple(args, "O!", &PyList_Type, &insts)) return NULL;
    PyObject *defined = PySet_New(NULL), *params = PySet_New(NULL);
    int forward = 0, roots = 0, broken = 0, failed = 0;
    if (!defined || !params) failed = 1;
    for (Py_ssize_t i = 0; !failed && !broken && i < PyList_GET_SIZE(insts); i++) {
        PyObject *inst = PyList_GET_ITEM(insts, i);
        PyObject *name = PyObject_GetAttr(inst, s_name);
        PyObject *ops = name ? PyObject_GetAttr(inst, s_operands) : NULL;
        PyObject *root = ops ? PyObject_GetAttr(inst, s_is_root) : NULL;
        PyObject *number = root ? PyObject_GetAttr(inst, s_parameter_number) : NULL;
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

/* ---------------------------------------------------------------------------------------------------------
 * Per-computation indexes (hlodiff.graph.canonical.build_computation and the facts passes look up once).
 */

static PyObject *s_custom_call_has_side_effect, *s_true, *s_parameter;

/* build_computation's maps: name -> instruction, name -> list of operand names; and the parameters (text order)
   and the instructions with a side effect (opcode in effects, or custom_call_has_side_effect="true"). */
static PyObject *index_computation(PyObject *self, PyObject *args) {
    PyObject *instructions, *effects;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &instructions, &PyFrozenSet_Type, &effects)) return NULL;
    PyObject *insts = PyDict_New(), *operands = PyDict_New(), *params = PyList_New(0), *marked = PyList_New(0);
    if (!insts || !operands || !params || !marked) goto fail;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(instructions); i++) {
        PyObject *inst = PyList_GET_ITEM(instructions, i);
        PyObject *name = PyObject_GetAttr(inst, s_name);
        PyObject *ops = name ? PyObject_GetAttr(inst, s_operands) : NULL;
        PyObject *opcode = ops ? PyObject_GetAttr(inst, s_opcode) : NULL;
        PyObject *attrs = opcode ? PyObject_GetAttr(inst, s_attrs) : NULL;
        PyObject *list = attrs ? PySequence_List(ops) : NULL;
        int rc = list ? 0 : -1;
        if (rc == 0) rc = PyDict_SetItem(insts, name, inst);
        if (rc == 0) rc = PyDict_SetItem(operands, name, list);
        if (rc == 0) {
            int is_param = PyUnicode_Check(opcode) && PyUnicode_Compare(opcode, s_parameter) == 0;
            if (is_param) rc = PyList_Append(params, name);
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
    return Py_BuildValue("(NNNN)", insts, operands, params, marked);
fail:
    Py_XDECREF(insts);
    Py_XDECREF(operands);
    Py_XDECREF(params);
    Py_XDECREF(marked);
    return NULL;
}

/* The instructions (in order) whose attributes hold one of keys (the calls: to_apply, body, ...). */
static PyObject *with_attribute(PyObject *self, PyObject *args) {
    PyObject *instructions, *keys;
    if (!PyArg_ParseTuple(args, "OO!", &instructions, &PyFrozenSet_Type, &keys)) return NULL;
    PyObject *seq = PySequence_Fast(instructions, "instructions must be a sequence");
    if (seq == NULL) return NULL;
    PyObject *out = PyList_New(0);
    if (out == NULL) goto fail;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
        PyObject *inst = PySequence_Fast_GET_ITEM(seq, i);
        PyObject *attrs = PyObject_GetAttr(inst, s_attrs);
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

/* compare._renamed_and_metadata: how many pairs differ in name, and (when asked) in their metadata attribute. */
static PyObject *renamed_and_metadata(PyObject *self, PyObject *args) {
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
        PyObject *la = PyObject_GetAttr(li, s_attrs), *ra = la ? PyObject_GetAttr(ri, s_attrs) : NULL;
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
        if (differ < 0) return NULL;
        meta += differ;
    }
    return Py_BuildValue("(nn)", renamed, meta);
}

/* ---------------------------------------------------------------------------------------------------------
 * Computation headers, attribute values and the parse-time rules' triage (hlodiff.hlo.parser, scan, checks).
 */

static inline int is_sp(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
static inline int is_re_space(char c) { return is_sp(c) || c == '\f' || c == '\v'; }

/* One shape at pos as shapes.parse_shape_at reads it (white space first; tuples with comments between
   elements; arrays found in the shape cache, or read once by parse_array(text, 0), which caches them); NULL with no
   error set for anything else (a buffer shape, a syntax error): the Python reader takes it and says what is wrong. */
static PyObject *s_tuple_shapes;

static PyObject *read_shape(const char *p, Py_ssize_t pos, Py_ssize_t n, PyObject *shapes, PyObject *parse_array,
                            PyObject *shape_type, Py_ssize_t *end, int depth) {
    while (pos < n && is_sp(p[pos])) pos++;
    if (pos >= n) return NULL;
    if (p[pos] == '(') {
        if (depth > 64) return NULL;
        PyObject *elements = PyList_New(0);
        if (elements == NULL) return NULL;
        pos++;
        while (1) {
            while (pos < n) { /* white space and comments, as _skip_space_and_comments */
                if (is_sp(p[pos])) {
                    pos++;
                } else if (pos + 1 < n && p[pos] == '/' && p[pos + 1] == '*') {
                    Py_ssize_t close = pos + 2;
                    while (close + 1 < n && !(p[close] == '*' && p[close + 1] == '/')) close++;
                    if (close + 1 >= n) goto not_here;
                    pos = close + 2;
                } else {
                    break;
                }
            }
            if (pos < n && p[pos] == ')') {
                pos++;
                break;
            }
            if (PyList_GET_SIZE(elements)) {
                if (pos >= n || p[pos] != ',') goto not_here;
                pos++;
                while (pos < n) {
                    if (is_sp(p[pos])) {
                        pos++;
                    } else if (pos + 1 < n && p[pos] == '/' && p[pos + 1] == '*') {
                        Py_ssize_t close = pos + 2;
                        while (close + 1 < n && !(p[close] == '*' && p[close + 1] == '/')) close++;
                        if (close + 1 >= n) goto not_here;
                        pos = close + 2;
                    } else {
                        break;
                    }
                }
            }
            Py_ssize_t e;
            PyObject *element = read_shape(p, pos, n, shapes, parse_array, shape_type, &e, depth + 1);
            if (element == NULL) goto not_here;
            int rc = PyList_Append(elements, element);
            Py_DECREF(element);
            if (rc < 0) goto not_here;
            pos = e;
        }
        PyObject *items = PyList_AsTuple(elements);
        Py_DECREF(elements);
        if (items == NULL) return NULL;
        PyObject *kind = PyUnicode_FromString("tuple");
        PyObject *pargs = kind ? PyTuple_Pack(1, kind) : NULL;
        PyObject *kwargs = pargs ? PyDict_New() : NULL;
        PyObject *shape = NULL;
        if (kwargs != NULL && PyDict_SetItem(kwargs, s_tuple_shapes, items) == 0)
            shape = PyObject_Call(shape_type, pargs, kwargs);
        Py_XDECREF(kind);
        Py_XDECREF(pargs);
        Py_XDECREF(kwargs);
        Py_DECREF(items);
        *end = pos;
        return shape;
    not_here:
        Py_DECREF(elements);
        return NULL;
    }
    int has_pct = 0;
    Py_ssize_t e = array_end(p, pos, n, &has_pct);
    if (e < 0) return NULL;
    PyObject *key = ascii_str(p + pos, e - pos);
    if (key == NULL) return NULL;
    PyObject *shape = PyDict_GetItemWithError(shapes, key);
    Py_XINCREF(shape);
    if (shape == NULL && !PyErr_Occurred()) {
        PyObject *read = PyObject_CallFunction(parse_array, "On", key, (Py_ssize_t)0);
        if (read == NULL) { /* not an element type XLA knows, or another syntax error: the parser says so */
            PyErr_Clear();
        } else {
            if (PyTuple_Check(read) && PyTuple_GET_SIZE(read) == 2 &&
                PyLong_AsSsize_t(PyTuple_GET_ITEM(read, 1)) == e - pos) {
                shape = PyTuple_GET_ITEM(read, 0);
                Py_INCREF(shape);
            }
            if (PyErr_Occurred()) PyErr_Clear();
            Py_DECREF(read);
        }
    }
    Py_DECREF(key);
    *end = e;
    return shape;
}

/* parser._signature for "(x: f32[], y: f32[]) -> f32[]" at pos (p[pos] == '('), when every shape is an array
   shape already cached: ((params, result), end); None: the parser reads it (and says what is wrong). */
static PyObject *signature(PyObject *self, PyObject *args) {
    PyObject *text, *shapes, *parse_array, *shape_type;
    Py_ssize_t pos;
    if (!PyArg_ParseTuple(args, "UnO!OO", &text, &pos, &PyDict_Type, &shapes, &parse_array, &shape_type)) return NULL;
    if (!PyUnicode_IS_ASCII(text)) Py_RETURN_NONE;
    const char *p = (const char *)PyUnicode_1BYTE_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    PyObject *params = PyList_New(0);
    if (params == NULL) return NULL;
    pos++;
    while (1) {
        while (pos < n && is_sp(p[pos])) pos++;
        if (pos < n && p[pos] == ')') {
            pos++;
            break;
        }
        if (PyList_GET_SIZE(params)) {
            if (pos >= n || p[pos] != ',') goto defer;
            pos++;
            while (pos < n && is_sp(p[pos])) pos++;
        }
        if (pos < n && p[pos] == '%') pos++;
        Py_ssize_t start = pos;
        while (pos < n && is_name(p[pos])) pos++;
        if (pos == start) goto defer;
        Py_ssize_t name_end = pos;
        while (pos < n && is_re_space(p[pos])) pos++;
        if (pos >= n || p[pos] != ':') goto defer;
        pos++;
        while (pos < n && is_re_space(p[pos])) pos++;
        Py_ssize_t end;
        PyObject *shape = read_shape(p, pos, n, shapes, parse_array, shape_type, &end, 0);
        if (shape == NULL) {
            if (PyErr_Occurred()) goto fail;
            goto defer;
        }
        PyObject *name = ascii_str(p + start, name_end - start);
        PyObject *item = name ? PyTuple_Pack(2, name, shape) : NULL;
        Py_XDECREF(name);
        Py_DECREF(shape);
        if (item == NULL || PyList_Append(params, item) < 0) {
            Py_XDECREF(item);
            goto fail;
        }
        Py_DECREF(item);
        pos = end;
    }
    while (pos < n && is_sp(p[pos])) pos++;
    if (pos + 1 >= n || p[pos] != '-' || p[pos + 1] != '>') goto defer;
    pos += 2;
    Py_ssize_t end;
    PyObject *result = read_shape(p, pos, n, shapes, parse_array, shape_type, &end, 0);
    if (result == NULL) {
        if (PyErr_Occurred()) goto fail;
        goto defer;
    }
    PyObject *tuple = PyList_AsTuple(params);
    Py_DECREF(params);
    if (tuple == NULL) {
        Py_DECREF(result);
        return NULL;
    }
    return Py_BuildValue("((NN)n)", tuple, result, end);
defer:
    Py_DECREF(params);
    Py_RETURN_NONE;
fail:
    Py_DECREF(params);
    return NULL;
}

/* scan.value_end for ASCII text: the next comma outside brackets and strings from pos, or the end; -1 when
   unbalanced; None for other text (the Python scanner reads it). */
static PyObject *value_end_of(PyObject *self, PyObject *args) {
    PyObject *text;
    Py_ssize_t pos;
    if (!PyArg_ParseTuple(args, "Un", &text, &pos)) return NULL;
    if (!PyUnicode_IS_ASCII(text)) Py_RETURN_NONE;
    const char *p = (const char *)PyUnicode_1BYTE_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    long depth = 0;
    for (; pos < n; pos++) {
        char c = p[pos];
        if (c == '"') {
            pos++;
            while (pos < n && p[pos] != '"') pos += p[pos] == '\\' ? 2 : 1;
            if (pos >= n) return PyLong_FromLong(-1);
        } else if (c == '(' || c == '[' || c == '{') {
            depth++;
        } else if (c == ')' || c == ']' || c == '}') {
            if (--depth < 0) return PyLong_FromLong(-1);
        } else if (c == ',' && depth == 0) {
            return PyLong_FromSsize_t(pos);
        }
    }
    return PyLong_FromSsize_t(depth == 0 ? n : -1);
}

/* checks.check_module's triage of one computation: the instructions a rule must look at (their opcode has a
   rule, or they carry control-predecessors or result_accuracy), in order; the opcodes that are not plain XLA
   ones (unknown, or async-) go into odd. */
static PyObject *s_result_accuracy, *s_async_prefix;

static PyObject *triage(PyObject *self, PyObject *args) {
    PyObject *instructions, *ruled, *known, *odd;
    if (!PyArg_ParseTuple(args, "O!O!O!O!", &PyList_Type, &instructions, &PyDict_Type, &ruled, &PyFrozenSet_Type,
                          &known, &PySet_Type, &odd))
        return NULL;
    PyObject *todo = PyList_New(0);
    if (todo == NULL) return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(instructions); i++) {
        PyObject *inst = PyList_GET_ITEM(instructions, i);
        PyObject *opcode = PyObject_GetAttr(inst, s_opcode);
        PyObject *attrs = opcode ? PyObject_GetAttr(inst, s_attrs) : NULL;
        int rc = attrs ? 0 : -1, need = 0;
        if (rc == 0) {
            int has_rule = PyDict_Contains(ruled, opcode);
            if (has_rule < 0) rc = -1;
            else if (has_rule) need = 1;
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

/* dead_code.run's candidates: the names (in order) neither in live nor parameters. */
static PyObject *dead_names(PyObject *self, PyObject *args) {
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
        PyObject *opcode = PyObject_GetAttr(inst, s_opcode);
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
static PyObject *count_attribute(PyObject *self, PyObject *args) {
    PyObject *instructions, *key;
    if (!PyArg_ParseTuple(args, "OU", &instructions, &key)) return NULL;
    PyObject *it = PyObject_GetIter(instructions);
    if (it == NULL) return NULL;
    Py_ssize_t count = 0;
    PyObject *inst;
    while ((inst = PyIter_Next(it)) != NULL) {
        PyObject *attrs = PyObject_GetAttr(inst, s_attrs);
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
static PyObject *s_gte, *s_tuple;

static PyObject *reads_tuple(PyObject *self, PyObject *args) {
    PyObject *insts, *operands;
    if (!PyArg_ParseTuple(args, "O!O!", &PyDict_Type, &insts, &PyDict_Type, &operands)) return NULL;
    Py_ssize_t pos = 0;
    PyObject *name, *inst;
    while (PyDict_Next(insts, &pos, &name, &inst)) {
        PyObject *opcode = PyObject_GetAttr(inst, s_opcode);
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
        PyObject *sop = PyObject_GetAttr(source, s_opcode);
        if (sop == NULL) return NULL;
        int tuple = PyUnicode_Check(sop) && PyUnicode_Compare(sop, s_tuple) == 0;
        Py_DECREF(sop);
        if (tuple) Py_RETURN_TRUE;
    }
    Py_RETURN_FALSE;
}

/* ---------------------------------------------------------------------------------------------------------
 * Module
 */

static PyMethodDef methods[] = {
    {"blake2b_hex", py_blake2b_hex, METH_VARARGS,
     "blake2b_hex(data, size) -> hashlib.blake2b(data, digest_size=size).hexdigest()"},
    {"anon_hashes", anon_hashes, METH_VARARGS,
     "anon_hashes(order, insts, operands, plain, label_fn, shape_text, shape_texts, labels, anon, call_keys): fill "
     "labels and "
     "anonymous hashes in order, as fingerprint._hash_computation's first loop does"},
    {"exact_hashes", exact_hashes, METH_VARARGS,
     "exact_hashes(order, labels, operands, param_ids, hashes): fill exact hashes in order, as "
     "fingerprint._hash_computation's second loop does"},
    {"parse_lines", parse_lines, METH_VARARGS,
     "parse_lines(lines, i, first_line, typed_refs, shapes, Instruction, out, declared, parse_shape_at, Shape) -> "
     "the index of the first "
     "line it left to the Python parser; instructions read are appended to out, typed operands to check to declared"},
    {"live", live, METH_VARARGS, "live(roots, operands) -> the set of roots and all they depend on"},
    {"postorder", postorder, METH_VARARGS,
     "postorder(root, operands) -> (post-order list from root, operands in order; set of nodes reached)"},
    {"number_params", number_params, METH_VARARGS,
     "number_params(stack, seen, params, operands, ids): canonical_ids' depth-first numbering of parameters"},
    {"defined_before_use", defined_before_use, METH_VARARGS,
     "defined_before_use(operands) -> whether each operand list names only earlier instructions"},
    {"match_equal", match_equal, METH_VARARGS,
     "match_equal(l2r, r2l, how, left_operands, right_operands, left, right, force, kind): "
     "matchers._match_equal_subgraphs"},
    {"group_by", group_by, METH_VARARGS, "group_by(order, hashes) -> hash -> names in order"},
    {"exact_walk", exact_walk, METH_VARARGS,
     "exact_walk(order, left_hashes, rights_by_hash, lefts_by_hash, l2r, r2l, how, left_operands, right_operands, "
     "kind, tied): match_exact's walk; hashes shared by several go to tied(name, hash, rights)"},
    {"top_down", top_down, METH_VARARGS,
     "top_down(order, l2r, r2l, settled, left_operands, right_operands, left_root, handle): match_top_down's walk"},
    {"unsettled_pairs", unsettled_pairs, METH_VARARGS,
     "unsettled_pairs(l2r, left_labels, right_labels, left_operands, right_operands) -> pairs classify must look at"},
    {"users_of", users_of, METH_VARARGS, "users_of(operands) -> each name's users, in order, each once"},
    {"names_in_order", names_in_order, METH_VARARGS,
     "names_in_order(instructions) -> whether an operand is used before its definition; None: a rule is broken"},
    {"index_computation", index_computation, METH_VARARGS,
     "index_computation(instructions, side_effect_opcodes) -> (insts, operands, parameters, side_effects)"},
    {"with_attribute", with_attribute, METH_VARARGS,
     "with_attribute(instructions, keys) -> the instructions whose attributes hold one of keys"},
    {"renamed_and_metadata", renamed_and_metadata, METH_VARARGS,
     "renamed_and_metadata(l2r, left_insts, right_insts, count_metadata) -> (renamed, metadata differences)"},
    {"signature", signature, METH_VARARGS,
     "signature(text, pos, shapes, parse_shape_at, Shape) -> ((params, result), end) for a computation header, "
     "or None"},
    {"value_end", value_end_of, METH_VARARGS, "value_end(text, pos) -> scan.value_end for ASCII text, or None"},
    {"triage", triage, METH_VARARGS,
     "triage(instructions, rules, known_opcodes, odd) -> the instructions a parse-time rule must look at"},
    {"dead_names", dead_names, METH_VARARGS, "dead_names(insts, live) -> names not live and not parameters"},
    {"count_attribute", count_attribute, METH_VARARGS, "count_attribute(instructions, key) -> how many carry key"},
    {"reads_tuple", reads_tuple, METH_VARARGS,
     "reads_tuple(insts, operands) -> whether a get-tuple-element reads a tuple instruction directly"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moduledef = {PyModuleDef_HEAD_INIT, "hlodiff._accel", NULL, -1, methods};

PyMODINIT_FUNC PyInit__accel(void) {
    s_opcode = PyUnicode_InternFromString("opcode");
    s_shape = PyUnicode_InternFromString("shape");
    s_literal = PyUnicode_InternFromString("literal");
    s_attrs = PyUnicode_InternFromString("attrs");
    s_truncated = PyUnicode_InternFromString("truncated_operands");
    s_metadata = PyUnicode_InternFromString("metadata");
    name_cache = PyDict_New();
    s_tuple_shapes = PyUnicode_InternFromString("tuple_shapes");
    s_gte = PyUnicode_InternFromString("get-tuple-element");
    s_tuple = PyUnicode_InternFromString("tuple");
    s_result_accuracy = PyUnicode_InternFromString("result_accuracy");
    s_async_prefix = PyUnicode_InternFromString("async-");
    s_custom_call_has_side_effect = PyUnicode_InternFromString("custom_call_has_side_effect");
    s_true = PyUnicode_InternFromString("true");
    s_parameter = PyUnicode_InternFromString("parameter");
    s_name = PyUnicode_InternFromString("name");
    s_operands = PyUnicode_InternFromString("operands");
    s_is_root = PyUnicode_InternFromString("is_root");
    s_parameter_number = PyUnicode_InternFromString("parameter_number");
    s_frontend = PyUnicode_InternFromString("frontend_attributes");
    s_control_predecessors = PyUnicode_InternFromString("control-predecessors");
    if (!s_opcode || !s_shape || !s_literal || !s_attrs || !s_truncated || !s_metadata || !name_cache) return NULL;
    return PyModule_Create(&moduledef);
}
