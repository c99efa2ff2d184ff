// A results database in the temp directory for one test, removed (with its WAL files) after.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "db/store.hpp"

struct TempStore {
  std::string path;
  std::unique_ptr<convguard::db::Store> store;
  explicit TempStore(const std::string& name)
      : path((std::filesystem::temp_directory_path() /
              ("cg_" + name + "_" + std::to_string(::getpid()) + ".db"))
                 .string()) {
    std::filesystem::remove(path);
    auto s = convguard::db::Store::open(path);
    EXPECT_TRUE(s.is_ok()) << s.status().message();
    if (s) store = std::move(*s);
  }
  ~TempStore() {
    store.reset();
    for (const char* ext : {"", "-wal", "-shm"}) std::filesystem::remove(path + ext);
  }
};
