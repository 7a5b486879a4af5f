// tartan's optional native kernels (a Node-API addon built at install by node-gyp, ../scripts/build-native.mjs):
// the dense index's fast scan of 4-bit codes, and RaBitQ's whole first pass over the probed lists (scan,
// estimate, error bound, the two bounded heaps), with AVX-512BW and AVX2 paths chosen at run time and a
// portable C path. Each function computes exactly what its TypeScript/WebAssembly counterpart computes
// (src/retrieval/dense/fastscan.ts `scan`, src/retrieval/dense/codes/rabitq.ts `candidates`): the same
// integer sums, the same double arithmetic in the same order (built with -ffp-contract=off, no fast-math),
// the same heap algorithm, so the results are identical position for position (tested); only the speed
// differs. src/retrieval/dense/native.ts loads it; without it (no compiler, TARTAN_NATIVE=0) the portable
// WebAssembly kernels run.

#define _GNU_SOURCE 1
#include <node_api.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <math.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define TARTAN_X86 1
#endif

#define FS_BLOCK 16

// ---- the scan of one block (16 codes of `pairs` bytes, pair-major) against a query's table ----------------
// lut: pairs × 32 bytes (pair p's low-nibble table at p × 32, its high-nibble table at p × 32 + 16).
// out: the 16 codes' sums (each ≤ 254 × pairs; exact in 16 bits up to 258 pairs).

static void scan_block_c(const uint8_t* block, int pairs, const uint8_t* lut, uint16_t* out) {
  uint32_t acc[FS_BLOCK] = {0};
  for (int p = 0; p < pairs; p++) {
    const uint8_t* row = block + p * FS_BLOCK;
    const uint8_t* t = lut + p * 32;
    for (int j = 0; j < FS_BLOCK; j++) acc[j] += t[row[j] & 15] + t[16 + (row[j] >> 4)];
  }
  for (int j = 0; j < FS_BLOCK; j++) out[j] = (uint16_t)acc[j];
}

#ifdef TARTAN_X86
// The tail of pairs a wide path leaves, 128 bits at a time (the WebAssembly kernel's steps).
__attribute__((target("ssse3")))
static inline void scan_pairs_128(const uint8_t* block, int from, int pairs, const uint8_t* lut, __m128i* e, __m128i* o) {
  const __m128i m0f = _mm_set1_epi8(0x0f), mff = _mm_set1_epi16(0x00ff);
  for (int p = from; p < pairs; p++) {
    __m128i c = _mm_loadu_si128((const __m128i*)(block + p * FS_BLOCK));
    __m128i lo = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i*)(lut + p * 32)), _mm_and_si128(c, m0f));
    __m128i hi = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i*)(lut + p * 32 + 16)), _mm_and_si128(_mm_srli_epi16(c, 4), m0f));
    __m128i s = _mm_add_epi8(lo, hi);
    *e = _mm_add_epi16(*e, _mm_and_si128(s, mff));
    *o = _mm_add_epi16(*o, _mm_srli_epi16(s, 8));
  }
}

__attribute__((target("ssse3")))
static inline void store_sums(__m128i e, __m128i o, uint16_t* out) {
  _mm_storeu_si128((__m128i*)out, _mm_unpacklo_epi16(e, o));
  _mm_storeu_si128((__m128i*)(out + 8), _mm_unpackhi_epi16(e, o));
}

// Tables regrouped for the wide paths: for each group of G pairs, G low tables side by side, then G high ones.
static void group_tables(const uint8_t* lut, int pairs, int g, uint8_t* lo, uint8_t* hi) {
  int groups = pairs / g;
  for (int k = 0; k < groups; k++)
    for (int m = 0; m < g; m++) {
      memcpy(lo + (k * g + m) * 16, lut + (k * g + m) * 32, 16);
      memcpy(hi + (k * g + m) * 16, lut + (k * g + m) * 32 + 16, 16);
    }
}

