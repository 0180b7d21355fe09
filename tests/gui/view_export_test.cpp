// The GUI's image files follow the CLI's output rules (issue 12 item 1):
// `--screenshot` and the view export never replace a device node, FIFO or
// folder, follow a symlink to its target, keep an existing file's mode and
// leave no temporary file behind. The in-process tests call what
// stowage-gui calls; the process tests run stowage-gui itself for the exit
// code (73) and the check before loading.
#include "gui/view_export.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <QLabel>
#include <QProcess>
#include <QProcessEnvironment>
#include <QTemporaryDir>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace stowage::gui {
namespace {

namespace fs = std::filesystem;

class ViewExport : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.isValid());
    widget_.setText("stowage");
    widget_.resize(120, 40);
  }
  [[nodiscard]] std::string at(const char* name) const { return dir_.filePath(name).toStdString(); }
  [[nodiscard]] QString qat(const char* name) const { return dir_.filePath(name); }
  static std::string read(const std::string& p) {
    std::ostringstream s;
    s << std::ifstream(p, std::ios::binary).rdbuf();
    return s.str();
  }
  static mode_t mode_of(const std::string& p) {
    struct stat st {};
    EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
    return st.st_mode;
  }
  // The entries of the folder: no temporary file may stay.
  [[nodiscard]] size_t entries() const {
    return static_cast<size_t>(std::distance(fs::directory_iterator(at("")), fs::directory_iterator()));
  }
  static bool is_png(const std::string& bytes) { return bytes.starts_with("\x89PNG"); }

  QTemporaryDir dir_;
  QLabel widget_;
};

TEST_F(ViewExport, WritesANewPng) {
  EXPECT_EQ(export_png(widget_, qat("shot.png")), QString());
  EXPECT_TRUE(is_png(read(at("shot.png"))));
  EXPECT_EQ(entries(), 1u);
}

TEST_F(ViewExport, TheFormatAsked) {
  ASSERT_EQ(export_image(widget_, qat("shot.jpg"), "jpg"), QString());
  EXPECT_TRUE(read(at("shot.jpg")).starts_with("\xff\xd8"));  // JPEG's start-of-image marker
}

TEST_F(ViewExport, OverAPrivateFileKeepsItPrivate) {
  std::ofstream(at("shot.png")) << "old";
  ASSERT_EQ(::chmod(at("shot.png").c_str(), 0600), 0);
  ASSERT_EQ(export_png(widget_, qat("shot.png")), QString());
  EXPECT_EQ(mode_of(at("shot.png")) & 07777, 0600u);  // Qt's own save left 0644 for a new file
  EXPECT_TRUE(is_png(read(at("shot.png"))));
  EXPECT_EQ(entries(), 1u);
}

TEST_F(ViewExport, OntoAFifoIsRefusedWithoutOpeningIt) {
  ASSERT_EQ(::mkfifo(at("pipe.png").c_str(), 0644), 0);
  // Opening the FIFO to write would block here until a reader came.
  const QString problem = export_png(widget_, qat("pipe.png"));
  EXPECT_TRUE(problem.startsWith(qat("pipe.png") + ": ")) << problem.toStdString();
  EXPECT_TRUE(problem.contains("FIFO") || problem.contains("fifo")) << problem.toStdString();
  EXPECT_TRUE(S_ISFIFO(mode_of(at("pipe.png"))));
  EXPECT_EQ(entries(), 1u);
}

TEST_F(ViewExport, OntoAFolderIsRefusedAndTheFolderKept) {
  fs::create_directory(at("shots.png"));
  std::ofstream(at("shots.png/keep")) << "mine";
  const QString problem = export_png(widget_, qat("shots.png"));
  EXPECT_TRUE(problem.contains("not a regular file")) << problem.toStdString();
  EXPECT_EQ(read(at("shots.png/keep")), "mine");
  EXPECT_EQ(entries(), 1u);
}

TEST_F(ViewExport, OntoDevFullIsRefusedAndTheDeviceStays) {
  // Before issue 12 the CLI's renaming writer turned /dev/full (run as root)
  // into a regular file; a screenshot must neither do that nor write into it.
  const QString problem = export_png(widget_, "/dev/full");
  EXPECT_TRUE(problem.startsWith("/dev/full: ")) << problem.toStdString();
  EXPECT_TRUE(problem.contains("character device")) << problem.toStdString();
  EXPECT_TRUE(S_ISCHR(mode_of("/dev/full")));
}

TEST_F(ViewExport, ASymlinkIsFollowedAndItsTargetReplaced) {
  std::ofstream(at("target.png")) << "old";
  ASSERT_EQ(::chmod(at("target.png").c_str(), 0640), 0);
  fs::create_symlink("target.png", at("link.png"));
  ASSERT_EQ(export_png(widget_, qat("link.png")), QString());
  EXPECT_TRUE(S_ISLNK(mode_of(at("link.png"))));  // the link stays a link
  EXPECT_TRUE(is_png(read(at("target.png"))));
  EXPECT_EQ(mode_of(at("target.png")) & 07777, 0640u);
  EXPECT_EQ(entries(), 2u);
}

TEST_F(ViewExport, ASymlinkToADeviceIsRefused) {
  fs::create_symlink("/dev/null", at("null.png"));
  const QString problem = export_png(widget_, qat("null.png"));
  EXPECT_TRUE(problem.contains("/dev/null")) << problem.toStdString();
  EXPECT_TRUE(S_ISLNK(mode_of(at("null.png"))));
}

TEST_F(ViewExport, ASymlinkLoopIsNamed) {
  fs::create_symlink("loop.png", at("loop.png"));
  const QString problem = export_png(widget_, qat("loop.png"));
  EXPECT_TRUE(problem.contains("too many levels of symbolic links")) << problem.toStdString();
}

