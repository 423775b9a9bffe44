/* lane_state.c: LaneState and OpenBatch: the objects the produce lane shares with the Python side, their
 * fields and the hot path's two rules (buffer room, a batch's room) declared here once. Pure-Python
 * twin: core/lane_state.py (tests/unit/core/test_lane_state.py holds the two to the same fields and
 * behaviour).
 *
 * Part of kafkawire._native, compiled as one unit by module.c (see its list for the order). */

/* ---- LaneState --------------------------------------------------------------------------- *
 * What the lane reads and moves for every record, held where both sides reach it without a
 * lookup: the buffer counters (the engine's outstanding and buffered_bytes, the accumulator's
 * queued) as machine integers, the lane adding to them with no int object per record; the
 * accumulator's open batches (``queues``), which the accumulator keeps here rather than in its own
 * instance; and the sender's fatal error (``fatal``), which stops the lane as it stops the Python
 * path. Python reads and writes every field as an attribute. */

/* The paths that queue a record, each counted (core/lane_state.py SERVED_PATHS, in this order). */
enum { SERVED_LANE, SERVED_BULK, SERVED_TWIN, SERVED_SLOW, SERVED_PATHS };

typedef struct {
    PyObject_HEAD
    Py_ssize_t outstanding, buffered_bytes, queued;
    Py_ssize_t max_messages, max_bytes; /* queue.buffering.max.messages (0: none) and .kbytes * 1024 */
    Py_ssize_t served[SERVED_PATHS];    /* records queued by each path */
    PyObject *queues; /* dict (topic, partition) -> deque of open ProducerBatch */
    PyObject *fatal;  /* KafkaError, or None */
} LaneState;

/* The buffer-room rule, librdkafka's (rd_kafka_curr_msgs_add): a record may be queued while fewer
 * than max_messages are (0: no limit) and its charge (pending.c value_charge: its value's length;
 * keys, headers and the objects around it are not counted) keeps the sum within max_bytes. */
static inline int
room_for(const LaneState *s, Py_ssize_t outstanding, Py_ssize_t buffered, Py_ssize_t charge)
{
    return (s->max_messages <= 0 || outstanding < s->max_messages) && buffered + charge <= s->max_bytes;
}

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
    {"max_messages", (getter)lane_count_get, (setter)lane_count_set, "queue.buffering.max.messages (0: no limit)",
     (void *)offsetof(LaneState, max_messages)},
    {"max_bytes", (getter)lane_count_get, (setter)lane_count_set, "queue.buffering.max.kbytes in bytes",
     (void *)offsetof(LaneState, max_bytes)},
    {"lane_served", (getter)lane_count_get, (setter)lane_count_set, "records produce()'s C lane queued",
     (void *)offsetof(LaneState, served[SERVED_LANE])},
    {"bulk_served", (getter)lane_count_get, (setter)lane_count_set, "records the bulk paths' C loop queued",
     (void *)offsetof(LaneState, served[SERVED_BULK])},
    {"twin_served", (getter)lane_count_get, (setter)lane_count_set,
     "plain records the Python admission queued (the C paths' twin)", (void *)offsetof(LaneState, served[SERVED_TWIN])},
    {"slow_served", (getter)lane_count_get, (setter)lane_count_set,
     "records of a form only the Python path takes", (void *)offsetof(LaneState, served[SERVED_SLOW])},
    {"queues", (getter)lane_queues_get, (setter)lane_queues_set, "the accumulator's open batches per partition",
     NULL},
    {"fatal", (getter)lane_fatal_get, (setter)lane_fatal_set, "the sender's fatal error, or None", NULL},
    {NULL},
};

/* take_room(charge) -> bool: room_for this state's counts, taken (outstanding and buffered_bytes
 * moved) when there is. */
static PyObject *
lane_state_take_room(LaneState *self, PyObject *arg)
{
    Py_ssize_t charge = PyLong_AsSsize_t(arg);
    if (charge == -1 && PyErr_Occurred()) return NULL;
    if (!room_for(self, self->outstanding, self->buffered_bytes, charge)) Py_RETURN_FALSE;
    self->outstanding += 1;
    self->buffered_bytes += charge;
    Py_RETURN_TRUE;
}

static PyMethodDef lane_state_methods[] = {
    {"take_room", (PyCFunction)lane_state_take_room, METH_O, "take_room(charge) -> bool: room for one record, taken"},
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
    self->max_bytes = PY_SSIZE_T_MAX;
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
    .tp_methods = lane_state_methods,
};

/* ---- OpenBatch ---------------------------------------------------------------------------- *
 * The fields of a partition's batch that records join (ProducerBatch, core/accumulator.py, adds
 * the rest in Python), declared here so that the lanes read them as C fields: the entries
 * (``messages``: one per record, or an ArrowRows entry standing for several, ``rows`` of those and
 * ``extra`` records beyond one per entry), the size bound ``bytes``, ``full``, and ``payload`` and
 * ``attempts``, set once it left. The rule of a batch's room is these two functions; ``push`` is
 * them for Python (Accumulator.extend), the lanes call them directly. */

typedef struct {
    PyObject_HEAD
    PyObject *messages; /* list */
    PyObject *payload;  /* the encoded batch once built, or NULL/None */
    Py_ssize_t bytes, attempts, extra, rows;
    char full;
} OpenBatch;

/* What open_batch_room answers: it left or is full (LEFT), it is open but the record would take
 * it past batch.size (SHUT: it is full from now on), or the record fits (ROOM). */
enum { BATCH_LEFT = 0, BATCH_SHUT = 1, BATCH_ROOM = 2, BATCH_FILLED = 3 };

