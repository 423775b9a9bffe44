/* poll_ready.c: PollReady: the gate in front of poll()'s take and the state it reads, one object the
 * consumer engine, its face and poll()'s C path share; and poll_fast, poll()'s path for FastMethod.
 * Pure-Python twins: consumer/poll_ready.py (PollReady) and consumer/consumer.py (Consumer.poll);
 * tests/unit/consumer/test_poll_take.py and tests/unit/consumer/test_fast_method.py hold them equal.
 *
 * Part of kafkawire._native, compiled as one unit by module.c (see its list for the order). */

/* ---- PollReady --------------------------------------------------------------------------
 *
 * What decides whether poll() may hand over a buffered record at once, held where this path reads
 * it without a lookup: the engine's ``closed``, ``rejoin_due`` (_MAX_POLL_EXCEEDED was handed over:
 * the next poll joins again) and ``subscription`` (its ``left_for_poll`` read when there is one, at
 * its slot's offset learned on first sight of its type), and ``polled_at``, the last
 * poll()/consume() by the monotonic clock for max.poll.interval.ms, a C double (no float made per
 * poll). Python reads and writes each as an attribute. Called: None when something must be served
 * first (a callback queued, an error event, a rejoin due, a subscription that left the group for
 * poll()), else ``polled_at`` stamped (CLOCK_MONOTONIC, as time.monotonic() reads it here) and the
 * take's record (PollTake called without a Python call). */

typedef struct {
    PyObject_HEAD
    PyObject *waiting, *events, *take;
    PyObject *subscription; /* None, or the engine's Subscription (NULL once deleted, as the twin's slot) */
    PyTypeObject *sub_type; /* learned on first sight: its left_for_poll slot's offset (-1: read by name) */
    Py_ssize_t sub_left;
    double polled_at;
    char closed, rejoin_due; /* T_BOOL: Python sets them with a bool */
} PollReady;

static PyObject *s_left_for_poll;

static double
monotonic_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static PyObject *
poll_ready_call(PollReady *self, PyObject *args, PyObject *kwargs)
{
    PyObject *sub = self->subscription;
    if (sub == NULL) { /* deleted: the twin's read of it fails first */
        PyErr_SetString(PyExc_AttributeError, "subscription");
        return NULL;
    }
    Py_ssize_t queued = PyObject_Length(self->waiting), events = queued ? 0 : PyObject_Length(self->events);
    if (queued < 0 || events < 0) return NULL;
    if (queued || events || self->rejoin_due) Py_RETURN_NONE;
    if (sub != Py_None) {
        if (Py_TYPE(sub) != self->sub_type) {
            self->sub_left = plain_slot(Py_TYPE(sub), "left_for_poll");
            Py_XSETREF(self->sub_type, (PyTypeObject *)Py_NewRef(Py_TYPE(sub)));
        }
        PyObject *v = self->sub_left < 0 ? NULL : SLOT(sub, self->sub_left);
        if (v == Py_True) Py_RETURN_NONE;
        if (v != Py_False) { /* not a bool in the slot, or no slot: as the twin reads it */
            Py_INCREF(sub); /* reading it may run code that replaces it */
            v = PyObject_GetAttr(sub, s_left_for_poll);
            Py_DECREF(sub);
            int left = v == NULL ? -1 : PyObject_IsTrue(v);
            Py_XDECREF(v);
            if (left) return left < 0 ? NULL : Py_NewRef(Py_None);
        }
    }
    self->polled_at = monotonic_now();
    if (Py_IS_TYPE(self->take, &PollTakeType)) return poll_take_call((PollTake *)self->take, NULL, NULL);
    return PyObject_CallNoArgs(self->take);
}

static int
poll_ready_init(PollReady *self, PyObject *args, PyObject *kwargs)
{
    PyObject *waiting, *events, *take;
    if (!PyArg_ParseTuple(args, "OOO:PollReady", &waiting, &events, &take)) return -1;
    Py_XSETREF(self->waiting, Py_NewRef(waiting));
    Py_XSETREF(self->events, Py_NewRef(events));
    Py_XSETREF(self->take, Py_NewRef(take));
    Py_XSETREF(self->subscription, Py_NewRef(Py_None));
    self->polled_at = monotonic_now();
    self->closed = self->rejoin_due = 0;
    return 0;
}

