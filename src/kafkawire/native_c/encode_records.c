/* encode_records.c: encode_records: a record batch's records in the v2 format, the GIL let go for large plain
 * batches. Pure-Python twin: records/batch.py (append_records; tests/unit/native_c/test_twins.py).
 *
 * Part of kafkawire._native, compiled as one unit by module.c (see its list for the order). */

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
    const char *key, *value; /* the bytes of the key and value, kept alive by ``hold`` */
    Py_ssize_t key_len, value_len; /* -1: null */
    PyObject *hold;          /* a new reference: the PendingMessage or the ArrowRows entry */
} Plain;

/* Records of at least this many bytes are written without the GIL (below, letting it go and
 * waiting for it again costs more than it frees). */
#define UNLOCKED_ENCODE_BYTES (64 * 1024)

static inline Py_ssize_t
plain_blob_len(Py_ssize_t len)
{
    return len < 0 ? 1 : varint_len(len) + len;
}

static inline void
plain_blob_put(Buf *b, const char *p, Py_ssize_t len)
{
    put_varint(b, len);
    if (len > 0) put_bytes(b, p, len);
}

/* The record's body size (after its length), as encode_one counts it. */
static inline Py_ssize_t
plain_size(const Plain *r, long long delta, long long index)
{
    return 1 + varint_len(delta) + varint_len(index) + plain_blob_len(r->key_len) + plain_blob_len(r->value_len) + 1;
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
        plain_blob_put(out, r->key, r->key_len);
        plain_blob_put(out, r->value, r->value_len);
        out->data[out->len++] = 0; /* no headers */
    }
}

static void
plain_release(Plain *recs, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++) Py_DECREF(recs[i].hold);
    PyMem_Free(recs);
}

/* The records ``seq``'s entries stand for: one per PendingMessage (or tuple), ``count`` per
 * ArrowRows (arrow_rows.c). */
static Py_ssize_t
entries_records(PyObject *seq, int *has_rows)
{
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq), records = 0;
    PyObject *const *items = PySequence_Fast_ITEMS(seq);
    *has_rows = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (Py_IS_TYPE(items[i], &RowsType)) {
            records += ((Rows *)items[i])->count;
            *has_rows = 1;
        } else {
            records++;
        }
    }
    return records;
}

/* The plain records of ``seq`` (``records`` of them), their timestamps and references taken: an
 * array, or NULL when one is not plain (the general path takes the call) or with an exception set.
 * An ArrowRows entry's records are read from its columns' buffers. */
