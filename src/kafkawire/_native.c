/*
 * kafkawire._native: the per-record loops of producing and consuming, in C.
 *
 * Each function here has a pure-Python twin that produces the same result (bytes for bytes,
 * field for field); kafkawire/native.py picks this module when it was built, and
 * tests/unit/test_native.py holds the two against each other.
 *
 *   PendingMessage   one record between produce() and its report (core/accumulator.py)
 *   MessageFields    Message's fields and accessors (model.py _MessageFields)
 *   encode_records   a record batch's records, v2 format (records/batch.py append_records)
 *   serve_delivered  the delivery reports of a delivered batch (producer.py DeliveredReports)
 *   tally_delivered  a delivered batch's bookkeeping (producer.py Producer._report_delivered)
 *   tally_shared     a batch reported in one call to a batch-aware callback (producer/delivery.py)
 *   decode_messages  a fetched batch's records as consumed Messages (consumer/decode.py)
 *   decode_columns   a fetched batch's records as Arrow buffers, headers included (consumer/arrow.py)
 *   ProduceLane      produce()'s common case (ProduceMethod); pending_from_dicts, pending_from_columns and
 *                    lane_queue: produce_batch() and the Arrow writer on the same lane (producer/engine.py;
 *                    their twin is the Python admission path)
 *   RLock            the producer engine's lock, threading.RLock's twin, which the lane takes from C
 *   BufferCounts     the counters the lane moves per record (core/buffer_counts.py)
 *
 * None of them keeps state between calls but serve_delivered's cache of Message's slot
 * descriptors; only encode_records lets the GIL go (while writing a large batch of plain records).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

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

/* ---- encode_records ------------------------------------------------------------------- */

typedef struct {
    char *data;
    Py_ssize_t len, cap;
    int fixed; /* memory of a bytearray sized beforehand: never grown here */
} Buf;

static int
buf_reserve(Buf *b, Py_ssize_t more)
{
    if (b->len + more <= b->cap) return 0;
    if (b->fixed) {
        PyErr_SetString(PyExc_RuntimeError, "a record changed size while being encoded");
        return -1;
    }
    Py_ssize_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + more) cap *= 2;
    char *data = PyMem_Realloc(b->data, cap);
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->data = data;
    b->cap = cap;
    return 0;
}

/* Kafka's varint/varlong: zigzag, then 7 bits a byte, low first. */
static int
varint_len(int64_t n)
{
    uint64_t z = ((uint64_t)n << 1) ^ (uint64_t)(n >> 63);
    int len = 1;
    while (z >= 0x80) {
        z >>= 7;
        len++;
    }
    return len;
}

static void
put_varint(Buf *b, int64_t n)
{
    uint64_t z = ((uint64_t)n << 1) ^ (uint64_t)(n >> 63);
    while (z >= 0x80) {
        b->data[b->len++] = (char)((z & 0x7f) | 0x80);
        z >>= 7;
    }
    b->data[b->len++] = (char)z;
}

static void
put_bytes(Buf *b, const void *p, Py_ssize_t n)
{
    if (n) memcpy(b->data + b->len, p, n);
    b->len += n;
}

/* A key, value or header value: its bytes, or none (length -1). ``held``: 0 none, 1 a buffer
 * view to release, 2 a bytes object's own storage (borrowed, nothing to release). */
typedef struct {
    Py_buffer view;
    int held;
} Field;

static int
field_get(PyObject *o, Field *f)
{
    f->held = 0;
    if (o == Py_None) return 0;
    if (PyBytes_CheckExact(o)) {
        f->view.buf = PyBytes_AS_STRING(o);
        f->view.len = PyBytes_GET_SIZE(o);
        f->held = 2;
        return 0;
    }
    if (PyObject_GetBuffer(o, &f->view, PyBUF_SIMPLE) < 0) return -1;
    f->held = 1;
    return 0;
}

static void
field_release(Field *f)
{
    if (f->held == 1) PyBuffer_Release(&f->view);
    f->held = 0;
}

static Py_ssize_t
field_wire_len(Field *f)
{
    return f->held ? varint_len(f->view.len) + f->view.len : 1;
}

static void
field_put(Buf *b, Field *f)
{
    if (f->held) {
        put_varint(b, f->view.len);
        put_bytes(b, f->view.buf, f->view.len);
    } else {
        put_varint(b, -1);
    }
}

/* A record's headers, encoded into ``out`` (varint count, then key and value of each). */
static int
encode_headers(PyObject *headers, Buf *out)
{
    PyObject *seq = PySequence_Fast(headers, "headers must be a sequence of (key, value) pairs");
    if (seq == NULL) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (buf_reserve(out, 10) < 0) goto fail;
    put_varint(out, n);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *hk, *hv;
        if (header_pair(PySequence_Fast_GET_ITEM(seq, i), &hk, &hv) < 0) goto fail;
        Py_ssize_t klen;
        const char *kdata = PyUnicode_Check(hk) ? PyUnicode_AsUTF8AndSize(hk, &klen) : NULL;
        if (kdata == NULL) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "a header key must be str");
            Py_DECREF(hk);
            Py_DECREF(hv);
            goto fail;
        }
        Field v;
        int bad = field_get(hv, &v) < 0 || buf_reserve(out, 10 + klen + field_wire_len(&v)) < 0;
        if (!bad) {
            put_varint(out, klen);
            put_bytes(out, kdata, klen);
            field_put(out, &v);
        }
        field_release(&v);
        Py_DECREF(hk);
        Py_DECREF(hv);
        if (bad) goto fail;
    }
    Py_DECREF(seq);
    return 0;
fail:
    Py_DECREF(seq);
    return -1;
}

/* One record, after ``*count`` others: its bytes written to ``out`` (NULL: only counted).
 * Returns the bytes it takes, or -1 with an exception set. */
static Py_ssize_t
encode_one(PyObject *rec, long long *count, long long *base, long long *top, Buf *hdr, Buf *out)
{
    PyObject *timestamp, *key, *value, *headers;
    if (Py_TYPE(rec) == &PendingType) {
        Pending *m = (Pending *)rec;
        timestamp = m->timestamp, key = m->key, value = m->value, headers = m->headers;
    } else if (PyTuple_Check(rec) && PyTuple_GET_SIZE(rec) == 4) {
        timestamp = PyTuple_GET_ITEM(rec, 0), key = PyTuple_GET_ITEM(rec, 1);
        value = PyTuple_GET_ITEM(rec, 2), headers = PyTuple_GET_ITEM(rec, 3);
    } else {
        PyErr_SetString(PyExc_TypeError, "a record must be a (timestamp_ms, key, value, headers) tuple");
        return -1;
    }
    long long ts = int64_of(timestamp);
    if (ts == -1 && PyErr_Occurred()) return -1;
    long long delta = 0;
    if (*count) {
        delta = ts - *base;
        if (ts > *top) *top = ts;
    } else {
        *base = *top = ts;
    }
    hdr->len = 0;
    int has_headers = headers == Py_None ? 0 : PyList_CheckExact(headers) ? PyList_GET_SIZE(headers) > 0 : PyObject_IsTrue(headers);
    if (has_headers < 0) return -1;
    if (has_headers && encode_headers(headers, hdr) < 0) return -1;
    Field k, v;
    if (field_get(key, &k) < 0) return -1;
    if (field_get(value, &v) < 0) {
        field_release(&k);
        return -1;
    }
    Py_ssize_t size = 1 + varint_len(delta) + varint_len(*count) + field_wire_len(&k) + field_wire_len(&v)
                      + (has_headers ? hdr->len : 1);
    Py_ssize_t total = varint_len(size) + size;
    if (out != NULL) {
        if (buf_reserve(out, total) < 0) {
            field_release(&k);
            field_release(&v);
            return -1;
        }
        put_varint(out, size);
        out->data[out->len++] = 0; /* record attributes */
        put_varint(out, delta);
        put_varint(out, *count);
        field_put(out, &k);
        field_put(out, &v);
        if (has_headers) {
            put_bytes(out, hdr->data, hdr->len);
        } else {
            out->data[out->len++] = 0; /* no headers */
        }
    }
    field_release(&k);
    field_release(&v);
    (*count)++;
    return total;
}

/* ---- encoding with the GIL let go ------------------------------------------------------
 *
 * The common batch (every record a PendingMessage of bytes or None, no headers) is encoded in two
 * steps: under the GIL, each record's timestamp and a reference to its key and value are taken
 * and the sizes counted; then, with the GIL let go when the batch is large, the bytes are written.
 * Meanwhile the application's thread produces: a Python process runs one thread at a time, and
 * this is the IO thread's largest share of work per record. The batch is the IO thread's alone by
 * then (out of the accumulator), its bytearray is written nowhere else, and the references keep
 * every key and value alive whatever happens to the records meanwhile. */

typedef struct {
    long long ts;
    PyObject *key, *value; /* new references: bytes or None */
} Plain;

/* Records of at least this many bytes are written without the GIL (below, letting it go and
 * waiting for it again costs more than it frees). */
#define UNLOCKED_ENCODE_BYTES (64 * 1024)

static Py_ssize_t
plain_blob_len(PyObject *o)
{
    return o == Py_None ? 1 : varint_len(PyBytes_GET_SIZE(o)) + PyBytes_GET_SIZE(o);
}

static void
plain_blob_put(Buf *b, PyObject *o)
{
    if (o == Py_None) {
        put_varint(b, -1);
    } else {
        put_varint(b, PyBytes_GET_SIZE(o));
        put_bytes(b, PyBytes_AS_STRING(o), PyBytes_GET_SIZE(o));
    }
}

/* The record's body size (after its length), as encode_one counts it. */
static Py_ssize_t
plain_size(const Plain *r, long long delta, long long index)
{
    return 1 + varint_len(delta) + varint_len(index) + plain_blob_len(r->key) + plain_blob_len(r->value) + 1;
}

/* No Python API: runs with the GIL let go. */
static void
plain_write(Buf *out, const Plain *recs, Py_ssize_t n, long long count, long long base)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        const Plain *r = &recs[i];
        long long index = count + i, delta = index ? r->ts - base : 0;
        put_varint(out, plain_size(r, delta, index));
        out->data[out->len++] = 0; /* record attributes */
        put_varint(out, delta);
        put_varint(out, index);
        plain_blob_put(out, r->key);
        plain_blob_put(out, r->value);
        out->data[out->len++] = 0; /* no headers */
    }
}

static void
plain_release(Plain *recs, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_DECREF(recs[i].key);
        Py_DECREF(recs[i].value);
    }
    PyMem_Free(recs);
}

/* The plain records of ``seq``, their timestamps and references taken: an array, or NULL when one
 * is not plain (the general path takes the call) or with an exception set. */
static Plain *
plain_take(PyObject *seq, Py_ssize_t n)
{
    Plain *recs = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(Plain));
    if (recs == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    Py_ssize_t i = 0;
    PyObject *const *items = PySequence_Fast_ITEMS(seq);
    for (; i < n; i++) {
        PyObject *item = items[i];
        PENDING_PREFETCH(items, i, n, 16, 8);
        if (Py_TYPE(item) != &PendingType) break;
        Pending *m = (Pending *)item;
        PyObject *key = m->key, *value = m->value, *headers = m->headers;
        if ((key != Py_None && !PyBytes_CheckExact(key)) || (value != Py_None && !PyBytes_CheckExact(value))) break;
        if (headers != Py_None && !(PyList_CheckExact(headers) && PyList_GET_SIZE(headers) == 0)) break;
        if (!PyLong_CheckExact(m->timestamp)) break;
        long long ts = int64_of(m->timestamp);
        if (ts == -1 && PyErr_Occurred()) break;
        recs[i].ts = ts;
        recs[i].key = Py_NewRef(key);
        recs[i].value = Py_NewRef(value);
    }
    if (i < n) {
        plain_release(recs, i);
        return NULL;
    }
    return recs;
}

/* encode_records(buf, records, count, base_timestamp, max_timestamp) -> (count, base, max)
 * Appends ``records`` ((timestamp_ms, key, value, headers) tuples, or PendingMessages) to the
 * bytearray ``buf``, after
 * ``count`` records. Two passes, the first counting, so that the records are written once, in
 * place: no growing buffer, no copy into a bytes object, no copy into ``buf``. */
