/* poll_take.c: PollTake: poll()'s take of one buffered record and its stored offset, in one call.
 * Pure-Python twin: consumer/poll_take.py (PollTake); tests/unit/consumer/test_poll_take.py holds them equal.
 * (poll_ready.c's PollReady, the gate in front of it, calls it without a Python call.)
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
 * The table's ``_rows`` and ``_turn`` are read at their slots' offsets (produce_lane.c's slot_offset
 * and SLOT), found when the take is made (a table without them fails its construction); the rows'
 * and batches' are learned from the first row and batch seen (another shape: the slow path). The
 * stored offset is the row's new position (one int for both) under the row's key. */

/* core/fetch_positions.py's SKIPPED_ROWS: rows passed over before the slow path takes the turn. */
#define SKIPPED_ROWS 16

typedef struct {
    PyObject_HEAD
    RLock *fetch_lock;
    PyObject *table, *held, *slow, *stored, *chunk_type, *committed_type;
    RLock *store_lock;
    PyTypeObject *row_type, *batch_type; /* learned on first sight; the offsets below are theirs */
    Py_ssize_t r_buffer, r_paused, r_buffered, r_position, r_epoch;
    Py_ssize_t c_pos, c_records, c_batch, b_epoch;
    Py_ssize_t t_rows, t_turn; /* the table's */
    Py_ssize_t r_key;
} PollTake;

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
    self->r_key = plain_slot(type, "key");
    if (self->r_buffer < 0 || self->r_paused < 0 || self->r_buffered < 0 || self->r_position < 0 || self->r_epoch < 0
        || self->r_key < 0)
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

/* The record the fast path hands over, taken, with its row's key and new position in ``*key`` and
 * ``*next`` (new references); NULL with no error set: not the common case, nothing changed. Called
 * with the fetch lock held. */
static PyObject *
take_listed(PollTake *self, PyObject **key, PyObject **next)
{
    PyObject *table = self->table;
    PyObject *rows = SLOT(table, self->t_rows);
    if (rows == NULL || !PyList_Check(rows)) return NULL; /* None: the slow path lists them */
    Py_INCREF(rows);
    PyObject *record = NULL, *head = NULL;
    Py_ssize_t count = PyList_GET_SIZE(rows), next_turn = -1;
    PyObject *row = NULL;
    if (count == 1) {
        row = PyList_GET_ITEM(rows, 0);
        if (row_ready(self, row) != 1) goto done;
    }
    else if (count > 1) {
        PyObject *turn_obj = SLOT(table, self->t_turn);
        if (turn_obj == NULL || !PyLong_CheckExact(turn_obj)) goto done;
        Py_ssize_t turn = PyLong_AsSsize_t(turn_obj);
        if (turn < 0) goto fail;
        Py_ssize_t start = turn % count;
        for (Py_ssize_t i = 0; i < count; i++) {
            /* Past SKIPPED_ROWS rows holding nothing, the twin lists the rows anew (_next_row). */
            if (i > SKIPPED_ROWS) goto done;
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
    PyObject *row_key = SLOT(row, self->r_key);
    if (records == NULL || pos_obj == NULL || batch == NULL || buffered == NULL || row_key == NULL
        || !PyList_CheckExact(records) || !PyLong_CheckExact(pos_obj) || !PyLong_CheckExact(buffered))
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
    PyObject *pos_next = PyLong_FromSsize_t(pos + 1), *left_next = PyLong_FromLongLong(left - 1);
    PyObject *position = PyLong_FromLongLong(at + 1), *turn_next = next_turn < 0 ? NULL : PyLong_FromSsize_t(next_turn);
    if (pos_next == NULL || left_next == NULL || position == NULL || (next_turn >= 0 && turn_next == NULL)) {
        Py_XDECREF(pos_next);
        Py_XDECREF(left_next);
        Py_XDECREF(position);
        Py_XDECREF(turn_next);
        goto fail;
    }
    /* decided: the take happens */
    slot_set(head, self->c_pos, pos_next);
    slot_set(row, self->r_buffered, left_next);
    slot_set(row, self->r_position, Py_NewRef(position));
    if (epoch_known) slot_set(row, self->r_epoch, Py_NewRef(epoch));
    if (turn_next != NULL) slot_set(table, self->t_turn, turn_next);
    *key = Py_NewRef(row_key);
    *next = position;
    record = Py_NewRef(taken);
    goto done;
fail:
    PyErr_Clear(); /* reading failed before anything changed, or memory ran out: the slow path decides */
done:
    Py_XDECREF(head);
    Py_DECREF(rows);
    return record;
}

/* enable.auto.offset.store: (topic, partition) -> Committed(offset + 1, None, epoch or -1), under the
 * store's lock, as the twin's store. ``next`` is offset + 1 when the caller has it (a new reference,
 * given over), ``key`` the taken row's key (borrowed), used when it holds the record's very topic
 * and partition. 0, or -1 with an error set. */
static int
store_offset(PollTake *self, PyObject *record, PyObject *key, PyObject *next)
{
    MessageFields *m = (MessageFields *)record;
    if (m->offset == NULL || m->topic == NULL || m->partition == NULL || m->leader_epoch == NULL) {
        Py_XDECREF(next);
        PyErr_SetString(PyExc_AttributeError, "a consumed message without its offset fields");
        return -1;
    }
    if (next == NULL) {
        long long at = PyLong_AsLongLong(m->offset);
        if (at == -1 && PyErr_Occurred()) return -1;
        if ((next = PyLong_FromLongLong(at + 1)) == NULL) return -1;
    }
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
    if (key != NULL && PyTuple_CheckExact(key) && PyTuple_GET_SIZE(key) == 2 && PyTuple_GET_ITEM(key, 0) == m->topic
        && PyTuple_GET_ITEM(key, 1) == m->partition)
        Py_INCREF(key);
    else if ((key = PyTuple_Pack(2, m->topic, m->partition)) == NULL) {
        Py_DECREF(stored);
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
    PyObject *record = NULL, *key = NULL, *next = NULL;
    Py_ssize_t held = PySequence_Size(self->held);
    if (held < 0) return NULL;
    if (held == 0 && rlock_try(self->fetch_lock)) {
        record = take_listed(self, &key, &next);
        rlock_let_go(self->fetch_lock);
    }
    if (record == NULL && (record = PyObject_CallNoArgs(self->slow)) == NULL) return NULL;
    if (record != Py_None && self->stored != Py_None && PyObject_TypeCheck(record, &MessageFieldsType)
        && ((MessageFields *)record)->error == Py_None) {
        int rc = store_offset(self, record, key, next);
        next = NULL; /* given over */
        if (rc < 0) Py_CLEAR(record);
    }
    Py_XDECREF(key);
    Py_XDECREF(next);
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
    Py_ssize_t t_rows = slot_offset((PyObject *)Py_TYPE(table), "_rows");
    Py_ssize_t t_turn = t_rows < 0 ? -1 : slot_offset((PyObject *)Py_TYPE(table), "_turn");
    if (t_turn < 0) return -1; /* the table's type names the slot that is not one */
    self->t_rows = t_rows;
    self->t_turn = t_turn;
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
