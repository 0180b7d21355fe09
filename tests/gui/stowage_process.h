// `stowage` run as its own process on the bundled profiles, for the tests
// that hold the GUI's jobs to the command's answers.
#pragma once

#include <gtest/gtest.h>

#include <QProcess>
#include <QStringList>
#include <string>

namespace stowage::gui::testing {

struct StowageRun {
  int exit_code = -1;  // -1 when it did not exit normally
  std::string out, err;
};

inline StowageRun run_stowage(const QStringList& args) {
  QProcess p;
  p.start(QStringLiteral(STOWAGE_BINARY), QStringList{"--profiles", STOWAGE_PROFILES_DIR} + args);
  EXPECT_TRUE(p.waitForFinished(120'000)) << "stowage did not exit";
  return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput().toStdString(),
          p.readAllStandardError().toStdString()};
}

}  // namespace stowage::gui::testing
