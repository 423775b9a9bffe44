/*
 * protocol_codec.c: encode_struct and decode_struct, the protocol codec's interpreter: they walk the
 * plan protocol/plan.py makes of a schema at a version (nested tuples: its Op and StructPlan).
 *
 * Pure-Python twin: protocol/codec.py (the encoders) and protocol/decoding.py (the decoders), both
 * compiled from the same plan; tests/unit/protocol/test_codec_twins.py holds the two equal over every
 * API at every version (the bytes, the decoded structs and their keys' order, the errors of damaged
 * input and of spent budgets).
 *
 * Decoding reads what any broker sends: every read is checked against the bytes left; an array's
 * count is checked against them, then charged to the DecodeBudget (through its own attributes and
 * take(), so its rules and messages stay the twin's), before its list is allocated; recursion
 * follows the plan, never the input. The GIL is kept: protocol messages are small, and most of the
 * work is making Python objects. A call is handed its plan and the types it makes and raises (its
 * "program", built once per schema and version by protocol/codec.py): nothing is kept between
 * calls.
 *
 * Part of kafkawire._native, compiled as one unit by module.c (see its list for the order).
 */

/* Plan.py's opcodes; the numbers come first (a kind below CODEC_BOOL is a fixed-size number). */
enum {
    CODEC_INT8, CODEC_INT16, CODEC_INT32, CODEC_INT64, CODEC_UINT16, CODEC_FLOAT64, CODEC_BOOL, CODEC_UUID,
    CODEC_STRING, CODEC_BYTES, CODEC_RECORDS, CODEC_STRUCT, CODEC_ARRAY, CODEC_KINDS
};
static const int codec_number_sizes[] = {1, 2, 4, 8, 2, 8};
static const char *const codec_kind_names[] = {"int8", "int16", "int32", "int64", "uint16", "float64", "bool",
                                               "uuid", "string", "bytes", "records", "struct", "array"};

static PyObject *codec_s_get, *codec_s_refer, *codec_s_bytes, *codec_s_encode, *codec_s_take, *codec_s_remaining,
    *codec_s_counts, *codec_uuid_kwnames;

static int
protocol_codec_init(void)
{
    PyObject **names[] = {&codec_s_get,  &codec_s_refer,     &codec_s_bytes, &codec_s_encode,
                          &codec_s_take, &codec_s_remaining, &codec_s_counts};
    const char *texts[] = {"get", "refer", "bytes", "encode", "take", "remaining", "counts"};
    for (int i = 0; i < 7; i++)
        if ((*names[i] = PyUnicode_InternFromString(texts[i])) == NULL) return -1;
    codec_uuid_kwnames = PyTuple_Pack(1, codec_s_bytes); /* uuid.UUID(bytes=...) */
    return codec_uuid_kwnames == NULL ? -1 : 0;
}

/* The program's second half: codec.py's _NATIVE_TYPES, in its order. */
typedef struct {
    PyObject *struct_type, *uuid_type, *frame_type, *struct_error, *decode_error, *unsupported;
    Py_ssize_t splice_min;
} CodecTypes;

/* One Op of the plan, unpacked. */
typedef struct {
    int kind, nullable, flexible;
    PyObject *where, *path, *sub, *cost; /* borrowed from the plan */
    Py_ssize_t min_size;
} CodecOp;

static int
codec_malformed(void)
{
    PyErr_SetString(PyExc_TypeError, "malformed protocol codec plan");
    return -1;
}

/* ``obj`` as a tuple of ``size`` items, else -1 (a plan that plan.py did not make). */
static int
codec_tuple(PyObject *obj, Py_ssize_t size)
{
    return PyTuple_Check(obj) && PyTuple_GET_SIZE(obj) == size ? 0 : codec_malformed();
}

static int
codec_program(PyObject *program, PyObject **plan, CodecTypes *t)
{
    if (codec_tuple(program, 2) < 0) return -1;
    PyObject *types = PyTuple_GET_ITEM(program, 1);
    if (codec_tuple(types, 7) < 0) return -1;
    *plan = PyTuple_GET_ITEM(program, 0);
    t->struct_type = PyTuple_GET_ITEM(types, 0);
    t->uuid_type = PyTuple_GET_ITEM(types, 1);
    t->frame_type = PyTuple_GET_ITEM(types, 2);
    t->splice_min = PyLong_AsSsize_t(PyTuple_GET_ITEM(types, 3));
    t->struct_error = PyTuple_GET_ITEM(types, 4);
    t->decode_error = PyTuple_GET_ITEM(types, 5);
    t->unsupported = PyTuple_GET_ITEM(types, 6);
    if (t->splice_min == -1 && PyErr_Occurred()) return -1;
    if (!PyType_Check(t->struct_type) || !PyType_IsSubtype((PyTypeObject *)t->struct_type, &PyDict_Type))
        return codec_malformed();
    return 0;
}

