/* poll_take.c: PollTake and PollReady: poll()'s take of one buffered record and its stored offset,
 * in one call, and the engine's check in front of it; and poll_fast, poll()'s path for FastMethod.
 * Pure-Python twins: consumer/poll_take.py (PollTake), consumer/consumer_engine.py (take_ready) and
 * consumer/consumer.py (Consumer.poll); tests/unit/test_poll_take.py and tests/unit/test_fast_method.py
 * hold them equal.
 *
 * Part of kafkawire._native, compiled as one unit by module.c (see its list for the order). */

/* ---- PollTake ------------------------------------------------------------------------
 *
 * What the twin does through FetchEngine.take_one and the offset store, for the common case: the
 * next row in turn (core/fetch_positions.py's take_one and _next_row) has a decoded chunk whose
 * next record is not its last, no error event is held, and both locks are free. Then, in one call
 * and without a Python frame: the record is taken (the chunk's pos, the row's buffered count,
 * position and leader epoch, the table's turn), the fetch lock let go, and with
 * enable.auto.offset.store its offset + 1 is stored under the store's lock as the twin stores it.
 * Anything else (the chunk's last record, an event, Arrow columns, a row of another shape, a lock
 * held) calls ``slow`` (FetchEngine.take_one) with nothing changed, then stores as the twin does.
 * The rows' slots are read at their offsets (produce_lane.c's slot_offset and SLOT), learned from
 * the first row and batch seen. */

typedef struct {
    PyObject_HEAD
    RLock *fetch_lock;
    PyObject *table, *held, *slow, *stored, *chunk_type, *committed_type;
    RLock *store_lock;
    PyTypeObject *row_type, *batch_type; /* learned on first sight; the offsets below are theirs */
    Py_ssize_t r_buffer, r_paused, r_buffered, r_position, r_epoch;
    Py_ssize_t c_pos, c_records, c_batch, b_epoch;
} PollTake;

static PyObject *s_rows, *s_turn;

/* produce_lane.c's slot_offset, which names a missing slot in an error: here it only declines. */
static Py_ssize_t
plain_slot(PyTypeObject *type, const char *name)
{
    Py_ssize_t off = slot_offset((PyObject *)type, name);
    if (off < 0) PyErr_Clear();
    return off;
}

static int
slot_set(PyObject *obj, Py_ssize_t off, PyObject *value) /* steals ``value`` */
{
    if (value == NULL) return -1;
    PyObject *old = SLOT(obj, off);
    SLOT(obj, off) = value;
    Py_XDECREF(old);
    return 0;
}

/* Learn a row type's slot offsets: 1 when they are all plain slots, else 0. */
static int
learn_row(PollTake *self, PyTypeObject *type)
{
    self->r_buffer = plain_slot(type, "buffer");
    self->r_paused = plain_slot(type, "paused");
    self->r_buffered = plain_slot(type, "buffered_records");
    self->r_position = plain_slot(type, "position");
    self->r_epoch = plain_slot(type, "leader_epoch");
    if (self->r_buffer < 0 || self->r_paused < 0 || self->r_buffered < 0 || self->r_position < 0 || self->r_epoch < 0)
        return 0;
    Py_XSETREF(self->row_type, (PyTypeObject *)Py_NewRef(type));
    return 1;
}

static int
learn_batch(PollTake *self, PyTypeObject *type)
{
    self->b_epoch = plain_slot(type, "partition_leader_epoch");
    if (self->b_epoch < 0) return 0;
    Py_XSETREF(self->batch_type, (PyTypeObject *)Py_NewRef(type));
    return 1;
}

/* A row with something to hand over: its buffer not empty, not paused. -1: not a row we know. */
static int
row_ready(PollTake *self, PyObject *row)
{
    if (Py_TYPE(row) != self->row_type && !learn_row(self, Py_TYPE(row))) return -1;
    PyObject *buffer = SLOT(row, self->r_buffer), *paused = SLOT(row, self->r_paused);
    if (buffer == NULL || (paused != Py_True && paused != Py_False)) return -1; /* else: the twin decides */
    Py_ssize_t n = PySequence_Size(buffer);
    if (n < 0) {
        PyErr_Clear();
        return -1;
    }
    return n > 0 && paused == Py_False;
}

