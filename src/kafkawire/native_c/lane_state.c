/* lane_state.c: LaneState: the one object the produce lane shares with the Python side, its fields
 * named and declared here once. Pure-Python twin: core/lane_state.py (tests/unit/core/test_lane_state.py
 * holds the two to the same fields and behaviour).
 *
 * Part of kafkawire._native, compiled as one unit by module.c (see its list for the order). */

/* ---- LaneState --------------------------------------------------------------------------- *
 * What the lane reads and moves for every record, held where both sides reach it without a
 * lookup: the buffer counters (the engine's outstanding and buffered_bytes, the accumulator's
 * queued) as machine integers, the lane adding to them with no int object per record; the
 * accumulator's open batches (``queues``), which the accumulator keeps here rather than in its own
 * instance; and the sender's fatal error (``fatal``), which stops the lane as it stops the Python
 * path. Python reads and writes every field as an attribute. */

typedef struct {
    PyObject_HEAD
    Py_ssize_t outstanding, buffered_bytes, queued;
    PyObject *queues; /* dict (topic, partition) -> deque of open ProducerBatch */
    PyObject *fatal;  /* KafkaError, or None */
} LaneState;

/* A counter by its offset. (A T_PYSSIZET member would store -1 before refusing a value that is
 * not an int: a bad assignment must leave the count as it was.) */
static PyObject *
lane_count_get(LaneState *self, void *offset)
{
    return PyLong_FromSsize_t(*(Py_ssize_t *)((char *)self + (Py_ssize_t)offset));
}

static int
lane_count_set(LaneState *self, PyObject *value, void *offset)
{
    if (value == NULL || !PyLong_Check(value)) {
        PyErr_SetString(PyExc_TypeError, "a buffer count is an int");
        return -1;
    }
    Py_ssize_t n = PyLong_AsSsize_t(value);
    if (n == -1 && PyErr_Occurred()) return -1;
    *(Py_ssize_t *)((char *)self + (Py_ssize_t)offset) = n;
    return 0;
}

static PyObject *
lane_queues_get(LaneState *self, void *closure)
{
    return Py_NewRef(self->queues != NULL ? self->queues : Py_None);
}

/* ``queues`` is set once, by the accumulator that owns it: the lane keeps reading the same dict. */
static int
lane_queues_set(LaneState *self, PyObject *value, void *closure)
{
    if (value == NULL || !PyDict_CheckExact(value)) {
        PyErr_SetString(PyExc_TypeError, "queues is a dict");
        return -1;
    }
    Py_SETREF(self->queues, Py_NewRef(value));
    return 0;
}

static PyObject *
lane_fatal_get(LaneState *self, void *closure)
{
    return Py_NewRef(self->fatal != NULL ? self->fatal : Py_None);
}

static int
lane_fatal_set(LaneState *self, PyObject *value, void *closure)
{
    Py_SETREF(self->fatal, Py_NewRef(value == NULL ? Py_None : value));
    return 0;
}

static PyGetSetDef lane_state_getset[] = {
    {"outstanding", (getter)lane_count_get, (setter)lane_count_set, "records produced and not yet reported",
     (void *)offsetof(LaneState, outstanding)},
    {"buffered_bytes", (getter)lane_count_get, (setter)lane_count_set, "those records' buffer charge",
     (void *)offsetof(LaneState, buffered_bytes)},
    {"queued", (getter)lane_count_get, (setter)lane_count_set, "records in the accumulator, not yet in a request",
     (void *)offsetof(LaneState, queued)},
    {"queues", (getter)lane_queues_get, (setter)lane_queues_set, "the accumulator's open batches per partition",
     NULL},
    {"fatal", (getter)lane_fatal_get, (setter)lane_fatal_set, "the sender's fatal error, or None", NULL},
    {NULL},
};

static PyObject *
lane_state_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    if (PyTuple_GET_SIZE(args) || (kwargs != NULL && PyDict_GET_SIZE(kwargs))) {
        PyErr_SetString(PyExc_TypeError, "LaneState() takes no arguments");
        return NULL;
    }
    LaneState *self = (LaneState *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->queues = PyDict_New();
    self->fatal = Py_NewRef(Py_None);
    if (self->queues == NULL) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static int
lane_state_traverse(LaneState *self, visitproc visit, void *arg)
{
    Py_VISIT(self->queues);
    Py_VISIT(self->fatal);
    return 0;
}

static int
lane_state_clear(LaneState *self)
{
    Py_CLEAR(self->queues);
    Py_CLEAR(self->fatal);
    return 0;
}

static void
lane_state_dealloc(LaneState *self)
{
    PyObject_GC_UnTrack(self);
    lane_state_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject LaneStateType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "kafkawire._native.LaneState",
    .tp_doc = "The state the produce lane shares with the engine, the accumulator and the sender (core/lane_state.py).",
    .tp_basicsize = sizeof(LaneState),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = lane_state_new,
    .tp_traverse = (traverseproc)lane_state_traverse,
    .tp_clear = (inquiry)lane_state_clear,
    .tp_dealloc = (destructor)lane_state_dealloc,
    .tp_getset = lane_state_getset,
};