static int
codec_read_op(PyObject *obj, CodecOp *op)
{
    if (codec_tuple(obj, 8) < 0) return -1;
    long kind = PyLong_AsLong(PyTuple_GET_ITEM(obj, 0));
    if (kind < 0 || kind >= CODEC_KINDS) return PyErr_Occurred() ? -1 : codec_malformed();
    op->kind = (int)kind;
    if ((op->nullable = PyObject_IsTrue(PyTuple_GET_ITEM(obj, 1))) < 0) return -1;
    if ((op->flexible = PyObject_IsTrue(PyTuple_GET_ITEM(obj, 2))) < 0) return -1;
    op->where = PyTuple_GET_ITEM(obj, 3);
    op->path = PyTuple_GET_ITEM(obj, 4);
    op->sub = PyTuple_GET_ITEM(obj, 5);
    op->cost = PyTuple_GET_ITEM(obj, 6);
    op->min_size = 0;
    if (kind == CODEC_ARRAY) {
        op->min_size = PyLong_AsSsize_t(PyTuple_GET_ITEM(obj, 7));
        if (op->min_size < 1) return PyErr_Occurred() ? -1 : codec_malformed(); /* it divides */
    }
    return 0;
}

/* A StructPlan's six members, each a tuple (flexible is read as a truth value). */
static int
codec_read_struct_plan(PyObject *plan, int *flexible, PyObject **members)
{
    if (codec_tuple(plan, 6) < 0) return -1;
    if ((*flexible = PyObject_IsTrue(PyTuple_GET_ITEM(plan, 0))) < 0) return -1;
    for (int i = 1; i < 6; i++) {
        members[i] = PyTuple_GET_ITEM(plan, i);
        if (!PyTuple_Check(members[i])) return codec_malformed();
    }
    return 0;
}

enum { CODEC_FIELDS = 1, CODEC_ABSENT, CODEC_TAGGED, CODEC_CONSTANTS, CODEC_FRESH };

/* ---- encoding ------------------------------------------------------------------------- */

/* The bytes being encoded, gathered here and appended to ``out`` at the end (a bytearray grows to
 * the exact size asked for each time it is outgrown: a field at a time, nearly every write moved it)
 * and before a Frame.refer, which places a buffer at the frame's end. A long value goes to ``out``
 * directly, not copied twice. */
typedef struct {
    PyObject *out; /* NULL: a tagged field's bytes, measured before they are written */
    char *data;
    Py_ssize_t len, cap;
    char stack[512];
} CodecWriter;

#define CODEC_DIRECT 1024 /* a write this long goes straight to out */

static void
codec_writer_init(CodecWriter *w, PyObject *out)
{
    w->out = out;
    w->data = w->stack;
    w->len = 0;
    w->cap = sizeof w->stack;
}

static void
codec_writer_free(CodecWriter *w)
{
    if (w->data != w->stack) PyMem_Free(w->data);
}

static int
codec_append(PyObject *out, const void *data, Py_ssize_t n)
{
    Py_ssize_t size = PyByteArray_GET_SIZE(out);
    if (n > PY_SSIZE_T_MAX - size) {
        PyErr_NoMemory();
        return -1;
    }
    if (PyByteArray_Resize(out, size + n) < 0) return -1;
    if (n) memcpy(PyByteArray_AS_STRING(out) + size, data, (size_t)n);
    return 0;
}

static int
codec_flush(CodecWriter *w)
{
    if (w->len == 0) return 0;
    if (codec_append(w->out, w->data, w->len) < 0) return -1;
    w->len = 0;
    return 0;
}

static int
codec_write(CodecWriter *w, const void *data, Py_ssize_t n)
{
    if (n >= CODEC_DIRECT && w->out != NULL) return codec_flush(w) < 0 ? -1 : codec_append(w->out, data, n);
    if (n > w->cap - w->len) {
        if (n > PY_SSIZE_T_MAX / 2 - w->len) {
            PyErr_NoMemory();
            return -1;
        }
        Py_ssize_t cap = (w->len + n) * 2;
        char *grown = w->data == w->stack ? PyMem_Malloc((size_t)cap) : PyMem_Realloc(w->data, (size_t)cap);
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        if (w->data == w->stack) memcpy(grown, w->stack, (size_t)w->len);
        w->data = grown;
        w->cap = cap;
    }
    memcpy(w->data + w->len, data, (size_t)n);
    w->len += n;
    return 0;
}

static int
codec_write_uvarint(CodecWriter *out, uint64_t value)
{
    unsigned char b[10];
    int n = 0;
    for (; value >= 0x80; value >>= 7) b[n++] = (unsigned char)(value | 0x80);
    b[n++] = (unsigned char)value;
    return codec_write(out, b, n);
}

static int
codec_write_be(CodecWriter *out, uint64_t value, int size)
{
    unsigned char b[8];
    for (int i = size - 1; i >= 0; i--, value >>= 8) b[i] = (unsigned char)value;
    return codec_write(out, b, size);
}

