#ifndef TABSTORE_CPOSTGRES_SHIM_H
#define TABSTORE_CPOSTGRES_SHIM_H
// libpq, PostgreSQL's client library (Debian: libpq-dev installs it under /usr/include/postgresql).
#include <postgresql/libpq-fe.h>
#endif
