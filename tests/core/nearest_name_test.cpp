#include "core/nearest_name.h"

#include <gtest/gtest.h>

#include <vector>

namespace stowage::core {
namespace {

TEST(EditDistance, CountsInsertionsDeletionsSubstitutions) {
  EXPECT_EQ(edit_distance("", ""), 0);
  EXPECT_EQ(edit_distance("memory", "memory"), 0);
  EXPECT_EQ(edit_distance("memroy", "memory"), 1);  // a swap of neighbours counts once
  EXPECT_EQ(edit_distance("bf61", "bf16"), 1);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3);
  EXPECT_EQ(edit_distance("abc", ""), 3);
}

TEST(NearestName, SuggestsAPlausibleTypo) {
  const std::vector<std::string> keys{"memory", "memory_bandwidth", "fp16_rate"};
  EXPECT_EQ(nearest_name("memroy", keys), "memory");
  EXPECT_EQ(nearest_name("fp16rate", keys), "fp16_rate");
}

TEST(NearestName, SuggestsNothingForAnUnrelatedWord) {
  const std::vector<std::string> keys{"memory", "fp16_rate"};
  EXPECT_EQ(nearest_name("colour", keys), std::nullopt);
}

TEST(NearestName, BreaksTiesByOrder) {
  const std::vector<std::string> keys{"abd", "abe"};
  EXPECT_EQ(nearest_name("abc", keys), "abd");
}

TEST(NamesBeginning, ListsTheNamesAPrefixBegins) {
  const std::vector<std::string> names{"workstation-24gb-1nvme", "dgx-2", "workstation-24gb-4nvme"};
  EXPECT_EQ(names_beginning("workstation", names),
            (std::vector<std::string>{"workstation-24gb-1nvme", "workstation-24gb-4nvme"}));
  EXPECT_EQ(names_beginning("dgx", names), std::vector<std::string>{"dgx-2"});
  EXPECT_TRUE(names_beginning("h100", names).empty());
  EXPECT_TRUE(names_beginning("", names).empty());
}

TEST(DidYouMean, NamesBegunComeBeforeATypo) {
  const std::vector<std::string> gpus{"h100-pcie", "h100-sxm", "h200", "l4"};
  EXPECT_EQ(did_you_mean("h100", gpus), "did you mean one of 'h100-pcie', 'h100-sxm'? ");
  EXPECT_EQ(did_you_mean("h100-s", gpus), "did you mean 'h100-sxm'? ");
  EXPECT_EQ(did_you_mean("h20", gpus), "did you mean 'h200'? ");
  EXPECT_EQ(did_you_mean("h300", gpus), "did you mean 'h200'? ");
  EXPECT_EQ(did_you_mean("rtx-4090", gpus), "");
}

}  // namespace
}  // namespace stowage::core