/* A number as struct.pack(">b" ... ">d") writes it, raising struct.error where it does. */
static int
codec_write_number(CodecTypes *t, CodecWriter *out, int kind, PyObject *value)
{
    if (kind == CODEC_FLOAT64) {
        unsigned char b[8];
        double x = PyFloat_AsDouble(value);
        if (x == -1.0 && PyErr_Occurred()) {
            PyErr_SetString(t->struct_error, "required argument is not a float");
            return -1;
        }
        if (PyFloat_Pack8(x, (char *)b, 0) < 0) return -1;
        return codec_write(out, b, 8);
    }
    PyObject *index;
    if (PyLong_Check(value))
        index = Py_NewRef(value);
    else if (PyIndex_Check(value)) {
        if ((index = PyNumber_Index(value)) == NULL) return -1;
    } else {
        PyErr_SetString(t->struct_error, "required argument is not an integer");
        return -1;
    }
    int overflow;
    long long x = PyLong_AsLongLongAndOverflow(index, &overflow);
    Py_DECREF(index);
    if (x == -1 && PyErr_Occurred()) return -1;
    static const long long lows[] = {-128, -32768, INT32_MIN, 0, 0};
    static const long long highs[] = {127, 32767, INT32_MAX, 0, 65535};
    if (overflow) {
        PyErr_SetString(t->struct_error, kind == CODEC_INT64 ? "int too large to convert" : "argument out of range");
        return -1;
    }
    if (kind != CODEC_INT64 && (x < lows[kind] || x > highs[kind])) {
        PyErr_Format(t->struct_error, "'%s' format requires %lld <= number <= %lld", codec_kind_names[kind], lows[kind],
                     highs[kind]);
        return -1;
    }
    return codec_write_be(out, (uint64_t)x, codec_number_sizes[kind]);
}

/* A length or count: compact, a varint of n + 1; else an int16 (strings) or int32. */
static int
codec_write_length(CodecTypes *t, CodecWriter *out, Py_ssize_t n, int flexible, int is_short)
{
    if (flexible) return codec_write_uvarint(out, (uint64_t)n + 1);
    long long high = is_short ? 32767 : INT32_MAX;
    if (n > high) {
        PyErr_Format(t->struct_error, "'%c' format requires %lld <= number <= %lld", is_short ? 'h' : 'i', -high - 1,
                     high);
        return -1;
    }
    return codec_write_be(out, (uint64_t)n, is_short ? 2 : 4);
}

static int
codec_null_error(CodecTypes *t, PyObject *where)
{
    PyErr_Format(t->unsupported, "%U cannot be null in this version", where);
    return -1;
}

/* A null of a string, bytes or array: a zero varint compact, else a length of -1. */
static int
codec_write_null(CodecTypes *t, CodecOp *op, CodecWriter *out)
{
    if (!op->nullable) return codec_null_error(t, op->where);
    if (op->flexible) return codec_write(out, "\0", 1);
    return codec_write(out, "\xff\xff\xff\xff", op->kind == CODEC_STRING ? 2 : 4);
}

/* Bytes, records, or a string as str.encode() gives it; a records value of splice_min bytes or
 * more goes into a Frame by reference (Frame.refer), as the twin's _bytes_encoder places it. */
static int
codec_write_bytes(CodecTypes *t, CodecOp *op, CodecWriter *out, PyObject *value)
{
    if (value == Py_None) return codec_write_null(t, op, out);
    int is_short = op->kind == CODEC_STRING;
    if (is_short && PyUnicode_CheckExact(value)) {
        Py_ssize_t n;
        const char *text = PyUnicode_AsUTF8AndSize(value, &n);
        if (text == NULL || codec_write_length(t, out, n, op->flexible, 1) < 0) return -1;
        return codec_write(out, text, n);
    }
    PyObject *encoded = is_short ? PyObject_CallMethodNoArgs(value, codec_s_encode) : Py_NewRef(value);
    if (encoded == NULL) return -1;
    int rc = -1;
    if (encoded == Py_None) { /* what encode() gave is written as the twin writes it */
        rc = codec_write_null(t, op, out);
        goto done;
    }
    Py_ssize_t n = PyObject_Size(encoded);
    if (n < 0 || codec_write_length(t, out, n, op->flexible, is_short) < 0) goto done;
    if (op->kind == CODEC_RECORDS && n >= t->splice_min && out->out != NULL) {
        int frame = PyObject_IsInstance(out->out, t->frame_type);
        if (frame < 0) goto done;
        if (frame) {
            PyObject *res = codec_flush(out) < 0 ? NULL : PyObject_CallMethodOneArg(out->out, codec_s_refer, encoded);
            rc = res == NULL ? -1 : 0;
            Py_XDECREF(res);
            goto done;
        }
    }
    Py_buffer view;
    if (PyObject_GetBuffer(encoded, &view, PyBUF_SIMPLE) < 0) goto done;
    rc = codec_write(out, view.buf, view.len);
    PyBuffer_Release(&view);
done:
    Py_DECREF(encoded);
    return rc;
}

