/* arrow_rows.c: ArrowColumns, ArrowRows: an Arrow batch's rows queued as row numbers into its columns, with
 * no PendingMessage and no bytes per row; the record loops (encode_records.c, delivery_reports.c) read them
 * from the columns' buffers. Pure-Python twin: the rows' PendingMessages (producer/pending.py) that expand() makes,
 * which the per-row path queues (tests/unit/producer/test_arrow_rows.py, tests/unit/producer/test_produce_bulk.py).
 *
 * Part of kafkawire._native, compiled as one unit by module.c (see its list for the order). */

/* ---- Arrow columns, and runs of their rows as batch entries ----------------------------- *
 * ArrowColumns holds one produce_arrow() call's value and key columns (their buffers, viewed
 * through the buffer protocol: they stay alive, and Arrow data does not change) and what every row
 * of the call shares: the topic, the delivery callback, the timestamp (one clock read) and the
 * enqueueing time. ArrowRows is one entry of a ProducerBatch's messages standing for several
 * records of one ArrowColumns, in order: the row numbers, their size bounds' sum and value bytes.
 * The batch's ``extra`` slot counts the records beyond one per entry. Any path that wants one
 * object per record (a failure, per-record callbacks, statistics) asks ``expand()``, which makes
 * the PendingMessages produce() would have made of those rows. */

/* The timestamp of a record given 0 ("now"): read once per call of the bulk builders (bulk_paths.c, ArrowColumns), so that
 * the records of one produce_batch() or Arrow batch share one clock read and one int. */