static inline int
open_batch_room(const OpenBatch *b, Py_ssize_t size, Py_ssize_t batch_size)
{
    if (b->full || b->messages == NULL || (b->payload != NULL && b->payload != Py_None) || b->attempts)
        return BATCH_LEFT;
    if (PyList_GET_SIZE(b->messages) && b->bytes + size > batch_size) return BATCH_SHUT;
    return BATCH_ROOM;
}

/* A record of ``size`` joined (its entry appended, or ``extra`` counted): ROOM, or FILLED when no
 * further record could join (batch.num.messages records, or batch.size bytes). */
static inline int
open_batch_joined(OpenBatch *b, Py_ssize_t size, Py_ssize_t batch_size, Py_ssize_t batch_count)
{
    b->bytes += size;
    if (PyList_GET_SIZE(b->messages) + b->extra >= batch_count || b->bytes >= batch_size) {
        b->full = 1;
        return BATCH_FILLED;
    }
    return BATCH_ROOM;
}

/* push(msg, size, batch_size, batch_count) -> LEFT, SHUT, ROOM (joined) or FILLED (joined, now full) */
static PyObject *
open_batch_push(OpenBatch *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "push(msg, size, batch_size, batch_count)");
        return NULL;
    }
    Py_ssize_t size = PyLong_AsSsize_t(args[1]), batch_size = PyLong_AsSsize_t(args[2]);
    Py_ssize_t batch_count = PyLong_AsSsize_t(args[3]);
    if ((size == -1 || batch_size == -1 || batch_count == -1) && PyErr_Occurred()) return NULL;
    int room = open_batch_room(self, size, batch_size);
    if (room == BATCH_SHUT) self->full = 1;
    if (room != BATCH_ROOM) return PyLong_FromLong(room);
    if (PyList_Append(self->messages, args[0]) < 0) return NULL;
    return PyLong_FromLong(open_batch_joined(self, size, batch_size, batch_count));
}

/* room(size, batch_size) -> LEFT, SHUT or ROOM, nothing changed */
static PyObject *
open_batch_room_py(OpenBatch *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "room(size, batch_size)");
        return NULL;
    }
    Py_ssize_t size = PyLong_AsSsize_t(args[0]), batch_size = PyLong_AsSsize_t(args[1]);
    if ((size == -1 || batch_size == -1) && PyErr_Occurred()) return NULL;
    return PyLong_FromLong(open_batch_room(self, size, batch_size));
}

static PyObject *
open_batch_messages_get(OpenBatch *self, void *closure)
{
    if (self->messages == NULL) {
        PyErr_SetString(PyExc_AttributeError, "messages");
        return NULL;
    }
    return Py_NewRef(self->messages);
}

static int
open_batch_messages_set(OpenBatch *self, PyObject *value, void *closure)
{
    if (value == NULL || !PyList_CheckExact(value)) {
        PyErr_SetString(PyExc_TypeError, "a batch's messages are a list");
        return -1;
    }
    Py_XSETREF(self->messages, Py_NewRef(value));
    return 0;
}

static PyGetSetDef open_batch_getset[] = {
    {"messages", (getter)open_batch_messages_get, (setter)open_batch_messages_set, "the entries, one per record or run",
     NULL},
    {NULL},
};

static PyMemberDef open_batch_members[] = {
    {"payload", T_OBJECT, offsetof(OpenBatch, payload), 0, "the batch's bytes once built, or None"},
    {"bytes", T_PYSSIZET, offsetof(OpenBatch, bytes), 0, "the batch's size if every record took its bound"},
    {"attempts", T_PYSSIZET, offsetof(OpenBatch, attempts), 0, "times it was sent"},
    {"extra", T_PYSSIZET, offsetof(OpenBatch, extra), 0, "records beyond one per entry"},
    {"rows", T_PYSSIZET, offsetof(OpenBatch, rows), 0, "ArrowRows entries"},
    {"full", T_BOOL, offsetof(OpenBatch, full), 0, "no record joins it any more"},
    {NULL},
};

static PyMethodDef open_batch_methods[] = {
    {"push", (PyCFunction)(void (*)(void))open_batch_push, METH_FASTCALL,
     "push(msg, size, batch_size, batch_count) -> LEFT, SHUT, ROOM or FILLED"},
    {"room", (PyCFunction)(void (*)(void))open_batch_room_py, METH_FASTCALL,
     "room(size, batch_size) -> LEFT, SHUT or ROOM"},
    {NULL},
};

static int
open_batch_traverse(OpenBatch *self, visitproc visit, void *arg)
{
    Py_VISIT(self->messages);
    Py_VISIT(self->payload);
    return 0;
}

static int
open_batch_clear(OpenBatch *self)
{
    Py_CLEAR(self->messages);
    Py_CLEAR(self->payload);
    return 0;
}

static void
open_batch_dealloc(OpenBatch *self)
{
    PyObject_GC_UnTrack(self);
    open_batch_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject OpenBatchType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "kafkawire._native.OpenBatch",
    .tp_doc = "A batch's fields that records join, and the rule of its room (core/lane_state.py OpenBatch).",
    .tp_basicsize = sizeof(OpenBatch),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_BASETYPE,
    .tp_new = PyType_GenericNew,
    .tp_traverse = (traverseproc)open_batch_traverse,
    .tp_clear = (inquiry)open_batch_clear,
    .tp_dealloc = (destructor)open_batch_dealloc,
    .tp_getset = open_batch_getset,
    .tp_members = open_batch_members,
    .tp_methods = open_batch_methods,
};