static PyMemberDef poll_ready_members[] = {
    {"closed", T_BOOL, offsetof(PollReady, closed), 0, "the engine closed: poll() refuses"},
    {"rejoin_due", T_BOOL, offsetof(PollReady, rejoin_due), 0, "_MAX_POLL_EXCEEDED handed over: the next poll joins"},
    {"polled_at", T_DOUBLE, offsetof(PollReady, polled_at), 0, "the last poll()/consume(), time.monotonic()"},
    {"subscription", T_OBJECT_EX, offsetof(PollReady, subscription), 0, "the engine's Subscription, or None"},
    {NULL},
};

static int
poll_ready_traverse(PollReady *self, visitproc visit, void *arg)
{
    Py_VISIT(self->waiting);
    Py_VISIT(self->events);
    Py_VISIT(self->take);
    Py_VISIT(self->subscription);
    Py_VISIT(self->sub_type);
    return 0;
}

static int
poll_ready_clear(PollReady *self)
{
    Py_CLEAR(self->waiting);
    Py_CLEAR(self->events);
    Py_CLEAR(self->take);
    Py_CLEAR(self->subscription);
    Py_CLEAR(self->sub_type);
    return 0;
}

static void
poll_ready_dealloc(PollReady *self)
{
    PyObject_GC_UnTrack(self);
    poll_ready_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject PollReadyType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "kafkawire._native.PollReady",
    .tp_basicsize = sizeof(PollReady),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "PollReady(waiting, events, take)(): poll()'s gate and the engine state it reads "
              "(consumer/poll_ready.py is the twin)",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)poll_ready_init,
    .tp_call = (ternaryfunc)poll_ready_call,
    .tp_members = poll_ready_members,
    .tp_traverse = (traverseproc)poll_ready_traverse,
    .tp_clear = (inquiry)poll_ready_clear,
    .tp_dealloc = (destructor)poll_ready_dealloc,
};

/* ---- poll()'s path for FastMethod (fast_method.c; Consumer.poll is one) -------------------
 *
 * What Consumer.poll (consumer/consumer.py, its twin) does, step for step, reading the face's
 * ``_ready`` slot (its engine's PollReady, which the face holds from its construction) at the
 * offset learned from the face's type: the engine open, its gate handing over a record, which is
 * returned (the timeout is not looked at then, as the Python poll() does not look at it); else the
 * engine's ``consume(1, timeout)``, its first message or None. Another argument form, a face
 * without that slot or with it unset (a subclass whose __init__ did not run), or a closed engine:
 * NULL with no error set, and the Python poll() takes the call (its TypeError, its
 * ConsumerClosedError). An error either call raises is the call's, as it would be the Python
 * poll()'s. (Handing "nothing ready" to the Python poll() instead would run the gate twice: an
 * empty poll(0) measured 3.6 -> 4.3 us.) */

static PyObject *s_engine, *s_timeout, *s_consume;
static PyTypeObject *face_type; /* the face type seen last, and its _ready slot's offset (-1: none) */
static Py_ssize_t face_ready = -1;

static PyObject *
poll_fast(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    if (nargs < 1 || nargs + nkw > 2) return NULL;
    if (nkw) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, 0);
        if (name != s_timeout && PyUnicode_Compare(name, s_timeout) != 0) return NULL; /* Python's TypeError */
    }
    PyObject *face = args[0];
    if (Py_TYPE(face) != face_type) {
        face_ready = plain_slot(Py_TYPE(face), "_ready");
        Py_XSETREF(face_type, (PyTypeObject *)Py_NewRef(Py_TYPE(face)));
    }
    PyObject *ready = face_ready < 0 ? NULL : SLOT(face, face_ready);
    if (ready == NULL || !Py_IS_TYPE(ready, &PollReadyType) || ((PollReady *)ready)->closed) return NULL;
    Py_INCREF(ready);
    PyObject *record = poll_ready_call((PollReady *)ready, NULL, NULL);
    Py_DECREF(ready);
    if (record != Py_None) return record;
    Py_DECREF(record); /* nothing ready: the wait, as the Python poll() goes on */
    PyObject *engine = PyObject_GetAttr(face, s_engine);
    if (engine == NULL) return NULL;
    PyObject *one = PyLong_FromLong(1);
    PyObject *call[3] = {engine, one, nargs + nkw == 2 ? args[1] : Py_None};
    PyObject *found = one == NULL ? NULL : PyObject_VectorcallMethod(s_consume, call, 3, NULL);
    Py_XDECREF(one);
    Py_DECREF(engine);
    int any = found == NULL ? -1 : PyObject_IsTrue(found);
    record = any < 0 ? NULL : any ? PySequence_GetItem(found, 0) : Py_NewRef(Py_None);
    Py_XDECREF(found);
    return record;
}
