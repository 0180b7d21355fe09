#include "executor/checkpoint/save_checkpoint.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <cerrno>
#include <cstdio>
#include <set>
#include <stdexcept>
#include <string>

#include "executor/checkpoint/checkpoint_root.h"
#include "executor/checkpoint/checkpoint_write_error.h"
#include "executor/crc32c.h"
#include "executor/checkpoint/manifest.h"

namespace stowage::executor {
namespace {

// Every blob starts on a 4 KiB boundary so that a loader may read it with
// O_DIRECT into an aligned buffer (the logical block size of NVMe drives).
constexpr int64_t kBlobAlignment = 4096;
// All blobs go into one data file (kDataFileName): one fsync instead of
// one per blob.

bool is_valid_name(std::string_view name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string_view::npos &&
         name.find('\0') == std::string_view::npos && name.find(kTempMarker) == std::string_view::npos &&
         name.find(kAsideMarker) == std::string_view::npos;
}

// Refuses a caller's mistake before a byte is written: the manifest skeleton
// goes through manifest_to_text, which checks the metadata and UTF-8.
void check_arguments(std::string_view name, std::string_view metadata_json,
                     std::span<const BlobSource> blobs) {
  if (!is_valid_name(name)) throw std::invalid_argument("bad checkpoint name '" + std::string(name) + "'");
  Manifest skeleton{.metadata_json = std::string(metadata_json)};
  std::set<std::string, std::less<>> names;
  for (const BlobSource& blob : blobs) {
    if (!names.insert(blob.name).second) throw std::invalid_argument("blob '" + blob.name + "' given twice");
    skeleton.blobs.push_back({.name = blob.name, .tier = blob.tier});
  }
  (void)manifest_to_text(skeleton);
}

// Passes a blob's chunks to the data file and checksums them on the way.
class ChecksummingSink final : public BlobSink {
 public:
  ChecksummingSink(OutputFile& file, const std::string& blob) : file_(file), blob_(blob) {}
  void write(std::span<const std::byte> chunk) override {
    file_.append(chunk, blob_);
    crc_ = crc32c_extend(crc_, chunk);
  }
  [[nodiscard]] uint32_t crc() const { return crc_; }

