// Structural checks of a schedule (declared in core/lower.h): the invariants
// both interpreters rely on.
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/topological_sort.hpp>
#include <unordered_map>
#include <unordered_set>

#include "core/lower.h"
#include "core/memory_gate.h"

namespace stowage::core {
namespace {

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;

bool acyclic(const Schedule& s) {
  Graph g(s.ops.size());
  for (const Op& op : s.ops) {
    for (OpId d : op.deps) boost::add_edge(static_cast<size_t>(d), static_cast<size_t>(op.id), g);
  }
  std::vector<size_t> order;
  try {
    boost::topological_sort(g, std::back_inserter(order));
  } catch (const boost::not_a_dag&) {
    return false;
  }
  return true;
}

// Is `ancestor` reachable from `op` by following dependencies? Dependencies
// point to earlier ops, so the search never needs to look below `ancestor`.
bool reaches(const Schedule& s, OpId op, OpId ancestor, std::vector<OpId>& stack, std::vector<char>& seen) {
  stack.assign(1, op);
  std::fill(seen.begin(), seen.end(), 0);
  while (!stack.empty()) {
    const OpId at = stack.back();
    stack.pop_back();
    for (OpId d : s.op(at).deps) {
      if (d == ancestor) return true;
      if (d > ancestor && !seen[static_cast<size_t>(d)]) {
        seen[static_cast<size_t>(d)] = 1;
        stack.push_back(d);
      }
    }
  }
  return false;
}

}  // namespace

std::vector<std::string> validate(const Schedule& s) {
  std::vector<std::string> problems;
  for (size_t i = 0; i < s.ops.size(); ++i) {
    const Op& op = s.ops[i];
    if (op.id != static_cast<OpId>(i)) problems.push_back(op.name + ": id " + std::to_string(op.id) + " at position " + std::to_string(i));
    for (OpId d : op.deps) {
      if (d < 0 || d >= op.id) problems.push_back(op.name + ": depends on op " + std::to_string(d) + " not issued before it");
    }
  }
  if (!problems.empty()) return problems;
  if (!acyclic(s)) return {"the dependency graph has a cycle"};
  if (auto order = validate_memory_order(s); !order.empty()) return order;

  const std::unordered_set<std::string> initial(s.initial_data.begin(), s.initial_data.end());
  std::unordered_map<std::string, OpId> producer;
  std::vector<OpId> stack;
  std::vector<char> seen(s.ops.size());
  for (const Op& op : s.ops) {
    for (const std::string& data : op.reads) {
      const auto it = producer.find(data);
      if (it == producer.end()) {
        if (!initial.contains(data)) problems.push_back(op.name + " reads '" + data + "' that no earlier op produced");
      } else if (!reaches(s, op.id, it->second, stack, seen)) {
        problems.push_back(op.name + " reads '" + data + "' from " + s.op(it->second).name + " without depending on it");
      }
    }
    for (const std::string& data : op.writes) producer[data] = op.id;
  }
  return problems;
}

}  // namespace stowage::core
