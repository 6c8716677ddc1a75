// OpenSSL for subd: libcrypto's PKCS5_PBKDF2_HMAC, EVP_sha256, RAND_bytes and CRYPTO_memcmp for the users'
// salted secret hashes, and libssl (ssl.h, err.h) for TLS listeners, the client library and subbench --tls.
// Provided by libssl-dev (pkg-config openssl); `make` installs it when missing.
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <string.h>

// OpenSSL's macros that Swift cannot import, as functions (TLS listeners, Sources/SubscriptionServer/TLS).

/// SSL_CTX_set_mode: SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER, so SSL_write returns each
/// record written and a retry may pass the same bytes from another address.
static inline long subd_ssl_ctx_set_partial_write_modes(SSL_CTX *ctx) {
    return SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
}

/// TLS 1.2 at least, and a peer closing without close_notify reads as an end of stream (as a TCP FIN does).
static inline int subd_ssl_ctx_set_server_defaults(SSL_CTX *ctx) {
    SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_RENEGOTIATION);
    return (int)SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
}

/// SSL_set_tlsext_host_name: the server name a client asks for (SNI).
static inline long subd_ssl_set_server_name(SSL *ssl, const char *name) {
    return SSL_set_tlsext_host_name(ssl, name);
}

/// subbench's blocking TLS clients (Sources/subbench/TLSClientContext.swift): TLS 1.2 at least; a server closing
/// without close_notify reads as an end of stream; SSL_read returns SSL_ERROR_WANT_READ after a record that carried
/// no application data (a session ticket) instead of blocking for the next record (SSL_MODE_AUTO_RETRY cleared: a
/// subscriber thread polls a wake-up pipe beside its socket and must not sit in SSL_read); and read-ahead, so one
/// recv takes several records (SSL_has_pending then reports them). Returns 1 when the minimum version was set.
static inline int subd_ssl_ctx_set_blocking_client_modes(SSL_CTX *ctx) {
    SSL_CTX_clear_mode(ctx, SSL_MODE_AUTO_RETRY);
    SSL_CTX_set_read_ahead(ctx, 1);
    SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
    return (int)SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
}

/// Empties this thread's OpenSSL error queue into `buffer` as one line, the reasons joined by "; " (cut to fit,
/// always NUL-terminated); returns how many errors there were. Written once for the server's and the client's
/// error messages.
static inline int subd_ssl_drain_errors(char *buffer, size_t size) {
    int count = 0;
    size_t used = 0;
    if (size == 0) return 0;
    buffer[0] = 0;
    unsigned long code;
    while ((code = ERR_get_error()) != 0) {
        char text[256];
        ERR_error_string_n(code, text, sizeof text);
        if (count > 0 && used + 2 < size) { buffer[used++] = ';'; buffer[used++] = ' '; buffer[used] = 0; }
        size_t length = strlen(text);
        if (used + length >= size) length = size - used - 1;
        memcpy(buffer + used, text, length);
        used += length;
        buffer[used] = 0;
        count += 1;
    }
    return count;
}