/* The record the fast path hands over, taken; NULL with no error set: not the common case, nothing
 * changed. Called with the fetch lock held. */
static PyObject *
take_listed(PollTake *self)
{
    PyObject *table = self->table;
    PyObject *rows = PyObject_GetAttr(table, s_rows);
    if (rows == NULL) {
        PyErr_Clear();
        return NULL;
    }
    PyObject *record = NULL, *turn_obj = NULL, *head = NULL;
    Py_ssize_t count = PyList_Check(rows) ? PyList_GET_SIZE(rows) : 0, next_turn = -1;
    PyObject *row = NULL;
    if (count == 1) {
        row = PyList_GET_ITEM(rows, 0);
        if (row_ready(self, row) != 1) goto done;
    }
    else if (count > 1) {
        if ((turn_obj = PyObject_GetAttr(table, s_turn)) == NULL) goto fail;
        Py_ssize_t turn = PyLong_AsSsize_t(turn_obj);
        if (turn < 0) goto fail;
        Py_ssize_t start = turn % count;
        for (Py_ssize_t i = 0; i < count; i++) {
            Py_ssize_t index = start + i;
            PyObject *candidate = PyList_GET_ITEM(rows, index >= count ? index - count : index);
            int ready = row_ready(self, candidate);
            if (ready < 0) goto done;
            if (ready) {
                row = candidate;
                next_turn = index + 1;
                break;
            }
        }
        if (row == NULL) goto done;
    }
    else goto done;
    if ((head = PySequence_GetItem(SLOT(row, self->r_buffer), 0)) == NULL) goto fail;
    if ((PyObject *)Py_TYPE(head) != self->chunk_type) goto done;
    if (self->c_pos < 0) {
        self->c_pos = plain_slot(Py_TYPE(head), "pos");
        self->c_records = plain_slot(Py_TYPE(head), "records");
        self->c_batch = plain_slot(Py_TYPE(head), "batch");
        if (self->c_records < 0 || self->c_batch < 0) self->c_pos = -1;
        if (self->c_pos < 0) goto done;
    }
    PyObject *records = SLOT(head, self->c_records), *pos_obj = SLOT(head, self->c_pos);
    PyObject *batch = SLOT(head, self->c_batch), *buffered = SLOT(row, self->r_buffered);
    if (records == NULL || pos_obj == NULL || batch == NULL || buffered == NULL || !PyList_CheckExact(records)
        || !PyLong_CheckExact(pos_obj) || !PyLong_CheckExact(buffered))
        goto done;
    if (Py_TYPE(batch) != self->batch_type && !learn_batch(self, Py_TYPE(batch))) goto done;
    Py_ssize_t pos = PyLong_AsSsize_t(pos_obj);
    if (pos < 0 || pos + 1 >= PyList_GET_SIZE(records)) goto done; /* a chunk's last record: the slow path */
    PyObject *taken = PyList_GET_ITEM(records, pos);
    if (!PyObject_TypeCheck(taken, &MessageFieldsType)) goto done;
    PyObject *offset = ((MessageFields *)taken)->offset, *epoch = SLOT(batch, self->b_epoch);
    if (offset == NULL || !PyLong_CheckExact(offset) || epoch == NULL || !PyLong_CheckExact(epoch)) goto done;
    long long at = PyLong_AsLongLong(offset), left = PyLong_AsLongLong(buffered);
    int epoch_known = PyLong_AsLong(epoch) >= 0;
    if (PyErr_Occurred()) goto fail;
    /* decided: from here on the take happens */
    if (slot_set(head, self->c_pos, PyLong_FromSsize_t(pos + 1)) < 0
        || slot_set(row, self->r_buffered, PyLong_FromLongLong(left - 1)) < 0
        || slot_set(row, self->r_position, PyLong_FromLongLong(at + 1)) < 0)
        goto fail;
    if (epoch_known) slot_set(row, self->r_epoch, Py_NewRef(epoch));
    if (next_turn >= 0) {
        PyObject *t = PyLong_FromSsize_t(next_turn);
        if (t == NULL || PyObject_SetAttr(table, s_turn, t) < 0) {
            Py_XDECREF(t);
            goto fail;
        }
        Py_DECREF(t);
    }
    record = Py_NewRef(taken);
    goto done;
fail:
    PyErr_Clear(); /* reading failed before anything changed, or memory ran out: the slow path decides */
done:
    Py_XDECREF(head);
    Py_XDECREF(turn_obj);
    Py_DECREF(rows);
    return record;
}

