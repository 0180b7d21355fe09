#include "executor/checkpoint/manifest.h"

#include <algorithm>
#include <limits>
#include <map>
#include <iterator>
#include <optional>
#include <span>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/json_depth.h"
#include "executor/crc32c.h"

namespace stowage::executor {
namespace {

// ordered_json keeps keys in the order written, so `format` comes first and
// the caller's metadata keeps its own order through a save and load.
using Json = nlohmann::ordered_json;

// nlohmann reports a syntax error as a 1-based byte position (the last byte
// read); people and editors want line:column.
core::SourceLocation location_of_byte(std::string_view text, size_t byte, const std::string& path) {
  const size_t index = std::min(byte == 0 ? 0 : byte - 1, text.size());
  const std::string_view before = text.substr(0, index);
  const auto line = 1 + std::count(before.begin(), before.end(), '\n');
  const size_t last_newline = before.rfind('\n');
  const size_t column = last_newline == std::string_view::npos ? index + 1 : index - last_newline;
  return {path, static_cast<int>(line), static_cast<int>(column)};
}

// nlohmann's message after its "[json.exception...] parse error at ...: " prefix.
std::string syntax_message(const nlohmann::json::parse_error& e) {
  const std::string_view full = e.what();
  const size_t colon = full.find(": ");
  return std::string(colon == std::string_view::npos ? full : full.substr(colon + 2));
}

// Reads the fields of one JSON object, recording a diagnostic for every
// missing or mistyped key instead of stopping at the first.
class FieldReader {
 public:
  FieldReader(const Json& object, std::string where, const std::string& path, core::Diagnostics& problems)
      : object_(object), where_(std::move(where)), path_(path), problems_(problems) {}

  std::string text(const char* key) {
    const Json* v = find(key);
    if (v != nullptr && v->is_string()) return v->get<std::string>();
    if (v != nullptr) complain(key, "is not a string", "a string");
    return {};
  }

  int64_t count(const char* key, uint64_t max = std::numeric_limits<int64_t>::max()) {
    const Json* v = find(key);
    if (v != nullptr && v->is_number_unsigned() && v->get<uint64_t>() <= max) {
      return static_cast<int64_t>(v->get<uint64_t>());
    }
    if (v != nullptr)
      complain(key, "is not an integer from 0 to " + std::to_string(max), "a non-negative integer");
    return 0;
  }

 private:
  const Json* find(const char* key) {
    if (object_.contains(key)) return &object_[key];
    complain(key, "is missing", "every key listed in docs/formats/checkpoint.md");
    return nullptr;
  }

  void complain(const char* key, const std::string& what, const std::string& expected) {
    problems_.push_back({{path_, 0, 0}, where_ + "key '" + key + "' " + what, expected});
  }