static PyObject *
encode_records(PyObject *module, PyObject *args)
{
    PyObject *buf, *records;
    long long count, base, top;
    if (!PyArg_ParseTuple(args, "O!OLLL:encode_records", &PyByteArray_Type, &buf, &records, &count, &base, &top))
        return NULL;
    PyObject *seq = PySequence_Fast(records, "records must be a sequence");
    if (seq == NULL) return NULL;
    Buf hdr = {NULL, 0, 0, 0};
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq), total = 0, start = PyByteArray_GET_SIZE(buf);
    Plain *plain = plain_take(seq, n);
    if (plain != NULL) {
        for (Py_ssize_t i = 0; i < n; i++) {
            long long index = count + i;
            if (index == 0) base = top = plain[i].ts;
            else if (plain[i].ts > top) top = plain[i].ts;
            Py_ssize_t size = plain_size(&plain[i], index ? plain[i].ts - base : 0, index);
            total += varint_len(size) + size;
        }
        if (PyByteArray_Resize(buf, start + total) < 0) {
            plain_release(plain, n);
            goto fail;
        }
        Buf out = {PyByteArray_AS_STRING(buf) + start, 0, total, 1};
        if (total >= UNLOCKED_ENCODE_BYTES) {
            Py_BEGIN_ALLOW_THREADS
            plain_write(&out, plain, n, count, base);
            Py_END_ALLOW_THREADS
        } else {
            plain_write(&out, plain, n, count, base);
        }
        plain_release(plain, n);
        Py_DECREF(seq);
        return Py_BuildValue("(LLL)", count + n, base, top);
    }
    if (PyErr_Occurred()) goto fail;
    long long c = count, b = base, t = top;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t len = encode_one(PySequence_Fast_GET_ITEM(seq, i), &c, &b, &t, &hdr, NULL);
        if (len < 0) goto fail;
        total += len;
    }
    if (PyByteArray_Resize(buf, start + total) < 0) goto fail;
    Buf out = {PyByteArray_AS_STRING(buf) + start, 0, total, 1};
    for (Py_ssize_t i = 0; i < n; i++) {
        if (encode_one(PySequence_Fast_GET_ITEM(seq, i), &count, &base, &top, &hdr, &out) < 0) {
            PyByteArray_Resize(buf, start); /* as it was: nothing appended */
            goto fail;
        }
    }
    Py_DECREF(seq);
    PyMem_Free(hdr.data);
    return Py_BuildValue("(LLL)", count, base, top);
fail:
    Py_DECREF(seq);
    PyMem_Free(hdr.data);
    return NULL;
}

/* ---- MessageFields ------------------------------------------------------------------ */

/* The base of model.Message: its eleven fields as slots and their accessors, in C as
 * confluent-kafka's Message is (an accessor called per consumed record costs a Python frame in
 * the twin). Fields hold any object; an accessor of a field never set raises AttributeError, as
 * the twin's slots do. Everything with a rule (constructor, setters, pickling) stays in Python. */
typedef struct {
    PyObject_HEAD
    PyObject *topic, *partition, *offset, *key, *value, *headers, *timestamp, *error, *latency, *leader_epoch,
        *delivery_count;
} MessageFields;

#define MF_FIELDS(X) X(topic) X(partition) X(offset) X(key) X(value) X(headers) X(timestamp) X(error) X(latency) \
    X(leader_epoch) X(delivery_count)

static int
mf_traverse(MessageFields *self, visitproc visit, void *arg)
{
#define MF_VISIT(name) Py_VISIT(self->name);
    MF_FIELDS(MF_VISIT)
    return 0;
}

static int
mf_clear(MessageFields *self)
{
#define MF_CLEAR(name) Py_CLEAR(self->name);
    MF_FIELDS(MF_CLEAR)
    return 0;
}

static void
mf_dealloc(MessageFields *self)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    mf_clear(self);
    type->tp_free((PyObject *)self);
}

#define MF_GETTER(name)                                                                \
    static PyObject *mf_##name(MessageFields *self, PyObject *Py_UNUSED(ignored))      \
    {                                                                                  \
        if (self->name == NULL) {                                                      \
            PyErr_SetString(PyExc_AttributeError, "_" #name);                          \
            return NULL;                                                               \
        }                                                                              \
        return Py_NewRef(self->name);                                                  \
    }
MF_FIELDS(MF_GETTER)

static PyMethodDef mf_methods[] = {
#define MF_METHOD(name) {#name, (PyCFunction)mf_##name, METH_NOARGS, NULL},
    MF_FIELDS(MF_METHOD){NULL, NULL, 0, NULL},
};

static PyMemberDef mf_members[] = {
#define MF_MEMBER(name) {"_" #name, T_OBJECT_EX, offsetof(MessageFields, name), 0, NULL},
    MF_FIELDS(MF_MEMBER){NULL, 0, 0, 0, NULL},
};

static PyTypeObject MessageFieldsType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "kafkawire._native.MessageFields",
    .tp_basicsize = sizeof(MessageFields),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Message's fields and their accessors (model.py).",
    .tp_traverse = (traverseproc)mf_traverse,
    .tp_clear = (inquiry)mf_clear,
    .tp_dealloc = (destructor)mf_dealloc,
    .tp_methods = mf_methods,
    .tp_members = mf_members,
    .tp_new = PyType_GenericNew,
};

/* ---- serve_delivered ----------------------------------------------------------------- */

/* Message's slots: written straight at their offsets when they are plain slots (member
 * descriptors, as ``__slots__`` makes them), else through their descriptors. */
enum { M_TOPIC, M_PARTITION, M_OFFSET, M_KEY, M_VALUE, M_HEADERS, M_TIMESTAMP, M_ERROR, M_LATENCY, M_LEADER_EPOCH,
       M_DELIVERY_COUNT, M_SLOTS };
static const char *slot_names[M_SLOTS] = {"_topic", "_partition", "_offset", "_key", "_value", "_headers",
                                          "_timestamp", "_error", "_latency", "_leader_epoch", "_delivery_count"};
static PyObject *cached_type = NULL;
static PyObject *cached_slots[M_SLOTS];
static Py_ssize_t cached_offsets[M_SLOTS]; /* -1: not a plain slot */

static int
message_slots(PyObject *type)
{
    if (type == cached_type) return 0;
    if (!PyType_Check(type)) {
        PyErr_SetString(PyExc_TypeError, "message_type must be a class");
        return -1;
    }
    PyObject *found[M_SLOTS];
    for (int i = 0; i < M_SLOTS; i++) {
        found[i] = PyObject_GetAttrString(type, slot_names[i]);
        if (found[i] == NULL || Py_TYPE(found[i])->tp_descr_set == NULL) {
            if (found[i] != NULL) PyErr_Format(PyExc_TypeError, "%s is not a slot", slot_names[i]);
            for (int j = 0; j <= i; j++) Py_XDECREF(found[j]);
            return -1;
        }
    }
    for (int i = 0; i < M_SLOTS; i++) {
        if (cached_type != NULL) Py_DECREF(cached_slots[i]);
        cached_slots[i] = found[i];
        PyMemberDef *member = Py_IS_TYPE(found[i], &PyMemberDescr_Type) ? ((PyMemberDescrObject *)found[i])->d_member : NULL;
        cached_offsets[i] = member != NULL && member->type == T_OBJECT_EX && !(member->flags & READONLY) ? member->offset : -1;
    }
    Py_INCREF(type);
    Py_XSETREF(cached_type, type);
    return 0;
}

static inline int
set_slot(PyObject *obj, int slot, PyObject *value)
{
    Py_ssize_t offset = cached_offsets[slot];
    if (offset >= 0) {
        Py_XSETREF(*(PyObject **)((char *)obj + offset), Py_NewRef(value));
        return 0;
    }
    PyObject *d = cached_slots[slot];
    return Py_TYPE(d)->tp_descr_set(d, obj, value);
}

/* Whether a report of these fields can be left untracked: none of them is a container that could
 * lead back to it (headers None; a timestamp tuple of two non-containers). Partition, offset and
 * latency are ints, floats or None by construction. */
static inline int
report_atomic(PyObject *topic, PyObject *key, PyObject *value, PyObject *headers, PyObject *timestamp)
{
    if (headers != Py_None || PyObject_IS_GC(topic) || PyObject_IS_GC(key) || PyObject_IS_GC(value)) return 0;
    if (!PyObject_IS_GC(timestamp)) return 1;
    return PyTuple_CheckExact(timestamp) && PyTuple_GET_SIZE(timestamp) == 2
           && !PyObject_IS_GC(PyTuple_GET_ITEM(timestamp, 0)) && !PyObject_IS_GC(PyTuple_GET_ITEM(timestamp, 1));
}

/* serve_delivered(messages, start, base_offset, log_append, create_time, now, message_type, overhead)
 *   -> (next, served, charge, exception or None)
 * Runs the callback of each record from ``start`` on, with a new ``message_type`` report made
 * as DeliveredReports makes it; stops at the first exception, which is returned, not raised,
 * with how far it got, so that the caller keeps its books whatever happened. */
static PyObject *
serve_delivered(PyObject *module, PyObject *args)
{
    PyObject *messages, *log_append, *create_time, *type;
    Py_ssize_t start;
    long long base, overhead;
    double now;
    if (!PyArg_ParseTuple(args, "O!nLOOdOL:serve_delivered", &PyList_Type, &messages, &start, &base, &log_append,
                          &create_time, &now, &type, &overhead))
        return NULL;
    if (message_slots(type) < 0) return NULL;
    PyTypeObject *mtype = (PyTypeObject *)type;
    Py_ssize_t i = start, served = 0;
    long long charge = 0;
    PyObject *stamp_of = NULL, *stamp = NULL; /* the last timestamp tuple made, and its record's int */
    Py_INCREF(messages);
    while (i < PyList_GET_SIZE(messages)) {
        PyObject *item = PyList_GET_ITEM(messages, i);
        PENDING_PREFETCH(((PyListObject *)messages)->ob_item, i, PyList_GET_SIZE(messages), 8, 4);
        i++;
        if (Py_TYPE(item) != &PendingType) {
            PyErr_SetString(PyExc_TypeError, "serve_delivered takes native PendingMessages");
            break;
        }
        Pending *m = (Pending *)item;
        if (m->callback == NULL || m->callback == Py_None) continue;
        Py_INCREF(m);
        PyObject *report = mtype->tp_alloc(mtype, 0);
        PyObject *offset = NULL, *timestamp = NULL, *latency = NULL, *result = NULL;
        if (report == NULL) goto failed;
        offset = base >= 0 ? PyLong_FromLongLong(base + i - 1) : Py_NewRef(Py_None);
        if (offset == NULL) goto failed;
        if (log_append != Py_None) {
            timestamp = Py_NewRef(log_append);
        } else if (stamp != NULL && m->timestamp == stamp_of) {
            timestamp = Py_NewRef(stamp);
        } else {
            timestamp = PyTuple_Pack(2, create_time, m->timestamp);
            if (timestamp == NULL) goto failed;
            if (!PyObject_IS_GC(create_time) && !PyObject_IS_GC(m->timestamp))
                PyObject_GC_UnTrack(timestamp); /* two ints: no cycle */
            Py_XSETREF(stamp, Py_NewRef(timestamp));
            stamp_of = m->timestamp; /* compared by identity only while ``stamp`` holds it */
        }
        double waited = now - PyFloat_AsDouble(m->enqueued);
        if (waited == -1.0 && PyErr_Occurred()) goto failed;
        latency = waited >= 0 ? PyFloat_FromDouble(waited) : Py_NewRef(Py_None);
        if (latency == NULL) goto failed;
        if (set_slot(report, M_TOPIC, m->topic) < 0 || set_slot(report, M_PARTITION, m->partition) < 0
            || set_slot(report, M_OFFSET, offset) < 0 || set_slot(report, M_KEY, m->key) < 0
            || set_slot(report, M_VALUE, m->value) < 0 || set_slot(report, M_HEADERS, m->headers) < 0
            || set_slot(report, M_TIMESTAMP, timestamp) < 0 || set_slot(report, M_ERROR, Py_None) < 0
            || set_slot(report, M_LATENCY, latency) < 0 || set_slot(report, M_LEADER_EPOCH, Py_None) < 0
            || set_slot(report, M_DELIVERY_COUNT, Py_None) < 0)
            goto failed;
        /* Untracked as decode_messages leaves a consumed record, for the same reason: an
         * AIOProducer keeps a report per pending future (100,000s), and every full collection
         * walked each one and its fields (1.9 of 5.4 CPU us per record in kafkawire-aio). */
        if (report_atomic(m->topic, m->key, m->value, m->headers, timestamp)) PyObject_GC_UnTrack(report);
        served++;
        charge += 2 * (long long)m->size + overhead;
        PyObject *cb_args[2] = {Py_None, report};
        result = PyObject_Vectorcall(m->callback, cb_args, 2, NULL);
    failed:
        Py_XDECREF(report);
        Py_XDECREF(offset);
        Py_XDECREF(timestamp);
        Py_XDECREF(latency);
        Py_DECREF(m);
        if (result == NULL) break;
        Py_DECREF(result);
    }
    Py_DECREF(messages);
    Py_XDECREF(stamp);
    PyObject *exc = Py_None;
    if (PyErr_Occurred()) {
        PyObject *ptype, *pvalue, *ptb;
        PyErr_Fetch(&ptype, &pvalue, &ptb);
        PyErr_NormalizeException(&ptype, &pvalue, &ptb);
        if (ptb != NULL) PyException_SetTraceback(pvalue, ptb);
        Py_XDECREF(ptype);
        Py_XDECREF(ptb);
        return Py_BuildValue("(nnLN)", i, served, charge, pvalue);
    }
    return Py_BuildValue("(nnLO)", i, served, charge, exc);
}

/* ---- tally_delivered ----------------------------------------------------------------- */

/* tally_delivered(messages, overhead) -> (value_bytes, without_callback, their_charge, with_future)
 * The bookkeeping of a delivered batch, in one pass: its value bytes (statistics), the records
 * that have no callback and the buffer charge they free now, and the indexes of those with a
 * future to complete. */
