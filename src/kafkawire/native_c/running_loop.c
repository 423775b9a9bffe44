/* running_loop.c: RunningLoop: asyncio.get_running_loop() without a system call per call.
 * Pure-Python twin: client/running_loop.py's PyRunningLoop, which asks asyncio every time
 * (tests/unit/client/test_running_loop.py).
 *
 * Part of kafkawire._native, compiled as one unit by module.c (see its list for the order). */

/* ---- RunningLoop ---------------------------------------------------------------------
 *
 * On Python 3.10 and 3.11, asyncio's get_running_loop() calls getpid() every time (its check that
 * a forked child does not use its parent's loop): 275 of the 800 ns AIOProducer.produce() took on
 * its thread; AIOConsumer.poll() asked twice a call. Those versions put a new holder object in the
 * thread's state dict each time a loop starts or stops running on it; a RunningLoop keeps the
 * holder it saw at its last lookup and the loop asyncio answered then. While the thread's holder
 * is that very object (kept alive here, so its address cannot be reused by another), no loop has
 * started or stopped on the thread since, and the answer stands; any other holder (another thread,
 * another loop) asks asyncio again. A fork makes every RunningLoop ask again (the child is refused
 * its parent's loop, as asyncio does).
 * From 3.12 on, get_running_loop() makes no system call and a RunningLoop just calls it. */

typedef struct {
    PyObject_HEAD
    PyObject *get_running_loop; /* asyncio.get_running_loop */
    PyObject *holder;           /* the thread's running-loop holder at the last lookup, or NULL */
    PyObject *loop;             /* the loop asyncio answered then */
    unsigned long forks;        /* rl_forks then */
    vectorcallfunc vectorcall;
} RunningLoop;

static unsigned long rl_forks = 0; /* forks this process came through, as a child */
static PyObject *rl_key = NULL;    /* the thread state dict's key of asyncio's holder */

#if PY_VERSION_HEX < 0x030C0000 && defined(HAVE_FORK)
static void
rl_forked(void)
{
    rl_forks++;
}
#endif

static PyObject *
rl_call(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    RunningLoop *self = (RunningLoop *)callable;
    if (PyVectorcall_NARGS(nargsf) != 0 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames))) {
        PyErr_SetString(PyExc_TypeError, "RunningLoop() takes no arguments");
        return NULL;
    }
    if (rl_key == NULL) return PyObject_CallNoArgs(self->get_running_loop);
    PyObject *state = PyThreadState_GetDict(); /* borrowed */
    PyObject *holder = state == NULL ? NULL : PyDict_GetItemWithError(state, rl_key);
    if (holder == NULL && PyErr_Occurred()) return NULL;
    if (holder != NULL && holder == self->holder && self->forks == rl_forks) return Py_NewRef(self->loop);
    PyObject *loop = PyObject_CallNoArgs(self->get_running_loop);
    if (loop == NULL) return NULL;
    if (holder != NULL) { /* (asyncio's lookup does not replace the holder it read) */
        Py_INCREF(holder);
        Py_XSETREF(self->holder, holder);
        Py_XSETREF(self->loop, Py_NewRef(loop));
        self->forks = rl_forks;
    }
    return loop;
}

static PyObject *
rl_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *get_running_loop;
    if (!PyArg_ParseTuple(args, "O:RunningLoop", &get_running_loop)) return NULL;
    RunningLoop *self = (RunningLoop *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->get_running_loop = Py_NewRef(get_running_loop);
    self->vectorcall = rl_call;
    return (PyObject *)self;
}

static int
rl_traverse(RunningLoop *self, visitproc visit, void *arg)
{
    Py_VISIT(self->get_running_loop);
    Py_VISIT(self->holder);
    Py_VISIT(self->loop);
    return 0;
}

static int
rl_clear(RunningLoop *self)
{
    Py_CLEAR(self->get_running_loop);
    Py_CLEAR(self->holder);
    Py_CLEAR(self->loop);
    return 0;
}

static void
rl_dealloc(RunningLoop *self)
{
    PyObject_GC_UnTrack(self);
    rl_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject RunningLoopType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "kafkawire._native.RunningLoop",
    .tp_basicsize = sizeof(RunningLoop),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "RunningLoop(get_running_loop)(): asyncio's running loop, asked of asyncio only when it may "
              "have changed (running_loop.c).",
    .tp_new = rl_new,
    .tp_traverse = (traverseproc)rl_traverse,
    .tp_clear = (inquiry)rl_clear,
    .tp_dealloc = (destructor)rl_dealloc,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(RunningLoop, vectorcall),
};

/* At import: the key to watch, on the versions whose lookup makes the system call. */
static int
running_loop_init(void)
{
#if PY_VERSION_HEX < 0x030C0000
    if ((rl_key = PyUnicode_InternFromString("__asyncio_running_event_loop__")) == NULL) return -1;
#ifdef HAVE_FORK
    if (pthread_atfork(NULL, NULL, rl_forked) != 0) Py_CLEAR(rl_key); /* no fork hook: always ask */
#endif
#endif
    return 0;
}
