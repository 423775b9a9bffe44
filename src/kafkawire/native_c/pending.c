/* pending.c: PendingMessage: one record between produce() and its delivery report, with its size
 * bound (records.types.record_size_upper_bound) and the clocks the lane reads.
 * Pure-Python twin: producer/pending.py (tests/unit/native_c/test_twins.py).
 *
 * Part of kafkawire._native, compiled as one unit by module.c (see its list for the order). */

/* ---- PendingMessage --------------------------------------------------------------------- *
 * Not tracked by the cyclic garbage collector, on purpose. Pending records are the producer's
 * most numerous long-lived objects: tracked, each one counted towards the next collection and
 * was walked by every full one, about a quarter of the bulk paths' time. Untracked is safe here:
 * user code never sees a PendingMessage, so nothing it holds can point back at one; the only
 * cycles through one run through the producer itself, which is alive while records are pending
 * (its IO thread holds it) and has released them all once closed. */

typedef struct {
    PyObject_HEAD
    PyObject *topic;
    PyObject *partition;
    PyObject *key;
    PyObject *value;
    PyObject *headers;
    PyObject *timestamp;
    PyObject *callback;
    PyObject *future;
    PyObject *enqueued;
    Py_ssize_t size;
} Pending;

static PyTypeObject PendingType;

/* The loops over a batch's records read each PendingMessage and the objects it points at, which
 * lie apart in memory (a keyed batch's records interleave with those of three other partitions,
 * and its keys come from anywhere): each step asks for the cache lines of the records a few steps
 * ahead, the PendingMessage first, then, once that has arrived, its key, value and clock. */
#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif
/* ``far`` steps ahead the PendingMessage's two cache lines, ``near`` steps ahead (it has arrived
 * by then) what it points at: a loop whose step is short looks further ahead. A macro, not a
 * function: GCC finds a function that only prefetches free of effects, and drops its calls. */
#define PENDING_PREFETCH(items, i, n, far, near)                                            \
    do {                                                                                    \
        if ((i) + (far) < (n)) {                                                            \
            PREFETCH((items)[(i) + (far)]);                                                 \
            PREFETCH((char *)(items)[(i) + (far)] + sizeof(Pending) - 1);                   \
        }                                                                                   \
        if ((i) + (near) < (n) && Py_IS_TYPE((items)[(i) + (near)], &PendingType)) {        \
            const Pending *ahead_ = (const Pending *)(items)[(i) + (near)];                 \
            PREFETCH(ahead_->key);                                                          \
            PREFETCH(ahead_->value);                                                        \
            PREFETCH(ahead_->enqueued);                                                     \
        }                                                                                   \
    } while (0)

/* The length of a key, value or header value: read directly from a bytes object (the common
 * case), else its len(). */
static inline Py_ssize_t
blob_len(PyObject *o)
{
    return PyBytes_CheckExact(o) ? PyBytes_GET_SIZE(o) : PyObject_Length(o);
}

/* A record's buffer charge (queue.buffering.max.kbytes), librdkafka's: its value's length alone.
 * The rule of room for it is lane_state.c's room_for; core/lane_state.py buffer_charge is the twin.
 * -1 with an error when the value has no length. */
static inline Py_ssize_t
value_charge(PyObject *value)
{
    return value == NULL || value == Py_None ? 0 : blob_len(value);
}

/* An int as a long long; CPython 3.11's PyLong_AsLongLong goes through a byte array for any int
 * past 2**30 (every epoch-millisecond timestamp), PyLong_AsLong reads the digits directly. */
static inline long long
int64_of(PyObject *o)
{
#if LONG_MAX == LLONG_MAX
    return PyLong_AsLong(o);
#else
    return PyLong_AsLongLong(o);
#endif
}

