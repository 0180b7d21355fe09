// libFuzzer target for checkpoint manifests (issue 12 item 8): any bytes
// must give a manifest or diagnostics, never a crash, hang or leak. The
// first byte chooses whether the text is sealed first (its manifest_crc32c
// made right), so that mutations reach the fields behind the checksum too.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "executor/checkpoint/manifest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 1) {
    try {
      text = stowage::executor::seal_manifest_text(text);
    } catch (const std::invalid_argument&) {
      // not an object's text: parsed as it is
    }
  }
  (void)stowage::executor::parse_manifest(text, "fuzz.json");
  return 0;
}