static int
codec_write_uuid(CodecTypes *t, CodecWriter *out, PyObject *value)
{
    int is_uuid = PyObject_IsInstance(value, t->uuid_type);
    if (is_uuid < 0) return -1;
    PyObject *raw = is_uuid ? PyObject_GetAttr(value, codec_s_bytes)
                            : PyObject_CallOneArg((PyObject *)&PyBytes_Type, value); /* bytes(value) */
    if (raw == NULL) return -1;
    Py_buffer view;
    int rc = PyObject_GetBuffer(raw, &view, PyBUF_SIMPLE);
    if (rc == 0) {
        rc = codec_write(out, view.buf, view.len);
        PyBuffer_Release(&view);
    }
    Py_DECREF(raw);
    return rc;
}

static int codec_encode_struct(CodecTypes *t, PyObject *plan, CodecWriter *out, PyObject *obj);

static int
codec_encode_value(CodecTypes *t, PyObject *op_obj, CodecWriter *out, PyObject *value)
{
    CodecOp op;
    if (codec_read_op(op_obj, &op) < 0) return -1;
    switch (op.kind) {
    case CODEC_BOOL: {
        int truth = PyObject_IsTrue(value);
        return truth < 0 ? -1 : codec_write(out, truth ? "\x01" : "\0", 1);
    }
    case CODEC_UUID:
        return codec_write_uuid(t, out, value);
    case CODEC_STRING:
    case CODEC_BYTES:
    case CODEC_RECORDS:
        return codec_write_bytes(t, &op, out, value);
    case CODEC_STRUCT:
        if (op.nullable) { /* behind an int8 marker: -1 null, 1 present */
            if (value == Py_None) return codec_write(out, "\xff", 1);
            if (codec_write(out, "\x01", 1) < 0) return -1;
        }
        return codec_encode_struct(t, op.sub, out, value);
    case CODEC_ARRAY: {
        if (value == Py_None) return codec_write_null(t, &op, out);
        Py_ssize_t n = PyObject_Size(value);
        if (n < 0 || codec_write_length(t, out, n, op.flexible, 0) < 0) return -1;
        PyObject *items = PySequence_Fast(value, "an array's value must be iterable");
        if (items == NULL) return -1;
        /* the size is read again each turn: an element's encoding may run Python code */
        for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(items); i++) {
            PyObject *item = Py_NewRef(PySequence_Fast_GET_ITEM(items, i));
            int rc = codec_encode_value(t, op.sub, out, item);
            Py_DECREF(item);
            if (rc < 0) {
                Py_DECREF(items);
                return -1;
            }
        }
        Py_DECREF(items);
        return 0;
    }
    default:
        return codec_write_number(t, out, op.kind, value);
    }
}

/* obj.get(name, default), without the call for a dict or Struct; ``get``: obj's bound get
 * otherwise (NULL: obj is None, read as {}). */
static PyObject *
codec_field(PyObject *obj, PyObject *get, PyObject *name, PyObject *dflt)
{
    if (get != NULL) return PyObject_CallFunctionObjArgs(get, name, dflt, NULL);
    if (obj != Py_None) {
        PyObject *value = PyDict_GetItemWithError(obj, name);
        if (value != NULL) return Py_NewRef(value);
        if (PyErr_Occurred()) return NULL;
    }
    return Py_NewRef(dflt);
}

/* The tagged fields whose values differ from their defaults, in tag order: their count, then each
 * as tag, size and bytes (encoded apart first, to know the size). */
static int
codec_encode_tagged(CodecTypes *t, PyObject *tagged, CodecWriter *out, PyObject *obj, PyObject *get)
{
    PyObject *present = NULL; /* [(tag, bytes)], made at the first */
    Py_ssize_t n = PyTuple_GET_SIZE(tagged);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *entry = PyTuple_GET_ITEM(tagged, i);
        if (codec_tuple(entry, 4) < 0) goto fail;
        PyObject *dflt = PyTuple_GET_ITEM(entry, 2);
        PyObject *value = codec_field(obj, get, PyTuple_GET_ITEM(entry, 1), dflt);
        if (value == NULL) goto fail;
        int differs = PyObject_RichCompareBool(value, dflt, Py_NE);
        PyObject *pair = NULL;
        if (differs > 0 && (present != NULL || (present = PyList_New(0)) != NULL)) {
            CodecWriter field; /* not the frame's: a records value in it is copied, as in the twin */
            codec_writer_init(&field, NULL);
            if (codec_encode_value(t, PyTuple_GET_ITEM(entry, 3), &field, value) == 0)
                pair = Py_BuildValue("(Oy#)", PyTuple_GET_ITEM(entry, 0), field.data, field.len);
            codec_writer_free(&field);
        }
        Py_DECREF(value);
        if (differs < 0 || (differs > 0 && pair == NULL)) goto fail;
        if (pair != NULL) {
            int rc = PyList_Append(present, pair);
            Py_DECREF(pair);
            if (rc < 0) goto fail;
        }
    }
    Py_ssize_t count = present == NULL ? 0 : PyList_GET_SIZE(present);
    if (codec_write_uvarint(out, (uint64_t)count) < 0) goto fail;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *pair = PyList_GET_ITEM(present, i), *bytes = PyTuple_GET_ITEM(pair, 1);
        unsigned long long tag = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(pair, 0));
        if (tag == (unsigned long long)-1 && PyErr_Occurred()) goto fail;
        if (codec_write_uvarint(out, tag) < 0 || codec_write_uvarint(out, (uint64_t)PyBytes_GET_SIZE(bytes)) < 0
            || codec_write(out, PyBytes_AS_STRING(bytes), PyBytes_GET_SIZE(bytes)) < 0)
            goto fail;
    }
    Py_XDECREF(present);
    return 0;