__attribute__((target("avx2")))
static void scan_block_avx2(const uint8_t* block, int pairs, const uint8_t* lut, const uint8_t* glo, const uint8_t* ghi, uint16_t* out) {
  const __m256i m0f = _mm256_set1_epi8(0x0f), mff = _mm256_set1_epi16(0x00ff);
  __m256i ae = _mm256_setzero_si256(), ao = _mm256_setzero_si256();
  int groups = pairs / 2;
  for (int k = 0; k < groups; k++) {
    __m256i c = _mm256_loadu_si256((const __m256i*)(block + k * 32));
    __m256i lo = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i*)(glo + k * 32)), _mm256_and_si256(c, m0f));
    __m256i hi = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i*)(ghi + k * 32)), _mm256_and_si256(_mm256_srli_epi16(c, 4), m0f));
    __m256i s = _mm256_add_epi8(lo, hi);
    ae = _mm256_add_epi16(ae, _mm256_and_si256(s, mff));
    ao = _mm256_add_epi16(ao, _mm256_srli_epi16(s, 8));
  }
  __m128i e = _mm_add_epi16(_mm256_castsi256_si128(ae), _mm256_extracti128_si256(ae, 1));
  __m128i o = _mm_add_epi16(_mm256_castsi256_si128(ao), _mm256_extracti128_si256(ao, 1));
  scan_pairs_128(block, groups * 2, pairs, lut, &e, &o);
  store_sums(e, o, out);
}

__attribute__((target("avx512f,avx512bw")))
static void scan_block_avx512(const uint8_t* block, int pairs, const uint8_t* lut, const uint8_t* glo, const uint8_t* ghi, uint16_t* out) {
  const __m512i m0f = _mm512_set1_epi8(0x0f), mff = _mm512_set1_epi16(0x00ff);
  __m512i ae = _mm512_setzero_si512(), ao = _mm512_setzero_si512();
  int groups = pairs / 4;
  for (int k = 0; k < groups; k++) {
    __m512i c = _mm512_loadu_si512((const void*)(block + k * 64));
    __m512i lo = _mm512_shuffle_epi8(_mm512_loadu_si512((const void*)(glo + k * 64)), _mm512_and_si512(c, m0f));
    __m512i hi = _mm512_shuffle_epi8(_mm512_loadu_si512((const void*)(ghi + k * 64)), _mm512_and_si512(_mm512_srli_epi16(c, 4), m0f));
    __m512i s = _mm512_add_epi8(lo, hi);
    ae = _mm512_add_epi16(ae, _mm512_and_si512(s, mff));
    ao = _mm512_add_epi16(ao, _mm512_srli_epi16(s, 8));
  }
  __m256i e2 = _mm256_add_epi16(_mm512_castsi512_si256(ae), _mm512_extracti64x4_epi64(ae, 1));
  __m256i o2 = _mm256_add_epi16(_mm512_castsi512_si256(ao), _mm512_extracti64x4_epi64(ao, 1));
  __m128i e = _mm_add_epi16(_mm256_castsi256_si128(e2), _mm256_extracti128_si256(e2, 1));
  __m128i o = _mm_add_epi16(_mm256_castsi256_si128(o2), _mm256_extracti128_si256(o2, 1));
  scan_pairs_128(block, groups * 4, pairs, lut, &e, &o);
  store_sums(e, o, out);
}
#endif

// The path this machine runs: 0 portable C, 2 AVX2, 3 AVX-512BW (TARTAN_NATIVE_PATH=c|avx2 narrows it, for tests).
static int path = -1;
static int pick_path(void) {
  if (path >= 0) return path;
  path = 0;
#ifdef TARTAN_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2")) path = 2;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")) path = 3;
#endif
  const char* want = getenv("TARTAN_NATIVE_PATH");
  if (want != NULL) {
    if (strcmp(want, "c") == 0) path = 0;
    else if (strcmp(want, "avx2") == 0 && path >= 2) path = 2;
  }
  return path;
}

// One query's scanner: the table, regrouped once for the wide path.
typedef struct {
  int pairs, p;
  const uint8_t* lut;
  uint8_t* glo;
  uint8_t* ghi;
} Scanner;

