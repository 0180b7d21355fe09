// stowage-gui: parses the command line and wires the main window; with
// --screenshot it loads, renders the window offscreen, saves and exits.
#include <QApplication>
#include <QEventLoop>
#include <QFileInfo>
#include <QImageWriter>
#include <QTimer>
#include <iostream>

#include "core/profile_catalog.h"
#include "gui/command_line.h"
#include "gui/main_window.h"
#include "gui/view_export.h"

namespace {

using stowage::gui::GuiOptions;
using stowage::gui::MainWindow;

constexpr int kLoadTimeoutMs = 120'000;

// The README's exit codes, as cli/exit_codes.h gives them to the command
// (the GUI may not include cli/: tests/layering_test.cpp).
constexpr int kExitOk = 0;
constexpr int kExitUsage = 2;
constexpr int kExitBadInput = 65;
constexpr int kExitCannotWrite = 73;

// Waits until every file (and a planner run, if asked for) has loaded.
void wait_until_loaded(MainWindow& window, bool planner_running) {
  QEventLoop loop;
  QTimer::singleShot(kLoadTimeoutMs, &loop, &QEventLoop::quit);
  if (planner_running) {
    QObject::connect(&window.planner(), &stowage::gui::PlannerPanel::finished, &loop, &QEventLoop::quit);
  } else if (window.loading()) {
    QObject::connect(&window, &MainWindow::loadsFinished, &loop, &QEventLoop::quit);
  } else {
    return;
  }
  loop.exec();
  QCoreApplication::processEvents();
}

void apply_start_options(MainWindow& window, const GuiOptions& options) {
  if (options.critical_path) window.set_critical_path(true);
  if (options.select_id) window.select_op_id(*options.select_id);
  if (!options.panel) return;
  switch (*options.panel) {
    case stowage::gui::StartPanel::kTimeline:
      window.hide_panels();
      break;
    case stowage::gui::StartPanel::kPlan:
      window.show_panel("Plan");
      break;
    case stowage::gui::StartPanel::kPlanner:
      window.show_panel("Planner");
      break;
    case stowage::gui::StartPanel::kCompare:
      window.show_panel("Compare");
      break;
  }
}

// The image format --screenshot's suffix names (".jpg" is JPEG), or an
// empty array when Qt writes no such format (it was always PNG, whatever
// the name said).
QByteArray screenshot_format(const QString& path) {
  const QByteArray suffix = QFileInfo(path).suffix().toLower().toLatin1();
  return QImageWriter::supportedImageFormats().contains(suffix) ? suffix : QByteArray();
}

// The screenshot is written even when an input failed (it shows what did
// load), but the exit code tells a script that something failed (65).
int take_screenshot(MainWindow& window, const GuiOptions& options) {
  wait_until_loaded(window, options.run_planner);
  const bool unfinished = window.loading();
  if (unfinished) std::cerr << "stowage-gui: loading did not finish in " << kLoadTimeoutMs / 1000 << " s\n";
  apply_start_options(window, options);
  // Hiding panels resizes the views, whose new sizes post further layout
  // requests (the legend's height for its width): let them settle.
  for (int i = 0; i < 3; ++i) QCoreApplication::processEvents();
  // Written as the CLI writes its outputs (core/output_file.h): never over
  // a device, FIFO or folder, a symlink's target replaced, the mode kept.
  if (const QString problem = stowage::gui::export_image(window, options.screenshot,
                                                         screenshot_format(options.screenshot));
      !problem.isEmpty()) {
    std::cerr << "stowage-gui: " << problem.toStdString() << '\n';
    return kExitCannotWrite;
  }
  if (unfinished || window.failed_inputs() > 0) return kExitBadInput;
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setOrganizationName("stowage");
  QApplication::setApplicationName("stowage-gui");
  const auto parsed = stowage::gui::parse_command_line(QApplication::arguments());
  if (const QString* message = std::get_if<QString>(&parsed)) {
    std::cerr << message->toStdString() << '\n';
    return message->startsWith("Usage:") ? 0 : 2;
  }
  const GuiOptions& options = std::get<GuiOptions>(parsed);
  const bool batch = !options.screenshot.isEmpty();
  if (batch && screenshot_format(options.screenshot).isEmpty()) {
    QStringList known;
    for (const QByteArray& f : QImageWriter::supportedImageFormats()) known << QString::fromLatin1(f);
    std::cerr << "stowage-gui: --screenshot " << options.screenshot.toStdString()
              << ": its suffix names no image format this build writes (expected one of "
              << known.join(", ").toStdString() << ")\n";
    return kExitUsage;
  }
  // A path that cannot be written is refused before anything loads.
  if (batch) {
    if (const QString problem = stowage::gui::check_export_path(options.screenshot); !problem.isEmpty()) {
      std::cerr << "stowage-gui: " << problem.toStdString() << '\n';
      return kExitCannotWrite;
    }
  }
  MainWindow window(stowage::core::ProfileCatalog::default_root(),
                    batch ? stowage::gui::ErrorReporting::kStderr : stowage::gui::ErrorReporting::kDialog);
  window.resize(options.size);
  window.show();
  window.open_files(options.files);
  if (!options.compare.isEmpty()) window.open_measured(options.compare);
  if (options.run_planner) window.planner().run();
  if (batch) return take_screenshot(window, options);
  QObject::connect(&window, &MainWindow::loadsFinished, &window,
                   [&window, options] { apply_start_options(window, options); });
  return QApplication::exec();
}
