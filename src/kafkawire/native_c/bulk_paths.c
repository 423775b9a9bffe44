/* bulk_paths.c: pending_from_dicts, pending_from_columns, lane_queue: produce_batch() and the Arrow writer on
 * the produce lane. Pure-Python twin: producer/producer_engine.py queue_checked over admit (tests/unit/producer/test_produce_bulk.py).
 *
 * Part of kafkawire._native, compiled as one unit by module.c (see its list for the order). */

/* ---- the bulk paths: produce_batch() and the Arrow writer on the lane ------------------- *
 * Two builders make the records' PendingMessages in one pass, each only when every record is one
 * the Python checks would take unchanged (else None: the caller takes the Python path, which
 * raises or refuses as it always did): pending_from_dicts (produce_batch's message dicts) and
 * pending_from_columns (an Arrow batch's key/value offset and data buffers, read through the
 * buffer protocol, no per-cell Python object but the record's bytes). lane_queue then moves a run
 * of them into their partitions' open batches, as ProducerEngine.admit would one by one, and
 * stops at the first record it cannot take as cheaply (a new batch, a new sticky partition, a
 * full buffer, a key not remembered): the Python caller admits that one and calls again. The
 * caller holds the engine's lock around it. tests/unit/producer/test_produce_bulk.py holds both against
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

static PyObject *s_partition, *s_callback, *s_on_delivery, *s_value, *s_key, *s_timestamp, *s_headers, *zero_int;

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

/* The partition's open batch (lane_state.c OpenBatch, which the queue holds and the caller's lock
 * keeps), when a record of ``size`` may join it as Accumulator.extend would add it: 1, or 0 (the
 * Python path makes a new one), or -1 with an error. */
static int
open_batch_find(Lane *self, PyObject *topic, Py_ssize_t partition, Py_ssize_t size, OpenBatch **found)
{
    PyObject *part = PyLong_FromSsize_t(partition);
    PyObject *tp = part == NULL ? NULL : PyTuple_Pack(2, topic, part);
    Py_XDECREF(part);
    if (tp == NULL) return -1;
    PyObject *queues = self->state->queues;
    PyObject *queue = queues != NULL ? PyDict_GetItemWithError(queues, tp) : NULL;
    Py_DECREF(tp);
    if (queue == NULL) return PyErr_Occurred() ? -1 : 0;
    Py_ssize_t depth = PySequence_Size(queue);
    if (depth <= 0) return depth < 0 ? -1 : 0;
    PyObject *batch = PySequence_GetItem(queue, depth - 1);
    if (batch == NULL) return -1;
    Py_DECREF(batch); /* the queue holds it, and the caller holds the lock */
    if (!PyObject_TypeCheck(batch, &OpenBatchType) || open_batch_room((OpenBatch *)batch, size, self->batch_size) != BATCH_ROOM)
        return 0;
    *found = (OpenBatch *)batch;
    return 1;
}

/* Open batches lane_run keeps at once (one per partition of the topic, up to this many). */
#define MAX_KEPT_BATCHES 1024

/* A partition's open batch as lane_run found it (borrowed: the queue holds it, the lock keeps it). */
typedef struct {
    Py_ssize_t partition; /* -1: none */
    OpenBatch *batch;
} KeptBatch;

/* One record as the lane loop reads it from its source (a list of PendingMessages, or an Arrow
 * batch's columns: arrow_rows.c). */
typedef struct {
    PyObject *topic;      /* borrowed */
    Py_ssize_t size;      /* its size bound */
    Py_ssize_t headers;   /* how many; -1: not a list (the Python path judges it) */
    PyObject *key;        /* borrowed bytes or None; NULL: the key is kp/kl (kl -1: null) */
    const char *kp;
    Py_ssize_t kl;
    PyObject *partition;  /* borrowed: the record's partition (-1: the partitioner's) */
    Py_ssize_t value_len; /* (an Arrow row's: -1 null) */
} LaneRecord;

/* A source of records for lane_run: ``read`` fills the record at ``i`` (1, or 0: the Python path
 * takes it), ``put`` appends it to the open batch (``chosen``: the lane chose ``partition``):
 * 0, or -1 with an error. */