static Plain *
plain_take(PyObject *seq, Py_ssize_t records)
{
    Plain *recs = PyMem_Malloc((size_t)(records ? records : 1) * sizeof(Plain));
    if (recs == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    Py_ssize_t i = 0, at = 0, n = PySequence_Fast_GET_SIZE(seq);
    PyObject *const *items = PySequence_Fast_ITEMS(seq);
    for (; i < n; i++) {
        PyObject *item = items[i];
        PENDING_PREFETCH(items, i, n, 16, 8);
        if (Py_IS_TYPE(item, &RowsType)) {
            Rows *r = (Rows *)item;
            Columns *c = r->columns;
            if (at + r->count > records) break;
            for (Py_ssize_t j = 0; j < r->count; j++) {
                Plain *p = &recs[at++];
                p->ts = c->stamp;
                columns_row(c, r->index[j], &p->key, &p->key_len, &p->value, &p->value_len);
                p->hold = Py_NewRef(item);
            }
            continue;
        }
        if (Py_TYPE(item) != &PendingType || at >= records) break;
        Pending *m = (Pending *)item;
        PyObject *key = m->key, *value = m->value, *headers = m->headers;
        if ((key != Py_None && !PyBytes_CheckExact(key)) || (value != Py_None && !PyBytes_CheckExact(value))) break;
        if (headers != Py_None && !(PyList_CheckExact(headers) && PyList_GET_SIZE(headers) == 0)) break;
        if (!PyLong_CheckExact(m->timestamp)) break;
        long long ts = int64_of(m->timestamp);
        if (ts == -1 && PyErr_Occurred()) break;
        Plain *p = &recs[at++];
        p->ts = ts;
        p->key = key == Py_None ? NULL : PyBytes_AS_STRING(key);
        p->key_len = key == Py_None ? -1 : PyBytes_GET_SIZE(key);
        p->value = value == Py_None ? NULL : PyBytes_AS_STRING(value);
        p->value_len = value == Py_None ? -1 : PyBytes_GET_SIZE(value);
        p->hold = Py_NewRef(item);
    }
    if (i < n || at != records) {
        plain_release(recs, at);
        return NULL;
    }
    return recs;
}

/* ``seq`` with each ArrowRows entry replaced by its records' PendingMessages (the general path). */
static PyObject *
entries_expanded(PyObject *seq)
{
    PyObject *out = PyList_New(0);
    if (out == NULL) return NULL;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        if (Py_IS_TYPE(item, &RowsType)) {
            PyObject *more = rows_expand((Rows *)item, NULL);
            Py_ssize_t at = PyList_GET_SIZE(out);
            int bad = more == NULL || PyList_SetSlice(out, at, at, more) < 0;
            Py_XDECREF(more);
            if (bad) goto fail;
        } else if (PyList_Append(out, item) < 0) {
            goto fail;
        }
    }
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

/* encode_records(buf, records, count, base_timestamp, max_timestamp, end=-1) -> (count, base, max, end)
 * Writes ``records`` ((timestamp_ms, key, value, headers) tuples, or PendingMessages) into the
 * bytearray ``buf`` at ``end`` (-1: its length), after ``count`` records, and returns where they end.
 * ``buf`` grows only when they do not fit: a spare buffer of an earlier batch is written over, not
 * allocated again (bytes past the new end are left as they were). Two passes, the first counting,
 * so that the records are written once, in place: no growing buffer, no copy into a bytes object. */
static PyObject *
encode_records(PyObject *module, PyObject *args)
{
    PyObject *buf, *records;
    long long count, base, top;
    Py_ssize_t end = -1;
    if (!PyArg_ParseTuple(args, "O!OLLL|n:encode_records", &PyByteArray_Type, &buf, &records, &count, &base, &top, &end))
        return NULL;
    Py_ssize_t had = PyByteArray_GET_SIZE(buf);
    if (end < 0 || end > had) end = had;
    PyObject *seq = PySequence_Fast(records, "records must be a sequence");
    if (seq == NULL) return NULL;
    Buf hdr = {NULL, 0, 0, 0};
    int has_rows;
    Py_ssize_t n = entries_records(seq, &has_rows), total = 0, start = end;
    Plain *plain = plain_take(seq, n);
    if (plain != NULL) {
        for (Py_ssize_t i = 0; i < n; i++) {
            long long index = count + i;
            if (index == 0) base = top = plain[i].ts;
            else if (plain[i].ts > top) top = plain[i].ts;
            Py_ssize_t size = plain_size(&plain[i], index ? plain[i].ts - base : 0, index);
            total += varint_len(size) + size;
        }
        if (start + total > had && PyByteArray_Resize(buf, start + total) < 0) {
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
        return Py_BuildValue("(LLLn)", count + n, base, top, start + total);
    }
    if (PyErr_Occurred()) goto fail;
    if (has_rows) { /* with records plain_take does not take: one object per record, then the general path */
        PyObject *expanded = entries_expanded(seq);
        if (expanded == NULL) goto fail;
        Py_SETREF(seq, expanded);
        n = PyList_GET_SIZE(seq);
    }
    long long c = count, b = base, t = top;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t len = encode_one(PySequence_Fast_GET_ITEM(seq, i), &c, &b, &t, &hdr, NULL);
        if (len < 0) goto fail;
        total += len;
    }
    if (start + total > had && PyByteArray_Resize(buf, start + total) < 0) goto fail;
    Buf out = {PyByteArray_AS_STRING(buf) + start, 0, total, 1};
    for (Py_ssize_t i = 0; i < n; i++) {
        if (encode_one(PySequence_Fast_GET_ITEM(seq, i), &count, &base, &top, &hdr, &out) < 0) {
            if (PyByteArray_GET_SIZE(buf) > had) PyByteArray_Resize(buf, had); /* its length as it was */
            goto fail;
        }
    }
    Py_DECREF(seq);
    PyMem_Free(hdr.data);
    return Py_BuildValue("(LLLn)", count, base, top, start + total);
fail:
    Py_DECREF(seq);
    PyMem_Free(hdr.data);
    return NULL;
}
