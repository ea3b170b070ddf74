// BIP-340 signature checks over the system's libsecp256k1 (Debian: libsecp256k1-dev), with each
// thread's recently seen public keys kept parsed. Parsing an x-only key lifts it onto the curve, a
// square root that is about a fifth of a check (~10 of ~50 µs here), and a relay checks the same
// authors again and again. Nothing here decides validity beyond what libsecp256k1 answers: a kept
// key is the very parse of the same 32 bytes, compared in full before it is used.
#include <node_api.h>
#include <secp256k1.h>
#include <secp256k1_extrakeys.h>
#include <secp256k1_schnorrsig.h>
#include <stdlib.h>
#include <string.h>

// 16,384 slots of 96 bytes (1.5 MiB) per thread, direct-mapped. A key's slot comes from its own
// bytes (the x coordinate of a point: uniform); a sender who grinds keys to share a slot only makes
// its own checks miss, never another's answer wrong.
#define SLOT_BITS 14
#define SLOTS (1u << SLOT_BITS)

typedef struct {
  unsigned char key[32];
  secp256k1_xonly_pubkey parsed;
} slot_t;

// One per module instance: the main thread and each worker thread load their own (N-API instance
// data), so no slot is ever shared between threads.
typedef struct {
  secp256k1_context *ctx;
  slot_t *slots;
  unsigned char *filled;
} state_t;

static void finalize_state(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  state_t *st = (state_t *)data;
  secp256k1_context_destroy(st->ctx);
  free(st->slots);
  free(st->filled);
  free(st);
}

// The parsed key for `pub` (32 bytes), from its slot when it was parsed before; 0 when the bytes
// are not the x coordinate of a curve point (nothing is kept then).
static int parsed_key(state_t *st, const unsigned char *pub, secp256k1_xonly_pubkey *out) {
  unsigned i = ((unsigned)pub[0] | (unsigned)pub[1] << 8 | (unsigned)pub[2] << 16) & (SLOTS - 1);
  slot_t *s = &st->slots[i];
  if (st->filled[i] && memcmp(s->key, pub, 32) == 0) {
    *out = s->parsed;
    return 1;
  }
  if (!secp256k1_xonly_pubkey_parse(st->ctx, out, pub)) return 0;
  memcpy(s->key, pub, 32);
  s->parsed = *out;
  st->filled[i] = 1;
  return 1;
}

static int buffer_of(napi_env env, napi_value v, size_t want, unsigned char **data) {
  bool is;
  size_t len;
  if (napi_is_buffer(env, v, &is) != napi_ok || !is) return 0;
  if (napi_get_buffer_info(env, v, (void **)data, &len) != napi_ok) return 0;
  return len == want;
}

// verify(msg: Buffer(32), sig: Buffer(64), pubkey: Buffer(32)) -> boolean. Anything else is false:
// the caller refuses the event either way.
static napi_value verify(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  state_t *st;
  unsigned char *msg, *sig, *pub;
  secp256k1_xonly_pubkey key;
  int ok = 0;
  napi_value result;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, (void **)&st) == napi_ok && argc == 3 &&
      buffer_of(env, argv[0], 32, &msg) && buffer_of(env, argv[1], 64, &sig) && buffer_of(env, argv[2], 32, &pub))
    ok = parsed_key(st, pub, &key) && secp256k1_schnorrsig_verify(st->ctx, sig, msg, 32, &key);
  napi_get_boolean(env, ok, &result);
  return result;
}

NAPI_MODULE_INIT() {
  state_t *st = (state_t *)calloc(1, sizeof(state_t));
  napi_value fn;
  if (st == NULL) {
    napi_throw_error(env, NULL, "out of memory");
    return NULL;
  }
  // VERIFY, though libsecp256k1 0.2 and later ignore it (their tables are static): a library of
  // before 0.2 builds its verification tables only when asked, and aborts a check without them
  st->ctx = secp256k1_context_create(SECP256K1_CONTEXT_VERIFY);
  st->slots = (slot_t *)malloc(sizeof(slot_t) * SLOTS);
  st->filled = (unsigned char *)calloc(SLOTS, 1);
  if (st->ctx == NULL || st->slots == NULL || st->filled == NULL) {
    napi_throw_error(env, NULL, "out of memory");
    return NULL;
  }
  if (napi_set_instance_data(env, st, finalize_state, NULL) != napi_ok) return NULL;
  if (napi_create_function(env, "verify", NAPI_AUTO_LENGTH, verify, st, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "verify", fn) != napi_ok) return NULL;
  return exports;
}