static PyObject *
tally_delivered(PyObject *module, PyObject *args)
{
    PyObject *messages;
    long long overhead;
    if (!PyArg_ParseTuple(args, "O!L:tally_delivered", &PyList_Type, &messages, &overhead)) return NULL;
    long long value_bytes = 0, charge = 0;
    Py_ssize_t freed = 0;
    PyObject *futures = PyList_New(0);
    if (futures == NULL) return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(messages); i++) {
        PyObject *item = PyList_GET_ITEM(messages, i);
        PENDING_PREFETCH(((PyListObject *)messages)->ob_item, i, PyList_GET_SIZE(messages), 16, 8);
        if (Py_TYPE(item) != &PendingType) {
            Py_DECREF(futures);
            PyErr_SetString(PyExc_TypeError, "tally_delivered takes native PendingMessages");
            return NULL;
        }
        Pending *m = (Pending *)item;
        if (m->value != Py_None) {
            Py_ssize_t n = blob_len(m->value);
            if (n < 0) {
                Py_DECREF(futures);
                return NULL;
            }
            value_bytes += n;
        }
        if (m->future != NULL && m->future != Py_None) {
            PyObject *index = PyLong_FromSsize_t(i);
            if (index == NULL || PyList_Append(futures, index) < 0) {
                Py_XDECREF(index);
                Py_DECREF(futures);
                return NULL;
            }
            Py_DECREF(index);
        }
        if (m->callback == NULL || m->callback == Py_None) {
            freed++;
            charge += 2 * (long long)m->size + overhead;
        }
    }
    return Py_BuildValue("(LnLN)", value_bytes, freed, charge, futures);
}

/* ---- tally_shared -------------------------------------------------------------------- */

/* tally_shared(messages, callback, overhead) -> (value_bytes, charge) or None
 * A batch whose every record has ``callback``, no future and one topic and partition, as one
 * report sees it: its value bytes (statistics) and the buffer charge of all its records; None
 * when one record differs (its reports are then made per record). */
static PyObject *
tally_shared(PyObject *module, PyObject *args)
{
    PyObject *messages, *callback;
    long long overhead;
    if (!PyArg_ParseTuple(args, "O!OL:tally_shared", &PyList_Type, &messages, &callback, &overhead)) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(messages);
    if (n == 0) Py_RETURN_NONE;
    long long value_bytes = 0, charge = 0;
    Pending *first = (Pending *)PyList_GET_ITEM(messages, 0);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyList_GET_ITEM(messages, i);
        PENDING_PREFETCH(((PyListObject *)messages)->ob_item, i, n, 16, 8);
        if (Py_TYPE(item) != &PendingType) {
            PyErr_SetString(PyExc_TypeError, "tally_shared takes native PendingMessages");
            return NULL;
        }
        Pending *m = (Pending *)item;
        if (m->callback != callback || (m->future != NULL && m->future != Py_None)) Py_RETURN_NONE;
        int same = m->topic == first->topic ? 1 : PyObject_RichCompareBool(m->topic, first->topic, Py_EQ);
        if (same == 1 && m->partition != first->partition)
            same = PyObject_RichCompareBool(m->partition, first->partition, Py_EQ);
        if (same < 0) return NULL;
        if (!same) Py_RETURN_NONE;
        if (m->value != Py_None) {
            Py_ssize_t len = blob_len(m->value);
            if (len < 0) return NULL;
            value_bytes += len;
        }
        charge += 2 * (long long)m->size + overhead;
    }
    return Py_BuildValue("(LL)", value_bytes, charge);
}

/* ---- decode_messages ----------------------------------------------------------------- */

/* A zigzag varint of at most ``max_bytes`` bytes (5: int32, 10: int64), as
 * protocol/primitives.py reads it; -1 when it runs past ``end`` or is too long. */
static int
read_zigzag(const unsigned char *buf, Py_ssize_t end, Py_ssize_t *pos, int max_bytes, int64_t *out)
{
    uint64_t raw = 0;
    for (int i = 0; i < max_bytes; i++) {
        if (*pos >= end) return -1;
        unsigned char b = buf[(*pos)++];
        raw |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            if (max_bytes == 5 && raw > 0xFFFFFFFFULL) return -1;
            *out = (int64_t)(raw >> 1) ^ -(int64_t)(raw & 1);
            return 0;
        }
    }
    return -1;
}

/* A varint-length-prefixed byte string ending by ``end`` (-1: None), as a new bytes object. */
static PyObject *
read_bytes(const unsigned char *buf, Py_ssize_t end, Py_ssize_t *pos)
{
    int64_t length;
    if (read_zigzag(buf, end, pos, 5, &length) < 0) return NULL;
    if (length < 0) {
        if (length != -1) return NULL;
        return Py_NewRef(Py_None);
    }
    if (length > end - *pos) return NULL;
    PyObject *out = PyBytes_FromStringAndSize((const char *)buf + *pos, (Py_ssize_t)length);
    *pos += (Py_ssize_t)length;
    return out;
}

/* Past a varint-length-prefixed byte string (or null) ending by ``end``; -1 when malformed. */
static int
skip_bytes(const unsigned char *buf, Py_ssize_t end, Py_ssize_t *pos)
{
    int64_t length;
    if (read_zigzag(buf, end, pos, 5, &length) < 0 || length < -1 || length > end - *pos) return -1;
    if (length > 0) *pos += (Py_ssize_t)length;
    return 0;
}

/* Past a record's key, value and headers, checked as read_bytes/read_headers would check them
 * (a record skipped below min_offset is refused when malformed, as the Python twin refuses it). */
static int
skip_record_fields(const unsigned char *buf, Py_ssize_t end, Py_ssize_t *pos)
{
    int64_t count;
    if (skip_bytes(buf, end, pos) < 0 || skip_bytes(buf, end, pos) < 0) return -1;
    if (read_zigzag(buf, end, pos, 5, &count) < 0 || count < 0 || count > (end - *pos) / 2) return -1;
    for (int64_t i = 0; i < count; i++) {
        int64_t klen;
        if (read_zigzag(buf, end, pos, 5, &klen) < 0 || klen < 0 || klen > end - *pos) return -1;
        *pos += (Py_ssize_t)klen;
        if (skip_bytes(buf, end, pos) < 0) return -1;
    }
    return *pos == end ? 0 : -1;
}

static PyObject *
read_headers(const unsigned char *buf, Py_ssize_t end, Py_ssize_t *pos)
{
    int64_t count;
    if (read_zigzag(buf, end, pos, 5, &count) < 0 || count < 0 || count > (end - *pos) / 2) return NULL;
    if (count == 0) return Py_NewRef(Py_None);
    PyObject *headers = PyList_New((Py_ssize_t)count);
    if (headers == NULL) return NULL;
    for (Py_ssize_t i = 0; i < count; i++) {
        int64_t klen;
        if (read_zigzag(buf, end, pos, 5, &klen) < 0 || klen < 0 || klen > end - *pos) goto fail;
        PyObject *key = PyUnicode_DecodeUTF8((const char *)buf + *pos, (Py_ssize_t)klen, "replace");
        if (key == NULL) goto fail;
        *pos += (Py_ssize_t)klen;
        PyObject *value = read_bytes(buf, end, pos);
        if (value == NULL) {
            Py_DECREF(key);
            goto fail;
        }
        PyObject *pair = PyTuple_Pack(2, key, value);
        Py_DECREF(key);
        Py_DECREF(value);
        if (pair == NULL) goto fail;
        PyObject_GC_UnTrack(pair); /* a str and a bytes: no cycle can pass through it */
        PyList_SET_ITEM(headers, i, pair);
    }
    return headers;
fail:
    Py_DECREF(headers);
    return NULL;
}

/* decode_messages(body, pos, end, count, base_offset, base_timestamp, log_append_time, min_offset,
 *                 topic, partition, timestamp_type, leader_epoch, message_type[, stop_offset]) -> list
 * The ``count`` records of a v2 batch body in ``body[pos:end]``, those at ``min_offset`` or later
 * and before ``stop_offset`` (a slice of a batch too large for the consumer's room), each as a
 * consumed ``message_type`` (latency, error and delivery count None); None when the bytes are
 * malformed (the caller raises DecodeError). log_append_time < 0: CreateTime. */
static PyObject *
decode_messages(PyObject *module, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t pos, end, count;
    long long base_offset, base_timestamp, log_append, min_offset, stop_offset = LLONG_MAX;
    PyObject *topic, *partition, *ts_type, *epoch, *type;
    if (!PyArg_ParseTuple(args, "y*nnnLLLLOOOOO|L:decode_messages", &view, &pos, &end, &count, &base_offset,
                          &base_timestamp, &log_append, &min_offset, &topic, &partition, &ts_type, &epoch, &type,
                          &stop_offset))
        return NULL;
    PyObject *out = NULL, *last_stamp = NULL;
    long long last_when = 0;
    if (message_slots(type) < 0) goto done;
    if (pos < 0 || end > view.len || pos > end || count < 0) goto malformed;
    PyTypeObject *mtype = (PyTypeObject *)type;
    const unsigned char *buf = (const unsigned char *)view.buf;
    out = PyList_New(0);
    if (out == NULL) goto done;
    for (Py_ssize_t i = 0; i < count; i++) {
        int64_t length, ts_delta, offset_delta;
        if (read_zigzag(buf, end, &pos, 5, &length) < 0 || length < 6 || length > end - pos) goto malformed;
        Py_ssize_t record_end = pos + (Py_ssize_t)length;
        pos += 1; /* attributes */
        if (read_zigzag(buf, record_end, &pos, 10, &ts_delta) < 0) goto malformed;
        if (read_zigzag(buf, record_end, &pos, 5, &offset_delta) < 0) goto malformed;
        long long offset = base_offset + offset_delta;
        if (offset < min_offset || offset >= stop_offset) {
            if (skip_record_fields(buf, record_end, &pos) < 0) goto malformed;
            continue;
        }
        PyObject *key = read_bytes(buf, record_end, &pos);
        if (key == NULL) goto malformed;
        PyObject *value = read_bytes(buf, record_end, &pos);
        if (value == NULL) {
            Py_DECREF(key);
            goto malformed;
        }
        PyObject *headers = read_headers(buf, record_end, &pos);
        if (headers == NULL || pos != record_end) {
            Py_DECREF(key);
            Py_DECREF(value);
            Py_XDECREF(headers);
            goto malformed;
        }
        PyObject *m = mtype->tp_alloc(mtype, 0);
        PyObject *off = PyLong_FromLongLong(offset);
        long long when = log_append >= 0 ? log_append : base_timestamp + ts_delta;
        if (last_stamp == NULL || when != last_when) { /* records of a batch mostly share one: one tuple */
            PyObject *ts = PyLong_FromLongLong(when);
            Py_XSETREF(last_stamp, ts == NULL ? NULL : PyTuple_Pack(2, ts_type, ts));
            Py_XDECREF(ts);
            if (last_stamp != NULL) PyObject_GC_UnTrack(last_stamp); /* an int and an int: no cycle */
            last_when = when;
        }
        PyObject *stamp = Py_XNewRef(last_stamp);
        int bad = m == NULL || off == NULL || stamp == NULL;
        if (!bad)
            bad = set_slot(m, M_TOPIC, topic) < 0 || set_slot(m, M_PARTITION, partition) < 0
                  || set_slot(m, M_OFFSET, off) < 0 || set_slot(m, M_KEY, key) < 0 || set_slot(m, M_VALUE, value) < 0
                  || set_slot(m, M_HEADERS, headers) < 0 || set_slot(m, M_TIMESTAMP, stamp) < 0
                  || set_slot(m, M_ERROR, Py_None) < 0 || set_slot(m, M_LATENCY, Py_None) < 0
                  || set_slot(m, M_LEADER_EPOCH, epoch) < 0 || set_slot(m, M_DELIVERY_COUNT, Py_None) < 0
                  || PyList_Append(out, m) < 0;
        if (!bad) {
            /* Out of the cycle collector's sight, as CPython untracks a tuple or dict of atomic values:
             * a consumed record's fields cannot reach it back. Without this, a prefetch of 100,000s of
             * messages is walked by every collection their own allocation triggers (40% of a
             * consume() loop's CPU). A message with headers (a list) stays tracked; Message's setters
             * track it again (track() below) before it can hold anything else. */
            if (headers == Py_None) PyObject_GC_UnTrack(m);
        }
        Py_DECREF(key);
        Py_DECREF(value);
        Py_DECREF(headers);
        Py_XDECREF(off);
        Py_XDECREF(stamp);
        Py_XDECREF(m);
        if (bad) {
            Py_CLEAR(out);
            goto done;
        }
    }
    if (pos != end) goto malformed;
    goto done;
malformed:
    Py_CLEAR(out);
    if (!PyErr_Occurred()) out = Py_NewRef(Py_None); /* else a MemoryError: raised */
done:
    Py_XDECREF(last_stamp);
    PyBuffer_Release(&view);
    return out;
}

/* ---- decode_columns ------------------------------------------------------------------ */

/* One binary column being filled: int32 offsets, the bytes, a validity bitmap (nulls). Keys and
 * values are sized for the whole batch up front; headers' columns grow (column_reserve). */
