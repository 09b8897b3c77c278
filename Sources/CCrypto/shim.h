#ifndef TABSTORE_CCRYPTO_SHIM_H
#define TABSTORE_CCRYPTO_SHIM_H
#include <openssl/hmac.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>
#endif