  const Json& object_;
  std::string where_;
  const std::string& path_;
  core::Diagnostics& problems_;
};

// A data file is named without any directory part, so a manifest cannot
// send the loader outside its checkpoint ("../../etc/passwd").
bool is_plain_file_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
}

const Json* array_at(const Json& doc, const char* key, const std::string& path, core::Diagnostics& problems) {
  if (doc.contains(key) && doc[key].is_array()) return &doc[key];
  problems.push_back({{path, 0, 0}, std::string("key '") + key + "' is missing or not an array", "an array"});
  return nullptr;
}

void read_files(const Json& doc, const std::string& path, Manifest& out, core::Diagnostics& problems) {
  const Json* files = array_at(doc, "files", path, problems);
  if (files == nullptr) return;
  for (size_t i = 0; i < files->size(); ++i) {
    const std::string where = "files[" + std::to_string(i) + "]: ";
    if (!(*files)[i].is_object()) {
      problems.push_back({{path, 0, 0}, where + "is not an object", "{\"file\": ..., \"size\": ...}"});
      continue;
    }
    FieldReader r((*files)[i], where, path, problems);
    ManifestFile f{.file = r.text("file"), .size = core::Bytes(r.count("size"))};
    if (!is_plain_file_name(f.file)) {
      problems.push_back({{path, 0, 0},
                          where + "file '" + f.file + "' is not a plain file name",
                          "a name inside the checkpoint directory, without '/'"});
    }
    out.files.push_back(std::move(f));
  }
}

void read_blobs(const Json& doc, const std::string& path, Manifest& out, core::Diagnostics& problems) {
  const Json* blobs = array_at(doc, "blobs", path, problems);
  if (blobs == nullptr) return;
  for (size_t i = 0; i < blobs->size(); ++i) {
    const std::string where = "blobs[" + std::to_string(i) + "]: ";
    if (!(*blobs)[i].is_object()) {
      problems.push_back({{path, 0, 0}, where + "is not an object", "a blob entry"});
      continue;
    }
    FieldReader r((*blobs)[i], where, path, problems);
    out.blobs.push_back({.name = r.text("name"),
                         .tier = r.text("tier"),
                         .size = core::Bytes(r.count("size")),
                         .file = r.text("file"),
                         .offset = core::Bytes(r.count("offset")),
                         .crc32c = static_cast<uint32_t>(r.count("crc32c", 0xFFFFFFFFu))});
  }
}

// Where a blob ends, for messages. Both terms are at most INT64_MAX (the
// reader caps them), so their sum fits in 64 unsigned bits where the signed
// sum of a hostile manifest would overflow (issue 12, found by UBSan).
uint64_t end_of(const ManifestBlob& b) {
  return static_cast<uint64_t>(b.offset.count()) + static_cast<uint64_t>(b.size.count());
}

// Each blob is unique by name and lies inside a listed file.
void check_blob_places(const Manifest& m, const std::string& path, core::Diagnostics& problems) {
  std::map<std::string, core::Bytes, std::less<>> file_sizes;
  for (const ManifestFile& f : m.files) file_sizes[f.file] = f.size;
  std::map<std::string, int, std::less<>> seen;
  for (const ManifestBlob& b : m.blobs) {
    if (++seen[b.name] == 2)
      problems.push_back({{path, 0, 0}, "blob '" + b.name + "' appears twice", "unique names"});
    const auto file = file_sizes.find(b.file);
    if (file == file_sizes.end()) {
      problems.push_back({{path, 0, 0},
                          "blob '" + b.name + "' lies in file '" + b.file + "', which is not listed",
                          "a file from 'files'"});
    } else if (b.size > file->second - b.offset) {
      problems.push_back({{path, 0, 0},
                          "blob '" + b.name + "' ends at byte " + std::to_string(end_of(b)) + " of file '" +
                              b.file + "', which has " + std::to_string(file->second.count()) + " bytes",
                          "blobs inside their file"});
    }
  }
}

std::optional<Json> parse_json(std::string_view text, const std::string& path, core::Diagnostics& problems) {
  // Before parsing: a deeply nested manifest overflowed the stack (issue 12).
  if (auto too_deep = core::check_json_depth(text, path)) {
    problems.push_back(std::move(*too_deep));
    return std::nullopt;
  }
  try {
    return Json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    problems.push_back({location_of_byte(text, e.byte, path), "not valid JSON: " + syntax_message(e),
                        "a manifest written by save_checkpoint"});
    return std::nullopt;
  } catch (const nlohmann::json::exception& e) {
    // A number past double's range ("1e999") is out_of_range, not a
    // parse_error: it escaped as an internal error (found by manifest_fuzzer).
    problems.push_back({{path, 1, 1}, std::string("not valid JSON: ") + e.what(), "a manifest written by save_checkpoint"});
    return std::nullopt;
  }
}

void check_format(const Json& doc, const std::string& path, core::Diagnostics& problems) {
  const std::string expected =
      "format '" + std::string(kCheckpointFormat) + "', the only one this build knows";
  if (!doc.contains("format") || !doc["format"].is_string()) {
    problems.push_back({{path, 0, 0}, "key 'format' is missing or not a string", expected});
  } else if (doc["format"].get<std::string>() == "stowage/checkpoint/v1") {
    problems.push_back({{path, 0, 0},
                        "format 'stowage/checkpoint/v1' was written by an older Stowage, whose manifests carry "
                        "no checksum",
                        expected + "; start the run anew without --resume"});
  } else if (doc["format"].get<std::string>() != kCheckpointFormat) {
    problems.push_back({{path, 0, 0}, "unknown format '" + doc["format"].get<std::string>() + "'", expected});
  }
}

uint32_t crc_of(std::string_view bytes) {
  return crc32c(std::as_bytes(std::span(bytes.data(), bytes.size())));
}

// Where the checksum key starts: its last occurrence. A string value cannot
// hold the quoted key unescaped, and the key must be the object's last, so
// the last occurrence is the top-level key.
size_t checksum_key_at(std::string_view text) {
  return text.rfind("\"" + std::string(kManifestChecksumKey) + "\"");
}

// The manifest's own CRC32C (its last key) against the bytes before that key.
void check_checksum(std::string_view text, const Json& doc, const std::string& path, core::Diagnostics& problems) {
  const std::string key(kManifestChecksumKey);
  const std::string expected = "a manifest as save_checkpoint wrote it, '" + key + "' its last key";
  const size_t at = checksum_key_at(text);
  if (!doc.contains(key) || at == std::string_view::npos) {
    problems.push_back({location_of_byte(text, text.size(), path), "key '" + key + "' is missing", expected});
    return;
  }
  const core::SourceLocation where = location_of_byte(text, at + 1, path);
  if (std::prev(doc.end()).key() != key) {
    problems.push_back({where, "key '" + key + "' is not the manifest's last key", expected});
    return;
  }
  const Json& value = doc[key];
  if (!value.is_number_unsigned() || value.get<uint64_t>() > 0xFFFFFFFFu) {
    problems.push_back({where, "key '" + key + "' is not an integer from 0 to 4294967295", expected});
    return;
  }
  const uint32_t computed = crc_of(text.substr(0, at));
  if (computed != value.get<uint64_t>()) {
    problems.push_back({where,
                        "key '" + key + "': the manifest says " + std::to_string(value.get<uint64_t>()) +
                            " but its bytes give " + std::to_string(computed) +
                            ": corrupt or edited checkpoint manifest",
                        expected});
  }
}

}  // namespace

