/* produce_lane.c: ProduceLane: produce()'s common case in C (Producer.produce is a FastMethod, fast_method.c).
 * Pure-Python twin: the Python admission path, producer/producer_engine.py ProducerEngine.admit and
 * core/accumulator.py Accumulator.append (tests/unit/producer/test_produce_lane.py).
 *
 * Part of kafkawire._native, compiled as one unit by module.c (see its list for the order). */

/* produce()'s common case in C: a record of bytes (or None) to a topic seen before, no headers,
 * the default or a known partition, room in the buffer, a sticky partition that does not move on
 * or a remembered key, and an open batch it fits in. The lane only reads the state the Python side
 * keeps and makes the moves the Python path would make with it. Its contract with the Python side:
 * the LaneState and OpenBatch (lane_state.c: the counters, the limits and the rule of buffer room,
 * the open batches, whose fields and rule of room are C's, the fatal error), and named slots of two
 * classes, their names handed in from core/lane_state.py LANE_SLOTS and found when the lane is made
 * (a name that is no slot fails the producer's construction): the sticky state's partition,
 * produced and until (core/partitioners.py), the metadata's partition_counts (core/metadata.py
 * ClusterView); plus the remembered key partitions and the set of legal topics it is handed. It
 * moves the counters (lane_served among them), a batch's entries, and a sticky state's produced;
 * anything else, and every decision (a new sticky partition, a new batch, a full buffer, a
 * refusal), is left to the Python path, which the caller runs when the lane declines. All of it
 * runs under the GIL without calling Python code, and only when the engine's lock is free: to
 * the Python side it is one step of the lock's holder, as the Python path is. The equality of the
 * two is held by tests/unit/producer/test_produce_lane.py. */

/* The keyed partitioners whose answers the lane computes (core.partitioners.KEY_HASHES). */
enum { KEY_HASH_NONE = 0, KEY_HASH_MURMUR2 = 1, KEY_HASH_CRC32 = 2 };

typedef struct {
    PyObject_HEAD
    LaneState *state;      /* the counters, the open batches and the fatal error it shares with Python */
    PyObject *sticky;      /* the sticky partitioner's per-topic state (dict topic -> _Stick), or None */
    PyObject *keyed;       /* KeyedPartitions' maps (dict (topic, count) -> dict key -> partition), or None */
    int key_hash;          /* the partitioner's hash when the lane may compute it (core.partitioners.KEY_HASHES) */
    int now_monotonic;     /* ``now`` is time.monotonic: read the same clock without calling it */
    PyObject *legal;       /* the set of topic names already found legal */
    PyObject *metadata;    /* the cluster metadata, read through its partition_counts slot */
    Py_ssize_t off_partition_counts;
    PyObject *stick_type;  /* the sticky state's class, whose slots the lane reads and writes */
    Py_ssize_t off_stick_partition, off_stick_produced, off_stick_until; /* found when the lane is made */
    PyObject *tp_topic, *tp_keys; /* the last topic's (topic, partition) keys of the open batches, by partition */
    PyObject *wake;        /* the sender's wake(): a batch filled up */
    PyObject *lock;        /* the engine's lock: taken by rlock_try when it is an RLock of ours */
    PyObject *acquire, *release; /* else its methods */
    PyObject *now;         /* the engine's monotonic clock */
    PyObject *on_delivery; /* the configured default callback, or None */
    Py_ssize_t max_record, batch_size, batch_count, sticky_size;
} Lane;

static PyObject *s_lane;

static Py_ssize_t
slot_offset(PyObject *type, const char *name)
{
    PyObject *d = PyObject_GetAttrString(type, name);
    if (d == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return -1;
        PyErr_Clear(); /* no such name: as no such slot */
    }
    Py_ssize_t off = -1;
    if (d != NULL && Py_IS_TYPE(d, &PyMemberDescr_Type)) {
        PyMemberDef *m = ((PyMemberDescrObject *)d)->d_member;
        if (m->type == T_OBJECT_EX && !(m->flags & READONLY)) off = m->offset;
    }
    Py_XDECREF(d);
    if (off < 0) PyErr_Format(PyExc_TypeError, "%s is not a slot", name);
    return off;
}

#define SLOT(obj, off) (*(PyObject **)((char *)(obj) + (off)))

