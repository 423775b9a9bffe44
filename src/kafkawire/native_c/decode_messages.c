/* decode_messages.c: decode_messages: a fetched batch's records as consumed Messages.
 * Pure-Python twin: consumer/decode.py (tests/unit/native_c/test_twins.py).
 *
 * Part of kafkawire._native, compiled as one unit by module.c (see its list for the order). */

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