fail:
    Py_XDECREF(present);
    return -1;
}

static int
codec_encode_struct(CodecTypes *t, PyObject *plan, CodecWriter *out, PyObject *obj)
{
    int flexible;
    PyObject *m[6];
    if (codec_read_struct_plan(plan, &flexible, m) < 0) return -1;
    PyObject *get = NULL; /* obj.get when obj is not a dict or Struct (whose get the twin calls) */
    if (obj != Py_None && !PyDict_CheckExact(obj) && Py_TYPE(obj) != (PyTypeObject *)t->struct_type
        && (get = PyObject_GetAttr(obj, codec_s_get)) == NULL)
        return -1;
    PyObject *fields = m[CODEC_FIELDS], *absent = m[CODEC_ABSENT];
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(fields); i++) {
        PyObject *entry = PyTuple_GET_ITEM(fields, i);
        if (codec_tuple(entry, 3) < 0) goto fail;
        PyObject *value = codec_field(obj, get, PyTuple_GET_ITEM(entry, 0), PyTuple_GET_ITEM(entry, 1));
        if (value == NULL) goto fail;
        int rc = codec_encode_value(t, PyTuple_GET_ITEM(entry, 2), out, value);
        Py_DECREF(value);
        if (rc < 0) goto fail;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(absent); i++) { /* fields the version lacks: at their default */
        PyObject *entry = PyTuple_GET_ITEM(absent, i);
        if (codec_tuple(entry, 3) < 0) goto fail;
        PyObject *dflt = PyTuple_GET_ITEM(entry, 1);
        PyObject *value = codec_field(obj, get, PyTuple_GET_ITEM(entry, 0), dflt);
        if (value == NULL) goto fail;
        int differs = PyObject_RichCompareBool(value, dflt, Py_NE);
        Py_DECREF(value);
        if (differs < 0) goto fail;
        if (differs) {
            PyErr_SetObject(t->unsupported, PyTuple_GET_ITEM(entry, 2));
            goto fail;
        }
    }
    if (flexible && codec_encode_tagged(t, m[CODEC_TAGGED], out, obj, get) < 0) goto fail;
    Py_XDECREF(get);
    return 0;
fail:
    Py_XDECREF(get);
    return -1;
}

/* ---- decoding ------------------------------------------------------------------------- */

typedef struct {
    const unsigned char *buf;
    Py_ssize_t len;
    PyObject *source; /* the buffer's object: records are slices of it when it is a memoryview */
    PyObject *budget;
    CodecTypes *t;
} CodecReader;

/* pos is never negative (decode_struct refuses it) but may pass len when the caller's did:
 * "need bytes at pos" is then pos > len - need, false for every need. */
static int
codec_short(CodecReader *r, Py_ssize_t pos, Py_ssize_t need, const char *what)
{
    if (pos <= r->len - need) return 0;
    PyErr_Format(r->t->decode_error, "truncated %s", what);
    return -1;
}

/* An unsigned varint of at most ``max_bytes`` bytes, as primitives.decode_uvarint reads it; *big
 * set when its value passes 64 bits (a ten-byte one can: the twin's ints have no bound). */
static int
codec_read_uvarint(CodecReader *r, Py_ssize_t *pos, int max_bytes, uint64_t *out, int *big)
{
    uint64_t value = 0;
    *big = 0;
    for (int i = 0; i < max_bytes; i++) {
        if (*pos >= r->len) {
            PyErr_SetString(r->t->decode_error, "truncated varint");
            return -1;
        }
        unsigned char b = r->buf[(*pos)++];
        if (i == 9 && (b & 0x7F) > 1) *big = 1;
        value |= (uint64_t)(b & 0x7F) << (7 * i);
        if (!(b & 0x80)) {
            *out = value;
            return 0;
        }
    }
    PyErr_Format(r->t->decode_error, "varint longer than %d bytes", max_bytes);
    return -1;
}