static PyObject *
now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return PyLong_FromLongLong((long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

/* One binary (or string) Arrow column, read through the buffer protocol. */
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


typedef struct {
    PyObject_HEAD
    ArrowColumn value, key;
    int have_value, have_key;
    Py_ssize_t rows;
    PyObject *topic, *callback, *timestamp, *enqueued;
    long long stamp;
} Columns;

typedef struct {
    PyObject_HEAD
    Columns *columns;
    PyObject *partition;
    Py_ssize_t *index; /* row numbers, in order */
    Py_ssize_t count, cap;
    Py_ssize_t size;        /* their size bounds' sum (record_bound each) */
    long long value_bytes;  /* their values' bytes */
} Rows;

static PyTypeObject ColumnsType, RowsType;

/* Row ``i``'s key and value as (pointer, length), length -1 when null. */
static inline void
columns_row(Columns *c, Py_ssize_t i, const char **kp, Py_ssize_t *kl, const char **vp, Py_ssize_t *vl)
{
    if (!c->have_key || !arrow_column_span(&c->key, i, kp, kl)) *kl = -1;
    if (!c->have_value || !arrow_column_span(&c->value, i, vp, vl)) *vl = -1;
}

/* arrow_columns(topic, rows, value, key, callback, now) -> ArrowColumns; ``value``/``key``: None
 * (all null) or (validity, offsets, data, offset, large), every offset checked against the data. */
static PyObject *
arrow_columns(PyObject *module, PyObject *args)
{
    PyObject *topic, *vspec, *kspec, *callback, *now;
    Py_ssize_t rows;
    if (!PyArg_ParseTuple(args, "UnOOOO!:arrow_columns", &topic, &rows, &vspec, &kspec, &callback, &PyFloat_Type, &now))
        return NULL;
    if (rows < 0) {
        PyErr_SetString(PyExc_ValueError, "rows must not be negative");
        return NULL;
    }
    Columns *c = PyObject_New(Columns, &ColumnsType);
    if (c == NULL) return NULL;
    memset(&c->value, 0, sizeof(c->value));
    memset(&c->key, 0, sizeof(c->key));
    c->have_value = c->have_key = 0;
    c->rows = rows;
    c->topic = Py_NewRef(topic);
    c->callback = Py_NewRef(callback);
    c->enqueued = Py_NewRef(now);
    c->timestamp = now_ms();
    if (c->timestamp == NULL) goto fail;
    c->stamp = PyLong_AsLongLong(c->timestamp);
    if (vspec != Py_None) {
        if (arrow_column_get(vspec, rows, &c->value) < 0) goto fail;
        c->have_value = 1;
    }
    if (kspec != Py_None) {
        if (arrow_column_get(kspec, rows, &c->key) < 0) goto fail;
        c->have_key = 1;
    }
    return (PyObject *)c;
fail:
    Py_DECREF(c);
    return NULL;
}

/* Row ``i`` as the PendingMessage produce() would make of it, its partition ``partition``. */
static PyObject *
columns_pending(Columns *c, Py_ssize_t i, PyObject *partition)
{
    PyObject *value = c->have_value ? arrow_column_cell(&c->value, i) : Py_NewRef(Py_None);
    PyObject *key = value == NULL ? NULL : c->have_key ? arrow_column_cell(&c->key, i) : Py_NewRef(Py_None);
    PyObject *msg = NULL;
    if (key != NULL) {
        PyObject *fields[9] = {c->topic, partition, key, value, Py_None, c->timestamp, c->callback, Py_None, c->enqueued};
        msg = pending_make(&PendingType, fields);
    }
    Py_XDECREF(value);
    Py_XDECREF(key);
    return msg;
}

static PyObject *minus_one;

/* pending(row) -> the row's PendingMessage, partition -1 (the lane left it to admit). */
static PyObject *
columns_pending_method(Columns *c, PyObject *arg)
{
    Py_ssize_t i = PyLong_AsSsize_t(arg);
    if (i == -1 && PyErr_Occurred()) return NULL;
    if (i < 0 || i >= c->rows) {
        PyErr_SetString(PyExc_IndexError, "no such row");
        return NULL;
    }
    return columns_pending(c, i, minus_one);
}

static void
columns_dealloc(Columns *c)
{
    if (c->have_value) arrow_column_release(&c->value);
    if (c->have_key) arrow_column_release(&c->key);
    Py_XDECREF(c->topic);
    Py_XDECREF(c->callback);
    Py_XDECREF(c->timestamp);
    Py_XDECREF(c->enqueued);
    PyObject_Del(c);
}

static PyMethodDef columns_methods[] = {
    {"pending", (PyCFunction)columns_pending_method, METH_O, "pending(row) -> the row's PendingMessage (partition -1)"},
    {NULL},
};

static PyMemberDef columns_members[] = {
    {"topic", T_OBJECT, offsetof(Columns, topic), READONLY, NULL},
    {"callback", T_OBJECT, offsetof(Columns, callback), READONLY, NULL},
    {"timestamp", T_OBJECT, offsetof(Columns, timestamp), READONLY, NULL},
    {"enqueued", T_OBJECT, offsetof(Columns, enqueued), READONLY, NULL},
    {"rows", T_PYSSIZET, offsetof(Columns, rows), READONLY, NULL},
    {NULL},
};

/* Not tracked by the cyclic collector, as PendingMessage (pending.c): user code never sees one. */
static PyTypeObject ColumnsType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "kafkawire._native.ArrowColumns",
    .tp_doc = "One produce_arrow() call's value and key columns and what its rows share.",
    .tp_basicsize = sizeof(Columns),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)columns_dealloc,
    .tp_methods = columns_methods,
    .tp_members = columns_members,
};

/* A new entry of ``c``'s rows for ``partition`` (an int), empty. */
static Rows *
rows_new(Columns *c, PyObject *partition)
{
    Rows *r = PyObject_New(Rows, &RowsType);
    if (r == NULL) return NULL;
    r->columns = (Columns *)Py_NewRef(c);
    r->partition = Py_NewRef(partition);
    r->index = NULL;
    r->count = r->cap = r->size = 0;
    r->value_bytes = 0;
    return r;
}