static int scanner_init(Scanner* s, const uint8_t* lut, int pairs) {
  s->pairs = pairs;
  s->lut = lut;
  s->p = pick_path();
  s->glo = s->ghi = NULL;
#ifdef TARTAN_X86
  if (s->p >= 2) {
    s->glo = (uint8_t*)malloc((size_t)pairs * 32);
    if (s->glo == NULL) return 0;
    s->ghi = s->glo + (size_t)pairs * 16;
    group_tables(lut, pairs, s->p == 3 ? 4 : 2, s->glo, s->ghi);
  }
#endif
  return 1;
}

static void scanner_free(Scanner* s) { free(s->glo); }

static inline void scan_block(const Scanner* s, const uint8_t* block, uint16_t* out) {
#ifdef TARTAN_X86
  if (s->p == 3) { scan_block_avx512(block, s->pairs, s->lut, s->glo, s->ghi, out); return; }
  if (s->p == 2) { scan_block_avx2(block, s->pairs, s->lut, s->glo, s->ghi, out); return; }
#endif
  scan_block_c(block, s->pairs, s->lut, out);
}

// ---- the bounded min-heap of TopHeap (src/retrieval/dense/top-heap.ts), step for step ---------------------

typedef struct {
  double* v;
  double* p;
  int n, cap;
} Heap;

static int heap_init(Heap* h, int cap) {
  h->n = 0;
  h->cap = cap;
  h->v = (double*)malloc(sizeof(double) * 2 * (size_t)(cap > 0 ? cap : 1));
  h->p = h->v + (cap > 0 ? cap : 1);
  return h->v != NULL;
}

static inline double heap_floor(const Heap* h) { return h->n < h->cap ? -INFINITY : h->v[0]; }

static inline void heap_push(Heap* h, double value, double pos) {
  double* v = h->v;
  double* p = h->p;
  if (h->n < h->cap) {
    int i = h->n++;
    while (i > 0) {
      int parent = (i - 1) >> 1;
      if (v[parent] <= value) break;
      v[i] = v[parent];
      p[i] = p[parent];
      i = parent;
    }
    v[i] = value;
    p[i] = pos;
    return;
  }
  if (value <= v[0]) return;
  int i = 0;
  for (;;) {
    int l = 2 * i + 1;
    if (l >= h->n) break;
    int r = l + 1;
    int c = r < h->n && v[r] < v[l] ? r : l;
    if (v[c] >= value) break;
    v[i] = v[c];
    p[i] = p[c];
    i = c;
  }
  v[i] = value;
  p[i] = pos;
}

// ---- int8 rows against a query's int16 weights (src/retrieval/dense/int8-kernel.ts `dotAt`) -----------------
// out[j] = Σ_d w[d] · row(at[i + j])[d], exact in 32 bits (the weights are scaled so no sum overflows); the
// rows a few candidates ahead are prefetched, so the reads of scattered rows overlap.

#define INT8_AHEAD 6

static int32_t dot_c(const int8_t* r, const int16_t* w, int dim) {
  int32_t acc = 0;
  for (int d = 0; d < dim; d++) acc += (int32_t)r[d] * w[d];
  return acc;
}

#ifdef TARTAN_X86
__attribute__((target("avx2")))
static int32_t dot_avx2(const int8_t* r, const int16_t* w, int dim) {
  __m256i acc = _mm256_setzero_si256();
  int d = 0;
  for (; d + 16 <= dim; d += 16) {
    __m256i x = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i*)(r + d)));
    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(x, _mm256_loadu_si256((const __m256i*)(w + d))));
  }
  __m128i a = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
  a = _mm_add_epi32(a, _mm_shuffle_epi32(a, 0x4e));
  a = _mm_add_epi32(a, _mm_shuffle_epi32(a, 0xb1));
  int32_t t = _mm_cvtsi128_si32(a);
  for (; d < dim; d++) t += (int32_t)r[d] * w[d];
  return t;
}