/* A length or count (-1: null), checked against the bytes left, as decoding.py's _read_length. */
static int
codec_read_length(CodecReader *r, Py_ssize_t *pos, int flexible, int is_short, Py_ssize_t *n)
{
    long long length;
    const unsigned char *p = r->buf + *pos;
    if (flexible) {
        uint64_t raw;
        int big;
        if (*pos < r->len && *p < 0x80) { /* one byte: nearly every length */
            length = (long long)*p - 1;
            ++*pos;
        } else if (codec_read_uvarint(r, pos, 5, &raw, &big) < 0)
            return -1;
        else
            length = (long long)raw - 1;
    } else if (is_short) {
        if (codec_short(r, *pos, 2, "length") < 0) return -1;
        length = (int16_t)(uint16_t)((p[0] << 8) | p[1]);
        *pos += 2;
    } else {
        if (codec_short(r, *pos, 4, "length") < 0) return -1;
        length = (int32_t)(((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3]);
        *pos += 4;
    }
    if (length < -1) {
        PyErr_Format(r->t->decode_error, "negative length %lld", length);
        return -1;
    }
    if (length > r->len - *pos) {
        PyErr_Format(r->t->decode_error, "length %lld exceeds the %zd bytes left", length, r->len - *pos);
        return -1;
    }
    *n = (Py_ssize_t)length;
    return 0;
}

static PyObject *
codec_read_number(CodecReader *r, int kind, Py_ssize_t *pos)
{
    int size = codec_number_sizes[kind];
    if (codec_short(r, *pos, size, codec_kind_names[kind]) < 0) return NULL;
    const unsigned char *p = r->buf + *pos;
    *pos += size;
    uint64_t v = 0;
    for (int i = 0; i < size; i++) v = (v << 8) | p[i];
    switch (kind) {
    case CODEC_INT8:
        return PyLong_FromLong((int8_t)(uint8_t)v);
    case CODEC_INT16:
        return PyLong_FromLong((int16_t)(uint16_t)v);
    case CODEC_UINT16:
        return PyLong_FromLong((long)v);
    case CODEC_INT32:
        return PyLong_FromLong((int32_t)(uint32_t)v);
    case CODEC_INT64:
        return PyLong_FromLongLong((int64_t)v);
    default: {
        double x = PyFloat_Unpack8((const char *)p, 0);
        return x == -1.0 && PyErr_Occurred() ? NULL : PyFloat_FromDouble(x);
    }
    }
}

/* Charge ``n`` elements of ``cost`` bytes at ``path`` to the budget, as decoding.py's _take: its
 * common case here, the refusal (and its message) by DecodeBudget.take. */
static int
codec_take(CodecReader *r, PyObject *path, Py_ssize_t n, PyObject *cost)
{
    PyObject *budget = r->budget, *count, *amount = NULL, *counts = NULL, *remaining = NULL, *most = NULL,
             *left = NULL;
    int rc = -1, over;
    if ((count = PyLong_FromSsize_t(n)) == NULL || (amount = PyNumber_Multiply(count, cost)) == NULL
        || (counts = PyObject_GetAttr(budget, codec_s_counts)) == NULL
        || (remaining = PyObject_GetAttr(budget, codec_s_remaining)) == NULL
        || (over = PyObject_RichCompareBool(amount, remaining, Py_GT)) < 0)
        goto done;
    if (!over && counts != Py_None) {
        if ((most = PyObject_CallMethodObjArgs(counts, codec_s_get, path, count, NULL)) == NULL
            || (over = PyObject_RichCompareBool(count, most, Py_GT)) < 0)
            goto done;
    }
    if (over) {
        PyObject *res = PyObject_CallMethodObjArgs(budget, codec_s_take, path, count, cost, NULL); /* raises */
        if (res == NULL) goto done;
        Py_DECREF(res);
        Py_SETREF(remaining, PyObject_GetAttr(budget, codec_s_remaining));
        if (remaining == NULL) goto done;
    }
    if ((left = PyNumber_Subtract(remaining, amount)) == NULL || PyObject_SetAttr(budget, codec_s_remaining, left) < 0)
        goto done;
    rc = 0;
done:
    Py_XDECREF(count);
    Py_XDECREF(amount);
    Py_XDECREF(counts);
    Py_XDECREF(remaining);
    Py_XDECREF(most);
    Py_XDECREF(left);
    return rc;
}

static PyObject *codec_decode_struct(CodecReader *r, PyObject *plan, Py_ssize_t *pos);
static PyObject *codec_decode_value(CodecReader *r, PyObject *op_obj, Py_ssize_t *pos);

/* An array: its count checked against the bytes left (``min_size`` each), then charged, then its
 * list allocated and filled. */
static PyObject *
codec_decode_array(CodecReader *r, CodecOp *op, Py_ssize_t *pos)
{
    Py_ssize_t n;
    CodecOp element;
    if (codec_read_length(r, pos, op->flexible, 0, &n) < 0) return NULL;
    if (n == -1) {
        if (op->nullable) Py_RETURN_NONE;
        PyErr_SetString(r->t->decode_error, "null array where none is allowed");
        return NULL;
    }
    if (codec_read_op(op->sub, &element) < 0) return NULL;
    int numbers = element.kind < CODEC_BOOL;
    if (n > (r->len - *pos) / op->min_size) {
        PyErr_Format(r->t->decode_error, "%zd elements of %s%zd bytes exceed the %zd left", n,
                     numbers ? "" : "at least ", op->min_size, r->len - *pos);
        return NULL;
    }
    if (n && codec_take(r, op->path, n, op->cost) < 0) return NULL;
    PyObject *items = PyList_New(n);
    if (items == NULL) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = numbers ? codec_read_number(r, element.kind, pos) : codec_decode_value(r, op->sub, pos);
        if (item == NULL) {
            Py_DECREF(items);
            return NULL;
        }
        PyList_SET_ITEM(items, i, item);
    }
    return items;
}