typedef struct {
    PyObject *offsets, *data, *valid;
    int32_t *off;
    char *bytes;
    unsigned char *bits;
    Py_ssize_t used, rows_cap, bytes_cap;
    int nulls;
} BinaryColumn;

static int
column_init(BinaryColumn *c, Py_ssize_t count, Py_ssize_t max_bytes)
{
    c->offsets = PyBytes_FromStringAndSize(NULL, (count + 1) * 4);
    c->data = PyBytes_FromStringAndSize(NULL, max_bytes);
    c->valid = PyBytes_FromStringAndSize(NULL, (count + 7) / 8);
    if (c->offsets == NULL || c->data == NULL || c->valid == NULL) return -1;
    c->off = (int32_t *)PyBytes_AS_STRING(c->offsets);
    c->bytes = PyBytes_AS_STRING(c->data);
    c->bits = (unsigned char *)PyBytes_AS_STRING(c->valid);
    memset(c->bits, 0xff, (count + 7) / 8);
    c->off[0] = 0;
    c->used = 0;
    c->rows_cap = count;
    c->bytes_cap = max_bytes;
    c->nulls = 0;
    return 0;
}

/* column_reserve's slow path: capacities doubled (or more) until row ``row`` and ``bytes`` fit. */
static int
column_grow(BinaryColumn *c, Py_ssize_t row, Py_ssize_t bytes)
{
    if (row >= c->rows_cap) {
        Py_ssize_t cap = c->rows_cap * 2 + 16 > row + 1 ? c->rows_cap * 2 + 16 : row + 1, had = (c->rows_cap + 7) / 8;
        if (_PyBytes_Resize(&c->offsets, (cap + 1) * 4) < 0 || _PyBytes_Resize(&c->valid, (cap + 7) / 8) < 0) return -1;
        c->off = (int32_t *)PyBytes_AS_STRING(c->offsets);
        c->bits = (unsigned char *)PyBytes_AS_STRING(c->valid);
        memset(c->bits + had, 0xff, (size_t)((cap + 7) / 8 - had));
        c->rows_cap = cap;
    }
    if (bytes > c->bytes_cap - c->used) {
        Py_ssize_t cap = c->bytes_cap * 2 > c->used + bytes ? c->bytes_cap * 2 : c->used + bytes;
        if (_PyBytes_Resize(&c->data, cap) < 0) return -1;
        c->bytes = PyBytes_AS_STRING(c->data);
        c->bytes_cap = cap;
    }
    return 0;
}

/* Room for row ``row`` holding ``bytes`` more bytes. */
static inline int
column_reserve(BinaryColumn *c, Py_ssize_t row, Py_ssize_t bytes)
{
    return row < c->rows_cap && bytes <= c->bytes_cap - c->used ? 0 : column_grow(c, row, bytes);
}

static void
column_clear(BinaryColumn *c)
{
    Py_CLEAR(c->offsets);
    Py_CLEAR(c->data);
    Py_CLEAR(c->valid);
}

/* Append the next varint-length-prefixed field (-1: null) as row ``row``. */
static int
column_append(BinaryColumn *c, Py_ssize_t row, const unsigned char *buf, Py_ssize_t end, Py_ssize_t *pos)
{
    int64_t length;
    if (read_zigzag(buf, end, pos, 5, &length) < 0) return -1;
    if (length < 0) {
        if (length != -1 || column_reserve(c, row, 0) < 0) return -1;
        c->bits[row / 8] &= (unsigned char)~(1u << (row % 8));
        c->nulls++;
    } else {
        if (length > end - *pos || column_reserve(c, row, (Py_ssize_t)length) < 0) return -1;
        memcpy(c->bytes + c->used, buf + *pos, (size_t)length);
        c->used += (Py_ssize_t)length;
        *pos += (Py_ssize_t)length;
    }
    c->off[row + 1] = (int32_t)c->used;
    return 0;
}

/* Down to ``rows`` rows and the bytes used (a grown column's buffers hold no spare room). */
static int
column_trim(BinaryColumn *c, Py_ssize_t rows)
{
    return _PyBytes_Resize(&c->offsets, (rows + 1) * 4) < 0 || _PyBytes_Resize(&c->valid, (rows + 7) / 8) < 0
                   || _PyBytes_Resize(&c->data, c->used) < 0
               ? -1
               : 0;
}

/* Append a header key as row ``row`` of a string column: its UTF-8 bytes, undecodable ones
 * replaced as bytes.decode("utf-8", "replace") replaces them (keys are almost always ASCII). */
static int
column_append_text(BinaryColumn *c, Py_ssize_t row, const unsigned char *text, Py_ssize_t length)
{
    PyObject *decoded = NULL;
    const char *bytes = (const char *)text;
    for (Py_ssize_t i = 0; i < length; i++) {
        if (text[i] & 0x80) {
            decoded = PyUnicode_DecodeUTF8((const char *)text, length, "replace");
            if (decoded == NULL || (bytes = PyUnicode_AsUTF8AndSize(decoded, &length)) == NULL) {
                Py_XDECREF(decoded);
                return -1;
            }
            break;
        }
    }
    int failed = column_reserve(c, row, length);
    if (!failed) {
        memcpy(c->bytes + c->used, bytes, (size_t)length);
        c->used += length;
        c->off[row + 1] = (int32_t)c->used;
    }
    Py_XDECREF(decoded);
    return failed;
}

/* decode_columns(body, pos, end, count, base_offset, base_timestamp, log_append_time, min_offset)
 *   -> (rows, offsets, timestamps, key_valid, key_offsets, key_data, value_valid, value_offsets,
 *       value_data, headers_valid, headers_offsets, header_count, header_key_offsets,
 *       header_key_data, header_value_valid, header_value_offsets, header_value_data),
 *      or None when the bytes are malformed
 * The records at ``min_offset`` or later as Arrow buffers (little-endian int64 offsets and
 * timestamps; binary keys and values: validity bitmap or None without nulls, int32 offsets,
 * data; headers: a list per record (null without headers: validity, int32 offsets into the
 * headers) of (string key, binary value) structs): a columnar hand-over with no Python object
 * per record. */
static PyObject *
decode_columns(PyObject *module, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t pos, end, count;
    long long base_offset, base_timestamp, log_append, min_offset;
    if (!PyArg_ParseTuple(args, "y*nnnLLLL:decode_columns", &view, &pos, &end, &count, &base_offset, &base_timestamp,
                          &log_append, &min_offset))
        return NULL;
    PyObject *out = NULL, *offsets = NULL, *stamps = NULL;
    BinaryColumn keys = {0}, values = {0}, lists = {0}, header_keys = {0}, header_values = {0};
    if (pos < 0 || end > view.len || pos > end || count < 0 || count > (end - pos) / 7) goto malformed;
    const unsigned char *buf = (const unsigned char *)view.buf;
    offsets = PyBytes_FromStringAndSize(NULL, count * 8);
    stamps = PyBytes_FromStringAndSize(NULL, count * 8);
    if (offsets == NULL || stamps == NULL || column_init(&keys, count, end - pos) < 0
        || column_init(&values, count, end - pos) < 0 || column_init(&lists, count, 0) < 0
        || column_init(&header_keys, 0, 0) < 0 || column_init(&header_values, 0, 0) < 0)
        goto done;
    int64_t *off = (int64_t *)PyBytes_AS_STRING(offsets), *ts = (int64_t *)PyBytes_AS_STRING(stamps);
    Py_ssize_t rows = 0, headers = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        int64_t length, ts_delta, offset_delta, nheaders;
        if (read_zigzag(buf, end, &pos, 5, &length) < 0 || length < 6 || length > end - pos) goto malformed;
        Py_ssize_t record_end = pos + (Py_ssize_t)length;
        pos += 1; /* attributes */
        if (read_zigzag(buf, record_end, &pos, 10, &ts_delta) < 0) goto malformed;
        if (read_zigzag(buf, record_end, &pos, 5, &offset_delta) < 0) goto malformed;
        if (base_offset + offset_delta < min_offset) {
            if (skip_record_fields(buf, record_end, &pos) < 0) goto malformed;
            continue;
        }
        if (column_append(&keys, rows, buf, record_end, &pos) < 0) goto malformed;
        if (column_append(&values, rows, buf, record_end, &pos) < 0) goto malformed;
        if (read_zigzag(buf, record_end, &pos, 5, &nheaders) < 0 || nheaders < 0 || nheaders > (record_end - pos) / 2)
            goto malformed;
        if (nheaders == 0) { /* null, as the connector's includeHeaders gives a record without headers */
            lists.bits[rows / 8] &= (unsigned char)~(1u << (rows % 8));
            lists.nulls++;
        }
        if (nheaders > 0 && header_keys.rows_cap == 0) { /* the first headers: room as if every record had as many */
            Py_ssize_t left = end - pos, rows_left = count - i; /* within what the bytes left can hold */
            Py_ssize_t room = (Py_ssize_t)nheaders < left / 2 / rows_left ? (Py_ssize_t)nheaders * rows_left : left / 2;
            Py_ssize_t bytes = record_end - pos < left / rows_left ? (record_end - pos) * rows_left : left;
            if (column_grow(&header_keys, room - 1, bytes) < 0 || column_grow(&header_values, room - 1, bytes) < 0)
                goto malformed;
        }
        for (int64_t h = 0; h < nheaders; h++, headers++) {
            int64_t klen;
            if (read_zigzag(buf, record_end, &pos, 5, &klen) < 0 || klen < 0 || klen > record_end - pos) goto malformed;
            if (column_append_text(&header_keys, headers, buf + pos, (Py_ssize_t)klen) < 0) goto malformed;
            pos += (Py_ssize_t)klen;
            if (column_append(&header_values, headers, buf, record_end, &pos) < 0) goto malformed;
        }
        lists.off[rows + 1] = (int32_t)headers;
        if (pos != record_end) goto malformed;
        off[rows] = base_offset + offset_delta;
        ts[rows] = log_append >= 0 ? log_append : base_timestamp + ts_delta;
        rows++;
    }
    if (pos != end) goto malformed;
    /* Trim to what was used (each data buffer was sized for the whole body). */
    if (_PyBytes_Resize(&keys.data, keys.used) < 0 || _PyBytes_Resize(&values.data, values.used) < 0
        || column_trim(&header_keys, headers) < 0 || column_trim(&header_values, headers) < 0)
        goto done;
    out = Py_BuildValue("(nOOOOOOOOOOnOOOOO)", rows, offsets, stamps, keys.nulls ? keys.valid : Py_None, keys.offsets,
                        keys.data, values.nulls ? values.valid : Py_None, values.offsets, values.data,
                        lists.nulls ? lists.valid : Py_None, lists.offsets, headers, header_keys.offsets, header_keys.data,
                        header_values.nulls ? header_values.valid : Py_None, header_values.offsets, header_values.data);
    goto done;
malformed:
    if (!PyErr_Occurred()) out = Py_NewRef(Py_None);
done:
    Py_XDECREF(offsets);
    Py_XDECREF(stamps);
    column_clear(&keys);
    column_clear(&values);
    column_clear(&lists);
    column_clear(&header_keys);
    column_clear(&header_values);
    PyBuffer_Release(&view);
    return out;
}

/* ---- ProduceLane, ProduceMethod ------------------------------------------------------ */

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

/* produce()'s common case in C: a record of bytes (or None) to a topic seen before, no headers,
 * the default or a known partition, room in the buffer, a sticky partition that does not move on
 * or a remembered key, and an open batch it fits in. The lane only reads the state the Python side
 * keeps (the engine's counters, the accumulator's open batches, the sticky partitioner's current
 * partition, the remembered key partitions) and makes the moves the Python path would make with
 * it; anything else, and every decision (a new sticky partition, a new batch, a full buffer, a
 * refusal), is left to the Python path, which the caller runs when the lane declines. All of it
 * runs under the GIL without calling Python code, and only when the engine's lock is free: to
 * the Python side it is one step of the lock's holder, as the Python path is. The equality of the
 * two is held by tests/unit/test_produce_lane.py. */

/* The keyed partitioners whose answers the lane computes (core.partitioners.KEY_HASHES). */
enum { KEY_HASH_NONE = 0, KEY_HASH_MURMUR2 = 1, KEY_HASH_CRC32 = 2 };

/* ---- BufferCounts ------------------------------------------------------------------------ *
 * The producer's counters that the lane moves for every record (the engine's outstanding and
 * buffered_bytes, the accumulator's queued), kept as machine integers: the lane adds to them with
 * no dict lookup and no int object per record. Python reads and writes them as int attributes. */

typedef struct {
    PyObject_HEAD
    Py_ssize_t outstanding, buffered_bytes, queued;
} BufferCounts;

/* A counter by its offset. (A T_PYSSIZET member would store -1 before refusing a value that is
 * not an int: a bad assignment must leave the count as it was.) */
static PyObject *
buffer_count_get(BufferCounts *self, void *offset)
{
    return PyLong_FromSsize_t(*(Py_ssize_t *)((char *)self + (Py_ssize_t)offset));
}

static int
buffer_count_set(BufferCounts *self, PyObject *value, void *offset)
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