__attribute__((target("avx512f,avx512bw")))
static int32_t dot_avx512(const int8_t* r, const int16_t* w, int dim) {
  __m512i acc = _mm512_setzero_si512();
  int d = 0;
  for (; d + 32 <= dim; d += 32) {
    __m512i x = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i*)(r + d)));
    acc = _mm512_add_epi32(acc, _mm512_madd_epi16(x, _mm512_loadu_si512((const void*)(w + d))));
  }
  int32_t t = _mm512_reduce_add_epi32(acc);
  for (; d < dim; d++) t += (int32_t)r[d] * w[d];
  return t;
}
#endif

static void int8_at(const int8_t* rows, const double* at, int n, int dim, const int16_t* w, int32_t* out) {
  int p = pick_path();
  for (int j = 0; j < n; j++) {
    if (j + INT8_AHEAD < n) {
      const char* a = (const char*)(rows + (size_t)at[j + INT8_AHEAD] * dim);
      for (int b = 0; b < dim; b += 64) __builtin_prefetch(a + b, 0, 0);
    }
    const int8_t* r = rows + (size_t)at[j] * dim;
#ifdef TARTAN_X86
    if (p == 3) { out[j] = dot_avx512(r, w, dim); continue; }
    if (p == 2) { out[j] = dot_avx2(r, w, dim); continue; }
#endif
    out[j] = dot_c(r, w, dim);
  }
}

// ---- RaBitQ's estimates of one block, 16 at a time (AVX-512F) ---------------------------------------------
// est = base + F · (bias + delta · sum) and err = eps · E + F · tableErr for the block's `count` codes, in the
// scalar loop's order of operations (no contraction: -ffp-contract=off), written to est/err; returns the mask
// of codes that can pass the scalar loop's tests against the floors as they stand at the block's start (the
// floors only rise, so a code outside the mask fails them later too, and the scalar loop re-tests the rest).

#ifdef TARTAN_X86
__attribute__((target("avx512f")))
static uint32_t estimate_block_avx512(const uint16_t* sums, const float* fe, int count, double base, double bias, double delta,
                                      double eps, double tableErr, double floor, double lbFloor, int useBound, double* est, double* err) {
  const __mmask16 lo = (__mmask16)(count >= 8 ? 0xffff : (1u << (2 * count)) - 1);
  const __mmask16 hi = (__mmask16)(count >= 16 ? 0xffff : count <= 8 ? 0 : (1u << (2 * (count - 8))) - 1);
  const __m512 a = _mm512_maskz_loadu_ps(lo, fe);
  const __m512 b = _mm512_maskz_loadu_ps(hi, fe + 16);
  const __m512i evens = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odds = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  const __m512 F = _mm512_permutex2var_ps(a, evens, b);
  const __m512 E = _mm512_permutex2var_ps(a, odds, b);
  const __m512i s32 = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i*)sums));
  const __m512d vb = _mm512_set1_pd(base), vbias = _mm512_set1_pd(bias), vdelta = _mm512_set1_pd(delta);
  const __m512d veps = _mm512_set1_pd(eps), vte = _mm512_set1_pd(tableErr);
  const __m512d vfloor = _mm512_set1_pd(floor), vlb = _mm512_set1_pd(lbFloor);
  uint32_t mask = 0;
  for (int h = 0; h < 2; h++) {
    const __m512d f = _mm512_cvtps_pd(h == 0 ? _mm512_castps512_ps256(F) : _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(F), 1)));
    const __m512d sum = _mm512_cvtepi32_pd(h == 0 ? _mm512_castsi512_si256(s32) : _mm512_extracti64x4_epi64(s32, 1));
    const __m512d e = _mm512_add_pd(vb, _mm512_mul_pd(f, _mm512_add_pd(vbias, _mm512_mul_pd(vdelta, sum))));
    _mm512_storeu_pd(est + 8 * h, e);
    __mmask8 m;
    if (useBound) {
      const __m512d ev = _mm512_cvtps_pd(h == 0 ? _mm512_castps512_ps256(E) : _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(E), 1)));
      const __m512d r = _mm512_add_pd(_mm512_mul_pd(veps, ev), _mm512_mul_pd(f, vte));
      _mm512_storeu_pd(err + 8 * h, r);
      m = _mm512_cmp_pd_mask(_mm512_sub_pd(e, r), vlb, _CMP_GT_OQ) |
          (_mm512_cmp_pd_mask(e, vfloor, _CMP_GT_OQ) & _mm512_cmp_pd_mask(_mm512_add_pd(e, r), vlb, _CMP_GE_OQ));
    } else
      m = _mm512_cmp_pd_mask(e, vfloor, _CMP_GT_OQ);
    mask |= (uint32_t)m << (8 * h);
  }
  return count >= 16 ? mask : mask & ((1u << count) - 1);
}
#endif