/* enable.auto.offset.store: (topic, partition) -> Committed(offset + 1, None, epoch or -1), under the
 * store's lock, as the twin's store. 0, or -1 with an error set. */
static int
store_offset(PollTake *self, PyObject *record)
{
    MessageFields *m = (MessageFields *)record;
    if (m->offset == NULL || m->topic == NULL || m->partition == NULL || m->leader_epoch == NULL) {
        PyErr_SetString(PyExc_AttributeError, "a consumed message without its offset fields");
        return -1;
    }
    long long at = PyLong_AsLongLong(m->offset);
    if (at == -1 && PyErr_Occurred()) return -1;
    PyObject *next = PyLong_FromLongLong(at + 1);
    if (next == NULL) return -1;
    PyObject *epoch = m->leader_epoch == Py_None ? PyLong_FromLong(-1) : Py_NewRef(m->leader_epoch);
    PyTypeObject *committed = (PyTypeObject *)self->committed_type;
    PyObject *stored = epoch == NULL ? NULL : committed->tp_alloc(committed, 3); /* as tuple.__new__(Committed, ...) */
    if (stored == NULL) {
        Py_DECREF(next);
        Py_XDECREF(epoch);
        return -1;
    }
    PyTuple_SET_ITEM(stored, 0, next);
    PyTuple_SET_ITEM(stored, 1, Py_NewRef(Py_None));
    PyTuple_SET_ITEM(stored, 2, epoch);
    PyObject *key = stored == NULL ? NULL : PyTuple_Pack(2, m->topic, m->partition);
    if (key == NULL) {
        Py_XDECREF(stored);
        return -1;
    }
    int rc = -1;
    if (!rlock_try(self->store_lock)) {
        /* held elsewhere (a commit reading the store): wait for it as the twin's `with` does */
        if (rlock_wait(self->store_lock, -1) != 1) goto out;
        self->store_lock->owner = PyThread_get_thread_ident();
        self->store_lock->count = 1;
    }
    rc = PyDict_SetItem(self->stored, key, stored);
    rlock_let_go(self->store_lock);
out:
    Py_DECREF(key);
    Py_DECREF(stored);
    return rc;
}

static PyObject *
poll_take_call(PollTake *self, PyObject *args, PyObject *kwargs)
{
    PyObject *record = NULL;
    Py_ssize_t held = PySequence_Size(self->held);
    if (held < 0) return NULL;
    if (held == 0 && rlock_try(self->fetch_lock)) {
        record = take_listed(self);
        rlock_let_go(self->fetch_lock);
    }
    if (record == NULL && (record = PyObject_CallNoArgs(self->slow)) == NULL) return NULL;
    if (record != Py_None && self->stored != Py_None && PyObject_TypeCheck(record, &MessageFieldsType)
        && ((MessageFields *)record)->error == Py_None && store_offset(self, record) < 0) {
        Py_DECREF(record);
        return NULL;
    }
    return record;
}

static int
poll_take_init(PollTake *self, PyObject *args, PyObject *kwargs)
{
    PyObject *fetch_lock, *table, *held, *slow, *store_lock, *stored, *chunk_type, *committed_type;
    if (!PyArg_ParseTuple(args, "O!OOOO!OO!O!:PollTake", &RLockType, &fetch_lock, &table, &held, &slow, &RLockType,
                          &store_lock, &stored, &PyType_Type, &chunk_type, &PyType_Type, &committed_type))
        return -1;
    if (stored != Py_None && !PyDict_CheckExact(stored)) {
        PyErr_SetString(PyExc_TypeError, "stored must be a dict or None");
        return -1;
    }
    if (!PyType_IsSubtype((PyTypeObject *)committed_type, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "committed_type must be a tuple type");
        return -1;
    }
    Py_XSETREF(self->fetch_lock, (RLock *)Py_NewRef(fetch_lock));
    Py_XSETREF(self->table, Py_NewRef(table));
    Py_XSETREF(self->held, Py_NewRef(held));
    Py_XSETREF(self->slow, Py_NewRef(slow));
    Py_XSETREF(self->store_lock, (RLock *)Py_NewRef(store_lock));
    Py_XSETREF(self->stored, Py_NewRef(stored));
    Py_XSETREF(self->chunk_type, Py_NewRef(chunk_type));
    Py_XSETREF(self->committed_type, Py_NewRef(committed_type));
    Py_CLEAR(self->row_type);
    Py_CLEAR(self->batch_type);
    self->c_pos = -1;
    return 0;
}