/* A header as (key, value): any sequence of two, as Python's unpacking takes it. New references. */
static int
header_pair(PyObject *item, PyObject **key, PyObject **value)
{
    PyObject *pair = PySequence_Fast(item, "a header must be a (key, value) pair");
    if (pair == NULL) return -1;
    if (PySequence_Fast_GET_SIZE(pair) != 2) {
        PyErr_SetString(PyExc_TypeError, "a header must be a (key, value) pair");
        Py_DECREF(pair);
        return -1;
    }
    *key = Py_NewRef(PySequence_Fast_GET_ITEM(pair, 0));
    *value = Py_NewRef(PySequence_Fast_GET_ITEM(pair, 1));
    Py_DECREF(pair);
    return 0;
}

static int varint_len(int64_t n);

/* librdkafka's measure against message.max.bytes: the data plus every varint at its widest (36
 * bytes for a record without headers), as records.record_size_widest; at most WIDEST_GAP more
 * than record_bound's for such a record (which takes at least 20 bytes besides the data). */
#define WIDEST_OVERHEAD 36
#define WIDEST_GAP (WIDEST_OVERHEAD - 20)
#define HEADER_GAP (10 - 2) /* and at most this much more a header */

/* The most bytes a record can take in a batch (records.record_size_upper_bound): every length as
 * it will be written, the two deltas at their widest (a varlong, an int32 varint). ``key_len`` and
 * ``value_len`` are -1 for null; ``headers`` counts the headers' bytes, ``header_count`` them. */
static Py_ssize_t
record_bound(Py_ssize_t key_len, Py_ssize_t value_len, Py_ssize_t headers, Py_ssize_t header_count)
{
    Py_ssize_t body = 1 + 10 + 5 + varint_len(header_count) + headers;
    body += key_len < 0 ? 1 : varint_len(key_len) + key_len;
    body += value_len < 0 ? 1 : varint_len(value_len) + value_len;
    return varint_len(body) + body;
}

static int
pending_size(PyObject *key, PyObject *value, PyObject *headers, Py_ssize_t *out)
{
    Py_ssize_t key_len = -1, value_len = -1, header_bytes = 0, header_count = 0, n;
    if (key != Py_None && (key_len = blob_len(key)) < 0) return -1;
    if (value != Py_None && (value_len = blob_len(value)) < 0) return -1;
    int truth = PyObject_IsTrue(headers);
    if (truth < 0) return -1;
    if (truth) {
        PyObject *it = PyObject_GetIter(headers), *item;
        if (it == NULL) return -1;
        while ((item = PyIter_Next(it)) != NULL) {
            PyObject *hk, *hv;
            int bad = header_pair(item, &hk, &hv);
            Py_DECREF(item);
            if (bad) {
                Py_DECREF(it);
                return -1;
            }
            Py_ssize_t klen;
            if (!PyUnicode_Check(hk) || PyUnicode_AsUTF8AndSize(hk, &klen) == NULL) {
                if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "a header key must be str");
                Py_DECREF(hk);
                Py_DECREF(hv);
                Py_DECREF(it);
                return -1;
            }
            n = hv == Py_None ? 0 : blob_len(hv);
            Py_DECREF(hk);
            Py_DECREF(hv);
            if (n < 0) {
                Py_DECREF(it);
                return -1;
            }
            header_bytes += varint_len(klen) + klen + (hv == Py_None ? 1 : varint_len(n) + n);
            header_count++;
        }
        Py_DECREF(it);
        if (PyErr_Occurred()) return -1;
    }
    *out = record_bound(key_len, value_len, header_bytes, header_count);
    return 0;
}

/* Now on both clocks for one clock read per record: CLOCK_MONOTONIC, and the wall clock (epoch
 * milliseconds, as int(time.time() * 1000)) through its offset from the monotonic one, read again
 * whenever the monotonic millisecond changes: a step of the wall clock shows within a millisecond. */
static void
clocks_now(int64_t *mono_ns, long long *epoch_ms)
{
    static int64_t offset_ns, offset_of_ms = -1;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t mono = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    if (mono / 1000000 != offset_of_ms) {
        clock_gettime(CLOCK_REALTIME, &ts);
        offset_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec - mono;
        offset_of_ms = mono / 1000000;
    }
    *mono_ns = mono;
    *epoch_ms = (long long)((mono + offset_ns) / 1000000);
}

