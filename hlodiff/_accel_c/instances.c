/* Instruction objects read and made through their slots (hlodiff.hlo.model.Instruction, a slots dataclass).
 *
 * Every C pass reads a few fields of each instruction (opcode, attrs, shape, ...); PyObject_GetAttr finds the
 * slot's descriptor through the type on each call, about a twentieth of a large compare. Once the type's layout
 * is known (register_instruction, or the first parse_lines), inst_attr reads the slot at its offset, and
 * inst_new fills the slots of a new object as the dataclass's __init__ would (all fields given, in order), without
 * running that __init__ in Python for each line. Anything else (another type, a subclass, an empty slot, a type
 * whose fields are not plain object slots) goes through the ordinary attribute protocol.
 */
#include "accel.h"
#include <structmember.h>

static const char *field_names[INST_FIELDS] = {"name", "shape", "opcode", "operands", "attrs", "is_root", "literal",
                                               "parameter_number", "truncated_operands", "line", "col"};
static PyTypeObject *inst_type;           /* the registered type (a strong reference), or NULL */
static Py_ssize_t offsets[INST_FIELDS];   /* each field's slot offset in inst_type's objects */
static PyObject *field_keys[INST_FIELDS]; /* interned field names, compared by identity */

/* Learn type's layout when it is a slots class whose fields are plain object slots, with no __post_init__; 0 when
   it is not (the attribute protocol is used then), -1 on error. */
int register_instruction_type(PyObject *type) {
    if ((PyObject *)inst_type == type) return 1;
    if (!PyType_Check(type)) return 0;
    PyTypeObject *t = (PyTypeObject *)type;
    Py_ssize_t found[INST_FIELDS];
    for (int k = 0; k < INST_FIELDS; k++) {
        if (field_keys[k] == NULL && (field_keys[k] = PyUnicode_InternFromString(field_names[k])) == NULL) return -1;
        PyObject *descr = _PyType_Lookup(t, field_keys[k]); /* borrowed */
        if (descr == NULL || !Py_IS_TYPE(descr, &PyMemberDescr_Type)) return 0;
        PyMemberDef *def = ((PyMemberDescrObject *)descr)->d_member;
        if (def->type != T_OBJECT_EX || (def->flags & READONLY) ||
            ((PyMemberDescrObject *)descr)->d_common.d_type != t)
            return 0;
        found[k] = def->offset;
    }
    PyObject *post = PyUnicode_InternFromString("__post_init__");
    if (post == NULL) return -1;
    PyObject *hook = _PyType_Lookup(t, post);
    Py_DECREF(post);
    if (hook != NULL) return 0;
    Py_XDECREF(inst_type);
    Py_INCREF(type);
    inst_type = t;
    memcpy(offsets, found, sizeof(offsets));
    return 1;
}

PyObject *register_instruction(PyObject *self, PyObject *type) {
    int rc = register_instruction_type(type);
    if (rc < 0) return NULL;
    return PyBool_FromLong(rc);
}

/* The shared empty attrs of parsed instructions without attributes (hlodiff.hlo.model.NO_ATTRIBUTES), or NULL
   before it is registered: a new dict each then. */
static PyObject *no_attributes;

PyObject *register_no_attributes(PyObject *self, PyObject *attrs) {
    if (!PyDict_Check(attrs) || PyDict_GET_SIZE(attrs) != 0) {
        PyErr_SetString(PyExc_TypeError, "register_no_attributes needs an empty dict");
        return NULL;
    }
    Py_INCREF(attrs);
    Py_XSETREF(no_attributes, attrs);
    Py_RETURN_NONE;
}

PyObject *empty_attributes(void) {
    if (no_attributes == NULL) return PyDict_New();
    Py_INCREF(no_attributes);
    return no_attributes;
}

/* inst.<key> as a new reference; key is one of the interned field names (s_opcode, s_attrs, ...) or any name. */
PyObject *inst_attr(PyObject *inst, PyObject *key) {
    if (inst_type != NULL && Py_TYPE(inst) == inst_type) {
        for (int k = 0; k < INST_FIELDS; k++) {
            if (field_keys[k] == key) { /* the callers' names are interned, as these are */
                PyObject *value = *(PyObject **)((char *)inst + offsets[k]);
                if (value == NULL) break; /* unset: the attribute protocol raises as it would */
                Py_INCREF(value);
                return value;
            }
        }
    }
    return PyObject_GetAttr(inst, key);
}

/* type(*args) for the INST_FIELDS fields in order, new reference. */
PyObject *inst_new(PyObject *type, PyObject *const *args) {
    int known = register_instruction_type(type);
    if (known < 0) return NULL;
    if (!known) return PyObject_Vectorcall(type, args, INST_FIELDS, NULL);
    PyObject *obj = inst_type->tp_alloc(inst_type, 0);
    if (obj == NULL) return NULL;
    for (int k = 0; k < INST_FIELDS; k++) {
        Py_INCREF(args[k]);
        *(PyObject **)((char *)obj + offsets[k]) = args[k];
    }
    return obj;
}