static int
poll_take_traverse(PollTake *self, visitproc visit, void *arg)
{
    Py_VISIT(self->fetch_lock);
    Py_VISIT(self->table);
    Py_VISIT(self->held);
    Py_VISIT(self->slow);
    Py_VISIT(self->store_lock);
    Py_VISIT(self->stored);
    Py_VISIT(self->chunk_type);
    Py_VISIT(self->committed_type);
    Py_VISIT(self->row_type);
    Py_VISIT(self->batch_type);
    return 0;
}

static int
poll_take_clear(PollTake *self)
{
    Py_CLEAR(self->fetch_lock);
    Py_CLEAR(self->table);
    Py_CLEAR(self->held);
    Py_CLEAR(self->slow);
    Py_CLEAR(self->store_lock);
    Py_CLEAR(self->stored);
    Py_CLEAR(self->chunk_type);
    Py_CLEAR(self->committed_type);
    Py_CLEAR(self->row_type);
    Py_CLEAR(self->batch_type);
    return 0;
}

static void
poll_take_dealloc(PollTake *self)
{
    PyObject_GC_UnTrack(self);
    poll_take_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject PollTakeType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "kafkawire._native.PollTake",
    .tp_basicsize = sizeof(PollTake),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "PollTake(fetch_lock, table, held, slow, store_lock, stored, chunk_type, committed_type)(): "
              "poll()'s next buffered record, its offset stored (consumer/poll_take.py is the twin)",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)poll_take_init,
    .tp_call = (ternaryfunc)poll_take_call,
    .tp_traverse = (traverseproc)poll_take_traverse,
    .tp_clear = (inquiry)poll_take_clear,
    .tp_dealloc = (destructor)poll_take_dealloc,
};

/* ---- PollReady: the engine's take_ready, the gate in front of PollTake -------------------
 *
 * ConsumerEngine.take_ready in C (the twin is that method): None when something must be served
 * first (a callback queued, an error event, a rejoin due after max.poll.interval.ms, a
 * subscription whose partitions were left for poll()), else ``polled_at`` set to the monotonic
 * clock (CLOCK_MONOTONIC, as time.monotonic() reads it here) and the take's record. */

typedef struct {
    PyObject_HEAD
    PyObject *engine, *waiting, *events, *take;
} PollReady;

static PyObject *s_rejoin_due, *s_subscription, *s_left_for_poll, *s_polled_at;

/* The truth of engine.<name> (or of <object>.<name>): 1, 0, or -1 with an error set. */
static int
attr_true(PyObject *obj, PyObject *name)
{
    PyObject *v = PyObject_GetAttr(obj, name);
    if (v == NULL) return -1;
    int r = PyObject_IsTrue(v);
    Py_DECREF(v);
    return r;
}

static PyObject *
poll_ready_call(PollReady *self, PyObject *args, PyObject *kwargs)
{
    Py_ssize_t queued = PyObject_Length(self->waiting), events = queued ? 0 : PyObject_Length(self->events);
    if (queued < 0 || events < 0) return NULL;
    if (queued || events) Py_RETURN_NONE;
    int due = attr_true(self->engine, s_rejoin_due);
    if (due) return due < 0 ? NULL : Py_NewRef(Py_None);
    PyObject *sub = PyObject_GetAttr(self->engine, s_subscription);
    if (sub == NULL) return NULL;
    int left = sub == Py_None ? 0 : attr_true(sub, s_left_for_poll);
    Py_DECREF(sub);
    if (left) return left < 0 ? NULL : Py_NewRef(Py_None);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    PyObject *now = PyFloat_FromDouble((double)ts.tv_sec + (double)ts.tv_nsec * 1e-9);
    if (now == NULL) return NULL;
    int rc = PyObject_SetAttr(self->engine, s_polled_at, now);
    Py_DECREF(now);
    if (rc < 0) return NULL;
    if (Py_IS_TYPE(self->take, &PollTakeType)) return poll_take_call((PollTake *)self->take, NULL, NULL);
    return PyObject_CallNoArgs(self->take);
}

