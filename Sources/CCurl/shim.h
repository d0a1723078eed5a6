#ifndef QUIRE_CCURL_SHIM_H
#define QUIRE_CCURL_SHIM_H
#include <curl/curl.h>
#endif