static PyGetSetDef buffer_counts_getset[] = {
    {"outstanding", (getter)buffer_count_get, (setter)buffer_count_set, "records produced and not yet reported",
     (void *)offsetof(BufferCounts, outstanding)},
    {"buffered_bytes", (getter)buffer_count_get, (setter)buffer_count_set, "those records' buffer charge",
     (void *)offsetof(BufferCounts, buffered_bytes)},
    {"queued", (getter)buffer_count_get, (setter)buffer_count_set, "records in the accumulator, not yet in a request",
     (void *)offsetof(BufferCounts, queued)},
    {NULL},
};

static PyTypeObject BufferCountsType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "kafkawire._native.BufferCounts",
    .tp_doc = "The producer's buffer counters (core/buffer_counts.py), moved by the lane from C.",
    .tp_basicsize = sizeof(BufferCounts),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_getset = buffer_counts_getset,
};

typedef struct {
    PyObject_HEAD
    BufferCounts *counts;  /* the engine's and the accumulator's counters */
    PyObject *acc;         /* the accumulator's __dict__: _queues */
    PyObject *sticky;      /* the sticky partitioner's per-topic state (dict topic -> _Stick), or None */
    PyObject *keyed;       /* KeyedPartitions' maps (dict (topic, count) -> dict key -> partition), or None */
    int key_hash;          /* the partitioner's hash when the lane may compute it (core.partitioners.KEY_HASHES) */
    int now_monotonic;     /* ``now`` is time.monotonic: read the same clock without calling it */
    PyObject *legal;       /* the set of topic names already found legal */
    PyObject *metadata;    /* the cluster metadata: its partition_counts */
    PyObject *sender;      /* its fatal error; its wake() */
    PyObject *meta_vars, *sender_vars; /* their __dict__s, read directly when they have one (else NULL) */
    PyObject *stick_type;  /* the sticky state's class, whose slots the lane reads and writes */
    Py_ssize_t off_stick_partition, off_stick_produced;
    PyObject *tp_topic, *tp_keys; /* the last topic's (topic, partition) keys of _queues, by partition */
    PyObject *wake;
    PyObject *lock;        /* the engine's lock: taken by rlock_try when it is an RLock of ours */
    PyObject *acquire, *release; /* else its methods */
    PyObject *now;         /* the engine's monotonic clock */
    PyObject *on_delivery; /* the configured default callback, or None */
    Py_ssize_t max_messages, max_bytes, max_record, overhead, batch_size, batch_count, sticky_size;
    Py_ssize_t off_messages, off_bytes, off_full, off_payload, off_attempts; /* ProducerBatch's slots */
} Lane;

static PyObject *s_queues, *s_partition, *s_produced, *s_fatal,
    *s_partition_counts, *s_lane;

static Py_ssize_t
slot_offset(PyObject *type, const char *name)
{
    PyObject *d = PyObject_GetAttrString(type, name);
    if (d == NULL) return -1;
    Py_ssize_t off = -1;
    if (Py_IS_TYPE(d, &PyMemberDescr_Type)) {
        PyMemberDef *m = ((PyMemberDescrObject *)d)->d_member;
        if (m->type == T_OBJECT_EX && !(m->flags & READONLY)) off = m->offset;
    }
    Py_DECREF(d);
    if (off < 0) PyErr_Format(PyExc_TypeError, "%s is not a slot", name);
    return off;
}

#define SLOT(obj, off) (*(PyObject **)((char *)(obj) + (off)))

/* An object's own __dict__ when it has a plain one, else NULL (no error). */
static PyObject *
instance_vars(PyObject *obj)
{
    PyObject *d = PyObject_GetAttrString(obj, "__dict__");
    if (d == NULL) {
        PyErr_Clear();
        return NULL;
    }
    if (!PyDict_CheckExact(d)) Py_CLEAR(d);
    return d;
}

/* obj.name, looked up in ``vars`` (its __dict__) first: a new reference, or NULL with an error. */
static PyObject *
attr_of(PyObject *obj, PyObject *vars, PyObject *name)
{
    if (vars != NULL) {
        PyObject *v = PyDict_GetItemWithError(vars, name);
        if (v != NULL) return Py_NewRef(v);
        if (PyErr_Occurred()) return NULL;
    }
    return PyObject_GetAttr(obj, name);
}