typedef struct {
    void *source;
    int (*read)(void *source, Py_ssize_t i, LaneRecord *r);
    int (*put)(Lane *self, void *source, Py_ssize_t i, const LaneRecord *r, OpenBatch *ob, Py_ssize_t partition, int chosen);
} LaneSource;

static int
pending_read(void *source, Py_ssize_t i, LaneRecord *r)
{
    PyObject *item = PyList_GET_ITEM((PyObject *)source, i);
    if (!Py_IS_TYPE(item, &PendingType)) return 0;
    Pending *p = (Pending *)item;
    r->topic = p->topic;
    r->size = p->size;
    r->headers = p->headers == Py_None ? 0 : PyList_CheckExact(p->headers) ? PyList_GET_SIZE(p->headers) : -1;
    r->key = p->key;
    r->partition = p->partition;
    r->value_len = p->value == Py_None ? -1 : blob_len(p->value);
    if (r->value_len < -1 || (r->value_len == -1 && p->value != Py_None)) {
        PyErr_Clear();
        return 0;
    }
    return 1;
}

static int
pending_put(Lane *self, void *source, Py_ssize_t i, const LaneRecord *r, OpenBatch *ob, Py_ssize_t partition, int chosen)
{
    Pending *p = (Pending *)PyList_GET_ITEM((PyObject *)source, i);
    if (chosen) {
        PyObject *part = PyLong_FromSsize_t(partition);
        if (part == NULL) return -1;
        Py_SETREF(p->partition, part);
    }
    return PyList_Append(ob->messages, (PyObject *)p);
}

/* Records ``start``..``stop`` of ``src`` (one topic with ``count`` partitions) into their open
 * batches while each passes the tests produce()'s lane makes, a sticky partition's time compared
 * with ``now`` (the time the Python path is given for them): the index of the first one left to
 * the Python path, or -1 with an error. ``*wake``: a batch filled. Under the engine's lock. */
