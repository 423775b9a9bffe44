/* rlock.c: RLock: the producer engine's lock, which the produce lane takes without a Python call.
 * Pure-Python twin: threading.RLock (tests/unit/native_c/test_rlock.py).
 *
 * Part of kafkawire._native, compiled as one unit by module.c (see its list for the order). */

/* ---- RLock: the producer engine's lock, which produce()'s C path takes without a call ------
 *
 * threading.RLock in every observable way the engine and threading.Condition use (acquire with
 * blocking and timeout, release, the context manager, _is_owned, _release_save, _acquire_restore).
 * The lane takes it with rlock_try, a few nanoseconds, where a Python-level acquire(False) and
 * release() cost about 0.2 us per record. A blocking acquire lets go of the GIL while it waits and
 * runs signal handlers when interrupted, as CPython's lock does. */

typedef struct {
    PyObject_HEAD
    PyThread_type_lock lock;
    unsigned long owner; /* the holding thread's ident while count > 0 */
    unsigned long count; /* recursion depth; 0: free */
} RLock;

static PyTypeObject RLockType;

/* Take it if that needs no waiting: 1, else 0. */
static int
rlock_try(RLock *self)
{
    unsigned long me = PyThread_get_thread_ident();
    if (self->count > 0 && self->owner == me) {
        self->count++;
        return 1;
    }
    if (PyThread_acquire_lock_timed(self->lock, 0, 0) != PY_LOCK_ACQUIRED) return 0;
    self->owner = me;
    self->count = 1;
    return 1;
}

static void
rlock_let_go(RLock *self)
{
    if (--self->count == 0) {
        self->owner = 0;
        PyThread_release_lock(self->lock);
    }
}

/* The underlying lock within ``timeout`` seconds (< 0: no limit), the GIL released meanwhile:
 * 1 taken, 0 timed out, -1 with an exception from a signal handler. */
static int
rlock_wait(RLock *self, double timeout)
{
    if (PyThread_acquire_lock_timed(self->lock, 0, 0) == PY_LOCK_ACQUIRED) return 1;
    if (timeout == 0) return 0;
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    double left = timeout;
    for (;;) {
        PY_TIMEOUT_T us = timeout < 0 ? -1 : (PY_TIMEOUT_T)(left * 1e6);
        PyLockStatus r;
        Py_BEGIN_ALLOW_THREADS
        r = PyThread_acquire_lock_timed(self->lock, us, 1);
        Py_END_ALLOW_THREADS
        if (r != PY_LOCK_INTR) return r == PY_LOCK_ACQUIRED;
        if (Py_MakePendingCalls() < 0) return -1;
        if (timeout > 0) {
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            left = timeout - ((double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) / 1e9);
            if (left <= 0) return PyThread_acquire_lock_timed(self->lock, 0, 0) == PY_LOCK_ACQUIRED;
        }
    }
}

static PyObject *
rlock_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    if (PyTuple_GET_SIZE(args) || (kwargs != NULL && PyDict_GET_SIZE(kwargs))) {
        PyErr_SetString(PyExc_TypeError, "RLock() takes no arguments");
        return NULL;
    }
    RLock *self = (RLock *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->lock = PyThread_allocate_lock();
    if (self->lock == NULL) {
        Py_DECREF(self);
        PyErr_SetString(PyExc_MemoryError, "cannot allocate a lock");
        return NULL;
    }
    return (PyObject *)self;
}

static void
rlock_dealloc(RLock *self)
{
    if (self->lock != NULL) {
        if (self->count > 0) PyThread_release_lock(self->lock);
        PyThread_free_lock(self->lock);
    }
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
rlock_acquire(RLock *self, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"blocking", "timeout", NULL};
    int blocking = 1;
    double timeout = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|pd:acquire", names, &blocking, &timeout)) return NULL;
    if (!blocking && timeout != -1) {
        PyErr_SetString(PyExc_ValueError, "can't specify a timeout for a non-blocking call");
        return NULL;
    }
    if (timeout < 0 && timeout != -1) {
        PyErr_SetString(PyExc_ValueError, "timeout value must be a non-negative number");
        return NULL;
    }
    if (rlock_try(self)) Py_RETURN_TRUE;
    if (!blocking) Py_RETURN_FALSE;
    int got = rlock_wait(self, timeout);
    if (got < 0) return NULL;
    if (!got) Py_RETURN_FALSE;
    self->owner = PyThread_get_thread_ident();
    self->count = 1;
    Py_RETURN_TRUE;
}

static PyObject *
rlock_enter(RLock *self, PyObject *unused)
{
    if (!rlock_try(self)) {
        if (rlock_wait(self, -1) < 0) return NULL;
        self->owner = PyThread_get_thread_ident();
        self->count = 1;
    }
    Py_RETURN_TRUE;
}

static PyObject *
rlock_release(RLock *self, PyObject *unused)
{
    if (self->count == 0 || self->owner != PyThread_get_thread_ident()) {
        PyErr_SetString(PyExc_RuntimeError, "cannot release un-acquired lock");
        return NULL;
    }
    rlock_let_go(self);
    Py_RETURN_NONE;
}

static PyObject *
rlock_exit(RLock *self, PyObject *args)
{
    return rlock_release(self, NULL);
}

static PyObject *
rlock_is_owned(RLock *self, PyObject *unused)
{
    return PyBool_FromLong(self->count > 0 && self->owner == PyThread_get_thread_ident());
}

/* threading.Condition.wait: let go of every level, and give back what to restore. */
static PyObject *
rlock_release_save(RLock *self, PyObject *unused)
{
    if (self->count == 0) {
        PyErr_SetString(PyExc_RuntimeError, "cannot release un-acquired lock");
        return NULL;
    }
    PyObject *state = Py_BuildValue("(kk)", self->count, self->owner);
    if (state == NULL) return NULL;
    self->count = 0;
    self->owner = 0;
    PyThread_release_lock(self->lock);
    return state;
}

static PyObject *
rlock_acquire_restore(RLock *self, PyObject *state)
{
    unsigned long count, owner;
    if (!PyArg_ParseTuple(state, "kk:_acquire_restore", &count, &owner)) return NULL;
    if (rlock_wait(self, -1) < 0) return NULL;
    self->owner = owner;
    self->count = count;
    Py_RETURN_NONE;
}

static PyObject *
rlock_repr(RLock *self)
{
    return PyUnicode_FromFormat("<%s %s object owner=%lu count=%lu at %p>", self->count ? "locked" : "unlocked",
                                Py_TYPE(self)->tp_name, self->owner, self->count, self);
}

static PyMethodDef rlock_methods[] = {
    {"acquire", (PyCFunction)(void (*)(void))rlock_acquire, METH_VARARGS | METH_KEYWORDS,
     "acquire(blocking=True, timeout=-1) -> bool"},
    {"release", (PyCFunction)rlock_release, METH_NOARGS, "release()"},
    {"__enter__", (PyCFunction)rlock_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)rlock_exit, METH_VARARGS, NULL},
    {"_is_owned", (PyCFunction)rlock_is_owned, METH_NOARGS, NULL},
    {"_release_save", (PyCFunction)rlock_release_save, METH_NOARGS, NULL},
    {"_acquire_restore", (PyCFunction)rlock_acquire_restore, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject RLockType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "kafkawire._native.RLock",
    .tp_doc = "A re-entrant lock as threading.RLock, which the produce lane takes from C.",
    .tp_basicsize = sizeof(RLock),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = rlock_new,
    .tp_dealloc = (destructor)rlock_dealloc,
    .tp_repr = (reprfunc)rlock_repr,
    .tp_methods = rlock_methods,
};
