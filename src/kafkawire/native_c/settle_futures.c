/* settle_futures.c: settling_future: AIOProducer's per-record delivery future, settled from C.
 * Pure-Python twin: producer/aio.py (_PyDelivery.__call__; tests/unit/producer/test_settle_future.py).
 *
 * Part of kafkawire._native, compiled as one unit by module.c (see its list for the order). */

/* ---- settling_future ----------------------------------------------------------------------
 *
 * AIOProducer.produce() returns an asyncio future that is also the record's delivery callback: the
 * producer calls it with (err, report). The twin's __call__ is a Python frame per record on the
 * event loop; here the same steps are C calls of the future's own methods: on the future's loop,
 * set_result(report) or set_exception(KafkaException(err)), a cancelled future left alone
 * (InvalidStateError); served on another thread, handed to its loop with call_soon_threadsafe (a
 * closed loop: dropped). serve_delivered calls it directly, with no argument tuple. */

static PyTypeObject *settling_type = NULL; /* the type settling_future made (one per process) */
static PyObject *st_running_loop, *st_exception, *st_invalid_state;
static PyObject *s_get_loop, *s_set_result, *s_set_exception, *s_call_soon_threadsafe;
/* The base's own get_loop/set_result/set_exception, called straight on an instance of the type
 * itself (no attribute lookup); a subclass's instance looks them up, so that its overrides run. */
static PyObject *st_get_loop, *st_set_result, *st_set_exception;
static destructor st_base_dealloc;
static traverseproc st_base_traverse;

/* This thread's running loop (a new reference; None when there is none). Asked once per served
 * batch, not per future: asyncio's lookup costs a getpid() system call (its fork check), and the
 * running loop is the same after a callback returns as before it (a loop a callback runs has
 * stopped by then). */
static PyObject *
running_loop(void)
{
    return PyObject_CallNoArgs(st_running_loop);
}

/* 1 settled, 0 handed to its own loop (or dropped: that loop is closed), -1 with an error set.
 * ``running``: running_loop()'s answer on this thread. */
static int
settle(PyObject *fut, PyObject *err, PyObject *msg, PyObject *running)
{
    int exact = Py_IS_TYPE(fut, settling_type);
    PyObject *loop = exact ? PyObject_CallOneArg(st_get_loop, fut) : PyObject_CallMethodNoArgs(fut, s_get_loop);
    if (loop == NULL) return -1;
    if (running != loop) {
        PyObject *r = PyObject_CallMethodObjArgs(loop, s_call_soon_threadsafe, fut, err, msg, NULL);
        Py_DECREF(loop);
        if (r == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_RuntimeError)) return -1;
            PyErr_Clear(); /* our loop is closed: no one can await this future */
        }
        Py_XDECREF(r);
        return 0;
    }
    Py_DECREF(loop);
    PyObject *r;
    if (err == Py_None) {
        PyObject *call_args[2] = {fut, msg};
        r = exact ? PyObject_Vectorcall(st_set_result, call_args, 2, NULL) : PyObject_CallMethodOneArg(fut, s_set_result, msg);
    }
    else {
        PyObject *exc = PyObject_CallOneArg(st_exception, err);
        if (exc == NULL) return -1;
        PyObject *call_args[2] = {fut, exc};
        r = exact ? PyObject_Vectorcall(st_set_exception, call_args, 2, NULL)
                  : PyObject_CallMethodOneArg(fut, s_set_exception, exc);
        Py_DECREF(exc);
    }
    if (r == NULL) {
        if (!PyErr_ExceptionMatches(st_invalid_state)) return -1;
        PyErr_Clear(); /* cancelled by its awaiter */
    }
    Py_XDECREF(r);
    return 1;
}

static PyObject *
settling_call(PyObject *self, PyObject *args, PyObject *kwargs)
{
    PyObject *err, *msg;
    if ((kwargs != NULL && PyDict_GET_SIZE(kwargs)) || !PyArg_UnpackTuple(args, "__call__", 2, 2, &err, &msg)) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "__call__(err, msg) takes no keyword arguments");
        return NULL;
    }
    PyObject *running = running_loop();
    if (running == NULL) return NULL;
    int r = settle(self, err, msg, running);
    Py_DECREF(running);
    if (r < 0) return NULL;
    return PyBool_FromLong(r);
}