static int
poll_ready_init(PollReady *self, PyObject *args, PyObject *kwargs)
{
    PyObject *engine, *waiting, *events, *take;
    if (!PyArg_ParseTuple(args, "OOOO:PollReady", &engine, &waiting, &events, &take)) return -1;
    Py_XSETREF(self->engine, Py_NewRef(engine));
    Py_XSETREF(self->waiting, Py_NewRef(waiting));
    Py_XSETREF(self->events, Py_NewRef(events));
    Py_XSETREF(self->take, Py_NewRef(take));
    return 0;
}

static int
poll_ready_traverse(PollReady *self, visitproc visit, void *arg)
{
    Py_VISIT(self->engine);
    Py_VISIT(self->waiting);
    Py_VISIT(self->events);
    Py_VISIT(self->take);
    return 0;
}

static int
poll_ready_clear(PollReady *self)
{
    Py_CLEAR(self->engine);
    Py_CLEAR(self->waiting);
    Py_CLEAR(self->events);
    Py_CLEAR(self->take);
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
    .tp_doc = "PollReady(engine, waiting, events, take)(): ConsumerEngine.take_ready (its twin) in C",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)poll_ready_init,
    .tp_call = (ternaryfunc)poll_ready_call,
    .tp_traverse = (traverseproc)poll_ready_traverse,
    .tp_clear = (inquiry)poll_ready_clear,
    .tp_dealloc = (destructor)poll_ready_dealloc,
};

/* ---- poll()'s path for FastMethod (fast_method.c; Consumer.poll is one) -------------------
 *
 * What Consumer.poll (consumer/consumer.py, its twin) does, step for step: the consumer's engine
 * open, its ``take_ready`` (PollReady, called without a Python call) handing over a record, which
 * is returned (the timeout is not looked at then, as the Python poll() does not look at it); else
 * the engine's ``consume(1, timeout)``, its first message or None. Another argument form, no
 * engine or a closed one: NULL with no error set, and the Python poll() takes the call (its
 * TypeError, its ConsumerClosedError). An error either call raises is the call's, as it would be
 * the Python poll()'s. (Handing "nothing ready" to the Python poll() instead would run take_ready
 * twice: an empty poll(0) measured 3.6 -> 4.3 us.) */

static PyObject *s_engine, *s_closed, *s_take_ready, *s_timeout, *s_consume;

static PyObject *
poll_fast(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    if (nargs < 1 || nargs + nkw > 2) return NULL;
    if (nkw) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, 0);
        if (name != s_timeout && PyUnicode_Compare(name, s_timeout) != 0) return NULL; /* Python's TypeError */
    }
    PyObject *engine = PyObject_GetAttr(args[0], s_engine);
    if (engine == NULL) {
        PyErr_Clear(); /* the Python poll() says what is wrong */
        return NULL;
    }
    PyObject *record = NULL;
    if (engine == Py_None) goto out;
    PyObject *closed = PyObject_GetAttr(engine, s_closed);
    if (closed == NULL) {
        PyErr_Clear();
        goto out;
    }
    Py_DECREF(closed);
    if (closed != Py_False) goto out;
    PyObject *take = PyObject_GetAttr(engine, s_take_ready);
    if (take == NULL) {
        PyErr_Clear();
        goto out;
    }
    record = Py_IS_TYPE(take, &PollReadyType) ? poll_ready_call((PollReady *)take, NULL, NULL)
                                              : PyObject_CallNoArgs(take);
    Py_DECREF(take);
    if (record == Py_None) { /* nothing ready: the wait, as the Python poll() goes on */
        Py_DECREF(record);
        PyObject *one = PyLong_FromLong(1);
        PyObject *call[3] = {engine, one, nargs + nkw == 2 ? args[1] : Py_None};
        PyObject *found = one == NULL ? NULL : PyObject_VectorcallMethod(s_consume, call, 3, NULL);
        Py_XDECREF(one);
        int any = found == NULL ? -1 : PyObject_IsTrue(found);
        record = any < 0 ? NULL : any ? PySequence_GetItem(found, 0) : Py_NewRef(Py_None);
        Py_XDECREF(found);
    }
out:
    Py_DECREF(engine);
    return record;
}