// ---- Node-API glue --------------------------------------------------------------------------------------

static void* typed(napi_env env, napi_value v, napi_typedarray_type want, size_t* len, const char* name) {
  napi_typedarray_type t;
  size_t n;
  void* data;
  napi_value ab;
  size_t off;
  if (napi_get_typedarray_info(env, v, &t, &n, &data, &ab, &off) != napi_ok || t != want) {
    char msg[96];
    snprintf(msg, sizeof msg, "tartan native kernels: argument %s has the wrong type", name);
    napi_throw_type_error(env, NULL, msg);
    return NULL;
  }
  if (len != NULL) *len = n;
  return data;
}

static int num(napi_env env, napi_value v, double* out, const char* name) {
  if (napi_get_value_double(env, v, out) != napi_ok) {
    char msg[96];
    snprintf(msg, sizeof msg, "tartan native kernels: argument %s is not a number", name);
    napi_throw_type_error(env, NULL, msg);
    return 0;
  }
  return 1;
}

static napi_value fail(napi_env env, const char* msg) {
  napi_throw_range_error(env, NULL, msg);
  return NULL;
}

// scan(codes: Uint8Array, at: number, blocks: number, pairs: number, lut: Uint8Array, out: Uint16Array): the
// sums of `blocks` blocks from byte `at` of `codes`, as the WebAssembly kernel writes them.
static napi_value js_scan(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value a[6];
  napi_get_cb_info(env, info, &argc, a, NULL, NULL);
  if (argc < 6) return fail(env, "tartan native kernels: scan takes 6 arguments");
  size_t codesLen, lutLen, outLen;
  double at, blocks, pairs;
  uint8_t* codes = (uint8_t*)typed(env, a[0], napi_uint8_array, &codesLen, "codes");
  if (codes == NULL || !num(env, a[1], &at, "at") || !num(env, a[2], &blocks, "blocks") || !num(env, a[3], &pairs, "pairs")) return NULL;
  uint8_t* lut = (uint8_t*)typed(env, a[4], napi_uint8_array, &lutLen, "lut");
  if (lut == NULL) return NULL;
  uint16_t* out = (uint16_t*)typed(env, a[5], napi_uint16_array, &outLen, "out");
  if (out == NULL) return NULL;
  int P = (int)pairs, B = (int)blocks;
  if (P < 1 || P > 258 || B < 0 || at < 0 || lutLen < (size_t)P * 32 || outLen < (size_t)B * FS_BLOCK ||
      (size_t)at + (size_t)B * P * FS_BLOCK > codesLen)
    return fail(env, "tartan native kernels: scan's arguments are out of range");
  Scanner s;
  if (!scanner_init(&s, lut, P)) return fail(env, "tartan native kernels: out of memory");
  for (int b = 0; b < B; b++) scan_block(&s, codes + (size_t)at + (size_t)b * P * FS_BLOCK, out + b * FS_BLOCK);
  scanner_free(&s);
  return NULL;
}

