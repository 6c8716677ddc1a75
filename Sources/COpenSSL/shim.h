// OpenSSL for subd: libcrypto's PKCS5_PBKDF2_HMAC, EVP_sha256, RAND_bytes and CRYPTO_memcmp for the users'
// salted secret hashes now, and libssl (ssl.h, err.h) for TLS listeners later.
// Provided by libssl-dev (pkg-config openssl); `make` installs it when missing.
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