static PyObject *
codec_decode_value(CodecReader *r, PyObject *op_obj, Py_ssize_t *pos)
{
    CodecOp op;
    Py_ssize_t n;
    if (codec_read_op(op_obj, &op) < 0) return NULL;
    switch (op.kind) {
    case CODEC_BOOL:
        if (codec_short(r, *pos, 1, "bool") < 0) return NULL;
        return PyBool_FromLong(r->buf[(*pos)++] != 0);
    case CODEC_UUID: {
        if (codec_short(r, *pos, 16, "uuid") < 0) return NULL;
        PyObject *raw = PyBytes_FromStringAndSize((const char *)r->buf + *pos, 16);
        if (raw == NULL) return NULL;
        *pos += 16;
        PyObject *args[] = {raw};
        PyObject *value = PyObject_Vectorcall(r->t->uuid_type, args, 0, codec_uuid_kwnames);
        Py_DECREF(raw);
        return value;
    }
    case CODEC_STRING:
    case CODEC_BYTES:
    case CODEC_RECORDS: {
        if (codec_read_length(r, pos, op.flexible, op.kind == CODEC_STRING, &n) < 0) return NULL;
        if (n == -1) {
            if (op.nullable) Py_RETURN_NONE;
            if (op.kind == CODEC_RECORDS)
                PyErr_SetString(r->t->decode_error, "null records where none are allowed");
            else
                PyErr_Format(r->t->decode_error, "null %s where none is allowed", codec_kind_names[op.kind]);
            return NULL;
        }
        const char *start = (const char *)r->buf + *pos;
        PyObject *value;
        if (op.kind == CODEC_STRING)
            value = PyUnicode_DecodeUTF8(start, n, NULL); /* strict: bad UTF-8 raises, as bytes.decode() */
        else if (op.kind == CODEC_RECORDS && Py_IS_TYPE(r->source, &PyMemoryView_Type))
            value = PySequence_GetSlice(r->source, *pos, *pos + n); /* a view into the answer */
        else
            value = PyBytes_FromStringAndSize(start, n);
        if (value != NULL) *pos += n;
        return value;
    }
    case CODEC_STRUCT:
        if (op.nullable) {
            if (*pos >= r->len) {
                PyErr_SetString(r->t->decode_error, "a nullable struct's marker is missing");
                return NULL;
            }
            if (r->buf[(*pos)++] >= 0x80) Py_RETURN_NONE; /* a negative int8 means null, as Kafka reads it */
        }
        return codec_decode_struct(r, op.sub, pos);
    case CODEC_ARRAY:
        return codec_decode_array(r, &op, pos);
    default:
        return codec_read_number(r, op.kind, pos);
    }
}

/* The tagged fields after a flexible struct's others: unknown tags skipped, a known one read whole
 * from its place (it may not end short of its size). */
static int
codec_decode_tagged(CodecReader *r, PyObject *tagged, PyObject *obj, Py_ssize_t *pos)
{
    uint64_t count, tag, size;
    int big, tag_big, size_big;
    if (codec_read_uvarint(r, pos, 10, &count, &big) < 0) return -1;
    /* a count past 64 bits runs as the twin's does: until the bytes run out (each takes two) */
    for (uint64_t i = 0; big || i < count; i++) {
        if (codec_read_uvarint(r, pos, 10, &tag, &tag_big) < 0 || codec_read_uvarint(r, pos, 10, &size, &size_big) < 0)
            return -1;
        if (size_big || size > (uint64_t)(r->len - *pos)) {
            PyErr_Format(r->t->decode_error, "tagged field %llu overruns the message", (unsigned long long)tag);
            return -1;
        }
        Py_ssize_t end = *pos + (Py_ssize_t)size;
        for (Py_ssize_t j = 0; !tag_big && j < PyTuple_GET_SIZE(tagged); j++) {
            PyObject *entry = PyTuple_GET_ITEM(tagged, j);
            if (codec_tuple(entry, 4) < 0) return -1;
            unsigned long long known = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(entry, 0));
            if (known == (unsigned long long)-1 && PyErr_Occurred()) return -1;
            if (known != tag) continue;
            Py_ssize_t stop = *pos;
            PyObject *name = PyTuple_GET_ITEM(entry, 1);
            PyObject *value = codec_decode_value(r, PyTuple_GET_ITEM(entry, 3), &stop);
            if (value == NULL) return -1;
            int rc = PyDict_SetItem(obj, name, value);
            Py_DECREF(value);
            if (rc < 0) return -1;
            if (stop != end) {
                PyErr_Format(r->t->decode_error, "tagged field %U has %zd stray bytes", name, end - stop);
                return -1;
            }
            break;
        }
        *pos = end;
    }
    return 0;
}