std::string manifest_to_text(const Manifest& manifest) {
  try {
    Json metadata = Json::parse(manifest.metadata_json);
    if (!metadata.is_object()) throw std::invalid_argument("checkpoint metadata is not a JSON object");
    Json doc = {{"format", kCheckpointFormat}, {"metadata", std::move(metadata)}};
    doc["files"] = Json::array();
    for (const ManifestFile& f : manifest.files)
      doc["files"].push_back({{"file", f.file}, {"size", f.size.count()}});
    doc["blobs"] = Json::array();
    for (const ManifestBlob& b : manifest.blobs) {
      doc["blobs"].push_back({{"name", b.name},
                              {"tier", b.tier},
                              {"size", b.size.count()},
                              {"file", b.file},
                              {"offset", b.offset.count()},
                              {"crc32c", b.crc32c}});
    }
    return seal_manifest_text(doc.dump(2) + "\n");
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("cannot write checkpoint manifest: ") + e.what());
  }
}

std::string seal_manifest_text(std::string_view text) {
  if (const size_t at = checksum_key_at(text); at != std::string_view::npos) text = text.substr(0, at);
  const auto trim_end = [&text] {
    while (!text.empty() && (text.back() == ' ' || text.back() == '\n' || text.back() == '\t' || text.back() == '\r'))
      text.remove_suffix(1);
  };
  trim_end();
  std::string prefix;
  if (text.ends_with(',')) {  // the cut of a sealed text: "...],\n  "
    prefix = std::string(text) + "\n  ";
  } else {
    if (!text.ends_with('}')) throw std::invalid_argument("a checkpoint manifest is a JSON object ending with '}'");
    text.remove_suffix(1);
    trim_end();
    prefix = std::string(text) + (text.ends_with('{') ? "\n  " : ",\n  ");
  }
  return prefix + "\"" + std::string(kManifestChecksumKey) + "\": " + std::to_string(crc_of(prefix)) + "\n}\n";
}

core::Result<Manifest> parse_manifest(std::string_view text, const std::string& path) {
  core::Diagnostics problems;
  const std::optional<Json> doc = parse_json(text, path, problems);
  if (!doc) return std::unexpected(std::move(problems));
  if (!doc->is_object())
    return core::fail({{path, 1, 1}, "manifest is not a JSON object", "{\"format\": ...}"});
  check_format(*doc, path, problems);
  if (!problems.empty()) return std::unexpected(std::move(problems));  // unknown format: the rest may differ
  check_checksum(text, *doc, path, problems);
  if (!problems.empty()) return std::unexpected(std::move(problems));  // no field of it can be trusted
  Manifest manifest;
  if (doc->contains("metadata") && (*doc)["metadata"].is_object()) {
    manifest.metadata_json = (*doc)["metadata"].dump();
  } else {
    problems.push_back({{path, 0, 0}, "key 'metadata' is missing or not an object", "a JSON object"});
  }
  read_files(*doc, path, manifest, problems);
  read_blobs(*doc, path, manifest, problems);
  if (problems.empty()) check_blob_places(manifest, path, problems);
  if (!problems.empty()) return std::unexpected(std::move(problems));
  return manifest;
}

}  // namespace stowage::executor
