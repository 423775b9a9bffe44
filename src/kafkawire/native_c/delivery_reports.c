/* delivery_reports.c: serve_delivered, tally_delivered, tally_shared: a delivered batch's reports and bookkeeping.
 * Pure-Python twins: producer/delivery.py (DeliveredReports, the tallies; tests/unit/native_c/test_twins.py).
 *
 * Part of kafkawire._native, compiled as one unit by module.c (see its list for the order). */

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

/* serve_delivered(messages, start, base_offset, log_append, create_time, now, message_type
 *                 [, forward, target]) -> (next, served, charge, exception or None)
 * Runs the callback of each record from ``start`` on, with a new ``message_type`` report made
 * as DeliveredReports makes it; stops at the first exception, which is returned, not raised,
 * with how far it got, so that the caller keeps its books whatever happened. A record whose
 * callback is ``forward`` (compared by identity) is reported to ``target``, or to nobody when
 * that is None (served all the same: its room is freed). */
static PyObject *
serve_delivered(PyObject *module, PyObject *args)
{
    PyObject *messages, *log_append, *create_time, *type, *forward = Py_None, *target = Py_None;
    Py_ssize_t start;
    long long base;
    double now;
    if (!PyArg_ParseTuple(args, "O!nLOOdO|OO:serve_delivered", &PyList_Type, &messages, &start, &base, &log_append,
                          &create_time, &now, &type, &forward, &target))
        return NULL;
    if (message_slots(type) < 0) return NULL;
    PyTypeObject *mtype = (PyTypeObject *)type;
    Py_ssize_t i = start, served = 0;
    long long charge = 0;
    PyObject *stamp_of = NULL, *stamp = NULL; /* the last timestamp tuple made, and its record's int */
    PyObject *running = NULL;                 /* running_loop(), asked at the first future settled */
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
        PyObject *callback = m->callback;
        if (callback == forward && forward != Py_None) {
            callback = target;
            if (callback == Py_None) { /* its face is gone: nobody to tell */
                Py_ssize_t freed = value_charge(m->value);
                if (freed < 0) break;
                served++;
                charge += freed;
                continue;
            }
        }
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
        Py_ssize_t freed = value_charge(m->value);
        if (freed < 0) goto failed;
        served++;
        charge += freed;
        if (settles_in_c(callback)) { /* AIOProducer's future (settle_futures.c): no call, no frame */
            if (running == NULL) running = running_loop();
            result = running == NULL || settle(callback, Py_None, report, running) < 0 ? NULL : Py_NewRef(Py_True);
        }
        else {
            PyObject *cb_args[2] = {Py_None, report};
            result = PyObject_Vectorcall(callback, cb_args, 2, NULL);
        }
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
    Py_XDECREF(running);
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

/* tally_delivered(messages) -> (value_bytes, without_callback, their_charge, with_future)
 * The bookkeeping of a delivered batch, in one pass: its value bytes (statistics), the records
 * that have no callback and the buffer charge they free now, and the indexes of those with a
 * future to complete. */
static PyObject *
tally_delivered(PyObject *module, PyObject *args)
{
    PyObject *messages;
    if (!PyArg_ParseTuple(args, "O!:tally_delivered", &PyList_Type, &messages)) return NULL;
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
        Py_ssize_t n = value_charge(m->value); /* its value's bytes, which are its buffer charge */
        if (n < 0) {
            Py_DECREF(futures);
            return NULL;
        }
        value_bytes += n;
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
            charge += n;
        }
    }
    return Py_BuildValue("(LnLN)", value_bytes, freed, charge, futures);
}

/* ---- tally_shared -------------------------------------------------------------------- */

/* tally_shared(messages, callback) -> (value_bytes, charge) or None
 * A batch whose every record has ``callback``, no future and one topic and partition, as one
 * report sees it: its value bytes (statistics) and the buffer charge of all its records; None
 * when one record differs (its reports are then made per record). */
static PyObject *
tally_shared(PyObject *module, PyObject *args)
{
    PyObject *messages, *callback;
    if (!PyArg_ParseTuple(args, "O!O:tally_shared", &PyList_Type, &messages, &callback)) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(messages);
    if (n == 0) Py_RETURN_NONE;
    long long value_bytes = 0, charge = 0;
    PyObject *topic = NULL, *partition = NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyList_GET_ITEM(messages, i);
        PENDING_PREFETCH(((PyListObject *)messages)->ob_item, i, n, 16, 8);
        PyObject *m_topic, *m_partition;
        if (Py_IS_TYPE(item, &RowsType)) { /* an ArrowRows entry (arrow_rows.c): its records at once */
            Rows *r = (Rows *)item;
            if (r->columns->callback != callback) Py_RETURN_NONE;
            m_topic = r->columns->topic, m_partition = r->partition;
            value_bytes += r->value_bytes;
            charge += r->value_bytes;
        } else if (Py_TYPE(item) == &PendingType) {
            Pending *m = (Pending *)item;
            if (m->callback != callback || (m->future != NULL && m->future != Py_None)) Py_RETURN_NONE;
            m_topic = m->topic, m_partition = m->partition;
            Py_ssize_t len = value_charge(m->value);
            if (len < 0) return NULL;
            value_bytes += len;
            charge += len;
        } else {
            PyErr_SetString(PyExc_TypeError, "tally_shared takes native PendingMessages");
            return NULL;
        }
        if (topic == NULL) {
            topic = m_topic, partition = m_partition;
            continue;
        }
        int same = m_topic == topic ? 1 : PyObject_RichCompareBool(m_topic, topic, Py_EQ);
        if (same == 1 && m_partition != partition) same = PyObject_RichCompareBool(m_partition, partition, Py_EQ);
        if (same < 0) return NULL;
        if (!same) Py_RETURN_NONE;
    }
    return Py_BuildValue("(LL)", value_bytes, charge);
}