static int
lane_traverse(Lane *self, visitproc visit, void *arg)
{
    Py_VISIT(self->counts);
    Py_VISIT(self->acc);
    Py_VISIT(self->sticky);
    Py_VISIT(self->keyed);
    Py_VISIT(self->legal);
    Py_VISIT(self->metadata);
    Py_VISIT(self->sender);
    Py_VISIT(self->meta_vars);
    Py_VISIT(self->sender_vars);
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
    Py_CLEAR(self->counts);
    Py_CLEAR(self->acc);
    Py_CLEAR(self->sticky);
    Py_CLEAR(self->keyed);
    Py_CLEAR(self->legal);
    Py_CLEAR(self->metadata);
    Py_CLEAR(self->sender);
    Py_CLEAR(self->meta_vars);
    Py_CLEAR(self->sender_vars);
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

/* ProduceLane(counts, acc_vars, sticky_topics, keyed_maps, key_hash, legal_topics, metadata, sender, lock,
 *             now, on_delivery, batch_type, max_messages, max_bytes, max_record, overhead, batch_size,
 *             batch_count, sticky_size) */
static PyObject *
lane_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *counts, *acc, *sticky, *keyed, *legal, *metadata, *sender, *lock, *now, *on_delivery, *batch_type;
    Py_ssize_t limits[7];
    int key_hash;
    if (!PyArg_ParseTuple(args, "O!O!OOiO!OOOOOOnnnnnnn:ProduceLane", &BufferCountsType, &counts, &PyDict_Type, &acc,
                          &sticky, &keyed, &key_hash, &PySet_Type, &legal, &metadata, &sender, &lock, &now, &on_delivery,
                          &batch_type, &limits[0], &limits[1], &limits[2], &limits[3], &limits[4], &limits[5],
                          &limits[6]))
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
    self->counts = (BufferCounts *)Py_NewRef(counts);
    self->acc = Py_NewRef(acc);
    self->sticky = Py_NewRef(sticky);
    self->keyed = Py_NewRef(keyed);
    self->key_hash = key_hash;
    self->legal = Py_NewRef(legal);
    self->metadata = Py_NewRef(metadata);
    self->sender = Py_NewRef(sender);
    self->meta_vars = instance_vars(metadata);
    self->sender_vars = instance_vars(sender);
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
    self->wake = PyObject_GetAttrString(sender, "wake");
    self->lock = Py_NewRef(lock);
    self->acquire = PyObject_GetAttrString(lock, "acquire");
    self->release = PyObject_GetAttrString(lock, "release");
    self->max_messages = limits[0];
    self->max_bytes = limits[1];
    self->max_record = limits[2];
    self->overhead = limits[3];
    self->batch_size = limits[4];
    self->batch_count = limits[5];
    self->sticky_size = limits[6];
    if (self->wake == NULL || self->acquire == NULL || self->release == NULL
        || (self->off_messages = slot_offset(batch_type, "messages")) < 0
        || (self->off_bytes = slot_offset(batch_type, "bytes")) < 0
        || (self->off_full = slot_offset(batch_type, "full")) < 0
        || (self->off_payload = slot_offset(batch_type, "payload")) < 0
        || (self->off_attempts = slot_offset(batch_type, "attempts")) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static PyTypeObject LaneType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "kafkawire._native.ProduceLane",
    .tp_doc = "The state produce()'s C path reads and moves (see _native.c).",
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
lane_hash_key(Lane *self, PyObject *key, Py_ssize_t count)
{
    const unsigned char *data = (const unsigned char *)PyBytes_AS_STRING(key);
    Py_ssize_t len = PyBytes_GET_SIZE(key);
    if (self->key_hash == KEY_HASH_MURMUR2) return (Py_ssize_t)((kafka_murmur2(data, len) & 0x7FFFFFFFu) % (uint32_t)count);
    if (self->key_hash == KEY_HASH_CRC32 && len > 0) return (Py_ssize_t)(zlib_crc32(data, len) % (uint32_t)count);
    return -1;
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

/* The sticky state's slot offsets, found once per class: 0, or -1 with an error when it has no
 * such slots (the Python path takes the record then). */
static int
lane_know_stick(Lane *self, PyObject *stick)
{
    if ((PyObject *)Py_TYPE(stick) == self->stick_type) return 0;
    PyObject *type = (PyObject *)Py_TYPE(stick);
    Py_ssize_t p = slot_offset(type, "partition"), n = p < 0 ? -1 : slot_offset(type, "produced");
    if (n < 0) return -1;
    Py_XSETREF(self->stick_type, Py_NewRef(type));
    self->off_stick_partition = p;
    self->off_stick_produced = n;
    return 0;
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
    PyObject *fatal = attr_of(self->sender, self->sender_vars, s_fatal);
    if (fatal == NULL) return -1;
    Py_DECREF(fatal);
    if (fatal != Py_None) return 0;

    Py_ssize_t vlen = value == Py_None ? 0 : PyBytes_GET_SIZE(value);
    Py_ssize_t klen = key == Py_None ? 0 : PyBytes_GET_SIZE(key);
    Py_ssize_t size = record_bound(key == Py_None ? -1 : klen, value == Py_None ? -1 : vlen, 0, 0);
    Py_ssize_t charge = size + size + self->overhead;
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

    /* Room in the buffer, as admit's fast test. */
    BufferCounts *tally = self->counts;
    Py_ssize_t outstanding = tally->outstanding, buffered = tally->buffered_bytes;
    if (!((!self->max_messages || outstanding < self->max_messages) && buffered + charge <= self->max_bytes)) goto out;
    /* The partition count, from the metadata as the Python path reads it. */
    PyObject *counts = attr_of(self->metadata, self->meta_vars, s_partition_counts);
    if (counts == NULL) goto fail;
    Py_ssize_t count = PyDict_Check(counts) ? dict_size(counts, topic) : -1;
    Py_DECREF(counts);
    if (PyErr_Occurred()) goto fail;
    if (count <= 0) goto out;
    /* The partition: the caller's, the sticky one while it stays, or a remembered key's. */
    Py_ssize_t partition = -1, produced = 0;
    if (chosen >= 0) {
        if (chosen >= count) goto out;
        partition = (Py_ssize_t)chosen;
    } else if (key == Py_None) {
        if (self->sticky == Py_None) goto out;
        stick = Py_XNewRef(PyDict_GetItemWithError(self->sticky, topic));
        if (stick == NULL) goto check;
        if (lane_know_stick(self, stick) < 0) {
            PyErr_Clear();
            goto out;
        }
        PyObject *p = SLOT(stick, self->off_stick_partition), *n = SLOT(stick, self->off_stick_produced);
        if (p == NULL || n == NULL) goto out;
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
    PyObject *queues = PyDict_GetItemWithError(self->acc, s_queues);
    PyObject *queue = queues != NULL && PyDict_Check(queues) ? PyDict_GetItemWithError(queues, tp) : NULL;
    Py_DECREF(tp);
    if (queue == NULL) goto check;
    Py_ssize_t depth = PySequence_Size(queue);
    if (depth <= 0) {
        if (depth < 0) goto fail;
        goto out;
    }
    batch = PySequence_GetItem(queue, depth - 1);
    if (batch == NULL) goto fail;
    PyObject *messages = SLOT(batch, self->off_messages), *bytes_obj = SLOT(batch, self->off_bytes);
    PyObject *full = SLOT(batch, self->off_full), *payload = SLOT(batch, self->off_payload);
    PyObject *attempts = SLOT(batch, self->off_attempts);
    if (messages == NULL || !PyList_CheckExact(messages) || bytes_obj == NULL || !PyLong_CheckExact(bytes_obj)
        || full != Py_False || payload != Py_None || attempts == NULL || !PyLong_CheckExact(attempts))
        goto out;
    if (PyObject_IsTrue(attempts)) goto out;
    Py_ssize_t batch_bytes = PyLong_AsSsize_t(bytes_obj);
    if (batch_bytes < 0) goto check;
    if (PyList_GET_SIZE(messages) && batch_bytes + size > self->batch_size) goto out;

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
    PyObject *fields[9] = {topic, part, key, value, Py_None, stamp != NULL ? stamp : ts_obj, cb, Py_None, enqueued};
    msg = pending_make(&PendingType, fields);
    if (msg == NULL) goto fail;
    if (((Pending *)msg)->size != size) goto out; /* cannot be: the same sum */
    PyObject *new_bytes = PyLong_FromSsize_t(batch_bytes + size);
    if (new_bytes == NULL) goto fail;
    if (stick != NULL) {
        PyObject *n = PyLong_FromSsize_t(produced + size);
        if (n == NULL) {
            Py_DECREF(new_bytes);
            goto fail;
        }
        Py_SETREF(SLOT(stick, self->off_stick_produced), n);
    }
    if (PyList_Append(messages, msg) < 0) {
        Py_DECREF(new_bytes);
        goto fail;
    }
    tally->outstanding = outstanding + 1;
    tally->buffered_bytes = buffered + charge;
    tally->queued += 1;
    Py_SETREF(SLOT(batch, self->off_bytes), new_bytes);
    done = 1;
    if (PyList_GET_SIZE(messages) >= self->batch_count || batch_bytes + size >= self->batch_size) {
        Py_SETREF(SLOT(batch, self->off_full), Py_NewRef(Py_True));
        done = 2; /* filled: the sender looks now */
    }
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

/* ProduceMethod(function): Producer.produce. A method descriptor whose call queues the record
 * through the producer's ``_lane`` when it has one and the lane takes it, and otherwise calls
 * ``function`` (the Python produce()) with the same arguments. */
typedef struct {
    PyObject_HEAD
    PyObject *function;
    PyObject *dict;
    vectorcallfunc vectorcall;
} ProduceMethod;

static PyObject *
pm_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    ProduceMethod *self = (ProduceMethod *)callable;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs < 1 || nargs > 1 + 7) goto slow;
    PyObject *lane = PyObject_GetAttr(args[0], s_lane);
    if (lane == NULL) return NULL;
    Py_DECREF(lane); /* the producer holds it */
    if (!Py_IS_TYPE(lane, &LaneType)) goto slow;
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
        if (which < 0 || (seen & (1 << which))) goto slow; /* Python raises the TypeError */
        seen |= 1 << which;
        given[which] = args[nargs + k];
    }
    int r = lane_produce((Lane *)lane, given);
    if (r < 0) return NULL;
    if (r > 0) Py_RETURN_NONE;
slow:
    return PyObject_Vectorcall(self->function, args, nargsf, kwnames);
}

static PyObject *
pm_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *function;
    if (!PyArg_ParseTuple(args, "O:ProduceMethod", &function)) return NULL;
    if (!PyCallable_Check(function)) {
        PyErr_SetString(PyExc_TypeError, "ProduceMethod takes a function");
        return NULL;
    }
    ProduceMethod *self = (ProduceMethod *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->function = Py_NewRef(function);
    self->vectorcall = pm_vectorcall;
    /* What inspect and help() read: the Python function's name, docstring and signature. */
    self->dict = PyDict_New();
    if (self->dict == NULL || PyDict_SetItemString(self->dict, "__wrapped__", function) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    static const char *copied[] = {"__name__", "__qualname__", "__doc__", "__module__"};
    for (int i = 0; i < 4; i++) {
        PyObject *v = PyObject_GetAttrString(function, copied[i]);
        if (v == NULL) {
            PyErr_Clear();
            continue;
        }
        int bad = PyDict_SetItemString(self->dict, copied[i], v);
        Py_DECREF(v);
        if (bad < 0) {
            Py_DECREF(self);
            return NULL;
        }
    }
    return (PyObject *)self;
}

static PyObject *
pm_get(PyObject *self, PyObject *obj, PyObject *type)
{
    if (obj == NULL || obj == Py_None) return Py_NewRef(self);
    return PyMethod_New(self, obj);
}

static int
pm_traverse(ProduceMethod *self, visitproc visit, void *arg)
{
    Py_VISIT(self->function);
    Py_VISIT(self->dict);
    return 0;
}

static int
pm_clear(ProduceMethod *self)
{
    Py_CLEAR(self->function);
    Py_CLEAR(self->dict);
    return 0;
}

static void
pm_dealloc(ProduceMethod *self)
{
    PyObject_GC_UnTrack(self);
    pm_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
pm_getdoc(ProduceMethod *self, void *closure)
{
    PyObject *doc = self->dict == NULL ? NULL : PyDict_GetItemString(self->dict, "__doc__");
    return Py_NewRef(doc == NULL ? Py_None : doc);
}

static PyGetSetDef pm_getset[] = {
    {"__doc__", (getter)pm_getdoc, NULL, NULL, NULL},
    {NULL},
};

static PyTypeObject ProduceMethodType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "kafkawire._native.ProduceMethod",
    .tp_basicsize = sizeof(ProduceMethod),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_METHOD_DESCRIPTOR | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = pm_new,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(ProduceMethod, vectorcall),
    .tp_dictoffset = offsetof(ProduceMethod, dict),
    .tp_descr_get = pm_get,
    .tp_getset = pm_getset,
    .tp_traverse = (traverseproc)pm_traverse,
    .tp_clear = (inquiry)pm_clear,
    .tp_dealloc = (destructor)pm_dealloc,
};

/* ---- the bulk paths: produce_batch() and the Arrow writer on the lane ------------------- *
 * Two builders make the records' PendingMessages in one pass, each only when every record is one
 * the Python checks would take unchanged (else None: the caller takes the Python path, which
 * raises or refuses as it always did): pending_from_dicts (produce_batch's message dicts) and
 * pending_from_columns (an Arrow batch's key/value offset and data buffers, read through the
 * buffer protocol, no per-cell Python object but the record's bytes). lane_queue then moves a run
 * of them into their partitions' open batches, as ProducerEngine.admit would one by one, and
 * stops at the first record it cannot take as cheaply (a new batch, a new sticky partition, a
 * full buffer, a key not remembered): the Python caller admits that one and calls again. The
 * caller holds the engine's lock around it. tests/unit/test_produce_bulk.py holds both against
 * the Python path. */

/* The UTF-8 bytes of a str, the bytes themselves, or None; NULL without an error when the Python
 * path must take it (another type, or a str that does not encode). */
static PyObject *
plain_payload(PyObject *v)
{
    if (v == NULL || v == Py_None) return Py_NewRef(Py_None);
    if (PyBytes_CheckExact(v)) return Py_NewRef(v);
    if (PyUnicode_CheckExact(v)) {
        PyObject *b = PyUnicode_AsUTF8String(v);
        if (b == NULL) PyErr_Clear();
        return b;
    }
    return NULL;
}

/* An exact int in [lo, hi] (the common values check_fields lets through), or 0. */
static int
plain_int(PyObject *v, long long lo, long long hi)
{
    if (v == NULL || !PyLong_CheckExact(v)) return 0;
    int overflow;
    long long n = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (n == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    return !overflow && n >= lo && n <= hi;
}

static PyObject *s_callback, *s_on_delivery, *s_value, *s_key, *s_timestamp, *s_headers, *zero_int;

/* The timestamp of a record given 0 ("now"): read once per call of the builders below, so that
 * the records of one produce_batch() or Arrow batch share one clock read and one int. */
static PyObject *
now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return PyLong_FromLongLong((long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

/* d[name] as a new reference, or NULL: missing (no error) or failed (an error set). Strong
 * references, because a key's __eq__ (a dict's non-str keys) may run code that changes the dict. */
static inline PyObject *
dict_get_ref(PyObject *d, PyObject *name)
{
    PyObject *v = PyDict_GetItemWithError(d, name);
    Py_XINCREF(v);
    return v;
}

/* A message dict's fields, in this order (new references, NULL when absent). */
enum { MF_HEADERS, MF_CALLBACK, MF_ON_DELIVERY, MF_PARTITION, MF_TIMESTAMP, MF_VALUE, MF_KEY, MF_COUNT };

/* The fields by one walk over the dict when each of its keys is one of the names as the same
 * (interned) object, as the literals of a program are: 1; else 0 with nothing taken, and the
 * caller looks each name up. A message holds one to three of seven names: the walk is cheaper
 * than seven lookups. No Python code runs here. */
static int
dict_fields_walk(PyObject *m, PyObject **f)
{
    PyObject *names[MF_COUNT] = {s_headers, s_callback, s_on_delivery, s_partition, s_timestamp, s_value, s_key};
    Py_ssize_t pos = 0;
    PyObject *k, *v;
    for (int j = 0; j < MF_COUNT; j++) f[j] = NULL;
    while (PyDict_Next(m, &pos, &k, &v)) {
        int j = 0;
        while (j < MF_COUNT && names[j] != k) j++;
        if (j == MF_COUNT) return 0;
        f[j] = v;
    }
    for (int j = 0; j < MF_COUNT; j++) Py_XINCREF(f[j]);
    return 1;
}

static int
dict_fields(PyObject *m, PyObject **f)
{
    if (dict_fields_walk(m, f)) return 0;
    PyObject *names[MF_COUNT] = {s_headers, s_callback, s_on_delivery, s_partition, s_timestamp, s_value, s_key};
    for (int j = 0; j < MF_COUNT; j++) {
        if ((f[j] = dict_get_ref(m, names[j])) == NULL && PyErr_Occurred()) {
            while (j-- > 0) Py_CLEAR(f[j]);
            return -1;
        }
    }
    return 0;
}

/* One produce_batch() message as a PendingMessage in ``*out``: 1, or 0 when it is not plain, or
 * -1 with an error. */
static int
dict_pending(PyObject *m, PyObject *topic, PyObject *partition, PyObject *callback, PyObject *stamp, PyObject *now,
             PyObject **out)
{
    PyObject *f[MF_COUNT];
    *out = NULL;
    if (dict_fields(m, f) < 0) return -1;
    PyObject *h = f[MF_HEADERS], *cb = f[MF_CALLBACK], *part = f[MF_PARTITION], *ts = f[MF_TIMESTAMP];
    PyObject *vin = f[MF_VALUE], *kin = f[MF_KEY], *value = NULL, *key = NULL;
    int r = 0;
    if (h != NULL && h != Py_None) goto done;
    if (cb == NULL || cb == Py_None) {
        Py_XSETREF(cb, f[MF_ON_DELIVERY]);
        f[MF_ON_DELIVERY] = NULL;
        if (cb == NULL || cb == Py_None) Py_XSETREF(cb, Py_NewRef(callback));
    }
    if (cb != Py_None && !PyCallable_Check(cb)) goto done;
    if (part == NULL) part = Py_NewRef(partition);
    if (ts == NULL) ts = Py_NewRef(zero_int);
    if (!plain_int(part, -1, 2147483647LL) || !plain_int(ts, 0, INT64_MAX)) goto done;
    if (ts == zero_int || PyObject_Not(ts)) Py_SETREF(ts, Py_NewRef(stamp));
    if ((value = plain_payload(vin)) == NULL || (key = plain_payload(kin)) == NULL) goto done;
    PyObject *fields[9] = {topic, part, key, value, Py_None, ts, cb, Py_None, now};
    if ((*out = pending_make(&PendingType, fields)) == NULL) goto fail;
    r = 1;
    goto done;
fail:
    r = -1;
done:
    Py_XDECREF(h);
    Py_XDECREF(cb);
    Py_XDECREF(f[MF_ON_DELIVERY]);
    Py_XDECREF(part);
    Py_XDECREF(ts);
    Py_XDECREF(vin);
    Py_XDECREF(kin);
    Py_XDECREF(value);
    Py_XDECREF(key);
    return r;
}

/* pending_from_dicts(messages, topic, partition, callback, now) -> list of PendingMessage, or
 * None when a message is not plain: not a dict, headers, a value or key neither bytes nor str, a
 * partition or timestamp check_fields would look at, a callback that is not callable. */
static PyObject *
pending_from_dicts(PyObject *module, PyObject *args)
{
    PyObject *messages, *topic, *partition, *callback, *now;
    if (!PyArg_ParseTuple(args, "O!UOOO!:pending_from_dicts", &PyList_Type, &messages, &topic, &partition, &callback,
                          &PyFloat_Type, &now))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(messages);
    PyObject *stamp = now_ms(), *out = stamp == NULL ? NULL : PyList_New(n);
    if (out == NULL) {
        Py_XDECREF(stamp);
        return NULL;
    }
    int r = 1;
    for (Py_ssize_t i = 0; i < n && r > 0; i++) {
        if (PyList_GET_SIZE(messages) != n) { /* changed under us by a key's __eq__: the Python path */
            r = 0;
            break;
        }
        PyObject *m = Py_NewRef(PyList_GET_ITEM(messages, i)), *msg = NULL;
        r = PyDict_CheckExact(m) ? dict_pending(m, topic, partition, callback, stamp, now, &msg) : 0;
        Py_DECREF(m);
        if (r > 0) PyList_SET_ITEM(out, i, msg);
    }
    Py_DECREF(stamp);
    if (r <= 0) {
        Py_DECREF(out);
        if (r < 0) return NULL;
        Py_RETURN_NONE;
    }
    return out;
}

/* One binary (or string) Arrow column as pending_from_columns reads it. */
typedef struct {
    Py_buffer validity, offsets, data;
    int has_validity, has_data, large;
    Py_ssize_t offset;
} ArrowColumn;

/* Entry ``at`` of an Arrow offsets buffer (int32, or int64 for the large types). */
static inline int64_t
offset_at(const Py_buffer *offsets, int large, Py_ssize_t at)
{
    if (large) {
        int64_t o;
        memcpy(&o, (const char *)offsets->buf + 8 * at, 8);
        return o;
    }
    int32_t o32;
    memcpy(&o32, (const char *)offsets->buf + 4 * at, 4);
    return o32;
}

static void
arrow_column_release(ArrowColumn *c)
{
    if (c->has_validity) PyBuffer_Release(&c->validity);
    if (c->offsets.obj != NULL) PyBuffer_Release(&c->offsets);
    if (c->has_data) PyBuffer_Release(&c->data);
    c->has_validity = c->has_data = 0;
    c->offsets.obj = NULL;
}

/* (validity or None, offsets, data or None, offset, large) for a column of ``rows`` rows; every
 * offset is checked against the data before any is used. */
static int
arrow_column_get(PyObject *spec, Py_ssize_t rows, ArrowColumn *c)
{
    PyObject *validity, *offsets, *data;
    memset(c, 0, sizeof(*c));
    if (!PyArg_ParseTuple(spec, "OOOnp:column", &validity, &offsets, &data, &c->offset, &c->large)) return -1;
    if (c->offset < 0) goto bad;
    if (validity != Py_None) {
        if (PyObject_GetBuffer(validity, &c->validity, PyBUF_SIMPLE) < 0) return -1;
        c->has_validity = 1;
        if ((c->offset + rows + 7) / 8 > c->validity.len) goto bad;
    }
    if (PyObject_GetBuffer(offsets, &c->offsets, PyBUF_SIMPLE) < 0) goto fail;
    if (data != Py_None) {
        if (PyObject_GetBuffer(data, &c->data, PyBUF_SIMPLE) < 0) goto fail;
        c->has_data = 1;
    }
    Py_ssize_t width = c->large ? 8 : 4;
    if ((c->offset + rows + 1) * width > c->offsets.len) goto bad;
    int64_t limit = c->has_data ? c->data.len : 0, last = -1;
    for (Py_ssize_t i = c->offset; i <= c->offset + rows; i++) {
        int64_t o = offset_at(&c->offsets, c->large, i);
        if (o < last || o > limit) goto bad;
        last = o;
    }
    return 0;
bad:
    PyErr_SetString(PyExc_ValueError, "an Arrow column's buffers do not hold its rows");
fail:
    arrow_column_release(c);
    return -1;
}

/* Row ``i``'s bytes as (pointer, length): 1, or 0 when null. */
static int
arrow_column_span(ArrowColumn *c, Py_ssize_t i, const char **ptr, Py_ssize_t *len)
{
    Py_ssize_t at = c->offset + i;
    if (c->has_validity && !((((const unsigned char *)c->validity.buf)[at >> 3] >> (at & 7)) & 1)) return 0;
    int64_t start = offset_at(&c->offsets, c->large, at), end = offset_at(&c->offsets, c->large, at + 1);
    *ptr = c->has_data ? (const char *)c->data.buf + start : "";
    *len = (Py_ssize_t)(end - start);
    return 1;
}

/* Row ``i``'s bytes, or None when null. */
static PyObject *
arrow_column_cell(ArrowColumn *c, Py_ssize_t i)
{
    const char *ptr;
    Py_ssize_t len;
    if (!arrow_column_span(c, i, &ptr, &len)) return Py_NewRef(Py_None);
    return PyBytes_FromStringAndSize(ptr, len);
}

/* A headers column (list<struct<key: string, value: binary>>): the list's validity and offsets
 * into the struct's rows, and the struct's key and value children (value None: all null). */
typedef struct {
    Py_buffer validity, offsets;
    int has_validity, large, has_values;
    Py_ssize_t offset;
    ArrowColumn keys, values;
} HeaderColumn;

static void
header_column_release(HeaderColumn *h)
{
    if (h->has_validity) PyBuffer_Release(&h->validity);
    if (h->offsets.obj != NULL) PyBuffer_Release(&h->offsets);
    if (h->keys.offsets.obj != NULL) arrow_column_release(&h->keys);
    if (h->has_values) arrow_column_release(&h->values);
    h->has_validity = h->has_values = 0;
    h->offsets.obj = NULL;
}

/* (validity or None, offsets, offset, large, children, key column, value column or None), every
 * offset checked against the struct's ``children`` rows. */
static int
header_column_get(PyObject *spec, Py_ssize_t rows, HeaderColumn *h)
{
    PyObject *validity, *offsets, *kspec, *vspec;
    Py_ssize_t children;
    memset(h, 0, sizeof(*h));
    if (!PyArg_ParseTuple(spec, "OOnpnOO:headers", &validity, &offsets, &h->offset, &h->large, &children, &kspec,
                          &vspec))
        return -1;
    if (h->offset < 0 || children < 0) goto bad;
    if (validity != Py_None) {
        if (PyObject_GetBuffer(validity, &h->validity, PyBUF_SIMPLE) < 0) return -1;
        h->has_validity = 1;
        if ((h->offset + rows + 7) / 8 > h->validity.len) goto bad;
    }
    if (PyObject_GetBuffer(offsets, &h->offsets, PyBUF_SIMPLE) < 0) goto fail;
    if ((h->offset + rows + 1) * (h->large ? 8 : 4) > h->offsets.len) goto bad;
    int64_t last = 0;
    for (Py_ssize_t i = h->offset; i <= h->offset + rows; i++) {
        int64_t o = offset_at(&h->offsets, h->large, i);
        if ((i > h->offset && o < last) || o < 0 || o > children) goto bad;
        last = o;
    }
    if (arrow_column_get(kspec, children, &h->keys) < 0) goto fail;
    if (vspec != Py_None) {
        if (arrow_column_get(vspec, children, &h->values) < 0) goto fail;
        h->has_values = 1;
    }
    return 0;
bad:
    PyErr_SetString(PyExc_ValueError, "an Arrow headers column's buffers do not hold its rows");
fail:
    header_column_release(h);
    return -1;
}

/* Row ``i``'s headers as produce() keeps them (a list of (str, bytes or None), None when null or
 * empty) in ``*out``: 1, or 0 when the per-row path must take the batch (a null or non-UTF-8 key),
 * or -1 with an error. */
static int
header_column_cell(HeaderColumn *h, Py_ssize_t i, PyObject **out)
{
    Py_ssize_t at = h->offset + i;
    *out = NULL;
    if (h->has_validity && !((((const unsigned char *)h->validity.buf)[at >> 3] >> (at & 7)) & 1)) {
        *out = Py_NewRef(Py_None);
        return 1;
    }
    int64_t start = offset_at(&h->offsets, h->large, at), end = offset_at(&h->offsets, h->large, at + 1);
    if (end <= start) {
        *out = Py_NewRef(Py_None);
        return 1;
    }
    PyObject *list = PyList_New((Py_ssize_t)(end - start));
    if (list == NULL) return -1;
    for (int64_t j = start; j < end; j++) {
        const char *ptr;
        Py_ssize_t len;
        if (!arrow_column_span(&h->keys, (Py_ssize_t)j, &ptr, &len)) {
            Py_DECREF(list);
            return 0;
        }
        PyObject *key = PyUnicode_DecodeUTF8(ptr, len, NULL);
        if (key == NULL) {
            PyErr_Clear();
            Py_DECREF(list);
            return 0;
        }
        PyObject *value = h->has_values ? arrow_column_cell(&h->values, (Py_ssize_t)j) : Py_NewRef(Py_None);
        PyObject *pair = value == NULL ? NULL : PyTuple_Pack(2, key, value);
        Py_DECREF(key);
        Py_XDECREF(value);
        if (pair == NULL) {
            Py_DECREF(list);
            return -1;
        }
        PyObject_GC_UnTrack(pair); /* a str and bytes or None: no cycle can run through it */
        PyList_SET_ITEM(list, (Py_ssize_t)(j - start), pair);
    }
    /* Out of the cycle collector's sight as the pending record holding it (see PendingMessage):
     * it holds only such pairs; a cycle through it would take user code putting one there (a leak then). */
    PyObject_GC_UnTrack(list);
    *out = list;
    return 1;
}

/* An int64 column's buffer (nulls already filled), as (data, offset), or None. */
static int
int64_column_get(PyObject *spec, Py_ssize_t rows, Py_buffer *view, Py_ssize_t *offset)
{
    PyObject *data;
    if (!PyArg_ParseTuple(spec, "On:column", &data, offset)) return -1;
    if (PyObject_GetBuffer(data, view, PyBUF_SIMPLE) < 0) return -1;
    if (*offset < 0 || (*offset + rows) * 8 > view->len) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_ValueError, "an Arrow column's buffer does not hold its rows");
        return -1;
    }
    return 0;
}

static inline int64_t
int64_at(Py_buffer *view, Py_ssize_t offset, Py_ssize_t i)
{
    int64_t v;
    memcpy(&v, (const char *)view->buf + 8 * (offset + i), 8);
    return v;
}

/* pending_from_columns(topic, rows, value, key, partitions, timestamps, headers, callback, now) ->
 * list of PendingMessage, or None when a partition is not -1 or an int32, a timestamp is negative
 * or a header key null or not UTF-8 (the per-row path judges those one by one). ``value``/``key``:
 * None (all null) or (validity, offsets, data, offset, large); ``partitions``/``timestamps``: None
 * or (int64 data, offset); ``headers``: None or as header_column_get reads it. Arrow buffers are
 * little-endian, as the machines this builds on. */
static PyObject *
pending_from_columns(PyObject *module, PyObject *args)
{
    PyObject *topic, *vspec, *kspec, *pspec, *tspec, *hspec, *callback, *now;
    Py_ssize_t rows;
    if (!PyArg_ParseTuple(args, "UnOOOOOOO!:pending_from_columns", &topic, &rows, &vspec, &kspec, &pspec, &tspec,
                          &hspec, &callback, &PyFloat_Type, &now))
        return NULL;
    if (rows < 0) {
        PyErr_SetString(PyExc_ValueError, "rows must not be negative");
        return NULL;
    }
    ArrowColumn vc, kc;
    HeaderColumn hc;
    Py_buffer pv, tv;
    Py_ssize_t poff = 0, toff = 0;
    int have_v = 0, have_k = 0, have_p = 0, have_t = 0, have_h = 0;
    PyObject *out = NULL;
    memset(&vc, 0, sizeof(vc));
    memset(&kc, 0, sizeof(kc));
    if (hspec != Py_None) {
        if (header_column_get(hspec, rows, &hc) < 0) goto done;
        have_h = 1;
    }
    if (vspec != Py_None) {
        if (arrow_column_get(vspec, rows, &vc) < 0) goto done;
        have_v = 1;
    }
    if (kspec != Py_None) {
        if (arrow_column_get(kspec, rows, &kc) < 0) goto done;
        have_k = 1;
    }
    if (pspec != Py_None) {
        if (int64_column_get(pspec, rows, &pv, &poff) < 0) goto done;
        have_p = 1;
        for (Py_ssize_t i = 0; i < rows; i++) {
            int64_t p = int64_at(&pv, poff, i);
            if (p < -1 || p > 2147483647LL) {
                out = Py_NewRef(Py_None);
                goto done;
            }
        }
    }
    if (tspec != Py_None) {
        if (int64_column_get(tspec, rows, &tv, &toff) < 0) goto done;
        have_t = 1;
        for (Py_ssize_t i = 0; i < rows; i++) {
            if (int64_at(&tv, toff, i) < 0) {
                out = Py_NewRef(Py_None);
                goto done;
            }
        }
    }
    PyObject *stamp = now_ms(), *list = stamp == NULL ? NULL : PyList_New(rows);
    if (list == NULL) {
        Py_XDECREF(stamp);
        goto done;
    }
    for (Py_ssize_t i = 0; i < rows; i++) {
        PyObject *value = have_v ? arrow_column_cell(&vc, i) : Py_NewRef(Py_None);
        PyObject *key = value == NULL ? NULL : have_k ? arrow_column_cell(&kc, i) : Py_NewRef(Py_None);
        PyObject *part = key == NULL ? NULL : PyLong_FromLongLong(have_p ? int64_at(&pv, poff, i) : -1);
        int64_t given = have_t ? int64_at(&tv, toff, i) : 0;
        PyObject *ts = part == NULL ? NULL : given ? PyLong_FromLongLong(given) : Py_NewRef(stamp);
        PyObject *msg = NULL, *headers = NULL;
        int plain = 1;
        if (ts != NULL) {
            if (have_h) {
                plain = header_column_cell(&hc, i, &headers);
            } else {
                headers = Py_NewRef(Py_None);
            }
        }
        if (headers != NULL) {
            PyObject *fields[9] = {topic, part, key, value, headers, ts, callback, Py_None, now};
            msg = pending_make(&PendingType, fields);
        }
        Py_XDECREF(value);
        Py_XDECREF(key);
        Py_XDECREF(part);
        Py_XDECREF(ts);
        Py_XDECREF(headers);
        if (msg == NULL) {
            Py_DECREF(list);
            Py_DECREF(stamp);
            if (plain == 0) out = Py_NewRef(Py_None); /* a header the per-row path must judge */
            goto done;
        }
        PyList_SET_ITEM(list, i, msg);
    }
    Py_DECREF(stamp);
    out = list;
done:
    if (have_v) arrow_column_release(&vc);
    if (have_k) arrow_column_release(&kc);
    if (have_p) PyBuffer_Release(&pv);
    if (have_t) PyBuffer_Release(&tv);
    if (have_h) header_column_release(&hc);
    return out;
}

/* What lane_queue keeps of the open batch it appends to, written back when it moves on. */
typedef struct {
    Py_ssize_t partition; /* -1: none */
    PyObject *batch;      /* borrowed from the accumulator's queue, which the lock keeps */
    PyObject *messages;
    Py_ssize_t bytes;
} OpenBatch;

static int
open_batch_leave(Lane *self, OpenBatch *ob)
{
    if (ob->partition < 0) return 0;
    ob->partition = -1;
    PyObject *n = PyLong_FromSsize_t(ob->bytes);
    if (n == NULL) return -1;
    Py_SETREF(SLOT(ob->batch, self->off_bytes), n);
    return 0;
}

/* The partition's open batch, when records may join it as Accumulator.append would add them:
 * 1, or 0 (the Python path makes a new one), or -1 with an error. */
static int
open_batch_find(Lane *self, PyObject *topic, Py_ssize_t partition, OpenBatch *ob)
{
    PyObject *part = PyLong_FromSsize_t(partition);
    PyObject *tp = part == NULL ? NULL : PyTuple_Pack(2, topic, part);
    Py_XDECREF(part);
    if (tp == NULL) return -1;
    PyObject *queues = PyDict_GetItemWithError(self->acc, s_queues);
    PyObject *queue = queues != NULL && PyDict_Check(queues) ? PyDict_GetItemWithError(queues, tp) : NULL;
    Py_DECREF(tp);
    if (queue == NULL) return PyErr_Occurred() ? -1 : 0;
    Py_ssize_t depth = PySequence_Size(queue);
    if (depth <= 0) return depth < 0 ? -1 : 0;
    PyObject *batch = PySequence_GetItem(queue, depth - 1);
    if (batch == NULL) return -1;
    Py_DECREF(batch); /* the queue holds it, and the caller holds the lock */
    PyObject *messages = SLOT(batch, self->off_messages), *bytes_obj = SLOT(batch, self->off_bytes);
    PyObject *attempts = SLOT(batch, self->off_attempts);
    if (messages == NULL || !PyList_CheckExact(messages) || bytes_obj == NULL || !PyLong_CheckExact(bytes_obj)
        || SLOT(batch, self->off_full) != Py_False || SLOT(batch, self->off_payload) != Py_None || attempts == NULL
        || !PyLong_CheckExact(attempts))
        return 0;
    int tried = PyObject_IsTrue(attempts);
    if (tried) return tried < 0 ? -1 : 0;
    Py_ssize_t bytes = PyLong_AsSsize_t(bytes_obj);
    if (bytes < 0) return PyErr_Occurred() ? -1 : 0;
    ob->partition = partition;
    ob->batch = batch;
    ob->messages = messages;
    ob->bytes = bytes;
    return 1;
}

/* lane_queue(lane, records, start, stop, count) -> (next, wake): records[start:stop] (PendingMessages
 * of one topic with ``count`` partitions) into their open batches while each passes the tests
 * produce()'s lane makes; ``next`` is the first one left to the Python path. Under the engine's lock. */
static PyObject *
lane_queue(PyObject *module, PyObject *args)
{
    Lane *self;
    PyObject *records;
    Py_ssize_t start, stop, count;
    if (!PyArg_ParseTuple(args, "O!O!nnn:lane_queue", &LaneType, &self, &PyList_Type, &records, &start, &stop, &count))
        return NULL;
    if (start < 0 || stop > PyList_GET_SIZE(records) || start > stop) {
        PyErr_SetString(PyExc_IndexError, "lane_queue: bad range");
        return NULL;
    }
    Py_ssize_t i = start;
    int wake = 0, failed = 0;
    BufferCounts *tally = self->counts;
    Py_ssize_t outstanding = tally->outstanding, buffered = tally->buffered_bytes, queued = tally->queued;
    PyObject *stick = NULL, *known = NULL, *topic = NULL;
    Py_ssize_t stick_part = -1, produced = 0, produced0 = 0;
    OpenBatch ob = {-1, NULL, NULL, 0};
    if (count <= 0) return Py_BuildValue("(ni)", start, 0);
    for (; i < stop; i++) {
        PyObject *item = PyList_GET_ITEM(records, i);
        if (!Py_IS_TYPE(item, &PendingType)) break;
        Pending *p = (Pending *)item;
        if (topic == NULL) topic = p->topic;
        else if (p->topic != topic) break;
        Py_ssize_t size = p->size, charge = size + size + self->overhead;
        Py_ssize_t headers = p->headers == Py_None ? 0 : PyList_CheckExact(p->headers) ? PyList_GET_SIZE(p->headers) : -1;
        if (headers < 0 || size > self->max_record - WIDEST_GAP - HEADER_GAP * headers) break; /* maybe too large */
        if (!((!self->max_messages || outstanding < self->max_messages) && buffered + charge <= self->max_bytes)) break;
        if (!PyLong_CheckExact(p->partition)) break;
        Py_ssize_t chosen = PyLong_AsSsize_t(p->partition), partition;
        if (chosen == -1 && PyErr_Occurred()) goto fail;
        int sticky = 0;
        if (chosen >= 0) {
            if (chosen >= count) break;
            partition = chosen;
        } else if (chosen < -1) {
            break;
        } else if (p->key == Py_None) {
            if (self->sticky == Py_None) break;
            if (stick == NULL) {
                stick = Py_XNewRef(PyDict_GetItemWithError(self->sticky, topic));
                if (stick == NULL) {
                    if (PyErr_Occurred()) goto fail;
                    break;
                }
                PyObject *sp = PyObject_GetAttr(stick, s_partition);
                PyObject *sn = sp == NULL ? NULL : PyObject_GetAttr(stick, s_produced);
                if (sn == NULL) {
                    Py_XDECREF(sp);
                    goto fail;
                }
                stick_part = PyLong_CheckExact(sp) ? PyLong_AsSsize_t(sp) : -1;
                produced0 = produced = PyLong_CheckExact(sn) ? PyLong_AsSsize_t(sn) : -1;
                Py_DECREF(sp);
                Py_DECREF(sn);
                if (PyErr_Occurred()) goto fail;
            }
            if (stick_part < 0 || stick_part >= count || produced < 0 || (produced > 0 && produced + size > self->sticky_size))
                break;
            partition = stick_part;
            sticky = 1;
        } else if (self->key_hash != KEY_HASH_NONE) {
            if (!PyBytes_CheckExact(p->key) || count > 0x7FFFFFFF || (partition = lane_hash_key(self, p->key, count)) < 0)
                break;
        } else {
            if (self->keyed == Py_None || !PyBytes_CheckExact(p->key)) break;
            if (known == NULL) {
                PyObject *c = PyLong_FromSsize_t(count), *tc = c == NULL ? NULL : PyTuple_Pack(2, topic, c);
                Py_XDECREF(c);
                if (tc == NULL) goto fail;
                known = Py_XNewRef(PyDict_GetItemWithError(self->keyed, tc));
                Py_DECREF(tc);
                if (known == NULL || !PyDict_Check(known)) {
                    if (PyErr_Occurred()) goto fail;
                    break;
                }
            }
            PyObject *kp = PyDict_GetItemWithError(known, p->key);
            if (kp == NULL || !PyLong_CheckExact(kp)) {
                if (PyErr_Occurred()) goto fail;
                break;
            }
            partition = PyLong_AsSsize_t(kp);
            if (partition < 0 || partition >= count) {
                if (PyErr_Occurred()) goto fail;
                break;
            }
        }
        if (ob.partition != partition) {
            if (open_batch_leave(self, &ob) < 0) goto fail;
            int found = open_batch_find(self, topic, partition, &ob);
            if (found < 0) goto fail;
            if (!found) break;
        }
        if (PyList_GET_SIZE(ob.messages) && ob.bytes + size > self->batch_size) break;
        /* Every test passed: admit's and Accumulator.append's moves. */
        if (chosen < 0) {
            PyObject *part = PyLong_FromSsize_t(partition);
            if (part == NULL) goto fail;
            Py_SETREF(p->partition, part);
        }
        if (PyList_Append(ob.messages, item) < 0) goto fail;
        outstanding += 1;
        buffered += charge;
        queued += 1;
        if (sticky) produced += size;
        ob.bytes += size;
        if (PyList_GET_SIZE(ob.messages) >= self->batch_count || ob.bytes >= self->batch_size) {
            Py_SETREF(SLOT(ob.batch, self->off_full), Py_NewRef(Py_True));
            wake = 1; /* filled: the sender looks now */
            if (open_batch_leave(self, &ob) < 0) goto fail;
        }
    }
    if (0) {
fail:
        failed = 1;
    }
    /* The counters written back, whatever happened: the records appended are queued. */
    PyObject *exc_type, *exc_value, *exc_tb;
    PyErr_Fetch(&exc_type, &exc_value, &exc_tb);
    tally->outstanding = outstanding;
    tally->buffered_bytes = buffered;
    tally->queued = queued;
    int bad = open_batch_leave(self, &ob) < 0;
    if (!bad && stick != NULL && produced != produced0) {
        PyObject *n = PyLong_FromSsize_t(produced);
        bad = n == NULL || PyObject_SetAttr(stick, s_produced, n) < 0;
        Py_XDECREF(n);
    }
    Py_XDECREF(stick);
    Py_XDECREF(known);
    if (failed) {
        if (bad) PyErr_Clear();
        PyErr_Restore(exc_type, exc_value, exc_tb);
        return NULL;
    }
    if (bad) return NULL;
    return Py_BuildValue("(ni)", i, wake);
}

/* ---- module ------------------------------------------------------------------------- */

/* track(obj): puts an object decode_messages untracked back in the cycle collector's sight. */
static PyObject *
track(PyObject *module, PyObject *obj)
{
    if (PyObject_IS_GC(obj) && !PyObject_GC_IsTracked(obj)) PyObject_GC_Track(obj);
    Py_RETURN_NONE;
}

static PyMethodDef native_methods[] = {
    {"track", track, METH_O, "track(obj): back under the cycle collector (see decode_messages)"},
    {"encode_records", encode_records, METH_VARARGS,
     "encode_records(buf, records, count, base_timestamp, max_timestamp) -> (count, base, max)"},
    {"serve_delivered", serve_delivered, METH_VARARGS,
     "serve_delivered(messages, start, base_offset, log_append, create_time, now, message_type, overhead)"
     " -> (next, served, charge, exception or None)"},
    {"tally_delivered", tally_delivered, METH_VARARGS,
     "tally_delivered(messages, overhead) -> (value_bytes, without_callback, their_charge, with_future)"},
    {"tally_shared", tally_shared, METH_VARARGS,
     "tally_shared(messages, callback, overhead) -> (value_bytes, charge), or None when a record differs"},
    {"decode_messages", decode_messages, METH_VARARGS,
     "decode_messages(body, pos, end, count, base_offset, base_timestamp, log_append_time, min_offset, topic,"
     " partition, timestamp_type, leader_epoch, message_type) -> list of messages, or None when malformed"},
    {"decode_columns", decode_columns, METH_VARARGS,
     "decode_columns(body, pos, end, count, base_offset, base_timestamp, log_append_time, min_offset)"
     " -> Arrow buffers of the records, or None when malformed"},
    {"pending_from_dicts", pending_from_dicts, METH_VARARGS,
     "pending_from_dicts(messages, topic, partition, callback, now) -> PendingMessages, or None when one is not plain"},
    {"pending_from_columns", pending_from_columns, METH_VARARGS,
     "pending_from_columns(topic, rows, value, key, partitions, timestamps, headers, callback, now)"
     " -> PendingMessages, or None"},
    {"lane_queue", lane_queue, METH_VARARGS,
     "lane_queue(lane, records, start, stop, count) -> (next, wake): records into their open batches, under the lock"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef native_module = {
    PyModuleDef_HEAD_INIT, "kafkawire._native", "The producer's per-record loops in C (see native.py).", -1,
    native_methods,
};

PyMODINIT_FUNC
PyInit__native(void)
{
    if (PyType_Ready(&PendingType) < 0 || PyType_Ready(&MessageFieldsType) < 0 || PyType_Ready(&LaneType) < 0
        || PyType_Ready(&ProduceMethodType) < 0 || PyType_Ready(&RLockType) < 0
        || PyType_Ready(&BufferCountsType) < 0)
        return NULL;
    PyObject **names[] = {&s_queues, &s_partition, &s_produced, &s_fatal, &s_partition_counts, &s_lane};
    const char *texts[] = {"_queues", "partition", "produced", "fatal", "partition_counts", "_lane"};
    for (int i = 0; i < 6; i++)
        if ((*names[i] = PyUnicode_InternFromString(texts[i])) == NULL) return NULL;
    PyObject **bulk_names[] = {&s_callback, &s_on_delivery, &s_value, &s_key, &s_timestamp, &s_headers};
    const char *bulk_texts[] = {"callback", "on_delivery", "value", "key", "timestamp", "headers"};
    for (int i = 0; i < 6; i++)
        if ((*bulk_names[i] = PyUnicode_InternFromString(bulk_texts[i])) == NULL) return NULL;
    if ((zero_int = PyLong_FromLong(0)) == NULL) return NULL;
    PyObject *m = PyModule_Create(&native_module);
    if (m == NULL) return NULL;
    if (PyModule_AddObjectRef(m, "PendingMessage", (PyObject *)&PendingType) < 0
        || PyModule_AddObjectRef(m, "MessageFields", (PyObject *)&MessageFieldsType) < 0
        || PyModule_AddObjectRef(m, "ProduceLane", (PyObject *)&LaneType) < 0
        || PyModule_AddObjectRef(m, "ProduceMethod", (PyObject *)&ProduceMethodType) < 0
        || PyModule_AddObjectRef(m, "RLock", (PyObject *)&RLockType) < 0
        || PyModule_AddObjectRef(m, "BufferCounts", (PyObject *)&BufferCountsType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
