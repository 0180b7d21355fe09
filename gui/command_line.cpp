#include "gui/command_line.h"

#include <QCommandLineParser>
#include <QRegularExpression>

namespace stowage::gui {
namespace {

std::optional<StartPanel> panel_of(const QString& name) {
  if (name == "timeline") return StartPanel::kTimeline;
  if (name == "plan") return StartPanel::kPlan;
  if (name == "planner") return StartPanel::kPlanner;
  if (name == "compare") return StartPanel::kCompare;
  return std::nullopt;
}

}  // namespace

std::variant<GuiOptions, QString> parse_command_line(const QStringList& arguments) {
  QCommandLineParser parser;
  parser.setApplicationDescription(
      "Stowage: timeline, memory per tier and planner for optimizer-state offload");
  parser.addHelpOption();
  parser.addPositionalArgument("files", "Plan files (.yaml) and traces (.json) to open", "[files...]");
  const QCommandLineOption compare("compare", "A measured trace to compare with the predicted one",
                                   "trace.json");
  const QCommandLineOption screenshot("screenshot", "Render the window offscreen to this PNG and exit",
                                      "out.png");
  const QCommandLineOption size("size", "Window size, WIDTHxHEIGHT (default 1600x1000)", "WxH");
  const QCommandLineOption critical("critical-path", "Show the critical path");
  const QCommandLineOption select("select", "Select the op with this id and zoom to it", "id");
  const QCommandLineOption panel("panel", "Panel to show: timeline, plan, planner, compare", "name");
  const QCommandLineOption plan_now("run-planner", "Run the planner at start");
  parser.addOptions({compare, screenshot, size, critical, select, panel, plan_now});
  if (!parser.parse(arguments)) return parser.errorText();
  if (parser.isSet("help")) return parser.helpText();

  GuiOptions out;
  out.files = parser.positionalArguments();
  out.compare = parser.value(compare);
  out.screenshot = parser.value(screenshot);
  out.critical_path = parser.isSet(critical);
  out.run_planner = parser.isSet(plan_now);
  if (parser.isSet(size)) {
    const auto m = QRegularExpression(R"(^(\d+)x(\d+)$)").match(parser.value(size));
    if (!m.hasMatch())
      return QStringLiteral("--size: expected WIDTHxHEIGHT such as 1600x1000, got '%1'")
          .arg(parser.value(size));
    out.size = QSize(m.captured(1).toInt(), m.captured(2).toInt());
  }
  if (parser.isSet(select)) {
    bool ok = false;
    out.select_id = parser.value(select).toLongLong(&ok);
    if (!ok) return QStringLiteral("--select: expected an op id, got '%1'").arg(parser.value(select));
  }
  if (parser.isSet(panel)) {
    const auto p = panel_of(parser.value(panel));
    if (!p)
      return QStringLiteral("--panel: unknown panel '%1' (one of: timeline, plan, planner, compare)")
          .arg(parser.value(panel));
    out.panel = *p;
  }
  return out;
}

}  // namespace stowage::gui
