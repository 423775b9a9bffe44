/*
 * kafkawire._native: the per-record loops of producing and consuming, in C, one file per mechanism.
 *
 * Each mechanism has a pure-Python twin that produces the same result (bytes for bytes, field for
 * field); kafkawire/native.py picks this module when it was built, and the tests named in each
 * file's header hold the two against each other. The files are compiled as one translation unit,
 * included below in the order their definitions need (a later file uses the earlier ones' static
 * helpers and types), so that the compiler sees the whole hot path at once, as it did when it was
 * one file: each file says what it is and where its twin lives.
 *
 * None of them keeps state between calls but crc32c's tables (built once, at import),
 * serve_delivered's cache of Message's slot descriptors, PollTake's of the fetch rows' slot
 * offsets, poll_fast's of the consumer face's and running_loop's count of forks (protocol_codec is
 * handed its plan and types with each call);
 * only encode_records lets the GIL go (while writing a large batch of plain records).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#ifdef HAVE_FORK
#include <pthread.h>
#endif

#include "crc32c.c"
#include "pending.c"
#include "arrow_rows.c"
#include "encode_records.c"
#include "message_fields.c"
#include "running_loop.c"
#include "settle_futures.c"
#include "delivery_reports.c"
#include "decode_messages.c"
#include "decode_columns.c"
#include "rlock.c"
#include "lane_state.c"
#include "produce_lane.c"
#include "bulk_paths.c"
#include "poll_take.c"
#include "poll_ready.c"
#include "fast_method.c"
#include "protocol_codec.c"

/* ---- module ------------------------------------------------------------------------- */

/* track(obj): puts an object decode_messages untracked back in the cycle collector's sight. */
static PyObject *
track(PyObject *module, PyObject *obj)
{
    if (PyObject_IS_GC(obj) && !PyObject_GC_IsTracked(obj)) PyObject_GC_Track(obj);
    Py_RETURN_NONE;
}

static PyMethodDef native_methods[] = {
    {"crc32c", crc32c, METH_VARARGS, "crc32c(data, value=0) -> int: CRC-32C of data, continuing from value"},
    {"track", track, METH_O, "track(obj): back under the cycle collector (see decode_messages)"},
    {"encode_records", encode_records, METH_VARARGS,
     "encode_records(buf, records, count, base_timestamp, max_timestamp) -> (count, base, max)"},
    {"serve_delivered", serve_delivered, METH_VARARGS,
     "serve_delivered(messages, start, base_offset, log_append, create_time, now, message_type, forward=None, target=None)"
     " -> (next, served, charge, exception or None)"},
    {"tally_delivered", tally_delivered, METH_VARARGS,
     "tally_delivered(messages) -> (value_bytes, without_callback, their_charge, with_future)"},
    {"tally_shared", tally_shared, METH_VARARGS,
     "tally_shared(messages, callback) -> (value_bytes, charge), or None when a record differs"},
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
    {"settling_future", settling_future, METH_VARARGS,
     "settling_future(base, get_running_loop, exception_type, invalid_state) -> AIOProducer's delivery future type"},
    {"arrow_columns", arrow_columns, METH_VARARGS,
     "arrow_columns(topic, rows, value, key, callback, now) -> ArrowColumns: an Arrow batch's rows, read in place"},
    {"lane_queue_rows", lane_queue_rows, METH_VARARGS,
     "lane_queue_rows(lane, columns, start, stop, count, now) -> (next, wake): lane_queue for an ArrowColumns' rows"},
    {"lane_queue", lane_queue, METH_VARARGS,
     "lane_queue(lane, records, start, stop, count, now) -> (next, wake): records into their open batches, under the lock"},
    {"encode_struct", (PyCFunction)(void (*)(void))encode_struct, METH_FASTCALL,
     "encode_struct(program, out, value): value appended to the bytearray out, as its plan says (protocol/plan.py)"},
    {"decode_struct", (PyCFunction)(void (*)(void))decode_struct, METH_FASTCALL,
     "decode_struct(program, buf, pos, budget) -> (Struct, end): the struct at buf[pos:], as its plan says"},
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
        || PyType_Ready(&OpenBatchType) < 0
        || PyType_Ready(&FastMethodType) < 0 || PyType_Ready(&RLockType) < 0
        || PyType_Ready(&LaneStateType) < 0 || PyType_Ready(&PollTakeType) < 0
        || PyType_Ready(&PollReadyType) < 0 || PyType_Ready(&ColumnsType) < 0 || PyType_Ready(&RowsType) < 0
        || PyType_Ready(&RunningLoopType) < 0)
        return NULL;
    if ((minus_one = PyLong_FromLong(-1)) == NULL) return NULL;
    crc32c_init();
    if (protocol_codec_init() < 0 || running_loop_init() < 0) return NULL;
    PyObject **names[] = {&s_partition, &s_lane};
    const char *texts[] = {"partition", "_lane"};
    for (int i = 0; i < 2; i++)
        if ((*names[i] = PyUnicode_InternFromString(texts[i])) == NULL) return NULL;
    PyObject **bulk_names[] = {&s_callback, &s_on_delivery, &s_value, &s_key, &s_timestamp, &s_headers};
    const char *bulk_texts[] = {"callback", "on_delivery", "value", "key", "timestamp", "headers"};
    for (int i = 0; i < 6; i++)
        if ((*bulk_names[i] = PyUnicode_InternFromString(bulk_texts[i])) == NULL) return NULL;
    if ((zero_int = PyLong_FromLong(0)) == NULL) return NULL;
    PyObject **settle_names[] = {&s_get_loop, &s_set_result, &s_set_exception, &s_call_soon_threadsafe};
    const char *settle_texts[] = {"get_loop", "set_result", "set_exception", "call_soon_threadsafe"};
    for (int i = 0; i < 4; i++)
        if ((*settle_names[i] = PyUnicode_InternFromString(settle_texts[i])) == NULL) return NULL;
    PyObject **poll_names[] = {&s_left_for_poll, &s_engine, &s_timeout, &s_consume};
    const char *poll_texts[] = {"left_for_poll", "_engine", "timeout", "consume"};
    for (int i = 0; i < 4; i++)
        if ((*poll_names[i] = PyUnicode_InternFromString(poll_texts[i])) == NULL) return NULL;
    PyObject *m = PyModule_Create(&native_module);
    if (m == NULL) return NULL;
    if (PyModule_AddObjectRef(m, "PendingMessage", (PyObject *)&PendingType) < 0
        || PyModule_AddObjectRef(m, "MessageFields", (PyObject *)&MessageFieldsType) < 0
        || PyModule_AddObjectRef(m, "ProduceLane", (PyObject *)&LaneType) < 0
        || PyModule_AddObjectRef(m, "FastMethod", (PyObject *)&FastMethodType) < 0
        || PyModule_AddObjectRef(m, "RLock", (PyObject *)&RLockType) < 0
        || PyModule_AddObjectRef(m, "LaneState", (PyObject *)&LaneStateType) < 0
        || PyModule_AddObjectRef(m, "OpenBatch", (PyObject *)&OpenBatchType) < 0
        || PyModule_AddObjectRef(m, "PollTake", (PyObject *)&PollTakeType) < 0
        || PyModule_AddObjectRef(m, "PollReady", (PyObject *)&PollReadyType) < 0
        || PyModule_AddObjectRef(m, "ArrowColumns", (PyObject *)&ColumnsType) < 0
        || PyModule_AddObjectRef(m, "ArrowRows", (PyObject *)&RowsType) < 0
        || PyModule_AddObjectRef(m, "RunningLoop", (PyObject *)&RunningLoopType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