static int
lane_traverse(Lane *self, visitproc visit, void *arg)
{
    Py_VISIT(self->state);
    Py_VISIT(self->sticky);
    Py_VISIT(self->keyed);
    Py_VISIT(self->legal);
    Py_VISIT(self->metadata);
    Py_VISIT(self->stick_type);
    Py_VISIT(self->tp_topic);
    Py_VISIT(self->tp_keys);
    Py_VISIT(self->wake);
    Py_VISIT(self->lock);
    Py_VISIT(self->acquire);
    Py_VISIT(self->release);
    Py_VISIT(self->now);
    Py_VISIT(self->on_delivery);
    return 0;
}

static int
lane_clear(Lane *self)
{
    Py_CLEAR(self->state);
    Py_CLEAR(self->sticky);
    Py_CLEAR(self->keyed);
    Py_CLEAR(self->legal);
    Py_CLEAR(self->metadata);
    Py_CLEAR(self->stick_type);
    Py_CLEAR(self->tp_topic);
    Py_CLEAR(self->tp_keys);
    Py_CLEAR(self->wake);
    Py_CLEAR(self->lock);
    Py_CLEAR(self->acquire);
    Py_CLEAR(self->release);
    Py_CLEAR(self->now);
    Py_CLEAR(self->on_delivery);
    return 0;
}