// rabitq(codes, factors, starts, offsets, lists, bases, table, params, outPos): RabitqLists.candidates'
// first pass. codes: every list's blocks; factors: F and E of position p at 2p, 2p + 1 (float32); starts /
// offsets: each list's first block / position (float64, lists + 1); lists: the probed lists (int32); bases:
// each probed list's ⟨c, q⟩ (float64); table: the quantized table (pairs × 32); params (float64): pairs,
// delta, bias, eps, tableErr, rerank, k. Writes the kept positions to outPos (≥ rerank entries) in the
// order TopHeap.items() gives them and returns how many.
static napi_value js_rabitq(napi_env env, napi_callback_info info) {
  size_t argc = 9;
  napi_value a[9];
  napi_get_cb_info(env, info, &argc, a, NULL, NULL);
  if (argc < 9) return fail(env, "tartan native kernels: rabitq takes 9 arguments");
  size_t codesLen, factorsLen, startsLen, offsetsLen, listsLen, basesLen, tableLen, paramsLen, outLen;
  uint8_t* codes = (uint8_t*)typed(env, a[0], napi_uint8_array, &codesLen, "codes");
  if (codes == NULL) return NULL;
  float* factors = (float*)typed(env, a[1], napi_float32_array, &factorsLen, "factors");
  if (factors == NULL) return NULL;
  double* starts = (double*)typed(env, a[2], napi_float64_array, &startsLen, "starts");
  if (starts == NULL) return NULL;
  double* offsets = (double*)typed(env, a[3], napi_float64_array, &offsetsLen, "offsets");
  if (offsets == NULL) return NULL;
  int32_t* lists = (int32_t*)typed(env, a[4], napi_int32_array, &listsLen, "lists");
  if (lists == NULL) return NULL;
  double* bases = (double*)typed(env, a[5], napi_float64_array, &basesLen, "bases");
  if (bases == NULL) return NULL;
  uint8_t* table = (uint8_t*)typed(env, a[6], napi_uint8_array, &tableLen, "table");
  if (table == NULL) return NULL;
  double* params = (double*)typed(env, a[7], napi_float64_array, &paramsLen, "params");
  if (params == NULL) return NULL;
  double* outPos = (double*)typed(env, a[8], napi_float64_array, &outLen, "outPos");
  if (outPos == NULL) return NULL;
  if (paramsLen < 7) return fail(env, "tartan native kernels: rabitq's params need 7 numbers");
  const int pairs = (int)params[0];
  const double delta = params[1], bias = params[2], eps = params[3], tableErr = params[4];
  const int rerank = (int)params[5], k = (int)params[6];
  const size_t nLists = startsLen - 1;
  if (pairs < 1 || pairs > 258 || tableLen < (size_t)pairs * 32 || rerank < 1 || outLen < (size_t)rerank || basesLen < listsLen ||
      startsLen < 2 || offsetsLen != startsLen || (size_t)starts[nLists] * pairs * FS_BLOCK > codesLen || (size_t)offsets[nLists] * 2 > factorsLen)
    return fail(env, "tartan native kernels: rabitq's arguments are out of range");
  for (size_t i = 0; i < listsLen; i++)
    if (lists[i] < 0 || (size_t)lists[i] >= nLists) return fail(env, "tartan native kernels: rabitq: a probed list out of range");

  Scanner s;
  Heap heap, bound;
  const int useBound = k > 0 && k < rerank;
  if (!scanner_init(&s, table, pairs)) return fail(env, "tartan native kernels: out of memory");
  if (!heap_init(&heap, rerank) || !heap_init(&bound, useBound ? k : 1)) {
    scanner_free(&s);
    return fail(env, "tartan native kernels: out of memory");
  }
  uint16_t sums[FS_BLOCK];
  double floor = -INFINITY, lbFloor = -INFINITY;
  const size_t blockBytes = (size_t)pairs * FS_BLOCK;
  for (size_t i = 0; i < listsLen; i++) {
    const int l = lists[i];
    const double base = bases[i];
    const double o0 = offsets[l];
    const double len = offsets[l + 1] - o0;
    const size_t b0 = (size_t)starts[l];
    const size_t nb = (size_t)(starts[l + 1] - starts[l]);
    for (size_t b = 0; b < nb; b++) {
      scan_block(&s, codes + (b0 + b) * blockBytes, sums);
      const double first = (double)(b * FS_BLOCK);
      const int count = (int)fmin(FS_BLOCK, len - first);
      const double p0 = o0 + first;
#ifdef TARTAN_X86
      if (s.p == 3) {
        // the estimates 16 at a time; only the codes that can pass go through the scalar tests, in order
        double est16[FS_BLOCK], err16[FS_BLOCK];
        uint32_t m = estimate_block_avx512(sums, factors + 2 * (size_t)p0, count, base, bias, delta, eps, tableErr, floor, lbFloor, useBound, est16, err16);
        while (m != 0) {
          const int j = __builtin_ctz(m);
          m &= m - 1;
          const double p = p0 + j;
          const double est = est16[j];
          if (!useBound) {
            if (est > floor) {
              heap_push(&heap, est, p);
              floor = heap_floor(&heap);
            }
            continue;
          }
          const double err = err16[j];
          if (est - err > lbFloor) {
            heap_push(&bound, est - err, p);
            lbFloor = heap_floor(&bound);
          }
          if (est > floor && est + err >= lbFloor) {
            heap_push(&heap, est, p);
            floor = heap_floor(&heap);
          }
        }
        continue;
      }
#endif
      if (!useBound) {
        for (int j = 0; j < count; j++) {
          const double est = base + (double)factors[2 * (size_t)(p0 + j)] * (bias + delta * sums[j]);
          if (est > floor) {
            heap_push(&heap, est, p0 + j);
            floor = heap_floor(&heap);
          }
        }
        continue;
      }
      for (int j = 0; j < count; j++) {
        const double p = p0 + j;
        const double f = factors[2 * (size_t)p];
        const double est = base + f * (bias + delta * sums[j]);
        const double err = eps * (double)factors[2 * (size_t)p + 1] + f * tableErr;
        if (est - err > lbFloor) {
          heap_push(&bound, est - err, p);
          lbFloor = heap_floor(&bound);
        }
        if (est > floor && est + err >= lbFloor) {
          heap_push(&heap, est, p);
          floor = heap_floor(&heap);
        }
      }
    }
  }
  int kept = 0;
  for (int i = 0; i < heap.n; i++) {
    const double p = heap.p[i];
    if (!useBound || heap.v[i] + eps * (double)factors[2 * (size_t)p + 1] + (double)factors[2 * (size_t)p] * tableErr >= lbFloor) outPos[kept++] = p;
  }
  free(heap.v);
  free(bound.v);
  scanner_free(&s);
  napi_value r;
  napi_create_int32(env, kept, &r);
  return r;
}

