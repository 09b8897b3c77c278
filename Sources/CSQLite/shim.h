#ifndef TABSTORE_CSQLITE_SHIM_H
#define TABSTORE_CSQLITE_SHIM_H
#include <sqlite3.h>

// SQLITE_TRANSIENT is a cast of -1 to a function pointer, which Swift cannot import as a macro.
static inline sqlite3_destructor_type tabstore_sqlite_transient(void) { return SQLITE_TRANSIENT; }

// sqlite3_config is variadic; Swift cannot call variadic C functions.
static inline int tabstore_sqlite_config_multithread(void) { return sqlite3_config(SQLITE_CONFIG_MULTITHREAD); }
static inline int tabstore_sqlite_config_getpcache2(sqlite3_pcache_methods2 *methods) { return sqlite3_config(SQLITE_CONFIG_GETPCACHE2, methods); }
static inline int tabstore_sqlite_config_pcache2(const sqlite3_pcache_methods2 *methods) { return sqlite3_config(SQLITE_CONFIG_PCACHE2, methods); }
#endif