static void
lane_dealloc(Lane *self)
{
    PyObject_GC_UnTrack(self);
    lane_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* ProduceLane(state, sticky_topics, keyed_maps, key_hash, legal_topics, metadata, wake, lock,
 *             now, on_delivery, stick_type, stick_partition, stick_produced, stick_until,
 *             partition_counts, max_record, batch_size, batch_count, sticky_size): the names are the
 *             slots' (core/lane_state.py LANE_SLOTS) */
static PyObject *
lane_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *state, *sticky, *keyed, *legal, *metadata, *wake, *lock, *now, *on_delivery, *stick_type;
    const char *stick_partition, *stick_produced, *stick_until, *partition_counts;
    Py_ssize_t limits[4];
    int key_hash;
    if (!PyArg_ParseTuple(args, "O!OOiO!OOOOOO!ssssnnnn:ProduceLane", &LaneStateType, &state, &sticky, &keyed,
                          &key_hash, &PySet_Type, &legal, &metadata, &wake, &lock, &now, &on_delivery, &PyType_Type,
                          &stick_type, &stick_partition, &stick_produced, &stick_until, &partition_counts, &limits[0],
                          &limits[1], &limits[2], &limits[3]))
        return NULL;
    if ((sticky != Py_None && !PyDict_Check(sticky)) || (keyed != Py_None && !PyDict_Check(keyed))) {
        PyErr_SetString(PyExc_TypeError, "sticky and keyed state must be dicts or None");
        return NULL;
    }
    if (key_hash != KEY_HASH_NONE && key_hash != KEY_HASH_MURMUR2 && key_hash != KEY_HASH_CRC32) {
        PyErr_Format(PyExc_ValueError, "unknown key hash %d", key_hash);
        return NULL;
    }
    Lane *self = (Lane *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->state = (LaneState *)Py_NewRef(state);
    self->sticky = Py_NewRef(sticky);
    self->keyed = Py_NewRef(keyed);
    self->key_hash = key_hash;
    self->legal = Py_NewRef(legal);
    self->metadata = Py_NewRef(metadata);
    self->now = Py_NewRef(now);
    PyObject *time_module = PyImport_ImportModule("time");
    PyObject *monotonic = time_module == NULL ? NULL : PyObject_GetAttrString(time_module, "monotonic");
    Py_XDECREF(time_module);
    if (monotonic == NULL) {
        Py_DECREF(self);
        return NULL;
    }
    self->now_monotonic = monotonic == now;
    Py_DECREF(monotonic);
    self->on_delivery = Py_NewRef(on_delivery);
    self->wake = Py_NewRef(wake);
    self->lock = Py_NewRef(lock);
    self->acquire = PyObject_GetAttrString(lock, "acquire");
    self->release = PyObject_GetAttrString(lock, "release");
    self->max_record = limits[0];
    self->batch_size = limits[1];
    self->batch_count = limits[2];
    self->sticky_size = limits[3];
    self->stick_type = Py_NewRef(stick_type);
    if (self->acquire == NULL || self->release == NULL
        || (self->off_partition_counts = slot_offset((PyObject *)Py_TYPE(metadata), partition_counts)) < 0
        || (self->off_stick_partition = slot_offset(stick_type, stick_partition)) < 0
        || (self->off_stick_produced = slot_offset(stick_type, stick_produced)) < 0
        || (self->off_stick_until = slot_offset(stick_type, stick_until)) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static PyTypeObject LaneType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "kafkawire._native.ProduceLane",
    .tp_doc = "The state produce()'s C path reads and moves (see native_c/produce_lane.c).",
    .tp_basicsize = sizeof(Lane),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = lane_new,
    .tp_traverse = (traverseproc)lane_traverse,
    .tp_clear = (inquiry)lane_clear,
    .tp_dealloc = (destructor)lane_dealloc,
};

/* The keyed partitioners whose answer the lane computes itself, as core/partitioners.py defines them
 * (the codes are its KEY_HASHES values): MURMUR2 is the positive Kafka murmur2 of any key (b"" too)
 * modulo the count; CRC32 is zlib's CRC-32 modulo the count for a non-empty key (an empty one goes
 * sticky, which the lane leaves to Python). The unit tests hold them equal to the Python functions. */

static uint32_t
kafka_murmur2(const unsigned char *data, Py_ssize_t len)
{
    const uint32_t m = 0x5bd1e995;
    uint32_t h = 0x9747b28c ^ (uint32_t)len;
    Py_ssize_t whole = len & ~(Py_ssize_t)3;
    for (Py_ssize_t i = 0; i < whole; i += 4) {
        uint32_t k = (uint32_t)data[i] | (uint32_t)data[i + 1] << 8 | (uint32_t)data[i + 2] << 16
                     | (uint32_t)data[i + 3] << 24;
        k *= m;
        k ^= k >> 24;
        k *= m;
        h = (h * m) ^ k;
    }
    switch (len & 3) {
    case 3: h ^= (uint32_t)data[whole + 2] << 16; /* fall through */
    case 2: h ^= (uint32_t)data[whole + 1] << 8;  /* fall through */
    case 1:
        h ^= data[whole];
        h *= m;
    }
    h ^= h >> 13;
    h *= m;
    h ^= h >> 15;
    return h;
}

static uint32_t crc32_table[256];

static uint32_t
zlib_crc32(const unsigned char *data, Py_ssize_t len)
{
    if (crc32_table[1] == 0) {
        for (uint32_t n = 0; n < 256; n++) {
            uint32_t c = n;
            for (int b = 0; b < 8; b++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            crc32_table[n] = c;
        }
    }
    uint32_t c = 0xFFFFFFFFu;
    for (Py_ssize_t i = 0; i < len; i++) c = crc32_table[(c ^ data[i]) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

/* A key's partition under the lane's hash: >= 0, or -1 when the lane has no answer of its own. */
static Py_ssize_t
lane_hash_span(Lane *self, const char *key, Py_ssize_t len, Py_ssize_t count)
{
    const unsigned char *data = (const unsigned char *)key;
    if (self->key_hash == KEY_HASH_MURMUR2) return (Py_ssize_t)((kafka_murmur2(data, len) & 0x7FFFFFFFu) % (uint32_t)count);
    if (self->key_hash == KEY_HASH_CRC32 && len > 0) return (Py_ssize_t)(zlib_crc32(data, len) % (uint32_t)count);
    return -1;
}

static Py_ssize_t
lane_hash_key(Lane *self, PyObject *key, Py_ssize_t count)
{
    return lane_hash_span(self, PyBytes_AS_STRING(key), PyBytes_GET_SIZE(key), count);
}

/* A Py_ssize_t from a dict's int value; -1 with no error when missing or not a plain int. */
static Py_ssize_t
dict_size(PyObject *dict, PyObject *name)
{
    PyObject *v = PyDict_GetItemWithError(dict, name);
    if (v == NULL || !PyLong_CheckExact(v)) return -1;
    Py_ssize_t n = PyLong_AsSsize_t(v);
    if (n == -1) PyErr_Clear();
    return n;
}

/* time.monotonic()'s float of a CLOCK_MONOTONIC reading, as CPython converts it. */
static PyObject *
monotonic_float(int64_t ns)
{
    return PyFloat_FromDouble(ns % 1000000000 == 0 ? (double)(ns / 1000000000) : (double)ns / 1e9);
}

/* The accumulator's key of a partition's queue, (topic, partition), a new reference: kept per
 * partition of the last topic, so that a record to it makes no tuple. */
static PyObject *
lane_queue_key(Lane *self, PyObject *topic, PyObject *part, Py_ssize_t partition)
{
    if (partition >= 4096) return PyTuple_Pack(2, topic, part);
    if (self->tp_topic != topic) {
        int same = self->tp_topic == NULL ? 0 : PyUnicode_Compare(self->tp_topic, topic) == 0;
        if (PyErr_Occurred()) return NULL;
        if (!same) {
            PyObject *keys = PyList_New(0);
            if (keys == NULL) return NULL;
            Py_XSETREF(self->tp_keys, keys);
            Py_XSETREF(self->tp_topic, Py_NewRef(topic));
        }
    }
    PyObject *keys = self->tp_keys;
    if (partition < PyList_GET_SIZE(keys) && PyList_GET_ITEM(keys, partition) != Py_None)
        return Py_NewRef(PyList_GET_ITEM(keys, partition));
    while (PyList_GET_SIZE(keys) <= partition)
        if (PyList_Append(keys, Py_None) < 0) return NULL;
    PyObject *tp = PyTuple_Pack(2, topic, part);
    if (tp == NULL) return NULL;
    PyList_SetItem(keys, partition, Py_NewRef(tp)); /* steals the new reference; the old was None */
    return tp;
}

enum { A_TOPIC, A_VALUE, A_KEY, A_PARTITION, A_ON_DELIVERY, A_TIMESTAMP, A_HEADERS, A_CALLBACK, A_COUNT };
static const char *arg_names[A_COUNT] = {"topic", "value", "key", "partition", "on_delivery", "timestamp", "headers",
                                         "callback"};

/* The record of one produce() call queued by the lane: 1, or 0 when the Python path must take it
 * (nothing was changed then), or -1 with an exception set. */
static int
lane_produce(Lane *self, PyObject *const *given)
{
    PyObject *topic = given[A_TOPIC], *value = given[A_VALUE], *key = given[A_KEY];
    if (topic == NULL || !PyUnicode_CheckExact(topic) || given[A_HEADERS] != Py_None) return 0;
    if ((value != Py_None && !PyBytes_CheckExact(value)) || (key != Py_None && !PyBytes_CheckExact(key))) return 0;
    PyObject *part_obj = given[A_PARTITION], *ts_obj = given[A_TIMESTAMP];
    if (!PyLong_CheckExact(part_obj) || !PyLong_CheckExact(ts_obj)) return 0;
    int overflow;
    long long chosen = PyLong_AsLongLongAndOverflow(part_obj, &overflow);
    if (overflow || chosen < -1) return 0;
    long long ts = PyLong_AsLongLongAndOverflow(ts_obj, &overflow);
    if (overflow || ts < 0) return 0;
    PyObject *cb = given[A_CALLBACK] != Py_None ? given[A_CALLBACK]
                   : given[A_ON_DELIVERY] != Py_None ? given[A_ON_DELIVERY] : self->on_delivery;
    if (cb != Py_None && !PyCallable_Check(cb)) return 0;
    int legal = PySet_Contains(self->legal, topic);
    if (legal <= 0) return legal;
    if (self->state->fatal != Py_None) return 0;

    Py_ssize_t vlen = value == Py_None ? 0 : PyBytes_GET_SIZE(value);
    Py_ssize_t klen = key == Py_None ? 0 : PyBytes_GET_SIZE(key);
    Py_ssize_t size = record_bound(key == Py_None ? -1 : klen, value == Py_None ? -1 : vlen, 0, 0);
    Py_ssize_t charge = vlen; /* value_charge: the value's length */
    if (WIDEST_OVERHEAD + klen + vlen > self->max_record) return 0; /* too large: the Python path says so */

    /* Another thread in the middle of something: the Python path waits for it. */
    RLock *rlock = Py_IS_TYPE(self->lock, &RLockType) ? (RLock *)self->lock : NULL;
    PyObject *got;
    if (rlock != NULL) {
        if (!rlock_try(rlock)) return 0;
    } else {
        got = PyObject_CallOneArg(self->acquire, Py_False);
        if (got == NULL) return -1;
        Py_DECREF(got);
        if (got != Py_True) return 0;
    }
    int done = 0;
    PyObject *stick = NULL, *batch = NULL, *msg = NULL, *enqueued = NULL, *part = NULL, *stamp = NULL;

    /* Room in the buffer (lane_state.c's rule). */
    LaneState *tally = self->state;
    if (!room_for(tally, tally->outstanding, tally->buffered_bytes, charge)) goto out;
    /* The partition count, from the metadata as the Python path reads it. */
    PyObject *counts = SLOT(self->metadata, self->off_partition_counts);
    Py_ssize_t count = counts != NULL && PyDict_Check(counts) ? dict_size(counts, topic) : -1;
    if (PyErr_Occurred()) goto fail;
    if (count <= 0) goto out;
    /* The partition: the caller's, the sticky one while it stays, or a remembered key's. */
    Py_ssize_t partition = -1, produced = 0;
    double until = 0.0; /* a sticky partition's time to move on (compared once the clock is read) */
    if (chosen >= 0) {
        if (chosen >= count) goto out;
        partition = (Py_ssize_t)chosen;
    } else if (key == Py_None) {
        if (self->sticky == Py_None) goto out;
        stick = Py_XNewRef(PyDict_GetItemWithError(self->sticky, topic));
        if (stick == NULL) goto check;
        if ((PyObject *)Py_TYPE(stick) != self->stick_type) goto out;
        PyObject *p = SLOT(stick, self->off_stick_partition), *n = SLOT(stick, self->off_stick_produced);
        PyObject *u = SLOT(stick, self->off_stick_until);
        if (p == NULL || n == NULL || u == NULL || !PyFloat_CheckExact(u)) goto out;
        until = PyFloat_AS_DOUBLE(u);
        partition = PyLong_CheckExact(p) ? PyLong_AsSsize_t(p) : -1;
        produced = PyLong_CheckExact(n) ? PyLong_AsSsize_t(n) : -1;
        if (PyErr_Occurred()) goto fail;
        if (partition < 0 || partition >= count || produced < 0 || (produced > 0 && produced + size > self->sticky_size))
            goto out; /* the record would not fit the partition's batch: the partitioner moves on */
    } else if (self->key_hash != KEY_HASH_NONE) {
        if (count > 0x7FFFFFFF || (partition = lane_hash_key(self, key, count)) < 0) goto out;
    } else {
        if (self->keyed == Py_None) goto out;
        PyObject *c = PyLong_FromSsize_t(count), *tc = c == NULL ? NULL : PyTuple_Pack(2, topic, c);
        Py_XDECREF(c);
        if (tc == NULL) goto fail;
        PyObject *known = PyDict_GetItemWithError(self->keyed, tc);
        Py_DECREF(tc);
        if (known == NULL || !PyDict_Check(known)) goto check;
        PyObject *p = PyDict_GetItemWithError(known, key);
        if (p == NULL || !PyLong_CheckExact(p)) goto check;
        partition = PyLong_AsSsize_t(p);
        if (partition < 0 || partition >= count) goto check;
    }
    /* The partition's open batch, when the record joins it as Accumulator.append would add it. */
    part = PyLong_FromSsize_t(partition);
    PyObject *tp = part == NULL ? NULL : lane_queue_key(self, topic, part, partition);
    if (tp == NULL) goto fail;
    PyObject *queues = self->state->queues;
    PyObject *queue = queues != NULL ? PyDict_GetItemWithError(queues, tp) : NULL;
    Py_DECREF(tp);
    if (queue == NULL) goto check;
    Py_ssize_t depth = PySequence_Size(queue);
    if (depth <= 0) {
        if (depth < 0) goto fail;
        goto out;
    }
    batch = PySequence_GetItem(queue, depth - 1);
    if (batch == NULL) goto fail;
    if (!PyObject_TypeCheck(batch, &OpenBatchType)) goto out;
    OpenBatch *open = (OpenBatch *)batch;
    if (open_batch_room(open, size, self->batch_size) != BATCH_ROOM) goto out; /* the Python path opens one */

    /* Every test passed: the moves of admit and Accumulator.append. */
    if (self->now_monotonic) { /* one clock read for the enqueueing time and, when 0, the timestamp */
        int64_t mono;
        long long ms;
        clocks_now(&mono, &ms);
        enqueued = monotonic_float(mono);
        if (enqueued == NULL || (ts == 0 && (stamp = epoch_ms_int(ms)) == NULL)) goto fail;
    } else {
        enqueued = PyObject_CallNoArgs(self->now);
        if (enqueued == NULL) goto fail;
    }
    if (!PyFloat_CheckExact(enqueued)) goto out;
    if (stick != NULL && PyFloat_AS_DOUBLE(enqueued) >= until) goto out; /* its time is up: the partitioner moves on */
    PyObject *fields[9] = {topic, part, key, value, Py_None, stamp != NULL ? stamp : ts_obj, cb, Py_None, enqueued};
    msg = pending_make(&PendingType, fields);
    if (msg == NULL) goto fail;
    if (((Pending *)msg)->size != size) goto out; /* cannot be: the same sum */
    if (stick != NULL) {
        PyObject *n = PyLong_FromSsize_t(produced + size);
        if (n == NULL) goto fail;
        Py_SETREF(SLOT(stick, self->off_stick_produced), n);
    }
    if (PyList_Append(open->messages, msg) < 0) goto fail;
    tally->outstanding += 1;
    tally->buffered_bytes += charge;
    tally->queued += 1;
    tally->served[SERVED_LANE] += 1;
    /* filled: the sender looks now */
    done = open_batch_joined(open, size, self->batch_size, self->batch_count) == BATCH_FILLED ? 2 : 1;
    goto out;
check:
    if (PyErr_Occurred()) goto fail;
out:
    if (0) {
fail:
        done = -1;
    }
    PyObject *exc_type, *exc_value, *exc_tb;
    PyErr_Fetch(&exc_type, &exc_value, &exc_tb); /* the lock is let go whatever happened */
    if (rlock != NULL) {
        rlock_let_go(rlock);
        got = Py_NewRef(Py_None);
    } else {
        got = PyObject_CallNoArgs(self->release);
    }
    Py_XDECREF(stick);
    Py_XDECREF(batch);
    Py_XDECREF(msg);
    Py_XDECREF(enqueued);
    Py_XDECREF(stamp);
    Py_XDECREF(part);
    if (done < 0) {
        Py_XDECREF(got);
        PyErr_Restore(exc_type, exc_value, exc_tb);
        return -1;
    }
    if (got == NULL) return -1;
    Py_DECREF(got);
    if (done == 2) {
        got = PyObject_CallNoArgs(self->wake);
        if (got == NULL) return -1;
        Py_DECREF(got);
    }
    return done > 0;
}

/* produce()'s path for FastMethod (fast_method.c; Producer.produce is one): the arguments of one
 * call (the producer first) bound as the Python signature binds them, and the record queued through
 * the producer's ``_lane`` when it has one and the lane takes it. None when queued; NULL with no
 * error set when the Python produce() must take the call (an argument form it alone checks, or the
 * lane declined: nothing was changed); NULL with an error set on failure. */
static PyObject *
produce_fast(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (nargs < 1 || nargs > 1 + 7) return NULL;
    PyObject *lane = PyObject_GetAttr(args[0], s_lane);
    if (lane == NULL) return NULL;
    Py_DECREF(lane); /* the producer holds it */
    if (!Py_IS_TYPE(lane, &LaneType)) return NULL;
    PyObject *given[A_COUNT] = {NULL, Py_None, Py_None, NULL, Py_None, NULL, Py_None, Py_None};
    static PyObject *minus_one = NULL, *zero = NULL;
    if (minus_one == NULL) {
        minus_one = PyLong_FromLong(-1);
        zero = PyLong_FromLong(0);
        if (minus_one == NULL || zero == NULL) return NULL;
    }
    given[A_PARTITION] = minus_one;
    given[A_TIMESTAMP] = zero;
    int seen = 0;
    for (Py_ssize_t i = 1; i < nargs; i++) {
        given[i - 1] = args[i];
        seen |= 1 << (i - 1);
    }
    Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, k);
        int which = -1;
        for (int j = 0; j < A_COUNT; j++) {
            if (PyUnicode_CompareWithASCIIString(name, arg_names[j]) == 0) {
                which = j;
                break;
            }
        }
        if (which < 0 || (seen & (1 << which))) return NULL; /* Python raises the TypeError */
        seen |= 1 << which;
        given[which] = args[nargs + k];
    }
    int r = lane_produce((Lane *)lane, given);
    if (r < 0) return NULL;
    return r > 0 ? Py_NewRef(Py_None) : NULL;
}
