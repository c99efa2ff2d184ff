// libpq, loaded at run time (dlopen of libpq.so.5) when a postgresql:// store is opened, as the
// oneDNN plugin loads libdnnl: convguard builds against Debian's libpq-dev header but runs
// without libpq on every machine that never uses the shared store (the H100 machine has no
// libpq5: a linked convguard did not start there at all).
#pragma once

#include <libpq-fe.h>

#include <string>

namespace convguard::db {

struct PqApi {
  decltype(&::PQconnectdbParams) PQconnectdbParams = nullptr;
  decltype(&::PQstatus) PQstatus = nullptr;
  decltype(&::PQerrorMessage) PQerrorMessage = nullptr;
  decltype(&::PQfinish) PQfinish = nullptr;
  decltype(&::PQreset) PQreset = nullptr;
  decltype(&::PQexec) PQexec = nullptr;
  decltype(&::PQexecParams) PQexecParams = nullptr;
  decltype(&::PQresultStatus) PQresultStatus = nullptr;
  decltype(&::PQclear) PQclear = nullptr;
  decltype(&::PQntuples) PQntuples = nullptr;
  decltype(&::PQcmdTuples) PQcmdTuples = nullptr;
  decltype(&::PQgetvalue) PQgetvalue = nullptr;
  decltype(&::PQsetNoticeProcessor) PQsetNoticeProcessor = nullptr;
  decltype(&::PQconninfoParse) PQconninfoParse = nullptr;
  decltype(&::PQconninfoFree) PQconninfoFree = nullptr;
  decltype(&::PQfreemem) PQfreemem = nullptr;
  // Empty when every function was found; else why not (the library or the symbol missing).
  std::string missing;
};

// Loaded once, on first use; thread-safe.
const PqApi& pq();

}  // namespace convguard::db