/* The int of an epoch millisecond: the records of one millisecond share one (a thousand of them
 * at 1M records/s), and serve_delivered then makes one timestamp tuple for them all. */
static PyObject *
epoch_ms_int(long long ms)
{
    static long long last_ms = -1;
    static PyObject *last_int = NULL;
    if (ms != last_ms || last_int == NULL) {
        PyObject *made = PyLong_FromLongLong(ms);
        if (made == NULL) return NULL;
        Py_XSETREF(last_int, made);
        last_ms = ms;
    }
    return Py_NewRef(last_int);
}

static PyObject *
pending_make(PyTypeObject *type, PyObject *const *args)
{
    Py_ssize_t size;
    if (pending_size(args[2], args[3], args[4], &size) < 0) return NULL;
    PyObject *timestamp = args[5];
    int is_zero = PyLong_CheckExact(timestamp) && PyObject_Not(timestamp);
    if (is_zero) { /* 0: now */
        int64_t mono;
        long long ms;
        clocks_now(&mono, &ms);
        timestamp = epoch_ms_int(ms);
        if (timestamp == NULL) return NULL;
    } else {
        Py_INCREF(timestamp);
    }
    Pending *self = PyObject_New(Pending, type);
    if (self == NULL) {
        Py_DECREF(timestamp);
        return NULL;
    }
    PyObject **fields[9] = {&self->topic, &self->partition, &self->key, &self->value, &self->headers,
                            &self->timestamp, &self->callback, &self->future, &self->enqueued};
    for (int i = 0; i < 9; i++) {
        if (i != 5) Py_INCREF(args[i]);
        *fields[i] = i == 5 ? timestamp : args[i];
    }
    self->size = size;
    return (PyObject *)self;
}

static PyObject *
pending_vectorcall(PyObject *type, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames)) {
        PyErr_SetString(PyExc_TypeError, "PendingMessage() takes positional arguments only");
        return NULL;
    }
    if (nargs != 9) {
        PyErr_Format(PyExc_TypeError, "PendingMessage() takes 9 arguments (%zd given)", nargs);
        return NULL;
    }
    return pending_make((PyTypeObject *)type, args);
}

static PyObject *
pending_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs)) {
        PyErr_SetString(PyExc_TypeError, "PendingMessage() takes positional arguments only");
        return NULL;
    }
    if (PyTuple_GET_SIZE(args) != 9) {
        PyErr_Format(PyExc_TypeError, "PendingMessage() takes 9 arguments (%zd given)", PyTuple_GET_SIZE(args));
        return NULL;
    }
    return pending_make(type, &PyTuple_GET_ITEM(args, 0));
}

static void
pending_dealloc(Pending *self)
{
    Py_XDECREF(self->topic);
    Py_XDECREF(self->partition);
    Py_XDECREF(self->key);
    Py_XDECREF(self->value);
    Py_XDECREF(self->headers);
    Py_XDECREF(self->timestamp);
    Py_XDECREF(self->callback);
    Py_XDECREF(self->future);
    Py_XDECREF(self->enqueued);
    PyObject_Del(self);
}

#define PENDING_FIELD(name) {#name, T_OBJECT, offsetof(Pending, name), 0, NULL}
static PyMemberDef pending_members[] = {
    PENDING_FIELD(topic),
    PENDING_FIELD(partition),
    PENDING_FIELD(key),
    PENDING_FIELD(value),
    PENDING_FIELD(headers),
    PENDING_FIELD(timestamp),
    PENDING_FIELD(callback),
    PENDING_FIELD(future),
    PENDING_FIELD(enqueued),
    {"size", T_PYSSIZET, offsetof(Pending, size), 0, NULL},
    {NULL},
};

static PyTypeObject PendingType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "kafkawire._native.PendingMessage",
    .tp_doc = "One record between produce() and its delivery report.",
    .tp_basicsize = sizeof(Pending),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = pending_new,
    .tp_vectorcall = pending_vectorcall,
    .tp_dealloc = (destructor)pending_dealloc,
    .tp_members = pending_members,
};
