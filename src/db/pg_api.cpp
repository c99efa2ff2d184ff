#include "db/pg_api.hpp"

#include <dlfcn.h>

#include <type_traits>

namespace convguard::db {

const PqApi& pq() {
  static const PqApi api = [] {
    PqApi a;
    void* lib = ::dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      a.missing = std::string("libpq.so.5 could not be loaded (install libpq5): ") + ::dlerror();
      return a;
    }
    const auto load = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(lib, name));
      if (!fn && a.missing.empty()) a.missing = std::string("libpq.so.5 lacks ") + name;
    };
    load(a.PQconnectdbParams, "PQconnectdbParams");
    load(a.PQstatus, "PQstatus");
    load(a.PQerrorMessage, "PQerrorMessage");
    load(a.PQfinish, "PQfinish");
    load(a.PQreset, "PQreset");
    load(a.PQexec, "PQexec");
    load(a.PQexecParams, "PQexecParams");
    load(a.PQresultStatus, "PQresultStatus");
    load(a.PQclear, "PQclear");
    load(a.PQntuples, "PQntuples");
    load(a.PQcmdTuples, "PQcmdTuples");
    load(a.PQgetvalue, "PQgetvalue");
    load(a.PQsetNoticeProcessor, "PQsetNoticeProcessor");
    load(a.PQconninfoParse, "PQconninfoParse");
    load(a.PQconninfoFree, "PQconninfoFree");
    load(a.PQfreemem, "PQfreemem");
    return a;
  }();
  return api;
}

}  // namespace convguard::db
