/*
 * crc32c.c: CRC-32C (Castagnoli), the checksum of every RecordBatch v2, written and checked.
 *
 * Pure-Python twin: records/crc.py, which runs the crc32c package when this module was not built;
 * tests/unit/records/test_crc32c.py holds the two equal over lengths, alignments and starting values.
 *
 * Here rather than through that package because importing it imports importlib.metadata, email,
 * zipfile and argparse (its version lookup and command line): a third of a producer's start-up.
 * On x86-64 with SSE4.2 the crc32 instruction runs three streams at once over long buffers (one
 * stream waits three cycles on each step), joined by "shift" tables: the CRC of A||B is the CRC
 * of A carried over len(B) zero bytes, xor the CRC of B from zero, and carrying a CRC over a fixed
 * length is linear, so a table per byte of the CRC does it. Elsewhere, eight tables (slicing by 8).
 * The GIL is kept: a 1 MB batch takes tens of microseconds, less than getting the GIL back.
 */

#define CRC32C_POLY 0x82F63B78u /* reflected */
#define CRC32C_LONG 8192        /* bytes per stream in a long round: 3 streams, 24 KB */
#define CRC32C_SHORT 256        /* and in a short one */

static uint32_t crc32c_bytes[8][256]; /* slicing-by-8 tables, [0] the plain byte table */
static uint32_t crc32c_long[4][256];  /* carry a CRC over CRC32C_LONG zero bytes, per byte of it */
static uint32_t crc32c_short[4][256]; /* ... over CRC32C_SHORT zero bytes */
static int crc32c_hardware;

/* A linear map of 32-bit CRC registers as the images of its 32 unit vectors. */
static uint32_t
crc32c_apply(const uint32_t *map, uint32_t v)
{
    uint32_t out = 0;
    for (int bit = 0; v; bit++, v >>= 1)
        if (v & 1) out ^= map[bit];
    return out;
}

/* out = a after b (both maps of registers); out may not be a or b. */
static void
crc32c_compose(uint32_t *out, const uint32_t *a, const uint32_t *b)
{
    for (int bit = 0; bit < 32; bit++) out[bit] = crc32c_apply(a, b[bit]);
}

/* The map that carries a register over `count` zero bytes, by squaring the one-byte map. */
static void
crc32c_zeros_map(uint32_t *map, size_t count)
{
    uint32_t step[32], tmp[32];
    for (int bit = 0; bit < 32; bit++) /* one zero byte: eight shifts through the polynomial */
        step[bit] = (uint32_t)1 << bit;
    for (int shift = 0; shift < 8; shift++) {
        for (int bit = 0; bit < 32; bit++) step[bit] = (step[bit] >> 1) ^ ((step[bit] & 1) ? CRC32C_POLY : 0);
    }
    for (int bit = 0; bit < 32; bit++) map[bit] = (uint32_t)1 << bit; /* identity */
    while (count) {
        if (count & 1) {
            crc32c_compose(tmp, step, map);
            memcpy(map, tmp, sizeof tmp);
        }
        crc32c_compose(tmp, step, step);
        memcpy(step, tmp, sizeof tmp);
        count >>= 1;
    }
}

static void
crc32c_shift_tables(uint32_t table[4][256], size_t count)
{
    uint32_t map[32];
    crc32c_zeros_map(map, count);
    for (int lane = 0; lane < 4; lane++)
        for (uint32_t b = 0; b < 256; b++) table[lane][b] = crc32c_apply(map, b << (8 * lane));
}

static uint32_t
crc32c_shift(uint32_t table[4][256], uint32_t crc)
{
    return table[0][crc & 0xFF] ^ table[1][(crc >> 8) & 0xFF] ^ table[2][(crc >> 16) & 0xFF] ^ table[3][crc >> 24];
}

