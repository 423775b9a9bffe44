/* message_fields.c: MessageFields: the base of model.Message, its eleven fields as slots with their accessors.
 * Pure-Python twin: base/message_fields.py (tests/unit/native_c/test_twins.py).
 *
 * Part of kafkawire._native, compiled as one unit by module.c (see its list for the order). */

/* ---- MessageFields ------------------------------------------------------------------ */

/* The base of model.Message: its eleven fields as slots and their accessors, in C as
 * confluent-kafka's Message is (an accessor called per consumed record costs a Python frame in
 * the twin). Fields hold any object; an accessor of a field never set raises AttributeError, as
 * the twin's slots do. Everything with a rule (constructor, setters, pickling) stays in Python. */
typedef struct {
    PyObject_HEAD
    PyObject *topic, *partition, *offset, *key, *value, *headers, *timestamp, *error, *latency, *leader_epoch,
        *delivery_count;
} MessageFields;

#define MF_FIELDS(X) X(topic) X(partition) X(offset) X(key) X(value) X(headers) X(timestamp) X(error) X(latency) \
    X(leader_epoch) X(delivery_count)

static int
mf_traverse(MessageFields *self, visitproc visit, void *arg)
{
#define MF_VISIT(name) Py_VISIT(self->name);
    MF_FIELDS(MF_VISIT)
    return 0;
}

static int
mf_clear(MessageFields *self)
{
#define MF_CLEAR(name) Py_CLEAR(self->name);
    MF_FIELDS(MF_CLEAR)
    return 0;
}

static void
mf_dealloc(MessageFields *self)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    mf_clear(self);
    type->tp_free((PyObject *)self);
}

#define MF_GETTER(name)                                                                \
    static PyObject *mf_##name(MessageFields *self, PyObject *Py_UNUSED(ignored))      \
    {                                                                                  \
        if (self->name == NULL) {                                                      \
            PyErr_SetString(PyExc_AttributeError, "_" #name);                          \
            return NULL;                                                               \
        }                                                                              \
        return Py_NewRef(self->name);                                                  \
    }
MF_FIELDS(MF_GETTER)

static PyMethodDef mf_methods[] = {
#define MF_METHOD(name) {#name, (PyCFunction)mf_##name, METH_NOARGS, NULL},
    MF_FIELDS(MF_METHOD){NULL, NULL, 0, NULL},
};

static PyMemberDef mf_members[] = {
#define MF_MEMBER(name) {"_" #name, T_OBJECT_EX, offsetof(MessageFields, name), 0, NULL},
    MF_FIELDS(MF_MEMBER){NULL, 0, 0, 0, NULL},
};

static PyTypeObject MessageFieldsType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "kafkawire._native.MessageFields",
    .tp_basicsize = sizeof(MessageFields),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Message's fields and their accessors (base/model.py).",
    .tp_traverse = (traverseproc)mf_traverse,
    .tp_clear = (inquiry)mf_clear,
    .tp_dealloc = (destructor)mf_dealloc,
    .tp_methods = mf_methods,
    .tp_members = mf_members,
    .tp_new = PyType_GenericNew,
};