 private:
  OutputFile& file_;
  const std::string& blob_;
  uint32_t crc_ = 0;
};

ManifestBlob write_blob(OutputFile& file, const BlobSource& blob) {
  file.pad_to_multiple(kBlobAlignment, blob.name);
  const int64_t offset = file.size();
  ChecksummingSink sink(file, blob.name);
  if (const auto* bytes = std::get_if<std::span<const std::byte>>(&blob.content)) {
    sink.write(*bytes);
  } else {
    std::get<BlobProducer>(blob.content)(sink);
  }
  return {.name = blob.name,
          .tier = blob.tier,
          .size = core::Bytes(file.size() - offset),
          .file = std::string(kDataFileName),
          .offset = core::Bytes(offset),
          .crc32c = sink.crc()};
}

Manifest write_data(const std::filesystem::path& dir, std::string_view metadata_json,
                    std::span<const BlobSource> blobs, const SaveOptions& options) {
  Manifest manifest{.metadata_json = std::string(metadata_json)};
  OutputFile data(dir / kDataFileName, &options.inject_write_fault);
  for (const BlobSource& blob : blobs) manifest.blobs.push_back(write_blob(data, blob));
  manifest.files.push_back({.file = std::string(kDataFileName), .size = core::Bytes(data.size())});
  data.sync_and_close();
  return manifest;
}

void write_manifest(const std::filesystem::path& dir, const Manifest& manifest, const SaveOptions& options) {
  const std::string text = manifest_to_text(manifest);
  OutputFile file(dir / kManifestFileName, &options.inject_write_fault);
  file.append(std::as_bytes(std::span(text)), "");
  file.sync_and_close();
}

// Removes the temporary directory on every way out of save_checkpoint: an
// exception leaves no half-written checkpoint, and after a swap the old
// checkpoint sits at this path.
class TempDirGuard {
 public:
  explicit TempDirGuard(std::filesystem::path dir) : dir_(std::move(dir)) {}
  // Removes only what a save writes: after a swap the old checkpoint is
  // here, and a file a user put in it stays (and so does the directory).
  // A failure to clean up must not hide the first error.
  ~TempDirGuard() { remove_checkpoint_dir(dir_); }
  TempDirGuard(const TempDirGuard&) = delete;
  TempDirGuard& operator=(const TempDirGuard&) = delete;
  [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

std::filesystem::path make_temp_dir(const std::filesystem::path& root, std::string_view name) {
  std::string pattern = (root / name).string() + std::string(kTempMarker) + "XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) throw CheckpointWriteError("cannot create", pattern, "", errno);
  return pattern;
}

// Without RENAME_EXCHANGE (some network filesystems): the old checkpoint is
// moved aside, the new one in, and the old one is put back if that fails.
std::filesystem::path install_with_aside(const std::filesystem::path& temp,
                                         const std::filesystem::path& target) {
  const std::string suffix =
      temp.filename().string().substr(target.filename().string().size() + kTempMarker.size());
  const std::filesystem::path aside = target.string() + std::string(kAsideMarker) + suffix;
  if (std::rename(target.c_str(), aside.c_str()) != 0)
    throw CheckpointWriteError("cannot rename", target, "", errno);
  if (std::rename(temp.c_str(), target.c_str()) != 0) {
    const int err = errno;
    std::rename(aside.c_str(), target.c_str());
    throw CheckpointWriteError("cannot rename", temp, "", err);
  }
  return aside;
}

// Moves the finished `temp` directory to `target`. Returns where the
// checkpoint it replaced now lies, to delete once the move is durable, or
// an empty path if there was none.
std::filesystem::path install(const std::filesystem::path& temp, const std::filesystem::path& target) {
  // Only a checkpoint is replaced (issue 12): a user's step-000001/ without
  // a manifest, or a file of that name, stays as it is.
  struct stat st {};
  if (::lstat(target.c_str(), &st) == 0 && !is_checkpoint_dir(target)) {
    throw CheckpointWriteError("will not replace (it is not a Stowage checkpoint: no manifest.json)", target,
                               "", EEXIST);
  }
  // Swapping the two names in one step keeps `target` complete throughout.
  if (::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0) return temp;
  if (errno == ENOENT) {  // nothing to replace
    if (std::rename(temp.c_str(), target.c_str()) != 0)
      throw CheckpointWriteError("cannot rename", temp, "", errno);
    return {};
  }
  if (errno == EINVAL || errno == ENOSYS) return install_with_aside(temp, target);
  throw CheckpointWriteError("cannot rename", temp, "", errno);
}

void prepare_root(const std::filesystem::path& root) {
  std::error_code ec;
  if (std::filesystem::create_directories(root, ec))
    sync_directory(root.parent_path().empty() ? "." : root.parent_path());
  if (ec) throw CheckpointWriteError("cannot create", root, "", ec.value());
  remove_leftovers(root);
}

}  // namespace

std::filesystem::path save_checkpoint(const std::filesystem::path& root, std::string_view name,
                                      std::string_view metadata_json, std::span<const BlobSource> blobs,
                                      const SaveOptions& options) {
  check_arguments(name, metadata_json, blobs);
  prepare_root(root);
  const TempDirGuard temp(make_temp_dir(root, name));
  const Manifest manifest = write_data(temp.dir(), metadata_json, blobs, options);
  write_manifest(temp.dir(), manifest, options);
  sync_directory(temp.dir());
  const std::filesystem::path target = root / name;
  const std::filesystem::path replaced = install(temp.dir(), target);
  sync_directory(root);
  // An aside left behind is cleaned by the next save.
  if (!replaced.empty() && replaced != temp.dir()) remove_checkpoint_dir(replaced);
  return target;
}

}  // namespace stowage::executor