TEST_F(ViewExport, AMissingFolderIsRefused) {
  const QString problem = export_png(widget_, qat("no-such-folder/shot.png"));
  EXPECT_TRUE(problem.contains("no-such-folder")) << problem.toStdString();
  EXPECT_EQ(entries(), 0u);
}

TEST_F(ViewExport, SvgFollowsTheSameRules) {
  std::ofstream(at("view.svg")) << "old";
  ASSERT_EQ(::chmod(at("view.svg").c_str(), 0600), 0);
  ASSERT_EQ(export_svg(widget_, qat("view.svg"), "title"), QString());
  EXPECT_NE(read(at("view.svg")).find("<svg"), std::string::npos);
  EXPECT_EQ(mode_of(at("view.svg")) & 07777, 0600u);
  ASSERT_EQ(::mkfifo(at("pipe.svg").c_str(), 0644), 0);
  EXPECT_FALSE(export_svg(widget_, qat("pipe.svg"), "title").isEmpty());
  EXPECT_TRUE(S_ISFIFO(mode_of(at("pipe.svg"))));
  EXPECT_EQ(entries(), 2u);
}

TEST_F(ViewExport, CheckingAPathCreatesNothing) {
  EXPECT_EQ(check_export_path(qat("shot.png")), QString());
  EXPECT_FALSE(check_export_path("/dev/full").isEmpty());
  EXPECT_EQ(entries(), 0u);
}

// stowage-gui itself: the exit code and the check before anything loads.
struct GuiRun {
  int code = -1;
  QString err;
};

GuiRun run_gui(const QStringList& args) {
  QProcess p;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert("QT_QPA_PLATFORM", "offscreen");
  p.setProcessEnvironment(env);
  p.start(QStringLiteral(STOWAGE_GUI_BINARY), args);
  EXPECT_TRUE(p.waitForFinished(120'000)) << "stowage-gui did not exit";
  return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromLocal8Bit(p.readAllStandardError())};
}

const QString kTrace = QStringLiteral(STOWAGE_TEST_DATA_DIR "/golden/tiny_gpt_zero_offload.json");

using Screenshot = ViewExport;

TEST_F(Screenshot, OverAPrivateFileKeepsItsMode) {
  std::ofstream(at("shot.png")) << "old";
  ASSERT_EQ(::chmod(at("shot.png").c_str(), 0600), 0);
  const GuiRun r = run_gui({"--screenshot", qat("shot.png"), "--size", "800x500", kTrace});
  EXPECT_EQ(r.code, 0) << r.err.toStdString();
  EXPECT_TRUE(is_png(read(at("shot.png"))));
  EXPECT_EQ(mode_of(at("shot.png")) & 07777, 0600u);
  EXPECT_EQ(entries(), 1u);
}

TEST_F(Screenshot, OntoDevFullExits73BeforeLoading) {
  // The suffix names the image format, so /dev/full is reached through a link.
  fs::create_symlink("/dev/full", at("full.png"));
  const GuiRun r = run_gui({"--screenshot", qat("full.png"), kTrace});
  EXPECT_EQ(r.code, 73) << r.err.toStdString();
  EXPECT_TRUE(r.err.contains("stowage-gui: " + qat("full.png") + ": '/dev/full' is a character device"))
      << r.err.toStdString();
  EXPECT_TRUE(S_ISCHR(mode_of("/dev/full")));
  EXPECT_TRUE(S_ISLNK(mode_of(at("full.png"))));
}

TEST_F(Screenshot, OntoAFifoOrAFolderExits73) {
  ASSERT_EQ(::mkfifo(at("pipe.png").c_str(), 0644), 0);
  fs::create_directory(at("folder.png"));
  for (const char* name : {"pipe.png", "folder.png"}) {
    const GuiRun r = run_gui({"--screenshot", qat(name), kTrace});
    EXPECT_EQ(r.code, 73) << name << ": " << r.err.toStdString();
    EXPECT_TRUE(r.err.contains(qat(name) + ": ")) << r.err.toStdString();
  }
  EXPECT_TRUE(S_ISFIFO(mode_of(at("pipe.png"))));
  EXPECT_TRUE(S_ISDIR(mode_of(at("folder.png"))));
  EXPECT_EQ(entries(), 2u);
}

// Issue 12 item 6: stowage-gui exited 0 with a screenshot when every input
// failed, and hung on /dev/zero.
TEST_F(Screenshot, AFailedInputStillGivesTheScreenshotButExits65) {
  std::ofstream(at("bad.json")) << "{\"traceEvents\": [\n  {\"ph\": \"X\" \"ts\": 1}\n]}";
  const GuiRun r = run_gui({"--screenshot", qat("shot.png"), qat("bad.json")});
  EXPECT_EQ(r.code, 65) << r.err.toStdString();
  EXPECT_TRUE(r.err.contains(qat("bad.json") + ":2:")) << r.err.toStdString();
  EXPECT_TRUE(is_png(read(at("shot.png"))));
}

TEST_F(Screenshot, DevZeroAndAFifoAreRefusedWithoutReading) {
  ASSERT_EQ(::mkfifo(at("pipe.json").c_str(), 0644), 0);
  const GuiRun r = run_gui({"--screenshot", qat("shot.png"), "/dev/zero", qat("pipe.json")});
  EXPECT_EQ(r.code, 65) << r.err.toStdString();
  EXPECT_TRUE(r.err.contains("/dev/zero: ")) << r.err.toStdString();
  EXPECT_TRUE(r.err.contains(qat("pipe.json") + ": ")) << r.err.toStdString();
}

}  // namespace
}  // namespace stowage::gui
