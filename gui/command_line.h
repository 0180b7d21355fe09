// The stowage-gui command line: files to open (plans and traces), a
// measured trace to compare with, and the screenshot mode the docs script
// uses: load, render the main window offscreen at a size, save, exit.
#pragma once

#include <QSize>
#include <QStringList>
#include <optional>
#include <variant>

namespace stowage::gui {

enum class StartPanel { kTimeline, kPlan, kPlanner, kCompare };

struct GuiOptions {
  QStringList files;                // plans (.yaml) and traces (.json)
  QString compare;                  // a measured trace shown under the predicted one
  QString screenshot;               // save the window here and exit
  QSize size{1600, 1000};           // window size (screenshot or start)
  bool critical_path = false;       // start with the critical path shown
  std::optional<qint64> select_id;  // start with this op id selected (and zoomed to)
  // The panel to raise; kTimeline hides the panels so the timeline has the
  // whole window. Unset: the panels as they were (Plan in front).
  std::optional<StartPanel> panel;
  bool run_planner = false;  // start a planner run (with --screenshot: wait for it)
};

// Parses `arguments` (argv as QStrings); an error message on bad input.
[[nodiscard]] std::variant<GuiOptions, QString> parse_command_line(const QStringList& arguments);

}  // namespace stowage::gui