static Py_ssize_t
lane_run(Lane *self, LaneSource *src, Py_ssize_t start, Py_ssize_t stop, Py_ssize_t count, double now, int *wake)
{
    Py_ssize_t i = start;
    int failed = 0;
    LaneState *tally = self->state;
    Py_ssize_t queued0 = tally->queued;
    PyObject *stick = NULL, *known = NULL, *topic = NULL;
    Py_ssize_t stick_part = -1, produced = 0, produced0 = 0;
    double until = 0.0; /* the sticky partition's time to move on */
    /* The open batch of each partition met so far, kept until the run ends or it fills: keyed
     * records switch partitions at almost every record. */
    KeptBatch one = {-1, NULL}, *open = &one;
    Py_ssize_t kept = 1;
    *wake = 0;
    if (count <= 0) return start;
    if (count > 1 && count <= MAX_KEPT_BATCHES) {
        if ((open = PyMem_Malloc((size_t)count * sizeof(KeptBatch))) == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        for (Py_ssize_t j = 0; j < count; j++) open[j] = one;
        kept = count;
    }
    for (; i < stop; i++) {
        LaneRecord r;
        if (!src->read(src->source, i, &r)) break;
        if (topic == NULL) topic = r.topic;
        else if (r.topic != topic) break;
        Py_ssize_t size = r.size, charge = r.value_len > 0 ? r.value_len : 0; /* value_charge */
        if (r.headers < 0 || size > self->max_record - WIDEST_GAP - HEADER_GAP * r.headers) break; /* maybe too large */
        if (!room_for(tally, tally->outstanding, tally->buffered_bytes, charge)) break;
        if (!PyLong_CheckExact(r.partition)) break;
        Py_ssize_t chosen = PyLong_AsSsize_t(r.partition), partition;
        if (chosen == -1 && PyErr_Occurred()) goto fail;
        int null_key = r.key == NULL ? r.kl < 0 : r.key == Py_None;
        int sticky = 0;
        if (chosen >= 0) {
            if (chosen >= count) break;
            partition = chosen;
        } else if (chosen < -1) {
            break;
        } else if (null_key) {
            if (self->sticky == Py_None) break;
            if (stick == NULL) {
                stick = Py_XNewRef(PyDict_GetItemWithError(self->sticky, topic));
                if (stick == NULL) {
                    if (PyErr_Occurred()) goto fail;
                    break;
                }
                if ((PyObject *)Py_TYPE(stick) != self->stick_type) break;
                PyObject *sp = SLOT(stick, self->off_stick_partition), *sn = SLOT(stick, self->off_stick_produced);
                PyObject *su = SLOT(stick, self->off_stick_until);
                stick_part = sp != NULL && PyLong_CheckExact(sp) ? PyLong_AsSsize_t(sp) : -1;
                produced0 = produced = sn != NULL && PyLong_CheckExact(sn) ? PyLong_AsSsize_t(sn) : -1;
                until = su != NULL && PyFloat_CheckExact(su) ? PyFloat_AS_DOUBLE(su) : -1.0; /* else: the Python path */
                if (PyErr_Occurred()) goto fail;
            }
            if (stick_part < 0 || stick_part >= count || produced < 0 || (produced > 0 && produced + size > self->sticky_size))
                break;
            if (now >= until) break; /* its time is up: the partitioner moves on */
            partition = stick_part;
            sticky = 1;
        } else if (self->key_hash != KEY_HASH_NONE) {
            if (r.key != NULL && !PyBytes_CheckExact(r.key)) break;
            const char *kp = r.key != NULL ? PyBytes_AS_STRING(r.key) : r.kp;
            Py_ssize_t kl = r.key != NULL ? PyBytes_GET_SIZE(r.key) : r.kl;
            if (count > 0x7FFFFFFF || (partition = lane_hash_span(self, kp, kl, count)) < 0) break;
        } else {
            if (self->keyed == Py_None || (r.key != NULL && !PyBytes_CheckExact(r.key))) break;
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
            PyObject *key = r.key != NULL ? Py_NewRef(r.key) : PyBytes_FromStringAndSize(r.kp, r.kl);
            if (key == NULL) goto fail;
            PyObject *kp = PyDict_GetItemWithError(known, key);
            Py_DECREF(key);
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
        KeptBatch *kb = kept > 1 ? &open[partition] : open;
        if (kb->partition != partition) {
            kb->partition = -1;
            int found = open_batch_find(self, topic, partition, size, &kb->batch);
            if (found < 0) goto fail;
            if (!found) break;
            kb->partition = partition;
        } else if (open_batch_room(kb->batch, size, self->batch_size) != BATCH_ROOM) {
            break; /* the Python path shuts it and opens one */
        }
        /* Every test passed: admit's and Accumulator.extend's moves. */
        OpenBatch *ob = kb->batch;
        Py_ssize_t entries = PyList_GET_SIZE(ob->messages);
        if (src->put(self, src->source, i, &r, ob, partition, chosen < 0) < 0) goto fail;
        if (PyList_GET_SIZE(ob->messages) == entries) ob->extra += 1; /* joined an entry holding many */
        tally->outstanding += 1;
        tally->buffered_bytes += charge;
        tally->queued += 1;
        if (sticky) produced += size;
        if (open_batch_joined(ob, size, self->batch_size, self->batch_count) == BATCH_FILLED) {
            *wake = 1; /* filled: the sender looks now */
            kb->partition = -1;
        }
    }
    if (0) {
fail:
        failed = 1;
    }
    /* The sticky state written back, whatever happened: the records appended are queued. */
    PyObject *exc_type, *exc_value, *exc_tb;
    PyErr_Fetch(&exc_type, &exc_value, &exc_tb);
    tally->served[SERVED_BULK] += tally->queued - queued0;
    int bad = 0;
    if (open != &one) PyMem_Free(open);
    if (!bad && stick != NULL && produced != produced0) {
        PyObject *n = PyLong_FromSsize_t(produced);
        if (n == NULL) bad = 1;
        else Py_SETREF(SLOT(stick, self->off_stick_produced), n);
    }
    Py_XDECREF(stick);
    Py_XDECREF(known);
    if (failed) {
        if (bad) PyErr_Clear();
        PyErr_Restore(exc_type, exc_value, exc_tb);
        return -1;
    }
    return bad ? -1 : i;
}

/* lane_queue(lane, records, start, stop, count, now) -> (next, wake): records[start:stop] (PendingMessages
 * of one topic with ``count`` partitions) into their open batches while each passes the tests
 * produce()'s lane makes, a sticky partition's time compared with ``now`` (the time the Python path
 * is given for them); ``next`` is the first one left to the Python path. Under the engine's lock. */
static PyObject *
lane_queue(PyObject *module, PyObject *args)
{
    Lane *self;
    PyObject *records;
    Py_ssize_t start, stop, count;
    double now;
    if (!PyArg_ParseTuple(args, "O!O!nnnd:lane_queue", &LaneType, &self, &PyList_Type, &records, &start, &stop, &count,
                          &now))
        return NULL;
    if (start < 0 || stop > PyList_GET_SIZE(records) || start > stop) {
        PyErr_SetString(PyExc_IndexError, "lane_queue: bad range");
        return NULL;
    }
    LaneSource src = {records, pending_read, pending_put};
    int wake;
    Py_ssize_t next = lane_run(self, &src, start, stop, count, now, &wake);
    if (next < 0) return NULL;
    return Py_BuildValue("(ni)", next, wake);
}

/* An Arrow batch's rows as lane_run reads them (arrow_rows.c): each appended as a row number to
 * the open batch's last entry when that is an ArrowRows of the same columns, else to a new one. */
static int
columns_read(void *source, Py_ssize_t i, LaneRecord *r)
{
    Columns *c = (Columns *)source;
    const char *vp;
    columns_row(c, i, &r->kp, &r->kl, &vp, &r->value_len);
    r->topic = c->topic;
    r->size = record_bound(r->kl, r->value_len, 0, 0);
    r->headers = 0;
    r->key = NULL;
    r->partition = minus_one;
    return 1;
}

static int
columns_put(Lane *self, void *source, Py_ssize_t i, const LaneRecord *rec, OpenBatch *ob, Py_ssize_t partition, int chosen)
{
    Columns *c = (Columns *)source;
    Py_ssize_t n = PyList_GET_SIZE(ob->messages);
    PyObject *last = n ? PyList_GET_ITEM(ob->messages, n - 1) : NULL;
    Rows *rows;
    if (last != NULL && Py_IS_TYPE(last, &RowsType) && ((Rows *)last)->columns == c) {
        rows = (Rows *)Py_NewRef(last);
    } else {
        PyObject *part = PyLong_FromSsize_t(partition);
        rows = part == NULL ? NULL : rows_new(c, part);
        Py_XDECREF(part);
        if (rows == NULL) return -1;
        if (PyList_Append(ob->messages, (PyObject *)rows) < 0) {
            Py_DECREF(rows);
            return -1;
        }
        ob->rows += 1;
    }
    int r = rows_push(rows, i, rec->size, rec->value_len);
    Py_DECREF(rows);
    return r;
}

/* lane_queue_rows(lane, columns, start, stop, count, now) -> (next, wake): lane_queue for the rows of
 * an ArrowColumns, as ArrowRows entries; ``columns.pending(next)`` is the row left to admit. */
static PyObject *
lane_queue_rows(PyObject *module, PyObject *args)
{
    Lane *self;
    Columns *columns;
    Py_ssize_t start, stop, count;
    double now;
    if (!PyArg_ParseTuple(args, "O!O!nnnd:lane_queue_rows", &LaneType, &self, &ColumnsType, &columns, &start, &stop,
                          &count, &now))
        return NULL;
    if (start < 0 || stop > columns->rows || start > stop) {
        PyErr_SetString(PyExc_IndexError, "lane_queue_rows: bad range");
        return NULL;
    }
    LaneSource src = {columns, columns_read, columns_put};
    int wake;
    Py_ssize_t next = lane_run(self, &src, start, stop, count, now, &wake);
    if (next < 0) return NULL;
    return Py_BuildValue("(ni)", next, wake);
}
