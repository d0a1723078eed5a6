#ifndef QUIRE_CCURL_SHIM_H
#define QUIRE_CCURL_SHIM_H
#include <curl/curl.h>

// Typed wrappers for libcurl's variadic calls (curl_easy_setopt, curl_easy_getinfo,
// curl_multi_setopt), which Swift cannot call directly. Each wrapper fixes the argument
// type that libcurl expects for the option family, so a wrong type is a compile error.

/// A CURLOPT_WRITEFUNCTION / CURLOPT_HEADERFUNCTION callback.
typedef size_t (*ccurl_write_callback)(char *buffer, size_t size, size_t count, void *userdata);
/// A CURLOPT_XFERINFOFUNCTION callback; a non-zero return aborts the transfer.
typedef int (*ccurl_xferinfo_callback)(void *userdata, curl_off_t dltotal, curl_off_t dlnow,
                                       curl_off_t ultotal, curl_off_t ulnow);

/// CURLOPTTYPE_LONG options.
static inline CURLcode ccurl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

/// CURLOPTTYPE_OFF_T options (the *_LARGE family).
static inline CURLcode ccurl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

/// CURLOPTTYPE_STRINGPOINT options (libcurl copies the string) and CURLOPT_COPYPOSTFIELDS.
static inline CURLcode ccurl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

/// CURLOPTTYPE_OBJECTPOINT / CBPOINT options that take an opaque pointer (userdata, error buffer).
static inline CURLcode ccurl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

/// CURLOPTTYPE_SLISTPOINT options (CURLOPT_HTTPHEADER); the list must outlive the transfer.
static inline CURLcode ccurl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

/// CURLOPT_WRITEFUNCTION or CURLOPT_HEADERFUNCTION.
static inline CURLcode ccurl_easy_setopt_write_callback(CURL *handle, CURLoption option,
                                                        ccurl_write_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

/// CURLOPT_XFERINFOFUNCTION.
static inline CURLcode ccurl_easy_setopt_xferinfo_callback(CURL *handle, ccurl_xferinfo_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
}

/// CURLINFO_LONG values (CURLINFO_RESPONSE_CODE, CURLINFO_REDIRECT_COUNT).
static inline CURLcode ccurl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

/// CURLINFO_STRING values (CURLINFO_EFFECTIVE_URL); the string belongs to the handle.
static inline CURLcode ccurl_easy_getinfo_string(CURL *handle, CURLINFO info, char **value) {
    return curl_easy_getinfo(handle, info, value);
}

/// CURLMOPTTYPE_LONG multi options.
static inline CURLMcode ccurl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

/// The result code of a CURLMSG_DONE message (a union member Swift cannot name reliably).
static inline CURLcode ccurl_message_result(const CURLMsg *message) {
    return message->data.result;
}

/// CURL_HTTP_VERSION_2TLS as a long (an anonymous enum in curl.h).
static inline long ccurl_http_version_2tls(void) { return CURL_HTTP_VERSION_2TLS; }

/// CURL_ERROR_SIZE (a macro).
static inline size_t ccurl_error_size(void) { return CURL_ERROR_SIZE; }

#endif