// int8At(rows: Int8Array, at: Float64Array, from: number, n: number, dim: number, w: Int16Array, out: Int32Array):
// the int32 sums of rows at[from … from + n − 1] (row r at byte r × dim of `rows`).
static napi_value js_int8_at(napi_env env, napi_callback_info info) {
  size_t argc = 7;
  napi_value a[7];
  napi_get_cb_info(env, info, &argc, a, NULL, NULL);
  if (argc < 7) return fail(env, "tartan native kernels: int8At takes 7 arguments");
  size_t rowsLen, atLen, wLen, outLen;
  double from, n, dim;
  int8_t* rows = (int8_t*)typed(env, a[0], napi_int8_array, &rowsLen, "rows");
  if (rows == NULL) return NULL;
  double* at = (double*)typed(env, a[1], napi_float64_array, &atLen, "at");
  if (at == NULL || !num(env, a[2], &from, "from") || !num(env, a[3], &n, "n") || !num(env, a[4], &dim, "dim")) return NULL;
  int16_t* w = (int16_t*)typed(env, a[5], napi_int16_array, &wLen, "w");
  if (w == NULL) return NULL;
  int32_t* out = (int32_t*)typed(env, a[6], napi_int32_array, &outLen, "out");
  if (out == NULL) return NULL;
  const int N = (int)n, D = (int)dim;
  if (N < 0 || D < 1 || from < 0 || (size_t)from + (size_t)N > atLen || wLen < (size_t)D || outLen < (size_t)N)
    return fail(env, "tartan native kernels: int8At's arguments are out of range");
  const double* ats = at + (size_t)from;
  const size_t rowCount = rowsLen / (size_t)D;
  for (int j = 0; j < N; j++)
    if (!(ats[j] >= 0) || (size_t)ats[j] >= rowCount) return fail(env, "tartan native kernels: int8At: a row out of range");
  int8_at(rows, ats, N, D, w, out);
  return NULL;
}