/* ``entries``: (name, value) pairs, or (name, maker) ones when ``make``, into obj. */
static int
codec_fill(PyObject *obj, PyObject *entries, int make)
{
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(entries); i++) {
        PyObject *entry = PyTuple_GET_ITEM(entries, i);
        if (codec_tuple(entry, 2) < 0) return -1;
        PyObject *value = PyTuple_GET_ITEM(entry, 1);
        if (make && (value = PyObject_CallNoArgs(value)) == NULL) return -1;
        int rc = PyDict_SetItem(obj, PyTuple_GET_ITEM(entry, 0), value);
        if (make) Py_DECREF(value);
        if (rc < 0) return -1;
    }
    return 0;
}

/* A Struct whose keys come in the twin's order: the defaults (shared, then made), the fields read,
 * the tagged ones taking their defaults' places. */
static PyObject *
codec_decode_struct(CodecReader *r, PyObject *plan, Py_ssize_t *pos)
{
    int flexible;
    PyObject *m[6];
    if (codec_read_struct_plan(plan, &flexible, m) < 0) return NULL;
    PyObject *obj = PyObject_CallNoArgs(r->t->struct_type);
    if (obj == NULL) return NULL;
    if (!PyDict_Check(obj)) {
        codec_malformed();
        goto fail;
    }
    if (codec_fill(obj, m[CODEC_CONSTANTS], 0) < 0 || codec_fill(obj, m[CODEC_FRESH], 1) < 0) goto fail;
    PyObject *fields = m[CODEC_FIELDS];
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(fields); i++) {
        PyObject *entry = PyTuple_GET_ITEM(fields, i);
        if (codec_tuple(entry, 3) < 0) goto fail;
        PyObject *value = codec_decode_value(r, PyTuple_GET_ITEM(entry, 2), pos);
        if (value == NULL) goto fail;
        int rc = PyDict_SetItem(obj, PyTuple_GET_ITEM(entry, 0), value);
        Py_DECREF(value);
        if (rc < 0) goto fail;
    }
    if (flexible) {
        if (*pos < r->len && r->buf[*pos] == 0) /* no tagged fields: nearly every struct */
            ++*pos;
        else if (codec_decode_tagged(r, m[CODEC_TAGGED], obj, pos) < 0)
            goto fail;
    }
    return obj;
fail:
    Py_DECREF(obj);
    return NULL;
}

/* ---- entry points ---------------------------------------------------------------------- */

/* encode_struct(program, out, value): value (a mapping, or None for all defaults) appended to the
 * bytearray ``out`` as program = (plan, types) says (codec.py's _compile makes it). */
static PyObject *
encode_struct(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *plan;
    CodecTypes t;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "encode_struct(program, out, value) takes 3 arguments");
        return NULL;
    }
    if (codec_program(args[0], &plan, &t) < 0) return NULL;
    if (!PyByteArray_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "encode_struct writes into a bytearray");
        return NULL;
    }
    CodecWriter w;
    codec_writer_init(&w, args[1]);
    int rc = codec_encode_struct(&t, plan, &w, args[2]) < 0 ? -1 : codec_flush(&w);
    codec_writer_free(&w);
    if (rc < 0) return NULL;
    Py_RETURN_NONE;
}

/* decode_struct(program, buf, pos, budget) -> (Struct, end): the struct at buf[pos:]. */
static PyObject *
decode_struct(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *plan;
    CodecTypes t;
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "decode_struct(program, buf, pos, budget) takes 4 arguments");
        return NULL;
    }
    if (codec_program(args[0], &plan, &t) < 0) return NULL;
    Py_ssize_t pos = PyLong_AsSsize_t(args[2]);
    if (pos == -1 && PyErr_Occurred()) return NULL;
    if (pos < 0) {
        PyErr_SetString(PyExc_ValueError, "decode_struct: negative position");
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(args[1], &view, PyBUF_SIMPLE) < 0) return NULL;
    CodecReader r = {(const unsigned char *)view.buf, view.len, args[1], args[3], &t};
    PyObject *obj = codec_decode_struct(&r, plan, &pos);
    PyBuffer_Release(&view);
    if (obj == NULL) return NULL;
    return Py_BuildValue("(Nn)", obj, pos);
}
