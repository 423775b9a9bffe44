/* fast_method.c: FastMethod: a method descriptor whose call tries a C path first and, when that
 * declines, calls the Python method it wraps with the same arguments.
 * Pure-Python twins: the wrapped methods themselves, producer/producer.py (Producer.produce, the
 * path produce_lane.c's produce_fast) and consumer/consumer.py (Consumer.poll, the path
 * poll_ready.c's poll_fast); tests/unit/consumer/test_fast_method.py holds the calls equal.
 *
 * Part of kafkawire._native, compiled as one unit by module.c (see its list for the order). */

/* A path: the call's result (a new reference) when it took the call; NULL with no error set when
 * the Python method must take it, having changed nothing; NULL with an error set on failure.
 * ``args[0]`` is the instance, as a method's vectorcall receives it. */
typedef PyObject *(*fast_path)(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);

/* The paths, by the name FastMethod(function, path) is given. */
static const struct {
    const char *name;
    fast_path path;
} FAST_PATHS[] = {
    {"produce", produce_fast},
    {"poll", poll_fast},
};

typedef struct {
    PyObject_HEAD
    PyObject *function; /* the Python method */
    PyObject *dict;     /* what inspect and help() read: the function's name, docstring, __wrapped__ */
    vectorcallfunc vectorcall;
    fast_path path;
} FastMethod;

static PyObject *
fm_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    FastMethod *self = (FastMethod *)callable;
    PyObject *result = self->path(args, PyVectorcall_NARGS(nargsf), kwnames);
    if (result != NULL || PyErr_Occurred()) return result;
    return PyObject_Vectorcall(self->function, args, nargsf, kwnames);
}

/* FastMethod(function, path): ``function`` as a method, its calls tried on the named path first. */
static PyObject *
fm_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *function;
    const char *name;
    if (!PyArg_ParseTuple(args, "Os:FastMethod", &function, &name)) return NULL;
    if (!PyCallable_Check(function)) {
        PyErr_SetString(PyExc_TypeError, "FastMethod takes a function");
        return NULL;
    }
    fast_path path = NULL;
    for (size_t i = 0; i < sizeof(FAST_PATHS) / sizeof(FAST_PATHS[0]); i++)
        if (strcmp(FAST_PATHS[i].name, name) == 0) path = FAST_PATHS[i].path;
    if (path == NULL) {
        PyErr_Format(PyExc_ValueError, "no C path named %s", name);
        return NULL;
    }
    FastMethod *self = (FastMethod *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->function = Py_NewRef(function);
    self->vectorcall = fm_vectorcall;
    self->path = path;
    self->dict = PyDict_New();
    if (self->dict == NULL || PyDict_SetItemString(self->dict, "__wrapped__", function) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    static const char *copied[] = {"__name__", "__qualname__", "__doc__", "__module__"};
    for (int i = 0; i < 4; i++) {
        PyObject *v = PyObject_GetAttrString(function, copied[i]);
        if (v == NULL) {
            PyErr_Clear();
            continue;
        }
        int bad = PyDict_SetItemString(self->dict, copied[i], v);
        Py_DECREF(v);
        if (bad < 0) {
            Py_DECREF(self);
            return NULL;
        }
    }
    return (PyObject *)self;
}

static PyObject *
fm_get(PyObject *self, PyObject *obj, PyObject *type)
{
    if (obj == NULL || obj == Py_None) return Py_NewRef(self);
    return PyMethod_New(self, obj);
}

static int
fm_traverse(FastMethod *self, visitproc visit, void *arg)
{
    Py_VISIT(self->function);
    Py_VISIT(self->dict);
    return 0;
}

static int
fm_clear(FastMethod *self)
{
    Py_CLEAR(self->function);
    Py_CLEAR(self->dict);
    return 0;
}

static void
fm_dealloc(FastMethod *self)
{
    PyObject_GC_UnTrack(self);
    fm_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
fm_getdoc(FastMethod *self, void *closure)
{
    PyObject *doc = self->dict == NULL ? NULL : PyDict_GetItemString(self->dict, "__doc__");
    return Py_NewRef(doc == NULL ? Py_None : doc);
}

static PyGetSetDef fm_getset[] = {
    {"__doc__", (getter)fm_getdoc, NULL, NULL, NULL},
    {NULL},
};

static PyTypeObject FastMethodType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "kafkawire._native.FastMethod",
    .tp_basicsize = sizeof(FastMethod),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_METHOD_DESCRIPTOR | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = fm_new,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(FastMethod, vectorcall),
    .tp_dictoffset = offsetof(FastMethod, dict),
    .tp_descr_get = fm_get,
    .tp_getset = fm_getset,
    .tp_traverse = (traverseproc)fm_traverse,
    .tp_clear = (inquiry)fm_clear,
    .tp_dealloc = (destructor)fm_dealloc,
};
