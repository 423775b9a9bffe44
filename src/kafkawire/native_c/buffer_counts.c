/* buffer_counts.c: BufferCounts: the producer's buffer counters as machine integers, the state the lane shares
 * with the engine and the accumulator. Pure-Python twin: core/buffer_counts.py (tests/unit/core/test_buffer_counts.py).
 *
 * Part of kafkawire._native, compiled as one unit by module.c (see its list for the order). */

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