/* Whether serve_delivered may call settle() for ``callback`` instead of calling it: an instance
 * of the settling type whose __call__ is still ours (a subclass with its own runs its own). */
static inline int
settles_in_c(PyObject *callback)
{
    return settling_type != NULL && Py_TYPE(callback)->tp_call == settling_call
           && PyType_IsSubtype(Py_TYPE(callback), settling_type);
}

/* The type is made on asyncio's C Future itself, not on the twin (a class statement's type), so
 * that its futures are freed and traversed by the Future's own functions, plus what a heap type
 * owes: its finalizer run (the Future's dealloc runs it for exact Futures only), its type visited
 * and released. The generic functions of a class statement's type walk its bases at every call:
 * with 100,000s of futures pending, each full collection walked them all (subtype_traverse and
 * subtype_dealloc were 4% of kafkawire-aio's benchmark). */
static void
settling_dealloc(PyObject *self)
{
    PyTypeObject *type = Py_TYPE(self);
    if (type->tp_finalize != NULL && PyObject_CallFinalizerFromDealloc(self) < 0) return; /* resurrected */
    st_base_dealloc(self);
    Py_DECREF(type);
}

static int
settling_traverse(PyObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    return st_base_traverse(self, visit, arg);
}

/* settling_future(base, get_running_loop, exception_type, invalid_state) -> a subclass of ``base``
 * (asyncio.Future) named kafkawire.producer.aio._Delivery, whose __call__ is settle(). A base
 * that is itself a class statement's (asyncio without its C part) keeps the generic functions. */
static PyObject *
settling_future(PyObject *module, PyObject *args)
{
    PyObject *base, *running, *exception, *invalid;
    if (!PyArg_ParseTuple(args, "O!OOO:settling_future", &PyType_Type, &base, &running, &exception, &invalid))
        return NULL;
    if (settling_type != NULL) { /* one per process: the module imported again gets the same type */
        PyObject *made_from = PyTuple_GET_ITEM(settling_type->tp_bases, 0);
        if (made_from == base) return Py_NewRef((PyObject *)settling_type);
        PyErr_SetString(PyExc_RuntimeError, "settling_future was made already, from another base");
        return NULL;
    }
    PyTypeObject *b = (PyTypeObject *)base;
    int static_base = !(b->tp_flags & Py_TPFLAGS_HEAPTYPE) && (b->tp_flags & Py_TPFLAGS_HAVE_GC)
                      && b->tp_dealloc != NULL && b->tp_traverse != NULL;
    PyObject *methods[3] = {NULL, NULL, NULL};
    const char *names[3] = {"get_loop", "set_result", "set_exception"};
    for (int i = 0; i < 3; i++) {
        if ((methods[i] = PyObject_GetAttrString(base, names[i])) == NULL) {
            Py_XDECREF(methods[0]);
            Py_XDECREF(methods[1]);
            return NULL;
        }
    }
    PyType_Slot slots[4] = {{Py_tp_call, settling_call}, {0, NULL}, {0, NULL}, {0, NULL}};
    if (static_base) {
        slots[1] = (PyType_Slot){Py_tp_dealloc, (void *)settling_dealloc};
        slots[2] = (PyType_Slot){Py_tp_traverse, (void *)settling_traverse};
    }
    unsigned int flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | (static_base ? Py_TPFLAGS_HAVE_GC : 0);
    PyType_Spec spec = {"kafkawire.producer.aio._Delivery", 0, 0, flags, slots};
    PyObject *bases = PyTuple_Pack(1, base);
    PyObject *type = bases == NULL ? NULL : PyType_FromSpecWithBases(&spec, bases);
    Py_XDECREF(bases);
    if (type == NULL) {
        for (int i = 0; i < 3; i++) Py_DECREF(methods[i]);
        return NULL;
    }
    st_base_dealloc = b->tp_dealloc;
    st_base_traverse = b->tp_traverse;
    st_get_loop = methods[0];
    st_set_result = methods[1];
    st_set_exception = methods[2];
    settling_type = (PyTypeObject *)Py_NewRef(type);
    st_running_loop = Py_NewRef(running);
    st_exception = Py_NewRef(exception);
    st_invalid_state = Py_NewRef(invalid);
    return type;
}
