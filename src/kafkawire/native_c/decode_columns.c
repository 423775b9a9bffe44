/* decode_columns.c: decode_columns: a fetched batch's records as Arrow buffers, headers included.
 * Pure-Python twin: consumer/arrow.py (tests/unit/native_c/test_twins.py).
 *
 * Part of kafkawire._native, compiled as one unit by module.c (see its list for the order). */

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