static uint32_t
crc32c_software(uint32_t crc, const unsigned char *p, size_t n)
{
    while (n && ((uintptr_t)p & 7)) {
        crc = crc32c_bytes[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
        n--;
    }
    while (n >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        word = __builtin_bswap64(word);
#endif
        word ^= crc;
        crc = crc32c_bytes[7][word & 0xFF] ^ crc32c_bytes[6][(word >> 8) & 0xFF] ^
              crc32c_bytes[5][(word >> 16) & 0xFF] ^ crc32c_bytes[4][(word >> 24) & 0xFF] ^
              crc32c_bytes[3][(word >> 32) & 0xFF] ^ crc32c_bytes[2][(word >> 40) & 0xFF] ^
              crc32c_bytes[1][(word >> 48) & 0xFF] ^ crc32c_bytes[0][word >> 56];
        p += 8;
        n -= 8;
    }
    while (n--) crc = crc32c_bytes[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
    return crc;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <nmmintrin.h>
#define CRC32C_HAVE_HARDWARE 1

/* Three streams of `block` bytes each, joined: returns the register after all 3 * block. */
__attribute__((target("sse4.2"))) static uint64_t
crc32c_three(uint64_t c0, const unsigned char *p, size_t block, uint32_t table[4][256])
{
    uint64_t c1 = 0, c2 = 0, a, b, c;
    for (size_t i = 0; i < block; i += 8) {
        memcpy(&a, p + i, 8);
        memcpy(&b, p + block + i, 8);
        memcpy(&c, p + 2 * block + i, 8);
        c0 = _mm_crc32_u64(c0, a);
        c1 = _mm_crc32_u64(c1, b);
        c2 = _mm_crc32_u64(c2, c);
    }
    c0 = crc32c_shift(table, (uint32_t)c0) ^ (uint32_t)c1;
    return crc32c_shift(table, (uint32_t)c0) ^ (uint32_t)c2;
}

__attribute__((target("sse4.2"))) static uint32_t
crc32c_sse42(uint32_t crc, const unsigned char *p, size_t n)
{
    uint64_t c = crc, word;
    while (n && ((uintptr_t)p & 7)) {
        c = _mm_crc32_u8((uint32_t)c, *p++);
        n--;
    }
    while (n >= 3 * CRC32C_LONG) {
        c = crc32c_three(c, p, CRC32C_LONG, crc32c_long);
        p += 3 * CRC32C_LONG;
        n -= 3 * CRC32C_LONG;
    }
    while (n >= 3 * CRC32C_SHORT) {
        c = crc32c_three(c, p, CRC32C_SHORT, crc32c_short);
        p += 3 * CRC32C_SHORT;
        n -= 3 * CRC32C_SHORT;
    }
    while (n >= 8) {
        memcpy(&word, p, 8);
        c = _mm_crc32_u64(c, word);
        p += 8;
        n -= 8;
    }
    while (n--) c = _mm_crc32_u8((uint32_t)c, *p++);
    return (uint32_t)c;
}
#endif

static void
crc32c_init(void)
{
    for (uint32_t b = 0; b < 256; b++) {
        uint32_t crc = b;
        for (int k = 0; k < 8; k++) crc = (crc >> 1) ^ ((crc & 1) ? CRC32C_POLY : 0);
        crc32c_bytes[0][b] = crc;
    }
    for (uint32_t b = 0; b < 256; b++)
        for (int t = 1; t < 8; t++)
            crc32c_bytes[t][b] = crc32c_bytes[0][crc32c_bytes[t - 1][b] & 0xFF] ^ (crc32c_bytes[t - 1][b] >> 8);
#ifdef CRC32C_HAVE_HARDWARE
    crc32c_hardware = __builtin_cpu_supports("sse4.2");
    if (crc32c_hardware) {
        crc32c_shift_tables(crc32c_long, CRC32C_LONG);
        crc32c_shift_tables(crc32c_short, CRC32C_SHORT);
    }
#endif
}

/* crc32c(data, value=0) -> int: the CRC-32C of `data` continuing from `value` (a previous result). */
static PyObject *
crc32c(PyObject *module, PyObject *args)
{
    Py_buffer view;
    unsigned int value = 0;
    if (!PyArg_ParseTuple(args, "y*|I:crc32c", &view, &value)) return NULL;
    uint32_t crc = ~(uint32_t)value;
    const unsigned char *p = view.buf;
    size_t n = (size_t)view.len;
#ifdef CRC32C_HAVE_HARDWARE
    crc = crc32c_hardware ? crc32c_sse42(crc, p, n) : crc32c_software(crc, p, n);
#else
    crc = crc32c_software(crc, p, n);
#endif
    PyBuffer_Release(&view);
    return PyLong_FromUnsignedLong(~crc);
}