static int
rows_push(Rows *r, Py_ssize_t row, Py_ssize_t size, Py_ssize_t value_len)
{
    if (r->count == r->cap) {
        Py_ssize_t cap = r->cap ? 2 * r->cap : 64;
        Py_ssize_t *index = PyMem_Realloc(r->index, (size_t)cap * sizeof(Py_ssize_t));
        if (index == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        r->index = index;
        r->cap = cap;
    }
    r->index[r->count++] = row;
    r->size += size;
    if (value_len > 0) r->value_bytes += value_len;
    return 0;
}

/* expand() -> the entry's records as PendingMessages, in order. */
static PyObject *
rows_expand(Rows *r, PyObject *unused)
{
    PyObject *out = PyList_New(r->count);
    if (out == NULL) return NULL;
    for (Py_ssize_t j = 0; j < r->count; j++) {
        PyObject *msg = columns_pending(r->columns, r->index[j], r->partition);
        if (msg == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, j, msg);
    }
    return out;
}

/* rows() -> the row numbers, in order. */
static PyObject *
rows_rows(Rows *r, PyObject *unused)
{
    PyObject *out = PyList_New(r->count);
    if (out == NULL) return NULL;
    for (Py_ssize_t j = 0; j < r->count; j++) {
        PyObject *n = PyLong_FromSsize_t(r->index[j]);
        if (n == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, j, n);
    }
    return out;
}

static void
rows_dealloc(Rows *r)
{
    Py_XDECREF(r->columns);
    Py_XDECREF(r->partition);
    PyMem_Free(r->index);
    PyObject_Del(r);
}

static PyObject *
rows_get_topic(Rows *r, void *unused)
{
    return Py_NewRef(r->columns->topic);
}

static PyObject *
rows_get_callback(Rows *r, void *unused)
{
    return Py_NewRef(r->columns->callback);
}

static PyObject *
rows_get_enqueued(Rows *r, void *unused)
{
    return Py_NewRef(r->columns->enqueued);
}

static PyObject *
rows_get_timestamp(Rows *r, void *unused)
{
    return Py_NewRef(r->columns->timestamp);
}

static PyObject *
rows_get_future(Rows *r, void *unused)
{
    Py_RETURN_NONE;
}

static PyGetSetDef rows_getset[] = {
    {"topic", (getter)rows_get_topic, NULL, NULL, NULL},
    {"callback", (getter)rows_get_callback, NULL, NULL, NULL},
    {"enqueued", (getter)rows_get_enqueued, NULL, NULL, NULL},
    {"timestamp", (getter)rows_get_timestamp, NULL, NULL, NULL},
    {"future", (getter)rows_get_future, NULL, NULL, NULL},
    {NULL},
};

static PyMemberDef rows_members[] = {
    {"partition", T_OBJECT, offsetof(Rows, partition), READONLY, NULL},
    {"count", T_PYSSIZET, offsetof(Rows, count), READONLY, NULL},
    {"size", T_PYSSIZET, offsetof(Rows, size), READONLY, NULL},
    {"value_bytes", T_LONGLONG, offsetof(Rows, value_bytes), READONLY, NULL},
    {NULL},
};

static PyMethodDef rows_methods[] = {
    {"expand", (PyCFunction)rows_expand, METH_NOARGS, "expand() -> the records as PendingMessages, in order"},
    {"rows", (PyCFunction)rows_rows, METH_NOARGS, "rows() -> the row numbers, in order"},
    {NULL},
};

/* Not tracked by the cyclic collector, as PendingMessage (pending.c): user code never sees one. */
static PyTypeObject RowsType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "kafkawire._native.ArrowRows",
    .tp_doc = "Records of one ArrowColumns in one producer batch: a batch entry standing for several.",
    .tp_basicsize = sizeof(Rows),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)rows_dealloc,
    .tp_methods = rows_methods,
    .tp_members = rows_members,
    .tp_getset = rows_getset,
};