// adviseHugePages(view: Uint8Array): asks Linux to back the view's memory with transparent huge pages
// (madvise MADV_HUGEPAGE over its whole 2 MiB pages), so that scattered reads of codes and rows miss the TLB
// less; called before the memory is filled. Returns whether the advice was taken (false elsewhere).
static napi_value js_advise_huge(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value a[1];
  napi_get_cb_info(env, info, &argc, a, NULL, NULL);
  size_t len;
  uint8_t* data = argc < 1 ? NULL : (uint8_t*)typed(env, a[0], napi_uint8_array, &len, "view");
  if (data == NULL) return NULL;
  int ok = 0;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  const uintptr_t huge = (uintptr_t)2 << 20;
  uintptr_t from = ((uintptr_t)data + huge - 1) & ~(huge - 1);
  uintptr_t to = ((uintptr_t)data + len) & ~(huge - 1);
  if (to > from) ok = madvise((void*)from, to - from, MADV_HUGEPAGE) == 0;
#endif
  napi_value r;
  napi_get_boolean(env, ok, &r);
  return r;
}

// path(): which path runs here ("avx512", "avx2" or "c").
static napi_value js_path(napi_env env, napi_callback_info info) {
  (void)info;
  int p = pick_path();
  const char* name = p == 3 ? "avx512" : p == 2 ? "avx2" : "c";
  napi_value r;
  napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &r);
  return r;
}

// usePath(name): runs "avx512", "avx2" or "c" from now on in this process where the CPU has it (tests compare
// every path); returns the path in use.
static napi_value js_use_path(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value a[1];
  napi_get_cb_info(env, info, &argc, a, NULL, NULL);
  char name[16] = {0};
  size_t n;
  if (argc < 1 || napi_get_value_string_utf8(env, a[0], name, sizeof name, &n) != napi_ok) return fail(env, "tartan native kernels: usePath takes a path name");
  path = -1;
  int best = pick_path();
  int want = strcmp(name, "avx512") == 0 ? 3 : strcmp(name, "avx2") == 0 ? 2 : strcmp(name, "c") == 0 ? 0 : -1;
  if (want < 0) return fail(env, "tartan native kernels: usePath: avx512, avx2 or c");
  path = want <= best ? want : best;
  return js_path(env, info);
}

NAPI_MODULE_INIT() {
  napi_value f;
  napi_create_function(env, "scan", NAPI_AUTO_LENGTH, js_scan, NULL, &f);
  napi_set_named_property(env, exports, "scan", f);
  napi_create_function(env, "rabitq", NAPI_AUTO_LENGTH, js_rabitq, NULL, &f);
  napi_set_named_property(env, exports, "rabitq", f);
  napi_create_function(env, "path", NAPI_AUTO_LENGTH, js_path, NULL, &f);
  napi_set_named_property(env, exports, "path", f);
  napi_create_function(env, "int8At", NAPI_AUTO_LENGTH, js_int8_at, NULL, &f);
  napi_set_named_property(env, exports, "int8At", f);
  napi_create_function(env, "adviseHugePages", NAPI_AUTO_LENGTH, js_advise_huge, NULL, &f);
  napi_set_named_property(env, exports, "adviseHugePages", f);
  napi_create_function(env, "usePath", NAPI_AUTO_LENGTH, js_use_path, NULL, &f);
  napi_set_named_property(env, exports, "usePath", f);
  return exports;
}
